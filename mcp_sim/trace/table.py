"""The accessible companion of every diagram: the same events as a table (text and HTML).

A sequence diagram is a picture; a screen reader, a terminal or a ``grep`` needs words. The table has
one row per event, in the diagram's order, with the same filter applied: ``seq``, virtual time,
``from → to``, the course layer the event belongs to (chapter 00's map), kind, method and request id,
and the caption. Build it from the same
:class:`~mcp_sim.trace.events.Trace` as the diagram and the two can never drift apart.

When the events crossed a real transport (stdio or Streamable HTTP), the table adds a ``transport``
column (course chapter 06): what the recorder saw on the wire for that row — the stdio stream and
its bytes, or the HTTP method, path, status, headers and SSE event id. A table of memory links has
nothing to show there, so it gets no such column.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from typing import Any

from mcp_sim.trace.event import TraceEvent
from mcp_sim.trace.events import Trace, format_ms
from mcp_sim.trace.reading import CELL, LONG_CELL, PRE, TABLE, breakable


def _stdio_line(e: TraceEvent, stdio: dict[str, Any]) -> str | None:
    """The exact line the pipe carried, newline included. The simulator records it; the real-wire
    bridge records only the byte count, and then the raw frame plus its ``\\n`` is that line."""
    line = stdio.get("line")
    if isinstance(line, str):
        return line
    return None if e.raw is None else e.raw + "\n"


def _part(first: str, part: dict[str, Any], known: tuple[str, ...], compact: bool) -> list[str]:
    """An HTTP request or response: its first line, then its headers and any field a transport
    recorded beyond the usual ones (the bridge's ``content_type``, say). ``compact`` puts it all on
    one line, headers separated by ``|``; otherwise one header per indented line."""
    headers = part.get("headers") or {}
    pairs = headers.items() if isinstance(headers, dict) else headers
    facts = [f"{name}: {value}" for name, value in pairs]
    facts += [f"({k}: {json.dumps(v, ensure_ascii=False, default=str)})" for k, v in part.items() if k not in known]
    if compact:
        return [" | ".join([first, *facts])]
    return [first, *(f"  {fact}" for fact in facts)]


def transport_summary(e: TraceEvent) -> str:
    """One short line for the table's ``transport`` cell: ``stdin, 183 bytes`` or
    ``POST /mcp → 200, SSE id 1-2``; empty when the event carries no transport detail."""
    framing = e.framing or {}
    stdio = framing.get("stdio")
    if isinstance(stdio, dict):
        line = _stdio_line(e, stdio)
        size = len(line.encode()) if line is not None else stdio.get("bytes")
        stream = stdio.get("stream") or "stdio"
        return f"{stream}, {size} bytes" if size is not None else str(stream)
    http = framing.get("http")
    if not isinstance(http, dict):
        return ""
    parts = []
    request, response = http.get("request"), http.get("response")
    if isinstance(request, dict):
        parts.append(f"{request.get('method', '?')} {request.get('path') or request.get('url') or ''}".rstrip())
    if isinstance(response, dict) and "status" in response:
        parts.append(f"{response['status']}")
    text = " → ".join(parts)
    sse = framing.get("sse") or http.get("sse")
    if isinstance(sse, dict):
        text += f", SSE id {sse['id']}" if "id" in sse else ", SSE event"
    return text


def transport_detail(e: TraceEvent, *, compact: bool = False) -> list[str]:
    """Everything the recorder kept about how the event travelled: the stdio line as bytes (its
    final ``\\n`` visible, as Python writes ``bytes``), or the HTTP request line and headers, the
    status line and headers, and the SSE event's fields. One header per line, or with ``compact``
    one line per part (request, response, SSE event)."""
    framing = e.framing or {}
    stdio = framing.get("stdio")
    if isinstance(stdio, dict):
        line = _stdio_line(e, stdio)
        if line is None:
            return [transport_summary(e)]
        return [f"{transport_summary(e)}: {line.encode('utf-8')!r}"]
    http = framing.get("http")
    if not isinstance(http, dict):
        return []
    out: list[str] = []
    request, response = http.get("request"), http.get("response")
    if isinstance(request, dict):
        where = request.get("path") or request.get("url") or ""
        out += _part(f"request: {request.get('method', '?')} {where}".rstrip(), request,
                     ("method", "path", "url", "headers", "body"), compact)
    if isinstance(response, dict):
        status = f"{response.get('status', '?')} {response.get('reason', '')}".rstrip()
        out += _part(f"response: {status}", response, ("status", "reason", "headers", "body"), compact)
    sse = framing.get("sse") or http.get("sse")
    if isinstance(sse, dict):
        out.append("SSE event: " + ", ".join(f"{k} {v}" for k, v in sse.items()))
    return out


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
    transport: str = ""
    """The short transport cell (:func:`transport_summary`); empty for memory links and app talk."""
    wire: tuple[str, ...] = ()
    """The full transport detail, one header per line (:func:`transport_detail`), for HTML."""
    wire_text: tuple[str, ...] = ()
    """The same detail, one line per request, response or SSE event, for the text view."""

    @classmethod
    def of(cls, e: TraceEvent) -> TableRow:
        kind = e.kind + (f" [{', '.join(e.marks)}]" if e.marks else "")
        what = e.method or ""
        if e.request_id is not None:
            what = f"{what} #{e.request_id}".strip()
        if e.kind == "error":
            what = f"{what} ({((e.message or {}).get('error') or {}).get('code')})".strip()
        return cls(e.seq, format_ms(e.t_ms), f"{e.sender} → {e.receiver}", e.layer, kind, what, e.caption,
                   transport_summary(e), tuple(transport_detail(e)), tuple(transport_detail(e, compact=True)))

    def cells(self, *, transport: bool = False) -> tuple[str, ...]:
        """The row's cells in column order; ``transport`` adds the short transport cell before the
        caption (the caption stays last, so the text view never cuts it)."""
        extra = (self.transport,) if transport else ()
        return (str(self.seq), self.time, self.route, self.layer, self.kind, self.what, *extra, self.caption)


COLUMNS = ("seq", "time", "from → to", "layer", "kind", "method / id", "caption")
TRANSPORT_COLUMNS = (*COLUMNS[:-1], "transport", COLUMNS[-1])
"""The columns when some row crossed stdio or HTTP."""


def transport_cell_html(row: TableRow) -> str:
    """The transport cell in HTML: the short form, unfolding to every recorded detail."""
    esc = html.escape
    if not row.wire:
        return esc(row.transport)
    return (f"<details><summary>{esc(row.transport)}</summary>"
            f"<pre style='{PRE}'>{esc(chr(10).join(row.wire))}</pre></details>")


class TraceTable:
    """A trace as a table: ``str(table)`` for terminals, HTML in notebooks."""

    def __init__(self, trace: Any, *, title: str | None = None) -> None:
        self.trace = Trace.of(trace)
        self.title = title or self.trace.title or "Trace"
        self.rows = [TableRow.of(e) for e in self.trace]
        self.shows_transport = any(r.transport for r in self.rows)
        """Whether any row crossed stdio or HTTP (and so the table has a ``transport`` column)."""

    @property
    def columns(self) -> tuple[str, ...]:
        return TRANSPORT_COLUMNS if self.shows_transport else COLUMNS

    @property
    def seqs(self) -> list[int]:
        return [r.seq for r in self.rows]

    def to_text(self) -> str:
        """Fixed-width columns; the caption, last, is never cut. A row that crossed stdio or HTTP
        is followed by its full transport detail, indented: the stdio bytes, or one line each for
        the HTTP request, the response and the SSE event."""
        columns = self.columns
        body = [r.cells(transport=self.shows_transport) for r in self.rows]
        widths = [max([len(columns[i]), *(len(c[i]) for c in body)]) for i in range(len(columns) - 1)]

        def line(cells: tuple[str, ...]) -> str:
            head = "  ".join(c.ljust(w) for c, w in zip(cells[:-1], widths, strict=True))
            return f"{head}  {cells[-1]}".rstrip()

        lines = [line(columns), line(tuple("-" * w for w in [*widths, len(columns[-1])]))]
        for row, cells in zip(self.rows, body, strict=True):
            lines.append(line(cells))
            lines += [f"      {fact}" for fact in row.wire_text]
        return "\n".join(lines)

    def to_html(self) -> str:
        """The table for notebooks, made to fit a 900-pixel output area: every cell left-aligned,
        method names wrapping at their slashes, and the caption and transport cells (which may hold a URL or
        a raw frame) allowed to break anywhere, so no column pushes the table off screen."""
        esc = html.escape
        head = "".join(f"<th scope='col' style='{CELL}'>{esc(c)}</th>" for c in self.columns)
        rows = []
        for r in self.rows:
            transport = f"<td style='{LONG_CELL}'>{transport_cell_html(r)}</td>" if self.shows_transport else ""
            rows.append(f"<tr data-seq='{r.seq}'><th scope='row' style='{CELL}'>{r.seq}</th>"
                        f"<td style='{CELL};white-space:nowrap'>{esc(r.time)}</td>"
                        f"<td style='{CELL}'>{esc(r.route)}</td><td style='{CELL}'>{esc(r.layer)}</td>"
                        f"<td style='{CELL}'>{esc(r.kind)}</td><td style='{CELL}'>{breakable(r.what)}</td>"
                        f"{transport}<td style='{LONG_CELL}'>{esc(r.caption)}</td></tr>")
        return (f"<table class='mcp-sim-trace-table' style='{TABLE}'><caption style='text-align:left'>"
                f"{esc(self.title)}: {len(self.rows)} events</caption><thead><tr>{head}</tr></thead>"
                f"<tbody>{''.join(rows)}</tbody></table>")

    def _repr_html_(self) -> str:
        return self.to_html()

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        """HTML for notebooks and its plain-text twin (:meth:`to_text`) for every other viewer."""
        return {"text/plain": self.to_text(), "text/html": self.to_html()}

    def __str__(self) -> str:
        return self.to_text()

    def __repr__(self) -> str:
        return self.to_text()
