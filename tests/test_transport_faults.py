"""Faults on every transport, and how each layer reacts: timeouts, ignored duplicates, parse errors,
reconnects."""

from __future__ import annotations

import random
from typing import Any

import anyio
import pytest
from test_transport_peers import AnsweringServer, MiniClient, modern_params

from mcp_sim.sim.world import Simulation
from mcp_sim.transports import (
    Faults,
    HttpClientStream,
    Latency,
    LinkFaults,
    SessionExpired,
    SimulatedHttpServer,
    TransportClosed,
    open_link,
)
from mcp_sim.transports.faults import Wire, corrupt_text, faulty_memory_link
from mcp_sim.wire.jsonrpc import (
    PARSE_ERROR,
    JSONRPCErrorResponse,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResultResponse,
    decode,
)

TRANSPORTS = ["memory", "stdio", "http-modern", "http-legacy"]


async def connect(sim: Simulation, tg: Any, kind: str, peer: AnsweringServer, faults: Any) -> tuple[Any, MiniClient]:
    transport = kind.split("-")[0]
    stream = await open_link(sim, tg, "lab", peer, transport=transport, faults=faults,  # type: ignore[call-overload]
                             open_get_stream=False)
    client = MiniClient(sim, stream, tg)
    if kind == "http-legacy":
        await client.initialize("2025-11-25")
    return stream, client


def params_for(kind: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    return modern_params(extra) if kind != "http-legacy" else dict(extra or {})


@pytest.mark.parametrize("kind", TRANSPORTS)
def test_a_dropped_request_ends_in_the_callers_visible_timeout(kind: str) -> None:
    sim = Simulation(41)
    peer = AnsweringServer()
    legacy_frames = 2 if kind == "http-legacy" else 0  # initialize + initialized come first

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            stream, client = await connect(sim, tg, kind, peer,
                                           LinkFaults(to_server=Faults(drop_at=(legacy_frames + 1,))))
            with pytest.raises(TimeoutError):
                await client.request("tools/list", params_for(kind), timeout=5.0)
            answer = await client.request("tools/list", params_for(kind))  # the retry gets through
            assert isinstance(answer, JSONRPCResultResponse)
            await stream.aclose()

    sim.run(main)
    dropped = [e for e in sim.recorder if "dropped" in e.marks]
    assert len(dropped) == 1 and dropped[0].kind == "request" and dropped[0].method == "tools/list"
    timeout = next(e for e in sim.recorder if e.kind == "timeout")
    assert timeout.t_ms - dropped[0].t_ms == 5000.0
    assert timeout.text == f"gave up waiting for tools/list #{timeout.request_id} after 5 s (simulated)"
    assert [m for _, m, _ in peer.handled if m == "tools/list"] == ["tools/list"]


@pytest.mark.parametrize("kind", ["memory", "stdio", "http-legacy"])
def test_a_duplicate_response_is_recorded_and_ignored(kind: str) -> None:
    sim = Simulation(42)
    peer = AnsweringServer()
    # legacy: the initialize result is SSE event 1; the tools/list response is 2.
    faults = LinkFaults(to_client=Faults(duplicate_at=(2 if kind == "http-legacy" else 1,)))
    leftovers: list[Any] = []

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            stream, client = await connect(sim, tg, kind, peer, faults)
            answer = await client.request("tools/list", params_for(kind))
            assert isinstance(answer, JSONRPCResultResponse)
            await anyio.sleep(0.1)
            leftovers.extend(client.unmatched)
            await stream.aclose()

    sim.run(main)
    duplicates = [e for e in sim.recorder if "duplicate" in e.marks]
    assert len(duplicates) == 1 and duplicates[0].kind == "response"
    assert [m.to_dict() for m in leftovers] == [duplicates[0].message]  # arrived, matched nothing, ignored


@pytest.mark.parametrize("kind", TRANSPORTS)
def test_a_corrupted_request_is_answered_with_a_parse_error(kind: str) -> None:
    sim = Simulation(43)
    peer = AnsweringServer()
    legacy_frames = 2 if kind == "http-legacy" else 0
    errors: list[Any] = []

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            stream, client = await connect(sim, tg, kind, peer,
                                           LinkFaults(to_server=Faults(corrupt_at=(legacy_frames + 1,))))
            with pytest.raises(TimeoutError):  # the request never arrived as a request
                await client.request("tools/list", params_for(kind), timeout=1.0)
            errors.extend(client.unmatched)
            await stream.aclose()

    sim.run(main)
    corrupted = next(e for e in sim.recorder if "corrupted" in e.marks)
    assert corrupted.kind == "invalid"
    assert any(ord(c) < 9 for c in corrupted.raw or "")
    assert len(errors) == 1 and isinstance(errors[0], JSONRPCErrorResponse)
    assert errors[0].id is None and errors[0].error.code == PARSE_ERROR
    if kind.startswith("http"):  # answered by the HTTP transport: 400 with the parse error
        reply = next(e for e in sim.recorder if e.kind == "error")
        assert reply.framing["http"]["response"]["status"] == 400
    else:  # answered by the server program, which received an InvalidMessage
        assert peer.invalid == [corrupted.raw]


def test_corruption_never_yields_valid_json_nor_a_newline() -> None:
    rng = random.Random(0)
    text = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x y","arguments":{"n":[1,2,3]}}}'
    for _ in range(2000):
        broken = corrupt_text(text, rng)
        assert "\n" not in broken and decode(broken).__class__.__name__ == "InvalidMessage"


def test_memory_crash_and_disconnect_close_both_ends() -> None:
    sim = Simulation(44)
    peer = AnsweringServer()

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            stream = await open_link(sim, tg, "m", peer, faults=LinkFaults(to_server=Faults(crash_at=2)))
            client = MiniClient(sim, stream, tg)
            await client.request("tools/list")
            with pytest.raises(TransportClosed):
                await client.request("slow", {"seconds": 1})
            with pytest.raises(TransportClosed):
                await stream.send(JSONRPCNotification("notifications/initialized"))
            # Reconnect: a new link, a new server session.
            stream = await open_link(sim, tg, "m", peer)
            client = MiniClient(sim, stream, tg)
            assert isinstance(await client.request("tools/list"), JSONRPCResultResponse)
            await stream.aclose()

    sim.run(main)
    assert [e.text for e in sim.recorder if "crash" in e.marks and e.kind == "transport"] == [
        "the server crashed; every request in flight is lost"]
    assert peer.connections == 2


def test_http_server_crash_expires_legacy_sessions_and_the_client_reinitializes() -> None:
    sim = Simulation(45)
    peer = AnsweringServer()

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            server = SimulatedHttpServer(sim, tg, "api", peer)
            stream = server.connect(open_get_stream=False)
            client = MiniClient(sim, stream, tg)
            await client.initialize("2025-11-25")
            first = stream.session_id

            async def crash_soon() -> None:
                await anyio.sleep(0.5)
                server.crash()

            tg.start_soon(crash_soon)
            with pytest.raises(TimeoutError):  # in flight when the server died
                await client.request("slow", {"seconds": 10}, timeout=2)
            with pytest.raises(SessionExpired):
                await client.request("tools/list")
            await client.initialize("2025-11-25")
            assert stream.session_id not in (None, first)
            assert isinstance(await client.request("tools/list"), JSONRPCResultResponse)
            await stream.aclose()
            await server.aclose()

    sim.run(main)
    assert peer.connections == 2
    assert peer.interrupted == [2]


def test_latency_is_simulated_time_and_order_is_kept_unless_reordered() -> None:
    sim = Simulation(46)
    peer = AnsweringServer()
    times: dict[str, float] = {}

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            stream = await open_link(sim, tg, "slowlink", peer, transport="stdio",
                                     faults=Faults(latency=Latency.fixed(0.040)))
            client = MiniClient(sim, stream, tg)
            start = sim.now()
            await client.request("tools/list")
            times["round trip"] = sim.now() - start
            await stream.aclose()

    sim.run(main)
    assert times["round trip"] == pytest.approx(0.080)

    sim = Simulation(47)
    got: list[str] = []

    async def reordered() -> None:
        client_end, server_end = faulty_memory_link(sim, "r", LinkFaults(to_server=Faults(latency=0.001, reorder=0.5)))
        for n in range(8):
            await client_end.send(JSONRPCNotification(f"n/{n}"))
        for _ in range(8):
            message = await server_end.receive()
            assert isinstance(message, JSONRPCNotification)
            got.append(message.method)

    sim.run(reordered)
    marks = [e.method for e in sim.recorder if "reordered" in e.marks]
    assert marks and sorted(got) == sorted(f"n/{n}" for n in range(8)) and got != sorted(got)
    assert [m for m in got if m not in marks] == sorted(m for m in got if m not in marks)


def test_latency_distributions_draw_from_the_links_seeded_generator() -> None:
    sim = Simulation(48)
    wire = Wire(sim, Faults(latency=Latency.uniform(0.01, 0.03)), label="x")
    delays = [wire.plan("{}")[0].delay for _ in range(5)]
    again = Wire(Simulation(48), Faults(latency=Latency.uniform(0.01, 0.03)), label="x")
    assert delays == [again.plan("{}")[0].delay for _ in range(5)]
    assert all(0.01 <= d <= 0.03 for d in delays) and len(set(delays)) == 5
    for latency in (Latency.exponential(0.02), Latency.normal(0.02, 0.01)):
        w = Wire(sim, Faults(latency=latency), label="y")
        assert all(w.plan("{}")[0].delay >= 0 for _ in range(50))


def test_probabilistic_drops_are_seeded() -> None:
    def dropped(seed: int) -> list[int]:
        wire = Wire(Simulation(seed), Faults(drop=0.3), label="lab")
        return [n for n in range(1, 51) if not wire.plan("{}")[0].delivered]

    assert dropped(1) == dropped(1)
    assert dropped(1) != dropped(2)
    assert 5 < len(dropped(1)) < 25


def test_http_disconnect_resets_the_connection() -> None:
    sim = Simulation(49)

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            stream: HttpClientStream = await open_link(sim, tg, "api", AnsweringServer(), transport="http",
                                                       faults=LinkFaults(to_server=Faults(disconnect_at=1)))
            with pytest.raises(TransportClosed, match="connection was reset"):
                await stream.send(JSONRPCRequest(1, "tools/list", modern_params()))
            await stream.aclose()
            await stream.server.aclose()

    sim.run(main)
