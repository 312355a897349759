"""What a server connection does only in the legacy era (2025-06-18, 2025-11-25; course chapters 03
and 08): the ``initialize`` handshake, the lifecycle table's say on every request, the state a
legacy connection remembers (log level, resource subscriptions), and the server's own requests to
the client (elicitation, sampling, roots) sent while it handles a call.

:class:`LegacyConnection` is a part of :class:`~mcp_sim.roles.server_session.ServerSession`, kept
in its own module so that each reads in one sitting; it uses the session's ``server``, ``stream``,
``_send`` and ``notify``.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel

from mcp_sim.capabilities import logging as mcp_logging
from mcp_sim.capabilities import resources
from mcp_sim.capabilities.context import Context
from mcp_sim.capabilities.mrtr import ClientInputUnavailable
from mcp_sim.protocol.errors import (
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    McpError,
    invalid_params,
    method_not_found,
)
from mcp_sim.protocol.lifecycle import LegacyLifecycle, LegacyState, negotiate_version
from mcp_sim.protocol.revisions import MethodInfo, get_revision
from mcp_sim.wire.jsonrpc import (
    JSONRPCMessage,
    JSONRPCRequest,
    JSONRPCResponse,
    JSONRPCResultResponse,
    RequestId,
)

if TYPE_CHECKING:
    from mcp_sim.roles.server import Server
    from mcp_sim.transports.base import MessageStream

logger = logging.getLogger(__name__)

Handler = Callable[[Context], Awaitable[dict[str, Any]]]


@dataclass
class _Pending:
    """A request the server sent to the client, waiting for its response."""

    method: str
    done: anyio.Event = field(default_factory=anyio.Event)
    result: dict[str, Any] | None = None
    error: str | None = None


class LegacyConnection:
    """The legacy era's part of a server connection."""

    if TYPE_CHECKING:  # provided by the ServerSession this is part of
        server: Server
        stream: MessageStream | None
        _closed: bool
        _own_handlers: dict[str, Handler]

        async def _send(self, message: JSONRPCMessage, related_request_id: RequestId | None = None) -> None: ...
        async def notify(self, method: str, params: dict[str, Any] | None, *,
                         related_request_id: RequestId | None = None) -> None: ...
        def _require_server_capability(self, info: MethodInfo, revision: str) -> None: ...

    def _start_legacy(self) -> None:
        self.lifecycle: LegacyLifecycle | None = None
        """The connection's lifecycle state (``None`` until ``initialize``: a modern connection has none)."""
        self.legacy_revision: str | None = None
        """The revision ``initialize`` agreed on."""
        self.client_capabilities: dict[str, Any] = {}
        self.client_info: dict[str, Any] | None = None
        self.log_level: str | None = self.server.log_level
        self.subscribed_uris: set[str] = set()
        self._pending: dict[RequestId, _Pending] = {}
        """The server's own requests to the client, by id, waiting for their responses."""
        self._next_id = 0
        self._to_cancel: list[int] = []
        """Ids of the server's requests whose waiters were just cancelled, not yet announced (see
        :meth:`_announce_cancelled`)."""

    def _prepare_legacy(self, request: JSONRPCRequest, params: Mapping[str, Any],
                        capability_handlers: Mapping[str, Handler]) -> tuple[Context, Handler]:
        """Check a legacy request against the negotiated revision and the lifecycle, and build its context."""
        method = request.method
        legacy_versions = self.server.versions_by_era()[0]
        # A connection that has a negotiated revision was opened with a legacy one.
        if self.legacy_revision is None and not legacy_versions:
            if method == "initialize":
                raise self._refuse_initialize(params)
            raise method_not_found(method, revision=self.server.supported_versions[-1],
                                   why="This server speaks only the modern era: no initialize, every request "
                                       "carries its version in _meta.")
        if method == "initialize":
            return Context(self, request.id, method, params, max(legacy_versions)), self._initialize  # type: ignore[arg-type]
        version = self.legacy_revision or max(legacy_versions)
        info = get_revision(version).method(method)
        if info is None or info.direction == "server→client":
            raise method_not_found(method, revision=version)
        handler = self._own_handlers.get(method) or capability_handlers.get(method)
        self._imply_initialized(method)
        (self.lifecycle or LegacyLifecycle("server")).check_send(method, "client")
        self._require_server_capability(info, version)
        if handler is None:
            raise method_not_found(method, revision=version)
        return Context(self, request.id, method, params, version), handler  # type: ignore[arg-type]

    def _imply_initialized(self, method: str) -> None:
        """A client request after the server answered ``initialize`` but before
        ``notifications/initialized`` arrived: the notification was lost or overtaken on the wire.

        The client may send requests once the server has responded to ``initialize``
        (``lifecycle.client-waits-for-initialize-result``), and it sends ``notifications/initialized``
        right after the response (``lifecycle.initialized-notification``); nothing in the lifecycle
        asks the server to refuse such a request. Refusing it would refuse every later request too,
        for ever, when the notification was dropped. So this server takes the request as the sign
        that the client finished initialization and enters normal operation (simulator rule
        ``lifecycle.sim-request-implies-initialized``); the late notification, if it comes, changes
        nothing. ``ping`` implies nothing: it is allowed before initialization is complete."""
        lifecycle = self.lifecycle
        if lifecycle is None or lifecycle.state is not LegacyState.INITIALIZED or method == "ping":
            return
        logger.info("%s arrived before notifications/initialized: taken as implying it "
                    "(lifecycle.sim-request-implies-initialized)", method)
        lifecycle.on_event("notifications/initialized")

    def _refuse_initialize(self, params: Mapping[str, Any]) -> McpError:
        """A modern-only server's answer to ``initialize``: the method is unknown to it, and the error
        names the versions it does support (rule ``versioning.modern-only-refusal-names-versions``), since
        a legacy client has no way forward and this message may be all it can show its user. The code
        is the ordinary ``-32601``; the spec leaves it to the implementation."""
        supported = sorted(self.server.supported_versions)
        data: dict[str, Any] = {"supported": supported}
        requested = params.get("protocolVersion")
        if isinstance(requested, str):
            data["requested"] = requested
        return McpError(METHOD_NOT_FOUND,
                        f"Method not found: initialize. This server supports only protocol versions "
                        f"{', '.join(supported)}, which have no initialize handshake: every request carries "
                        f"its version in _meta", data,
                        rule="A modern-only server names the versions it supports in its error to initialize "
                             "(rule versioning.modern-only-refusal-names-versions).", revision=supported[-1])

    async def _initialize(self, ctx: Context) -> dict[str, Any]:
        """Legacy handshake: agree on a version, remember the client's capabilities."""
        if self.lifecycle is not None and self.lifecycle.state is not LegacyState.NOT_STARTED:
            raise McpError(INVALID_REQUEST, "initialize may be sent only once per connection",
                           rule="The initialization phase happens once, at the start of a connection.",
                           revision=self.legacy_revision)
        requested = ctx.params.get("protocolVersion")
        if not isinstance(requested, str):
            raise invalid_params("initialize needs protocolVersion (a string)", revision=ctx.revision)
        version = negotiate_version(requested, self.server.legacy_versions)
        caps = ctx.params.get("capabilities")
        self.client_capabilities = dict(caps) if isinstance(caps, Mapping) else {}
        info = ctx.params.get("clientInfo")
        self.client_info = dict(info) if isinstance(info, Mapping) else None
        self.lifecycle = LegacyLifecycle("server")
        self.lifecycle.on_event("initialize")
        self.legacy_revision = version
        ctx.revision = version
        if self.stream is not None:
            self.stream.revision = version
        result: dict[str, Any] = {"protocolVersion": version,
                                  "capabilities": self.server.capabilities_for(version),
                                  "serverInfo": self.server.server_info(version)}
        if self.server.instructions:
            result["instructions"] = self.server.instructions
        self.lifecycle.on_event("initialize result")
        return result

    async def _set_level(self, ctx: Context) -> dict[str, Any]:
        self.log_level = mcp_logging.check_level(ctx.params.get("level"))
        return {}

    async def _subscribe(self, ctx: Context) -> dict[str, Any]:
        uri = ctx.params.get("uri")
        if not isinstance(uri, str):
            raise invalid_params("resources/subscribe needs a string uri", revision=ctx.revision)
        if not resources.resolvable(self.server, uri):
            raise resources.not_found(uri, ctx.revision)
        self.subscribed_uris.add(uri)
        return {}

    async def _unsubscribe(self, ctx: Context) -> dict[str, Any]:
        self.subscribed_uris.discard(ctx.params.get("uri"))  # type: ignore[arg-type]
        return {}

    # -- the server's own requests to the client ------------------------------------------------------
    async def request(self, method: str, params: dict[str, Any] | None, *,
                      related_request_id: RequestId | None = None) -> dict[str, Any]:
        """Send a request to the client and wait for its result."""
        if self.stream is None or self._closed:
            raise ClientInputUnavailable(f"cannot send {method}: the connection is closed")
        if self.lifecycle is None or self.lifecycle.state is not LegacyState.OPERATING:
            raise ClientInputUnavailable(f"cannot send {method} before the client finished initialization")
        self._next_id += 1
        request_id = self._next_id
        pending = _Pending(method)
        self._pending[request_id] = pending
        try:
            await self._send(JSONRPCRequest(request_id, method, params), related_request_id)
            await pending.done.wait()
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                await self._announce_cancelled(request_id)
            raise
        finally:
            self._pending.pop(request_id, None)
        if pending.error is not None or pending.result is None:
            raise ClientInputUnavailable(f"{method} failed: {pending.error}")
        return pending.result

    async def _announce_cancelled(self, request_id: int) -> None:
        """Send ``notifications/cancelled`` for ``request_id``, whose waiter was cancelled.

        One cancellation often stops several waiters at once — a crash cancels every call in flight,
        a failed question in ``Context.ask`` its sibling questions — and anyio wakes them in the order
        of a set of tasks, which changes from run to run. So each waiter only queues its id and lets
        the others woken with it queue theirs; the first to resume announces them all, in id order
        (the order the requests were sent): same seed, same trace."""
        self._to_cancel.append(request_id)
        await anyio.lowlevel.checkpoint()
        while self._to_cancel:
            ids, self._to_cancel = sorted(self._to_cancel), []
            for cancelled in ids:
                await self.notify("notifications/cancelled", {"requestId": cancelled,
                                                              "reason": "the request that needed it was cancelled"})

    def _on_response(self, message: JSONRPCResponse) -> None:
        """The client answered one of the server's requests: wake whoever waits for it."""
        pending = self._pending.get(message.id) if message.id is not None else None
        if pending is None:
            logger.info("response to unknown request id %r ignored", message.id)
            return
        if isinstance(message, JSONRPCResultResponse):
            pending.result = message.result
        else:
            pending.error = f"the client answered with error {message.error.code}: {message.error.message}"
        pending.done.set()

    def _fail_pending(self) -> None:
        """The connection closed: nobody will answer the server's requests."""
        for pending in self._pending.values():
            pending.error = "the connection closed before the client answered"
            pending.done.set()
