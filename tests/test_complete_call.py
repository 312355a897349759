"""The complete call and its failures (course chapter 09): each outcome is decided where the chapter
says, by the layer and participant it names, in both eras; every message is valid for its revision."""

from __future__ import annotations

import pytest
from test_fidelity import _check_trace

from mcp_sim.protocol.schema import find_spec_dir
from mcp_sim.scenarios.complete_call import OUTCOMES, run_complete_call

REVISIONS = ("2025-11-25", "2026-07-28")


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("outcome", list(OUTCOMES))
def test_each_outcome_is_decided_by_its_row(outcome: str, revision: str) -> None:
    run = run_complete_call(outcome, revision=revision)
    row = run.decisive
    calls = [e for e in run.events if e.kind == "request" and e.method == "tools/call"]
    if outcome == "answered":
        assert row is None and run.answer.startswith("Issue #3 created")
        return
    assert row is not None
    assert not run.answer.startswith("Issue #")
    if outcome in ("user-denies", "policy-hides", "version-mismatch"):
        assert calls == []  # decided before anything was sent to run the tool
    if outcome == "user-denies":
        assert (row.sender, row.text) == ("user", "deny")
    elif outcome == "policy-hides":
        offered = [t["function"]["name"] for t in row.message["tools"]]
        assert offered and not any("delete" in name for name in offered)
    elif outcome == "tool-fails":
        assert row.message["result"]["isError"] is True and len(calls) == 1
    elif outcome == "timeout":
        assert "dropped" in row.marks and any("timeout" in e.marks for e in run.events)
        assert any(e.method == "notifications/cancelled" for e in run.events)
    elif outcome == "version-mismatch":
        assert row.kind == "error" and row.method in ("initialize", "server/discover")


@pytest.mark.skipif(find_spec_dir() is None, reason="official MCP schemas not found")
@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("outcome", list(OUTCOMES))
def test_every_message_is_valid(outcome: str, revision: str) -> None:
    assert _check_trace(run_complete_call(outcome, revision=revision).events, revision) > 0


def test_runs_are_deterministic() -> None:
    for outcome in OUTCOMES:
        first = [e.to_json() for e in run_complete_call(outcome, seed=3).events]
        assert first == [e.to_json() for e in run_complete_call(outcome, seed=3).events]


def test_unknown_outcome_is_refused() -> None:
    with pytest.raises(KeyError, match="known"):
        run_complete_call("gremlins")
