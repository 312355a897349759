"""The legacy lifecycle as a state diagram, drawn from the table that drives the simulator
(course chapter 03).

Every arrow comes from :func:`mcp_sim.protocol.lifecycle.legacy_state_table`, and the "may send"
lines under each state from :data:`~mcp_sim.protocol.lifecycle.LEGACY_ALLOWED`: change the table and
the picture changes with it, so the diagram cannot disagree with the code (the idea comes from h11,
whose docs draw its state machine from its own table).
"""

from __future__ import annotations

from collections.abc import Iterator

import graphviz

from mcp_sim.protocol.lifecycle import LEGACY_ALLOWED, LegacyState, legacy_state_table
from mcp_sim.trace.graphviz_svg import GraphvizDiagram

FONT = "Helvetica"


def _allowed_words(state: str) -> str:
    try:
        allowed = LEGACY_ALLOWED[LegacyState(state)]
    except (ValueError, KeyError):
        return ""

    def words(names: frozenset[str]) -> str:
        if "*" in names:
            return "anything negotiated"
        return ", ".join(sorted(names)) or "nothing"

    return f"client may send: {words(allowed['client'])}\nserver may send: {words(allowed['server'])}"


class LifecycleDiagram(GraphvizDiagram):
    """The legacy (≤ 2025-11-25) connection lifecycle. ``current`` marks one state ("you are here"),
    with a double border and the words "current state", never colour alone."""

    def __init__(self, *, current: str | LegacyState | None = None, show_allowed: bool = True,
                 title: str = "Legacy MCP lifecycle (2024-11-05 … 2025-11-25)") -> None:
        self.current = current.value if isinstance(current, LegacyState) else current
        self.show_allowed = show_allowed
        self.title = title
        self.rows = legacy_state_table()

    def states(self) -> list[str]:
        """The states in the order the table first mentions them (``any`` is not a state)."""
        out: list[str] = []
        for a, _, b in self.rows:
            for s in (a, b):
                if s != "any" and s not in out:
                    out.append(s)
        return out

    def description(self) -> str:
        moves = "; ".join(f"from {a}, {ev} leads to {b}" for a, ev, b in self.rows)
        here = f" The current state is {self.current}." if self.current else ""
        return f"States: {', '.join(self.states())}. Transitions: {moves}.{here}"

    def graph(self, direction: str = "LR") -> graphviz.Digraph:
        """The ``graphviz.Digraph`` (DOT) of the lifecycle, laid out in ``direction`` (``LR`` or ``TB``)."""
        g = graphviz.Digraph("lifecycle")
        g.attr(rankdir=direction, fontname=FONT, fontsize="12", label=self.title, labelloc="t")
        g.attr("node", shape="box", style="rounded", fontname=FONT, fontsize="11")
        g.attr("edge", fontname=FONT, fontsize="10")
        g.node("__start", "", shape="point", width="0.15")
        for state in self.states():
            text = state + (" (current state)" if state == self.current else "")
            if self.show_allowed and _allowed_words(state):
                text += "\n" + _allowed_words(state)
            attrs = {"peripheries": "2", "style": "rounded,bold"} if state == self.current else {}
            g.node(state, text, **attrs)
        g.edge("__start", self.states()[0] if self.states() else "not started")
        for a, event, b in self.rows:
            if a == "any":
                g.node("__any", "any state", shape="box", style="dashed")
                g.edge("__any", b, label=event, style="dashed")
            else:
                g.edge(a, b, label=event)
        return g

    def dot_source(self) -> str:
        return self.graph().source

    def layouts(self) -> Iterator[str]:
        """Left to right reads best; top to bottom when that is too wide for the output."""
        yield self.graph("LR").source
        yield self.graph("TB").source

    def to_text(self) -> str:
        lines = [self.title]
        for a, event, b in self.rows:
            lines.append(f"  {a} --{event}--> {b}")
        for state in self.states():
            words = _allowed_words(state).replace("\n", "; ") if self.show_allowed else ""
            mark = "  ◀ current state" if state == self.current else ""
            if words or mark:
                lines.append(f"  [{state}] {words}{mark}")
        return "\n".join(lines)
