"""The accelerated twin of :class:`mcp_sim.trace.recorder.Recorder` (see :mod:`mcp_sim.accelerated`).

A benchmark records tens of thousands of frames and reads none of them, so this twin records the
two frames of every round trip (a request and its result, sent by a transport that encoded them
itself) and the host's talk as short rows, and makes each row into the very same
:class:`~mcp_sim.trace.event.TraceEvent` the readable recorder makes — the frame's JSON read back,
the layer looked up, the caption written — only when someone reads :attr:`RecordingRows.events`.
Everything else (marked frames, frames with listeners, unusual frames, log and transport events)
goes the readable way, after the rows before it have been made into events, so order and numbering
never change.

Which method a response answers is also worked out when the rows are made into events, in order,
from the requests before it (the readable recorder notes it as each request is recorded; the
readable way is taken only after the rows are events, so it always finds the note). A frame's row
is a tuple of strings and numbers only (its kind first, then time, link, ends, text, revision,
transport, method — ``None`` for a response until then — and id): Python's garbage collector stops
watching such a tuple the first time it looks at it, so ten thousand rows waiting to be read cost
it nothing.

This module holds the recording methods only; :mod:`mcp_sim.trace.recorder` combines them with the
readable recorder (and never the other way round, so neither module imports a module that imports it).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mcp_sim.trace.captions import classify
from mcp_sim.trace.event import TraceEvent
from mcp_sim.wire.jsonrpc import JSONRPCMessage, JSONRPCRequest, JSONRPCResultResponse

_ID_TYPES = frozenset({int, str})
"""The types a request id may have (``bool`` is not one of them, though it is an ``int``)."""

Row = tuple[Any, ...]
"""``(kind, t_ms, link, sender, receiver, …)``: ``"request"`` and ``"response"`` rows continue with the
frame's text, revision, transport, method and id; ``"app"`` rows with text, data and marks."""


class RecordingRows:
    """The recorder's recording methods, quicker for the frames a round trip is made of."""

    if TYPE_CHECKING:  # provided by the readable Recorder this is combined with
        enabled: bool
        clock: Callable[[], float] | None
        _events: list[TraceEvent]
        _pending: dict[tuple[str, str, Any], str]
        _classifier: Callable[[TraceEvent], tuple[str, str | None]]
        _marks: list[str]
        _listeners: list[Callable[[TraceEvent], None]]

        def _completed(self, event: TraceEvent) -> TraceEvent: ...

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._rows: list[Row] = []
        """Recorded, not yet made into events."""
        self._quick = self._classifier is classify
        """Rows only with the course's own classifier, which looks at nothing but kind and method."""

    def record_sent(self, link: str, sender: str, receiver: str, raw: str, revision: str | None,
                    transport: str, sent: JSONRPCMessage) -> None:
        if not self.enabled:
            self._marks.clear()  # as the readable recorder does: marks are for the next frame only
            return
        if self._quick and not self._marks and not self._listeners:
            if type(sent) is JSONRPCRequest:
                rid, method, params = sent
                if type(rid) in _ID_TYPES and type(method) is str and method \
                        and (params is None or type(params) is dict):
                    clock = self.clock
                    self._rows.append(("request", clock() if clock is not None else 0.0, link, sender, receiver,
                                       raw, revision, transport, method, rid))
                    return
            elif type(sent) is JSONRPCResultResponse:
                rid, result = sent
                if type(rid) in _ID_TYPES and type(result) is dict:
                    clock = self.clock
                    self._rows.append(("response", clock() if clock is not None else 0.0, link, sender, receiver,
                                       raw, revision, transport, None, rid))
                    return
        super().record_sent(link, sender, receiver, raw, revision, transport, sent)  # type: ignore[misc]

    def record_app(self, *, sender: str, receiver: str, text: str | Callable[[], str], link: str = "app",
                   marks: tuple[str, ...] = (), data: dict[str, Any] | Callable[[], dict[str, Any]] | None = None,
                   t_ms: float | None = None) -> None:
        if not self.enabled:
            return
        if self._quick and not self._listeners:
            if t_ms is None:
                clock = self.clock
                t_ms = clock() if clock is not None else 0.0
            self._rows.append(("app", t_ms, link, sender, receiver, text, data, marks))
            return
        super().record_app(sender=sender, receiver=receiver, text=text, link=link,  # type: ignore[misc]
                           marks=marks, data=data, t_ms=t_ms)

    def record_message(self, **frame: Any) -> TraceEvent | None:
        if self._rows:
            self.events  # the rows recorded before come first, and teach the requests they hold  # noqa: B018
        return super().record_message(**frame)  # type: ignore[misc, no-any-return]

    def _add(self, t_ms: float | None, link: str, sender: str, receiver: str, kind: str,
             message: dict[str, Any] | None, **details: Any) -> TraceEvent:
        if self._rows:
            self.events  # the rows recorded before come first  # noqa: B018
        return super()._add(t_ms, link, sender, receiver, kind, message, **details)  # type: ignore[misc, no-any-return]

    @property
    def events(self) -> list[TraceEvent]:
        rows, events = self._rows, self._events
        if rows:
            self._rows = []
            for kind, t_ms, link, sender, receiver, *rest in rows:
                seq = len(events) + 1
                if kind == "app":
                    text, data, marks = rest
                    event = TraceEvent(seq, t_ms, link, sender, receiver, "app", data() if callable(data) else data,
                                       transport="app", marks=marks, text=text() if callable(text) else text)
                else:
                    raw, revision, transport, method, request_id = rest
                    if kind == "request":
                        self._pending[(link, sender, request_id)] = method
                    else:  # the method the request asked for, as the readable recorder labels a response
                        method = self._pending.get((link, receiver, request_id))
                    event = TraceEvent(seq, t_ms, link, sender, receiver, kind, json.loads(raw), raw, revision,
                                       transport, method=method, request_id=request_id)
                events.append(self._completed(event))
        return events

    def __len__(self) -> int:
        return len(self._events) + len(self._rows)

    def clear(self) -> None:
        self._rows.clear()
        super().clear()  # type: ignore[misc]
