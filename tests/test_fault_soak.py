"""The fault soak, small: every surface × transport × era × fault kind, a few seeds, each run twice
(course chapter 06). The same soak, large, is ``benchmarks/fault_soak.py``; its module docstring lists
the surfaces (plain calls, tasks, MRTR, subscriptions, the OAuth flow) and the promises checked: one
outcome per call, the right caller, no hang, no silent double execution, no silent miss, the user
asked once, bounded messages per call, the same trace for the same seed."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
SEEDS = (0, 1)


def _soak_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fault_soak", ROOT / "benchmarks" / "fault_soak.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("fault_soak", module)
    spec.loader.exec_module(module)
    return module


soak = _soak_module()


@pytest.mark.parametrize("kind", sorted(soak.KINDS))
@pytest.mark.parametrize("revision", soak.REVISIONS)
@pytest.mark.parametrize("transport", soak.TRANSPORTS)
def test_every_call_has_one_true_outcome_under_faults(transport: str, revision: str, kind: str) -> None:
    for seed in SEEDS:
        first = soak.run_one(transport, revision, kind, seed)
        assert first.connect_failed is None or kind != "latency", first.connect_failed
        assert soak.problems_of(first, 6) == [], f"seed {seed}"
        again = soak.run_one(transport, revision, kind, seed)
        assert first.outcomes == again.outcomes and first.executions == again.executions
        assert first.trace == again.trace, f"seed {seed}: the trace differs on a re-run"


def test_an_http_crash_with_exchanges_open_gives_the_same_trace_on_a_rerun() -> None:
    for seed in range(6):
        traces = {soak.run_one("http", "2026-07-28", "crash", seed).trace for _ in range(3)}
        assert len(traces) == 1, f"seed {seed}"


def test_the_soak_checks_find_what_they_look_for() -> None:
    """The checks are not vacuous: a wrong answer, a missing outcome and a silent repeat are found."""
    run = soak.Run(outcomes={"t0": [("result", "done t1")], "t2": [("result", "done t2"), ("timeout", "x")]},
                   executions=soak.Counter({"t0": 1, "t2": 2, "t3": 2, "t4": 1}))
    run.outcomes["t3"] = [("result", "done t3")]
    run.outcomes["t4"] = [("other", "ValueError")]
    run.outcomes["t5"] = [("outcome-unknown", "OutcomeUnknown")]
    problems = soak.problems_of(run, 6)
    assert any(p.startswith("t0: answer of another call") for p in problems)
    assert any(p.startswith("t1: 0 outcomes") for p in problems)
    assert any(p.startswith("t2: 2 outcomes") for p in problems)
    assert any("repeated executions of lookup" in p for p in problems)  # t3 ran twice, no retry noted
    assert any(p.startswith("t4: unexpected outcome") for p in problems)
    assert len(problems) == 5


def test_the_soak_exercises_every_kind_of_outcome() -> None:
    """Across the configurations the calls end in results, timeouts and unknown outcomes — and in no
    error: a reordering link that delivers a legacy ``tools/call`` before ``notifications/initialized``
    no longer makes the server refuse it (rule ``lifecycle.sim-request-implies-initialized``)."""
    report = soak.soak(SEEDS, surfaces=("calls",), transports=("memory", "stdio", "http"), revisions=("2025-11-25",))
    assert report["runs"] == 3 * len(soak.KINDS) * len(SEEDS) and report["runs_with_problems"] == 0, \
        report["problems"]
    assert {"result", "timeout", "outcome-unknown"} <= set(report["outcomes"])
    assert "error" not in report["outcomes"]


NEW_SURFACES = [(surface, transport) for surface in ("tasks", "mrtr", "subscriptions", "oauth")
                for transport in soak.SURFACE_TRANSPORTS.get(surface, soak.TRANSPORTS)]


@pytest.mark.parametrize("revision", soak.REVISIONS)
@pytest.mark.parametrize(("surface", "transport"), NEW_SURFACES)
def test_every_surface_keeps_its_promises_under_every_fault(surface: str, transport: str, revision: str) -> None:
    runner, calls = soak.SURFACES[surface], soak.SURFACE_CALLS[surface]
    for kind in sorted(soak.KINDS):
        first = runner(transport, revision, kind, SEEDS[0], calls=calls)
        assert first.connect_failed is None or kind != "latency", first.connect_failed
        assert soak.problems_of(first, calls) == [], kind
        again = runner(transport, revision, kind, SEEDS[0], calls=calls)
        assert first.trace == again.trace, f"{kind}: the trace differs on a re-run"
        if kind == "latency":  # with no loss, every call of every surface ends in its result
            assert {k for got in first.outcomes.values() for k, _ in got} == {"result"}, first.outcomes


def test_the_new_checks_find_what_they_look_for() -> None:
    """A silent miss, a question asked twice and a message storm are each reported."""
    run = soak.Run(outcomes={"t0": [("result", "done t0")]}, silent_misses=["the change at 4 s"],
                   asked=soak.Counter({"t0": 2}), messages=soak.MAX_MESSAGES_PER_CALL + 1)
    problems = soak.problems_of(run, 1)
    assert [p.split(":")[0] for p in problems] == [f"{soak.MAX_MESSAGES_PER_CALL + 1} messages for 1 calls",
                                                   "silent miss", "the user was asked 2 times for t0"]
    assert soak.problems_of(soak.Run(outcomes={"t0": [("result", "done t0")]}, asked=soak.Counter({"a": 2}),
                                     max_asks=2), 1) == []
