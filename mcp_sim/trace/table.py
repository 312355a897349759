"""The accessible companion of every diagram: the same events as a table (text and HTML).

A sequence diagram is a picture; a screen reader, a terminal or a ``grep`` needs words. The table has
one row per event, in the diagram's order, with the same filter applied: ``seq``, virtual time,
``from → to``, the course layer the event belongs to (chapter 00's map), kind, method and request id,
and the caption. Build it from the same
:class:`~mcp_sim.trace.events.Trace` as the diagram and the two can never drift apart.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

from mcp_sim.trace.event import TraceEvent
from mcp_sim.trace.events import Trace, format_ms


@dataclass(frozen=True)
class TableRow:
    """One row of a trace table; every cell is text."""

    seq: int
    time: str
    route: str
    layer: str
    """The layer the recorder filed the event under at the transport boundary; the table shows it
    rather than working it out again, so table, filters and diagrams can never disagree."""
    kind: str
    what: str
    caption: str

    @classmethod
    def of(cls, e: TraceEvent) -> TableRow:
        kind = e.kind + (f" [{', '.join(e.marks)}]" if e.marks else "")
        what = e.method or ""
        if e.request_id is not None:
            what = f"{what} #{e.request_id}".strip()
        if e.kind == "error":
            what = f"{what} ({((e.message or {}).get('error') or {}).get('code')})".strip()
        return cls(e.seq, format_ms(e.t_ms), f"{e.sender} → {e.receiver}", e.layer, kind, what, e.caption)

    def cells(self) -> tuple[str, ...]:
        return (str(self.seq), self.time, self.route, self.layer, self.kind, self.what, self.caption)


COLUMNS = ("seq", "time", "from → to", "layer", "kind", "method / id", "caption")


class TraceTable:
    """A trace as a table: ``str(table)`` for terminals, HTML in notebooks."""

    def __init__(self, trace: Any, *, title: str | None = None) -> None:
        self.trace = Trace.of(trace)
        self.title = title or self.trace.title or "Trace"
        self.rows = [TableRow.of(e) for e in self.trace]

    @property
    def seqs(self) -> list[int]:
        return [r.seq for r in self.rows]

    def to_text(self) -> str:
        """Fixed-width columns; the caption, last, is never cut."""
        body = [r.cells() for r in self.rows]
        widths = [max([len(COLUMNS[i]), *(len(c[i]) for c in body)]) for i in range(len(COLUMNS) - 1)]

        def line(cells: tuple[str, ...]) -> str:
            head = "  ".join(c.ljust(w) for c, w in zip(cells[:-1], widths, strict=True))
            return f"{head}  {cells[-1]}".rstrip()

        return "\n".join([line(COLUMNS), line(tuple("-" * w for w in [*widths, len(COLUMNS[-1])])),
                          *(line(c) for c in body)])

    def to_html(self) -> str:
        esc = html.escape
        head = "".join(f"<th scope='col'>{esc(c)}</th>" for c in COLUMNS)
        rows = []
        for r in self.rows:
            cells = r.cells()
            rows.append(f"<tr data-seq='{r.seq}'><th scope='row'>{esc(cells[0])}</th>"
                        + "".join(f"<td>{esc(c)}</td>" for c in cells[1:]) + "</tr>")
        return (f"<table class='mcp-sim-trace-table'><caption>{esc(self.title)}: {len(self.rows)} events"
                f"</caption><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>")

    def _repr_html_(self) -> str:
        return self.to_html()

    def __str__(self) -> str:
        return self.to_text()

    def __repr__(self) -> str:
        return self.to_text()
