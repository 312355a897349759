"""Fault soak: every transport × era × fault kind × seed, each run twice, with many concurrent
``tools/call``s through the real Client (course chapter 06, transports and faults).

Each run checks the promises the simulator makes under faults:

* **one outcome per call** — a result, an error, a timeout, an HTTP refusal, a lost connection or an unknown outcome,
  exactly once;
* **the right caller** — a result carries the text computed from that call's own arguments;
* **no hang** — the simulation ends (the virtual loop raises on a stall);
* **no silent double execution** — a tool runs twice only after a retry the trace shows as the host's
  explicit policy (``retry_after_crash``);
* **same seed, same trace** — the JSON Lines export of a re-run is byte-identical.

Run ``python benchmarks/fault_soak.py [--seeds N] [--calls N]``; it prints one JSON object (runs,
problems, wall time). ``tests/test_fault_soak.py`` runs the same soak, small.
"""

from __future__ import annotations

import argparse
import json
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import anyio

from mcp_sim.capabilities.context import Context
from mcp_sim.roles.client import Client
from mcp_sim.roles.server import Server
from mcp_sim.roles.server_session import serve
from mcp_sim.scenarios.fault_lab import outcome_of as lab_outcome_of
from mcp_sim.sim.world import Simulation
from mcp_sim.trace.jsonl import dumps_jsonl
from mcp_sim.transports import open_link
from mcp_sim.transports.faults import Faults, LinkFaults

TRANSPORTS = ("memory", "stdio", "http")
REVISIONS = ("2025-11-25", "2026-07-28")
KINDS: dict[str, Callable[[], Faults]] = {
    "latency": lambda: Faults(latency=0.05),
    "drop": lambda: Faults(drop=0.15),
    "duplicate": lambda: Faults(duplicate=0.3),
    "reorder": lambda: Faults(reorder=0.3, reorder_hold=0.2),
    "corrupt": lambda: Faults(corrupt=0.1),
    "crash": lambda: Faults(crash_at=4),
    "disconnect": lambda: Faults(disconnect_at=4),
    "cut": lambda: Faults(cut_sse_at=3),
    "mix": lambda: Faults(latency=0.02, drop=0.05, duplicate=0.1, reorder=0.1, corrupt=0.05),
}
TRUSTED_TOOL = "lookup"
"""The tool the host lists in ``retry_after_crash``; ``work`` is not trusted to run twice."""


@dataclass
class Run:
    """What one run produced: each call's outcomes, each token's executions, the trace."""

    outcomes: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    executions: Counter[str] = field(default_factory=Counter)
    trace: str = ""
    policy_retries: int = 0
    connect_failed: str | None = None


def _server(executions: Counter[str]) -> Server:
    server = Server("soak", version="1.0.0")

    @server.tool()
    async def work(ctx: Context, token: str, seconds: float) -> str:
        """Work for a while (not safe to repeat)."""
        executions[token] += 1
        await ctx.sleep(seconds)
        return f"done {token}"

    @server.tool()
    async def lookup(ctx: Context, token: str, seconds: float) -> str:
        """Look something up (the host trusts it to be idempotent)."""
        executions[token] += 1
        await ctx.sleep(seconds)
        return f"done {token}"

    return server


def outcome_of(exc: BaseException) -> str:
    """The kind of outcome a call ended with, classified as the fault lab of chapter 06 does; an exception
    it does not know is ``"other"``, which the soak reports as a problem."""
    try:
        return lab_outcome_of(exc)
    except Exception:
        return "other"


def run_one(transport: str, revision: str, kind: str, seed: int, *, calls: int = 6) -> Run:
    """One simulated run: connect, ``calls`` concurrent ``tools/call``s, close."""
    run = Run()
    server = _server(run.executions)
    sim = Simulation(seed)
    faults = KINDS[kind]()

    async def one(client: Client, i: int) -> None:
        token = f"t{i}"
        tool = TRUSTED_TOOL if i % 2 else "work"
        try:
            result = await client.call_tool(tool, {"token": token, "seconds": 0.5 + 0.1 * i}, timeout=10)
            content = result.get("content") or [{}]
            run.outcomes.setdefault(token, []).append(("result", str(content[0].get("text"))))
        except Exception as exc:  # every failure is an outcome; its kind is what the soak checks
            run.outcomes.setdefault(token, []).append((outcome_of(exc), f"{type(exc).__name__}: {exc}"[:160]))

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            stream = await open_link(sim, tg, "soak", lambda s: serve(server, s),  # type: ignore[call-overload]
                                     transport=transport, revision=revision,
                                     faults=LinkFaults(to_server=faults, to_client=faults))
            client = Client("app", era="legacy" if revision < "2026" else "modern",
                            retry_after_crash=(TRUSTED_TOOL,))
            try:
                await client.connect(stream, tg)
            except Exception as exc:  # a fault during the opening: no call is made
                run.connect_failed = f"{type(exc).__name__}: {exc}"
                tg.cancel_scope.cancel()
                return
            async with anyio.create_task_group() as calls_tg:
                for i in range(calls):
                    calls_tg.start_soon(one, client, i)
            with anyio.move_on_after(30):
                await client.close()
            tg.cancel_scope.cancel()

    sim.run(main)
    run.trace = dumps_jsonl(sim.recorder)
    run.policy_retries = sum(1 for e in sim.recorder if e.kind == "app" and "trusts it to be idempotent" in (e.text or ""))
    return run


def problems_of(run: Run, calls: int) -> list[str]:
    """Every broken promise in one run (see the module docstring)."""
    if run.connect_failed is not None:
        return []
    problems = []
    repeats_of_trusted = 0
    for i in range(calls):
        token = f"t{i}"
        got = run.outcomes.get(token, [])
        if len(got) != 1:
            problems.append(f"{token}: {len(got)} outcomes {got}")
            continue
        kind, text = got[0]
        if kind == "result" and text != f"done {token}":
            problems.append(f"{token}: answer of another call: {text!r}")
        if kind == "other":
            problems.append(f"{token}: unexpected outcome {text}")
        if run.executions[token] > 1:
            if i % 2:
                repeats_of_trusted += run.executions[token] - 1
            else:
                problems.append(f"{token}: executed {run.executions[token]} times, outcome {got[0]}")
    if repeats_of_trusted > run.policy_retries:
        problems.append(f"{repeats_of_trusted} repeated executions of {TRUSTED_TOOL} but only "
                        f"{run.policy_retries} retries on the trace")
    return problems


def soak(seeds: Iterable[int], *, calls: int = 6, transports: Iterable[str] = TRANSPORTS,
         revisions: Iterable[str] = REVISIONS, kinds: Iterable[str] = tuple(KINDS)) -> dict[str, Any]:
    """Run every configuration for every seed, twice; return the figures and every problem found."""
    seeds = tuple(seeds)
    started = time.perf_counter()
    runs = 0
    found: dict[str, list[str]] = {}
    outcome_kinds: Counter[str] = Counter()
    for transport in transports:
        for revision in revisions:
            for kind in kinds:
                for seed in seeds:
                    runs += 1
                    name = f"{transport} {revision} {kind} seed={seed}"
                    try:
                        first = run_one(transport, revision, kind, seed, calls=calls)
                        again = run_one(transport, revision, kind, seed, calls=calls)
                        problems = problems_of(first, calls)
                        if first.trace != again.trace:
                            problems.append("the trace differs on a re-run of the same seed")
                        for got in first.outcomes.values():
                            outcome_kinds.update(k for k, _ in got)
                    except Exception as exc:  # an escaped exception is a problem, not a crash of the soak
                        problems = ["raised " + "".join(traceback.format_exception_only(exc)).strip()[:300]]
                    if problems:
                        found[name] = problems
    return {"runs": runs, "runs_with_problems": len(found), "problems": found,
            "outcomes": dict(sorted(outcome_kinds.items())), "seconds": round(time.perf_counter() - started, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--seeds", type=int, default=50)
    parser.add_argument("--calls", type=int, default=6)
    args = parser.parse_args()
    print(json.dumps(soak(range(args.seeds), calls=args.calls), indent=2))


if __name__ == "__main__":
    main()
