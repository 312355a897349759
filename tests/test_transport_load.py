"""One simulated HTTP server, 1,000 simulated clients, 10 calls each: every request answered exactly
once and correlated to the caller that made it — in both eras. A smaller run adds random latency, so
answers come back in a scrambled order and must still find their callers."""

from __future__ import annotations

from collections import Counter

import anyio
import pytest
from test_transport_peers import InlineServer, MiniClient, modern_params

from mcp_sim.sim.world import Simulation
from mcp_sim.trace.recorder import Recorder
from mcp_sim.transports import Faults, Latency, SimulatedHttpServer, open_link
from mcp_sim.wire.jsonrpc import JSONRPCResultResponse

CLIENTS = 1000
CALLS = 10


@pytest.mark.parametrize(("era", "clients", "jitter"), [
    ("modern", CLIENTS, False), ("legacy", CLIENTS, False), ("modern", 100, True), ("legacy", 100, True)])
def test_a_thousand_clients_on_one_server(era: str, clients: int, jitter: bool) -> None:
    sim = Simulation(99, recorder=Recorder(enabled=False))
    peer = InlineServer()
    answers: Counter[tuple[int, int]] = Counter()

    async def one_client(server: SimulatedHttpServer, tg: anyio.abc.TaskGroup, n: int) -> None:
        stream = await open_link(sim, tg, f"c{n}", None, transport="http", http_server=server,
                                 faults=Faults(latency=Latency.uniform(0.001, 0.02)) if jitter else None,
                                 open_get_stream=False)
        client = MiniClient(sim, stream, tg)
        if era == "legacy":
            await client.initialize("2025-11-25")
        for call in range(CALLS):
            params = {"client": n, "call": call}
            answer = await client.request("tools/call", {"name": "who", "arguments": params}
                                          if era == "legacy" else modern_params({"name": "who", "arguments": params}))
            assert isinstance(answer, JSONRPCResultResponse)
            assert answer.result["params"]["arguments"] == params  # correlated to this caller, this call
            answers[(n, call)] += 1
        await anyio.sleep(0.05)
        assert client.unmatched == []  # nothing answered twice, nothing stray
        await stream.aclose()

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            server = SimulatedHttpServer(sim, tg, "hub", peer)
            async with anyio.create_task_group() as group:
                for n in range(clients):
                    group.start_soon(one_client, server, tg, n)
            await server.aclose()

    sim.run(main)
    assert len(answers) == clients * CALLS and set(answers.values()) == {1}
    assert peer.answered == clients * CALLS + (clients if era == "legacy" else 0)
    if era == "legacy":
        assert peer.connections == clients  # one session (and one server program run) per client
    else:
        assert peer.connections == clients * CALLS  # one server program run per POST


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_a_finished_client_is_freed_without_the_garbage_collector(era: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Linear cost: what an exchange, a modern call or a legacy session held is freed the moment it is
    finished, by reference counting alone. A reference cycle per exchange would leave it for the
    collector's full passes, whose cost grows with the whole heap (1,000 → 5,000 clients took 7–8×)."""
    import gc
    import weakref

    from mcp_sim.transports import http, http_server_streams

    made: list[weakref.ref[object]] = []
    for cls in (http.HttpExchange, http_server_streams.ModernCall, http_server_streams.LegacySession):
        original = cls.__init__

        def init(self: object, *args: object, _original: object = original, **kwargs: object) -> None:
            _original(self, *args, **kwargs)  # type: ignore[operator]
            made.append(weakref.ref(self))

        monkeypatch.setattr(cls, "__init__", init)
    sim = Simulation(7, recorder=Recorder(enabled=False))
    peer = InlineServer()
    alive: list[int] = []

    async def one_client(server: SimulatedHttpServer, tg: anyio.abc.TaskGroup, n: int) -> None:
        stream = await open_link(sim, tg, f"c{n}", None, transport="http", http_server=server, open_get_stream=False)
        client = MiniClient(sim, stream, tg)
        if era == "legacy":
            await client.initialize("2025-11-25")
        for call in range(3):
            params = {"name": "who", "arguments": {"call": call}}
            await client.request("tools/call", params if era == "legacy" else modern_params(params))
        await stream.aclose()

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            server = SimulatedHttpServer(sim, tg, "hub", peer)
            async with anyio.create_task_group() as group:
                for n in range(5):
                    group.start_soon(one_client, server, tg, n)
            await anyio.sleep(1.0)
            alive.append(sum(ref() is not None for ref in made))
            await server.aclose()

    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        sim.run(main)
    finally:
        if enabled:
            gc.enable()
    assert len(made) >= 5 * 3  # the exchanges (and calls or sessions) really were made
    assert alive == [0]
