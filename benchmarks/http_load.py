"""Load on one simulated Streamable HTTP server: 10, 100, 1,000 and 5,000 clients × 10 calls, both eras.

Run ``python benchmarks/http_load.py [--sizes 10 100 1000 5000] [--calls 10]``; it prints one JSON
object. Every client connects at the same moment and makes its calls one after the other (legacy:
``initialize`` first, so each client holds a session; 2026-07-28: one POST per call, no session), then
hangs up. For each era and size the report gives:

- ``wall_seconds``: wall time of the whole run, with ``tracemalloc`` off (it slows Python down), and
  ``cpu_seconds``, the processor time the run's process used (less disturbed by other programs on a
  busy machine);
- ``peak_bytes`` and ``peak_bytes_per_client``: the peak of the traced Python heap in a second run of
  the same size with ``tracemalloc`` on;
- ``retained_bytes_per_client``: what is still on the heap once every client has hung up (should be
  close to nothing: a closed client must leave nothing behind);
- ``per_client_cost_ratio_5000_vs_1000``: wall time per client at the largest size over that at
  1,000 (or at the smallest size, when 1,000 is not run), and ``per_client_cpu_cost_ratio_…`` the same
  for processor time. Simulated load should scale linearly: close to 1.

Each measurement runs in a fresh Python process, so one size's heap never slows the next. The recorder
is off: this measures the transport, not the trace. Wall-clock time is used on purpose: this measures
the simulator, it is not part of it.
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

import anyio
from transports import call, echo_server  # the same inline server and caller as the transport benchmark

from mcp_sim.protocol.meta import CLIENT_CAPABILITIES, PROTOCOL_VERSION
from mcp_sim.sim.world import Simulation
from mcp_sim.trace.recorder import Recorder
from mcp_sim.transports import SimulatedHttpServer
from mcp_sim.wire.jsonrpc import JSONRPCNotification

MODERN_META = {PROTOCOL_VERSION: "2026-07-28", CLIENT_CAPABILITIES: {}}
SIZES = (10, 100, 1000, 5000)


def run(era: str, clients: int, calls: int, *, trace_memory: bool) -> dict[str, float]:
    """One load run in this process: wall seconds, or the traced heap's peak and what stays after."""
    sim = Simulation(5, recorder=Recorder(enabled=False))
    out: dict[str, float] = {}

    async def one_client(server: SimulatedHttpServer, n: int) -> None:
        stream = server.connect(f"c{n}", open_get_stream=False)
        if era == "legacy":
            await call(stream, 0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}})
            stream.revision = "2025-11-25"
            await stream.send(JSONRPCNotification("notifications/initialized"))
        params = {"name": "echo", "arguments": {"n": n}}
        for i in range(1, calls + 1):
            await call(stream, i, "tools/call", {**params, "_meta": MODERN_META} if era == "modern" else params)
        await stream.aclose()

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            server = SimulatedHttpServer(sim, tg, "hub", echo_server)
            async with anyio.create_task_group() as group:
                for n in range(clients):
                    group.start_soon(one_client, server, n)
            await anyio.sleep(1.0)  # let the server finish with the last hang-ups
            if trace_memory:
                gc.collect()
                out["retained_bytes"] = tracemalloc.get_traced_memory()[0] - out["start_bytes"]
            await server.aclose()

    gc.collect()
    if trace_memory:
        tracemalloc.start()
        out["start_bytes"] = tracemalloc.get_traced_memory()[0]
        sim.run(main)
        out["peak_bytes"] = tracemalloc.get_traced_memory()[1] - out.pop("start_bytes")
        tracemalloc.stop()
    else:
        started, cpu = time.perf_counter(), time.process_time()
        sim.run(main)
        out["wall_seconds"] = time.perf_counter() - started
        out["cpu_seconds"] = time.process_time() - cpu
    return out


def measure(era: str, clients: int, calls: int, trace_memory: bool) -> dict[str, float]:
    """Run one measurement in a fresh interpreter (its own heap, its own collector history)."""
    args = [sys.executable, str(Path(__file__).resolve()), "--one", era, str(clients), str(calls)]
    if trace_memory:
        args.append("--trace-memory")
    proc = subprocess.run(args, capture_output=True, text=True, check=True)
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def report(sizes: list[int], calls: int) -> dict[str, Any]:
    out: dict[str, Any] = {"calls_per_client": calls}
    for era in ("legacy", "modern"):
        rows: dict[str, Any] = {}
        timed_per_client: dict[int, float] = {}
        cpu_per_client: dict[int, float] = {}
        for clients in sizes:
            timed = measure(era, clients, calls, trace_memory=False)
            timed_per_client[clients] = timed["wall_seconds"] / clients
            cpu_per_client[clients] = timed["cpu_seconds"] / clients
            memory = measure(era, clients, calls, trace_memory=True)
            rows[str(clients)] = {
                "wall_seconds": round(timed["wall_seconds"], 3),
                "wall_ms_per_client": round(1000 * timed["wall_seconds"] / clients, 3),
                "cpu_seconds": round(timed["cpu_seconds"], 3),
                "peak_bytes": round(memory["peak_bytes"]),
                "peak_bytes_per_client": round(memory["peak_bytes"] / clients),
                "retained_bytes_per_client": round(memory["retained_bytes"] / clients),
            }
        entry: dict[str, Any] = {"clients": rows}
        base = 1000 if 1000 in sizes else min(sizes)
        big = max(sizes)
        if big > base:
            entry[f"per_client_cost_ratio_{big}_vs_{base}"] = round(
                timed_per_client[big] / timed_per_client[base], 3)
            entry[f"per_client_cpu_cost_ratio_{big}_vs_{base}"] = round(
                cpu_per_client[big] / cpu_per_client[base], 3)
        out[era] = entry
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--one", nargs=3, metavar=("ERA", "CLIENTS", "CALLS"), help=argparse.SUPPRESS)
    parser.add_argument("--trace-memory", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        era, clients, calls = args.one[0], int(args.one[1]), int(args.one[2])
        print(json.dumps(run(era, clients, calls, trace_memory=args.trace_memory)))
        return
    print(json.dumps(report(args.sizes, args.calls), indent=2))  # a benchmark script reports on stdout


if __name__ == "__main__":
    main()
