"""One true outcome per call: a duplicated request runs once and is answered once; a different
request reusing an id is refused without taking the first one's answer; a lost HTTP error body ends in
the caller's timeout (JSON-RPC 2.0 ids; MCP ``basic``: request ids, timeouts, cancellation)."""

from __future__ import annotations

import json

import anyio
import pytest

from mcp_sim.capabilities.context import Context
from mcp_sim.roles.client import Client, RequestTimeout
from mcp_sim.roles.server import Server
from mcp_sim.roles.server_session import serve
from mcp_sim.sim.world import Simulation
from mcp_sim.transports import open_link
from mcp_sim.transports.base import TransportClosed
from mcp_sim.transports.faults import Faults, LinkFaults
from mcp_sim.transports.http import Headers, HttpRequest
from mcp_sim.wire.jsonrpc import (
    ErrorObject,
    JSONRPCErrorResponse,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResultResponse,
    error_object,
)


def _counting_server(counts: dict[str, int]) -> Server:
    server = Server("counter", version="1.0.0")

    @server.tool()
    async def work(ctx: Context, token: str, seconds: float) -> str:
        """Count one execution, then take a while."""
        counts[token] = counts.get(token, 0) + 1
        await ctx.sleep(seconds)
        return f"done {token}"

    return server


@pytest.mark.parametrize("transport", ["memory", "stdio"])
@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
def test_a_duplicate_arriving_during_a_slow_call_runs_nothing_and_answers_nothing(revision: str,
                                                                                 transport: str) -> None:
    legacy = revision < "2026"
    call_frame = 3 if legacy else 2  # legacy: initialize, initialized, call; modern: discover, call
    counts: dict[str, int] = {}
    sim = Simulation(5)

    async def main() -> dict:
        async with anyio.create_task_group() as tg:
            stream = await open_link(sim, tg, "counter", lambda s: serve(_counting_server(counts), s),
                                     transport=transport, revision=revision,  # type: ignore[call-overload]
                                     faults=LinkFaults(to_server=Faults(duplicate_at=(call_frame,))))
            client = Client("app", era="legacy" if legacy else "modern")
            await client.connect(stream, tg)
            result = await client.call_tool("work", {"token": "a", "seconds": 2})
            await anyio.sleep(1)  # room for a second answer, if one were coming
            await client.close()
            return result

    result = sim.run(main)
    assert result["content"][0]["text"] == "done a"
    assert counts == {"a": 1}
    calls = [e for e in sim.recorder if e.kind == "request" and e.method == "tools/call"]
    assert len(calls) == 2 and "duplicate" in calls[1].marks  # the copy really reached the link
    answers = [e for e in sim.recorder if e.kind in ("response", "error") and e.request_id == calls[0].request_id]
    assert len(answers) == 1 and answers[0].kind == "response"


def test_a_different_request_reusing_an_id_in_flight_is_refused_without_that_id() -> None:
    counts: dict[str, int] = {}
    sim = Simulation(6)
    received: list[object] = []

    def call(token: str) -> JSONRPCRequest:
        return JSONRPCRequest(2, "tools/call", {"name": "work", "arguments": {"token": token, "seconds": 1}})

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            stream = await open_link(sim, tg, "counter", lambda s: serve(_counting_server(counts), s),
                                     revision="2025-11-25")
            await stream.send(JSONRPCRequest(1, "initialize", {
                "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}))
            received.append(await stream.receive())
            await stream.send(JSONRPCNotification("notifications/initialized"))
            await stream.send(call("first"))
            await stream.send(call("second"))  # the client's bug: id 2 is in flight
            await stream.send(call("first"))  # and a plain copy of the first
            received.append(await stream.receive())
            received.append(await stream.receive())
            with anyio.move_on_after(5):
                received.append(await stream.receive())
            await stream.aclose()

    sim.run(main)
    refused, answer = received[1], received[2]
    assert isinstance(refused, JSONRPCErrorResponse) and refused.id is None
    assert refused.error.code == -32600 and refused.error.data == {"requestId": 2, "method": "tools/call"}
    assert isinstance(answer, JSONRPCResultResponse) and answer.id == 2
    assert answer.result["content"][0]["text"] == "done first"
    assert len(received) == 3  # nothing more: no second answer for id 2
    assert counts == {"first": 1}


def test_the_client_attributes_a_refusal_without_an_id() -> None:
    sim = Simulation(7)

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            stream = await open_link(sim, tg, "counter", lambda s: serve(_counting_server({}), s),
                                     revision="2025-11-25")
            client = Client("app", era="legacy")
            await client.connect(stream, tg)
            client._on_response(JSONRPCErrorResponse(None, _error(5)))
            await client.close()

    sim.run(main)
    notes = [e.text or "" for e in sim.recorder if "refused" in e.marks]
    assert len(notes) == 1 and "id 5" in notes[0] and "tools/call" in notes[0]


def _error(rid: int) -> ErrorObject:
    return error_object(-32600, "reused", {"requestId": rid, "method": "tools/call"})


@pytest.mark.parametrize("accelerate", [False, True])
def test_a_lost_http_error_body_ends_in_the_callers_timeout_and_a_cancellation(accelerate: bool) -> None:
    """The server refuses the POST (403: bad Origin) and the body is lost on the way back: the call
    still ends, at its own deadline, with notifications/cancelled."""
    from mcp_sim import accelerated

    sim = Simulation(8)

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            stream = await open_link(sim, tg, "counter", lambda s: serve(_counting_server({}), s), transport="http",
                                     revision="2025-11-25", origin="https://evil.example",
                                     allowed_origins=("https://good.example",),
                                     faults=LinkFaults(to_client=Faults(drop_at=(1,))))
            client = Client("app", era="modern", discover=False, timeout=5)
            await client.connect(stream, tg)
            with pytest.raises(RequestTimeout):
                await client.call_tool("work", {"token": "a", "seconds": 1})
            assert sim.now() == pytest.approx(5)
            await client.close()
            tg.cancel_scope.cancel()

    with accelerated.use(accelerate):
        sim.run(main)
    dropped = [e for e in sim.recorder if "dropped" in e.marks]
    assert dropped and "403" in json.dumps(dropped[0].framing or {})
    assert any("timeout" in e.marks for e in sim.recorder)


def test_a_raw_http_exchange_whose_body_is_lost_fails_at_the_response_deadline() -> None:
    sim = Simulation(9)

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            stream = await open_link(sim, tg, "counter", lambda s: serve(_counting_server({}), s), transport="http",
                                     revision="2025-11-25", faults=LinkFaults(to_client=Faults(drop_at=(1,))))
            request = HttpRequest("POST", "/mcp", Headers({"Content-Type": "application/json",
                                                           "Accept": "application/json, text/event-stream"}),
                                  "{not json")
            with pytest.raises(TransportClosed):
                await stream.http(request)
            assert sim.now() == pytest.approx(stream.response_timeout)
            tg.cancel_scope.cancel()

    sim.run(main)
