"""Text meant for reading, in a notebook: prose, JSON and tables that wrap instead of overflowing.

A notebook shows a ``print()`` in a fixed-width font, wrapped wherever the line hits the edge —
mid-word, mid-URL — and a long JSON dump as one endless column. The views here give each such text
an HTML form for notebooks and a plain-text twin (``text/plain``) for terminals, e-mail and any
viewer without HTML, from the same data, so the two can never say different things:

* :class:`Prose` — paragraphs (and an optional list of labelled facts), left-aligned and wrapped at
  spaces; a URL or a long identifier may break anywhere rather than push the page wider;
* :class:`JsonView` — a JSON value, pretty-printed with its characters as they are (``°C``, not
  ``\\u00b0C``), in a ``<details>`` block the reader can fold away.

The style constants are what every table of the package uses so that it fits a 900-pixel output
area: cells left-aligned (JupyterLab aligns table cells right by default, which suits numbers and
not sentences), and long words allowed to break. :func:`breakable` lets a slash-separated name such
as ``notifications/resources/list_changed`` wrap at its slashes.
"""

from __future__ import annotations

import html
import json
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

TEXT_WIDTH = 100
"""Characters per line of the plain-text twins."""

MAX_WIDTH = "max-width:900px"
CELL = "text-align:left;vertical-align:top;overflow-wrap:break-word"
"""A table cell: left-aligned, top-aligned, wrapping at spaces (a short word is never split)."""
LONG_CELL = "text-align:left;vertical-align:top;overflow-wrap:anywhere"
"""A cell of sentences that may hold a URL or a raw frame: it may break anywhere, so the column can
narrow to fit the page instead of pushing the table off screen."""
TABLE = f"border-collapse:collapse;{MAX_WIDTH};font-size:0.9em"
PRE = "white-space:pre-wrap;overflow-wrap:anywhere;text-align:left;margin:0"
"""Preformatted text (JSON, raw bytes) that keeps its line breaks and indents but never scrolls."""
PROSE = f"text-align:left;overflow-wrap:anywhere;{MAX_WIDTH};line-height:1.45"


def breakable(text: str) -> str:
    """``text`` escaped for HTML, with a break opportunity after every ``/`` and ``_``: a method or
    route (``client/issues → server/issues``) may wrap at its joints, never in the middle of a word."""
    return html.escape(text).replace("/", "/<wbr>").replace("_", "_<wbr>")


def wrap(text: str, width: int = TEXT_WIDTH, indent: str = "") -> str:
    """One paragraph as lines of at most ``width`` characters, broken at spaces only: a long word
    (a URL) gets a line of its own rather than being cut."""
    return textwrap.fill(text, width, initial_indent=indent, subsequent_indent=indent,
                         break_long_words=False, break_on_hyphens=False)


def to_json(value: Any, indent: int | None = 2) -> str:
    """``value`` as JSON with every character as it is (``ensure_ascii=False``): the reader sees
    ``22°C``, which is also what travels on the wire as UTF-8."""
    return json.dumps(value, indent=indent, ensure_ascii=False, default=str)


@dataclass(frozen=True)
class Prose:
    """Paragraphs for reading, optionally under a heading and followed by labelled facts.

    ``facts`` are ``(label, sentence)`` pairs shown as a definition list: the eye finds "the fix" or
    "not covered" without reading the whole paragraph."""

    paragraphs: Sequence[str]
    heading: str = ""
    facts: Sequence[tuple[str, str]] = field(default_factory=tuple)

    def to_text(self) -> str:
        parts = [self.heading] if self.heading else []
        parts += [wrap(p) for p in self.paragraphs if p]
        if self.facts:
            parts.append("\n".join(_fact_text(label, text) for label, text in self.facts))
        return "\n\n".join(parts)

    def to_html(self) -> str:
        esc = html.escape
        head = f"<p style='margin:0 0 .4em 0'><b>{esc(self.heading)}</b></p>" if self.heading else ""
        body = "".join(f"<p style='margin:0 0 .5em 0'>{esc(p)}</p>" for p in self.paragraphs if p)
        facts = ""
        if self.facts:
            items = "".join(f"<dt style='font-weight:bold'>{esc(label)}</dt>"
                            f"<dd style='margin:0 0 .3em 1.5em'>{esc(text)}</dd>" for label, text in self.facts)
            facts = f"<dl style='margin:.3em 0'>{items}</dl>"
        return f"<div class='mcp-sim-prose' style='{PROSE}'>{head}{body}{facts}</div>"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": self.to_text(), "text/html": self.to_html()}

    def __str__(self) -> str:
        return self.to_text()


def _fact_text(label: str, text: str) -> str:
    """A labelled fact as text: the label on its own line, the sentence wrapped and indented under it."""
    return f"{label}:\n{wrap(text, indent='    ')}"


@dataclass(frozen=True)
class JsonView:
    """A JSON value to read: pretty-printed, unescaped, foldable.

    In a notebook it is a ``<details>`` block — open unless ``folded`` — whose summary says what it is
    (``title``) and how long; its lines wrap rather than scroll. ``str()`` is the same JSON as text."""

    value: Any
    title: str = ""
    folded: bool = False

    def to_text(self) -> str:
        text = to_json(self.value)
        return f"{self.title}\n{text}" if self.title else text

    def to_html(self) -> str:
        text = to_json(self.value)
        lines = text.count("\n") + 1
        summary = html.escape(self.title or "JSON") + f" <small>({lines} line{'s' if lines != 1 else ''})</small>"
        return (f"<details class='mcp-sim-json' style='{MAX_WIDTH}'{'' if self.folded else ' open'}>"
                f"<summary style='text-align:left'>{summary}</summary>"
                f"<pre style='{PRE}'>{html.escape(text)}</pre></details>")

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": self.to_text(), "text/html": self.to_html()}

    def __str__(self) -> str:
        return self.to_text()


__all__ = ["CELL", "LONG_CELL", "PRE", "PROSE", "TABLE", "JsonView", "Prose", "breakable", "to_json", "wrap"]
