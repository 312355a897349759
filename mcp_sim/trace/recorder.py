"""The recorder: every message of a simulation, seen at one choke point (course chapters 00 onward).

Transports call :meth:`Recorder.record_message` each time a frame goes onto the wire, so the trace is
exactly what flowed, never a reconstruction. The Host, the user and the model record their
conversations (:meth:`Recorder.record_app`) so a sequence diagram can show the whole story: the user
asks the host, the host asks the model, the client asks the server.

Participants are named by role: ``"user"``, ``"host"``, ``"model"``, ``"client/<server>"`` and
``"server/<server>"`` (one client per server, so the server's name identifies its client too).

Each call makes one :class:`~mcp_sim.trace.event.TraceEvent` at once: the frame's text is read back
as JSON (the trace keeps its own copy, never the sender's dicts), the course's layer and capability
are looked up, and the caption is written. Benchmarks that record tens of thousands of frames use the
accelerated twin in :mod:`mcp_sim.trace.recorder_accelerated` (see :mod:`mcp_sim.accelerated`),
which records the same events and does that work only when someone reads them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from mcp_sim import accelerated
from mcp_sim.trace.captions import caption as _caption
from mcp_sim.trace.captions import classify as _classify
from mcp_sim.trace.event import TraceEvent
from mcp_sim.trace.recorder_accelerated import RecordingRows
from mcp_sim.wire.jsonrpc import (
    JSONRPCErrorResponse,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResultResponse,
    parse_object,
)

if TYPE_CHECKING:
    from mcp_sim.trace.events import Trace

__all__ = ["Captioner", "Classifier", "Recorder", "TraceEvent"]

_KIND_OF_TYPE: dict[type, str] = {JSONRPCRequest: "request", JSONRPCNotification: "notification",
                                  JSONRPCResultResponse: "response", JSONRPCErrorResponse: "error"}

Captioner = Callable[[TraceEvent], str]
Classifier = Callable[[TraceEvent], tuple[str, str | None]]


class Recorder:
    """Collects :class:`TraceEvent` objects in order. ``enabled=False`` records nothing (for speed)."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Recorder:
        # The one place the twin is chosen: ``Recorder()`` made while the switch is on records
        # through the accelerated rows (a subclass of this one, defined at the bottom of the module).
        if cls is Recorder and accelerated.enabled():
            cls = AcceleratedRecorder
        return super().__new__(cls)

    def __init__(self, *, enabled: bool = True, captioner: Captioner | None = None,
                 classifier: Classifier | None = None, clock: Callable[[], float] | None = None) -> None:
        self.enabled = enabled
        self.clock = clock
        """Where the time of each event is read, in milliseconds. The recorder is handed its clock by
        whoever owns one (a :class:`~mcp_sim.sim.world.Simulation` hands it the virtual clock); it
        never reaches into the world. Without a clock every event is at 0 ms."""
        self._events: list[TraceEvent] = []
        self._pending: dict[tuple[str, str, Any], str] = {}
        """(link, requester, request id) → method: how a response learns which method it answers."""
        self._captioner: Captioner = captioner or _caption
        self._classifier: Classifier = classifier or _classify
        self._marks: list[str] = []
        self._listeners: list[Callable[[TraceEvent], None]] = []

    # -- marking -------------------------------------------------------------------------------
    def mark_next(self, *marks: str) -> None:
        """Attach ``marks`` (e.g. ``"attack"``) to the next message recorded."""
        self._marks.extend(marks)

    def subscribe(self, listener: Callable[[TraceEvent], None]) -> None:
        """Call ``listener`` with each new event (a live widget, a test probe …)."""
        self._listeners.append(listener)

    # -- recording -----------------------------------------------------------------------------
    def _now(self) -> float:
        """The time now, in milliseconds, from the clock this recorder was handed (0.0 without one)."""
        clock = self.clock
        return clock() if clock is not None else 0.0

    def record_message(self, *, link: str, sender: str, receiver: str, raw: str | None = None,
                       message: dict[str, Any] | None = None, revision: str | None = None,
                       transport: str = "memory", framing: dict[str, Any] | None = None,
                       marks: tuple[str, ...] = (), t_ms: float | None = None,
                       sent: JSONRPCMessage | None = None) -> TraceEvent | None:
        """Record one JSON-RPC frame. Give the ``raw`` text as sent; ``message`` is parsed from it
        when not given. Unreadable frames are recorded as ``invalid``.

        ``sent`` is the message object a transport encoded ``raw`` from; the text alone says the same,
        so this recorder reads the text (the accelerated twin reads the object, to skip the parse)."""
        if not self.enabled:
            self._marks.clear()
            return None
        kind, message, method, request_id = self._read_frame(link, sender, receiver, raw, message)
        all_marks = (*self._marks, *marks)
        self._marks.clear()
        return self._add(t_ms, link, sender, receiver, kind, message, raw=raw, revision=revision,
                         transport=transport, framing=framing, method=method, request_id=request_id,
                         marks=all_marks)

    def record_sent(self, link: str, sender: str, receiver: str, raw: str, revision: str | None,
                    transport: str, sent: JSONRPCMessage) -> None:
        """``record_message(link=…, sender=…, receiver=…, raw=…, revision=…, transport=…, sent=…)``,
        the way a transport calls it for every frame it encoded itself."""
        self.record_message(link=link, sender=sender, receiver=receiver, raw=raw, revision=revision,
                            transport=transport, sent=sent)

    def _read_frame(self, link: str, sender: str, receiver: str, raw: str | None,
                    message: dict[str, Any] | None) -> tuple[str, dict[str, Any] | None, str | None, Any]:
        """Read a frame's text and say what it is: (kind, message, method, request id).

        A response names no method, so the recorder remembers which method each request asked for
        (by link, requester and id) and labels the response with it."""
        is_batch = message is not None and set(message) == {"batch"}
        if message is None and raw is not None:
            # Keep the frame's JSON exactly as sent (member order, unknown members and all): the
            # codec's tidy form would hide precisely the oddities a learner is looking for.
            try:
                parsed: Any = json.loads(raw)
            except (ValueError, RecursionError):
                parsed = None
            if isinstance(parsed, dict):
                message = parsed
            elif isinstance(parsed, list):
                message, is_batch = {"batch": parsed}, True
        if message is None:
            return "invalid", None, None, None
        if is_batch:
            return ("batch" if message["batch"] else "invalid"), message, None, None
        kind = _KIND_OF_TYPE.get(type(parse_object(message, raw)), "invalid")
        request_id = message.get("id")
        if kind == "request":
            self._pending[(link, sender, request_id)] = message["method"]
            return kind, message, message["method"], request_id
        if kind == "notification":
            return kind, message, message["method"], request_id
        if kind in ("response", "error"):
            method = self._pending.get((link, receiver, request_id)) if request_id is not None else None
            return kind, message, method, request_id
        # An invalid message may still name a method and an id: keep them for the label.
        named = message.get("method")
        valid_id = isinstance(request_id, (str, int)) and not isinstance(request_id, bool)
        return kind, message, named if isinstance(named, str) else None, request_id if valid_id else None

    def record_app(self, *, sender: str, receiver: str, text: str | Callable[[], str], link: str = "app",
                   marks: tuple[str, ...] = (), data: dict[str, Any] | Callable[[], dict[str, Any]] | None = None,
                   t_ms: float | None = None) -> None:
        """Record talk that is not MCP: user → host, host → model, host → user (approval) …

        ``text`` and ``data`` may be functions that write them (the accelerated twin calls them only
        when someone reads the event; this recorder calls them at once)."""
        if not self.enabled:
            return
        if callable(text):
            text = text()
        if callable(data):
            data = data()
        self._add(t_ms, link, sender, receiver, "app", data, transport="app", marks=marks, text=text)

    def record_event(self, *, kind: str, link: str, sender: str, receiver: str, text: str,
                     transport: str = "memory", framing: dict[str, Any] | None = None,
                     marks: tuple[str, ...] = (), revision: str | None = None,
                     request_id: Any = None, method: str | None = None,
                     t_ms: float | None = None) -> TraceEvent | None:
        """Record a ``log`` (stderr line), ``transport`` (connect/close/drop …) or ``timeout`` event."""
        if not self.enabled:
            return None
        return self._add(t_ms, link, sender, receiver, kind, None, revision=revision, transport=transport,
                         framing=framing, method=method, request_id=request_id, marks=marks, text=text)

    def _add(self, t_ms: float | None, link: str, sender: str, receiver: str, kind: str,
             message: dict[str, Any] | None, **details: Any) -> TraceEvent:
        """Make the next event: stamp it, place it in the course's layers, caption it, keep it and
        tell the listeners."""
        event = self._completed(TraceEvent(
            len(self._events) + 1, self._now() if t_ms is None else t_ms, link, sender, receiver, kind, message,
            **{**details, "framing": details.get("framing") or {}}))
        self._events.append(event)
        for listener in self._listeners:
            listener(event)
        return event

    def _completed(self, event: TraceEvent) -> TraceEvent:
        """``event`` placed in the course's layers (roles, capabilities, transports) and captioned."""
        layer, capability = self._classifier(event)
        event = replace(event, layer=layer, capability=capability)
        return replace(event, caption=self._captioner(event))

    @property
    def events(self) -> list[TraceEvent]:
        """Every event so far, in order. This is the recorder's own list (a listener may replace its
        last event); read ``recorder.events`` again after more was recorded."""
        return self._events

    # -- reading -------------------------------------------------------------------------------
    def __iter__(self) -> Iterator[TraceEvent]:
        return iter(self.events)

    def __len__(self) -> int:
        return len(self._events)

    def messages(self) -> list[dict[str, Any]]:
        """The JSON-RPC messages only, in order."""
        return [e.message for e in self.events if e.message is not None and e.kind != "app"]

    def clear(self) -> None:
        self._events.clear()
        self._pending.clear()

    # -- views and exports (see mcp_sim.trace.events) ------------------------------------------
    def trace(self) -> Trace:
        """A snapshot of what was recorded so far, as a :class:`~mcp_sim.trace.events.Trace` with
        filters, diagrams, tables and exports."""
        from mcp_sim.trace.events import Trace

        return Trace(self.events)

    def to_jsonl(self, path_or_file: Any) -> None:
        """Write the trace as JSON Lines (one event per line); see :func:`mcp_sim.trace.jsonl.to_jsonl`."""
        from mcp_sim.trace.jsonl import to_jsonl

        to_jsonl(self.events, path_or_file)

    def _repr_html_(self) -> str:
        from mcp_sim.trace.page import trace_html

        return trace_html(self)


class AcceleratedRecorder(RecordingRows, Recorder):
    """The recorder with its accelerated twin's recording methods (chosen by ``Recorder()`` while
    :func:`mcp_sim.accelerated.enabled`): the same events, made when someone reads them."""
