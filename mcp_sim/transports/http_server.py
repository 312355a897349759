"""The server side of Streamable HTTP, both eras (course chapter 06; spec "Transports").

One :class:`SimulatedHttpServer` is one MCP endpoint (``/mcp``) that many clients talk to at once.
It answers every HTTP request at the transport level — Origin, bearer token, headers, sessions — and
hands the JSON-RPC messages inside to the server program, ``main(stream)``, through a
:class:`~mcp_sim.transports.base.MessageStream`. Which stream depends on the era:

**Legacy** (2025-03-26 … 2025-11-25), a *session* per client:

* ``POST`` carries one message. A notification or response is answered ``202 Accepted``. A request is
  answered by an SSE stream (``text/event-stream``) or one JSON body.
* The response to ``initialize`` carries ``Mcp-Session-Id`` (random, visible ASCII); the client sends
  it on every later request. Missing → ``400``; unknown or ended → ``404`` (the client starts over with
  ``initialize``). ``DELETE`` ends the session.
* After initialization the client sends ``MCP-Protocol-Version``; an unsupported value → ``400``; no
  header → assume ``2025-03-26``.
* Each session runs ``main(stream)`` once. Server→client messages about a request (progress, and
  requests such as ``sampling/createMessage`` sent with ``related_request_id``) go on that request's
  SSE stream; all others on the stream the client opened with ``GET`` (``405`` when disabled).
* SSE events have ids; a client that lost a stream resumes it with ``GET`` + ``Last-Event-ID`` and
  gets the events it missed on that stream. 2025-11-25 servers send a *priming event* first.

**Modern** (2026-07-28), stateless:

* ``POST`` only (``GET``/``DELETE`` → ``405``). Each ``POST`` is served by a fresh ``main(stream)``:
  the stream carries that one request and its answer.
* Required headers: ``MCP-Protocol-Version`` equal to ``_meta``'s protocolVersion, ``Mcp-Method`` equal
  to the method, ``Mcp-Name`` equal to ``params.name``/``params.uri`` for ``tools/call``,
  ``resources/read`` and ``prompts/get`` (``params.taskId`` for ``tasks/*``). Missing or different →
  ``400`` with JSON-RPC ``-32020``, answered here, before ``main`` sees anything.
* A JSON answer's status follows the JSON-RPC answer (``-32601`` → 404; ``-32602``, ``-32021``,
  ``-32022`` → 400; see :func:`~mcp_sim.transports.http.modern_status_for`); a notification → ``202``. If the handler sends progress or log notifications
  first, the answer becomes a request-scoped SSE stream ending with the response.
* The client cancels by closing the response stream: the server cancels that request's handler.
  ``subscriptions/listen`` is simply a request whose SSE stream stays open. No session ids, no
  resumption: ``Mcp-Session-Id`` and ``Last-Event-ID`` are ignored.

**Both eras**: a request with an ``Origin`` outside ``allowed_origins`` → ``403`` (DNS-rebinding
defence); with a ``token_validator``, a missing or invalid bearer token → ``401`` with
``WWW-Authenticate: Bearer resource_metadata="…"`` and a token without the ``required_scopes`` →
``403`` with ``WWW-Authenticate: Bearer error="insufficient_scope"…``. The validated
:class:`~mcp_sim.transports.base.AuthInfo` is the server stream's ``auth``. With
``protected_resource`` the endpoint publishes its Protected Resource Metadata (RFC 9728) at
``/.well-known/oauth-protected-resource`` (and with its path appended), without a token: the
document a client reads after a ``401`` to find the authorization server. ``challenge_scope`` adds
``scope="…"`` to the ``401`` (what to ask for first); ``scopes_for(request)`` names the scopes one
request needs (a tool that writes), answered ``403 insufficient_scope`` so the client steps up. The
authorization server and the client's flow are in :mod:`mcp_sim.security.oauth` and
:mod:`mcp_sim.security.oauth_client`.

The rules themselves — header names, the header checks, content negotiation, the status table —
live in :mod:`mcp_sim.transports.http`, shared with the real endpoint in :mod:`mcp_sim.bridge`.

A server configured with versions of both eras is *dual-era*: ``POST`` requests whose
``MCP-Protocol-Version`` names a 2026-07-28+ version take the modern path, the rest the legacy one.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Collection
from typing import Any, Literal

import anyio
import anyio.lowlevel
from anyio.abc import TaskGroup

from mcp_sim.protocol.meta import PROTOCOL_VERSION
from mcp_sim.protocol.revisions import ASSUMED_HTTP_VERSION, REVISIONS, revision_at
from mcp_sim.security.identity import AuthInfo
from mcp_sim.sim.world import Simulation
from mcp_sim.transports.base import LinkInfo, MessageStream
from mcp_sim.transports.faults import Faults, LinkFaults
from mcp_sim.transports.http import (
    EVENT_STREAM,
    JSON,
    LAST_EVENT_ID,
    MCP_PROTOCOL_VERSION,
    MCP_SESSION_ID,
    Headers,
    HttpExchange,
    HttpRequest,
    HttpResponse,
    check_modern_headers,
    is_modern_version,
    refuse_content,
)
from mcp_sim.transports.http_client import HttpClientStream
from mcp_sim.transports.http_server_streams import (
    LegacyServerStream,
    LegacySession,
    ModernCall,
    ModernServerStream,
    PendingRequest,
    ResponseChannel,
    ResponseMode,
    SessionPolicy,
    error_body,
    note,
)
from mcp_sim.transports.sse import SseStreamLog, parse_event_id
from mcp_sim.wire.jsonrpc import (
    INVALID_REQUEST,
    InvalidMessage,
    JSONRPCErrorResponse,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResultResponse,
    decode,
    encode,
)

__all__ = [
    "LegacyServerStream",
    "ModernServerStream",
    "ResponseMode",
    "SessionPolicy",
    "SimulatedHttpServer",
    "TokenValidator",
    "static_tokens",
]

logger = logging.getLogger(__name__)

ServerMain = Callable[[MessageStream], Awaitable[None]]
TokenValidator = Callable[[str], AuthInfo | None]
"""Checks a bearer token: the caller's :class:`AuthInfo`, or ``None`` for an invalid token."""
Verdict = Literal["accepted", "answered"]


def static_tokens(tokens: dict[str, AuthInfo]) -> TokenValidator:
    """A token validator backed by a fixed table ``{token: AuthInfo}`` (for lessons and tests)."""
    return tokens.get


class ServerProcess:
    """The one process an HTTP server's sessions and calls share. What outlives a single connection
    (a task store) registers how to forget itself with :meth:`on_restart`; :meth:`restart` (a crash)
    runs those in the order they registered, once per registrant."""

    def __init__(self) -> None:
        self._forget: dict[int, Callable[[str], object]] = {}
        self.restarts = 0

    def on_restart(self, key: object, forget: Callable[[str], object]) -> None:
        self._forget.setdefault(id(key), forget)

    def restart(self, why: str) -> None:
        self.restarts += 1
        for forget in list(self._forget.values()):
            forget(why)


class SimulatedHttpServer:
    """One simulated MCP endpoint over Streamable HTTP, serving many clients at once.

    ``main(stream)`` is the server program (e.g. ``lambda s: serve(server, s)``): it is run once per
    legacy session and once per modern POST, as tasks of ``task_group``. ``versions`` are the
    revisions this endpoint accepts (default: all released ones, i.e. dual-era). Clients attach with
    :meth:`connect`.
    """

    def __init__(self, sim: Simulation, task_group: TaskGroup, name: str, main: ServerMain, *,
                 path: str = "/mcp", versions: Collection[str] | None = None,
                 allowed_origins: Collection[str] | None = None, token_validator: TokenValidator | None = None,
                 required_scopes: tuple[str, ...] = (), resource_metadata: str | None = None,
                 response_mode: ResponseMode | None = None, get_stream: bool = True, allow_delete: bool = True,
                 sse_retry_ms: int | None = None, protected_resource: dict[str, Any] | None = None,
                 challenge_scope: str | None = None,
                 scopes_for: Callable[[HttpRequest], Collection[str]] | None = None,
                 session_policy: SessionPolicy | None = None) -> None:
        self.sim = sim
        self.task_group = task_group
        self.name = name
        self.main = main
        self.process = ServerProcess()
        """The server process behind every session and call: a crash restarts it empty, and the server
        programs that keep state beyond one connection (a task store) hear of it here."""
        self.path = path
        self.versions = tuple(versions) if versions is not None else tuple(REVISIONS)
        self.allowed_origins = set(allowed_origins) if allowed_origins is not None else None
        self.token_validator = token_validator
        self.required_scopes = required_scopes
        self.resource_metadata = resource_metadata or f"https://{name}.example/.well-known/oauth-protected-resource{path}"
        self.response_mode = response_mode
        """``None``: legacy answers requests with an SSE stream, modern with ``auto``."""
        self.get_stream = get_stream
        self.allow_delete = allow_delete
        self.sse_retry_ms = sse_retry_ms
        self.protected_resource = protected_resource
        """Protected Resource Metadata (RFC 9728) served, without a token, at the well-known URIs
        (see :meth:`serve_metadata`); ``None``: not served."""
        self.challenge_scope = challenge_scope
        """The ``scope`` a ``401`` names (the scopes a client should ask for first); ``None``: omitted."""
        self.scopes_for = scopes_for
        """Scopes one request needs beyond ``required_scopes`` (e.g. by tool name): a token without them
        is answered ``403 insufficient_scope``, the client's cue to step up."""
        self.session_policy = session_policy or SessionPolicy()
        """Legacy sessions: how ids are minted, and whether an id is bound to its user (the default)."""
        self.participant = f"server/{name}"
        self.sessions: dict[str, LegacySession] = {}
        self.calls: dict[ModernCall, None] = {}
        """The modern calls being served, in arrival order. A dict used as an ordered set: a crash ends
        them in the order they came, so the same seed gives the same trace (a ``set`` of objects would
        iterate in an order that depends on where they sit in memory)."""
        self.clients = 0

    @property
    def supports_legacy(self) -> bool:
        return any(not is_modern_version(v) for v in self.versions)

    @property
    def supports_modern(self) -> bool:
        return any(is_modern_version(v) for v in self.versions)

    # -- clients ----------------------------------------------------------------------------------
    def connect(self, name: str | None = None, *, faults: Faults | LinkFaults | None = None,
                token: str | None = None, origin: str | None = None, revision: str | None = None,
                open_get_stream: bool = True, task_group: TaskGroup | None = None) -> HttpClientStream:
        """A new client of this server (one per call): the client end, an ``HttpClientStream``.

        ``name`` names the link in the trace (default ``"<server>#<n>"``); ``token`` is sent as
        ``Authorization: Bearer <token>``; ``origin`` as ``Origin``."""
        self.clients += 1
        link_name = name or f"{self.name}#{self.clients}"
        return HttpClientStream(self, link_name, faults=faults, token=token, origin=origin, revision=revision,
                                open_get_stream=open_get_stream, task_group=task_group or self.task_group)

    # -- the HTTP front door ------------------------------------------------------------------------
    @staticmethod
    def _wants_modern(headers: Headers, body: str) -> bool:
        """Dual-era routing: a modern ``MCP-Protocol-Version`` header, or — when the header is missing —
        a body whose ``_meta`` names a modern version (so that the modern path can answer ``-32020``)."""
        version = headers.get(MCP_PROTOCOL_VERSION)
        if version is not None:
            return is_modern_version(version)
        if PROTOCOL_VERSION not in body:
            return False
        try:
            params = json.loads(body).get("params") or {}
            return is_modern_version(params.get("_meta", {}).get(PROTOCOL_VERSION))
        except (ValueError, AttributeError):
            return False

    async def handle(self, exchange: HttpExchange) -> Verdict:
        """Serve one HTTP request. ``answered``: the complete response is on its way; ``accepted``:
        the request went to the server program and its answer will follow."""
        request = exchange.request
        headers = request.headers
        origin = headers.get("Origin")
        if self.allowed_origins is not None and origin is not None and origin not in self.allowed_origins:
            return self._reply(exchange, 403, error_body(INVALID_REQUEST, f"Forbidden: Origin {origin} is not allowed"))
        metadata = self.serve_metadata(request)
        if metadata is not None:
            exchange.respond(metadata)
            return "answered"
        auth, rejection = self._authenticate(headers, request)
        if rejection is not None and self.session_policy.id_authenticates:
            known = self.sessions.get(headers.get(MCP_SESSION_ID) or "")
            if known is not None:  # the mistake: a known session id stands in for the token
                auth, rejection = known.auth, None
        if rejection is not None:
            exchange.respond(rejection)
            return "answered"
        if request.path != self.path:
            return self._reply(exchange, 404, None)
        if request.method == "POST":
            if not self.supports_legacy or (self.supports_modern and self._wants_modern(request.headers, request.body)):
                return await self._modern_post(exchange, auth)
            return await self._legacy_post(exchange, auth)
        if request.method in ("GET", "DELETE") and self.supports_legacy:
            return self._legacy_get(exchange, auth) if request.method == "GET" else self._legacy_delete(exchange, auth)
        return self._reply(exchange, 405, None, {"Allow": "POST" if not self.supports_legacy else "GET, POST, DELETE"})

    def _reply(self, exchange: HttpExchange, status: int, body: str | None,
               headers: dict[str, str] | None = None) -> Verdict:
        head = Headers({"Content-Type": JSON} if body is not None else {})
        for name, value in (headers or {}).items():
            head[name] = value
        exchange.respond(HttpResponse(status, head, body))
        return "answered"

    def serve_metadata(self, request: HttpRequest) -> HttpResponse | None:
        """``GET /.well-known/oauth-protected-resource`` (and its form with this endpoint's path
        appended) → the Protected Resource Metadata, answered before any token check: a client reads
        it precisely because it has no token yet. ``None`` for every other request."""
        if self.protected_resource is None or request.method != "GET":
            return None
        well_known = "/.well-known/oauth-protected-resource"
        if request.path not in (well_known, f"{well_known}{self.path}"):
            return None
        return HttpResponse(200, Headers({"Content-Type": JSON}), json.dumps(self.protected_resource))

    def _authenticate(self, headers: Headers,
                      request: HttpRequest | None = None) -> tuple[AuthInfo | None, HttpResponse | None]:
        """Bearer tokens (OAuth 2.1 resource server rules as MCP's authorization spec states them)."""
        if self.token_validator is None:
            return None, None
        metadata = f'resource_metadata="{self.resource_metadata}"'
        if self.challenge_scope is not None:
            metadata = f'{metadata}, scope="{self.challenge_scope}"'
        value = headers.get("Authorization")
        scheme, _, credentials = (value or "").partition(" ")
        if scheme.lower() != "bearer" or not credentials.strip():  # the scheme is case-insensitive (RFC 7235 §2.1)
            return None, HttpResponse(401, Headers({"WWW-Authenticate": f"Bearer {metadata}"}))
        auth = self.token_validator(credentials.strip())
        if auth is None:
            return None, HttpResponse(401, Headers(
                {"WWW-Authenticate": f'Bearer error="invalid_token", {metadata}'}))
        needed = list(self.required_scopes)
        if self.scopes_for is not None and request is not None:
            needed += [s for s in self.scopes_for(request) if s not in needed]
        missing = [s for s in needed if s not in auth.scopes]
        if missing:
            # The scopes the request needs, plus those the token already has, so that re-authorizing
            # with exactly this list does not lose what the client could already do.
            scope = " ".join(needed + sorted(s for s in auth.scopes if s not in needed))
            if self.scopes_for is None:
                scope = " ".join(self.required_scopes)
            head = f'resource_metadata="{self.resource_metadata}"'
            return None, HttpResponse(403, Headers(
                {"WWW-Authenticate": f'Bearer error="insufficient_scope", scope="{scope}", {head}'}))
        return auth, None

    def _decode_post(self, exchange: HttpExchange) -> JSONRPCMessage | Verdict:
        """Content negotiation and the body: 406/415, or a parse error answered at once (400)."""
        refused = refuse_content("POST", exchange.request.headers)
        if refused is not None:
            return self._reply(exchange, refused[0], error_body(INVALID_REQUEST, refused[1]))
        decoded = decode(exchange.request.body)
        if isinstance(decoded, InvalidMessage):
            return self._reply(exchange, 400, encode(decoded.reply))
        if not isinstance(decoded, (JSONRPCRequest, JSONRPCNotification, JSONRPCResultResponse,
                                    JSONRPCErrorResponse)):
            return self._reply(exchange, 400, error_body(INVALID_REQUEST, "batches are not supported"))
        return decoded

    # -- legacy ------------------------------------------------------------------------------------
    def _session_for(self, exchange: HttpExchange, auth: AuthInfo | None,
                     *, check_version: bool = True) -> LegacySession | Verdict:
        headers = exchange.request.headers
        session_id = headers.get(MCP_SESSION_ID)
        if session_id is None:
            return self._reply(exchange, 400, error_body(
                INVALID_REQUEST, "Bad Request: Mcp-Session-Id header is required after initialization"))
        session = self.sessions.get(session_id)
        if session is None or session.ended or not self.session_policy.admits(session.auth, auth):
            # A session is bound to the user who created it: another user's request cannot use it.
            return self._reply(exchange, 404, error_body(INVALID_REQUEST, "Not Found: session not found"))
        if check_version:
            version = headers.get(MCP_PROTOCOL_VERSION) or ASSUMED_HTTP_VERSION
            if version not in self.versions:
                return self._reply(exchange, 400, error_body(
                    INVALID_REQUEST, f"Bad Request: Unsupported protocol version: {version}"))
        return session

    async def _legacy_post(self, exchange: HttpExchange, auth: AuthInfo | None) -> Verdict:
        decoded = self._decode_post(exchange)
        if isinstance(decoded, str):
            return decoded
        message = decoded
        headers = exchange.request.headers
        if isinstance(message, JSONRPCRequest) and message.method == "initialize":
            if MCP_SESSION_ID in headers:
                return self._reply(exchange, 400, error_body(
                    INVALID_REQUEST, "Bad Request: initialize must be sent without an Mcp-Session-Id",
                    id=message.id))
            requested = (message.params or {}).get("protocolVersion")
            session = self._new_session(exchange, auth)
            return self._legacy_request(session, exchange, message,
                                        requested if isinstance(requested, str) else None,
                                        {MCP_SESSION_ID: session.id})
        found = self._session_for(exchange, auth)
        if isinstance(found, str):
            return found
        session = found
        if isinstance(message, JSONRPCRequest):
            return self._legacy_request(session, exchange, message, headers.get(MCP_PROTOCOL_VERSION), {})
        session.inbox.put(exchange.request.body)
        return self._reply(exchange, 202, None)

    def _new_session(self, exchange: HttpExchange, auth: AuthInfo | None) -> LegacySession:
        # Visible ASCII. By default from the seeded generator, so traces replay: predictable to whoever knows
        # the seed, so a real server mints from a CSPRNG instead (sessions.csprng_ids: the secrets module).
        session_id = self.session_policy.mint(self.sim)
        link = exchange.link.info
        info = LinkInfo(name=link.name, transport="http", client=link.client, server=link.server)
        session = LegacySession(self.sim, session_id, auth, info)
        self.sessions[session_id] = session
        session.note(f"server creates session {session_id}", ("session",))
        session.scope = anyio.CancelScope()
        self.task_group.start_soon(self._run_session, session, name=f"{self.name} session {session_id}")
        return session

    async def _run_session(self, session: LegacySession) -> None:
        assert session.scope is not None
        with session.scope:
            try:
                stream = session.server_stream()
                stream.server_process = self.process
                await self.main(stream)
            except Exception as exc:
                logger.exception("server program failed in session %s", session.id)
                session.note(f"the server program raised {type(exc).__name__}: {exc}", ("error",))
        session.end("the server program returned")
        if self.sessions.get(session.id) is session:
            del self.sessions[session.id]  # an ended session is answered 404 either way: keep nothing of it

    def _legacy_request(self, session: LegacySession, exchange: HttpExchange, message: JSONRPCRequest,
                        version: str | None, extra_headers: dict[str, str]) -> Verdict:
        if message.id in session.used_ids:
            # A second POST with a used id (see LegacySession.used_ids): the server cannot accept the input.
            return self._reply(exchange, 400, error_body(
                INVALID_REQUEST, f"Bad Request: request id {message.id!r} was already used in this session",
                {"requestId": message.id, "method": message.method}))
        session.used_ids.add(message.id)
        mode = self.response_mode or "sse"
        effective = version or session.version or ASSUMED_HTTP_VERSION
        channel = ResponseChannel(exchange, modern=False, mode=mode, log=session.new_log(),
                                  extra_headers=extra_headers, priming=revision_at(effective).has_sse_priming,
                                  retry_ms=self.sse_retry_ms)
        session.pending[message.id] = PendingRequest(message.method, channel)
        session.track(exchange)
        if mode == "sse":
            channel.open_stream()
        session.inbox.put(exchange.request.body)
        return "accepted"

    def _legacy_get(self, exchange: HttpExchange, auth: AuthInfo | None) -> Verdict:
        found = self._session_for(exchange, auth)
        if isinstance(found, str):
            return found
        session = found
        headers = exchange.request.headers
        refused = refuse_content("GET", headers)
        if refused is not None:
            return self._reply(exchange, refused[0], error_body(INVALID_REQUEST, refused[1]))
        last_event_id = headers.get(LAST_EVENT_ID)
        if last_event_id is not None:
            parsed = parse_event_id(last_event_id)
            log = session.streams.get(parsed[0]) if parsed is not None else None
            if parsed is None or log is None:
                return self._reply(exchange, 400, error_body(
                    INVALID_REQUEST, f"Bad Request: unknown Last-Event-ID {last_event_id}"))
            return self._attach(session, exchange, log, parsed[1], resumed=True)
        if not self.get_stream:
            return self._reply(exchange, 405, None, {"Allow": "POST, DELETE"})
        if session.standalone.attached:
            return self._reply(exchange, 409, error_body(
                INVALID_REQUEST, "Conflict: only one GET stream per session is allowed"))
        return self._attach(session, exchange, session.standalone, None, resumed=False)

    def _attach(self, session: LegacySession, exchange: HttpExchange, log: SseStreamLog, after: int | None,
                *, resumed: bool) -> Verdict:
        head = Headers({"Content-Type": EVENT_STREAM, "Cache-Control": "no-cache"})
        exchange.open_sse(HttpResponse(200, head))
        session.track(exchange)
        missed = log.attach(exchange.send_event, exchange.end, after=after)
        exchange.on_client_close(log.detach)
        if resumed:
            session.note(f"resuming stream {log.number} after event {after}: replaying {len(missed)} event(s)",
                         ("resumed",))
        for event in missed:
            self.sim.recorder.mark_next("replayed")
            exchange.send_event(event)
        if log.finished:
            exchange.end()
        elif log is session.standalone and revision_at(session.version or "").has_sse_priming:
            log.append("", retry=self.sse_retry_ms)  # priming event: gives the client a cursor at once
        return "accepted"

    def _legacy_delete(self, exchange: HttpExchange, auth: AuthInfo | None) -> Verdict:
        found = self._session_for(exchange, auth)
        if isinstance(found, str):
            return found
        if not self.allow_delete:
            return self._reply(exchange, 405, None, {"Allow": "GET, POST"})
        found.end("the client sent DELETE")
        return self._reply(exchange, 200, None)

    # -- modern ------------------------------------------------------------------------------------
    async def _modern_post(self, exchange: HttpExchange, auth: AuthInfo | None) -> Verdict:
        decoded = self._decode_post(exchange)
        if isinstance(decoded, str):
            return decoded
        message = decoded
        if not isinstance(message, (JSONRPCRequest, JSONRPCNotification)):
            return self._reply(exchange, 400, error_body(
                INVALID_REQUEST, "2026-07-28: clients MUST NOT send JSON-RPC responses over HTTP"))
        mismatch = check_modern_headers(exchange.request.headers, message)
        if mismatch is not None:
            request_id = message.id if isinstance(message, JSONRPCRequest) else None
            return self._reply(exchange, 400, encode(JSONRPCErrorResponse(request_id, mismatch.to_error_object())))
        version = exchange.request.headers.get(MCP_PROTOCOL_VERSION)
        channel = None
        if isinstance(message, JSONRPCRequest):
            channel = ResponseChannel(exchange, modern=True, mode=self.response_mode or "auto",
                                      log=None, extra_headers={}, priming=False)
        call = ModernCall(self.sim, exchange, message, auth, version, channel)
        call.inbox.put(exchange.request.body)
        if channel is None:
            call.inbox.close()
        self.calls[call] = None
        call.task = self.task_group.start_soon(self._run_call, call, name=f"{self.name} {message.method}")
        if channel is None:
            return self._reply(exchange, 202, None)
        exchange.on_client_close(call.cancel)
        return "accepted"

    async def _run_call(self, call: ModernCall) -> None:
        """Serve one call. A cancellation (see :meth:`ModernCall.cancel`) ends this task where it waits;
        the call is forgotten either way."""
        try:
            try:
                stream = call.server_stream()
                stream.server_process = self.process
                await self.main(stream)
            except Exception as exc:
                logger.exception("server program failed on %s %r", call.method, call.request_id)
                note(call.exchange, f"the server program raised {type(exc).__name__}: {exc}", ("error",))
            if call.channel is not None and not call.cancelled:
                call.channel.abandon()
        finally:
            self.calls.pop(call, None)

    # -- the server's own life ----------------------------------------------------------------------
    def expire_session(self, session_id: str, why: str = "the server expired it") -> None:
        """End a legacy session from the server side; its next request gets ``404``."""
        session = self.sessions.pop(session_id, None)
        if session is not None:
            session.end(why)
            if session.scope is not None:
                session.scope.cancel()

    def crash(self) -> None:
        """The server process dies and is restarted empty by its supervisor: every session, every
        request in flight and every open stream is gone. Legacy clients get ``404`` next time and start
        a new session; modern clients lose only what was in flight."""
        self.sim.recorder.record_event(kind="transport", link=self.name, sender=self.participant,
                                       receiver=self.participant, transport="http", marks=("crash",),
                                       text=f"the {self.name} HTTP server crashed and restarted empty "
                                            f"({len(self.sessions)} session(s), {len(self.calls)} call(s) lost)")
        for session_id in list(self.sessions):
            self.expire_session(session_id, "the server crashed")
        for call in list(self.calls):
            call.cancelled = True
            call.exchange.abort()
            if call.task is not None:
                call.task.cancel()
        self.process.restart("the server process crashed and restarted empty")

    async def aclose(self) -> None:
        """Stop serving: end every session and cancel every call."""
        for session_id in list(self.sessions):
            self.expire_session(session_id, "the server shut down")
        for call in list(self.calls):
            call.cancelled = True
            call.exchange.abort()
            if call.task is not None:
                call.task.cancel()


