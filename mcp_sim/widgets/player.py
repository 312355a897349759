"""The trace player: time is a control the learner holds (course chapters 01 onward).

Like RaftScope and *The Secret Lives of Data*, the player lets you pause a conversation, step through
it message by message, jump anywhere, filter it down to one link, one layer or one method, and look
at the current message three ways: as JSON, as the bytes a stdio pipe carried, or as the HTTP
exchange that carried it. Then **fork** it: pick a moment, change one thing — drop that message,
change the revision, the transport, the seed or a scenario option — and run the world again to see
the two stories side by side with their difference.

All the logic lives in :class:`PlayerState`, a plain Python object that tests drive directly; the
:class:`TracePlayer` widget only binds ipywidgets controls to it.
"""

from __future__ import annotations

import html
import itertools
import json
import logging
from collections.abc import Callable
from typing import Any

from mcp_sim.trace.embed import FULL_VIEW_CLASS
from mcp_sim.trace.player_state import (
    FILTERS,
    VIEWS,
    Change,
    Fork,
    ForkUnsupported,
    FrameRef,
    PlayerState,
    Runner,
    http_text,
    json_text,
    stdio_text,
)
from mcp_sim.trace.table import TraceTable

__all__ = [
    "FILTERS",
    "VIEWS",
    "Change",
    "Fork",
    "ForkUnsupported",
    "FrameRef",
    "PlayerState",
    "Runner",
    "SideBySide",
    "TracePlayer",
    "http_text",
    "json_text",
    "play",
    "side_by_side",
    "stdio_text",
]


# --- the widget ------------------------------------------------------------------------------------

logger = logging.getLogger(__name__)

_scopes = itertools.count(1)
_ALL = "(all)"
"""The dropdown value meaning "no filter" (a ``None`` value would show as an empty box)."""
_PRE_STYLE = "white-space:pre-wrap;overflow-wrap:anywhere;max-height:260px;overflow-y:auto;margin:0"
"""A message's text wraps, even a long token like a sealed ``requestState``: it never widens the player."""


class TracePlayer:
    """An ipywidgets trace player bound to a :class:`PlayerState`. Display it as the last line of a
    cell (or ``display(player.widget)``).

    It fits the width it is given: its rows of controls wrap instead of clipping, and the diagram is
    scaled to the player's width, every lifeline in view, with a "full size" toggle beside it. No
    callback lets an exception escape into JupyterLab's hidden log: what goes wrong is shown in the
    player (:attr:`problem`, or the fork's outcome)."""

    def __init__(self, trace: Any, *, runner: Runner | None = None, options: dict[str, Any] | None = None,
                 interval_ms: int = 700) -> None:
        import ipywidgets as w

        self.state = PlayerState(trace, runner=runner, options=options)
        self.scope = f"mcpsim-player-{next(_scopes)}"
        self._updating = False
        choices = self.state.choices()

        def row(*children: Any) -> Any:
            """A row of controls that wraps onto the next line rather than clipping."""
            return w.HBox(list(children), layout=w.Layout(flex_flow="row wrap", align_items="center",
                                                          max_width="100%"))

        def dropdown(name: str, description: str) -> Any:
            return w.Dropdown(options=[("all", _ALL), *((c, c) for c in choices[name])], value=_ALL,
                              description=description, layout=w.Layout(width="260px", max_width="100%"))

        self.link = dropdown("link", "link")
        self.layer = dropdown("layer", "layer")
        self.method = dropdown("method", "method")
        narrow = w.Layout(width="auto", min_width="7.5em")  # the button's words set its width
        self.first_button = w.Button(description="⏮ first", tooltip="go to the first step", layout=narrow)
        self.back_button = w.Button(description="◀ back", tooltip="one step back", layout=narrow)
        self.forward_button = w.Button(description="forward ▶", tooltip="one step forward", layout=narrow)
        self.last_button = w.Button(description="last ⏭", tooltip="go to the last step", layout=narrow)
        n = max(0, len(self.state.visible) - 1)
        self.play = w.Play(value=0, min=0, max=n, step=1, interval=interval_ms, description="play")
        self.slider = w.IntSlider(value=0, min=0, max=n, description="step", continuous_update=True,
                                  readout=False, layout=w.Layout(width="420px", max_width="100%"))
        w.jslink((self.play, "value"), (self.slider, "value"))
        self.position = w.Label()
        self.caption = w.HTML(layout=w.Layout(max_width="100%"))
        self.views = w.ToggleButtons(options=[("JSON", "json"), ("stdio bytes", "stdio"), ("HTTP exchange", "http")],
                                     value="json", description="show as",
                                     style={"button_width": "auto"})
        self.detail = w.HTML(layout=w.Layout(max_width="100%"))
        self.diagram = w.HTML(layout=w.Layout(max_width="100%"))
        self.highlight = w.HTML()
        self.full_size = w.ToggleButton(value=False, description="full size", icon="arrows-alt",
                                        tooltip="show the diagram at its natural size, scrolling sideways",
                                        layout=w.Layout(width="auto"))
        self.diagram_box = w.Box([self.highlight, self.diagram],
                                 layout=w.Layout(max_height="520px", overflow="auto", max_width="100%"))
        self.diagram_box.add_class(self.scope)
        self.change_kind = w.Dropdown(options=[("drop this message", "drop"), ("change revision", "revision"),
                                               ("change transport", "transport"), ("change seed", "seed"),
                                               ("set option (name=JSON value)", "option")],
                                      value="drop", description="change",
                                      layout=w.Layout(width="300px", max_width="100%"))
        self.change_value = w.Text(placeholder="e.g. 2025-06-18, stdio, 7, or name=value",
                                   description="value", layout=w.Layout(width="300px", max_width="100%"))
        self.fork_button = w.Button(description="fork and re-run", disabled=runner is None,
                                    tooltip="re-run the world with one change and compare",
                                    layout=w.Layout(width="auto"))
        self.fork_hint = w.HTML(layout=w.Layout(max_width="100%"))
        self.fork_output = w.HTML(layout=w.Layout(max_width="100%"))
        fork_box = w.VBox([row(self.change_kind, self.change_value, self.fork_button), self.fork_hint,
                           self.fork_output], layout=w.Layout(max_width="100%"))
        self.fork_panel = w.Accordion(children=[fork_box], layout=w.Layout(max_width="100%"))
        self.fork_panel.set_title(0, "Fork this moment")
        self.problem = w.HTML()
        """Where a control that failed says so (empty while all is well)."""
        self.widget = w.VBox([
            row(self.link, self.layer, self.method),
            row(self.first_button, self.back_button, self.play, self.forward_button, self.last_button),
            row(self.slider, self.position),
            self.caption, self.views, self.detail, row(self.full_size), self.diagram_box, self.fork_panel,
            self.problem,
        ], layout=w.Layout(max_width="100%", flex="1 1 600px", min_width="0"))
        self.widget.add_class("mcp-sim-player")
        for dd in (self.link, self.layer, self.method):
            dd.observe(self._guarded(self._on_filter), names="value")
        self.slider.observe(self._guarded(self._on_slider), names="value")
        self.views.observe(self._guarded(self._on_view), names="value")
        self.change_kind.observe(self._guarded(lambda _: self._refresh()), names="value")
        self.full_size.observe(self._guarded(lambda _: self._redraw_diagram()), names="value")
        self.first_button.on_click(self._guarded(lambda _: self._go(self.state.first)))
        self.back_button.on_click(self._guarded(lambda _: self._go(self.state.back)))
        self.forward_button.on_click(self._guarded(lambda _: self._go(self.state.forward)))
        self.last_button.on_click(self._guarded(lambda _: self._go(self.state.last)))
        self.fork_button.on_click(self._guarded(lambda _: self.fork_from_controls()))
        self._redraw_diagram()
        self._refresh()

    # -- actions (also callable from code) ---------------------------------------------------
    def step(self, delta: int = 1) -> None:
        self._go(lambda: self.state.step(delta))

    def jump(self, index: int) -> None:
        self._go(lambda: self.state.jump(index))

    def fork(self, change: Change) -> Fork:
        """Re-run with ``change`` and show the outcome beside the original (an error the re-run ended
        in is part of that outcome, not raised)."""
        fork = self.state.fork(change)
        self.fork_output.value = fork._repr_html_()
        return fork

    def fork_from_controls(self) -> Fork | None:
        """Build the :class:`Change` the fork controls describe, re-run, and show the comparison.
        When the change cannot be made here, say why and what can be changed instead."""
        kind, raw = self.change_kind.value, self.change_value.value.strip()
        try:
            if kind == "drop":
                advice = self.state.drop_advice()
                if advice is not None:
                    self.fork_output.value = f"<p role='status'><b>Nothing to drop here.</b> {html.escape(advice)}</p>"
                    return None
                change = self.state.change_drop_current()
            elif kind == "seed":
                change = Change.seed(int(raw))
            elif kind == "option":
                name, _, value = raw.partition("=")
                if not name.strip():
                    raise ValueError("write the option as name=value, e.g. calls=2")
                try:
                    parsed = json.loads(value)
                except ValueError:
                    parsed = value
                change = Change.option(name.strip(), parsed)
            else:
                if not raw:
                    raise ValueError(f"type the new {kind} in the value box first")
                change = Change(kind="option", name=kind, value=raw)
            return self.fork(change)
        except (ValueError, ForkUnsupported) as exc:
            self.fork_output.value = f"<p role='alert'><b>Cannot fork:</b> {html.escape(str(exc))}</p>"
            return None

    # -- binding -----------------------------------------------------------------------------
    def _guarded(self, callback: Callable[[Any], Any]) -> Callable[[Any], None]:
        """``callback`` for a control: anything it raises is shown in the player and logged, never
        left to escape into the front end's log where nobody looks."""
        def run(arg: Any) -> None:
            try:
                self.problem.value = ""
                callback(arg)
            except Exception as exc:
                logger.exception("trace player control failed")
                self.problem.value = (f"<p role='alert'><b>That did not work:</b> "
                                      f"{html.escape(type(exc).__name__)}: {html.escape(str(exc))}</p>")
        return run

    def _go(self, move: Callable[[], Any]) -> None:
        move()
        self._refresh()

    def _on_slider(self, change: dict[str, Any]) -> None:
        if not self._updating:
            self.state.jump(change["new"])
            self._refresh()

    def _on_view(self, change: dict[str, Any]) -> None:
        self.state.view = change["new"]
        self._refresh()

    def _on_filter(self, _change: dict[str, Any]) -> None:
        def chosen(value: str) -> str | None:
            return None if value == _ALL else value

        self.state.set_filter(link=chosen(self.link.value), layer=chosen(self.layer.value),
                              method=chosen(self.method.value))
        self._redraw_diagram()
        self._refresh()

    def _redraw_diagram(self) -> None:
        n = max(0, len(self.state.visible) - 1)
        self._updating = True
        try:
            self.play.max = n
            self.slider.max = n
        finally:
            self._updating = False
        full = bool(self.full_size.value)
        if full:
            self.diagram_box.add_class(FULL_VIEW_CLASS)
        else:
            self.diagram_box.remove_class(FULL_VIEW_CLASS)
        self.diagram.value = self.state.diagram().inline_html(fit=not full) if len(self.state.visible) else \
            "<p>No events match the filters.</p>"

    def _refresh(self) -> None:
        s = self.state
        self._updating = True
        try:
            self.slider.value = s.index
            self.play.value = s.index
        finally:
            self._updating = False
        self.position.value = s.position()
        self.caption.value = f"<p aria-live='polite' style='overflow-wrap:anywhere;margin:0'><b>{html.escape(s.caption)}</b></p>"
        self.detail.value = f"<pre style='{_PRE_STYLE}'>{html.escape(s.detail())}</pre>"
        self.highlight.value = s.highlight_css(self.scope)
        self.back_button.disabled = self.first_button.disabled = s.at_start
        self.forward_button.disabled = self.last_button.disabled = s.at_end
        advice = s.drop_advice() if self.change_kind.value == "drop" else None
        self.fork_hint.value = "" if advice is None else f"<p><i>{html.escape(advice)}</i></p>"

    # -- display -----------------------------------------------------------------------------
    def to_text(self) -> str:
        """Where the player stands, in words: what a terminal or a text-only viewer shows."""
        return f"Trace player, {self.state.position()}: {self.state.caption}"

    def static_html(self) -> str:
        """The player as it stands, without controls: the copy a page that cannot run widgets shows
        (GitHub, ``jupyter nbconvert --to html``, a notebook opened without its widget state)."""
        s = self.state
        rows = TraceTable(s.visible, title="All steps").to_html()
        current = s.current
        if current is not None:  # mark the current step's row, in words as well as in weight
            mark = f"<tr data-seq='{current.seq}'>"
            rows = rows.replace(mark, f"<tr data-seq='{current.seq}' aria-current='step' "
                                      "style='font-weight:bold'>", 1)
        return (f"<div class='mcp-sim-player-static'><p><b>Trace player</b> (a static copy: run the cell "
                f"to step through it) — {html.escape(s.position())}</p>"
                f"<p><b>{html.escape(s.caption)}</b></p>"
                f"<pre style='{_PRE_STYLE}'>{html.escape(s.detail())}</pre>"
                f"<details><summary>All steps</summary>{rows}</details></div>")

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """The live widget for Jupyter, with a static copy and a line of text beside it for every
        viewer that cannot run widgets."""
        bundle = dict(self.widget._repr_mimebundle_())
        bundle["text/html"] = self.static_html()
        bundle["text/plain"] = self.to_text()
        return bundle


class SideBySide:
    """Several players in one row, so two traces can be stepped through next to each other — where
    there is room: below about 1,200 pixels (a notebook's usual 900) each player takes the full width,
    one under the other, so neither is squeezed into clipped controls and a thumbnail diagram."""

    def __init__(self, *players: TracePlayer) -> None:
        import ipywidgets as w

        self.players = players
        self.widget = w.HBox([p.widget for p in players],
                             layout=w.Layout(flex_flow="row wrap", align_items="flex-start", max_width="100%"))

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        bundle = dict(self.widget._repr_mimebundle_())
        bundle["text/html"] = ("<div style='display:flex;flex-wrap:wrap;gap:1em'>"
                               + "".join(f"<div style='flex:1 1 600px;min-width:0'>{p.static_html()}</div>"
                                         for p in self.players) + "</div>")
        bundle["text/plain"] = "\n".join(p.to_text() for p in self.players)
        return bundle


def play(trace: Any, **options: Any) -> TracePlayer:
    """``play(run_scenario("weather"))``: a player for a trace or a recorder."""
    return TracePlayer(trace, **options)


def side_by_side(*players: TracePlayer) -> SideBySide:
    """``side_by_side(play(legacy), play(modern))``: two (or more) players in one row."""
    return SideBySide(*players)
