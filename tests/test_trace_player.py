"""The trace player: stepping, filtering, the three views, forking — driven without a browser."""

from __future__ import annotations

import html
import json
import time
from typing import Any

import anyio
import pytest

from mcp_sim.sim.world import Simulation
from mcp_sim.trace import Recorder, Trace
from mcp_sim.trace.samples import synthetic_trace_recorder, weather_trace
from mcp_sim.transports.faults import faulty_memory_link
from mcp_sim.widgets.player import (
    Change,
    ForkUnsupported,
    PlayerState,
    TracePlayer,
    http_text,
    side_by_side,
    stdio_text,
)
from mcp_sim.wire.jsonrpc import JSONRPCNotification, JSONRPCRequest, JSONRPCResultResponse


def run_echo(*, revision: str = "2025-11-25", seed: int = 0, faults: dict[str, Any] | None = None,
             calls: int = 3) -> Recorder:
    """A tiny world: a client calls an echo tool ``calls`` times; on a 1 s timeout it cancels."""
    sim = Simulation(seed)

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            client, server = faulty_memory_link(sim, "echo", (faults or {}).get("echo"), task_group=tg)
            client.revision = server.revision = revision

            async def serve() -> None:
                while True:
                    try:
                        msg = await server.receive()
                    except anyio.EndOfStream:
                        return
                    if isinstance(msg, JSONRPCRequest):
                        await anyio.sleep(0.010)
                        await server.send(JSONRPCResultResponse(msg.id, {"content": [], "echo": msg.params}))

            tg.start_soon(serve)
            for i in range(1, calls + 1):
                await client.send(JSONRPCRequest(i, "tools/call", {"name": "echo", "arguments": {"i": i}}))
                try:
                    with sim.fail_after(1.0, what=f"tools/call #{i}", who="client/echo", link="echo",
                                        request_id=i, method="tools/call"):
                        await client.receive()
                except TimeoutError:
                    await client.send(JSONRPCNotification("notifications/cancelled", {"requestId": i}))
            tg.cancel_scope.cancel()

    sim.run(main)
    return sim.recorder


def test_stepping_is_clamped_and_reports_position() -> None:
    state = PlayerState(weather_trace())
    assert state.at_start and state.current is not None and state.current.seq == 1
    assert state.back() is not None and state.index == 0
    state.forward()
    state.forward()
    assert state.current is not None and state.current.method == "initialize" and state.current.kind == "response"
    assert state.position().startswith("step 3 of 15")
    state.last()
    assert state.at_end and state.forward() is not None and state.index == len(state.visible) - 1
    state.jump(-5)
    assert state.index == 0
    state.jump(999)
    assert state.at_end
    assert "The weather client" in PlayerState(weather_trace()).jump(1).caption  # type: ignore[union-attr]


def test_filters_keep_the_current_step_when_they_can() -> None:
    state = PlayerState(weather_trace())
    assert state.choices()["link"] == ["app", "weather"]
    assert "tools/call" in state.choices()["method"]
    state.jump(8)  # seq 9: the tools/call request
    assert state.current is not None and state.current.seq == 9
    state.set_filter(method="tools/call")
    assert [e.seq for e in state.visible] == [9, 12]
    assert state.current is not None and state.current.seq == 9
    state.set_filter(method="initialize")
    assert [e.seq for e in state.visible] == [2, 3]
    assert state.current is not None and state.current.seq == 3  # nothing after #9 → the last one
    state.set_filter(method=None, layer="roles")
    assert all(e.kind == "app" for e in state.visible) and len(state.visible) > 2
    state.set_filter(layer=None, link="app")
    assert all(e.kind == "app" for e in state.visible)
    # The diagram and the table always show the visible events, in order.
    assert state.diagram().seqs == [e.seq for e in state.visible] == state.diagram().table().seqs
    state.set_filter(link="nowhere")
    assert state.current is None and state.position() == "no events match the filters" and state.detail() == ""
    state.jump_to_seq(12)
    assert state.current is not None and state.current.seq == 12 and state.filters["link"] is None


def test_the_three_views_of_a_message() -> None:
    state = PlayerState(weather_trace())
    state.jump(4)  # tools/list request
    assert json.loads(state.detail("json").split("\n", 1)[1])["method"] == "tools/list"
    stdio = state.detail("stdio")
    assert "on stdin of the weather server" in stdio and "\\n'" in stdio
    assert "did not travel over HTTP" in state.detail("http")
    event = state.current
    assert event is not None and event.raw is not None
    from dataclasses import replace

    over_stdio = replace(event, transport="stdio", framing={"stdio": {"stream": "stdin", "line": event.raw + "\n"}})
    assert stdio_text(over_stdio).startswith(f"stdin of the weather server, {len(event.raw) + 1} bytes")
    over_http = replace(event, transport="http", framing={"http": {
        "request": {"method": "POST", "path": "/mcp", "headers": {"MCP-Protocol-Version": "2025-06-18"},
                    "body": event.raw},
        "response": {"status": 200, "headers": {"Content-Type": "application/json"}}}})
    text = http_text(over_http)
    assert "POST /mcp HTTP/1.1" in text and "MCP-Protocol-Version: 2025-06-18" in text and "HTTP/1.1 200" in text


def test_highlight_css_follows_the_step() -> None:
    state = PlayerState(weather_trace())
    state.jump(3)
    assert "data-seq='4'" in state.highlight_css("scope-x") and ".scope-x " in state.highlight_css("scope-x")
    diagram = state.diagram()
    state.forward()
    assert state.diagram() is diagram  # stepping never redraws the SVG


def test_fork_drop_a_message_and_diff() -> None:
    original = run_echo()
    state = PlayerState(original, runner=run_echo, options={"revision": "2025-11-25"})
    calls = [i for i, e in enumerate(state.visible) if e.method == "tools/call" and e.kind == "request"]
    state.jump(calls[1])  # the second tools/call
    change = state.change_drop_current()
    assert change.frame is not None and (change.frame.direction, change.frame.number) == ("to_server", 2)
    fork = state.fork(change)
    assert fork.original == Trace.of(original)
    kinds = [(e.kind, e.method) for e in fork.forked]
    assert ("timeout", "tools/call") in kinds and ("notification", "notifications/cancelled") in kinds
    dropped = [e for e in fork.forked if "dropped" in e.marks]
    assert len(dropped) == 1 and dropped[0].request_id == 2
    diff = fork.diff
    assert not diff.is_empty
    ops = {e.op for e in diff.entries}
    assert {"same", "added", "removed"} <= ops
    assert "only in the second run" in diff.summary()
    page = fork._repr_html_()
    assert page.count("data:image/svg+xml;base64,") == 2 and "Step-by-step difference" in page
    assert "drop → tools/call #2" in fork.summary()


def test_fork_change_revision_shows_changed_content() -> None:
    state = PlayerState(run_echo(), runner=run_echo, options={"revision": "2025-11-25"})
    same = state.fork(Change.seed(0))
    assert same.diff.is_empty and "identical" in same.diff.summary()
    fork = state.fork(Change.revision("2025-06-18"))
    assert fork.diff.is_empty  # the messages do not mention the revision: same bytes on the wire
    assert {e.revision for e in fork.forked if e.message} == {"2025-06-18"}
    more = state.fork(Change.option("calls", 4))
    assert more.diff.counts()["added"] == 2


def test_fork_errors_are_clear() -> None:
    state = PlayerState(weather_trace())
    with pytest.raises(ForkUnsupported, match="no runner"):
        state.fork(Change.seed(1))
    state = PlayerState(weather_trace(), runner=lambda **kw: run_echo(**kw))
    with pytest.raises(ForkUnsupported, match="cannot apply"):
        state.fork(Change.option("colour", "blue"))
    with pytest.raises(ValueError, match=r"not an MCP message.*drop the next MCP message, event #2"):
        Change.drop(state.trace, state.trace[0])


def test_widget_binds_to_the_state() -> None:
    player = TracePlayer(run_echo(), runner=run_echo, options={"revision": "2025-11-25"})
    s = player.state
    player.step()
    assert s.index == 1 and player.slider.value == 1 and player.position.value == s.position()
    player.slider.value = 3
    assert s.index == 3 and "data-seq='4'" in player.highlight.value
    player.views.value = "stdio"
    assert "bytes" in player.detail.value
    player.method.value = "tools/call"
    assert all(e.method == "tools/call" for e in s.visible) and player.slider.max == len(s.visible) - 1
    player.last_button.click()
    assert s.at_end and player.forward_button.disabled
    player.change_kind.value = "drop"
    fork = player.fork_from_controls()
    assert fork is not None and "data:image/svg+xml" in player.fork_output.value
    assert "<svg style=\"max-width:100%;height:auto\"" in player.diagram.value  # inline, scaled to fit
    player.change_kind.value = "seed"
    player.change_value.value = "not a number"
    assert player.fork_from_controls() is None and "Cannot fork" in player.fork_output.value


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def test_display_carries_a_static_copy_of_where_the_player_stands() -> None:
    player = TracePlayer(run_echo())
    player.jump(2)
    bundle = player._repr_mimebundle_()
    assert bundle[WIDGET_VIEW]["model_id"] == player.widget.model_id
    static, text = bundle["text/html"], bundle["text/plain"]
    current = player.state.current
    assert current is not None and player.state.position() in text
    assert f"<tr data-seq='{current.seq}' aria-current='step'" in static
    assert static.count("aria-current") == 1 and static.count("<tr data-seq=") == len(player.state.visible)
    assert json.dumps(current.message["id"]) in static  # the current message's JSON, as the player shows it
    player.step()  # the copy follows the player: a later display shows the later step
    assert player._repr_mimebundle_()["text/html"] != static


def test_side_by_side_shows_both_players() -> None:
    left, right = TracePlayer(run_echo(calls=1)), TracePlayer(run_echo(calls=2))
    right.last_button.click()
    row = side_by_side(left, right)
    bundle = row._repr_mimebundle_()
    assert bundle[WIDGET_VIEW]["model_id"] == row.widget.model_id
    assert [c.model_id for c in row.widget.children] == [left.widget.model_id, right.widget.model_id]
    assert bundle["text/plain"].splitlines() == [left.to_text(), right.to_text()]
    assert left.static_html() in bundle["text/html"] and right.static_html() in bundle["text/html"]


def test_stepping_is_fast() -> None:
    player = TracePlayer(synthetic_trace_recorder(1000))
    start = time.perf_counter()
    for _ in range(50):
        player.step()
    per_step = (time.perf_counter() - start) / 50
    assert per_step < 0.050, f"{per_step * 1000:.1f} ms per step"


# --- every fork of a story shows an outcome ---------------------------------------------------------

STORIES = [("weather-mrtr", "2025-11-25"), ("weather-mrtr", "2026-07-28"), ("complete-call", "2025-11-25"),
           ("complete-call", "2026-07-28")]


@pytest.mark.parametrize(("scenario", "revision"), STORIES)
def test_every_fork_of_a_story_shows_an_outcome(scenario: str, revision: str) -> None:
    # Click "fork and re-run" at every step, as a learner would: a message step re-runs the world
    # with it dropped and shows the outcome beside the original (dropping the handshake ends in a
    # RequestTimeout nothing catches: shown, not raised); any other step says what to change instead.
    from functools import partial

    from mcp_sim.scenarios import run_scenario

    rerun = partial(run_scenario, scenario)
    options = {"revision": revision, "seed": 1}
    player = TracePlayer(rerun(**options), runner=rerun, options=options)
    outcomes: dict[str, int] = {}
    for i in range(len(player.state.visible)):
        player.jump(i)
        player.fork_output.value = ""
        player.fork_button.click()  # through the widget's own callback
        shown = player.fork_output.value
        assert player.problem.value == "", player.problem.value
        assert "Outcome:" in shown or "Nothing to drop here" in shown, (i, shown[:300])
        if "Nothing to drop here" in shown:
            assert "revision, transport or seed" in shown
            outcomes["advice"] = outcomes.get("advice", 0) + 1
        else:
            fork = player.state.last_fork
            assert fork is not None and fork.change.kind == "drop"
            assert html.escape(fork.outcome()) in shown and "Original run" in shown
            outcomes["stopped" if fork.error else "ran"] = outcomes.get("stopped" if fork.error else "ran", 0) + 1
    assert outcomes.get("ran", 0) > 0 and outcomes.get("advice", 0) > 0
    # Dropping the first message of the handshake ends the world early; the fork says so and keeps
    # what was recorded up to that moment.
    first = next(i for i, e in enumerate(player.state.visible) if e.kind == "request")
    player.jump(first)
    fork = player.fork_from_controls()
    assert fork is not None and fork.error is not None and "RequestTimeout" in fork.error
    assert len(fork.forked) > 0 and any(e.kind == "timeout" for e in fork.forked)
    assert "stopped early" in fork.outcome() and "role='alert'" in player.fork_output.value


def test_a_failing_control_is_shown_in_the_player_not_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    player = TracePlayer(run_echo(), runner=run_echo, options={"revision": "2025-11-25"})

    def broken() -> None:
        raise RuntimeError("the state broke")

    monkeypatch.setattr(player.state, "forward", broken)
    player.forward_button.click()  # raises nothing
    assert "the state broke" in player.problem.value and "role='alert'" in player.problem.value
    player.back_button.click()  # the next control that works clears the message
    assert player.problem.value == ""


def test_a_runner_that_cannot_start_is_an_outcome_too() -> None:
    def refuses(**options: Any) -> Recorder:
        raise KeyError(f"unknown revision {options.get('revision')!r}")

    player = TracePlayer(run_echo(), runner=refuses, options={"revision": "2025-11-25"})
    player.change_kind.value = "revision"
    player.change_value.value = "1999-01-01"
    fork = player.fork_from_controls()
    assert fork is not None and fork.error is not None and len(fork.forked) == 0
    assert "did not start" in fork.outcome() and "unknown revision" in player.fork_output.value


def test_player_rows_wrap_and_the_diagram_has_a_full_size_view() -> None:
    from mcp_sim.trace.embed import FULL_VIEW_CLASS

    player = TracePlayer(run_echo())
    rows = [c for c in player.widget.children if type(c).__name__ == "HBox"]
    assert rows and all(r.layout.flex_flow == "row wrap" for r in rows)
    assert FULL_VIEW_CLASS not in player.diagram_box._dom_classes
    player.full_size.value = True
    assert FULL_VIEW_CLASS in player.diagram_box._dom_classes and "max-width:100%;height:auto" not in \
        player.diagram.value
    player.full_size.value = False
    assert "max-width:100%;height:auto" in player.diagram.value
