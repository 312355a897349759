"""Load on one simulated Streamable HTTP server: 10, 100, 1,000 and 5,000 clients × 10 calls, both eras.

Run ``python benchmarks/http_load.py [--sizes 10 100 1000 5000] [--calls 10] [--repeat 3]``; it prints
one JSON object. Every client connects at the same moment and makes its calls one after the other (legacy:
``initialize`` first, so each client holds a session; 2026-07-28: one POST per call, no session), then
hangs up. For each era and size the report gives:

- ``wall_seconds``: wall time of the whole run, with ``tracemalloc`` off (it slows Python down), and
  ``cpu_seconds``, the processor time the run's process used (less disturbed by other programs on a
  busy machine). The timed run is made ``--repeat`` times (default 3), each in a fresh process, and
  the one that used the least processor time counts, as ``timeit`` does: the slower runs measure
  whatever else the machine was doing (on a shared machine one run of the same size can take 20%
  longer than the next). The rounds take every size in turn, so that a slow spell of the machine
  falls on all sizes alike rather than on one;
- ``peak_bytes`` and ``peak_bytes_per_client``: the peak of the traced Python heap in a second run of
  the same size with ``tracemalloc`` on;
- ``retained_bytes_per_client``: what is still on the heap once every client has hung up (should be
  close to nothing: a closed client must leave nothing behind);
- ``per_client_cost_ratio_5000_vs_1000``: wall time per client at the largest size over that at
  1,000 (or at the smallest size, when 1,000 is not run), and ``per_client_cpu_cost_ratio_…`` the same
  for processor time. Simulated load should scale linearly: close to 1.
  ``per_client_cpu_cost_ratio_without_collector_…`` is the same ratio for the processor time spent
  outside Python's garbage collector (the simulator's own work); the gap between the two ratios is
  the collector's doing (see below).

Time on a busy machine is noisy, so each size also reports figures that do not depend on the load,
about Python's cyclic garbage collector — the one cost that can grow faster than the number of
clients. By default it runs a *full* (generation 2) pass after every 10 collections of the middle
generation, provided the objects promoted to the oldest generation since the last full pass exceed a
quarter of those already there; each full pass walks every tracked object.
The more objects each in-flight call keeps alive (tasks, coroutines, frames, dicts, closures), the more
survive the young collections and get promoted while thousands of calls are in flight at once:

- ``gc_tracked_objects_per_client_at_peak``: objects the collector tracks
  (``len(gc.get_objects())``) at the busiest moment, over those before the run, per client — what one
  in-flight client costs the collector;
- ``full_collections`` (and ``collections``, one count per generation, from the timed run):
  how many collections the run caused, and ``collector_cpu_seconds`` / ``full_collection_cpu_seconds``
  the processor time they took (timed from a ``gc.callbacks`` hook);
- ``promoted_per_call``: objects that survived a young collection and moved up a generation
  (``[to generation 1, to generation 2]``), per call — objects that outlive their call's first
  moments and end up in the costly full passes.

The peak and the promotions are measured in a third run of the same size (counting them costs time).

Every run above uses the simulation as it comes: :meth:`Simulation.run` spaces the collector's full
passes by the size of the heap (:mod:`mcp_sim.sim.collector`). To show what that pacing is for, each
size is also timed ``--repeat`` times with Python's own pacing (``Simulation(pace_collector=False)``:
a full pass every 10 middle-generation collections, whatever the heap's size), reported as
``cpu_seconds_python_pacing``, ``full_collections_python_pacing`` and
``collector_cpu_seconds_python_pacing``, and as the ratio ``per_client_cpu_cost_ratio_python_pacing_…``.

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


class CollectorClock:
    """Processor time spent in the garbage collector, per generation (a ``gc.callbacks`` hook)."""

    def __init__(self) -> None:
        self.seconds = [0.0, 0.0, 0.0]
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.process_time()
        else:
            self.seconds[info["generation"]] += time.process_time() - self._started


class CollectorProbe:
    """Watches the garbage collector during a run: objects promoted per generation (from a
    ``gc.callbacks`` hook) and the peak number of tracked objects (sampled by :meth:`watch`)."""

    def __init__(self) -> None:
        self.promoted = [0, 0]
        self.peak = 0
        self._young = 0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        generation = info["generation"]
        if generation == 2:
            return  # survivors of a full pass stay where they are
        if phase == "start":  # a collection of generation g also takes every younger generation
            self._young = sum(len(gc.get_objects(g)) for g in range(generation + 1))
        else:
            self.promoted[generation] += self._young - info["collected"]

    async def watch(self, done: anyio.Event) -> None:
        """Count the tracked objects at every turn of the event loop until ``done``."""
        while not done.is_set():
            self.peak = max(self.peak, len(gc.get_objects()))
            await anyio.sleep(0)


def run(era: str, clients: int, calls: int, *, mode: str, paced: bool = True) -> dict[str, Any]:
    """One load run in this process. ``mode``: ``time`` (wall and processor seconds, collections per
    generation), ``memory`` (the traced heap's peak and what stays after) or ``collector`` (the peak
    of tracked objects and the promotions, see :class:`CollectorProbe`). ``paced=False``: with
    Python's own pacing of full collections instead of the simulation's."""
    sim = Simulation(5, recorder=Recorder(enabled=False), pace_collector=paced)
    out: dict[str, Any] = {}
    trace_memory = mode == "memory"
    probe = CollectorProbe() if mode == "collector" else None

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
            finished = anyio.Event()
            if probe is not None:
                tg.start_soon(probe.watch, finished)
            async with anyio.create_task_group() as group:
                for n in range(clients):
                    group.start_soon(one_client, server, n)
            finished.set()
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
    elif probe is not None:
        before = len(gc.get_objects())
        gc.callbacks.append(probe)
        try:
            sim.run(main)
        finally:
            gc.callbacks.remove(probe)
        out["tracked_objects_at_peak"] = probe.peak - before
        out["promoted"] = probe.promoted
    else:
        stats = gc.get_stats()
        clock = CollectorClock()
        gc.callbacks.append(clock)
        started, cpu = time.perf_counter(), time.process_time()
        try:
            sim.run(main)
        finally:
            gc.callbacks.remove(clock)
        out["wall_seconds"] = time.perf_counter() - started
        out["cpu_seconds"] = time.process_time() - cpu
        out["collector_cpu_seconds"] = clock.seconds
        out["collections"] = [after["collections"] - start["collections"]
                              for start, after in zip(stats, gc.get_stats(), strict=True)]
    return out


def measure(era: str, clients: int, calls: int, mode: str, *, paced: bool = True) -> dict[str, Any]:
    """Run one measurement in a fresh interpreter (its own heap, its own collector history)."""
    args = [sys.executable, str(Path(__file__).resolve()), "--one", era, str(clients), str(calls), "--mode", mode]
    if not paced:
        args.append("--python-pacing")
    proc = subprocess.run(args, capture_output=True, text=True, check=True)
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def report(sizes: list[int], calls: int, repeat: int = 3) -> dict[str, Any]:
    out: dict[str, Any] = {"calls_per_client": calls, "repeat": repeat}
    for era in ("legacy", "modern"):
        rows: dict[str, Any] = {}
        timed_per_client: dict[int, float] = {}
        cpu_per_client: dict[int, float] = {}
        own_cpu_per_client: dict[int, float] = {}
        python_pacing_cpu_per_client: dict[int, float] = {}
        samples: dict[tuple[int, bool], list[dict[str, Any]]] = {}
        for _ in range(max(1, repeat)):  # round after round, every size: a slow spell hits them alike
            for clients in sizes:
                for paced in (True, False):
                    samples.setdefault((clients, paced), []).append(
                        measure(era, clients, calls, "time", paced=paced))
        for clients in sizes:
            timed = min(samples[clients, True], key=lambda run: run["cpu_seconds"])
            unpaced = min(samples[clients, False], key=lambda run: run["cpu_seconds"])
            python_pacing_cpu_per_client[clients] = unpaced["cpu_seconds"] / clients
            timed_per_client[clients] = timed["wall_seconds"] / clients
            cpu_per_client[clients] = timed["cpu_seconds"] / clients
            own_cpu_per_client[clients] = (timed["cpu_seconds"] - sum(timed["collector_cpu_seconds"])) / clients
            memory = measure(era, clients, calls, "memory")
            collector = measure(era, clients, calls, "collector")
            rows[str(clients)] = {
                "wall_seconds": round(timed["wall_seconds"], 3),
                "wall_ms_per_client": round(1000 * timed["wall_seconds"] / clients, 3),
                "cpu_seconds": round(timed["cpu_seconds"], 3),
                "peak_bytes": round(memory["peak_bytes"]),
                "peak_bytes_per_client": round(memory["peak_bytes"] / clients),
                "retained_bytes_per_client": round(memory["retained_bytes"] / clients),
                "gc_tracked_objects_per_client_at_peak": round(collector["tracked_objects_at_peak"] / clients, 1),
                "full_collections": timed["collections"][2],
                "collections": timed["collections"],
                "collector_cpu_seconds": round(sum(timed["collector_cpu_seconds"]), 3),
                "full_collection_cpu_seconds": round(timed["collector_cpu_seconds"][2], 3),
                "promoted_per_call": [round(n / (clients * calls), 2) for n in collector["promoted"]],
                "cpu_seconds_python_pacing": round(unpaced["cpu_seconds"], 3),
                "full_collections_python_pacing": unpaced["collections"][2],
                "collector_cpu_seconds_python_pacing": round(sum(unpaced["collector_cpu_seconds"]), 3),
            }
        entry: dict[str, Any] = {"clients": rows}
        base = 1000 if 1000 in sizes else min(sizes)
        big = max(sizes)
        if big > base:
            entry[f"per_client_cost_ratio_{big}_vs_{base}"] = round(
                timed_per_client[big] / timed_per_client[base], 3)
            entry[f"per_client_cpu_cost_ratio_{big}_vs_{base}"] = round(
                cpu_per_client[big] / cpu_per_client[base], 3)
            entry[f"per_client_cpu_cost_ratio_without_collector_{big}_vs_{base}"] = round(
                own_cpu_per_client[big] / own_cpu_per_client[base], 3)
            entry[f"per_client_cpu_cost_ratio_python_pacing_{big}_vs_{base}"] = round(
                python_pacing_cpu_per_client[big] / python_pacing_cpu_per_client[base], 3)
        out[era] = entry
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3,
                        help="timed runs per size, each in a fresh process; the quickest counts")
    parser.add_argument("--one", nargs=3, metavar=("ERA", "CLIENTS", "CALLS"), help=argparse.SUPPRESS)
    parser.add_argument("--mode", choices=("time", "memory", "collector"), default="time", help=argparse.SUPPRESS)
    parser.add_argument("--python-pacing", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        era, clients, calls = args.one[0], int(args.one[1]), int(args.one[2])
        print(json.dumps(run(era, clients, calls, mode=args.mode, paced=not args.python_pacing)))
        return
    print(json.dumps(report(args.sizes, args.calls, args.repeat), indent=2))  # a benchmark script reports on stdout


if __name__ == "__main__":
    main()
