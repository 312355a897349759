"""The server's end of one real HTTP conversation, as a message stream, and its SSE writing (course
chapter 12).

:class:`HttpServerStream` is what :class:`~mcp_sim.bridge.http_server.StreamableHTTPEndpoint` hands
to the simulator's server session: a legacy session (many POSTs, one stream) or one modern POST.
Messages the client POSTs come in through :meth:`HttpServerStream.deliver`; what the session sends
goes to the channel of the request it answers or belongs to, or to the legacy GET stream.

A legacy POST's SSE stream is resumable, as the spec allows: its events carry ids
``"<stream>-<n>"`` and are kept; when the client's connection breaks before the response, the
request runs on and its stream is *parked*; a ``GET`` with ``Last-Event-ID`` gets the events it
missed, then the rest (:func:`resume_stream`). A 2026-07-28 stream is never resumed: there, closing
it is the cancellation.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from starlette.datastructures import Headers
from starlette.types import Receive, Send

from mcp_sim.protocol.errors import INVALID_REQUEST, error_object
from mcp_sim.security.identity import AuthInfo
from mcp_sim.transports import http as H
from mcp_sim.transports.base import LinkInfo, TransportClosed
from mcp_sim.transports.sse import SseEvent, parse_event_id
from mcp_sim.wire.jsonrpc import (
    InvalidMessage,
    JSONRPCErrorResponse,
    JSONRPCMessage,
    JSONRPCResultResponse,
    RequestId,
    encode,
)

logger = logging.getLogger(__name__)

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
"""The only hosts a local MCP server listens on, and the only browser origins it trusts by default."""

MAX_KEPT_EVENTS = 1000
"""Events kept per legacy SSE stream for resumption; older ones cannot be replayed."""


def origin_allowed(origin: str | None, allowed: tuple[str, ...] = ()) -> bool:
    """The DNS-rebinding defence: a browser page on another site must not reach a local server.

    No ``Origin`` (a non-browser client) is allowed; a loopback origin (any port) is allowed; so is
    any origin listed in ``allowed``. Anything else gets ``403``."""
    if origin is None or origin in allowed:
        return True
    scheme, sep, rest = origin.partition("://")
    if not sep or scheme not in ("http", "https"):
        return False
    host = rest.split("/")[0]
    host = host[1:host.index("]")] if host.startswith("[") and "]" in host else host.rsplit(":", 1)[0]
    return host in LOOPBACK_HOSTS


def sse_bytes(text: str, event_id: str | None = None) -> bytes:
    """One JSON-RPC message as an SSE ``message`` event (with its ``id`` when resumable), in bytes."""
    return SseEvent(text, event_id).encode().encode()


def mcp_headers(headers: Headers) -> dict[str, str]:
    """The request headers worth showing in a trace (no cookies or tokens)."""
    keep = {name.lower() for name in ("Content-Type", "Accept", "Origin", H.MCP_PROTOCOL_VERSION, H.MCP_SESSION_ID,
                                      H.MCP_METHOD, H.MCP_NAME, H.LAST_EVENT_ID)}
    return {k: v for k, v in headers.items() if k.lower() in keep}


class HttpServerStream:
    """The server's end of one HTTP conversation: a legacy session, or one modern POST.

    Messages the client POSTs arrive through :meth:`deliver`; messages the server sends are routed
    to the channel of the request they answer or belong to (``related_request_id``), or else to the
    session's standalone GET stream."""

    def __init__(self, info: LinkInfo, *, session_id: str | None = None, revision: str | None = None,
                 auth: AuthInfo | None = None) -> None:
        self.info = info
        self.session_id = session_id
        self.revision = revision
        self.auth = auth
        self._inbox_send, self._inbox = anyio.create_memory_object_stream[JSONRPCMessage | InvalidMessage](math.inf)
        self._exchanges: dict[RequestId, MemoryObjectSendStream[JSONRPCMessage]] = {}
        self.standalone_send, self.standalone = anyio.create_memory_object_stream[JSONRPCMessage](100)
        self.get_stream_open = False
        self.closed = anyio.Event()
        # Legacy resumption: each POST's SSE stream gets a number; its events are kept, with ids
        # "<stream>-<n>", and a stream whose reader went away before the response is parked, its
        # request still running, until a GET with Last-Event-ID picks it up.
        self._streams = 0
        self.kept: dict[int, list[tuple[int, str]]] = {}
        self.parked: dict[int, tuple[RequestId, MemoryObjectReceiveStream[JSONRPCMessage]]] = {}
        self._used_ids: set[RequestId] = set()

    def first_use(self, request_id: RequestId) -> bool:
        """Remember a legacy session's request id; ``False`` if it was used before. A legacy id must not
        be used twice in a session, and over HTTP every POST needs its own answer: the session program
        would drop a second copy (or refuse a changed one without an id), leaving its POST waiting, so
        the endpoint refuses such a POST at once with ``400`` (the server cannot accept the input)."""
        if request_id in self._used_ids:
            return False
        self._used_ids.add(request_id)
        return True

    @staticmethod
    def used_id_error(request_id: RequestId) -> JSONRPCErrorResponse:
        """The body of that ``400``: ``-32600`` without an id (the id would name the other request)."""
        return JSONRPCErrorResponse(None, error_object(
            INVALID_REQUEST, f"Bad Request: request id {request_id!r} was already used in this session",
            {"requestId": request_id}))

    # -- legacy resumption -------------------------------------------------------------------------
    def new_stream(self) -> int:
        """The number of a new resumable SSE stream."""
        self._streams += 1
        self.kept[self._streams] = []
        return self._streams

    def keep(self, number: int, text: str) -> str:
        """Keep an event of stream ``number`` before it is written; returns its id."""
        events = self.kept.setdefault(number, [])
        n = events[-1][0] + 1 if events else 1
        events.append((n, text))
        del events[:-MAX_KEPT_EVENTS]
        return f"{number}-{n}"

    def missed(self, last_event_id: str) -> tuple[int, list[tuple[str, str]]] | None:
        """The stream a ``Last-Event-ID`` names and the (id, text) events after it, or ``None`` when
        it names no stream of this session."""
        parsed = parse_event_id(last_event_id)
        if parsed is None or parsed[0] not in self.kept:
            return None
        number, after = parsed
        return number, [(f"{number}-{n}", text) for n, text in self.kept[number] if n > after]

    # -- the HTTP side ---------------------------------------------------------------------------
    def open_exchange(self, request_id: RequestId) -> MemoryObjectReceiveStream[JSONRPCMessage]:
        """A channel for everything the server sends about request ``request_id``."""
        send, receive = anyio.create_memory_object_stream[JSONRPCMessage](math.inf)
        self._exchanges[request_id] = send
        return receive

    def close_exchange(self, request_id: RequestId) -> None:
        channel = self._exchanges.pop(request_id, None)
        if channel is not None:
            channel.close()

    async def deliver(self, message: JSONRPCMessage | InvalidMessage) -> None:
        await self._inbox_send.send(message)

    def end_input(self) -> None:
        """No more client messages: the session's ``receive`` reaches end-of-stream."""
        self._inbox_send.close()

    # -- the session side (MessageStream) --------------------------------------------------------
    async def send(self, message: JSONRPCMessage, *, related_request_id: RequestId | None = None) -> None:
        if self.closed.is_set():
            raise TransportClosed("the HTTP session is closed")
        target: MemoryObjectSendStream[JSONRPCMessage] | None = None
        if isinstance(message, (JSONRPCResultResponse, JSONRPCErrorResponse)) and message.id is not None:
            target = self._exchanges.get(message.id)
        elif related_request_id is not None:
            target = self._exchanges.get(related_request_id)
        if target is not None:
            try:
                target.send_nowait(message)
                return
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                pass
        if self.session_id is None:
            logger.warning("dropped %s: a 2026-07-28 POST has no stream for it", encode(message)[:200])
            return
        try:
            self.standalone_send.send_nowait(message)
        except anyio.WouldBlock:
            logger.warning("dropped a message for the GET stream of session %s: nobody is listening",
                           self.session_id)

    async def receive(self) -> JSONRPCMessage | InvalidMessage:
        try:
            return await self._inbox.receive()
        except anyio.ClosedResourceError:
            raise anyio.EndOfStream from None

    async def aclose(self) -> None:
        self.closed.set()
        self._inbox_send.close()
        self.standalone_send.close()
        for rid in list(self._exchanges):
            self.close_exchange(rid)



# --- writing SSE streams, and resuming them -------------------------------------------------------------

Record = Callable[[str], None]
"""Records one outgoing event's text on the trace."""


async def sse_head(send: Send, headers: Mapping[str, str]) -> None:
    """The head of an SSE response (200, ``text/event-stream``, no caching or buffering)."""
    await send({"type": "http.response.start", "status": 200, "headers": [
        *((k.lower().encode(), v.encode()) for k, v in headers.items()),
        (b"content-type", H.EVENT_STREAM.encode()), (b"cache-control", b"no-cache"),
        (b"x-accel-buffering", b"no")]})


async def pump_events(send: Send, stream: HttpServerStream, channel: MemoryObjectReceiveStream[JSONRPCMessage],
                      message: JSONRPCMessage | None, number: int | None, done: list[bool], record: Record) -> None:
    """Write a request's messages as SSE events until its response, then end the body (``done[0]``
    says the response went out). Legacy events (``number`` set) are kept, with ids, *before* they are
    written, so a connection cut mid-write loses none."""
    while True:
        if message is None:
            message = await channel.receive()
        text = encode(message)
        event_id = stream.keep(number, text) if number is not None else None
        record(text)
        await send({"type": "http.response.body", "body": sse_bytes(text, event_id), "more_body": True})
        if isinstance(message, (JSONRPCResultResponse, JSONRPCErrorResponse)):
            done[0] = True
            break
        message = None
    await send({"type": "http.response.body", "body": b""})


async def resume_stream(send: Send, receive: Receive, session: HttpServerStream, number: int,
                        missed: list[tuple[str, str]], record: Record) -> None:
    """Replay ``missed`` events of stream ``number``, then, if its request still runs (it was parked
    when its reader went away), write the rest until the response. Cut again, it stays resumable."""
    parked = session.parked.pop(number, None)
    done = [parked is None]
    try:
        async with anyio.create_task_group() as tg:
            async def watch() -> None:
                while (await receive())["type"] != "http.disconnect":
                    pass
                tg.cancel_scope.cancel()

            tg.start_soon(watch)
            await sse_head(send, {H.MCP_SESSION_ID: session.session_id or ""})
            for event_id, text in missed:
                record(text)
                await send({"type": "http.response.body", "body": sse_bytes(text, event_id), "more_body": True})
            if parked is None:
                await send({"type": "http.response.body", "body": b""})
            else:
                await pump_events(send, session, parked[1], None, number, done, record)
            tg.cancel_scope.cancel()
    except (anyio.EndOfStream, anyio.ClosedResourceError, OSError):
        pass
    finally:
        if parked is not None:
            if done[0] or session.closed.is_set():
                session.close_exchange(parked[0])
            else:
                session.parked[number] = parked
