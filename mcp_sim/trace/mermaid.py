"""A trace as a Mermaid ``sequenceDiagram``: paste it into Markdown and GitHub draws it.

Mermaid's arrows match the SVG diagram's conventions: a request is a solid arrow (``->>``), a
response a dashed one (``-->>``), a notification an open "async" arrow (``-)``), an error a dashed
arrow ending in a cross (``--x``), a dropped message a solid arrow ending in a cross (``-x``). Logs,
transport events and timeouts become notes. Labels are the same text as the SVG's.
"""

from __future__ import annotations

import re
from typing import Any

from mcp_sim.trace.captions import label
from mcp_sim.trace.events import Trace, format_ms
from mcp_sim.trace.sequence import NOTE_KINDS

ARROWS = {"request": "->>", "response": "-->>", "notification": "-)", "error": "--x", "invalid": "-x",
          "batch": "->>", "app": "->>"}


def mermaid_id(participant: str) -> str:
    """A Mermaid-safe participant id (``client/weather`` → ``client_weather``)."""
    return re.sub(r"[^A-Za-z0-9_]", "_", participant)


def mermaid_text(text: str) -> str:
    """Message text Mermaid will not misread: ``;`` ends a statement and ``#`` starts an entity
    code, so both are written as entity codes; newlines become spaces."""
    return re.sub(r"[#;]", lambda m: f"#{ord(m.group())};", " ".join(text.split()))


def to_mermaid(trace: Any, *, with_time: bool = True) -> str:
    """The Mermaid source for ``trace`` (one line per event, in order)."""
    trace = Trace.of(trace)
    lines = ["sequenceDiagram"]
    for p in trace.participants():
        kind = "actor" if p == "user" else "participant"
        lines.append(f"    {kind} {mermaid_id(p)} as {mermaid_text(p)}")
    for e in trace:
        text = label(e, limit=80)
        if with_time:
            text = f"{text} @{format_ms(e.t_ms)}"
        a, b = mermaid_id(e.sender), mermaid_id(e.receiver)
        if e.kind in NOTE_KINDS or a == b:
            where = f"over {a}" if a == b else f"over {a},{b}"
            lines.append(f"    Note {where}: {mermaid_text(text)}")
            continue
        arrow = "-x" if "dropped" in e.marks else ARROWS.get(e.kind, "->>")
        lines.append(f"    {a}{arrow}{b}: {mermaid_text(text)}")
    return "\n".join(lines) + "\n"
