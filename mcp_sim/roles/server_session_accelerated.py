"""The accelerated twin of the server session's way of starting requests (see
:mod:`mcp_sim.accelerated` and :class:`mcp_sim.roles.server_session.ServerSession`).

Two things differ from the readable session.

**Workers.** The readable session starts a task for every request. Starting a task costs several times more than
waking one, so here a request goes to a *worker*: a task that answers one request at a time and,
when it is done, waits for the next one rather than ending. A busy connection reuses a few tasks;
a request that arrives while every worker is busy gets a new worker; they all end with the
connection. Waking a waiting worker takes the event loop exactly one turn, as starting a task does,
so every task runs in the same order and the trace is the same, byte for byte.

**Modern checks in one pass.** For a 2026-07-28 request the readable session looks the method up in
the revision table, then validates ``_meta`` (:func:`~mcp_sim.protocol.lifecycle.check_modern_request`),
then builds the context. Here the table lookup is remembered per method, and a request whose ``_meta``
is well formed — nearly all of them — is checked in a few steps. Anything unusual (a bad or missing
``_meta``, an unknown method, a tasks-extension method, a Multi Round-Trip retry) takes the readable
path, so every error is the readable session's own.

This module holds those methods only; :mod:`mcp_sim.roles.server_session` combines them with the
readable session (and never the other way round).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Literal

import anyio

from mcp_sim.capabilities.context import Context
from mcp_sim.protocol import meta as M
from mcp_sim.protocol.lifecycle import ModernRequestMeta
from mcp_sim.protocol.revisions import TASKS_EXTENSION_METHODS, MethodInfo, get_revision
from mcp_sim.wire.jsonrpc import InvalidMessage, JSONRPCMessage, JSONRPCRequest, JSONRPCResponse, RequestId

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from anyio.abc import TaskGroup

    from mcp_sim.protocol.lifecycle import LegacyLifecycle
    from mcp_sim.roles.server import Server
    from mcp_sim.transports.base import MessageStream

    Handler = Callable[[Context], Awaitable[dict[str, Any]]]


class WorkerPool:
    """Requests answered by reusable workers instead of a task each."""

    if TYPE_CHECKING:  # provided by the readable ServerSession this is combined with
        _work: TaskGroup | None
        _closed: bool
        _in_flight: dict[RequestId, anyio.CancelScope]

        async def handle(self, request: JSONRPCRequest) -> JSONRPCResponse | None: ...
        @staticmethod
        def _digest(request: JSONRPCRequest) -> bytes: ...
        async def _send(self, message: JSONRPCMessage, related_request_id: RequestId | None = None) -> None: ...

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._idle_workers: list[asyncio.Future[JSONRPCRequest | None]] = []
        """Workers waiting for a request (see :meth:`_worker`)."""
        self._requests_seen: dict[RequestId, JSONRPCRequest] = {}
        """Every request id used on this connection, with its request (see :meth:`_use_of_id`)."""

    def _use_of_id(self, request: JSONRPCRequest) -> Literal["new", "copy", "reuse"]:
        """As the readable session decides, but the digests are made only when an id comes again: the
        first use of an id (nearly every request) keeps the request itself, which costs no work."""
        before = self._requests_seen.get(request.id)
        if before is None:
            self._requests_seen[request.id] = request
            return "new"
        return "copy" if self._digest(before) == self._digest(request) else "reuse"

    async def _on_message(self, message: JSONRPCMessage | InvalidMessage) -> None:
        """A request with an id new on this connection (nearly every message a client sends) goes
        straight to a worker: what the readable ``_on_message`` decides for it, without the questions
        whose answer is already known. Everything else is the readable session's."""
        if type(message) is JSONRPCRequest and message.method != "initialize":
            seen = self._requests_seen
            if message.id not in seen:
                seen[message.id] = message
                self._dispatch(message)
                return
        await super()._on_message(message)  # type: ignore[misc]

    def _dispatch(self, request: JSONRPCRequest) -> None:
        """Give ``request`` to an idle worker, or start a new worker for it."""
        if self._idle_workers:
            self._idle_workers.pop().set_result(request)
        else:
            assert self._work is not None
            self._work.start_soon(self._worker, request)

    async def _worker(self, request: JSONRPCRequest | None) -> None:
        """Answer requests, one at a time, until the connection ends.

        The worker's cancel scope is the scope of the request it is answering: ``_in_flight`` maps
        that request's id to it, and only while the handler runs. Cancelling it (the client sent
        ``notifications/cancelled``) stops that one request and, with it, this worker — a cancelled
        scope is spent — so the next request gets a fresh worker."""
        with anyio.CancelScope() as scope:
            while request is not None:
                self._in_flight[request.id] = scope
                try:
                    response = await self.handle(request)
                finally:
                    self._in_flight.pop(request.id, None)
                if scope.cancel_called:
                    # Cancelled just as the handler finished: the answer still goes out, as it would
                    # have without the cancellation, and this worker (its scope spent) ends.
                    with anyio.CancelScope(shield=True):
                        if response is not None:
                            await self._send(response)
                    return
                if response is not None:  # None: no response is due (a listen stream the client closed)
                    await self._send(response)
                if self._closed:
                    return
                next_request: asyncio.Future[JSONRPCRequest | None] = asyncio.Future()
                self._idle_workers.append(next_request)
                try:
                    request = await next_request
                finally:
                    if next_request in self._idle_workers:
                        self._idle_workers.remove(next_request)

    def _end_of_stream(self) -> None:
        for idle in self._idle_workers:
            if not idle.done():
                idle.set_result(None)  # no more requests: the worker ends
        self._idle_workers.clear()
        super()._end_of_stream()  # type: ignore[misc]


class QuickModernChecks:
    """The checks of a well-formed 2026-07-28 request in one pass (see the module docstring)."""

    if TYPE_CHECKING:  # provided by the readable ServerSession this is combined with
        lifecycle: LegacyLifecycle | None
        server: Server
        stream: MessageStream | None

        def _handler(self, method: str) -> Handler: ...
        def _require_server_capability(self, info: MethodInfo, revision: str) -> None: ...

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._modern_methods: dict[str, tuple[tuple[str, ...], MethodInfo]] = {}
        """Per method: the modern versions the lookup was made for, and the revision table's entry."""

    def _prepare(self, request: JSONRPCRequest) -> tuple[Context, Handler]:
        if self.lifecycle is None and request.method != "initialize":
            modern = self.server.versions_by_era()[1]
            if modern:
                quick = self._quick_modern(request, modern)
                if quick is not None:
                    return quick
        return super()._prepare(request)  # type: ignore[misc]

    def _quick_modern(self, request: JSONRPCRequest, modern: tuple[str, ...]) -> tuple[Context, Handler] | None:
        """The context and handler of a well-formed modern request, or ``None`` for the readable path."""
        method = request.method
        known = self._modern_methods.get(method)
        if known is None or known[0] is not modern:
            info = get_revision(modern[-1]).method(method)
            if info is None or info.direction == "server→client" or info.only_inside_input_requests \
                    or method in TASKS_EXTENSION_METHODS:
                return None
            known = self._modern_methods[method] = (modern, info)
        info = known[1]
        params = request.params
        meta = params.get("_meta") if params is not None else None
        if type(meta) is not dict:
            return None
        version = meta.get(M.PROTOCOL_VERSION)
        caps = meta.get(M.CLIENT_CAPABILITIES)
        if type(version) is not str or type(caps) is not dict or version not in modern:
            return None
        assert params is not None
        if info.may_need_input and ("requestState" in params or "inputResponses" in params):
            return None
        self._require_server_capability(info, version)
        if self.stream is not None:
            self.stream.revision = version
        progress = meta.get(M.PROGRESS_TOKEN)
        checked = ModernRequestMeta(version, dict(caps), meta.get(M.CLIENT_INFO), meta.get(M.LOG_LEVEL),
                                    progress if isinstance(progress, (str, int)) else None)
        return Context(self, request.id, method, params, version, checked), self._handler(method)  # type: ignore[arg-type]
