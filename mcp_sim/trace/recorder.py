"""The recorder: every message of a simulation, seen at one choke point (course chapters 00 onward).

Transports call :meth:`Recorder.record_message` each time a frame goes onto the wire, so the trace is
exactly what flowed, never a reconstruction. The Host, the user and the model record their
conversations (:meth:`Recorder.record_app`) so a sequence diagram can show the whole story: the user
asks the host, the host asks the model, the client asks the server.

Participants are named by role: ``"user"``, ``"host"``, ``"model"``, ``"client/<server>"`` and
``"server/<server>"`` (one client per server, so the server's name identifies its client too).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcp_sim.trace.captions import caption as _caption
from mcp_sim.trace.captions import classify as _classify
from mcp_sim.trace.captions import classify_kind
from mcp_sim.wire.jsonrpc import (
    JSONRPCErrorResponse,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResultResponse,
    is_valid_id,
    parse_object,
)

if TYPE_CHECKING:
    from mcp_sim.trace.events import Trace

_KIND_OF_TYPE = {"JSONRPCRequest": "request", "JSONRPCNotification": "notification",
                 "JSONRPCResultResponse": "response", "JSONRPCErrorResponse": "error"}


def _kind_of_sent(message: JSONRPCMessage) -> str | None:
    """The kind of a message object a transport is sending, when its JSON text is certainly a valid
    message of that kind; ``None`` sends the recorder the long way (parse the text, explain why)."""
    if isinstance(message, JSONRPCRequest):
        ok = bool(message.method) and isinstance(message.method, str) and is_valid_id(message.id) \
            and (message.params is None or isinstance(message.params, dict))
        return "request" if ok else None
    if isinstance(message, JSONRPCResultResponse):
        return "response" if is_valid_id(message.id) and isinstance(message.result, dict) else None
    if isinstance(message, JSONRPCNotification):
        ok = bool(message.method) and isinstance(message.method, str) \
            and (message.params is None or isinstance(message.params, dict))
        return "notification" if ok else None
    if isinstance(message, JSONRPCErrorResponse):
        err = message.error
        ok = (message.id is None or is_valid_id(message.id)) and type(err.code) is int \
            and isinstance(err.message, str)
        return "error" if ok else None
    return None


@dataclass(frozen=True, init=False)
class TraceEvent:
    """One thing that crossed a boundary, with everything needed to draw and explain it.

    An event reads like a frozen dataclass — every field below is an attribute, events compare by
    value, ``dataclasses.replace`` works — but it is stored compactly: a recorder keeps tens of
    thousands of them, and Python's garbage collector visits every container object it holds. So the
    plain fields live in one tuple (see :data:`FIELDS`), and ``message`` and ``caption``, which the
    recorder may leave to be worked out on first reading (see :class:`_Later`), in two slots."""

    __slots__ = ("_caption", "_message", "_values")

    seq: int
    t_ms: float
    link: str
    """The connection the event travelled on (usually the server's name); ``"app"`` for host-side talk."""
    sender: str
    receiver: str
    kind: str
    """``request``, ``response``, ``error``, ``notification``, ``invalid`` (unreadable frame),
    ``app`` (user/host/model talk), ``log`` (stderr line), ``transport`` (connect, close, drop …)."""
    message: dict[str, Any] | None
    """The JSON-RPC message exactly as sent (``None`` for app/log/transport events)."""
    raw: str | None = None
    """The frame's text as it crossed the wire (a stdio line, an HTTP body, an SSE data field)."""
    revision: str | None = None
    transport: str = "memory"
    framing: dict[str, Any] = field(default_factory=dict)
    """Transport detail: ``{"stdio": {...}}`` or ``{"http": {"request": ..., "response": ...}}``."""
    method: str | None = None
    """The MCP method; for a response, the method of the request it answers."""
    request_id: Any = None
    layer: str = "transports"
    capability: str | None = None
    caption: str = ""
    marks: tuple[str, ...] = ()
    """Labels such as ``attack``, ``timeout``, ``dropped``, ``duplicate``, ``late`` for drawing."""
    text: str | None = None
    """For app/log/transport events: what was said or what happened."""

    def __init__(self, seq: int, t_ms: float, link: str, sender: str, receiver: str, kind: str,
                 message: dict[str, Any] | None, raw: str | None = None, revision: str | None = None,
                 transport: str = "memory", framing: dict[str, Any] | None = None, method: str | None = None,
                 request_id: Any = None, layer: str = "transports", capability: str | None = None,
                 caption: str = "", marks: tuple[str, ...] = (), text: str | None = None) -> None:
        _set_values(self, (seq, t_ms, link, sender, receiver, kind, raw, revision, transport,
                           {} if framing is None else framing, method, request_id, layer, capability,
                           marks, text))
        _set_message(self, message)
        _set_caption(self, caption)

    def to_json(self) -> dict[str, Any]:
        """The JSON Lines form: ``t_ms``, ``from``, ``to``, ``revision``, ``message`` and the rest."""
        out: dict[str, Any] = {
            "seq": self.seq,
            "t_ms": self.t_ms,
            "link": self.link,
            "from": self.sender,
            "to": self.receiver,
            "kind": self.kind,
            "revision": self.revision,
            "transport": self.transport,
            "message": self.message,
        }
        for key, value in (("raw", self.raw), ("framing", self.framing or None), ("method", self.method),
                           ("request_id", self.request_id), ("layer", self.layer),
                           ("capability", self.capability), ("caption", self.caption or None),
                           ("marks", list(self.marks) or None), ("text", self.text)):
            if value is not None:
                out[key] = value
        return out

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> TraceEvent:
        return cls(
            seq=obj["seq"], t_ms=obj["t_ms"], link=obj["link"], sender=obj["from"], receiver=obj["to"],
            kind=obj["kind"], message=obj.get("message"), raw=obj.get("raw"), revision=obj.get("revision"),
            transport=obj.get("transport", "memory"), framing=obj.get("framing") or {},
            method=obj.get("method"), request_id=obj.get("request_id"), layer=obj.get("layer", "transports"),
            capability=obj.get("capability"), caption=obj.get("caption") or "",
            marks=tuple(obj.get("marks") or ()), text=obj.get("text"),
        )


class _Later:
    """A field of a :class:`TraceEvent` that is worked out the first time someone reads it.

    Recording must be cheap — a benchmark records tens of thousands of events and a learner looks at
    a handful — so an event's ``message`` (the JSON of its ``raw`` text) and its ``caption`` may be
    left as ``_Later(compute)``; reading the field runs ``compute(event)`` once and keeps the value.
    An event reads, compares and exports exactly as if the value had been filled in at once."""

    __slots__ = ("compute",)

    def __init__(self, compute: Callable[[TraceEvent], Any]) -> None:
        self.compute = compute


# The three slots behind the fields, read and written by their descriptors (the class itself is frozen).
_get_values = TraceEvent._values.__get__  # type: ignore[attr-defined]
_set_values = TraceEvent._values.__set__  # type: ignore[attr-defined]
_set_message = TraceEvent._message.__set__  # type: ignore[attr-defined]
_set_caption = TraceEvent._caption.__set__  # type: ignore[attr-defined]

FIELDS = ("seq", "t_ms", "link", "sender", "receiver", "kind", "raw", "revision", "transport", "framing",
          "method", "request_id", "layer", "capability", "marks", "text")
"""The fields kept in an event's tuple, in the tuple's order (``message`` and ``caption`` have slots)."""


class _Field:
    """The attribute behind one field kept in the event's tuple."""

    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index

    def __get__(self, event: TraceEvent | None, owner: type | None = None) -> Any:
        if event is None:
            return self
        return _get_values(event)[self.index]


class _Framing(_Field):
    """The attribute behind ``framing``. The recorder stores ``None`` for "no transport detail" and
    this reads it as an empty dict: a tuple holding a dict, even an empty one, is one the garbage
    collector must keep visiting, while a tuple of strings and numbers it stops watching."""

    __slots__ = ()

    def __get__(self, event: TraceEvent | None, owner: type | None = None) -> Any:
        if event is None:
            return self
        framing = _get_values(event)[self.index]
        return {} if framing is None else framing


class _ReadWhenNeeded:
    """The attribute behind ``message`` or ``caption``: a slot that may hold a :class:`_Later`."""

    __slots__ = ("slot",)

    def __init__(self, slot: Any) -> None:
        self.slot = slot

    def __get__(self, event: TraceEvent | None, owner: type | None = None) -> Any:
        if event is None:
            return self
        value = self.slot.__get__(event)
        if type(value) is _Later:
            value = value.compute(event)
            self.slot.__set__(event, value)
        return value


def _getstate(event: TraceEvent) -> tuple[Any, ...]:
    """Copies and pickles carry the values, never the recipe for them."""
    return (_get_values(event), event.message, event.caption)


def _setstate(event: TraceEvent, state: tuple[Any, ...]) -> None:
    _set_values(event, state[0])
    _set_message(event, state[1])
    _set_caption(event, state[2])


for _index, _name in enumerate(FIELDS):
    setattr(TraceEvent, _name, _Framing(_index) if _name == "framing" else _Field(_index))
TraceEvent.message = _ReadWhenNeeded(TraceEvent._message)  # type: ignore[attr-defined, assignment]
TraceEvent.caption = _ReadWhenNeeded(TraceEvent._caption)  # type: ignore[attr-defined, assignment]
TraceEvent.__getstate__ = _getstate  # type: ignore[method-assign, assignment]
TraceEvent.__setstate__ = _setstate  # type: ignore[attr-defined]


def _message_of_raw(event: TraceEvent) -> Any:
    return json.loads(event.raw or "null")


_MESSAGE_OF_RAW = _Later(_message_of_raw)
"""``message`` of a frame whose text a transport encoded from a message object: the same JSON, read
back from ``raw`` only if someone looks (the recorder never hands out the sender's own dicts)."""

_new = object.__new__


def _event_of(seq: int, t_ms: float, link: str, sender: str, receiver: str, kind: str, message: Any,
              raw: str | None, revision: str | None, transport: str, framing: dict[str, Any] | None,
              method: str | None, request_id: Any, layer: str, capability: str | None, caption: Any,
              marks: tuple[str, ...], text: str | None) -> TraceEvent:
    """``TraceEvent(...)`` from every field, in declaration order, the quick way the recorder's hot
    path uses: one tuple and two slots, no keyword juggling (``caption`` may be a :class:`_Later`,
    ``framing`` ``None`` for an empty dict)."""
    event = _new(TraceEvent)
    _set_values(event, (seq, t_ms, link, sender, receiver, kind, raw, revision, transport, framing, method,
                        request_id, layer, capability, marks, text))
    _set_message(event, message)
    _set_caption(event, caption)
    return event


_current_simulation: Callable[[], Any] | None = None
"""The current simulation (the ``get`` of the world module's context variable), looked up on first use:
the world module imports this one."""


def _find_current_simulation() -> Callable[[], Any]:
    global _current_simulation
    if _current_simulation is None:
        from mcp_sim.sim import world

        _current_simulation = world._current.get
    return _current_simulation

_layer_of = functools.lru_cache(maxsize=4096)(classify_kind)
"""The course's (layer, capability) of a kind and method, remembered: a trace repeats a few methods."""

_APP_LAYER = classify_kind("app", None)
"""(layer, capability) of every app event."""

Captioner = Callable[[TraceEvent], str]
Classifier = Callable[[TraceEvent], tuple[str, str | None]]


class Recorder:
    """Collects :class:`TraceEvent` objects in order. ``enabled=False`` records nothing (for speed)."""

    def __init__(self, *, enabled: bool = True, captioner: Captioner | None = None,
                 classifier: Classifier | None = None) -> None:
        self.enabled = enabled
        self._events: list[TraceEvent] = []
        self._rows: list[tuple[Any, ...]] = []
        """Events recorded but not yet read, as plain tuples (see :attr:`events`)."""
        self._count = 0
        self._pending: dict[tuple[str, str, Any], str] = {}
        self._captioner: Captioner = captioner or _caption
        self._classifier: Classifier = classifier or _classify
        self._marks: list[str] = []
        self._listeners: list[Callable[[TraceEvent], None]] = []
        self._later_caption = _Later(self._captioner)
        """Every event's caption is written by the captioner the first time someone reads it."""
        self._layers_by_kind = self._classifier is _classify
        """The course's classifier looks at nothing but the kind and the method: remember its answers."""
        self._quick = self._layers_by_kind and type(self)._now is Recorder._now
        """Simulated time and the course's classifier: :meth:`record_app` may skip :meth:`_add`."""

    # -- marking -------------------------------------------------------------------------------
    def mark_next(self, *marks: str) -> None:
        """Attach ``marks`` (e.g. ``"attack"``) to the next message recorded."""
        self._marks.extend(marks)

    def subscribe(self, listener: Callable[[TraceEvent], None]) -> None:
        """Call ``listener`` with each new event (a live widget, a test probe …)."""
        self._listeners.append(listener)

    # -- recording -----------------------------------------------------------------------------
    def _now(self) -> float:
        """The simulated time in milliseconds, rounded to microseconds (0.0 outside a simulation)."""
        sim = (_current_simulation or _find_current_simulation())()
        return sim.now_ms() if sim is not None else 0.0

    def _add(self, t_ms: float | None, link: str, sender: str, receiver: str, kind: str, message: Any,
             raw: str | None, revision: str | None, transport: str, framing: dict[str, Any] | None,
             method: str | None, request_id: Any, marks: tuple[str, ...], text: str | None) -> None:
        """Note the next event: classify it (layer, capability) and keep its fields as one row, then
        tell the listeners. This runs for every frame of every simulation, so it does only that.

        A row is a plain tuple, and becomes a :class:`TraceEvent` when someone reads :attr:`events`.
        A tuple of strings and numbers is something Python's garbage collector stops watching, while
        an object it must visit again at every collection: a benchmark records tens of thousands of
        events and reads none. ``message`` may be ``...``: the JSON of ``raw``, parsed on reading."""
        self._count = seq = self._count + 1
        if t_ms is None:
            t_ms = self._now()
        if self._layers_by_kind:
            layer, capability = _layer_of(kind, method)
        else:
            layer, capability = self._classifier(_event_of(
                seq, t_ms, link, sender, receiver, kind, _MESSAGE_OF_RAW if message is ... else message, raw,
                revision, transport, framing, method, request_id, "transports", None, "", marks, text))
        self._rows.append((seq, t_ms, link, sender, receiver, kind, raw, revision, transport, framing, method,
                           request_id, layer, capability, marks, text, message))
        if self._listeners:
            event = self.events[-1]
            for listener in self._listeners:
                listener(event)

    @property
    def events(self) -> list[TraceEvent]:
        """Every event so far, in order. This is the recorder's own list (a listener may replace its
        last event), brought up to date each time the attribute is read: read ``recorder.events``
        again after more was recorded rather than keeping the list from before."""
        rows = self._rows
        if rows:
            caption = self._later_caption
            for row in rows:
                event = _new(TraceEvent)
                size = len(row)
                if size == 17:  # every field (see _add)
                    _set_values(event, row[:16])
                    message = row[16]
                elif size == 11:  # a request or a result (see record_sent)
                    seq, t_ms, link, sender, receiver, kind, raw, revision, transport, method, rid = row
                    _set_values(event, (seq, t_ms, link, sender, receiver, kind, raw, revision, transport, None,
                                        method, rid, *_layer_of(kind, method), (), None))
                    message = ...
                else:  # app talk (see record_app)
                    seq, t_ms, link, sender, receiver, text, message, marks = row
                    if not isinstance(text, str):
                        text = text()  # written only now that someone reads it (see record_app)
                    if callable(message):
                        message = message()
                    _set_values(event, (seq, t_ms, link, sender, receiver, "app", None, None, "app", None, None,
                                        None, *_APP_LAYER, marks, text))
                _set_message(event, _MESSAGE_OF_RAW if message is ... else message)
                _set_caption(event, caption)
                self._events.append(event)
            rows.clear()
        return self._events

    def record_message(self, *, link: str, sender: str, receiver: str, raw: str | None = None,
                       message: dict[str, Any] | None = None, revision: str | None = None,
                       transport: str = "memory", framing: dict[str, Any] | None = None,
                       marks: tuple[str, ...] = (), t_ms: float | None = None,
                       sent: JSONRPCMessage | None = None) -> TraceEvent | None:
        """Record one JSON-RPC frame. Give the ``raw`` text as sent; ``message`` is parsed from it
        when not given. Unreadable frames are recorded as ``invalid``.

        A transport that encoded ``raw`` from a message object passes that object as ``sent``: then
        the kind, method and id are read from it instead of from the text (the text is parsed only
        when someone reads the event's ``message``)."""
        if not self.enabled:
            self._marks.clear()
            return None
        if sent is not None and message is None and raw is not None:
            kind = _kind_of_sent(sent)
            if kind is not None:
                self._record_sent(sent, kind, link, sender, receiver, raw, revision, transport, framing, marks, t_ms)
                return self.events[-1]
        self._record_text(link, sender, receiver, raw, message, revision, transport, framing, marks, t_ms)
        return self.events[-1]

    def record_sent(self, link: str, sender: str, receiver: str, raw: str, revision: str | None,
                    transport: str, sent: JSONRPCMessage) -> None:
        """``record_message(link=…, sender=…, receiver=…, raw=…, revision=…, transport=…, sent=…)``,
        the way a transport calls it for every frame it encoded itself (positional, no framing, and
        nothing returned: the event is made when someone reads :attr:`events`)."""
        # The two messages of every round trip, recognised at a glance and kept as a short row (see
        # :attr:`events`); anything else, or anything marked or listened to, goes the general way.
        if self.enabled and self._quick and not self._marks and not self._listeners:
            of_type, kind = type(sent), None
            if of_type is JSONRPCRequest:
                rid, method, params = sent  # type: ignore[misc]
                if (type(rid) is int or type(rid) is str) and type(method) is str and method \
                        and (params is None or type(params) is dict):
                    kind = "request"
                    self._pending[(link, sender, rid)] = method
            elif of_type is JSONRPCResultResponse:
                rid, result = sent  # type: ignore[misc]
                if (type(rid) is int or type(rid) is str) and type(result) is dict:
                    kind, method = "response", self._pending.get((link, receiver, rid))
            if kind is not None:
                self._count = seq = self._count + 1
                sim = (_current_simulation or _find_current_simulation())()
                self._rows.append((seq, sim._loop.now_ms if sim is not None and sim._loop is not None else 0.0,
                                   link, sender, receiver, kind, raw, revision, transport, method, rid))
                return
        if not self.enabled:
            self._marks.clear()
            return
        sent_kind = _kind_of_sent(sent)
        if sent_kind is None:
            self._record_text(link, sender, receiver, raw, None, revision, transport, None, (), None)
        else:
            self._record_sent(sent, sent_kind, link, sender, receiver, raw, revision, transport, None, (), None)

    def _record_text(self, link: str, sender: str, receiver: str, raw: str | None, message: dict[str, Any] | None,
                     revision: str | None, transport: str, framing: dict[str, Any] | None,
                     marks: tuple[str, ...], t_ms: float | None) -> None:
        """:meth:`record_message` the long way: read the frame's text and say what it is."""
        kind = "invalid"
        method: str | None = None
        request_id: Any = None
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
        if message is not None and not is_batch:
            parsed_msg = parse_object(message, raw)
            kind = _KIND_OF_TYPE.get(type(parsed_msg).__name__, "invalid")
        elif message is not None and message["batch"]:
            kind = "batch"
        if message is not None and kind != "invalid":
            request_id = message.get("id")
            if kind == "request":
                method = message["method"]
                self._pending[(link, sender, request_id)] = method
            elif kind == "notification":
                method = message["method"]
            elif kind in ("response", "error") and request_id is not None:
                method = self._pending.get((link, receiver, request_id))
        elif message is not None and not is_batch:
            # An invalid message may still name a method and an id: keep them for the label.
            method = message.get("method") if isinstance(message.get("method"), str) else None
            rid = message.get("id")
            request_id = rid if isinstance(rid, (str, int)) and not isinstance(rid, bool) else None
        all_marks = (*self._marks, *marks)
        self._marks.clear()
        self._add(t_ms, link, sender, receiver, kind, message, raw, revision, transport, framing or None,
                  method, request_id, all_marks, None)

    def _record_sent(self, sent: JSONRPCMessage, kind: str, link: str, sender: str, receiver: str, raw: str,
                     revision: str | None, transport: str, framing: dict[str, Any] | None,
                     marks: tuple[str, ...], t_ms: float | None) -> None:
        """:meth:`record_message` for a well-formed message object: the same event, found without
        parsing ``raw``."""
        if isinstance(sent, (JSONRPCRequest, JSONRPCNotification)):
            method: str | None = sent.method
            request_id: Any = sent.id if isinstance(sent, JSONRPCRequest) else None
            if kind == "request":
                self._pending[(link, sender, request_id)] = sent.method
        else:
            request_id = sent.id
            method = self._pending.get((link, receiver, request_id)) if request_id is not None else None
        if self._marks:
            all_marks = (*self._marks, *marks)
            self._marks.clear()
        else:
            all_marks = tuple(marks)
        self._add(t_ms, link, sender, receiver, kind, ..., raw, revision, transport, framing or None, method,
                  request_id, all_marks, None)

    def record_app(self, *, sender: str, receiver: str, text: str | Callable[[], str], link: str = "app",
                   marks: tuple[str, ...] = (), data: dict[str, Any] | Callable[[], dict[str, Any]] | None = None,
                   t_ms: float | None = None) -> None:
        """Record talk that is not MCP: user → host, host → model, host → user (approval) … (nothing
        is returned: the Host says a lot, and the event is made when someone reads :attr:`events`).

        ``text`` and ``data`` may be functions that write them: they are called when the event is
        first read, so a sentence nobody reads is never written."""
        if not self.enabled:
            return
        if not self._quick or self._listeners:
            if not isinstance(text, str):
                text = text()
            if callable(data):
                data = data()
            self._add(t_ms, link, sender, receiver, "app", data, None, None, "app", None, None, None, marks, text)
            return
        # _add, written out: a round trip through a Host says four of these.
        self._count = seq = self._count + 1
        if t_ms is None:
            sim = (_current_simulation or _find_current_simulation())()
            t_ms = sim._loop.now_ms if sim is not None and sim._loop is not None else 0.0
        self._rows.append((seq, t_ms, link, sender, receiver, text, data, marks))

    def record_event(self, *, kind: str, link: str, sender: str, receiver: str, text: str,
                     transport: str = "memory", framing: dict[str, Any] | None = None,
                     marks: tuple[str, ...] = (), revision: str | None = None,
                     request_id: Any = None, method: str | None = None,
                     t_ms: float | None = None) -> TraceEvent | None:
        """Record a ``log`` (stderr line), ``transport`` (connect/close/drop …) or ``timeout`` event."""
        if not self.enabled:
            return None
        self._add(t_ms, link, sender, receiver, kind, None, None, revision, transport, framing or None,
                  method, request_id, marks, text)
        return self.events[-1]

    # -- reading -------------------------------------------------------------------------------
    def __iter__(self) -> Iterator[TraceEvent]:
        return iter(self.events)

    def __len__(self) -> int:
        return self._count

    def messages(self) -> list[dict[str, Any]]:
        """The JSON-RPC messages only, in order."""
        return [e.message for e in self.events if e.message is not None and e.kind != "app"]

    def clear(self) -> None:
        self._events.clear()
        self._rows.clear()
        self._count = 0
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
