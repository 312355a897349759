"""One connection to a :class:`~mcp_sim.roles.server.Server`: reading requests, answering them, and
everything a connection remembers (course chapters 03–10).

``serve(server, stream)`` reads messages until the client closes the stream. Each request is answered
by the era it speaks:

* **legacy** (2025-06-18, 2025-11-25): the connection opens with ``initialize``; the lifecycle table
  (:mod:`mcp_sim.protocol.lifecycle`) decides what may be sent when; the negotiated revision, the
  client's capabilities, the log level and resource subscriptions are remembered for the connection.
  The server may send requests of its own (elicitation, sampling, roots) while handling a call.
  That part of the connection lives in :mod:`mcp_sim.roles.server_session_legacy`.
* **modern** (2026-07-28): every request carries its version and the client's capabilities in
  ``params._meta``, checked afresh each time; results say ``resultType``; a handler that needs input
  is answered with an ``InputRequiredResult``; change notifications flow only on
  ``subscriptions/listen`` streams.

The session's read loop is its one entry point: it takes the client's messages in order and starts
one task for each request, inside the connection's task group, in a cancel scope of its own, so that
requests run concurrently and ``notifications/cancelled`` can stop one. ``initialize`` alone is
answered in order, before anything else is read. A handler's crash never ends the connection: tools
report it as an ``isError`` result, everything else as ``-32603`` with a readable message.

**At most one response per request id** (course chapter 02, JSON-RPC; chapter 06, faults). JSON-RPC
pairs a response with its request by ``id`` alone, so an id must be unique among the sender's requests
in flight, and MCP goes further: "The request ID MUST NOT have been previously used by the requestor
within the same session". The session therefore remembers every id it has been sent, with what the
request said:

* the *same* request again (same id, same method and params) is a copy the link made — a duplicated
  frame, a retransmission. It is dropped: the handler does not run a second time and no second (or
  earlier) answer is sent, so the caller gets exactly the one outcome of the one execution;
* a *different* request reusing an id is the client's bug. It is refused with ``-32600`` sent
  **without an id** (revisions from 2025-11-25 allow that): an answer carrying the id would be taken
  by the caller of the original request as *its* outcome. The error's ``data`` names the reused id and
  the method, so the client can tell which of its requests it concerns. (Before 2025-11-25 an error
  must carry an id, so the refused request is only logged.)

The accelerated twin (:mod:`mcp_sim.roles.server_session_accelerated`, chosen by
:mod:`mcp_sim.accelerated` when ``serve`` starts a session) answers exactly the same way with fewer
Python steps.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import Any, Literal

import anyio
from anyio.abc import TaskGroup

from mcp_sim import accelerated
from mcp_sim.capabilities import completion, prompts, resources, tasks, tools
from mcp_sim.capabilities.context import Context
from mcp_sim.capabilities.mrtr import InputRequired
from mcp_sim.capabilities.subscriptions import (
    LIST_CHANGED_METHOD,
    RESOURCE_UPDATED_METHOD,
    Change,
    Listen,
    agreed_filter,
)
from mcp_sim.protocol import meta as M
from mcp_sim.protocol.errors import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    UNSUPPORTED_PROTOCOL_VERSION,
    McpError,
    invalid_params,
    method_not_found,
)
from mcp_sim.protocol.lifecycle import (
    LegacyState,
    ModernRequestMeta,
    check_modern_request,
    has_capability,
    unsupported_version,
)
from mcp_sim.protocol.revisions import TASKS_EXTENSION_METHODS, MethodInfo, get_revision
from mcp_sim.roles.server import Server
from mcp_sim.roles.server_session_accelerated import QuickModernChecks, WorkerPool
from mcp_sim.roles.server_session_legacy import LegacyConnection
from mcp_sim.transports.base import AuthInfo, MessageStream, TransportClosed
from mcp_sim.wire.jsonrpc import (
    InvalidMessage,
    JSONRPCErrorResponse,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    JSONRPCResultResponse,
    RequestId,
    error_object,
)

logger = logging.getLogger(__name__)

_CANONICAL_JSON = json.JSONEncoder(sort_keys=True)
"""Writes a request's method and params the same way whatever the order of their keys (made once)."""


def request_digest(request: JSONRPCRequest) -> bytes:
    """16 bytes that stand for what ``request`` asks (its method and params, keys in any order): two
    requests with the same digest are the same request."""
    return hashlib.blake2b(_CANONICAL_JSON.encode([request.method, request.params]).encode(),
                           digest_size=16).digest()

Handler = Callable[[Context], Awaitable[dict[str, Any]]]

# What answers each capability request. Lifecycle and connection-state methods are the session's own.
CAPABILITY_HANDLERS: dict[str, Handler] = {
    "tools/list": tools.list_tools,
    "tools/call": tools.call_tool,
    "resources/list": resources.list_resources,
    "resources/templates/list": resources.list_resource_templates,
    "resources/read": resources.read_resource,
    "prompts/list": prompts.list_prompts,
    "prompts/get": prompts.get_prompt,
    "completion/complete": completion.complete,
    "tasks/get": tasks.get_task,
    "tasks/result": tasks.task_result,
    "tasks/list": tasks.list_tasks,
    "tasks/cancel": tasks.cancel_task,
    "tasks/update": tasks.update_task,
}

EXTENSION_METHODS: Mapping[str, MethodInfo] = TASKS_EXTENSION_METHODS
"""The 2026-07-28 tasks extension's methods (not in the core revision table), from the registry."""



class ServerSession(LegacyConnection):
    """The server end of one connection and everything it remembers."""

    def __init__(self, server: Server, stream: MessageStream | None = None, *, auth: AuthInfo | None = None) -> None:
        self.server = server
        self.stream = stream
        self._auth = auth
        self.number = server.next_number("session")
        process = getattr(stream, "server_process", None)
        if process is not None:  # an HTTP server's one process: its crash takes every task with it
            process.on_restart(server, server.task_store.forget_all)
        self._start_legacy()
        self.listens: dict[RequestId, Listen] = {}
        """Open ``subscriptions/listen`` streams (modern era), by the id of their request."""
        self._in_flight: dict[RequestId, anyio.CancelScope] = {}
        """The cancel scope of every request being answered, by id (``notifications/cancelled``)."""
        self._seen: dict[RequestId, bytes] = {}
        """Every request id the client has used on this connection, with what that request said (see
        :meth:`_first_use`): an id is used once per session."""
        self._work: TaskGroup | None = None
        self._closed = False
        self._own_handlers: dict[str, Handler] = {
            "ping": self._ping,
            "logging/setLevel": self._set_level,
            "resources/subscribe": self._subscribe,
            "resources/unsubscribe": self._unsubscribe,
            "server/discover": self._discover,
            "subscriptions/listen": self._listen,
        }
        """The methods the session answers itself (connection state); the rest go to the capabilities."""
        self._outbox_send, self._outbox_receive = anyio.create_memory_object_stream[
            tuple[str, dict[str, Any] | None]](float("inf"))

    @property
    def auth(self) -> AuthInfo | None:
        """The caller's identity as the transport established it."""
        if self._auth is not None:
            return self._auth
        return self.stream.auth if self.stream is not None else None

    # -- running ----------------------------------------------------------------------------------
    async def run(self) -> None:
        """Serve the stream until the client closes it; in-flight requests are allowed to finish."""
        assert self.stream is not None
        self.server.sessions[self] = None
        try:
            async with anyio.create_task_group() as outer:
                outer.start_soon(self._pump)
                async with anyio.create_task_group() as work:
                    self._work = work
                    try:
                        await self._read_loop()
                    finally:
                        self._end_of_stream()
                outer.cancel_scope.cancel()
        finally:
            self.server.sessions.pop(self, None)
            self._work = None
            # The tasks this connection's process held, and a legacy session's own tasks, which nobody
            # can ask for again, go with it (tasks.sim-crash-forgets-tasks).
            self.server.task_store.forget_process(self.number, "the server process holding it ended")
            self.server.task_store.forget_owner(f"session:{self.number}", "its session ended")
            try:
                await self.stream.aclose()
            except Exception:  # the link may already be gone
                pass

    async def _read_loop(self) -> None:
        """Read the client's messages in order, until the client closes the stream."""
        stream = self.stream
        assert stream is not None
        while True:
            try:
                message = await stream.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, TransportClosed):
                return
            await self._on_message(message)

    async def _on_message(self, message: JSONRPCMessage | InvalidMessage) -> None:
        if isinstance(message, InvalidMessage):
            logger.info("unreadable frame: %s", message.reason)
            if message.is_answerable and (message.reply.id is not None or self._may_send_errors_without_id()):
                await self._send(message.reply)
        elif isinstance(message, JSONRPCRequest):
            use = self._use_of_id(message)
            if use == "copy":
                # The link delivered this request twice: the first copy is (or was) answered, once.
                logger.info("request id %r arrived again unchanged: a copy, dropped", message.id)
            elif use == "reuse":
                await self._refuse_reused_id(message)
            elif message.method == "initialize":
                # Answered in order: nothing else can be understood before it.
                await self._answer(message)
            else:
                self._dispatch(message)
        elif isinstance(message, JSONRPCNotification):
            self._on_notification(message)
        else:
            self._on_response(message)

    @staticmethod
    def _digest(request: JSONRPCRequest) -> bytes:
        return request_digest(request)

    def _use_of_id(self, request: JSONRPCRequest) -> Literal["new", "copy", "reuse"]:
        """Remember ``request``'s id. ``copy``: this very request was received before; ``reuse``: the
        id was used by a different request."""
        # A digest, not the request: the session keeps a few bytes per id it has answered.
        said = request_digest(request)
        before = self._seen.get(request.id)
        if before is None:
            self._seen[request.id] = said
            return "new"
        return "copy" if before == said else "reuse"

    async def _refuse_reused_id(self, request: JSONRPCRequest) -> None:
        """A different request with an id used before: refused without an id (see the module docstring)."""
        text = (f"Request id {request.id!r} was already used in this session by another request; "
                f"this {request.method} is not executed")
        if not self._may_send_errors_without_id():
            logger.info("%s (an error without an id needs 2025-11-25 or later)", text)
            return
        await self._send(JSONRPCErrorResponse(None, error_object(
            INVALID_REQUEST, text, {"requestId": request.id, "method": request.method})))

    def _may_send_errors_without_id(self) -> bool:
        """Can this connection carry an error response without an id? Only from 2025-11-25: earlier
        schemas require an id on every error, so an unreadable frame (whose id nobody knows) or a reused
        id is only logged there. Before a revision is agreed, the error is sent."""
        revision = self.legacy_revision or (self.stream.revision if self.stream is not None else None)
        return revision is None or get_revision(revision).error_id_optional

    def _dispatch(self, request: JSONRPCRequest) -> None:
        """Answer ``request`` in a task of its own, so the read loop goes on reading."""
        assert self._work is not None
        self._work.start_soon(self._answer, request)

    async def _answer(self, request: JSONRPCRequest) -> None:
        """Answer one request inside its own cancel scope (``notifications/cancelled`` cancels it)."""
        with anyio.CancelScope() as scope:
            self._in_flight[request.id] = scope
            try:
                response = await self.handle(request)
            finally:
                self._in_flight.pop(request.id, None)
        if scope.cancelled_caught or response is None:
            return  # cancelled by the client (spec "Cancellation"), or a listen stream the client closed
        await self._send(response)

    def _end_of_stream(self) -> None:
        """The client closed the connection: end listen streams, fail what waits on the client."""
        self._closed = True
        for listen_id in list(self.listens):
            scope = self._in_flight.get(listen_id)
            if scope is not None:
                scope.cancel()
        self._fail_pending()

    async def _send(self, message: JSONRPCMessage, related_request_id: RequestId | None = None) -> None:
        if self.stream is None:
            return
        try:
            await self.stream.send(message, related_request_id=related_request_id)
        except (TransportClosed, anyio.ClosedResourceError, anyio.BrokenResourceError):
            logger.info("could not send %s: the connection is closed", getattr(message, "method", "response"))

    async def _pump(self) -> None:
        """Send the notifications queued by synchronous code (server changes, task status)."""
        async for method, params in self._outbox_receive:
            await self.notify(method, params)

    def spawn(self, fn: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Run ``fn`` in the background on this connection (task work); it may outlive its request."""
        if self._work is None:
            raise RuntimeError("this session is not running (use serve(server, stream))")
        self._work.start_soon(fn)

    def send_soon(self, method: str, params: dict[str, Any] | None) -> None:
        """Queue a notification from synchronous code; it is sent in order by the session."""
        if not self._closed and self.stream is not None:
            self._outbox_send.send_nowait((method, params))

    async def notify(self, method: str, params: dict[str, Any] | None, *,
                     related_request_id: RequestId | None = None) -> None:
        """Send a notification, if the lifecycle allows the server to send it now."""
        if self.lifecycle is not None and not self.lifecycle.may_send(method, "server"):
            logger.debug("not sending %s while the connection is %s", method, self.lifecycle.state.value)
            return
        await self._send(JSONRPCNotification(method, params), related_request_id)

    def _on_notification(self, message: JSONRPCNotification) -> None:
        params = message.params or {}
        if message.method == "notifications/initialized":
            if self.lifecycle is not None:
                self.lifecycle.on_event("notifications/initialized")
        elif message.method == "notifications/cancelled":
            scope = self._in_flight.get(params.get("requestId"))  # type: ignore[arg-type]
            if scope is not None:
                scope.cancel()
        else:
            logger.debug("notification %s noted", message.method)

    # -- changes ----------------------------------------------------------------------------------
    def on_change(self, change: Change) -> None:
        """Decide what this connection's client hears about ``change`` (called by the Server)."""
        if self._closed:
            return
        if self.lifecycle is not None:
            if self.lifecycle.state is not LegacyState.OPERATING or self.legacy_revision is None:
                return
            caps = self.server.capabilities_for(self.legacy_revision)
            if change.kind in LIST_CHANGED_METHOD and has_capability(caps, f"{change.kind}.listChanged"):
                self.send_soon(LIST_CHANGED_METHOD[change.kind], None)
            elif change.kind == "resource" and change.uri in self.subscribed_uris:
                self.send_soon(RESOURCE_UPDATED_METHOD, {"uri": change.uri})
            return
        for listen in self.listens.values():
            listen.offer(change)

    def close_subscriptions(self) -> None:
        for listen in self.listens.values():
            listen.close()

    # -- answering one request -----------------------------------------------------------------------
    async def handle(self, request: JSONRPCRequest) -> JSONRPCResponse | None:
        """Answer one request (no transport needed: benchmarks and tests call this directly).
        ``None`` means no response is due (a listen stream the client closed)."""
        ctx: Context | None = None
        try:
            ctx, handler = self._prepare(request)
            result = await handler(ctx)
            if result is None:
                return None
            return JSONRPCResultResponse(request.id, self._finish(ctx, result))
        except InputRequired as asked:
            assert ctx is not None
            return JSONRPCResultResponse(request.id, self._input_required(ctx, asked))
        except McpError as exc:
            return JSONRPCErrorResponse(request.id, exc.to_error_object())
        except Exception as exc:
            logger.info("handler for %s raised %r", request.method, exc)
            return JSONRPCErrorResponse(request.id, error_object(
                INTERNAL_ERROR, f"Internal error while handling {request.method}: {type(exc).__name__}: {exc}"))
        finally:
            if ctx is not None:
                ctx.finished = True

    def _finish(self, ctx: Context, result: dict[str, Any]) -> dict[str, Any]:
        """Legacy results carry no ``resultType``; modern ones always do, plus the server's name."""
        if not ctx.is_modern:
            result.pop("resultType", None)
            return result
        out = {"resultType": result.pop("resultType", "complete"), **result}
        meta = dict(out.get("_meta") or {})
        meta[M.SERVER_INFO] = self.server.server_info(ctx.revision)
        out["_meta"] = meta
        return out

    def _input_required(self, ctx: Context, asked: InputRequired) -> dict[str, Any]:
        state = self.server.state_codec.seal(asked.state, ctx)
        return {"resultType": "input_required",
                "inputRequests": {k: r.to_json(ctx.revision) for k, r in asked.requests.items()},
                "requestState": state,
                "_meta": {M.SERVER_INFO: self.server.server_info(ctx.revision)}}

    def _prepare(self, request: JSONRPCRequest) -> tuple[Context, Handler]:
        """Decide the request's era, check it is allowed, and build its context."""
        params = request.params or {}
        if self.lifecycle is not None or request.method == "initialize" or not self.server.versions_by_era()[1]:
            return self._prepare_legacy(request, params, CAPABILITY_HANDLERS)
        return self._prepare_modern(request, params)

    def _prepare_modern(self, request: JSONRPCRequest, params: Mapping[str, Any]) -> tuple[Context, Handler]:
        method = request.method
        modern_versions = self.server.versions_by_era()[1]
        revision = get_revision(modern_versions[-1])
        requested = (params.get("_meta") or {}).get(M.PROTOCOL_VERSION) if isinstance(params.get("_meta"), Mapping) \
            else None
        if isinstance(requested, str) and requested not in modern_versions:
            # The version comes first: which methods exist depends on it, and the client needs the
            # supported versions to retry (a method unknown here may exist in the version it asked for).
            raise unsupported_version(requested, self.server.supported_versions)
        info = revision.method(method)
        if info is None and self.server.tasks_extension:
            info = EXTENSION_METHODS.get(method)
        if info is None or info.direction == "server→client" or info.only_inside_input_requests:
            raise method_not_found(method, revision=revision.version)
        if method in EXTENSION_METHODS and "_meta" not in params:
            # The tasks extension's schema does not require _meta; accept such polls as the latest revision.
            meta = ModernRequestMeta(revision.version, {})
        else:
            try:
                meta = check_modern_request(params, modern_versions)
            except McpError as exc:
                if exc.code == UNSUPPORTED_PROTOCOL_VERSION:
                    raise unsupported_version(exc.data["requested"], self.server.supported_versions) from None
                raise
        self._require_server_capability(info, meta.protocol_version)
        if self.stream is not None:
            self.stream.revision = meta.protocol_version
        ctx = Context(self, request.id, method, params, meta.protocol_version, meta)
        if info.may_need_input and ("requestState" in params or "inputResponses" in params):
            token = params.get("requestState")
            state = None
            if token is not None:
                if not isinstance(token, str):
                    raise invalid_params("requestState must be the string the server sent", revision=ctx.revision)
                state = self.server.state_codec.open(token, ctx)
            ctx.accept_round_trip(state, params.get("inputResponses"))
        return ctx, self._handler(method)

    def _handler(self, method: str) -> Handler:
        """Who answers ``method``: the session itself (connection state) or a capability module."""
        return self._own_handlers.get(method) or CAPABILITY_HANDLERS[method]

    def _require_server_capability(self, info: MethodInfo, revision: str) -> None:
        if info.capability is None or info.direction != "client→server":
            return
        if not self.server.declares(revision, info.capability):
            raise method_not_found(info.method, revision=revision,
                                   why=f"The server did not advertise the '{info.capability}' capability, so "
                                       f"{info.method} is not available (-32601).")

    # -- the session's own requests -------------------------------------------------------------------
    async def _ping(self, ctx: Context) -> dict[str, Any]:
        return {}

    async def _discover(self, ctx: Context) -> dict[str, Any]:
        """``server/discover`` (2026-07-28): versions, capabilities and instructions, cacheable."""
        result: dict[str, Any] = {"supportedVersions": list(self.server.supported_versions),
                                  "capabilities": self.server.capabilities_for(ctx.revision)}
        if self.server.instructions:
            result["instructions"] = self.server.instructions
        result.update(ctx.cache_fields(private=self.server.per_caller, ttl_ms=self.server.cache.discover_ttl_ms))
        return result

    async def _listen(self, ctx: Context) -> dict[str, Any]:
        """``subscriptions/listen`` (2026-07-28): acknowledge what will be honoured, then forward each
        matching change tagged with this request's id, until closed."""
        requested = ctx.params.get("notifications")
        if not isinstance(requested, Mapping):
            raise invalid_params("subscriptions/listen needs params.notifications (a SubscriptionFilter)",
                                 revision=ctx.revision)
        tasks.require_tasks_extension_to_listen(ctx, requested)
        store = self.server.task_store
        known = None
        if self.server.tasks_extension:
            def known(task_id: str) -> bool:
                record = store.tasks.get(task_id)
                return record is not None and record.owner == ctx.caller_key
        agreed = agreed_filter(requested, self.server.capabilities_for(ctx.revision), known)
        listen_id = ctx.request_id
        assert listen_id is not None
        listen = Listen(listen_id, agreed)
        self.listens[listen_id] = listen
        tag = {M.SUBSCRIPTION_ID: listen_id}
        try:
            await self.notify("notifications/subscriptions/acknowledged", {"notifications": agreed, "_meta": tag},
                              related_request_id=listen_id)
            async for change in listen.outbox:
                if change is None:
                    break
                method, params = self._listen_notification(change)
                await self.notify(method, {**params, "_meta": tag}, related_request_id=listen_id)
        finally:
            self.listens.pop(listen_id, None)
        return {"_meta": tag}

    def _listen_notification(self, change: Change) -> tuple[str, dict[str, Any]]:
        if change.kind in LIST_CHANGED_METHOD:
            return LIST_CHANGED_METHOD[change.kind], {}
        if change.kind == "resource":
            return RESOURCE_UPDATED_METHOD, {"uri": change.uri}
        record = self.server.task_store.tasks[str(change.task_id)]
        return "notifications/tasks", record.extension_json()



async def serve(server: Server, stream: MessageStream) -> None:
    """Serve one connection until the client closes it (a stdio process's main loop, one legacy HTTP
    session, or one modern HTTP POST)."""
    session = AcceleratedServerSession if accelerated.enabled() else ServerSession
    await session(server, stream).run()


class AcceleratedServerSession(WorkerPool, QuickModernChecks, ServerSession):
    """The session with its accelerated twin's ways of starting requests (see the module docstring)."""
