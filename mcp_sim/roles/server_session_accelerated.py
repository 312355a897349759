"""The accelerated twin of the server session's way of starting requests (see
:mod:`mcp_sim.accelerated` and :class:`mcp_sim.roles.server_session.ServerSession`).

The readable session starts a task for every request. Starting a task costs several times more than
waking one, so here a request goes to a *worker*: a task that answers one request at a time and,
when it is done, waits for the next one rather than ending. A busy connection reuses a few tasks;
a request that arrives while every worker is busy gets a new worker; they all end with the
connection. Waking a waiting worker takes the event loop exactly one turn, as starting a task does,
so every task runs in the same order and the trace is the same, byte for byte.

This module holds those methods only; :mod:`mcp_sim.roles.server_session` combines them with the
readable session (and never the other way round).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Literal

import anyio

from mcp_sim.wire.jsonrpc import JSONRPCMessage, JSONRPCRequest, JSONRPCResponse, RequestId

if TYPE_CHECKING:
    from anyio.abc import TaskGroup


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
                next_request: asyncio.Future[JSONRPCRequest | None] = asyncio.get_running_loop().create_future()
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
