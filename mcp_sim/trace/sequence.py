"""The sequence diagram of a trace, drawn as SVG by plain Python (course chapters 00 onward).

Lifelines run top to bottom, left to right: the user, the host, the model, the clients, the servers.
Each event is one row, in order, so row *n* of the diagram is row *n* of the text table
(:class:`~mcp_sim.trace.table.TraceTable`). Four kinds of arrow differ in line style **and** in their
label, never in colour alone:

===============  ============  ==================  =====================
kind             line          arrowhead           label
===============  ============  ==================  =====================
request          solid         filled triangle     ``→ tools/call #3``
response         dashed        open                ``← result #3``
notification     dotted        open                ``⇢ notifications/…``
error            dash-dot      cross               ``✖ error -32601 #3``
===============  ============  ==================  =====================

The lane on the left is virtual time: each row shows when the event happened, and events about time
itself — timeouts, progress, cancellation, dropped, late or duplicated messages — get a word there
too. A dropped message's arrow stops short of its receiver with a cross.

The diagram is drawn to fit a notebook's output (:data:`FIT_WIDTH`): with many lifelines the columns
narrow, down to :data:`MIN_COL_W`; a diagram still wider than that is scaled to the output by its
HTML form, with the full-size picture one click away (:func:`~mcp_sim.trace.embed.svg_img`).

The output is deterministic: the same trace always gives the same bytes (no random ids, no clock),
which keeps committed notebooks stable. Graphviz is not used here: it lays out graphs, and a sequence
diagram is a table with arrows, which twenty lines of arithmetic draw faster and better.
"""

from __future__ import annotations

import hashlib
import html
import re
from typing import Any

from mcp_sim.trace.captions import label
from mcp_sim.trace.embed import FIT_STYLE, svg_img
from mcp_sim.trace.event import TraceEvent
from mcp_sim.trace.events import Trace, format_ms, lifelines
from mcp_sim.trace.table import TraceTable

LANE_TIME_W = 84
LANE_BADGE_W = 96
LANE_W = LANE_TIME_W + LANE_BADGE_W
COL_W = 196
"""The widest a lifeline's column gets (three or four lifelines)."""
MIN_COL_W = 120
"""The narrowest: an arrow between neighbours still has room for ``→ tools/call #12``."""
FIT_WIDTH = 880
"""The width a diagram aims for: a notebook's output area at a 1280-pixel-wide window is about 900."""
TOP = 58
HEAD_H = 30
ROW_H = 30
CHAR_W = 6.6
"""Average width of a 12 px sans-serif character, for truncating labels to the space they have."""

FONT = "DejaVu Sans, Verdana, Arial, Helvetica, sans-serif"

STYLES: dict[str, dict[str, Any]] = {
    "request": {"stroke": "#1f4e79", "width": 1.6, "dash": None, "head": "filled", "words": "solid"},
    "response": {"stroke": "#2e6b30", "width": 1.4, "dash": "7 4", "head": "open", "words": "dashed"},
    "notification": {"stroke": "#5b2a86", "width": 1.6, "dash": "2 3", "head": "open", "words": "dotted"},
    "error": {"stroke": "#a31515", "width": 2.2, "dash": "9 3 2 3", "head": "cross", "words": "dash-dot"},
    "invalid": {"stroke": "#8a4100", "width": 2.0, "dash": "2 3", "head": "cross", "words": "dotted"},
    "batch": {"stroke": "#1f4e79", "width": 3.0, "dash": None, "head": "filled", "words": "thick"},
    "app": {"stroke": "#444444", "width": 1.0, "dash": None, "head": "open", "words": "thin"},
}
"""Line style per kind. The colours are a second cue only; the dash pattern and the label carry it."""

NOTE_KINDS = ("log", "transport", "timeout")

_BADGES: tuple[tuple[str, str], ...] = (
    ("timeout", "◷ timeout"), ("dropped", "✂ dropped"), ("late", "◶ late"), ("duplicate", "⇉ duplicate"),
    ("attack", "⚠ attack"), ("replayed", "↺ replayed"), ("blocked", "⊗ blocked"),
)

_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def xml_text(text: Any) -> str:
    """Text made safe for SVG/HTML: escaped, and characters XML cannot hold replaced (frames from a
    malicious server may contain anything)."""
    return html.escape(_XML_BAD.sub("\ufffd", str(text)), quote=True)


def time_badges(event: TraceEvent) -> list[str]:
    """The words shown on the time lane for events about time and delivery."""
    out = [word for mark, word in _BADGES if mark in event.marks or (mark == "timeout" and event.kind == "timeout")]
    if event.method == "notifications/progress" and event.kind == "notification":
        out.append("◔ progress")
    elif event.method == "notifications/cancelled" and event.kind == "notification":
        out.append("⊘ cancel")
    if event.kind == "transport":
        out.append("⇄ OAuth HTTP" if OAUTH in event.marks else "↯ transport")
    return out


OAUTH = "oauth"
"""The mark :mod:`mcp_sim.security.oauth_web` puts on OAuth's plain-HTTP exchanges."""


def oauth_label(event: TraceEvent) -> str:
    """The arrow text of an OAuth exchange (course chapter 11): ``→ GET /authorize`` for the request
    (the path without its query — the receiver's lifeline names the host), ``← 302 Found`` for the
    answer. The full request, headers and body are in the table and the player's HTTP view."""
    http = (event.framing or {}).get("http") or {}
    request, response = http.get("request") or {}, http.get("response")
    if isinstance(response, dict):
        return f"← {response.get('status', '')} {response.get('reason', '')}".rstrip()
    return f"→ {request.get('method', '')} {str(request.get('path', '')).partition('?')[0]}"


def _lifeline_name(name: str, x: float, top: float, width_px: float) -> str:
    """A lifeline's name in its head box: on one line if it fits, else ``client/`` above
    ``issue-tracker`` in a smaller font, so a narrow column still names its party in full."""
    if len(name) * CHAR_W <= width_px or "/" not in name:
        return (f'<text x="{_num(x)}" y="{top + 18}" text-anchor="middle" font-weight="bold">'
                f'{xml_text(_fit(name, width_px))}</text>')
    role, _, rest = name.partition("/")
    small = width_px * 12 / 10.5  # the same room holds more characters at 10.5 px
    return (f'<text x="{_num(x)}" y="{top + 11}" text-anchor="middle" font-weight="bold" font-size="10.5">'
            f'<tspan x="{_num(x)}">{xml_text(role)}/</tspan>'
            f'<tspan x="{_num(x)}" dy="11">{xml_text(_fit(rest, small))}</tspan></text>')


def _fit(text: str, width_px: float) -> str:
    limit = max(12, int(width_px / CHAR_W))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _num(x: float) -> str:
    return f"{x:.1f}".rstrip("0").rstrip(".")


class SequenceDiagram:
    """An SVG sequence diagram of a trace; displays itself inline in Jupyter.

    ``highlight`` is the ``seq`` of the step to mark (the trace player's current step). The rows are
    exactly ``trace`` in order: filter the trace first to draw part of it."""

    def __init__(self, trace: Any, *, highlight: int | None = None, title: str | None = None) -> None:
        self.trace = Trace.of(trace)
        self.highlight = highlight
        self.title = title or self.trace.title or "Sequence diagram"
        self.participants = lifelines(self.trace)
        room = (FIT_WIDTH - LANE_W - 10) / max(1, len(self.participants))
        self.col_w = int(min(COL_W, max(MIN_COL_W, room)))
        """This diagram's column width: as wide as :data:`COL_W`, as narrow as fitting needs."""
        self._svg: str | None = None

    @property
    def seqs(self) -> list[int]:
        """The ``seq`` of every row, top to bottom (the table lists the same, in the same order)."""
        return [e.seq for e in self.trace]

    def table(self) -> TraceTable:
        """The accessible companion: the same events as a text/HTML table."""
        return TraceTable(self.trace)

    def with_highlight(self, seq: int | None) -> SequenceDiagram:
        return SequenceDiagram(self.trace, highlight=seq, title=self.title)

    # -- geometry ----------------------------------------------------------------------------
    def _x(self, participant: str) -> float:
        return LANE_W + self.col_w * self.participants.index(participant) + self.col_w / 2

    @property
    def width(self) -> int:
        return LANE_W + self.col_w * max(1, len(self.participants)) + 10

    @property
    def height(self) -> int:
        return TOP + HEAD_H + 14 + ROW_H * len(self.trace) + 16

    def diagram_id(self) -> str:
        """A stable id for this diagram's accessibility references (derived from its content)."""
        digest = hashlib.sha1(usedforsecurity=False)
        for e in self.trace:
            digest.update(f"{e.seq}|{e.t_ms}|{e.sender}|{e.receiver}|{e.kind}|{e.method}|{e.request_id}\n".encode())
        digest.update(f"{self.highlight}|{self.title}".encode())
        return "mcpsim-seq-" + digest.hexdigest()[:10]

    def description(self) -> str:
        """The long description screen readers announce with the diagram."""
        events = list(self.trace)
        span = f" from {format_ms(events[0].t_ms)} to {format_ms(events[-1].t_ms)} of virtual time" if events else ""
        who = ", ".join(self.participants) or "nobody"
        return (f"{len(events)} events between {who}{span}. Lifelines run left to right in that order. "
                "Requests are solid arrows labelled →, responses dashed arrows labelled ←, notifications "
                "dotted arrows labelled ⇢, errors dash-dot arrows labelled ✖. The lane on the left gives "
                "each event's virtual time. The text table lists the same events in the same order.")

    # -- drawing -----------------------------------------------------------------------------
    def to_svg(self) -> str:
        """The diagram as a standalone SVG document (no XML prolog, so it can also be inlined in HTML)."""
        if self._svg is None:
            self._svg = self._draw()
        return self._svg

    def _draw(self) -> str:
        w, h = self.width, self.height
        ident = self.diagram_id()
        out: list[str] = [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
            f'role="img" aria-labelledby="{ident}-title {ident}-desc" class="mcpsim-seq" '
            f'font-family="{FONT}" font-size="12">',
            f'<title id="{ident}-title">{xml_text(self.title)}</title>',
            f'<desc id="{ident}-desc">{xml_text(self.description())}</desc>',
            _DEFS,
            f'<rect x="0" y="0" width="{w}" height="{h}" fill="#ffffff"/>',
            f'<text x="8" y="18" font-size="14" font-weight="bold">{xml_text(self.title)}</text>',
        ]
        out.extend(_legend(8, 40))
        self._draw_header(out)
        y0 = TOP + HEAD_H + 14
        for i, event in enumerate(self.trace):
            self._draw_row(out, event, y0 + i * ROW_H)
        out.append("</svg>")
        return "\n".join(out)

    def _draw_header(self, out: list[str]) -> None:
        top, bottom = TOP, self.height - 6
        out.append(f'<text x="8" y="{top + 19}" font-weight="bold">virtual time</text>')
        out.append(f'<line x1="{LANE_W - 8}" y1="{top}" x2="{LANE_W - 8}" y2="{bottom}" stroke="#bbbbbb"/>')
        col = self.col_w
        for p in self.participants:
            x = self._x(p)
            out.append(f'<g class="mcpsim-lifeline" data-participant="{xml_text(p)}">'
                       f'<rect x="{_num(x - col / 2 + 8)}" y="{top}" width="{col - 16}" height="{HEAD_H - 4}" '
                       f'rx="4" fill="#f4f4f4" stroke="#333333"/>'
                       f'{_lifeline_name(p, x, top, col - 22)}'
                       f'<line x1="{_num(x)}" y1="{top + HEAD_H - 4}" x2="{_num(x)}" y2="{bottom}" '
                       f'stroke="#999999" stroke-dasharray="4 4"/></g>')

    def _draw_row(self, out: list[str], e: TraceEvent, top: float) -> None:
        current = e.seq == self.highlight
        y = top + 20
        cls = f"mcpsim-row mcpsim-{e.kind}" + (" mcpsim-current" if current else "")
        tip = f"#{e.seq} at {format_ms(e.t_ms)}: {e.caption or label(e)}"
        out.append(f'<g class="{cls}" data-seq="{e.seq}"><title>{xml_text(tip)}</title>')
        bg = 'fill="#fff1a8" stroke="#333333"' if current else 'fill="none"'
        out.append(f'<rect class="mcpsim-rowbg" x="2" y="{_num(top)}" width="{self.width - 4}" '
                   f'height="{ROW_H}" {bg}/>')
        marker = "▶ " if current else ""
        out.append(f'<text x="8" y="{_num(y)}" font-size="11">{marker}{xml_text(format_ms(e.t_ms))}</text>')
        badges = time_badges(e)
        if badges:
            out.append(f'<text x="{LANE_TIME_W}" y="{_num(y)}" font-size="11" font-weight="bold">'
                       f'{xml_text(_fit(" ".join(badges), LANE_BADGE_W - 8))}</text>')
        text = label(e, limit=120)
        if OAUTH in e.marks and e.sender != e.receiver:
            # An OAuth exchange is a request and its answer between two parties: drawn as arrows, so
            # the learner sees who asked whom (client, browser, authorization server, resource).
            answer = isinstance(((e.framing or {}).get("http") or {}).get("response"), dict)
            self._draw_arrow(out, e, oauth_label(e), y, style=STYLES["response" if answer else "request"])
        elif e.kind in NOTE_KINDS or e.sender == e.receiver:
            self._draw_note(out, e, text, top)
        else:
            self._draw_arrow(out, e, text, y)
        out.append("</g>")

    def _draw_arrow(self, out: list[str], e: TraceEvent, text: str, y: float,
                    style: dict[str, Any] | None = None) -> None:
        style = style or STYLES.get(e.kind, STYLES["request"])
        x1, x2 = self._x(e.sender), self._x(e.receiver)
        dropped = "dropped" in e.marks
        end = x1 + (x2 - x1) * 0.6 if dropped else x2
        dash = f' stroke-dasharray="{style["dash"]}"' if style["dash"] else ""
        head = "" if dropped else f' marker-end="url(#mcpsim-head-{style["head"]})"'
        out.append(f'<line x1="{_num(x1)}" y1="{_num(y)}" x2="{_num(end)}" y2="{_num(y)}" stroke="{style["stroke"]}" '
                   f'stroke-width="{style["width"]}"{dash}{head}/>')
        if dropped:
            out.append(f'<path d="M{_num(end - 5)},{_num(y - 5)} l10,10 m0,-10 l-10,10" stroke="#000000" '
                       f'stroke-width="2"/>')
        mid = (x1 + x2) / 2
        span = abs(x2 - x1) + self.col_w - 24  # a label may spill half a column past each end
        out.append(f'<text x="{_num(mid)}" y="{_num(y - 5)}" text-anchor="middle" fill="{style["stroke"]}">'
                   f'{xml_text(_fit(text, span))}</text>')

    def _draw_note(self, out: list[str], e: TraceEvent, text: str, top: float) -> None:
        xs = [self._x(e.sender), self._x(e.receiver)]
        reach = self.col_w - 18 if e.sender == e.receiver else self.col_w / 2 - 18  # a one-lifeline note is wider
        left = max(min(xs) - reach, LANE_W)
        right = min(max(xs) + reach, self.width - 10)
        dash = ' stroke-dasharray="3 2"' if e.kind != "timeout" else ""
        weight = ' font-weight="bold"' if e.kind == "timeout" else ""
        out.append(f'<rect x="{_num(left)}" y="{_num(top + 5)}" width="{_num(right - left)}" height="20" rx="3" '
                   f'fill="#fafafa" stroke="#555555"{dash}/>')
        out.append(f'<text x="{_num((left + right) / 2)}" y="{_num(top + 19)}" text-anchor="middle"{weight}>'
                   f'{xml_text(_fit(text, right - left - 8))}</text>')

    # -- display -----------------------------------------------------------------------------
    def _repr_svg_(self) -> str:
        return self.to_svg()

    def _repr_html_(self) -> str:
        """For notebooks: an ``<img>`` that survives sanitizers (see :mod:`mcp_sim.trace.embed`)."""
        return svg_img(self.to_svg(), f"{self.title}. {self.description()}", width=self.width)

    def inline_html(self, *, fit: bool = True) -> str:
        """The SVG inline, for live widgets and standalone pages (row tooltips work). ``fit`` scales
        it down to the width it is given, every lifeline in view; ``fit=False`` keeps its natural size
        (the caller puts it in a box that scrolls)."""
        svg = self.to_svg()
        if fit:
            svg = svg.replace("<svg ", f'<svg style="{FIT_STYLE}" ', 1)
        return f'<div class="mcp-sim-seq" style="max-width:100%">{svg}</div>'

    def __repr__(self) -> str:
        return f"<SequenceDiagram {self.title!r}: {len(self.trace)} rows, lifelines {self.participants}>"


_DEFS = (
    "<defs>"
    '<marker id="mcpsim-head-filled" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="9" markerHeight="9" '
    'markerUnits="userSpaceOnUse" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#222222"/></marker>'
    '<marker id="mcpsim-head-open" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="9" markerHeight="9" '
    'markerUnits="userSpaceOnUse" orient="auto"><path d="M0,0 L10,5 L0,10" fill="none" stroke="#222222" '
    'stroke-width="1.5"/></marker>'
    '<marker id="mcpsim-head-cross" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="10" markerHeight="10" '
    'markerUnits="userSpaceOnUse" orient="auto"><path d="M1,1 L9,9 M1,9 L9,1" fill="none" stroke="#222222" '
    'stroke-width="2"/></marker>'
    "</defs>"
)


def _legend(x: float, y: float) -> list[str]:
    """A one-line key: a sample of each line style with its label glyph and words."""
    out = []
    for kind, words in (("request", "→ request (solid)"), ("response", "← response (dashed)"),
                        ("notification", "⇢ notification (dotted)"), ("error", "✖ error (dash-dot)")):
        style = STYLES[kind]
        dash = f' stroke-dasharray="{style["dash"]}"' if style["dash"] else ""
        out.append(f'<line x1="{_num(x)}" y1="{_num(y - 4)}" x2="{_num(x + 30)}" y2="{_num(y - 4)}" '
                   f'stroke="{style["stroke"]}" stroke-width="{style["width"]}"{dash} '
                   f'marker-end="url(#mcpsim-head-{style["head"]})"/>')
        out.append(f'<text x="{_num(x + 36)}" y="{_num(y)}" font-size="11">{xml_text(words)}</text>')
        x += 40 + len(words) * 6.2
    return out
