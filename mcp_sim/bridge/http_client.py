"""The client's end of real Streamable HTTP, over httpx (course chapter 12).

:func:`open_http` yields an :class:`HttpClientStream`, a :class:`~mcp_sim.transports.base.MessageStream`
the simulator's :class:`~mcp_sim.roles.client.Client` uses unchanged. Each message it is given
becomes one POST; whatever comes back — a JSON body, or an SSE stream of notifications and requests
ending with the response — is read by a task of the stream's own task group and queued for
:meth:`~HttpClientStream.receive`. The headers follow the era of each message:

* a modern request (its ``params._meta`` names 2026-07-28) carries ``MCP-Protocol-Version``,
  ``Mcp-Method`` and, for ``tools/call``/``prompts/get``/``resources/read`` (and ``tasks/*``),
  ``Mcp-Name`` — built by :func:`~mcp_sim.transports.http.modern_request_headers`, the rulebook the
  simulated client uses too;
* in a legacy session, the ``Mcp-Session-Id`` the server returned with ``InitializeResult`` and the
  negotiated ``MCP-Protocol-Version`` go on every later POST; after ``notifications/initialized``
  a GET stream is opened for server messages unrelated to any request (the client goes on once the
  server has answered that GET, so no later request overtakes it), and leaving the block ends the
  session with DELETE;
* a legacy response stream that breaks after an event with an id, or that the server closes before
  the response (2025-11-25 lets it, and has the client poll), is asked for again with ``GET`` and
  ``Last-Event-ID`` after the ``retry`` milliseconds the stream asked for (a few times at most), and
  the messages it missed arrive as if nothing happened; a stream that ends unanswered with nothing to
  resume fails its request at once (instead of leaving it to time out);
* a modern ``tools/call`` mirrors the arguments the tool's listing annotated with ``x-mcp-header``
  into ``Mcp-Param-*`` headers (:mod:`mcp_sim.roles.client.param_headers`);
* a modern ``notifications/cancelled`` is not POSTed: the client hangs up that request's POST, since
  in 2026-07-28 closing the response stream is the cancellation (this ends a ``subscriptions/listen``).

A body is handed to the session only when it is a JSON-RPC answer. Anything else is the HTTP layer
speaking, and the session never sees it as a message (it would answer it with ``-32600``, the POST
of that answer would be refused again, and so on, hundreds of times a second):

* ``401``, ``403``, a ``5xx``, a body that is not JSON-RPC at all, a connection that failed: the
  request that caused it fails with :class:`~mcp_sim.transports.base.RequestRefused`, raised from
  ``receive`` for the client to hand to that request (``HTTP 401: invalid_token``);
* another ``4xx`` without a JSON-RPC body (``400``, ``405`` from a server of the other era): an error
  response for that request, made here, so era detection can read it;
* a ``404`` for a known session raises :class:`~mcp_sim.transports.base.SessionExpired` from
  ``receive``: the client must initialize again.

The refusal of a POST that carried a notification or a response is recorded and dropped.

With an ``authorizer`` (MCP authorization: :mod:`mcp_sim.bridge.oauth_http`), a ``401`` or ``403``
is first handed to it: it runs the OAuth flow (or a refresh, or a step-up) and returns a new access
token, which goes on this POST's retry and every later request. A POST is retried at most
:data:`MAX_AUTHORIZATIONS` times; when the flow cannot help it says why (:class:`OAuthFailed`) and
the request fails with that one clear error — never a storm of retries. Concurrent refusals share
one flow: whoever waited behind it retries with the token it produced.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, TypeGuard

import anyio
import anyio.abc
import httpx

from mcp_sim.bridge.recording import WallClockRecorder, stamp
from mcp_sim.protocol.errors import INVALID_REQUEST
from mcp_sim.protocol.revisions import REVISIONS, revision_at
from mcp_sim.roles.client.param_headers import header_names, param_headers
from mcp_sim.security.identity import AuthInfo
from mcp_sim.security.oauth_client import OAuthFailed
from mcp_sim.trace.recorder import Recorder
from mcp_sim.transports import http as H
from mcp_sim.transports.base import LinkInfo, RequestRefused, SessionExpired, TransportClosed
from mcp_sim.transports.sse import SseParser
from mcp_sim.wire.jsonrpc import (
    Batch,
    InvalidMessage,
    JSONRPCErrorResponse,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResultResponse,
    RequestId,
    decode,
    encode,
    error_object,
)

logger = logging.getLogger(__name__)

Received = JSONRPCMessage | InvalidMessage | SessionExpired | RequestRefused

MAX_RESUMES = 3
"""How many times in a row a broken legacy stream is asked for again with ``Last-Event-ID``."""

MAX_AUTHORIZATIONS = 2
"""How many times one POST is retried after an authorization flow (a first token, then a step-up)."""

Authorizer = Callable[[H.HttpResponse], Awaitable[str]]
"""Given a ``401``/``403`` response, get a new access token (or raise :class:`OAuthFailed`)."""

@dataclass
class StreamPosition:
    """How far a client has read one SSE stream: what a resumption needs."""

    last_id: str | None = None
    retry_ms: int | None = None
    """The last ``retry`` field: milliseconds to wait before reconnecting."""
    answered: bool = False
    """The request the stream belongs to has had its response."""


REFUSING_STATUSES = frozenset({401, 403})
"""Statuses that refuse a request outright (plus every ``5xx``): no era, no retry, no answer."""


def is_jsonrpc_answer(body: str) -> bool:
    """Is ``body`` a JSON-RPC response (or a batch of them) — something a session can match to a
    request — rather than an HTTP layer's own JSON (``{"error": "invalid_token"}``)?"""
    try:
        obj = json.loads(body)
    except ValueError:
        return False
    items = obj if isinstance(obj, list) and obj else [obj]
    return all(isinstance(item, dict) and item.get("jsonrpc") == "2.0" and "id" in item
               and ("result" in item or isinstance(item.get("error"), dict)) for item in items)


def refusal_text(status: int, body: str, reason: str) -> str:
    """``HTTP 401: invalid_token (the token expired)``: the status and what the body says, briefly.
    OAuth-style bodies (``error``, ``error_description``) and common ``message``/``detail`` fields are
    read; any other body is quoted, cut at 200 characters."""
    said = body.strip()[:200] or reason
    try:
        obj = json.loads(body)
    except ValueError:
        obj = None
    if isinstance(obj, dict):
        error = obj.get("error")
        if isinstance(error, dict):
            error = error.get("message")
        words = [str(w) for w in (error, obj.get("error_description") or obj.get("message") or obj.get("detail"))
                 if isinstance(w, str) and w]
        if words:
            said = words[0] + (f" ({words[1]})" if len(words) > 1 else "")
    return f"HTTP {status}: {said}" if said else f"HTTP {status}"


class HttpClientStream:
    """A client's end of a Streamable HTTP link to ``url``."""

    def __init__(self, url: str, info: LinkInfo, http: httpx.AsyncClient, task_group: anyio.abc.TaskGroup,
                 recorder: Recorder, headers: Mapping[str, str] | None = None,
                 authorizer: Authorizer | None = None) -> None:
        self.url = url
        self.info = info
        self.revision: str | None = None
        self.auth: AuthInfo | None = None
        self.recorder = recorder
        self.session_id: str | None = None
        self.negotiated_version: str | None = None
        """The legacy version from ``InitializeResult`` (sent as ``MCP-Protocol-Version``)."""
        self._http = http
        self._tg = task_group
        self._headers = dict(headers or {})
        self._inbox_send, self._inbox = anyio.create_memory_object_stream[Received](math.inf)
        self._initialize_ids: set[RequestId] = set()
        self._get_stream_started = False
        self._closed = False
        self._param_names: dict[str, dict[str, str]] = {}
        """Per listed tool, ``{argument: header name}`` from its ``x-mcp-header`` annotations."""
        self._open: dict[RequestId, anyio.CancelScope] = {}
        """The cancel scope of each request's POST while its response is read (closing one cancels it)."""
        self.authorizer = authorizer
        self._auth_lock = anyio.Lock()

    # -- sending ---------------------------------------------------------------------------------
    def headers_for(self, message: JSONRPCMessage) -> dict[str, str]:
        """The HTTP headers of the POST that carries ``message``."""
        headers = {"Accept": H.ACCEPT_BOTH, "Content-Type": H.JSON, **self._headers}
        version = H.message_version(message)
        if isinstance(message, (JSONRPCRequest, JSONRPCNotification)) and H.is_modern_version(version):
            assert version is not None
            headers.update(H.modern_request_headers(message, version))
            if isinstance(message, JSONRPCRequest) and message.method == "tools/call":
                params = message.params or {}
                names = self._param_names.get(str(params.get("name")), {})
                headers.update(param_headers(names, params.get("arguments")))
            return headers
        if self.session_id is not None:
            headers[H.MCP_SESSION_ID] = self.session_id
        legacy_version = self.negotiated_version or (self.revision if not H.is_modern_version(self.revision) else None)
        if legacy_version is not None and not (isinstance(message, JSONRPCRequest) and message.method == "initialize") \
                and H.MCP_PROTOCOL_VERSION in revision_at(legacy_version).http_headers:
            # The header came with 2025-06-18; a session that negotiated an older revision goes without.
            headers[H.MCP_PROTOCOL_VERSION] = legacy_version
        return headers

    def cancels_by_closing(self, message: JSONRPCMessage) -> TypeGuard[JSONRPCNotification]:
        """Whether :meth:`send` hangs up a request's POST for ``message`` instead of posting it: a
        ``notifications/cancelled`` in 2026-07-28, where closing the response stream is the cancellation."""
        return isinstance(message, JSONRPCNotification) and message.method == "notifications/cancelled" \
            and H.is_modern_version(H.message_version(message) or self.revision)

    async def send(self, message: JSONRPCMessage, *, related_request_id: RequestId | None = None) -> None:
        if self._closed:
            raise TransportClosed(f"the HTTP link to {self.info.name} is closed")
        if isinstance(message, JSONRPCRequest) and message.method == "initialize":
            self._initialize_ids.add(message.id)
            self.session_id = None  # a new handshake starts a new session
            self.negotiated_version = None
        if self.cancels_by_closing(message):
            self._cancel_by_closing(message)
            return
        headers = self.headers_for(message)
        text = encode(message)
        self.recorder.record_message(
            link=self.info.name, sender=self.info.client, receiver=self.info.server, raw=text, transport="http",
            revision=self.revision,
            framing={"http": {"request": {"method": "POST", "url": self.url, "headers": H.shown_headers(headers)}}},
            t_ms=stamp(self.recorder))
        self._tg.start_soon(self._post, message, text, headers)
        if isinstance(message, JSONRPCNotification) and message.method == "notifications/initialized" \
                and not self._get_stream_started:
            self._get_stream_started = True
            # Wait until the server has answered the GET (or refused it): from then on nothing it sends
            # outside a request can be missed, and a later request cannot overtake the GET on the way.
            await self._tg.start(self._listen)

    # -- receiving -------------------------------------------------------------------------------
    def _record_in(self, raw: str, status: int, content_type: str, sse: bool = False) -> None:
        framing: dict[str, Any] = {"http": {"response": {"status": status, "content_type": content_type}}}
        if self.session_id is not None:
            framing["http"]["response"]["session"] = self.session_id[:8] + "…"
        if sse:
            framing["http"]["sse"] = {"event": "message"}
        self.recorder.record_message(link=self.info.name, sender=self.info.server, receiver=self.info.client,
                                     raw=raw, transport="http", revision=self.revision, framing=framing,
                                     t_ms=stamp(self.recorder))

    async def _deliver(self, raw: str, request: JSONRPCMessage | None) -> bool:
        """Queue the message(s) in ``raw``; ``True`` when one of them answered ``request``."""
        decoded = decode(raw)
        if isinstance(decoded, Batch):
            rev = REVISIONS.get(self.revision or "")
            if rev is not None and rev.batching:  # 2025-03-26 allowed batches: read the items one by one
                answered = False
                for item in decoded.items:
                    answered = await self._deliver_one(item, request) or answered
                return answered
            decoded = InvalidMessage(raw, JSONRPCErrorResponse(None, error_object(INVALID_REQUEST)),
                                     "a batch in a response body", False)
        return await self._deliver_one(decoded, request)

    async def _deliver_one(self, decoded: JSONRPCMessage | InvalidMessage, request: JSONRPCMessage | None) -> bool:
        if isinstance(decoded, JSONRPCErrorResponse) and decoded.id is None and isinstance(request, JSONRPCRequest):
            # An HTTP-level rejection (bad header, bad session …) names no id: it answers our POST.
            decoded = JSONRPCErrorResponse(request.id, decoded.error)
        if isinstance(decoded, JSONRPCResultResponse) and decoded.id in self._initialize_ids:
            version = decoded.result.get("protocolVersion")
            self.negotiated_version = version if isinstance(version, str) else None
        answered = isinstance(request, JSONRPCRequest) \
            and isinstance(decoded, (JSONRPCResultResponse, JSONRPCErrorResponse)) and decoded.id == request.id
        if answered and isinstance(request, JSONRPCRequest) and request.method == "tools/list" \
                and isinstance(decoded, JSONRPCResultResponse):
            self._learn_param_headers(decoded.result)
        await self._inbox_send.send(decoded)
        return answered

    def _learn_param_headers(self, result: Mapping[str, Any]) -> None:
        """Remember which arguments of each listed tool go into ``Mcp-Param-*`` headers (2026-07-28)."""
        for tool in result.get("tools") or ():
            if isinstance(tool, Mapping) and isinstance(tool.get("name"), str):
                self._param_names[tool["name"]] = header_names(tool.get("inputSchema"))

    def _cancel_by_closing(self, notification: JSONRPCNotification) -> None:
        """2026-07-28 over HTTP: closing a request's response stream *is* its cancellation, so the
        session's ``notifications/cancelled`` is not POSTed; the open POST is hung up instead."""
        request_id = (notification.params or {}).get("requestId")
        scope = self._open.pop(request_id, None) if isinstance(request_id, (str, int)) else None
        self.recorder.record_event(
            kind="transport", link=self.info.name, sender=self.info.client, receiver=self.info.server,
            text=(f"client closes the response stream of request {request_id!r} instead of sending "
                  "notifications/cancelled (2026-07-28: closing the stream is the cancellation)"
                  if scope is not None else f"nothing to cancel: request {request_id!r} has no open response stream"),
            transport="http", marks=("cancelled",), request_id=request_id)
        if scope is not None:
            scope.cancel()

    async def _post(self, message: JSONRPCMessage, text: str, headers: dict[str, str]) -> None:
        if not isinstance(message, JSONRPCRequest):
            await self._post_now(message, text, headers)
            return
        with anyio.CancelScope() as scope:
            self._open[message.id] = scope
            try:
                await self._post_now(message, text, headers)
            finally:
                if self._open.get(message.id) is scope:
                    del self._open[message.id]

    async def _post_now(self, message: JSONRPCMessage, text: str, headers: dict[str, str]) -> None:
        request = message if isinstance(message, JSONRPCRequest) else None
        refused: H.HttpResponse | None = None
        try:
            for attempt in range(MAX_AUTHORIZATIONS + 1):
                async with self._http.stream("POST", self.url, content=text.encode(), headers=headers) as response:
                    if self.authorizer is not None and response.status_code in REFUSING_STATUSES \
                            and attempt < MAX_AUTHORIZATIONS:
                        body = (await response.aread()).decode("utf-8", errors="replace")
                        refused = H.HttpResponse(response.status_code, H.Headers(response.headers.items()), body)
                    else:
                        if isinstance(message, JSONRPCRequest) and message.id in self._initialize_ids:
                            session = response.headers.get(H.MCP_SESSION_ID)
                            if session:
                                self.session_id = session
                        await self._read_response(response, request, sent_session=headers.get(H.MCP_SESSION_ID))
                        return
                headers = {**headers, "Authorization": await self._authorize(refused, headers.get("Authorization"))}
        except httpx.HTTPError as exc:
            logger.warning("POST to %s failed: %s", self.url, exc)
            if request is not None:
                await self._refuse(request, f"HTTP transport error: {type(exc).__name__}: {exc}", None)
        except OAuthFailed as exc:
            self.recorder.record_event(kind="transport", link=self.info.name, sender=self.info.client,
                                       receiver=self.info.server, text=f"authorization failed: {exc.reason}",
                                       transport="http", marks=("auth",))
            if request is not None and refused is not None:
                rule = f" ({exc.rule})" if exc.rule else ""
                said = refusal_text(refused.status, refused.body or "", refused.reason)
                await self._refuse(request, f"{said}; the authorization flow failed: {exc.reason}{rule}",
                                   refused.status)

    async def _authorize(self, refused: H.HttpResponse, sent: str | None) -> str:
        """The ``Authorization`` header to retry with after ``refused``: a token another request's
        flow produced meanwhile, else a new one from the authorizer (one flow at a time)."""
        assert self.authorizer is not None
        async with self._auth_lock:
            current = self._headers.get("Authorization")
            if current is not None and current != sent:
                return current
            challenge = refused.headers.get("WWW-Authenticate") or "(no challenge)"
            self.recorder.record_event(kind="transport", link=self.info.name, sender=self.info.server,
                                       receiver=self.info.client, transport="http", marks=("auth",),
                                       text=f"HTTP {refused.status} {challenge}: run the authorization flow",
                                       framing={"http": {"response": {"status": refused.status, "headers": {
                                           "WWW-Authenticate": challenge}}}})
            try:
                token = await self.authorizer(refused)
            except (KeyError, TypeError, ValueError, OSError) as exc:  # a malformed document, a busy port …
                raise OAuthFailed(f"{type(exc).__name__}: {exc}", "The authorization flow met an answer it "
                                  "cannot use.") from exc
            self._headers["Authorization"] = f"Bearer {token}"
            return self._headers["Authorization"]

    async def _fail(self, request: JSONRPCRequest, code: int, text: str, status: int) -> None:
        """Answer ``request`` with an error response made here (a 4xx the server gave without one)."""
        error = error_object(code, text, {"httpStatus": status})
        await self._inbox_send.send(JSONRPCErrorResponse(request.id, error))

    async def _refuse(self, request: JSONRPCRequest, text: str, status: int | None) -> None:
        """Fail ``request`` with a :class:`RequestRefused`: no message, so nothing answers it."""
        await self._inbox_send.send(RequestRefused(f"{self.info.name} refused {request.method} (id {request.id}): "
                                                   f"{text}", request.id, status=status))

    async def _read_response(self, response: httpx.Response, request: JSONRPCRequest | None,
                             sent_session: str | None) -> None:
        status = response.status_code
        content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if status == 202:
            self.recorder.record_event(kind="transport", link=self.info.name, sender=self.info.server,
                                       receiver=self.info.client, text="202 Accepted", transport="http",
                                       framing={"http": {"response": {"status": 202}}})
            return
        if content_type == H.EVENT_STREAM and status == 200:
            position = StreamPosition()
            try:
                await self._read_events(response, request, position)
            except httpx.HTTPError as cut:
                if position.last_id is None or self.session_id is None:
                    raise  # nothing to resume from: the request fails with the cut
                await self._resume(request, position, cut)
                return
            if request is None or position.answered:
                return
            if position.last_id is not None and self.session_id is not None:
                await self._resume(request, position, None)  # closed before the answer: poll for it
            else:
                await self._refuse(request, "the response stream ended without a response", None)
            return
        body = (await response.aread()).decode("utf-8", errors="replace")
        if status == 404 and sent_session is not None:
            self._record_in(body, status, content_type)
            self.session_id = None
            await self._inbox_send.send(SessionExpired(
                f"{self.info.name} answered 404 for session {sent_session[:8]}…: the session is gone; "
                "initialize again"))
            return
        if content_type == H.JSON and body.strip() and is_jsonrpc_answer(body):
            self._record_in(body, status, content_type)
            await self._deliver(body, request)
            return
        text = refusal_text(status, body, response.reason_phrase)
        self.recorder.record_event(kind="transport", link=self.info.name, sender=self.info.server,
                                   receiver=self.info.client, text=f"HTTP {status} {body[:200]}".strip(),
                                   transport="http", framing={"http": {"response": {"status": status}}})
        if request is None:
            return  # a notification's or a response's POST: nothing waits, nothing answers
        if status in REFUSING_STATUSES or status >= 500 or 200 <= status < 300:
            await self._refuse(request, text, status)
        else:
            await self._fail(request, H.error_code_for_status(status), text, status)

    async def _read_events(self, response: httpx.Response, request: JSONRPCRequest | None,
                           position: StreamPosition) -> None:
        """Deliver an SSE body's messages as they come, noting the last event id and ``retry`` seen;
        stop once ``request`` is answered (its response is the last thing its stream carries)."""
        parser = SseParser()
        async for line in response.aiter_lines():
            event = parser.feed_line(line.rstrip("\r"))
            if event is None:
                continue
            if event.id:
                position.last_id = event.id
            if event.retry is not None:
                position.retry_ms = event.retry
            if event.event == "message" and event.data.strip():
                self._record_in(event.data, response.status_code, H.EVENT_STREAM, sse=True)
                if await self._deliver(event.data, request) and request is not None:
                    position.answered = True
                    return

    async def _resume(self, request: JSONRPCRequest | None, position: StreamPosition,
                      cut: httpx.HTTPError | None) -> None:
        """Legacy resumption: the stream broke (``cut``), or the server closed it before answering
        (``None``: 2025-11-25 lets a server do that and have the client poll), after event
        ``position.last_id``. Wait the ``retry`` the server asked for, then ``GET`` with
        ``Last-Event-ID`` (at most :data:`MAX_RESUMES` times in a row) and read on from there."""
        for _ in range(MAX_RESUMES):
            if position.retry_ms:
                await anyio.sleep(position.retry_ms / 1000)
            headers = {"Accept": H.EVENT_STREAM, H.MCP_SESSION_ID: self.session_id or "",
                       H.LAST_EVENT_ID: position.last_id or "", **self._headers}
            if self.negotiated_version:
                headers[H.MCP_PROTOCOL_VERSION] = self.negotiated_version
            why = f"the stream broke ({type(cut).__name__})" if cut is not None else \
                "the server closed the stream before answering"
            waited = f" after the {position.retry_ms} ms retry" if position.retry_ms else ""
            self.recorder.record_event(kind="transport", link=self.info.name, sender=self.info.client,
                                       receiver=self.info.server, transport="http",
                                       text=f"{why}; GET{waited} with Last-Event-ID: {position.last_id}",
                                       marks=("resume",))
            try:
                async with self._http.stream("GET", self.url, headers=headers,
                                             timeout=httpx.Timeout(10, read=None)) as response:
                    if response.status_code != 200:
                        break  # the server cannot resume it: the request fails
                    await self._read_events(response, request, position)
                    if request is None or position.answered:
                        return
                    cut = None  # closed again before the answer: poll again
            except httpx.HTTPError as again:
                cut = again
        if cut is not None:
            raise cut
        if request is not None:
            await self._refuse(request, "the server closed the stream and never sent the response", None)

    async def _listen(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """The legacy GET stream: server messages that belong to no request. ``task_status`` is
        told once the server has answered the GET (or refused it, or could not be reached)."""
        if self.session_id is None:
            task_status.started()
            return
        headers = {"Accept": H.EVENT_STREAM, H.MCP_SESSION_ID: self.session_id, **self._headers}
        if self.negotiated_version and H.MCP_PROTOCOL_VERSION in revision_at(self.negotiated_version).http_headers:
            headers[H.MCP_PROTOCOL_VERSION] = self.negotiated_version
        try:
            async with self._http.stream("GET", self.url, headers=headers,
                                         timeout=httpx.Timeout(10, read=None)) as response:
                task_status.started()
                if response.status_code != 200:
                    return  # 405: this server offers no GET stream, which is allowed
                parser = SseParser()
                async for line in response.aiter_lines():
                    event = parser.feed_line(line.rstrip("\r"))
                    if event is not None and event.event == "message" and event.data.strip():
                        self._record_in(event.data, 200, H.EVENT_STREAM, sse=True)
                        await self._deliver(event.data, None)
        except httpx.HTTPError as exc:
            logger.info("the GET stream ended: %s", exc)
        finally:
            try:
                task_status.started()
            except RuntimeError:
                pass  # already told

    async def receive(self) -> JSONRPCMessage | InvalidMessage:
        try:
            item = await self._inbox.receive()
        except anyio.ClosedResourceError:
            raise anyio.EndOfStream from None
        if isinstance(item, (SessionExpired, RequestRefused)):
            raise item
        return item

    async def aclose(self) -> None:
        """End the link; a legacy session is ended with DELETE, as the spec asks."""
        if self._closed:
            return
        self._closed = True
        if self.session_id is not None:
            with anyio.move_on_after(2, shield=True):
                try:
                    response = await self._http.delete(self.url, headers={H.MCP_SESSION_ID: self.session_id,
                                                                          **self._headers})
                    self.recorder.record_event(kind="transport", link=self.info.name, sender=self.info.client,
                                               receiver=self.info.server,
                                               text=f"DELETE session {self.session_id[:8]}… → {response.status_code}",
                                               transport="http")
                except httpx.HTTPError:
                    pass
        self._inbox_send.close()


@asynccontextmanager
async def open_http(url: str, *, name: str | None = None, recorder: Recorder | None = None,
                    headers: Mapping[str, str] | None = None, timeout: float = 30.0,
                    authorizer: Authorizer | None = None) -> AsyncIterator[HttpClientStream]:
    """Open a client link to the Streamable HTTP endpoint at ``url`` for the duration of the block
    (``authorizer``: what to do about a ``401``/``403``, see the module's docstring)."""
    name = name or httpx.URL(url).host or "server"
    recorder = recorder if recorder is not None else WallClockRecorder()
    info = LinkInfo(name=name, transport="http", client=f"client/{name}", server=f"server/{name}")
    async with httpx.AsyncClient(timeout=httpx.Timeout(timeout)) as http, anyio.create_task_group() as tg:
        stream = HttpClientStream(url, info, http, tg, recorder, headers, authorizer)
        recorder.record_event(kind="transport", link=name, sender=info.client, receiver=info.server,
                              text=f"HTTP client for {url}", transport="http")
        try:
            yield stream
        finally:
            await stream.aclose()
            tg.cancel_scope.cancel()
