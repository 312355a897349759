"""The client end of Streamable HTTP, both eras (course chapter 06).

:class:`HttpClientStream` is a :class:`~mcp_sim.transports.base.MessageStream`: the client session
sends and receives JSON-RPC messages and this class turns each one into HTTP, exactly as the spec's
"sending messages to the server" and "listening for messages from the server" sections describe.

* Every message is its own ``POST`` with ``Accept: application/json, text/event-stream`` and
  ``Content-Type: application/json``.
* The era of each message decides its headers. **Legacy** (no ``_meta`` protocolVersion, or a
  legacy ``revision``): ``Mcp-Session-Id`` once the server issued one, ``MCP-Protocol-Version`` after
  initialization. **Modern** (``_meta["io.modelcontextprotocol/protocolVersion"]`` is 2026-07-28+):
  ``MCP-Protocol-Version`` (copied from ``_meta``, so they always agree), ``Mcp-Method`` and, for
  ``tools/call``/``resources/read``/``prompts/get`` (and ``tasks/*``), ``Mcp-Name`` — see
  :func:`~mcp_sim.transports.http.modern_request_headers`, which the real client uses too.
* ``send`` of a request returns once the server has accepted it; the answer — one JSON body or the
  events of an SSE stream — arrives through ``receive``. Transport-level refusals raise from ``send``:
  :class:`~mcp_sim.transports.base.SessionExpired` for a legacy ``404`` (start again with
  ``initialize``), :class:`~mcp_sim.transports.http.HttpStatusError` for 401/403/405 and 400s that
  carry no JSON-RPC answer. A refusal that *is* a JSON-RPC answer to the request (2026-07-28's
  ``400`` + ``-32020``, a parse error) is delivered to ``receive`` like any answer.
* Legacy: after ``notifications/initialized`` the client opens the ``GET`` stream for server-initiated
  messages; when a stream breaks it reconnects with ``GET`` + ``Last-Event-ID`` (after the ``retry``
  the server asked for) and receives what it missed; ``aclose`` sends ``DELETE``.
* Modern: a ``notifications/cancelled`` from the session is *not* sent: closing the request's response stream
  is the cancellation in 2026-07-28, so this class closes it and records why. A broken stream cannot be
  resumed: the request is lost and the session must re-issue it.

:meth:`HttpClientStream.http` is one raw HTTP exchange (any method, any headers) for lessons on statuses.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any, TypeGuard

import anyio
from anyio.abc import TaskGroup

from mcp_sim.protocol.revisions import revision_at
from mcp_sim.security.identity import AuthInfo
from mcp_sim.transports.base import LinkInfo, SessionExpired, StreamLost, TransportClosed
from mcp_sim.transports.faults import Faults, LinkFaults, Shipment, Wire, decode_frame
from mcp_sim.transports.http import (
    ACCEPT_BOTH,
    EVENT_STREAM,
    JSON,
    LAST_EVENT_ID,
    MCP_PROTOCOL_VERSION,
    MCP_SESSION_ID,
    Headers,
    HttpEndpoint,
    HttpExchange,
    HttpRequest,
    HttpResponse,
    HttpStatusError,
    is_modern_version,
    message_version,
    modern_request_headers,
)
from mcp_sim.transports.http_mailbox import Mailbox
from mcp_sim.transports.sse import SseEvent, parse_event_id
from mcp_sim.wire.jsonrpc import (
    PARSE_ERROR,
    InvalidMessage,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    RequestId,
    encode,
)

__all__ = ["HttpClientStream"]

RESPONSE_TIMEOUT = 30.0
"""Seconds (virtual) the client waits for a response's status line and body (not for the events of
an open SSE stream, which may rightly be quiet for long). A body lost on the way must not leave a
caller waiting for ever: past this deadline the client hangs up and reports the connection broken."""

MAX_EMPTY_RESUMES = 5
"""How many times in a row a broken stream is resumed without bringing a single new event: a server
that breaks every resumed stream at once must not keep the client reconnecting for ever."""

DEFAULT_RECONNECT_MS = 1000
"""How long a legacy client waits before resuming a broken stream when the server sent no ``retry``."""
_STREAM_LOST = "\x00stream lost"  # this object (``is``) in the inbox: a StreamLost, after what came before it


class HttpClientStream:
    """One client's end of a Streamable HTTP link to a :class:`SimulatedHttpServer`.

    Built by :meth:`SimulatedHttpServer.connect` (or ``open_link(..., transport="http")``). Attributes
    worth reading in a lesson: :attr:`session_id` (legacy), :attr:`protocol_version` (negotiated,
    legacy), :attr:`extra_headers` (set or, with ``None``, remove headers on every request — to break
    the rules on purpose).
    """

    def __init__(self, server: HttpEndpoint, name: str, *, faults: Faults | LinkFaults | None = None,
                 token: str | None = None, origin: str | None = None, revision: str | None = None,
                 open_get_stream: bool = True, task_group: TaskGroup,
                 response_timeout: float = RESPONSE_TIMEOUT) -> None:
        self.server = server
        self.response_timeout = response_timeout
        self.sim = server.sim
        self.task_group = task_group
        self.info = LinkInfo(name=name, transport="http", client=f"client/{name}", server=server.participant)
        self.revision = revision
        self.auth: AuthInfo | None = None
        self.token = token
        self.origin = origin
        self.open_get_stream = open_get_stream
        self.extra_headers: dict[str, str | None] = {}
        link_faults = LinkFaults.of(faults)
        self.to_server = Wire(self.sim, link_faults.to_server, label=f"{name}:to_server")
        self.to_client = Wire(self.sim, link_faults.to_client, label=f"{name}:to_client")
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self.expired = False
        self.closed = False
        self.retry_ms: int | None = None
        self._inbox = Mailbox()
        """Answers and server messages, as text, until :meth:`receive` takes them."""
        self._open: dict[RequestId, HttpExchange] = {}
        self._initialize_id: RequestId | None = None
        self._scopes: dict[anyio.CancelScope, None] = {}
        """Open exchanges' cancel scopes, in the order they opened (closing cancels them in that order)."""
        self._listening = False
        self.report_lost_streams = False  # a Client sets it: receive() raises StreamLost (else only recorded)
        self._lost_streams: deque[StreamLost] = deque()

    # -- MessageStream --------------------------------------------------------------------------
    async def send(self, message: JSONRPCMessage, *, related_request_id: RequestId | None = None) -> None:
        if self.closed:
            raise TransportClosed(f"the link {self.info.name!r} is closed")
        if self.expired:
            if isinstance(message, JSONRPCRequest) and message.method == "initialize":
                self.expired = False  # starting over: a new session, without a session id
            else:
                raise SessionExpired(f"the session on {self.server.name} has ended: send initialize again "
                                     "(without a session id)")
        modern = self._is_modern(message)
        if modern and isinstance(message, JSONRPCNotification) and message.method == "notifications/cancelled":
            self._cancel_by_closing(message)
            return
        if isinstance(message, JSONRPCRequest) and message.method == "initialize":
            self._initialize_id = message.id
        request = HttpRequest("POST", self.server.path, self._post_headers(message, modern), encode(message))
        await self._post(request, message, modern)

    async def receive(self) -> JSONRPCMessage | InvalidMessage:
        text = await self._inbox.get()  # anyio.EndOfStream once the link is closed
        if text is _STREAM_LOST:
            raise self._lost_streams.popleft()
        return decode_frame(text, self.revision or self.protocol_version)

    def _report_lost(self, why: str, request_id: RequestId | None) -> None:
        if self.report_lost_streams and not self.closed:
            self._lost_streams.append(StreamLost(why, request_id))
            self._inbox.put(_STREAM_LOST)

    async def aclose(self) -> None:
        """Close the link. Legacy: ``DELETE`` the session (the spec's SHOULD). Modern: close every
        open response stream, which cancels those requests."""
        if self.closed:
            return
        if self.session_id is not None and not self.expired:
            request = HttpRequest("DELETE", self.server.path, self._base_headers(accept=ACCEPT_BOTH))
            request.headers[MCP_SESSION_ID] = self.session_id
            if _names_version_in_header(self.protocol_version):
                request.headers[MCP_PROTOCOL_VERSION] = self.protocol_version
            try:
                await self.http(request)
            except TransportClosed:
                pass
        self.closed = True
        for exchange in list(self._open.values()):
            exchange.client_close()
        self._open.clear()
        for scope in list(self._scopes):
            scope.cancel()
        self._inbox.close()

    # -- raw HTTP ---------------------------------------------------------------------------------
    async def http(self, request: HttpRequest) -> HttpResponse:
        """One raw HTTP exchange, for lessons about headers and status codes: the complete response,
        with ``events`` filled in for an SSE stream (read until the server ends it). Nothing is
        delivered to :meth:`receive`."""
        exchange = HttpExchange(self, request)
        if not await self._transmit(exchange):
            raise TransportClosed(f"{request.line()} was lost on the way (fault)")
        await self.server.handle(exchange)
        frame = await self._response_of(exchange)
        if frame.response is None:
            raise TransportClosed(f"{request.line()}: the connection broke before a response")
        response = HttpResponse(frame.response.status, frame.response.headers, frame.response.body)
        if frame.kind == "head":
            while True:
                frame = await exchange.next_frame()
                if frame.kind == "event" and frame.event is not None:
                    response.events.append(frame.event)
                else:
                    break
        return response

    # -- building requests ------------------------------------------------------------------------
    def _is_modern(self, message: JSONRPCMessage) -> bool:
        version = message_version(message)
        return is_modern_version(version if version is not None else self.revision)

    def _base_headers(self, *, accept: str) -> Headers:
        headers = Headers({"Accept": accept})
        if self.origin is not None:
            headers["Origin"] = self.origin
        if self.token is not None:
            headers["Authorization"] = f"Bearer {self.token}"
        return headers

    def _post_headers(self, message: JSONRPCMessage, modern: bool) -> Headers:
        headers = self._base_headers(accept=ACCEPT_BOTH)
        headers["Content-Type"] = JSON
        if modern:
            version = message_version(message) or self.revision
            if version and isinstance(message, (JSONRPCRequest, JSONRPCNotification)):
                for header, text in modern_request_headers(message, version).items():
                    headers[header] = text
            elif version:
                headers[MCP_PROTOCOL_VERSION] = version
        else:
            if self.session_id is not None:
                headers[MCP_SESSION_ID] = self.session_id
                version = self.protocol_version or self.revision
                if _names_version_in_header(version):
                    headers[MCP_PROTOCOL_VERSION] = version
        for name, value in self.extra_headers.items():
            if value is None:
                if name in headers:
                    del headers[name]
            else:
                headers[name] = value
        return headers

    def _stream_headers(self, last_event_id: str | None) -> Headers:
        headers = self._base_headers(accept=EVENT_STREAM)
        if self.session_id is not None:
            headers[MCP_SESSION_ID] = self.session_id
        version = self.protocol_version or self.revision
        if _names_version_in_header(version):
            headers[MCP_PROTOCOL_VERSION] = version
        if last_event_id is not None:
            headers[LAST_EVENT_ID] = last_event_id
        return headers

    # -- the wire out -----------------------------------------------------------------------------
    async def _transmit(self, exchange: HttpExchange, *,
                        duplicate: Callable[[HttpExchange, float], Awaitable[None]] | None = None) -> bool:
        """Put a request on the wire (recorded, with faults). ``False`` if it never reaches the server."""
        request = exchange.request
        if request.body:
            shipments = self.to_server.plan(request.body, duplicable=duplicate is not None)
        else:
            shipments = self.to_server.plan(request.line(), faultable=False)
        first: Shipment | None = None
        recording = self.sim.recorder.enabled
        for shipment in shipments:
            if recording:
                self._record_request(request, shipment)
            if shipment.action == "crash":
                self.server.crash()
                return False
            if shipment.action is not None:
                raise TransportClosed(f"{request.line()}: the connection was reset (fault {shipment.action})")
            if not shipment.delivered:
                continue
            if first is None:
                first = shipment
            elif duplicate is not None:
                # The copy travels as long as the original and then waits for it (_post): never overtakes it.
                copy = HttpExchange(self, HttpRequest(request.method, request.path, request.headers, shipment.frame))
                self._spawn(duplicate, copy, shipment.delay)
        if first is None:
            return False
        if first.delay > 0:
            await anyio.sleep(first.delay)
        request.body = first.frame if request.body else request.body
        return True

    def _record_request(self, request: HttpRequest, shipment: Shipment) -> None:
        info = self.info
        framing = {"http": {"request": request.summary()}}
        if request.body:
            self.sim.recorder.record_message(link=info.name, sender=info.client, receiver=info.server,
                                             raw=shipment.frame, revision=self.revision, transport="http",
                                             framing=framing, marks=shipment.marks)
        else:
            extra = f" (Last-Event-ID: {request.headers[LAST_EVENT_ID]})" if LAST_EVENT_ID in request.headers else ""
            self.sim.recorder.record_event(kind="transport", link=info.name, sender=info.client,
                                           receiver=info.server, text=f"{request.line()}{extra}",
                                           transport="http", framing=framing, marks=shipment.marks,
                                           revision=self.revision)

    async def _response_of(self, exchange: HttpExchange) -> Any:
        """The first frame of ``exchange``'s response (a complete response, or an SSE stream's head),
        waited for at most :attr:`response_timeout`; past it, the client hangs up and gets a ``cut``."""
        with anyio.move_on_after(self.response_timeout):
            return await exchange.next_frame()
        info = self.info
        self.sim.recorder.record_event(
            kind="transport", link=info.name, sender=info.client, receiver=info.client, transport="http",
            text=f"{exchange.request.line()}: no response within {self.response_timeout:g} s; the client hangs up",
            marks=("timeout",))
        exchange.client_close()
        return await exchange.next_frame()  # the hang-up: a "cut" frame

    async def _post(self, request: HttpRequest, message: JSONRPCMessage, modern: bool) -> None:
        exchange = HttpExchange(self, request)
        handed = anyio.Event()  # set once the original is in the server's hands (or lost): then its copy may come

        async def duplicate(copy: HttpExchange, delay: float) -> None:
            await anyio.sleep(delay)  # the copy's own time on the wire, as the fault model drew it
            await handed.wait()
            if await self.server.handle(copy) == "accepted":
                await self._read_answer(copy, message)
            else:
                frame = await self._response_of(copy)
                if frame.response is not None and frame.response.body:
                    self._deliver(frame.response.body)

        # A modern POST carries no session: a copy would reach a fresh, stateless server that cannot know
        # it saw this request. HTTP runs over TCP, which never delivers one request twice, so the fault
        # leaves modern requests alone (legacy copies share the session, which drops them).
        can_copy = not (modern and isinstance(message, JSONRPCRequest))
        try:
            if not await self._transmit(exchange, duplicate=duplicate if can_copy else None):
                self._listen_after(message, modern)  # a lost `initialized` ends the opening all the same
                return
            if isinstance(message, JSONRPCRequest):
                self._open[message.id] = exchange
            verdict = await self.server.handle(exchange)
        finally:
            handed.set()
        if verdict == "accepted":
            if isinstance(message, JSONRPCRequest):
                exchange.handle_frames(_AnswerReader(self, exchange, message.id))
            return
        if isinstance(message, JSONRPCRequest):
            self._open.pop(message.id, None)
        frame = await self._response_of(exchange)
        response = frame.response
        if response is None:
            raise TransportClosed(f"{request.line()}: the connection broke before a response")
        self._refused_or_accepted(request, response, message)
        self._listen_after(message, modern)

    def _listen_after(self, message: JSONRPCMessage, modern: bool) -> None:
        """Legacy: open the GET stream once ``notifications/initialized`` has been sent."""
        if (not modern and isinstance(message, JSONRPCNotification) and message.method == "notifications/initialized"
                and self.open_get_stream and not self._listening):
            self._listening = True
            self._spawn(self._listen)

    def _refused_or_accepted(self, request: HttpRequest, response: HttpResponse, message: JSONRPCMessage) -> None:
        if 200 <= response.status < 300:
            if response.body:
                self._deliver(response.body)
            return
        if response.status == 404 and MCP_SESSION_ID in request.headers:
            self._expire(f"{request.line()} → 404: session {request.headers[MCP_SESSION_ID]} no longer exists")
            raise SessionExpired(f"the server ended session {request.headers[MCP_SESSION_ID]} (HTTP 404); "
                                 "send initialize again, without a session id")
        if response.body and self._answers(response.body, message):
            self._deliver(response.body)
            return
        raise HttpStatusError(request, response)

    @staticmethod
    def _answers(body: str, message: JSONRPCMessage) -> bool:
        """Is this error body a JSON-RPC answer the session can use: an error for this very request,
        or a parse error (the request was unreadable, so it has no id)?"""
        try:
            obj = json.loads(body)
        except ValueError:
            return False
        if not isinstance(obj, dict) or not isinstance(obj.get("error"), dict):
            return False
        if obj["error"].get("code") == PARSE_ERROR:
            return True
        return isinstance(message, JSONRPCRequest) and obj.get("id") == message.id

    def _expire(self, why: str) -> None:
        if self.expired:
            return
        self.expired = True
        self.session_id = None
        self.protocol_version = None
        self._listening = False
        self.sim.recorder.record_event(kind="transport", link=self.info.name, sender=self.info.client,
                                       receiver=self.info.client, text=why, transport="http",
                                       marks=("session-expired",))
        self._report_lost(why, None)

    def _cancel_by_closing(self, notification: JSONRPCNotification) -> None:
        request_id = (notification.params or {}).get("requestId")
        exchange = self._open.pop(request_id, None) if isinstance(request_id, (str, int)) else None
        self.sim.recorder.record_event(
            kind="transport", link=self.info.name, sender=self.info.client, receiver=self.info.server,
            text=(f"client closes the response stream of request {request_id!r} instead of sending "
                  "notifications/cancelled (2026-07-28: closing the stream is the cancellation)"
                  if exchange is not None else
                  f"nothing to cancel: request {request_id!r} has no open response stream"),
            transport="http", marks=("cancelled",), request_id=request_id)
        if exchange is not None:
            exchange.client_close()

    # -- the wire in ------------------------------------------------------------------------------
    def _spawn(self, fn: Callable[..., Awaitable[None]], *args: Any) -> None:
        self.task_group.start_soon(self._guarded, fn, args)

    async def _guarded(self, fn: Callable[..., Awaitable[None]], args: tuple[Any, ...]) -> None:
        with anyio.CancelScope() as scope:
            self._scopes[scope] = None
            try:
                await fn(*args)
            except TransportClosed:
                pass  # the link went away while this background reader was busy
            finally:
                self._scopes.pop(scope, None)

    def _deliver(self, text: str) -> None:
        if self._initialize_id is not None and '"protocolVersion"' in text:
            try:
                obj = json.loads(text)
            except ValueError:
                obj = None
            if isinstance(obj, dict) and obj.get("id") == self._initialize_id and isinstance(obj.get("result"), dict):
                version = obj["result"].get("protocolVersion")
                self.protocol_version = version if isinstance(version, str) else None
                self._initialize_id = None
        self._inbox.put(text)  # (dropped once the link is closed)

    def _capture_session(self, response: HttpResponse) -> None:
        session_id = response.headers.get(MCP_SESSION_ID)
        if session_id is not None and self.session_id is None:
            self.session_id = session_id
            self.expired = False

    async def _resume_answer(self, last_event_id: str, request_id: RequestId) -> None:
        if (exchange := await self._resume(last_event_id)) is None:
            return
        self._open[request_id] = exchange
        try:
            await self._read_stream(exchange, request_id, last_event_id)
        finally:
            if self._open.get(request_id) is exchange:
                del self._open[request_id]

    async def _read_answer(self, exchange: HttpExchange, message: JSONRPCMessage) -> None:
        """Read one accepted POST's answer: a JSON body, or an SSE stream until it ends."""
        request_id = message.id if isinstance(message, JSONRPCRequest) else None
        try:
            frame = await exchange.next_frame()
            if frame.response is not None:
                self._capture_session(frame.response)
            if frame.kind == "response" and frame.response is not None:
                if frame.response.body:
                    self._deliver(frame.response.body)
                return
            if frame.kind == "head":
                await self._read_stream(exchange, request_id)
            elif not exchange.client_closed:
                self._lost(request_id)
        finally:
            if request_id is not None and self._open.get(request_id) is exchange:
                del self._open[request_id]

    async def _read_stream(self, exchange: HttpExchange, request_id: RequestId | None,
                           last_id: str | None = None) -> None:
        """Deliver SSE events until the server ends the stream; resume a broken legacy stream (at most
        :data:`MAX_EMPTY_RESUMES` times in a row without a new event in between)."""
        empty_resumes = 0
        while True:
            frame = await exchange.next_frame()
            if frame.kind == "event" and frame.event is not None:
                event: SseEvent = frame.event
                empty_resumes = 0
                if event.id is not None:
                    last_id = event.id
                if event.retry is not None:
                    self.retry_ms = event.retry
                if event.data:
                    self._deliver(event.data)
                continue
            if frame.kind == "end" or exchange.client_closed or self.closed:
                return
            # The connection broke.
            empty_resumes += 1
            if last_id is None or parse_event_id(last_id) is None or empty_resumes > MAX_EMPTY_RESUMES:
                self._lost(request_id)
                return
            resumed = await self._resume(last_id)
            if resumed is None:
                return
            exchange = resumed
            if request_id is not None:
                self._open[request_id] = exchange

    def _lost(self, request_id: RequestId | None) -> None:
        what = f"request {request_id!r}" if request_id is not None else "the stream"
        self.sim.recorder.record_event(
            kind="transport", link=self.info.name, sender=self.info.client, receiver=self.info.client,
            text=f"the response stream broke and cannot be resumed: {what} is lost (re-issue it with a new id)",
            transport="http", marks=("lost",), request_id=request_id)
        if request_id is not None:
            self._report_lost(f"the response stream of request {request_id!r} broke for good", request_id)

    async def _resume(self, last_event_id: str) -> HttpExchange | None:
        """Legacy resumption: wait ``retry`` ms, then ``GET`` with ``Last-Event-ID``."""
        await anyio.sleep((self.retry_ms if self.retry_ms is not None else DEFAULT_RECONNECT_MS) / 1000)
        if self.closed or self.expired:
            return None
        exchange = HttpExchange(self, HttpRequest("GET", self.server.path, self._stream_headers(last_event_id)))
        if not await self._transmit(exchange):
            return None
        verdict = await self.server.handle(exchange)
        frame = await self._response_of(exchange)
        if verdict == "answered" or frame.kind != "head":
            if frame.response is not None and frame.response.status == 404:
                self._expire(f"resuming after event {last_event_id} failed: the session is gone (404)")
            return None
        return exchange

    async def _listen(self) -> None:
        """Legacy: the ``GET`` stream for messages the server sends on its own initiative."""
        exchange = HttpExchange(self, HttpRequest("GET", self.server.path, self._stream_headers(None)))
        if not await self._transmit(exchange):
            return
        verdict = await self.server.handle(exchange)
        frame = await self._response_of(exchange)
        if verdict == "answered" or frame.kind != "head":
            if frame.response is not None and frame.response.status == 404:
                self._expire("opening the GET stream failed: the session is gone (404)")
            self._listening = False
            return
        await self._read_stream(exchange, None)
        self._listening = False


class _AnswerReader:
    """Handles one accepted POST's answer frame by frame as it arrives (no task waits for it): a JSON
    body, or SSE events until the server ends the stream. A broken legacy stream is resumed by a task.
    A slotted object, not a closure: fewer objects for the garbage collector, with thousands in flight."""

    __slots__ = ("client", "exchange", "last_id", "request_id")

    def __init__(self, client: HttpClientStream, exchange: HttpExchange, request_id: RequestId) -> None:
        self.client = client
        self.exchange = exchange
        self.request_id = request_id
        self.last_id: str | None = None
        """The id of the last SSE event received: where a resumed stream continues."""

    def __call__(self, frame: Any) -> None:
        client = self.client
        if frame.response is not None:
            client._capture_session(frame.response)
        if frame.kind == "response":
            if frame.response.body:
                client._deliver(frame.response.body)
            self._finish()
        elif frame.kind == "event":
            event: SseEvent = frame.event
            if event.id is not None:
                self.last_id = event.id
            if event.retry is not None:
                client.retry_ms = event.retry
            if event.data:
                client._deliver(event.data)
        elif frame.kind == "end":
            self._finish()
        elif frame.kind == "cut":
            self.exchange.handle_frames(None)
            if self.exchange.client_closed or client.closed:
                self._finish()
            elif self.last_id is not None and parse_event_id(self.last_id) is not None:
                client._spawn(client._resume_answer, self.last_id, self.request_id)
            else:
                self._finish()
                client._lost(self.request_id)

    def _finish(self) -> None:
        """The answer is complete (or lost): the request no longer has an open exchange."""
        if self.client._open.get(self.request_id) is self.exchange:
            del self.client._open[self.request_id]


def _names_version_in_header(version: str | None) -> TypeGuard[str]:
    """Whether a client of ``version`` sends ``MCP-Protocol-Version`` on its HTTP requests: the header
    arrived with 2025-06-18, so a 2025-03-26 or 2024-11-05 client never sends it."""
    return version is not None and MCP_PROTOCOL_VERSION in revision_at(version).http_headers
