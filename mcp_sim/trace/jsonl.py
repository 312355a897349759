"""JSON Lines: one trace event per line, the format traces are saved, shared and graded in.

Each line is a JSON object with at least ``t_ms`` (virtual time), ``from``, ``to``, ``revision`` and
``message`` — the JSON-RPC message exactly as it was sent — plus the rest of the event (``raw`` frame
text, ``kind``, ``method``, ``caption``, ``marks`` …). Loading a file gives back a trace equal to the
one saved, so a trace can be written by ``mcp-sim run`` and replayed in the player later.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from mcp_sim.trace.event import TraceEvent
from mcp_sim.trace.events import Trace


def _jsonable(value: Any) -> Any:
    """Fallback for values JSON cannot hold (bytes in a transport's framing, say): text, not a crash."""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", errors="replace")
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)  # a set's own order depends on hashing: the line must not
    return repr(value)


def event_line(event: TraceEvent) -> str:
    """One event as one line of JSON (no newline inside: JSON escapes them)."""
    return json.dumps(event.to_json(), ensure_ascii=False, default=_jsonable)


def dumps_jsonl(events: Iterable[TraceEvent]) -> str:
    """The whole trace as JSON Lines text."""
    return "".join(event_line(e) + "\n" for e in events)


def to_jsonl(events: Iterable[TraceEvent], path_or_file: str | Path | IO[str]) -> None:
    """Write ``events`` to a path (created or replaced, UTF-8) or to an open text file."""
    text = dumps_jsonl(events)
    if hasattr(path_or_file, "write"):
        path_or_file.write(text)  # type: ignore[union-attr]
        return
    Path(path_or_file).write_text(text, encoding="utf-8", newline="\n")  # type: ignore[arg-type]


def loads_jsonl(text: str) -> Trace:
    """Parse JSON Lines text into a :class:`~mcp_sim.trace.events.Trace`. Blank lines are skipped;
    a broken line is reported with its number."""
    events = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            events.append(TraceEvent.from_json(json.loads(line)))
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"line {number} is not a trace event: {exc}") from exc
    return Trace(events)


def load_jsonl(path_or_file: str | Path | IO[str]) -> Trace:
    """Read a trace written by :func:`to_jsonl` from a path or an open text file."""
    if hasattr(path_or_file, "read"):
        return loads_jsonl(path_or_file.read())  # type: ignore[union-attr]
    return loads_jsonl(Path(path_or_file).read_text(encoding="utf-8"))  # type: ignore[arg-type]
