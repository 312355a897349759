"""Streamable HTTP as data: requests, responses, headers, status codes (course chapter 06).

The simulator does not open sockets; an HTTP exchange is a pair of plain objects — an
:class:`HttpRequest` (method, path, headers, body) and an :class:`HttpResponse` (status, headers, and
either a body or an SSE stream) — travelling between an :class:`~mcp_sim.transports.http_client.HttpClientStream`
and a :class:`~mcp_sim.transports.http_server.SimulatedHttpServer` on the virtual clock. Each
exchange is an :class:`HttpExchange`: the server writes the response into it, frame by frame, and
the client reads it. Every frame is recorded in the trace at the moment it goes on the wire, with
``framing={"http": {"request": …, "response": …}, "sse": …}``.

Two eras share this vocabulary (see :mod:`~mcp_sim.transports.http_server` for the rules):

* **legacy** Streamable HTTP (2025-03-26 … 2025-11-25): sessions (``Mcp-Session-Id``), a ``GET``
  stream for server-initiated messages, resumable SSE;
* **modern** (2026-07-28): ``POST`` only, stateless, the method and name mirrored in headers
  (``Mcp-Method``, ``Mcp-Name``), HTTP status derived from the JSON-RPC answer.

Header names are case-insensitive (RFC 9110); :class:`Headers` keeps the spelling it was given for
display and compares names without case.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal, Protocol

import anyio

from mcp_sim.protocol.errors import (
    HEADER_MISMATCH,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
)
from mcp_sim.sim.world import Simulation
from mcp_sim.transports.base import LinkInfo, TransportClosed
from mcp_sim.transports.faults import Wire
from mcp_sim.transports.sse import SseEvent
from mcp_sim.wire.jsonrpc import INVALID_PARAMS, METHOD_NOT_FOUND

__all__ = [
    "ACCEPT_BOTH",
    "LAST_EVENT_ID",
    "MCP_METHOD",
    "MCP_NAME",
    "MCP_PROTOCOL_VERSION",
    "MCP_SESSION_ID",
    "NAMED_METHODS",
    "REASONS",
    "Headers",
    "HttpExchange",
    "HttpRequest",
    "HttpResponse",
    "HttpStatusError",
    "modern_status_for",
]

MCP_SESSION_ID: Final = "Mcp-Session-Id"
MCP_PROTOCOL_VERSION: Final = "MCP-Protocol-Version"
MCP_METHOD: Final = "Mcp-Method"
MCP_NAME: Final = "Mcp-Name"
LAST_EVENT_ID: Final = "Last-Event-ID"
ACCEPT_BOTH: Final = "application/json, text/event-stream"

NAMED_METHODS: Final[Mapping[str, str]] = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
"""2026-07-28: the requests whose ``params.name``/``params.uri`` is mirrored in the ``Mcp-Name`` header."""

REASONS: Final[Mapping[int, str]] = {
    200: "OK", 202: "Accepted", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden",
    404: "Not Found", 405: "Method Not Allowed", 406: "Not Acceptable", 409: "Conflict",
    415: "Unsupported Media Type", 500: "Internal Server Error",
}


def modern_status_for(error_code: int | None) -> int:
    """2026-07-28: the HTTP status of a JSON response follows its JSON-RPC answer — ``-32601`` method
    not found → 404; invalid params ``-32602``, missing client capability ``-32021``, unsupported
    version ``-32022`` and header mismatch ``-32020`` → 400; any result or other error → 200."""
    if error_code == METHOD_NOT_FOUND:
        return 404
    if error_code in (INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION,
                      HEADER_MISMATCH):
        return 400
    return 200


class Headers:
    """An ordered, case-insensitive set of HTTP headers (one value per name is all MCP needs)."""

    def __init__(self, items: Mapping[str, str] | Iterable[tuple[str, str]] = ()) -> None:
        self._items: dict[str, tuple[str, str]] = {}
        pairs = items.items() if isinstance(items, Mapping) else items
        for name, value in pairs:
            self[name] = value

    def __setitem__(self, name: str, value: str) -> None:
        self._items[name.lower()] = (name, value)

    def __getitem__(self, name: str) -> str:
        return self._items[name.lower()][1]

    def __delitem__(self, name: str) -> None:
        del self._items[name.lower()]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._items

    def __iter__(self) -> Iterator[str]:
        return (name for name, _ in self._items.values())

    def __len__(self) -> int:
        return len(self._items)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Headers):
            return self._items == other._items
        if isinstance(other, Mapping):
            return self == Headers(other)
        return NotImplemented

    def get(self, name: str, default: str | None = None) -> str | None:
        item = self._items.get(name.lower())
        return item[1] if item is not None else default

    def to_dict(self) -> dict[str, str]:
        """The headers with their original spelling, in order (as shown in the trace)."""
        return dict(self._items.values())

    def __repr__(self) -> str:
        return f"Headers({self.to_dict()!r})"


@dataclass
class HttpRequest:
    """One HTTP request: ``POST`` with a JSON-RPC body, ``GET`` to open a stream, ``DELETE`` to end a
    session."""

    method: str
    path: str = "/mcp"
    headers: Headers = field(default_factory=Headers)
    body: str = ""

    def summary(self) -> dict[str, Any]:
        return {"method": self.method, "path": self.path, "headers": self.headers.to_dict()}

    def line(self) -> str:
        return f"{self.method} {self.path}"


@dataclass
class HttpResponse:
    """One HTTP response head with, for ``application/json``, its body. For ``text/event-stream``
    ``body`` is ``None`` and the events follow (:attr:`events` collects them on the client side)."""

    status: int
    headers: Headers = field(default_factory=Headers)
    body: str | None = None
    events: list[SseEvent] = field(default_factory=list)

    @property
    def reason(self) -> str:
        return REASONS.get(self.status, "")

    @property
    def content_type(self) -> str | None:
        return self.headers.get("Content-Type")

    @property
    def is_sse(self) -> bool:
        return (self.content_type or "").startswith("text/event-stream")

    def json(self) -> Any:
        """The body parsed as JSON (``None`` without a body)."""
        return json.loads(self.body) if self.body else None

    def summary(self) -> dict[str, Any]:
        return {"status": self.status, "reason": self.reason, "headers": self.headers.to_dict()}

    def status_line(self) -> str:
        return f"HTTP {self.status} {self.reason}".rstrip()


class HttpStatusError(TransportClosed):
    """The server refused an HTTP request at the transport level (401, 403, 405, a 400 without a
    JSON-RPC answer …). ``response`` is the full response: read ``response.headers["WWW-Authenticate"]``
    after a 401, for example."""

    def __init__(self, request: HttpRequest, response: HttpResponse) -> None:
        body = f": {response.body}" if response.body else ""
        super().__init__(f"{request.line()} → {response.status_line()}{body}")
        self.request = request
        self.response = response

    @property
    def status(self) -> int:
        return self.response.status


class ClientLink(Protocol):
    """What an exchange needs from the client end that opened it: names, revision, the wire back."""

    sim: Simulation
    info: LinkInfo
    revision: str | None
    to_client: Wire


FrameKind = Literal["response", "head", "event", "end", "cut"]


@dataclass(frozen=True)
class _Frame:
    kind: FrameKind
    response: HttpResponse | None = None
    event: SseEvent | None = None


class HttpExchange:
    """One HTTP request and its response, on the simulated network.

    The client creates it with its request; the server answers with :meth:`respond` (a complete
    response), or :meth:`open_sse` then :meth:`send_event` … :meth:`end` (a stream). Every frame the
    server writes is recorded and crosses the client link's wire (latency and faults), then waits in
    this exchange until the client reads it with :meth:`next_frame`. :meth:`client_close` is the
    client hanging up; the server learns it through :meth:`on_client_close` callbacks (2026-07-28:
    that *is* the cancellation of the request).
    """

    def __init__(self, link: ClientLink, request: HttpRequest) -> None:
        self.link = link
        self.request = request
        self.response: HttpResponse | None = None
        self.client_closed = False
        self.server_done = False
        self._frames: deque[_Frame] = deque()
        self._arrived: anyio.Event | None = None
        self._handler: Callable[[_Frame], None] | None = None
        self._on_close: list[Any] = []

    # -- recording ----------------------------------------------------------------------------------
    def _framing(self, event: SseEvent | None = None) -> dict[str, Any]:
        framing: dict[str, Any] = {"http": {"request": self.request.summary()}}
        if self.response is not None:
            framing["http"]["response"] = self.response.summary()
        if event is not None:
            framing["sse"] = event.framing()
        return framing

    def _record_event(self, text: str, marks: tuple[str, ...] = (), event: SseEvent | None = None) -> None:
        if not self.link.sim.recorder.enabled:
            return
        info = self.link.info
        self.link.sim.recorder.record_event(kind="transport", link=info.name, sender=info.server,
                                            receiver=info.client, text=text, transport="http",
                                            framing=self._framing(event), marks=marks, revision=self.link.revision)

    def _record_message(self, raw: str, marks: tuple[str, ...], event: SseEvent | None = None) -> None:
        if not self.link.sim.recorder.enabled:
            return
        info = self.link.info
        self.link.sim.recorder.record_message(link=info.name, sender=info.server, receiver=info.client, raw=raw,
                                              revision=self.link.revision, transport="http",
                                              framing=self._framing(event), marks=marks)

    def _put(self, frame: _Frame) -> None:
        if self.client_closed:
            return  # the client hung up; what was in flight falls on the floor
        if self._handler is not None:
            self._handler(frame)
            return
        self._frames.append(frame)
        if self._arrived is not None:
            self._arrived.set()

    # -- the server writes ------------------------------------------------------------------------
    def respond(self, response: HttpResponse) -> None:
        """A complete response: a JSON body (one JSON-RPC message), or no body (202, 4xx …)."""
        if self.server_done or self.client_closed:
            self.server_done = True
            return
        self.server_done = True
        self.response = response
        wire = self.link.to_client
        if response.body:
            for shipment in wire.plan(response.body):
                body = shipment.frame
                self._record_message(body, shipment.marks)
                if shipment.action is not None:
                    self._cut(shipment.action)
                    return
                sent = HttpResponse(response.status, response.headers, body)
                wire.ship(shipment, lambda _f, r=sent: self._put(_Frame("response", r)))  # type: ignore[misc]
        else:
            self._record_event(response.status_line(), ())
            wire.ship_control(lambda: self._put(_Frame("response", response)))

    def open_sse(self, response: HttpResponse) -> None:
        """The head of a ``text/event-stream`` response: events follow."""
        self.response = response
        if self.client_closed:
            return
        self._record_event(f"{response.status_line()}: text/event-stream (SSE stream opened)")
        self.link.to_client.ship_control(lambda: self._put(_Frame("head", response)))

    def send_event(self, event: SseEvent) -> bool:
        """Write one SSE event. Returns ``False`` when the stream is gone (hung up or cut)."""
        if self.server_done or self.client_closed:
            return False
        wire = self.link.to_client
        if not event.data:  # a priming event: an id (and maybe retry) with empty data
            self._record_event(f"SSE priming event (id {event.id})", ("priming",), event)
            wire.ship_control(lambda: self._put(_Frame("event", event=event)))
            return True
        for shipment in wire.plan(event.data, sse=True):
            sent = SseEvent(shipment.frame, event.id, event.event, event.retry)
            self._record_message(shipment.frame, shipment.marks, sent)
            if shipment.action is not None:
                self._cut(shipment.action)
                return False
            wire.ship(shipment, lambda _f, e=sent: self._put(_Frame("event", event=e)))  # type: ignore[misc]
        return True

    def end(self) -> None:
        """The server closes the stream (after the final response)."""
        if self.server_done:
            return
        self.server_done = True
        if self.client_closed:
            return
        self._record_event("server closes the SSE stream")
        self.link.to_client.ship_control(lambda: self._put(_Frame("end")))

    def _cut(self, action: str) -> None:
        """The connection breaks under the server's pen (fault ``cut_sse_at``/``disconnect_at``)."""
        self.server_done = True
        self._record_event("the connection is cut; the client gets no more of this response", (action,))
        self.link.to_client.ship_control(lambda: self._put(_Frame("cut")))
        self._notify_close()

    def abort(self) -> None:
        """The server side disappears (crash, session ended): the client sees the stream end abruptly."""
        if self.server_done:
            return
        self.server_done = True
        if not self.client_closed:
            self.link.to_client.ship_control(lambda: self._put(_Frame("cut")))

    def on_client_close(self, callback: Any) -> None:
        """Call ``callback()`` when the connection goes away before the server finished."""
        self._on_close.append(callback)

    # -- the client reads --------------------------------------------------------------------------
    async def next_frame(self) -> _Frame:
        """Wait for the next frame of the response (``cut`` once the client hung up)."""
        while not self._frames:
            if self.client_closed:
                return _Frame("cut")
            self._arrived = anyio.Event()
            await self._arrived.wait()
        return self._frames.popleft()

    def handle_frames(self, handler: Callable[[_Frame], None] | None) -> None:
        """Have ``handler(frame)`` called for each frame as it arrives (after those already waiting),
        instead of reading them with :meth:`next_frame`: no task needs to wait for an answer."""
        while self._frames and handler is not None:
            handler(self._frames.popleft())
        self._handler = handler

    def client_close(self) -> None:
        """The client hangs up. Legacy: the server keeps the stream's events for resumption;
        2026-07-28: the server treats it as the request's cancellation."""
        if self.client_closed:
            return
        self.client_closed = True
        self._frames.clear()
        if self._arrived is not None:
            self._arrived.set()
        if not self.server_done:
            self._notify_close()

    def _notify_close(self) -> None:
        callbacks, self._on_close = self._on_close, []
        for callback in callbacks:
            callback()
