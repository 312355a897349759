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
from collections.abc import Callable
from typing import Any

from mcp_sim.trace.table import TraceTable
from mcp_sim.widgets.player_state import (
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

_scopes = itertools.count(1)
_ALL = "(all)"
"""The dropdown value meaning "no filter" (a ``None`` value would show as an empty box)."""


class TracePlayer:
    """An ipywidgets trace player bound to a :class:`PlayerState`. Display it as the last line of a
    cell (or ``display(player.widget)``)."""

    def __init__(self, trace: Any, *, runner: Runner | None = None, options: dict[str, Any] | None = None,
                 interval_ms: int = 700) -> None:
        import ipywidgets as w

        self.state = PlayerState(trace, runner=runner, options=options)
        self.scope = f"mcpsim-player-{next(_scopes)}"
        self._updating = False
        choices = self.state.choices()

        def dropdown(name: str, description: str) -> Any:
            return w.Dropdown(options=[("all", _ALL), *((c, c) for c in choices[name])], value=_ALL,
                              description=description, layout=w.Layout(width="260px"))

        self.link = dropdown("link", "link")
        self.layer = dropdown("layer", "layer")
        self.method = dropdown("method", "method")
        self.first_button = w.Button(description="⏮ first", tooltip="go to the first step")
        self.back_button = w.Button(description="◀ back", tooltip="one step back")
        self.forward_button = w.Button(description="forward ▶", tooltip="one step forward")
        self.last_button = w.Button(description="last ⏭", tooltip="go to the last step")
        n = max(0, len(self.state.visible) - 1)
        self.play = w.Play(value=0, min=0, max=n, step=1, interval=interval_ms, description="play")
        self.slider = w.IntSlider(value=0, min=0, max=n, description="step", continuous_update=True,
                                  readout=False, layout=w.Layout(width="420px"))
        w.jslink((self.play, "value"), (self.slider, "value"))
        self.position = w.Label()
        self.caption = w.HTML()
        self.views = w.ToggleButtons(options=[("JSON", "json"), ("stdio bytes", "stdio"), ("HTTP exchange", "http")],
                                     value="json", description="show as")
        self.detail = w.HTML()
        self.diagram = w.HTML()
        self.highlight = w.HTML()
        diagram_box = w.Box([self.highlight, self.diagram], layout=w.Layout(max_height="520px", overflow="auto"))
        diagram_box.add_class(self.scope)
        self.change_kind = w.Dropdown(options=[("drop this message", "drop"), ("change revision", "revision"),
                                               ("change transport", "transport"), ("change seed", "seed"),
                                               ("set option (name=JSON value)", "option")],
                                      value="drop", description="change")
        self.change_value = w.Text(placeholder="e.g. 2025-06-18, stdio, 7, or name=value",
                                   description="value")
        self.fork_button = w.Button(description="fork and re-run", disabled=runner is None,
                                    tooltip="re-run the world with one change and compare")
        self.fork_output = w.HTML()
        fork_box = w.VBox([w.HBox([self.change_kind, self.change_value, self.fork_button]), self.fork_output])
        self.fork_panel = w.Accordion(children=[fork_box])
        self.fork_panel.set_title(0, "Fork this moment")
        self.widget = w.VBox([
            w.HBox([self.link, self.layer, self.method]),
            w.HBox([self.first_button, self.back_button, self.play, self.forward_button, self.last_button]),
            w.HBox([self.slider, self.position]),
            self.caption, self.views, self.detail, diagram_box, self.fork_panel,
        ])
        for dd in (self.link, self.layer, self.method):
            dd.observe(self._on_filter, names="value")
        self.slider.observe(self._on_slider, names="value")
        self.views.observe(self._on_view, names="value")
        self.first_button.on_click(lambda _: self._go(self.state.first))
        self.back_button.on_click(lambda _: self._go(self.state.back))
        self.forward_button.on_click(lambda _: self._go(self.state.forward))
        self.last_button.on_click(lambda _: self._go(self.state.last))
        self.fork_button.on_click(lambda _: self.fork_from_controls())
        self._redraw_diagram()
        self._refresh()

    # -- actions (also callable from code) ---------------------------------------------------
    def step(self, delta: int = 1) -> None:
        self._go(lambda: self.state.step(delta))

    def jump(self, index: int) -> None:
        self._go(lambda: self.state.jump(index))

    def fork(self, change: Change) -> Fork:
        fork = self.state.fork(change)
        self.fork_output.value = fork._repr_html_()
        return fork

    def fork_from_controls(self) -> Fork | None:
        """Build the :class:`Change` the fork controls describe, re-run, and show the comparison."""
        kind, raw = self.change_kind.value, self.change_value.value.strip()
        try:
            if kind == "drop":
                change = self.state.change_drop_current()
            elif kind == "seed":
                change = Change.seed(int(raw))
            elif kind == "option":
                name, _, value = raw.partition("=")
                try:
                    parsed = json.loads(value)
                except ValueError:
                    parsed = value
                change = Change.option(name.strip(), parsed)
            else:
                change = Change(kind="option", name=kind, value=raw)
            return self.fork(change)
        except (ValueError, ForkUnsupported) as exc:
            self.fork_output.value = f"<p role='alert'>Cannot fork: {html.escape(str(exc))}</p>"
            return None

    # -- binding -----------------------------------------------------------------------------
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
        self.diagram.value = self.state.diagram().to_svg() if len(self.state.visible) else \
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
        self.caption.value = f"<p aria-live='polite'><b>{html.escape(s.caption)}</b></p>"
        self.detail.value = f"<pre style='white-space:pre-wrap;max-height:260px;overflow:auto'>" \
                            f"{html.escape(s.detail())}</pre>"
        self.highlight.value = s.highlight_css(self.scope)
        self.back_button.disabled = self.first_button.disabled = s.at_start
        self.forward_button.disabled = self.last_button.disabled = s.at_end

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
                f"<pre style='white-space:pre-wrap;max-height:260px;overflow:auto'>{html.escape(s.detail())}</pre>"
                f"<details><summary>All steps</summary>{rows}</details></div>")

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """The live widget for Jupyter, with a static copy and a line of text beside it for every
        viewer that cannot run widgets."""
        bundle = dict(self.widget._repr_mimebundle_())
        bundle["text/html"] = self.static_html()
        bundle["text/plain"] = self.to_text()
        return bundle


class SideBySide:
    """Several players in one row, so two traces can be stepped through next to each other."""

    def __init__(self, *players: TracePlayer) -> None:
        import ipywidgets as w

        self.players = players
        self.widget = w.HBox([p.widget for p in players])

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        bundle = dict(self.widget._repr_mimebundle_())
        bundle["text/html"] = ("<div style='display:flex;gap:1em'>"
                               + "".join(f"<div style='flex:1;min-width:0'>{p.static_html()}</div>"
                                         for p in self.players) + "</div>")
        bundle["text/plain"] = "\n".join(p.to_text() for p in self.players)
        return bundle


def play(trace: Any, **options: Any) -> TracePlayer:
    """``play(run_scenario("weather"))``: a player for a trace or a recorder."""
    return TracePlayer(trace, **options)


def side_by_side(*players: TracePlayer) -> SideBySide:
    """``side_by_side(play(legacy), play(modern))``: two (or more) players in one row."""
    return SideBySide(*players)
