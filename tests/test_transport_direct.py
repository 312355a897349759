"""Direct delivery on the memory pipe: frames reach the receiving session inside the sender's ``send``,
in order, and nothing a learner can see changes (course chapter 06, transports).

The pipe hands each frame, decoded, to the session's handler; what the handler declines waits in
the queue for the session's read loop. These tests hold the pipe and the sessions to that contract:
order is kept when a frame must wait its turn, the end of the stream still reaches ``receive``, and a
round trip between a real Client and Server records exactly the frames it did before.
"""

from __future__ import annotations

from typing import Any

import anyio

from mcp_sim.roles.client import Client
from mcp_sim.roles.server import Server
from mcp_sim.roles.server_session import serve
from mcp_sim.sim.world import Simulation
from mcp_sim.transports.base import deliver_directly
from mcp_sim.transports.memory import memory_link
from mcp_sim.wire.jsonrpc import InvalidMessage, JSONRPCMessage, JSONRPCNotification, JSONRPCRequest


def test_the_pipe_hands_frames_over_and_queues_what_the_handler_declines_in_order() -> None:
    sim = Simulation(1)
    taken: list[str] = []
    read: list[str] = []

    async def main() -> None:
        client_end, server_end = memory_link(sim, "direct")
        busy = {"declining": False}

        def handler(message: JSONRPCMessage | InvalidMessage) -> bool:
            assert isinstance(message, JSONRPCNotification)
            if busy["declining"] or message.method == "wait":
                busy["declining"] = True  # once one waits its turn, the rest queue behind it
                return False
            taken.append(message.method)
            return True

        assert deliver_directly(server_end, handler)
        for method in ("a", "b", "wait", "c", "d"):
            await client_end.send(JSONRPCNotification(method))
        assert taken == ["a", "b"]  # handed over inside send, before any task switch
        for _ in range(3):
            message = await server_end.receive()
            assert isinstance(message, JSONRPCNotification)
            read.append(message.method)
        await client_end.aclose()
        try:
            await server_end.receive()
        except anyio.EndOfStream:
            read.append("end")

    sim.run(main)
    assert read == ["wait", "c", "d", "end"]
    # Every frame was still encoded and recorded once, in the order it was sent.
    assert [e.method for e in sim.recorder.events] == ["a", "b", "wait", "c", "d"]


def test_a_stream_that_cannot_deliver_directly_says_so() -> None:
    class Plain:
        pass

    assert deliver_directly(Plain(), lambda message: True) is False


def _echo_server() -> Server:
    server = Server("echo", version="1.0.0")

    @server.tool()
    def echo(text: str) -> str:
        """Return the text."""
        return text

    return server


def test_frames_sent_while_initialize_is_answered_wait_for_it() -> None:
    """``initialize`` is answered in order: a ping sent right behind it (before its response) is
    declined by direct delivery and answered after it, by the read loop."""
    sim = Simulation(2)
    order: list[Any] = []

    async def main() -> None:
        client_end, server_end = memory_link(sim, "echo")
        async with anyio.create_task_group() as tg:
            tg.start_soon(serve, _echo_server(), server_end)
            await client_end.send(JSONRPCRequest(1, "initialize", {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"}}))
            await client_end.send(JSONRPCRequest(2, "ping", None))
            for _ in range(2):
                reply = await client_end.receive()
                order.append(getattr(reply, "id", None))
            await client_end.aclose()

    sim.run(main)
    assert order == [1, 2]


def test_a_client_and_server_on_a_memory_link_record_the_same_frames_as_before() -> None:
    sim = Simulation(3)

    async def main() -> dict[str, Any]:
        client_end, server_end = memory_link(sim, "echo")
        async with anyio.create_task_group() as tg:
            tg.start_soon(serve, _echo_server(), server_end)
            client = Client(era="legacy", sim=sim)
            await client.connect(client_end, tg)
            result = await client.call_tool("echo", {"text": "hi"})
            await client.close()
            return result

    result = sim.run(main)
    assert result["content"] == [{"type": "text", "text": "hi"}]
    frames = [(e.sender, e.kind, e.method) for e in sim.recorder.events if e.kind != "transport"]
    assert frames == [
        ("client/echo", "request", "initialize"), ("server/echo", "response", "initialize"),
        ("client/echo", "notification", "notifications/initialized"),
        ("client/echo", "request", "tools/call"), ("server/echo", "response", "tools/call"),
    ]
