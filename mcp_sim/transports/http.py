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

The first half of this module is sans-IO: header names, which methods mirror a name in ``Mcp-Name``,
the header checks, content negotiation and the status a JSON-RPC answer travels with — the one place
these facts live, read by the simulated transport and the real wire (:mod:`mcp_sim.bridge`) alike, so
a learner who changes one sees it change in both. What a trace may show of an exchange (no secret) is
:mod:`~mcp_sim.transports.http_redact`. The second half (:class:`HttpExchange`) is the simulated network.
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
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    PARSE_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
    McpError,
)
from mcp_sim.protocol.meta import PROTOCOL_VERSION
from mcp_sim.protocol.revisions import LATEST, REVISIONS, era_of_version
from mcp_sim.sim.world import Simulation
from mcp_sim.transports.base import LinkInfo, TransportClosed
from mcp_sim.transports.faults import Wire
from mcp_sim.transports.http_redact import redact, shown_headers
from mcp_sim.transports.sse import SseEvent
from mcp_sim.wire.jsonrpc import JSONRPCMessage, JSONRPCNotification, JSONRPCRequest

__all__ = [
    "ACCEPT_BOTH",
    "EVENT_STREAM",
    "JSON",
    "LAST_EVENT_ID",
    "MCP_METHOD",
    "MCP_NAME",
    "MCP_PROTOCOL_VERSION",
    "MCP_SESSION_ID",
    "MODERN_STATUS_FOR_ERROR",
    "NAMED_METHODS",
    "REASONS",
    "Headers",
    "HttpExchange",
    "HttpRequest",
    "HttpResponse",
    "HttpStatusError",
    "accepts",
    "check_modern_headers",
    "error_code_for_status",
    "is_modern_version",
    "message_version",
    "modern_request_headers",
    "modern_status_for",
    "name_of",
    "refuse_content",
]

# --- the rulebook (sans-IO) ----------------------------------------------------------------------

MCP_SESSION_ID: Final = "Mcp-Session-Id"
MCP_PROTOCOL_VERSION: Final = "MCP-Protocol-Version"
MCP_METHOD: Final = "Mcp-Method"
MCP_NAME: Final = "Mcp-Name"
LAST_EVENT_ID: Final = "Last-Event-ID"
JSON: Final = "application/json"
EVENT_STREAM: Final = "text/event-stream"
ACCEPT_BOTH: Final = f"{JSON}, {EVENT_STREAM}"

NAMED_METHODS: Final[Mapping[str, str]] = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    # The tasks extension (io.modelcontextprotocol/tasks) names its task the same way.
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}
"""2026-07-28: method → the ``params`` member mirrored in the ``Mcp-Name`` header, so a proxy can
route a call by tool, prompt, resource or task without parsing the JSON body."""

REASONS: Final[Mapping[int, str]] = {
    200: "OK", 202: "Accepted", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden",
    404: "Not Found", 405: "Method Not Allowed", 406: "Not Acceptable", 409: "Conflict",
    415: "Unsupported Media Type", 500: "Internal Server Error",
}

MODERN_STATUS_FOR_ERROR: Final[Mapping[int, int]] = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    INVALID_PARAMS: 400,
    HEADER_MISMATCH: 400,
    MISSING_REQUIRED_CLIENT_CAPABILITY: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
    METHOD_NOT_FOUND: 404,
}
"""2026-07-28: the HTTP status of a JSON answer follows its JSON-RPC error code (any other error, and
every result, travels with ``200``). Legacy endpoints answer every JSON-RPC message with ``200``."""


def modern_status_for(error_code: int | None) -> int:
    """2026-07-28: the status of a JSON response — ``-32601`` method not found → 404; an unreadable or
    invalid request, invalid params ``-32602``, header mismatch ``-32020``, missing client capability
    ``-32021`` and unsupported version ``-32022`` → 400; a result (``None``) or any other error → 200."""
    return 200 if error_code is None else MODERN_STATUS_FOR_ERROR.get(error_code, 200)


_ERROR_FOR_STATUS: Final[Mapping[int, int]] = {400: INVALID_REQUEST, 404: METHOD_NOT_FOUND, 405: METHOD_NOT_FOUND}


def error_code_for_status(status: int) -> int:
    """The JSON-RPC code a client reports to its session when a request is refused with an HTTP error
    that carries no JSON-RPC answer (the other direction of :func:`modern_status_for`): the session
    always gets an answer to its request, even from a server that only spoke HTTP."""
    return _ERROR_FOR_STATUS.get(status, INTERNAL_ERROR)


def is_modern_version(version: str | None) -> bool:
    """True for a version of the modern, stateless era (2026-07-28 …). A version this simulator does
    not know counts as modern when it is dated after the newest legacy revision."""
    if version is None:
        return False
    revision = REVISIONS.get(version)
    return revision.is_modern if revision is not None else era_of_version(version) == "modern"


def message_version(message: JSONRPCMessage) -> str | None:
    """The protocol version a modern request names in ``params._meta`` (``None`` if it names none)."""
    params = getattr(message, "params", None)
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(PROTOCOL_VERSION) if isinstance(meta, dict) else None
    return version if isinstance(version, str) else None


def name_of(message: JSONRPCRequest | JSONRPCNotification) -> str | None:
    """The value a modern client puts in ``Mcp-Name`` (``None`` for methods that name nothing)."""
    member = NAMED_METHODS.get(message.method)
    if member is None or not isinstance(message.params, dict):
        return None
    value = message.params.get(member)
    return value if isinstance(value, str) else None


def modern_request_headers(message: JSONRPCRequest | JSONRPCNotification, version: str) -> dict[str, str]:
    """The routing headers a 2026-07-28 client sends with ``message``: they repeat what the body says."""
    headers = {MCP_PROTOCOL_VERSION: version, MCP_METHOD: message.method}
    name = name_of(message)
    if name is not None:
        headers[MCP_NAME] = name
    return headers


_HEADER_RULE: Final = ("2026-07-28 Streamable HTTP: MCP-Protocol-Version, Mcp-Method and (for tools/call, "
                       "prompts/get, resources/read and tasks/*) Mcp-Name MUST be present and match the "
                       "body; otherwise 400 with -32020.")


def _header_mismatch(headers: Headers | Mapping[str, str],
                     message: JSONRPCRequest | JSONRPCNotification) -> tuple[str, str] | None:
    version = headers.get(MCP_PROTOCOL_VERSION)
    if version is None:
        return MCP_PROTOCOL_VERSION, f"the {MCP_PROTOCOL_VERSION} header is required"
    meta_version = message_version(message)
    if meta_version is not None and meta_version != version:
        return MCP_PROTOCOL_VERSION, f"{MCP_PROTOCOL_VERSION} is {version!r} but _meta says {meta_version!r}"
    method = headers.get(MCP_METHOD)
    if method is None:
        return MCP_METHOD, f"the {MCP_METHOD} header is required"
    if method != message.method:
        return MCP_METHOD, f"{MCP_METHOD} is {method!r} but the body's method is {message.method!r}"
    member = NAMED_METHODS.get(message.method)
    if member is not None:
        name = headers.get(MCP_NAME)
        if name is None:
            return MCP_NAME, f"the {MCP_NAME} header is required for {message.method}"
        params = message.params if isinstance(message.params, dict) else {}
        if name != params.get(member):
            return MCP_NAME, f"{MCP_NAME} is {name!r} but params.{member} is {params.get(member)!r}"
    return None


def check_modern_headers(headers: Headers | Mapping[str, str],
                         message: JSONRPCRequest | JSONRPCNotification) -> McpError | None:
    """Compare a 2026-07-28 POST's headers with its body (``headers`` must compare names without
    case, as :class:`Headers`, Starlette's and httpx's do): the ``-32020`` error to answer with status
    400 (``data.reason`` says what is wrong, ``data.header`` which header), or ``None`` if they agree.
    A server checks this before its program sees the request."""
    found = _header_mismatch(headers, message)
    if found is None:
        return None
    header, reason = found
    return McpError(HEADER_MISMATCH, "Header mismatch", {"reason": reason, "header": header},
                    rule=_HEADER_RULE, revision=LATEST)


def accepts(accept: str | None, media_type: str) -> bool:
    """Does an ``Accept`` header accept ``media_type``? Wildcards (``*/*``, ``text/*``) count; a
    request without ``Accept`` accepts nothing here, because MCP requires the client to send one."""
    if not accept:
        return False
    types = {part.split(";")[0].strip().lower() for part in accept.split(",")}
    return bool({media_type, f"{media_type.split('/')[0]}/*", "*/*"} & types)


def refuse_content(method: str, headers: Headers | Mapping[str, str]) -> tuple[int, str] | None:
    """Content negotiation, both eras: the status and reason to refuse a request with, or ``None``.

    A POST must accept both ``application/json`` and ``text/event-stream`` (the server chooses which
    one answers) and carry a JSON body (``406``/``415``); a GET, which opens a stream, must accept
    ``text/event-stream`` (``406``)."""
    accept = headers.get("Accept")
    if method == "POST":
        if not (accepts(accept, JSON) and accepts(accept, EVENT_STREAM)):
            return 406, f"Not Acceptable: a POST must accept {ACCEPT_BOTH}"
        content_type = (headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if content_type != JSON:
            return 415, f"Unsupported Media Type: the body must be {JSON}"
    elif method == "GET" and not accepts(accept, EVENT_STREAM):
        return 406, f"Not Acceptable: GET must accept {EVENT_STREAM}"
    return None


# --- requests and responses as data --------------------------------------------------------------

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

    def summary(self, origin: str | None = None) -> dict[str, Any]:
        """The request's head as a trace keeps it (secrets masked: :func:`shown_headers`)."""
        head: dict[str, Any] = {"method": self.method, "path": redact(self.path) or self.path}
        if origin is not None:
            head["origin"] = origin
        head["headers"] = shown_headers(self.headers)
        return head

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
        """The response's head as a trace keeps it (secrets masked: :func:`shown_headers`)."""
        return {"status": self.status, "reason": self.reason, "headers": shown_headers(self.headers)}

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


class HttpEndpoint(Protocol):
    """What a client end needs from the server it talks to: where it lives, and its front door.

    :class:`~mcp_sim.transports.http_server.SimulatedHttpServer` is one; the client is written
    against this port, so the client module never imports the server module."""

    sim: Simulation
    name: str
    path: str
    participant: str

    async def handle(self, exchange: HttpExchange) -> Literal["accepted", "answered"]: ...

    def crash(self) -> None: ...


FrameKind = Literal["response", "head", "event", "end", "cut"]


@dataclass(frozen=True)
class _Frame:
    kind: FrameKind
    response: HttpResponse | None = None
    event: SseEvent | None = None


_LAST_FRAMES: Final = frozenset({"response", "end", "cut"})
"""Frames after which an exchange carries nothing more to its client."""


class HttpExchange:
    """One HTTP request and its response, on the simulated network.

    The client creates it with its request; the server answers with :meth:`respond` (a complete
    response), or :meth:`open_sse` then :meth:`send_event` … :meth:`end` (a stream). Every frame the
    server writes is recorded and crosses the client link's wire (latency and faults), then waits in
    this exchange until the client reads it with :meth:`next_frame`. :meth:`client_close` is the
    client hanging up; the server learns it through :meth:`on_client_close` callbacks (2026-07-28:
    that *is* the cancellation of the request).

    Thousands of exchanges can be open at once, so an exchange makes nothing it may not need: no
    buffer while a handler takes the frames, no list until someone asks to hear of a hang-up.
    """

    __slots__ = ("__weakref__", "_arrived", "_frames", "_handler", "_on_close", "client_closed", "link",
                 "request", "response", "server_done")

    def __init__(self, link: ClientLink, request: HttpRequest) -> None:
        self.link = link
        self.request = request
        self.response: HttpResponse | None = None
        self.client_closed = False
        self.server_done = False
        self._frames: deque[_Frame] | None = None
        """Frames that arrived and wait for :meth:`next_frame` (made by the first one)."""
        self._arrived: anyio.Event | None = None
        self._handler: Callable[[_Frame], None] | None = None
        self._on_close: list[Callable[[], None]] | None = None

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
        handler = self._handler
        if handler is not None:
            if frame.kind in _LAST_FRAMES:
                self._handler = None  # nothing follows: let go of the reader (it holds us)
            handler(frame)
            return
        if self._frames is None:
            self._frames = deque()
        self._frames.append(frame)
        if self._arrived is not None:
            self._arrived.set()

    # -- the server writes ------------------------------------------------------------------------
    def respond(self, response: HttpResponse) -> None:
        """A complete response: a JSON body (one JSON-RPC message), or no body (202, 4xx …)."""
        if self.server_done or self.client_closed:
            self._done_serving()
            return
        self._done_serving()
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
        self._done_serving()
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
        self._done_serving()
        if not self.client_closed:
            self.link.to_client.ship_control(lambda: self._put(_Frame("cut")))

    def _done_serving(self) -> None:
        """The server has written its last frame. The hang-up callbacks can never be called any more
        (a hang-up only matters before the server finished), so they are dropped: they point back at
        the server's stream logs and calls, and keeping them would make a reference cycle per
        exchange that only the garbage collector's full passes could free."""
        self.server_done = True
        self._on_close = None

    def on_client_close(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` when the connection goes away before the server finished."""
        if self.server_done:
            return
        if self._on_close is None:
            self._on_close = []
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
        self._frames = None
        self._handler = None  # frames now fall on the floor (see _put)
        if self._arrived is not None:
            self._arrived.set()
        if not self.server_done:
            self._notify_close()

    def _notify_close(self) -> None:
        callbacks, self._on_close = self._on_close or [], None
        for callback in callbacks:
            callback()
