"""Same seed, same story — byte for byte, faults included; another seed, another story."""

from __future__ import annotations

import json

import anyio
from test_transport_peers import AnsweringServer, MiniClient, modern_params

from mcp_sim.sim.world import Simulation
from mcp_sim.transports import Faults, Latency, MessageStream, SimulatedHttpServer, TransportClosed, open_link

FAULTS = Faults(latency=Latency.exponential(0.02), drop=0.1, duplicate=0.1, reorder=0.1, corrupt=0.05)


def scenario(seed: int, *, pace_collector: bool = True) -> str:
    sim = Simulation(seed, pace_collector=pace_collector)
    peer = AnsweringServer()

    async def calls(client: MiniClient, legacy: bool) -> None:
        for n in range(12):
            params = {"n": n} if legacy else modern_params({"n": n})
            try:
                await client.request("progress" if n % 4 == 0 else "tools/list",
                                     {**params, "steps": 2} if n % 4 == 0 else params, timeout=1.0)
            except (TimeoutError, TransportClosed):
                pass

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            server = SimulatedHttpServer(sim, tg, "shared", peer, sse_retry_ms=100)
            streams: list[MessageStream] = [
                await open_link(sim, tg, "mem", peer, faults=FAULTS),
                await open_link(sim, tg, "pipe", peer, transport="stdio", faults=FAULTS),
                await open_link(sim, tg, "modern", None, transport="http", http_server=server, faults=FAULTS),
                await open_link(sim, tg, "legacy", None, transport="http", http_server=server,
                                faults=Faults(latency=0.01, cut_sse_at=4), revision=None),
            ]
            clients = [MiniClient(sim, s, tg) for s in streams]
            await clients[3].initialize("2025-11-25")
            async with anyio.create_task_group() as group:
                for index, client in enumerate(clients):
                    group.start_soon(calls, client, index == 3)
            for stream in streams:
                await stream.aclose()
            await server.aclose()

    sim.run(main)
    return json.dumps([e.to_json() for e in sim.recorder], ensure_ascii=False, sort_keys=True)


def test_same_seed_gives_the_same_trace_byte_for_byte() -> None:
    first, second = scenario(2026), scenario(2026)
    assert first == second
    trace = json.loads(first)
    marks = {m for e in trace for m in e.get("marks", [])}
    assert {"dropped", "duplicate", "corrupted", "reordered", "timeout", "cut"} <= marks
    assert {e["transport"] for e in trace} >= {"memory", "stdio", "http"}


def test_pacing_the_garbage_collector_changes_no_byte_of_the_trace() -> None:
    assert scenario(2026) == scenario(2026, pace_collector=False)


def test_a_different_seed_gives_a_different_trace() -> None:
    assert scenario(2026) != scenario(2027)


def crash_with_exchanges_open(seed: int) -> str:
    """A simulated HTTP server crashes while several exchanges are open in both eras: legacy sessions
    with slow calls and a GET stream, modern calls in flight. The crash's cleanup must end them in an
    order the seed fixes, not one that depends on where objects happen to sit in memory."""
    sim = Simulation(seed)
    peer = AnsweringServer()

    async def slow(client: MiniClient, n: int, legacy: bool) -> None:
        params = {"seconds": 1.0 + n / 10}
        try:
            await client.request("slow", params if legacy else modern_params(params), timeout=3.0)
        except (TimeoutError, TransportClosed):
            pass

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            server = SimulatedHttpServer(sim, tg, "shared", peer, sse_retry_ms=100)
            legacy_streams = [await open_link(sim, tg, f"legacy{n}", None, transport="http", http_server=server,
                                              revision=None) for n in range(3)]
            modern_streams = [await open_link(sim, tg, f"modern{n}", None, transport="http", http_server=server,
                                              open_get_stream=False) for n in range(3)]
            legacy = [MiniClient(sim, s, tg) for s in legacy_streams]
            modern = [MiniClient(sim, s, tg) for s in modern_streams]
            for client in legacy:
                await client.initialize("2025-11-25")
            async with anyio.create_task_group() as group:
                for n in range(4):
                    for client in legacy:
                        group.start_soon(slow, client, n, True)
                    for client in modern:
                        group.start_soon(slow, client, n, False)
                await anyio.sleep(0.5)
                server.crash()
            for stream in [*legacy_streams, *modern_streams]:
                await stream.aclose()
            await server.aclose()

    sim.run(main)
    return json.dumps([e.to_json() for e in sim.recorder], ensure_ascii=False, sort_keys=True)


def test_a_crash_with_many_exchanges_open_gives_the_same_trace_every_time() -> None:
    traces = [crash_with_exchanges_open(15) for _ in range(30)]
    assert len(set(traces)) == 1
    trace = json.loads(traces[0])
    assert any("crash" in e.get("marks", []) for e in trace)
    assert sum("session-ended" in e.get("marks", []) for e in trace) >= 3  # three legacy sessions ended by it


def test_a_set_in_a_trace_line_is_written_in_sorted_order() -> None:
    from mcp_sim.trace.jsonl import event_line
    from mcp_sim.trace.recorder import Recorder

    lines = []
    for words in (["zeta", "alpha", "mid"], ["mid", "zeta", "alpha"]):
        recorder = Recorder(clock=lambda: 0.0)
        recorder.record_event(kind="transport", link="l", sender="a", receiver="b", text="t",
                              framing={"words": set(words)})
        lines.append(event_line(next(iter(recorder))))
    assert lines[0] == lines[1]
    assert '["alpha", "mid", "zeta"]' in lines[0]
