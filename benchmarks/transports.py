"""Transport benchmarks: round trips per wall second over memory, stdio and Streamable HTTP (both
eras), simulated seconds per wall second, and memory per simulated HTTP client at 1,000 clients.

Run ``python benchmarks/transports.py``; it prints one JSON object. The recorder is switched off for
the throughput figures (they measure the transports, not the trace), and on for ``recorded_*``.
"""

from __future__ import annotations

import gc
import json
import time
import tracemalloc
from typing import Any

import anyio

from mcp_sim.protocol.meta import CLIENT_CAPABILITIES, PROTOCOL_VERSION
from mcp_sim.sim.world import Simulation
from mcp_sim.trace.recorder import Recorder
from mcp_sim.transports import Faults, MessageStream, SimulatedHttpServer, open_link
from mcp_sim.wire.jsonrpc import (
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResultResponse,
    RequestId,
)

MODERN_META = {PROTOCOL_VERSION: "2026-07-28", CLIENT_CAPABILITIES: {}}


async def echo_server(stream: MessageStream) -> None:
    """Answers every request inline with an empty result (initialize gets a minimal InitializeResult)."""
    while True:
        try:
            message = await stream.receive()
        except anyio.EndOfStream:
            return
        if isinstance(message, JSONRPCRequest):
            result: dict[str, Any] = {}
            if message.method == "initialize":
                result = {"protocolVersion": (message.params or {}).get("protocolVersion"), "capabilities": {},
                          "serverInfo": {"name": "bench", "version": "1"}}
            await stream.send(JSONRPCResultResponse(message.id, result), related_request_id=message.id)


async def call(stream: MessageStream, request_id: RequestId, method: str, params: dict[str, Any] | None) -> None:
    await stream.send(JSONRPCRequest(request_id, method, params))
    while True:
        answer = await stream.receive()
        if isinstance(answer, JSONRPCResultResponse) and answer.id == request_id:
            return


async def legacy_handshake(stream: MessageStream) -> None:
    await call(stream, 0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}})
    stream.revision = "2025-11-25"
    await stream.send(JSONRPCNotification("notifications/initialized"))


def round_trips(transport: str, era: str, n: int, *, recorded: bool = False) -> float:
    sim = Simulation(1, recorder=Recorder(enabled=recorded))

    async def main() -> float:
        rate = 0.0
        async with anyio.create_task_group() as tg:
            kind = "http" if transport == "http" else transport
            stream = await open_link(sim, tg, "bench", echo_server, transport=kind,  # type: ignore[call-overload]
                                     open_get_stream=False)
            params = {"_meta": MODERN_META} if era == "modern" else None
            if era == "legacy" and transport == "http":
                await legacy_handshake(stream)
            started = time.perf_counter()
            for i in range(1, n + 1):
                await call(stream, i, "tools/list", params)
            wall = time.perf_counter() - started
            await stream.aclose()
            server = getattr(stream, "server", None)
            if server is not None:
                await server.aclose()
            rate = n / wall
        return rate

    return float(sim.run(main))


def simulated_seconds_per_wall_second() -> dict[str, float]:
    """Two workloads: idle heartbeats (pure clock jumps) and stdio round trips with 20 ms latency."""
    out: dict[str, float] = {}
    sim = Simulation(2, recorder=Recorder(enabled=False))

    async def heartbeats() -> None:
        async with anyio.create_task_group() as tg:
            for period in (0.5, 1.0, 7.5):
                async def beat(p: float = period) -> None:
                    for _ in range(int(3600 / p)):
                        await anyio.sleep(p)
                tg.start_soon(beat)

    started = time.perf_counter()
    sim.run(heartbeats)
    out["idle_heartbeats"] = sim.now() / (time.perf_counter() - started)

    sim = Simulation(3, recorder=Recorder(enabled=False))

    async def busy() -> None:
        async with anyio.create_task_group() as tg:
            stream = await open_link(sim, tg, "slow", echo_server, transport="stdio", faults=Faults(latency=0.020))
            for i in range(1, 2001):
                await call(stream, i, "ping", None)
            await stream.aclose()

    started = time.perf_counter()
    sim.run(busy)
    out["stdio_20ms_round_trips"] = sim.now() / (time.perf_counter() - started)
    return out


def memory_per_http_client(era: str, clients: int = 1000) -> float:
    """Bytes of Python heap per connected client (one call made; legacy: a live session each)."""
    sim = Simulation(4, recorder=Recorder(enabled=False))
    result: dict[str, float] = {}

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            server = SimulatedHttpServer(sim, tg, "hub", echo_server)
            gc.collect()
            tracemalloc.start()
            before = tracemalloc.get_traced_memory()[0]
            streams = []
            for n in range(clients):
                stream = server.connect(f"c{n}", open_get_stream=False)
                if era == "legacy":
                    await legacy_handshake(stream)
                else:
                    await call(stream, 1, "tools/list", {"_meta": MODERN_META})
                streams.append(stream)
            await anyio.sleep(0.01)
            gc.collect()
            after = tracemalloc.get_traced_memory()[0]
            tracemalloc.stop()
            result["bytes"] = (after - before) / clients
            for stream in streams:
                await stream.aclose()
            await server.aclose()

    sim.run(main)
    return result["bytes"]




def main() -> None:
    n = 2000
    report = {
        "round_trips_per_wall_second": {
            "memory": round(round_trips("memory", "modern", n)),
            "stdio": round(round_trips("stdio", "modern", n)),
            "http_modern": round(round_trips("http", "modern", n)),
            "http_legacy": round(round_trips("http", "legacy", n)),
        },
        "recorded_round_trips_per_wall_second": {
            "memory": round(round_trips("memory", "modern", n, recorded=True)),
            "http_legacy": round(round_trips("http", "legacy", n, recorded=True)),
        },
        "simulated_seconds_per_wall_second": {k: round(v) for k, v in simulated_seconds_per_wall_second().items()},
        "bytes_per_http_client_at_1000_clients": {
            "modern": round(memory_per_http_client("modern")),
            "legacy": round(memory_per_http_client("legacy")),
        },
    }
    print(json.dumps(report, indent=2))  # a benchmark script reports on stdout


if __name__ == "__main__":
    main()
