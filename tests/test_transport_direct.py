"""The memory pipe, readable and accelerated: frames reach the receiving session through its read
loop, in order, and nothing a learner can see differs between the two (course chapter 06, transports).

Neither memory pipe hands a frame to the receiving session inside ``send`` ("direct delivery"): that
would let tasks on different links run in another order than the readable pipe lets them, and so
record another trace.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcp_sim import accelerated
from mcp_sim.roles.client import Client
from mcp_sim.roles.server import Server
from mcp_sim.roles.server_session import serve
from mcp_sim.sim.world import Simulation
from mcp_sim.transports.memory import AcceleratedMemoryStream, MemoryStream, memory_link
from mcp_sim.wire.jsonrpc import JSONRPCNotification, JSONRPCRequest

BOTH = pytest.mark.parametrize("fast", [False, True], ids=["readable", "accelerated"])


@BOTH
def test_the_pipe_carries_frames_in_order_then_reports_the_end(fast: bool) -> None:
    sim = Simulation(1)
    read: list[str] = []

    async def main() -> None:
        with accelerated.use(fast):
            client_end, server_end = memory_link(sim, "pipe")
        assert type(client_end) is (AcceleratedMemoryStream if fast else MemoryStream)
        for method in ("a", "b", "c"):
            await client_end.send(JSONRPCNotification(method))
        await client_end.aclose()
        while True:
            try:
                message = await server_end.receive()
            except anyio.EndOfStream:
                read.append("end")
                break
            assert isinstance(message, JSONRPCNotification)
            read.append(message.method)

    sim.run(main)
    assert read == ["a", "b", "c", "end"]
    # Every frame was encoded and recorded once, in the order it was sent.
    assert [e.method for e in sim.recorder.events] == ["a", "b", "c"]


@BOTH
def test_a_full_pipe_makes_the_writer_wait_for_the_reader(fast: bool) -> None:
    sim = Simulation(1)
    log: list[str] = []

    async def main() -> None:
        with accelerated.use(fast):
            client_end, server_end = memory_link(sim, "pipe", buffer=1)

        async def write() -> None:
            for method in ("a", "b"):
                await client_end.send(JSONRPCNotification(method))
                log.append(f"sent {method}")

        async with anyio.create_task_group() as tg:
            tg.start_soon(write)
            await anyio.sleep(1)
            log.append("reading")
            for _ in range(2):
                message = await server_end.receive()
                assert isinstance(message, JSONRPCNotification)
                log.append(f"read {message.method}")

    sim.run(main)
    assert log[:2] == ["sent a", "reading"]  # "b" waited for room
    assert sorted(log[2:]) == ["read a", "read b", "sent b"]


def _echo_server() -> Server:
    server = Server("echo", version="1.0.0")

    @server.tool()
    def echo(text: str) -> str:
        """Return the text."""
        return text

    return server


@BOTH
def test_frames_sent_while_initialize_is_answered_wait_for_it(fast: bool) -> None:
    """``initialize`` is answered in order: a ping sent right behind it (before its response) is
    answered after it."""
    sim = Simulation(2)
    order: list[Any] = []

    async def main() -> None:
        with accelerated.use(fast):
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


@BOTH
def test_a_client_and_server_on_a_memory_link_record_the_frames_of_the_call(fast: bool) -> None:
    sim = Simulation(3)

    async def main() -> dict[str, Any]:
        with accelerated.use(fast):
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
