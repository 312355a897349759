"""``mcp-sim check``'s task and listen workloads against the check zoo's second twin
(``tests/check_zoo/tasks_server.py``: the zoo server plus legacy tasks, the 2026-07-28 tasks extension
and ``subscriptions/listen``) and its one-defect variants.

The twin must report nothing in both eras under the whole default nemesis, and the trace must show
the workloads really ran (tasks created, polled to their end, fetched and cancelled; a listen
acknowledged and closed). Each defect must be reported under the rule it breaks, in the right
category and at the rule's strength, with the exit status following. Slow: every case spawns real
processes.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

from mcp_sim.bridge.check import CheckOptions, CheckReport, check_trace, eras_of_links, run_check
from mcp_sim.protocol import rulebook
from mcp_sim.trace.events import Trace
from mcp_sim.trace.jsonl import load_jsonl, to_jsonl

ZOO = Path(__file__).parent / "check_zoo" / "tasks_server.py"

pytestmark = pytest.mark.slow

# (defect, era, rule, category, strength)
EXPECTED: list[tuple[str, str, str, str, str]] = [
    ("task-never-ends", "legacy", "check.task-reaches-terminal", "timing", "SHOULD"),
    ("task-never-ends", "modern", "check.task-reaches-terminal", "timing", "SHOULD"),
    ("unknown-task-result", "legacy", "tasks.legacy.unknown-task", "errors", "MUST"),
    ("unknown-task-result", "modern", "tasks.ext.unknown-task-get", "errors", "MUST"),
    ("listen-not-acknowledged", "modern", "subscriptions.ack-first", "lifecycle", "MUST"),
    ("undeclared-tasks", "legacy", "tasks.legacy.capability", "capabilities", "MUST"),
    ("result-without-related-task", "legacy", "tasks.legacy.related-task", "lifecycle", "MUST"),
    ("cancel-keeps-working", "legacy", "tasks.legacy.cancelled-before-answer", "lifecycle", "MUST"),
    ("cancel-returns-task", "modern", "tasks.ext.cancel-acknowledged", "lifecycle", "MUST"),
    ("extension-not-required", "modern", "tasks.ext.undeclared-is-32021", "capabilities", "MUST"),
    ("task-for-plain-call", "modern", "tasks.ext.declared-in-request", "capabilities", "MUST"),
    ("required-served-plain", "legacy", "tasks.legacy.required-error", "errors", "MUST"),
    ("listen-unasked", "modern", "subscriptions.only-what-was-asked", "capabilities", "MUST"),
]


def zoo_command(defect: str | None = None) -> list[str]:
    return [sys.executable, str(ZOO), *(("--defect", defect) if defect else ())]


def check(command: list[str], options: CheckOptions) -> tuple[CheckReport, Trace]:
    return anyio.run(run_check, command, options)


def _answers(trace: Trace, link: str, method: str) -> list[dict]:
    """The results the server gave on ``link`` to the client's ``method`` requests."""
    asked = {e.request_id for e in trace if e.link == link and e.kind == "request" and e.method == method
             and e.sender.startswith("client/")}
    return [e.message["result"] for e in trace if e.link == link and e.kind == "response"
            and e.sender.startswith("server/") and e.request_id in asked and isinstance(e.message, dict)]


def test_every_defect_of_the_second_zoo_is_expected_and_its_rule_has_that_strength() -> None:
    sys.path.insert(0, str(ZOO.parent))
    from tasks_server import DEFECTS  # the zoo's own list

    assert {defect for defect, *_ in EXPECTED} == set(DEFECTS)
    for _defect, _era, rule, _category, strength in EXPECTED:
        assert rulebook.get(rule).strength.startswith(strength)


def test_the_tasks_twin_reports_nothing_and_the_workloads_really_ran() -> None:
    report, trace = check(zoo_command(), CheckOptions(seed=3))
    assert report.findings == [], report.findings
    assert report.passed and report.exit_code == 0
    base = next(e.link for e in trace if e.link.endswith("-legacy")).removesuffix("-legacy")
    legacy, modern = f"{base}-legacy", f"{base}-modern"
    # legacy: a task created, polled until completed, its result fetched, a second one cancelled, a list
    created = [r for r in _answers(trace, legacy, "tools/call") if "task" in r]
    assert len(created) >= 2 and all(r["task"]["status"] == "working" for r in created)
    assert "completed" in {r["status"] for r in _answers(trace, legacy, "tasks/get")}
    assert any(r.get("content") for r in _answers(trace, legacy, "tasks/result"))
    assert "cancelled" in {r["status"] for r in _answers(trace, legacy, "tasks/cancel")}
    assert _answers(trace, legacy, "tasks/list")
    # modern: tasks made only where the extension was declared, polled to completed with the result inline
    assert sum(r.get("resultType") == "task" for r in _answers(trace, modern, "tools/call")) >= 2
    done = [r for r in _answers(trace, modern, "tasks/get") if r["status"] == "completed"]
    assert done and done[0]["result"]["content"]
    assert _answers(trace, modern, "tasks/cancel") == [{"resultType": "complete"}] * len(
        _answers(trace, modern, "tasks/cancel"))
    # modern: a listen acknowledged, its stream used, then cancelled by the client
    listen = next(e for e in trace if e.link == modern and e.method == "subscriptions/listen" and e.kind == "request")
    acks = [e for e in trace if e.link == modern and e.method == "notifications/subscriptions/acknowledged"]
    assert acks and acks[0].message["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == listen.request_id
    assert any(e.link == modern and e.method == "notifications/cancelled"
               and e.message["params"]["requestId"] == listen.request_id for e in trace)


@pytest.mark.parametrize(("defect", "era", "rule", "category", "strength"), EXPECTED,
                         ids=[f"{d}-{e}" for d, e, *_ in EXPECTED])
def test_each_task_or_listen_defect_is_reported_with_its_rule_category_and_strength(
        defect: str, era: str, rule: str, category: str, strength: str) -> None:
    report, _trace = check(zoo_command(defect), CheckOptions(eras=(era,), nemesis=(), deadline=2.0,  # type: ignore[arg-type]
                                                           grace=1.0))
    seen = {(f.rule, f.category, f.strength) for f in report.findings}
    assert (rule, category, strength) in seen, f"{defect}: found {sorted(seen)}"
    assert all(f.rule == rule for f in report.findings if f.strength == "MUST"), sorted(seen)
    assert report.exit_code == (1 if strength == "MUST" else 0)


def test_the_task_and_listen_findings_come_back_from_a_saved_trace(tmp_path: Path) -> None:
    # the task and listen checkers read only the trace: a saved run checked again finds the same
    report, trace = check(zoo_command("cancel-keeps-working"), CheckOptions(nemesis=(), deadline=2.0))
    path = tmp_path / "run.jsonl"
    to_jsonl(trace, path)
    saved = load_jsonl(path)
    again = check_trace(saved, eras_of_links(saved), deadline=2.0)
    assert "tasks.legacy.cancelled-before-answer" in {f.rule for f in again}
    assert sorted(again, key=repr) == sorted(report.findings, key=repr)
