"""The fault lab (course chapter 06): same seed, same trace; every call ends in exactly one outcome; every
request ends visibly on the trace; the widget's static copy shows the run."""

from __future__ import annotations

import pytest

from mcp_sim.scenarios.fault_lab import (
    FAULT_KINDS,
    Experiment,
    request_endings,
    run_fault_experiment,
)
from mcp_sim.trace.jsonl import dumps_jsonl

OUTCOMES = {"result", "error", "http-error", "timeout", "outcome-unknown", "connection-lost"}


@pytest.mark.parametrize("fault", sorted(FAULT_KINDS))
@pytest.mark.parametrize("transport", ["memory", "stdio", "http"])
@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
def test_same_seed_same_trace_and_one_visible_ending_each(fault: str, transport: str, revision: str) -> None:
    for seed in (0, 3):
        experiment = Experiment(fault=fault, transport=transport, revision=revision, seed=seed)  # type: ignore[arg-type]
        first, again = run_fault_experiment(experiment), run_fault_experiment(experiment)
        assert dumps_jsonl(first.recorder) == dumps_jsonl(again.recorder)
        assert first.calls == again.calls and first.summary() == again.summary()
        assert len(first.calls) == experiment.calls
        assert all(c.outcome in OUTCOMES for c in first.calls), first.calls
        assert first.unended() == [], first.summary()
        assert "every request ended" in first.summary()


def test_the_baseline_answers_everything_and_faults_change_the_story() -> None:
    base = run_fault_experiment(fault="none", transport="stdio")
    assert {c.outcome for c in base.calls} == {"result"}
    assert set(base.endings.values()) == {"answered"} and base.highlights() == []
    dropped = run_fault_experiment(fault="drop", transport="stdio", revision="2025-11-25", seed=1)
    assert "timed out" in dropped.endings.values()
    assert dropped.counts()["cancelled"] >= 1  # each timeout is followed by notifications/cancelled
    retried = [c for c in dropped.calls if len(c.request_ids) > 1]
    assert retried and all(c.tool == "lookup" for c in retried)  # only the read-only tool is asked again


def test_a_crash_on_stdio_restarts_retries_lookup_and_leaves_book_unknown() -> None:
    run = run_fault_experiment(fault="crash", transport="stdio", revision="2026-07-28")
    assert run.counts()["restarts"] == 1
    by_tool = {c.tool: set() for c in run.calls}
    for c in run.calls:
        by_tool[c.tool].add(c.outcome)
    assert by_tool["lookup"] == {"result"} and "outcome-unknown" in by_tool["book"]
    assert "retried with a new id" in run.endings.values() and "outcome unknown" in run.endings.values()


def test_a_cut_legacy_stream_is_resumed_with_last_event_id() -> None:
    run = run_fault_experiment(fault="cut", transport="http", revision="2025-11-25")
    assert run.counts()["resumed with Last-Event-ID"] == 1
    assert {c.outcome for c in run.calls} == {"result"}


def test_a_request_with_no_ending_is_reported() -> None:
    run = run_fault_experiment(fault="drop", transport="memory", seed=1)
    events = [e for e in run.events if not (e.kind == "timeout" or "retry" in e.marks)]
    endings = request_endings(events)
    assert "no visible ending" in endings.values()  # the check is not vacuous


def test_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="unknown fault"):
        Experiment(fault="gremlins")
    with pytest.raises(ValueError, match="calls"):
        Experiment(calls=0)


def test_the_widget_shows_the_run_without_a_kernel() -> None:
    pytest.importorskip("ipywidgets")
    from mcp_sim.widgets.fault_lab import fault_lab

    lab = fault_lab(fault="drop", transport="stdio", seed=1)
    bundle = lab._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert "every request ended" in bundle["text/plain"]
    assert "notifications/cancelled" in bundle["text/html"] and "timeout" in bundle["text/html"]
    run = lab.rerun(fault="crash")
    assert run.experiment.amount is None and lab.experiment.fault == "crash"
    lab.fault.value = "latency"
    assert lab.amount.value == FAULT_KINDS["latency"].default
    assert lab.run_from_controls() is not None and lab.experiment.fault == "latency"
    lab.calls.value = 8
    lab.amount.value = 0.5
    assert lab.run_from_controls() is not None and len(lab.run.calls) == 8


def test_every_message_of_the_lab_and_the_tour_is_valid_for_its_revision() -> None:
    from test_fidelity import _check_trace

    from mcp_sim.protocol.schema import find_spec_dir
    from mcp_sim.scenarios import transport_tour as tour

    if find_spec_dir() is None:
        pytest.skip("official MCP schemas not found")
    for revision in ("2025-11-25", "2026-07-28"):
        for transport in ("memory", "stdio", "http"):
            assert _check_trace(tour.same_call(transport, revision), revision) > 0  # type: ignore[arg-type]
            for fault in FAULT_KINDS:
                run = run_fault_experiment(fault=fault, transport=transport, revision=revision, seed=2)
                assert _check_trace(run.recorder, revision) > 0
        assert _check_trace(tour.stdout_mixup(fixed=False, revision=revision)[0], revision) > 0
    assert _check_trace(tour.shutdown(exits_on_stdin_eof=False, handles_sigterm=False), "2026-07-28") > 0
    for mode in (None, "json"):
        assert _check_trace(tour.legacy_http(response_mode=mode)[0], "2025-11-25") > 0  # type: ignore[arg-type]
    assert _check_trace(tour.modern_http()[0], "2026-07-28") > 0


def test_the_tour_shows_each_status_the_chapter_names() -> None:
    from mcp_sim.scenarios import transport_tour as tour

    _, legacy = tour.legacy_http()
    assert [a.response.status for a in legacy] == [400, 404]
    _, modern = tour.modern_http()
    assert [a.response.status for a in modern] == [200, 400, 400, 404, 405, 403]
    assert [(a.response.json() or {}).get("error", {}).get("code") for a in modern] == [
        None, -32020, -32020, -32601, None, -32600]
    _, got = tour.stdout_mixup(fixed=False)
    recorder, _ = tour.stdout_mixup(fixed=False)
    assert any(e.kind == "invalid" for e in recorder.events) and got.startswith("Oslo")
    fixed, _ = tour.stdout_mixup(fixed=True)
    assert not any(e.kind == "invalid" for e in fixed.events) and any(e.kind == "log" for e in fixed.events)
    steps = [e.text for e in tour.shutdown(exits_on_stdin_eof=False, handles_sigterm=False).events]
    assert any("SIGKILL" in (t or "") for t in steps)


def test_the_lab_player_follows_the_latest_run() -> None:
    pytest.importorskip("ipywidgets")
    from mcp_sim.widgets.fault_lab import fault_lab

    lab = fault_lab(fault="none", transport="memory")
    before = len(lab.player.state.visible)
    lab.rerun(fault="drop", seed=1)
    assert lab.player.state.trace is not None and len(lab.player.state.visible) != before
    assert lab.stepper.children[0].children == (lab.player.widget,)
