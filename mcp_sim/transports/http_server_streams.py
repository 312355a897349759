"""The server end of each Streamable HTTP exchange, one kind per era (course chapter 06).

:class:`~mcp_sim.transports.http_server.SimulatedHttpServer` is the front door: it checks Origin,
token and headers. What the server *program* talks to once a message is let in lives here:

* a :class:`ResponseChannel` is the answer to one POSTed request — one JSON body, or an SSE stream
  when something about the request (progress, a log line, a legacy server→client request) has to
  travel before the response;
* **legacy** (2025-03-26 … 2025-11-25): a :class:`LegacySession` per ``Mcp-Session-Id``, whose
  :class:`LegacyServerStream` routes each response to the channel of the request it answers and
  everything else to the standalone stream the client opened with ``GET``;
* **modern** (2026-07-28): a :class:`ModernCall` per POST, whose :class:`ModernServerStream` carries
  that one request and its answer; closing the response stream *is* the cancellation.

Nothing here knows the server object: each piece is handed the simulation (for its clock and
recorder) and the exchange it answers, so this module sits below the server that uses it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import anyio
import anyio.lowlevel

from mcp_sim.security.identity import AuthInfo
from mcp_sim.sim.world import Simulation
from mcp_sim.transports.base import LinkInfo, TransportClosed
from mcp_sim.transports.faults import decode_frame
from mcp_sim.transports.http import EVENT_STREAM, JSON, Headers, HttpExchange, HttpResponse, modern_status_for
from mcp_sim.transports.http_mailbox import Mailbox
from mcp_sim.transports.sse import SseStreamLog
from mcp_sim.wire.jsonrpc import (
    InvalidMessage,
    JSONRPCErrorResponse,
    JSONRPCMessage,
    JSONRPCRequest,
    JSONRPCResultResponse,
    RequestId,
    encode,
    error_object,
)

ResponseMode = Literal["auto", "json", "sse"]
"""How the server answers a POSTed request: ``json`` (one JSON body), ``sse`` (always a stream) or
``auto`` (JSON if the answer comes first, a stream if something related comes before it)."""


@dataclass(frozen=True)
class SessionPolicy:
    """How a legacy endpoint mints ``Mcp-Session-Id`` values and what a session id is allowed to prove.

    The default is what the spec asks for: ids that are random and therefore globally unique (drawn from
    the simulation's seeded generator so traces replay; a real server mints from a CSPRNG, the
    :mod:`secrets` module, since a seeded generator is predictable to whoever knows the seed), a bearer token checked on *every* request, and each session bound
    to the user who opened it, so another user's request naming it is answered ``404``. The security
    lab ``session-hijacking`` swaps in the mistakes: counting ids, a known id accepted in place of a
    token (``id_authenticates``), no binding (``bind_to_user=False``)."""

    mint: Callable[[Simulation], str] = lambda sim: sim.token(16)
    id_authenticates: bool = False
    """The mistake: a request without a valid token is let in because it names a known session."""
    bind_to_user: bool = True

    def admits(self, opened_by: AuthInfo | None, caller: AuthInfo | None) -> bool:
        """May ``caller`` use a session that ``opened_by`` opened?"""
        if not self.bind_to_user or opened_by is None:
            return True  # (an endpoint without tokens knows no user to bind to)
        return caller is not None and (caller.subject, caller.tenant) == (opened_by.subject, opened_by.tenant)


def note(exchange: HttpExchange, text: str, marks: tuple[str, ...] = ()) -> None:
    """Record a transport note about ``exchange`` (server → client), e.g. a message dropped."""
    info = exchange.link.info
    exchange.link.sim.recorder.record_event(kind="transport", link=info.name, sender=info.server,
                                            receiver=info.client, text=text, transport="http", marks=marks)


def error_body(code: int, message: str, data: Any = None, id: RequestId | None = None) -> str:
    return encode(JSONRPCErrorResponse(id, error_object(code, message, data)))


class ResponseChannel:
    """The server's side of one POSTed request's answer: a JSON body or an SSE stream, decided by the
    response mode (lazily in ``auto`` mode: the first message about the request decides).

    ``log`` keeps a legacy stream's events for resumption. A 2026-07-28 stream cannot be resumed:
    pass ``None`` and a log that keeps nothing is made only if the answer turns into a stream (most
    answers are one JSON body, and an object not made is one the garbage collector never walks)."""

    __slots__ = ("done", "exchange", "extra_headers", "log", "mode", "modern", "priming", "response_mode",
                 "retry_ms")

    def __init__(self, exchange: HttpExchange, *, modern: bool, mode: ResponseMode, log: SseStreamLog | None,
                 extra_headers: dict[str, str], priming: bool, retry_ms: int | None = None) -> None:
        self.exchange = exchange
        self.modern = modern
        self.response_mode = mode
        self.log = log
        self.extra_headers = extra_headers
        self.priming = priming
        self.retry_ms = retry_ms
        self.mode: Literal["json", "sse"] | None = None
        self.done = False

    @property
    def can_stream(self) -> bool:
        return self.response_mode != "json" and not self.done

    def open_stream(self) -> SseStreamLog:
        self.mode = "sse"
        if self.log is None:
            self.log = SseStreamLog(0, resumable=False)
        log = self.log
        headers = Headers({"Content-Type": EVENT_STREAM, "Cache-Control": "no-cache"})
        if self.modern:
            headers["X-Accel-Buffering"] = "no"
        for name, value in self.extra_headers.items():
            headers[name] = value
        self.exchange.open_sse(HttpResponse(200, headers))
        log.attach(self.exchange.send_event, self.exchange.end)
        if not self.modern:
            self.exchange.on_client_close(log.detach)
        if self.priming:
            log.append("", retry=self.retry_ms)
        return log

    def write(self, text: str, *, final: bool, error_code: int | None = None, stream: bool = False) -> None:
        """Send one message of this answer. ``stream`` forces a stream even in ``json`` mode: a legacy
        server request about this request (sampling, elicitation) must travel somewhere, and the only
        place that relates it to the request is the request's own stream."""
        if self.done:
            return
        if self.mode is None:
            if final and self.response_mode != "sse":
                self.mode = "json"
                self.done = True
                status = modern_status_for(error_code) if self.modern else 200
                headers = Headers({"Content-Type": JSON, **self.extra_headers})
                self.exchange.respond(HttpResponse(status, headers, text))
                return
            if self.response_mode == "json" and not stream:
                where = "" if self.modern else " (the GET stream is for messages unrelated to running requests)"
                note(self.exchange, "JSON response mode: a notification about the request has no stream to "
                                    f"travel on{where}, so it is dropped", ("dropped",))
                return
            log = self.open_stream()
        else:
            log = self._stream_log()
        log.append(text)
        if final:
            self.done = True
            log.finish()

    def abandon(self) -> None:
        """The handler ended without answering: a 500 (nothing sent yet) or the stream just ends."""
        if self.done:
            return
        self.done = True
        if self.mode is None:
            self.exchange.respond(HttpResponse(500, Headers({"Content-Type": JSON}),
                                               None))
        else:
            self._stream_log().finish()

    def _stream_log(self) -> SseStreamLog:
        """The open stream's log (only called once the answer is a stream, which made it)."""
        assert self.log is not None
        return self.log


class LegacyServerStream:
    """The server program's stream for one legacy session (one ``Mcp-Session-Id``)."""

    def __init__(self, session: LegacySession, info: LinkInfo) -> None:
        self.session = session
        self.info = info
        self.revision: str | None = None
        self.auth: AuthInfo | None = session.auth
        self.server_process: Any = None
        """The HTTP server's process (``ServerProcess``), set by the server before the program runs."""

    async def send(self, message: JSONRPCMessage, *, related_request_id: RequestId | None = None) -> None:
        session = self.session
        if session.ended:
            raise TransportClosed(f"session {session.id} has ended")
        text = encode(message)
        if isinstance(message, (JSONRPCResultResponse, JSONRPCErrorResponse)):
            channel = session.pending.pop(message.id, None) if message.id is not None else None
            if channel is None:
                session.note(f"no open request {message.id!r} for this response: it is dropped", ("dropped",))
                return
            if channel.method == "initialize" and isinstance(message, JSONRPCResultResponse):
                version = message.result.get("protocolVersion")
                session.version = version if isinstance(version, str) else None
                self.revision = self.revision or session.version
            code = message.error.code if isinstance(message, JSONRPCErrorResponse) else None
            channel.channel.write(text, final=True, error_code=code)
            return
        if related_request_id is not None:
            pending = session.pending.get(related_request_id)
            if pending is not None:
                # A message about a request still running travels on that request's stream, never on
                # the GET stream, whose messages should be unrelated to any running request
                # (rule http.legacy.get-stream-unrelated). A JSON-answering server has no such stream:
                # it drops the notification (progress, a log line) and answers with a stream after all
                # when it has to send a request about it (rule http.legacy.json-mode-related).
                answer = pending.channel
                if not answer.done:
                    answer.write(text, final=False, stream=isinstance(message, JSONRPCRequest))
                    return
        session.standalone.append(text)

    async def receive(self) -> JSONRPCMessage | InvalidMessage:
        text = await self.session.inbox.get()
        return decode_frame(text, self.revision)

    async def aclose(self) -> None:
        self.session.inbox.close()


class PendingRequest:
    __slots__ = ("channel", "method")

    def __init__(self, method: str, channel: ResponseChannel) -> None:
        self.method = method
        self.channel = channel


class LegacySession:
    def __init__(self, sim: Simulation, session_id: str, auth: AuthInfo | None, info: LinkInfo) -> None:
        self.sim = sim
        self.id = session_id
        self.auth = auth
        self.info = info
        self.version: str | None = None
        self.pending: dict[RequestId, PendingRequest] = {}
        self.used_ids: set[RequestId] = set()
        """Every request id this session accepted. A legacy id must not be used twice in a session, and
        over HTTP each POST needs its own answer: a second POST with a used id is refused at once (the
        session program would drop it as a copy, or refuse it without an id, and leave the POST
        waiting)."""
        self.streams: dict[int, SseStreamLog] = {}
        self.standalone = SseStreamLog(0)
        self.streams[0] = self.standalone
        self.get_exchange: HttpExchange | None = None
        self.exchanges: dict[HttpExchange, None] = {}
        """The session's open exchanges, in the order they opened (a dict used as an ordered set, so
        that ending the session aborts them in an order the seed fixes, never one set by memory
        addresses)."""
        self.ended = False
        self.scope: anyio.CancelScope | None = None
        self.inbox = Mailbox()
        """The requests' text on its way to the server program. The session keeps it and the program's
        :class:`LegacyServerStream` points at the session, never the other way round (no reference
        cycle: an ended session is freed at once, not by the garbage collector's full passes)."""
        self._next_stream = 0

    def new_log(self) -> SseStreamLog:
        self._next_stream += 1
        log = SseStreamLog(self._next_stream)
        self.streams[log.number] = log
        return log

    def server_stream(self) -> LegacyServerStream:
        """The stream the server program serves this session on (made once, when the session opens)."""
        return LegacyServerStream(self, self.info)

    def track(self, exchange: HttpExchange) -> None:
        """Remember an open exchange so that :meth:`end` can abort it; finished ones are forgotten
        here, so a long session keeps only what is still open (its memory does not grow per call)."""
        finished = [old for old in self.exchanges if old.server_done or old.client_closed]
        for old in finished:
            del self.exchanges[old]
        self.exchanges[exchange] = None

    def note(self, text: str, marks: tuple[str, ...] = ()) -> None:
        self.sim.recorder.record_event(kind="transport", link=self.info.name, sender=self.info.server,
                                       receiver=self.info.client, text=text, transport="http", marks=marks)

    def end(self, why: str) -> None:
        if self.ended:
            return
        self.ended = True
        self.note(f"session {self.id} ends: {why}", ("session-ended",))
        self.inbox.close()
        for exchange in list(self.exchanges):
            exchange.abort()
        self.exchanges.clear()
        self.pending.clear()
        self.streams.clear()  # an ended session is answered 404: nothing is replayed from it any more


class ModernCall:
    """One 2026-07-28 POST being served: its own stream, its own ``main``, its own answer."""

    __slots__ = ("__weakref__", "auth", "cancelled", "channel", "exchange", "inbox", "method", "request_id",
                 "sim", "task", "version")

    def __init__(self, sim: Simulation, exchange: HttpExchange, message: JSONRPCMessage,
                 auth: AuthInfo | None, version: str | None, channel: ResponseChannel | None) -> None:
        self.sim = sim
        self.exchange = exchange
        self.request_id: RequestId | None = message.id if isinstance(message, JSONRPCRequest) else None
        """The id of the request being answered (``None`` for a notification)."""
        self.method = getattr(message, "method", None)
        """What the client asked for. The call keeps these two, not the decoded message: the server
        program reads the request from the text in :attr:`inbox`, and the decoded copy (a handful of
        dicts) can go at once instead of living as long as the call."""
        self.channel = channel
        self.task: anyio.TaskHandle[None] | None = None
        """The task serving the call. Cancelling it (the client hung up, the server crashed) cancels the
        call: anyio gives every task a cancel scope of its own, made before the task starts, so a
        cancellation can never be missed and the call needs no second scope."""
        self.cancelled = False
        self.auth = auth
        self.version = version
        self.inbox = Mailbox()
        """The request's text on its way to the server program. The call keeps it and the
        program's :class:`ModernServerStream` points at the call, never the other way round: a
        reference cycle per call would leave every finished call for the garbage collector's full
        passes, which grow with the heap (see ``benchmarks/http_load.py``)."""

    def server_stream(self) -> ModernServerStream:
        """The stream the server program reads this one request from and answers on."""
        return ModernServerStream(self, self.exchange.link.info, self.auth, self.version)

    def cancel(self) -> None:
        """The client closed the response stream: in 2026-07-28 that is the cancellation."""
        if self.cancelled or (self.channel is not None and self.channel.done):
            return
        self.cancelled = True
        info = self.exchange.link.info
        self.sim.recorder.record_event(
            kind="transport", link=info.name, sender=info.server, receiver=info.server,
            text=f"the client closed the response stream: the server cancels request {self.request_id!r}",
            transport="http", marks=("cancelled",), request_id=self.request_id)
        self.inbox.close()
        if self.task is not None:
            self.task.cancel()


class ModernServerStream:
    """The server program's stream for one 2026-07-28 POST: one request in, its answer out."""

    def __init__(self, call: ModernCall, info: LinkInfo, auth: AuthInfo | None, version: str | None) -> None:
        self.call = call
        self.info = info
        self.revision = version
        self.auth = auth
        self.server_process: Any = None
        """The HTTP server's process (``ServerProcess``), set by the server before the program runs."""

    async def send(self, message: JSONRPCMessage, *, related_request_id: RequestId | None = None) -> None:
        call = self.call
        if isinstance(message, JSONRPCRequest):
            raise ValueError("2026-07-28 HTTP: a server MUST NOT send requests on a response stream; a server "
                             "that needs input answers with an InputRequiredResult instead")
        channel = call.channel
        if call.cancelled:
            # The client hung up: a handler inside the cancelled call sees its cancellation here.
            await anyio.lowlevel.checkpoint()
        if call.cancelled or channel is None or channel.done:
            raise TransportClosed(f"the response stream of request {call.request_id!r} is closed")
        final = isinstance(message, (JSONRPCResultResponse, JSONRPCErrorResponse)) and message.id == call.request_id
        code = message.error.code if isinstance(message, JSONRPCErrorResponse) else None
        channel.write(encode(message), final=final, error_code=code)
        if final:
            call.inbox.close()

    async def receive(self) -> JSONRPCMessage | InvalidMessage:
        text = await self.call.inbox.get()
        return decode_frame(text, self.revision)

    async def aclose(self) -> None:
        self.call.inbox.close()
