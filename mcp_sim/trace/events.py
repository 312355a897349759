"""A trace: the events of one simulation, in order, with the questions a learner asks of them.

A :class:`Trace` is an immutable list of :class:`~mcp_sim.trace.recorder.TraceEvent` objects. It
filters (``trace.filter(link="weather", capability="lifecycle")``), lists the JSON-RPC messages, compares
itself with another trace (:meth:`Trace.diff` — what changed when one message was dropped or the
revision changed?). It is the data; the views the course draws from it — the sequence diagram
(:mod:`.sequence`), the text table (:mod:`.table`), the topology (:mod:`.topology`), Mermaid
(:mod:`.mermaid`), the HTML page (:mod:`.page`) and JSON Lines (:mod:`.jsonl`) — each take a
``Trace`` and import this module, never the other way round. Every view of a filtered trace shows the
same events in the same order, because every view is drawn from the same ``Trace`` object.
"""

from __future__ import annotations

import difflib
import html
import json
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

from mcp_sim.trace.captions import label
from mcp_sim.trace.event import TraceEvent
from mcp_sim.trace.reading import CELL, LONG_CELL, TABLE

Selector = str | Collection[str] | None
"""A filter value: one name, several names, or ``None`` for "any"."""

ROLE_ORDER = ("user", "host", "model")


def _matches(value: str | None, wanted: Selector) -> bool:
    if wanted is None:
        return True
    if isinstance(wanted, str):
        return value == wanted
    return value in wanted


def format_ms(t_ms: float) -> str:
    """``12.0`` → ``"12 ms"``, ``0.125`` → ``"0.125 ms"``: virtual time, as short as it is exact."""
    text = f"{t_ms:.3f}".rstrip("0").rstrip(".")
    return f"{text} ms"


def lifelines(events: Iterable[TraceEvent]) -> list[str]:
    """The participants of ``events`` in the order a sequence diagram draws them: user, host, model,
    then the clients, then their servers (in the clients' order), then anyone else."""
    seen: list[str] = []
    for e in events:
        for p in (e.sender, e.receiver):
            if p not in seen:
                seen.append(p)
    roles = [p for p in ROLE_ORDER if p in seen]
    clients = [p for p in seen if p.startswith("client/")]
    servers = [f"server/{c.partition('/')[2]}" for c in clients if f"server/{c.partition('/')[2]}" in seen]
    servers += [p for p in seen if p.startswith("server/") and p not in servers]
    placed = set(roles) | set(clients) | set(servers)
    return [*roles, *clients, *servers, *(p for p in seen if p not in placed)]


class Trace(Sequence[TraceEvent]):
    """The events of one run, oldest first. Indexing gives an event; slicing and filtering give a
    new ``Trace``. Two traces are equal when their events are equal."""

    __slots__ = ("_events", "title")

    def __init__(self, events: Iterable[TraceEvent] = (), *, title: str | None = None) -> None:
        self._events: tuple[TraceEvent, ...] = tuple(events)
        self.title = title
        """A name for displays (``"weather, 2026-07-28, memory"``); not part of equality."""

    @classmethod
    def of(cls, source: Any) -> Trace:
        """A trace from whatever a scenario hands back: a ``Trace``, a ``Recorder`` or a list of events
        (a JSON Lines file is read by :func:`mcp_sim.trace.jsonl.load_jsonl`)."""
        if isinstance(source, Trace):
            return source
        events = getattr(source, "events", source)
        return cls(events)

    # -- the list protocol ---------------------------------------------------------------------
    @overload
    def __getitem__(self, index: int) -> TraceEvent: ...

    @overload
    def __getitem__(self, index: slice) -> Trace: ...

    def __getitem__(self, index: int | slice) -> TraceEvent | Trace:
        if isinstance(index, slice):
            return Trace(self._events[index], title=self.title)
        return self._events[index]

    def __len__(self) -> int:
        return len(self._events)

    def __iter__(self) -> Iterator[TraceEvent]:
        return iter(self._events)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Trace):
            return self._events == other._events
        if isinstance(other, (list, tuple)):
            return list(self._events) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # equal by content, and events hold dicts

    def __repr__(self) -> str:
        name = f" {self.title!r}" if self.title else ""
        return f"<Trace{name}: {len(self)} events, {len(self.messages())} JSON-RPC messages>"

    @property
    def events(self) -> tuple[TraceEvent, ...]:
        return self._events

    # -- questions -----------------------------------------------------------------------------
    def filter(self, *, link: Selector = None, layer: Selector = None, method: Selector = None,
               kind: Selector = None, capability: Selector = None, participant: Selector = None,
               where: Callable[[TraceEvent], bool] | None = None) -> Trace:
        """The events that match every given selector, in their original order (``seq`` kept).

        ``participant`` keeps events sent or received by that participant; ``where`` is any test.
        """
        def keep(e: TraceEvent) -> bool:
            return (_matches(e.link, link) and _matches(e.layer, layer) and _matches(e.method, method)
                    and _matches(e.kind, kind) and _matches(e.capability, capability)
                    and (participant is None or _matches(e.sender, participant)
                         or _matches(e.receiver, participant))
                    and (where is None or where(e)))

        return Trace([e for e in self._events if keep(e)], title=self.title)

    def messages(self) -> list[dict[str, Any]]:
        """The JSON-RPC messages (as sent), in order: what a wire sniffer would have seen."""
        return [e.message for e in self._events if e.message is not None and e.kind != "app"]

    def by_seq(self, seq: int) -> TraceEvent:
        """The event with sequence number ``seq`` (a ``KeyError`` if this trace does not hold it)."""
        for e in self._events:
            if e.seq == seq:
                return e
        raise KeyError(f"no event #{seq} in this trace")

    def links(self) -> list[str]:
        """Link names in order of first appearance (``"app"`` is the host's own talk)."""
        return list(dict.fromkeys(e.link for e in self._events))

    def layers(self) -> list[str]:
        return list(dict.fromkeys(e.layer for e in self._events))

    def methods(self) -> list[str]:
        return list(dict.fromkeys(e.method for e in self._events if e.method))

    def kinds(self) -> list[str]:
        return list(dict.fromkeys(e.kind for e in self._events))

    def revisions(self) -> list[str]:
        return list(dict.fromkeys(e.revision for e in self._events if e.revision))

    def transports(self) -> list[str]:
        return list(dict.fromkeys(e.transport for e in self._events if e.kind != "app"))

    def participants(self) -> list[str]:
        """Everyone in the trace, in lifeline order (user, host, model, clients, servers)."""
        return lifelines(self._events)

    def labels(self) -> list[str]:
        """The arrow label of every event, in order (``→ tools/call #3`` …)."""
        return [label(e) for e in self._events]

    def diff(self, other: Trace | Iterable[TraceEvent]) -> TraceDiff:
        """What changed between this trace and ``other``; see :class:`TraceDiff`."""
        return TraceDiff.between(self, Trace.of(other))

    def to_json(self) -> list[dict[str, Any]]:
        """Every event as a JSON-ready dict, in order (JSON Lines, widgets and the HTML page use it)."""
        return [e.to_json() for e in self._events]


# --- comparing two traces ------------------------------------------------------------------------

def _align_key(e: TraceEvent) -> tuple[Any, ...]:
    """What makes two events "the same step" in two runs: who sent what kind of thing to whom.
    Request ids and times are left out, so a renumbered or delayed message still lines up."""
    return (e.kind, e.sender, e.receiver, e.method, e.text if e.message is None else None)


def _json_changes(a: Any, b: Any, path: str = "", out: list[str] | None = None, limit: int = 8) -> list[str]:
    """Paths where two JSON values differ, e.g. ``params._meta.…protocolVersion: "2025-06-18" → …``."""
    out = [] if out is None else out
    if len(out) >= limit:
        return out
    if isinstance(a, dict) and isinstance(b, dict):
        for key in list(dict.fromkeys([*a, *b])):
            sub = f"{path}.{key}" if path else str(key)
            if key not in a:
                out.append(f"{sub}: added {json.dumps(b[key], ensure_ascii=False)[:60]}")
            elif key not in b:
                out.append(f"{sub}: removed")
            else:
                _json_changes(a[key], b[key], sub, out, limit)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _json_changes(x, y, f"{path}[{i}]", out, limit)
    elif a != b:
        left = json.dumps(a, ensure_ascii=False)[:60]
        right = json.dumps(b, ensure_ascii=False)[:60]
        out.append(f"{path or '(message)'}: {left} → {right}")
    return out[:limit]


@dataclass(frozen=True)
class DiffEntry:
    """One line of a trace comparison.

    ``op`` is ``same`` (the step happened identically), ``changed`` (the same step with different
    content — listed in ``changes``), ``removed`` (only in the first trace) or ``added`` (only in the
    second)."""

    op: str
    left: TraceEvent | None
    right: TraceEvent | None
    changes: tuple[str, ...] = ()

    SYMBOLS = {"same": "=", "changed": "~", "removed": "-", "added": "+"}

    def to_text(self) -> str:
        left = label(self.left) if self.left else ""
        right = label(self.right) if self.right else ""
        route = self.left or self.right
        assert route is not None
        head = f"{self.SYMBOLS[self.op]} {route.sender} → {route.receiver}: "
        if self.op == "same":
            return head + left
        if self.op == "removed":
            return head + f"{left}   (only in the first run)"
        if self.op == "added":
            return head + f"{right}   (only in the second run)"
        detail = "; ".join(self.changes)
        return head + (f"{left}  ⟶  {right}" if left != right else left) + (f"   [{detail}]" if detail else "")


@dataclass(frozen=True)
class TraceDiff:
    """The difference between two traces, step by step, aligned like ``diff`` aligns lines.

    Use it after a fork: ``original.diff(forked)`` says which messages no longer happen, which new
    ones appear (a retry, an error, a timeout) and which carry different content."""

    left: Trace
    right: Trace
    entries: tuple[DiffEntry, ...]

    @classmethod
    def between(cls, left: Trace, right: Trace) -> TraceDiff:
        a, b = [_align_key(e) for e in left], [_align_key(e) for e in right]
        entries: list[DiffEntry] = []
        matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
        for op, i1, i2, j1, j2 in matcher.get_opcodes():
            if op == "equal":
                for x, y in zip(left.events[i1:i2], right.events[j1:j2], strict=True):
                    changes = _event_changes(x, y)
                    entries.append(DiffEntry("changed" if changes else "same", x, y, tuple(changes)))
            else:
                entries.extend(DiffEntry("removed", x, None) for x in left.events[i1:i2])
                entries.extend(DiffEntry("added", None, y) for y in right.events[j1:j2])
        return cls(left, right, tuple(entries))

    @property
    def is_empty(self) -> bool:
        """True when both runs did the same thing with the same content."""
        return all(e.op == "same" for e in self.entries)

    def counts(self) -> dict[str, int]:
        out = {"same": 0, "changed": 0, "removed": 0, "added": 0}
        for e in self.entries:
            out[e.op] += 1
        return out

    @property
    def differences(self) -> list[DiffEntry]:
        return [e for e in self.entries if e.op != "same"]

    @property
    def first_difference(self) -> DiffEntry | None:
        return next(iter(self.differences), None)

    def summary(self) -> str:
        """One sentence: "2 steps only in the first run, 3 only in the second, 1 changed"."""
        c = self.counts()
        if self.is_empty:
            return f"The two runs are identical ({c['same']} steps)."
        parts = [f"{c['same']} steps the same"]
        if c["changed"]:
            parts.append(f"{c['changed']} changed")
        if c["removed"]:
            parts.append(f"{c['removed']} only in the first run")
        if c["added"]:
            parts.append(f"{c['added']} only in the second run")
        first = self.first_difference
        where = ""
        if first is not None:
            event = first.left or first.right
            assert event is not None
            where = f"; first difference: {label(event)} ({first.op})"
        return ", ".join(parts) + where + "."

    def to_text(self) -> str:
        return "\n".join([self.summary(), *(e.to_text() for e in self.entries)])

    def __str__(self) -> str:
        return self.to_text()

    def _repr_html_(self) -> str:
        esc = html.escape
        rows = []
        for e in self.entries:
            left = esc(label(e.left)) if e.left else ""
            right = esc(label(e.right)) if e.right else ""
            note = esc("; ".join(e.changes))
            word = {"same": "same", "changed": "changed", "removed": "only first", "added": "only second"}[e.op]
            rows.append(f"<tr class='mcp-sim-diff-{e.op}'><td style='{CELL}'>{left}</td>"
                        f"<td style='{CELL}'>{esc(DiffEntry.SYMBOLS[e.op])} {word}</td>"
                        f"<td style='{CELL}'>{right}</td><td style='{LONG_CELL}'>{note}</td></tr>")
        head = "".join(f"<th scope='col' style='{CELL}'>{h}</th>"
                       for h in ("first run", "difference", "second run", "what changed"))
        return (f"<table class='mcp-sim-diff' style='{TABLE}'><caption style='text-align:left'>"
                + esc(self.summary()) + f"</caption><thead><tr>{head}</tr></thead><tbody>" + "".join(rows)
                + "</tbody></table>")


def _event_changes(x: TraceEvent, y: TraceEvent) -> list[str]:
    changes: list[str] = []
    if x.message != y.message:
        changes.extend(_json_changes(x.message, y.message))
    if x.text != y.text:
        changes.append(f"text: {x.text!r} → {y.text!r}")
    if x.marks != y.marks:
        changes.append(f"marks: {list(x.marks)} → {list(y.marks)}")
    return changes
