"""A table of rows × revisions, for comparing what each revision defines (course chapter 03).

:func:`mcp_sim.protocol.revisions.comparison_table` fills one from the registry; this module only
draws it — as HTML in a notebook, as aligned text in a terminal. Every cell carries a word, so the
meaning never depends on colour.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field


@dataclass(frozen=True)
class ComparisonTable:
    """Rows × revisions, drawn from the registry; renders as HTML (notebooks) or text (terminals)."""

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, tuple[str, ...]], ...]
    notes: tuple[str, ...] = field(default=())

    def to_text(self) -> str:
        head = ("", *self.columns)
        body = [(name, *cells) for name, cells in self.rows]
        widths = [max(len(r[i]) for r in [head, *body]) for i in range(len(head))]
        line = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()  # noqa: E731
        out = [self.title, line(head), "  ".join("-" * w for w in widths)]
        out += [line(r) for r in body]
        out += list(self.notes)
        return "\n".join(out)

    def to_html(self) -> str:
        """Cells left-aligned (JupyterLab right-aligns HTML table cells unless told) and wrapping."""
        esc = html.escape
        cell = "text-align:left;vertical-align:top;overflow-wrap:anywhere"
        head = "".join(f"<th style='{cell}'>{esc(c)}</th>" for c in self.columns)
        rows = []
        for name, cells in self.rows:
            tds = "".join(f"<td style='{cell}'>{esc(c)}</td>" for c in cells)
            rows.append(f"<tr><th scope='row' style='{cell}'><code>{esc(name)}</code></th>{tds}</tr>")
        notes = "".join(f"<p style='text-align:left'>{esc(n)}</p>" for n in self.notes)
        return (f"<table class='mcp-sim-revisions' style='max-width:900px'><caption style='text-align:left'>"
                f"{esc(self.title)}</caption><thead><tr><th></th>{head}</tr></thead><tbody>{''.join(rows)}</tbody>"
                f"</table>{notes}")

    def _repr_html_(self) -> str:
        return self.to_html()

    def __str__(self) -> str:
        return self.to_text()
