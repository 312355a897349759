"""A real Streamable HTTP endpoint on 127.0.0.1, for both eras (course chapter 12).

:class:`StreamableHTTPEndpoint` is an ASGI application (served by uvicorn through
:func:`serve_http`) that turns HTTP exchanges into :class:`~mcp_sim.transports.base.MessageStream`
messages and hands them to the simulator's server session, ``serve(server, stream)``:

* **legacy** (≤ 2025-11-25) — a POSTed ``initialize`` opens a *session*: one long-lived stream and
  one ``serve`` task, named by the ``Mcp-Session-Id`` header the client repeats on every later
  POST. Each POSTed request waits for its response on its own channel; a message the server sends
  while handling it (progress, a log, an ``elicitation/create`` request) makes that POST's answer an
  SSE stream, otherwise the answer is plain JSON. Server messages unrelated to any request go to
  the session's GET stream. DELETE ends the session; a session id we do not know gets ``404``.
* **modern** (2026-07-28) — every POST stands alone: its headers are checked against its body
  (``-32020`` on mismatch), a fresh one-request stream is served, and the answer's status follows
  the error code (``-32601`` → 404, invalid params / missing capability / unsupported version →
  400). GET and DELETE get ``405``.

For both: a browser ``Origin`` other than a loopback one gets ``403`` (the DNS-rebinding defence),
and the endpoint only ever binds to a loopback address. With a token validator, a request without a
valid bearer token gets ``401`` (``403`` when the token lacks a required scope), as the simulated
endpoint answers. Those two are this module's own (a real
socket on this machine); every other rule — header names, header checks, content negotiation
(``406``/``415``), the status table — comes from :mod:`mcp_sim.transports.http`, the same rulebook the
simulated endpoint follows, and SSE events from :mod:`mcp_sim.transports.sse`.

A 2026-07-28 POST's session ends its input once the POST is answered but may go on with background
work it started (a task, which later POSTs poll); it is cancelled only when the client hangs up
before the answer, which is the cancellation in that revision. The server end of each conversation
is :class:`~mcp_sim.bridge.http_server_stream.HttpServerStream`.

Which era a POST belongs to is read from it: a session id or an ``initialize`` body means legacy;
anything else is treated as modern (its header checks then say what is missing). Every frame is
recorded as it is read or written, so a real HTTP session shows in the trace player like a
simulated one.
"""

from __future__ import annotations

import json
import logging
import secrets
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from mcp_sim.bridge.http_server_stream import (
    LOOPBACK_HOSTS,
    HttpServerStream,
    mcp_headers,
    origin_allowed,
    pump_events,
    resume_stream,
    sse_bytes,
    sse_head,
)
from mcp_sim.bridge.recording import WallClockRecorder, stamp
from mcp_sim.protocol.errors import INVALID_REQUEST
from mcp_sim.protocol.revisions import REVISIONS
from mcp_sim.security.identity import AuthInfo
from mcp_sim.trace.recorder import Recorder
from mcp_sim.transports import http as H
from mcp_sim.transports.base import LinkInfo
from mcp_sim.transports.http_server import TokenValidator
from mcp_sim.transports.sse import comment
from mcp_sim.wire.jsonrpc import (
    Batch,
    InvalidMessage,
    JSONRPCErrorResponse,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResultResponse,
    decode,
    encode,
    error_object,
)

logger = logging.getLogger(__name__)

ServeFunction = Callable[[Any, Any], Awaitable[None]]
"""``serve(server, stream)``: runs a server session over one stream until the stream ends."""

def _default_serve() -> ServeFunction:
    from mcp_sim.roles.server_session import serve

    return serve  # type: ignore[return-value]


class StreamableHTTPEndpoint:
    """The MCP endpoint as an ASGI app. ``server`` is the simulator's ``Server`` (shared by every
    session); ``revision`` pins one revision (its era decides which half of the endpoint answers)."""

    def __init__(self, server: Any, *, name: str | None = None, recorder: Recorder | None = None,
                 revision: str | None = None, allowed_origins: tuple[str, ...] = (),
                 serve: ServeFunction | None = None, auth: AuthInfo | None = None,
                 token_validator: TokenValidator | None = None, required_scopes: tuple[str, ...] = (),
                 resource_metadata: str | None = None) -> None:
        self.server = server
        self.name = name or getattr(server, "name", None) or "server"
        self.recorder = recorder if recorder is not None else WallClockRecorder()
        self.revision = revision
        era = REVISIONS[revision].era if revision in REVISIONS else None
        self.legacy_allowed = era in (None, "legacy")
        self.modern_allowed = era in (None, "modern")
        self.allowed_origins = allowed_origins
        self.auth = auth
        self.token_validator = token_validator
        """With a validator, every request needs ``Authorization: Bearer <token>`` (401/403 otherwise)."""
        self.required_scopes = required_scopes
        self.resource_metadata = resource_metadata
        self._serve = serve
        self.info = LinkInfo(name=self.name, transport="http", client=f"client/{self.name}",
                             server=f"server/{self.name}")
        self.sessions: dict[str, HttpServerStream] = {}
        self._task_group: anyio.abc.TaskGroup | None = None

    # -- plumbing ----------------------------------------------------------------------------------
    @property
    def serve(self) -> ServeFunction:
        if self._serve is None:
            self._serve = _default_serve()
        return self._serve

    def app(self, path: str = "/mcp") -> Starlette:
        """A Starlette app with this endpoint at ``path``; its lifespan owns the legacy sessions."""

        @asynccontextmanager
        async def lifespan(_app: Starlette) -> AsyncIterator[None]:
            async with anyio.create_task_group() as tg:
                self._task_group = tg
                try:
                    yield
                finally:
                    await self.close_sessions()
                    tg.cancel_scope.cancel()
                    self._task_group = None

        return Starlette(routes=[Route(path, endpoint=self, methods=["GET", "POST", "DELETE"])],
                         lifespan=lifespan)

    async def close_sessions(self) -> None:
        for session in list(self.sessions.values()):
            await session.aclose()
        self.sessions.clear()

    def _record_in(self, raw: str, headers: Headers, http_method: str = "POST") -> None:
        self.recorder.record_message(
            link=self.name, sender=self.info.client, receiver=self.info.server, raw=raw, transport="http",
            revision=headers.get(H.MCP_PROTOCOL_VERSION),
            framing={"http": {"request": {"method": http_method, "headers": mcp_headers(headers)}}},
            t_ms=stamp(self.recorder))

    def _record_out(self, raw: str, status: int, content_type: str, revision: str | None,
                    headers: Mapping[str, str] | None = None) -> None:
        framing: dict[str, Any] = {"http": {"response": {"status": status, "content_type": content_type,
                                                         **({"headers": dict(headers)} if headers else {})}}}
        if content_type == H.EVENT_STREAM:
            framing["http"]["sse"] = {"event": "message"}
        self.recorder.record_message(link=self.name, sender=self.info.server, receiver=self.info.client, raw=raw,
                                     transport="http", revision=revision, framing=framing, t_ms=stamp(self.recorder))

    def _note(self, text: str, marks: tuple[str, ...] = ()) -> None:
        self.recorder.record_event(kind="transport", link=self.name, sender=self.info.server,
                                   receiver=self.info.client, text=text, transport="http", marks=marks)

    async def _reply(self, send: Send, status: int, body: bytes = b"", content_type: str | None = None,
                     headers: Mapping[str, str] | None = None) -> None:
        raw_headers = [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
        if content_type:
            raw_headers.append((b"content-type", content_type.encode()))
        raw_headers.append((b"content-length", str(len(body)).encode()))
        await send({"type": "http.response.start", "status": status, "headers": raw_headers})
        await send({"type": "http.response.body", "body": body})

    async def _reply_error(self, send: Send, status: int, error: JSONRPCErrorResponse, revision: str | None,
                           headers: Mapping[str, str] | None = None) -> None:
        text = encode(error)
        self._record_out(text, status, H.JSON, revision, headers)
        await self._reply(send, status, text.encode(), H.JSON, headers)

    # -- ASGI entry --------------------------------------------------------------------------------
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = Headers(scope=scope)
        if not origin_allowed(headers.get("origin"), self.allowed_origins):
            self._note(f"refused a request from Origin {headers.get('origin')!r} (403)", ("attack",))
            await self._reply(send, 403, b"Forbidden: invalid Origin", "text/plain")
            return
        refusal = self._check_bearer(headers)
        if refusal is not None:
            status, challenge, body = refusal
            self._note(f"refused a request without a valid bearer token ({status})", ("auth",))
            await self._reply(send, status, body, H.JSON if body else None, {"WWW-Authenticate": challenge})
            return
        method = scope["method"]
        if method == "POST":
            await self._post(scope, receive, send, headers)
        elif method == "GET":
            await self._get(receive, send, headers)
        elif method == "DELETE":
            await self._delete(send, headers)
        else:
            await self._reply(send, 405, b"", headers={"Allow": "GET, POST, DELETE"})

    def _check_bearer(self, headers: Headers) -> tuple[int, str, bytes] | None:
        """The resource server's rules of MCP authorization, as the simulated endpoint applies them: no
        token or an invalid one → ``401``, a token without the required scopes → ``403``, each with its
        ``WWW-Authenticate`` challenge (and an OAuth-style JSON body naming the error). ``None``: go on."""
        if self.token_validator is None:
            return None
        metadata = f'resource_metadata="{self.resource_metadata or self._metadata_url(headers)}"'
        value = headers.get("authorization")
        wanted = f', scope="{" ".join(self.required_scopes)}"' if self.required_scopes else ""  # what to ask for
        if value is None or not value.startswith("Bearer "):
            return 401, f"Bearer {metadata}{wanted}", b""
        auth = self.token_validator(value[len("Bearer "):])
        if auth is None:
            body = json.dumps({"error": "invalid_token", "error_description": "the bearer token is not valid"})
            return 401, f'Bearer error="invalid_token", {metadata}{wanted}', body.encode()
        missing = [scope for scope in self.required_scopes if scope not in auth.scopes]
        if missing:
            body = json.dumps({"error": "insufficient_scope", "error_description": f"needs {' '.join(missing)}"})
            scopes = " ".join(self.required_scopes)
            return 403, f'Bearer error="insufficient_scope", scope="{scopes}", {metadata}', body.encode()
        return None

    def _caller(self, headers: Headers) -> AuthInfo | None:
        """Who calls: the validated token's identity, or the endpoint's configured one."""
        value = headers.get("authorization")
        if self.token_validator is not None and value is not None and value.startswith("Bearer "):
            return self.token_validator(value[len("Bearer "):]) or self.auth
        return self.auth

    @staticmethod
    def _metadata_url(headers: Headers) -> str:
        return f"http://{headers.get('host', 'localhost')}/.well-known/oauth-protected-resource"

    async def _read_body(self, receive: Receive) -> bytes:
        chunks = []
        while True:
            event = await receive()
            if event["type"] == "http.disconnect":
                raise anyio.EndOfStream
            chunks.append(event.get("body", b""))
            if not event.get("more_body", False):
                return b"".join(chunks)

    # -- POST --------------------------------------------------------------------------------------
    async def _post(self, scope: Scope, receive: Receive, send: Send, headers: Headers) -> None:
        try:
            body = await self._read_body(receive)
        except anyio.EndOfStream:
            return
        raw = body.decode("utf-8", errors="replace")
        self._record_in(raw, headers)
        version_header = headers.get(H.MCP_PROTOCOL_VERSION)
        refused = H.refuse_content("POST", headers)
        if refused is not None:
            await self._reply_error(send, refused[0], JSONRPCErrorResponse(None, error_object(
                INVALID_REQUEST, refused[1])), version_header)
            return
        message = decode(body)  # batches (2025-03-26 only) are refused here with -32600
        if isinstance(message, (InvalidMessage, Batch)):
            reply = message.reply if isinstance(message, InvalidMessage) else \
                JSONRPCErrorResponse(None, error_object(INVALID_REQUEST, "batches are not supported"))
            await self._reply_error(send, 400, reply, version_header)
            return
        session_id = headers.get(H.MCP_SESSION_ID)
        is_initialize = isinstance(message, JSONRPCRequest) and message.method == "initialize"
        if session_id is not None and self.legacy_allowed:
            session = self.sessions.get(session_id)
            if session is None:
                await self._reply_error(send, 404, JSONRPCErrorResponse(None, error_object(
                    INVALID_REQUEST, "Session not found: start a new one with initialize")), version_header)
                return
            await self._legacy_message(session, message, receive, send, version_header)
        elif is_initialize and self.legacy_allowed:
            await self._legacy_initialize(message, receive, send, self._caller(headers))  # type: ignore[arg-type]
        elif self.modern_allowed:
            await self._modern(message, receive, send, headers)
        else:
            await self._reply_error(send, 400, JSONRPCErrorResponse(None, error_object(
                INVALID_REQUEST, "Bad Request: no valid Mcp-Session-Id; a legacy session starts with "
                "initialize")), version_header)

    async def _legacy_initialize(self, message: JSONRPCRequest, receive: Receive, send: Send,
                                 auth: AuthInfo | None) -> None:
        if self._task_group is None:
            raise RuntimeError("the endpoint's app is not running (its lifespan owns the sessions)")
        session_id = secrets.token_hex(16)  # MUST be unguessable: a real session, so real randomness
        session = HttpServerStream(self.info, session_id=session_id, auth=auth)
        self.sessions[session_id] = session

        async def run_session() -> None:
            try:
                await self.serve(self.server, session)
            except Exception:
                logger.exception("legacy session %s failed", session_id)
            finally:
                await session.aclose()
                self.sessions.pop(session_id, None)
                self._note(f"legacy session {session_id[:8]}… ended")

        self._note(f"legacy session {session_id[:8]}… opened")
        self._task_group.start_soon(run_session)
        session.first_use(message.id)
        await self._exchange(session, message, receive, send, modern=False,
                             extra_headers={H.MCP_SESSION_ID: session_id}, cancel_on_disconnect=False)

    async def _legacy_message(self, session: HttpServerStream, message: JSONRPCMessage, receive: Receive,
                              send: Send, version_header: str | None) -> None:
        if version_header is not None and (version_header not in REVISIONS
                                           or REVISIONS[version_header].era != "legacy"):
            await self._reply_error(send, 400, JSONRPCErrorResponse(None, error_object(
                INVALID_REQUEST, f"Bad Request: unsupported MCP-Protocol-Version {version_header!r}")),
                version_header)
            return
        if isinstance(message, JSONRPCRequest) and not session.first_use(message.id):
            await self._reply_error(send, 400, session.used_id_error(message.id), version_header)
        elif isinstance(message, JSONRPCRequest):
            await self._exchange(session, message, receive, send, modern=False,
                                 extra_headers={H.MCP_SESSION_ID: session.session_id or ""},
                                 cancel_on_disconnect=False)
        else:
            await session.deliver(message)  # a notification, or the answer to a server request
            await self._reply(send, 202)

    async def _modern(self, message: JSONRPCMessage, receive: Receive, send: Send, headers: Headers) -> None:
        version = headers.get(H.MCP_PROTOCOL_VERSION)
        if isinstance(message, (JSONRPCResultResponse, JSONRPCErrorResponse)):
            await self._reply_error(send, 400, JSONRPCErrorResponse(None, error_object(
                INVALID_REQUEST, "a 2026-07-28 client never sends responses")), version)
            return
        mismatch = H.check_modern_headers(headers, message)
        if mismatch is not None:
            rid = message.id if isinstance(message, JSONRPCRequest) else None
            self._note(f"header check failed: {mismatch.message}")
            await self._reply_error(send, 400, JSONRPCErrorResponse(rid, mismatch.to_error_object()), version)
            return
        if isinstance(message, JSONRPCNotification):
            # The 2026 core defines no client-to-server notifications over HTTP (cancelling is
            # closing the response stream): accept and drop.
            await self._reply(send, 202)
            return
        stream = HttpServerStream(self.info, revision=version, auth=self._caller(headers))
        serving = anyio.CancelScope()

        async def run() -> None:
            with serving:
                try:
                    await self.serve(self.server, stream)
                except Exception:
                    logger.exception("serving a 2026-07-28 request failed")
            await stream.aclose()

        lasting = self._task_group
        if lasting is None:  # no lifespan (the app mounted elsewhere): the POST's own task group
            async with anyio.create_task_group() as tg:
                tg.start_soon(run)
                await self._exchange(stream, message, receive, send, modern=True, extra_headers={},
                                     cancel_on_disconnect=True)
                stream.end_input()
                serving.cancel()
            return
        # The session of one POST may have started background work (a task, polled by later POSTs):
        # once the POST is answered it ends its input and finishes that work on the endpoint's own
        # task group. A POST whose client hung up first is cancelled, work and all.
        lasting.start_soon(run)
        answered = await self._exchange(stream, message, receive, send, modern=True, extra_headers={},
                                        cancel_on_disconnect=True)
        stream.end_input()
        if not answered:
            serving.cancel()

    async def _exchange(self, stream: HttpServerStream, request: JSONRPCRequest, receive: Receive, send: Send,
                        *, modern: bool, extra_headers: dict[str, str], cancel_on_disconnect: bool) -> bool:
        """Deliver one request and write what the server sends about it: JSON if the first thing is
        the response, otherwise an SSE stream that ends with the response. Returns whether the
        response was written (``False``: the client hung up, or the session ended, first)."""
        channel = stream.open_exchange(request.id)
        await stream.deliver(request)
        done = [False]  # the response was written
        number: int | None = None

        async def watch_disconnect(scope: anyio.CancelScope) -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            if done[0]:
                return  # the normal end of an exchange, not a cancellation
            if cancel_on_disconnect:
                self._note(f"the client closed the stream of request {request.id}: that cancels it "
                           "(2026-07-28)", ("cancelled",))
            else:
                self._note(f"the client disconnected from request {request.id}; in the legacy era that is "
                           "not a cancellation: the stream is kept for a GET with Last-Event-ID")
            scope.cancel()

        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(watch_disconnect, tg.cancel_scope)
                first = await channel.receive()
                base = dict(extra_headers)
                revision = stream.revision
                if revision is None and not modern and request.method == "initialize" and request.params:
                    asked = request.params.get("protocolVersion")
                    revision = asked if isinstance(asked, str) else None
                if isinstance(first, (JSONRPCResultResponse, JSONRPCErrorResponse)):
                    code = first.error.code if isinstance(first, JSONRPCErrorResponse) else None
                    status = H.modern_status_for(code) if modern else 200
                    text = encode(first)
                    done[0] = True
                    self._record_out(text, status, H.JSON, revision, base or None)
                    await self._reply(send, status, text.encode(), H.JSON, base)
                else:
                    number = None if modern else stream.new_stream()
                    await sse_head(send, base)
                    await self._pump(send, stream, channel, first, number, revision, done)
                tg.cancel_scope.cancel()
        except* (anyio.EndOfStream, anyio.ClosedResourceError, OSError):
            pass  # the channel or the client went away: raised inside the task group, so as a group
        finally:
            if number is not None and not done[0] and not stream.closed.is_set():
                stream.parked[number] = (request.id, channel)  # the request runs on; a GET may resume it
            else:
                stream.close_exchange(request.id)
        return done[0]

    async def _pump(self, send: Send, stream: HttpServerStream, channel: MemoryObjectReceiveStream[JSONRPCMessage],
                    message: JSONRPCMessage | None, number: int | None, revision: str | None, done: list[bool]) -> None:
        await pump_events(send, stream, channel, message, number, done,
                          lambda text: self._record_out(text, 200, H.EVENT_STREAM, revision))

    async def _resume(self, session: HttpServerStream, last_event_id: str, receive: Receive, send: Send) -> None:
        """Legacy ``GET`` with ``Last-Event-ID``: replay the events of that stream the client missed,
        then, if its request is still running, go on with it until the response."""
        found = session.missed(last_event_id)
        if found is None:
            await self._reply(send, 400, f"Bad Request: unknown Last-Event-ID {last_event_id}".encode(), "text/plain")
            return
        self._note(f"resuming stream {found[0]} after event {last_event_id}: {len(found[1])} event(s) to replay")
        await resume_stream(send, receive, session, *found,
                            lambda text: self._record_out(text, 200, H.EVENT_STREAM, session.revision))

    # -- GET and DELETE ------------------------------------------------------------------------------
    async def _get(self, receive: Receive, send: Send, headers: Headers) -> None:
        session_id = headers.get(H.MCP_SESSION_ID)
        self.recorder.record_event(kind="transport", link=self.name, sender=self.info.client,
                                   receiver=self.info.server, text="GET (open a server-to-client stream)",
                                   transport="http", framing={"http": {"request": {
                                       "method": "GET", "headers": mcp_headers(headers)}}})
        if session_id is None or not self.legacy_allowed:
            status = 405 if self.modern_allowed else 400
            await self._reply(send, status, b"", headers={"Allow": "POST"} if status == 405 else None)
            return
        session = self.sessions.get(session_id)
        if session is None:
            await self._reply(send, 404, b"Session not found", "text/plain")
            return
        refused = H.refuse_content("GET", headers)
        if refused is not None:
            await self._reply(send, refused[0], refused[1].encode(), "text/plain")
            return
        last_event_id = headers.get(H.LAST_EVENT_ID)
        if last_event_id is not None:
            await self._resume(session, last_event_id, receive, send)
            return
        if session.get_stream_open:
            await self._reply(send, 409, b"Conflict: this session already has a GET stream", "text/plain")
            return
        session.get_stream_open = True
        try:
            await send({"type": "http.response.start", "status": 200, "headers": [
                (b"content-type", H.EVENT_STREAM.encode()), (b"cache-control", b"no-cache"),
                (b"mcp-session-id", session_id.encode())]})
            await send({"type": "http.response.body", "body": comment("stream open").encode(), "more_body": True})
            async with anyio.create_task_group() as tg:
                async def watch() -> None:
                    while (await receive())["type"] != "http.disconnect":
                        pass
                    tg.cancel_scope.cancel()

                tg.start_soon(watch)
                async for message in session.standalone:
                    text = encode(message)
                    self._record_out(text, 200, H.EVENT_STREAM, session.revision)
                    await send({"type": "http.response.body", "body": sse_bytes(text), "more_body": True})
                await send({"type": "http.response.body", "body": b""})
                tg.cancel_scope.cancel()
        except (OSError, anyio.ClosedResourceError):
            pass
        finally:
            session.get_stream_open = False

    async def _delete(self, send: Send, headers: Headers) -> None:
        session_id = headers.get(H.MCP_SESSION_ID)
        if session_id is None or not self.legacy_allowed:
            await self._reply(send, 405 if self.modern_allowed else 400, b"",
                              headers={"Allow": "POST"} if self.modern_allowed else None)
            return
        session = self.sessions.pop(session_id, None)
        if session is None:
            await self._reply(send, 404, b"Session not found", "text/plain")
            return
        self._note(f"DELETE: the client ended legacy session {session_id[:8]}…")
        session.end_input()
        await session.aclose()
        await self._reply(send, 200)


# --- running it ---------------------------------------------------------------------------------------

@dataclass
class HttpServerHandle:
    """A running endpoint: where it listens and what it recorded."""

    url: str
    host: str
    port: int
    endpoint: StreamableHTTPEndpoint
    stopped: anyio.Event = field(default_factory=anyio.Event)
    """Set when the HTTP server has stopped (e.g. after Ctrl-C or SIGTERM)."""

    @property
    def recorder(self) -> Recorder:
        return self.endpoint.recorder


def check_loopback(host: str) -> None:
    """Refuse to listen anywhere but on this machine: a local MCP server bound to all interfaces
    can be reached by anyone on the network (the spec: bind local servers to 127.0.0.1)."""
    if host not in LOOPBACK_HOSTS:
        raise ValueError(f"refusing to listen on {host!r}: a local MCP server binds to 127.0.0.1 only")


@asynccontextmanager
async def serve_http(server: Any, *, host: str = "127.0.0.1", port: int = 0, path: str = "/mcp",
                     recorder: Recorder | None = None, revision: str | None = None,
                     allowed_origins: tuple[str, ...] = (), name: str | None = None,
                     serve: ServeFunction | None = None, token_validator: TokenValidator | None = None,
                     required_scopes: tuple[str, ...] = (),
                     setup: Callable[[str, StreamableHTTPEndpoint, Any], Any] | None = None,
                     ) -> AsyncIterator[HttpServerHandle]:
    """Serve ``server`` over real Streamable HTTP on ``host:port`` (``port=0``: any free port) for the
    duration of the block. The handle's ``url`` is the MCP endpoint to give a client. With a
    ``token_validator`` (e.g. :func:`~mcp_sim.transports.http_server.static_tokens`) every request
    needs a valid bearer token carrying ``required_scopes``. ``setup(url, endpoint, app)``, called once
    the URL is known, may configure the endpoint and wrap the ASGI app (the built-in authorization
    server of :mod:`mcp_sim.bridge.http_auth` does)."""
    import uvicorn

    check_loopback(host)
    endpoint = StreamableHTTPEndpoint(server, name=name, recorder=recorder, revision=revision,
                                      allowed_origins=allowed_origins, serve=serve,
                                      token_validator=token_validator, required_scopes=required_scopes)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    actual_port = sock.getsockname()[1]
    url_host = f"[{host}]" if ":" in host else host
    handle = HttpServerHandle(f"http://{url_host}:{actual_port}{path}", host, actual_port, endpoint)
    app = endpoint.app(path) if setup is None else setup(handle.url, endpoint, endpoint.app(path))
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on", timeout_graceful_shutdown=2)
    userver = uvicorn.Server(config)

    async def run_uvicorn() -> None:
        try:
            await userver.serve([sock])
        finally:
            handle.stopped.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(run_uvicorn)
        with anyio.fail_after(10):
            while not userver.started:
                await anyio.sleep(0.01)
        endpoint.recorder.record_event(kind="transport", link=endpoint.name, sender=endpoint.info.server,
                                       receiver=endpoint.info.client, text=f"listening on {handle.url}",
                                       transport="http")
        try:
            yield handle
        finally:
            await endpoint.close_sessions()
            # uvicorn finishes open responses (bounded by timeout_graceful_shutdown), runs the
            # lifespan's shutdown, and ``serve`` returns: the task group then closes.
            userver.should_exit = True


__all__ = ["LOOPBACK_HOSTS", "HttpServerHandle", "HttpServerStream", "StreamableHTTPEndpoint", "check_loopback",
           "origin_allowed", "serve_http"]
