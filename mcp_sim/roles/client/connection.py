"""The client's connection: ids, requests in flight, timeouts and the one reader (course chapters 02
JSON-RPC and 06 transports; spec ``basic`` — requests, responses, cancellation, timeouts).

This is the bottom layer of the Client, and it knows nothing of MCP's methods. It does four things:

* **Correlation.** Every request gets a fresh ``id``; many may be in flight at once, and the one task
  that reads the stream hands each response to the request with the same ``id`` (JSON-RPC 2.0).
* **Timeouts.** The spec says implementations SHOULD set a timeout on every request and, when it
  fires, send ``notifications/cancelled``. A timeout here is an ``anyio.move_on_after`` cancel scope
  around the send *and* the wait, so every wait has a deadline from the moment the request is handed
  to the transport, whatever the transport loses; it runs on the simulation's virtual clock, so a
  30 s timeout costs no real time.
* **Late and stray responses.** A response to a request the client gave up on is *late*; one to a
  request already answered is a *duplicate*; one to an id never sent is *unknown*. All three are
  ignored, and the trace says why.
* **Reading.** :meth:`ClientConnection._run_receive_loop` is the only entry point for what the
  server sends: responses go to their waiters, notifications and server requests to the layers
  above (see :mod:`.client_input` and :mod:`.verbs`).
* **Refusals.** A transport may refuse one request without any protocol answer (a real HTTP server's
  ``401``): the stream raises :class:`~mcp_sim.transports.base.RequestRefused`, that request fails
  with it, and nothing is sent back — a refusal is not a message to answer.
"""

from __future__ import annotations

import json
import logging
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import Any, Final

import anyio
from anyio.abc import TaskGroup

from mcp_sim.protocol import meta as M
from mcp_sim.protocol.errors import INVALID_REQUEST, McpError
from mcp_sim.protocol.lifecycle import LegacyLifecycle
from mcp_sim.protocol.revisions import Era, get_revision
from mcp_sim.roles.client.errors import ConnectionLost, RequestTimeout
from mcp_sim.roles.client.subscriptions import Subscription
from mcp_sim.sim.world import Simulation
from mcp_sim.transports.base import MessageStream, RequestRefused, StreamLost, TransportClosed
from mcp_sim.wire.jsonrpc import (
    InvalidMessage,
    JSONRPCErrorResponse,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResultResponse,
    RequestId,
)

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT: Final = 30.0
"""Seconds (virtual) a request may take. The spec: implementations SHOULD set a timeout on every
request and, when it fires, cancel the request."""

ProgressCallback = Callable[[float, float | None, str | None], None]
"""Called with ``(progress, total, message)`` for each ``notifications/progress`` of one request. It
runs as the notification arrives, in the receive loop, so it must be quick and must not await (hand
work to a task if needed)."""

READ_ENDED: Final = (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, TransportClosed)
"""What ``receive`` raises when the link has ended: the receive loop stops, quietly."""

MAX_INVALID_REPLIES: Final = 64
"""How many unreadable frames a legacy client answers (``-32600``/``-32700``) on one connection. A
peer that answers each of those errors with another unreadable frame would otherwise keep both sides
busy for ever; past the limit the client stops answering and the trace says so."""


class Pending:
    """One request in flight: the response is put here and the one waiter woken.

    :meth:`finish` wakes the waiter with whatever is known by then — a response, or nothing (the
    connection ended). A timeout is not stored here: it is the waiter's own cancel scope."""

    __slots__ = ("finished", "method", "on_progress", "progress_token", "refused", "response")

    def __init__(self, method: str, on_progress: ProgressCallback | None = None) -> None:
        self.method = method
        self.on_progress = on_progress
        self.progress_token: str | int | None = None
        self.response: JSONRPCResultResponse | JSONRPCErrorResponse | None = None
        self.refused: RequestRefused | None = None
        """Set when the transport refused the request without an answer (e.g. HTTP 401)."""
        self.finished = anyio.Event()

    def finish(self) -> None:
        self.finished.set()


class ClientConnection(ABC):
    """The bottom layer of a :class:`~mcp_sim.roles.client.Client`: one stream, the requests in flight
    on it, and the task that reads it.

    The layers above fill in what to do with what the server *sends on its own*: its requests
    (:meth:`_on_server_request`) and the notifications meant for the Host (:meth:`_pass_on`)."""

    def __init__(self, *, timeout: float, sim: Simulation | None) -> None:
        self.timeout = timeout
        self._sim = sim
        self._stream: MessageStream | None = None

        # What the session is, as far as it is known (set by :mod:`.opening`).
        self.era: Era | None = None
        self.protocol_version: str | None = None
        self.lifecycle = LegacyLifecycle("client")
        self.restarts = 0
        """How many times the server process was restarted (a new process; see :mod:`.restart`)."""

        self._next_id = 0
        self._next_token = 0
        self._pending: dict[RequestId, Pending] = {}
        self._abandoned: dict[RequestId, str] = {}
        """Requests we timed out or cancelled, with their method: their responses are late and ignored."""
        self._subscriptions: dict[RequestId, Subscription] = {}
        """Open ``subscriptions/listen`` requests, by id: long-lived, answered by notifications."""
        self._loop_scope: anyio.CancelScope | None = None
        self._loop_tasks: TaskGroup | None = None
        """The receive loop's task group while it runs (server requests get their tasks there)."""
        self._loop_ended: anyio.Event | None = None
        """Set when the current receive loop has ended (a restart waits for it before starting another)."""
        self._closed = anyio.Event()
        self.closed_reason: str | None = None
        self.ignored: list[tuple[str, RequestId | None]] = []
        """(why, id) of every response the client ignored: ``late``, ``duplicate`` or ``unknown``."""
        self._invalid_replies = 0
        """How many unreadable frames this connection answered (at most :data:`MAX_INVALID_REPLIES`)."""
        self._server_requests: dict[RequestId, str] = {}
        """Legacy: every request the server sent in this session, by id, with what it said (see
        :meth:`_server_request_copy`). A new session starts it afresh (:mod:`.opening`)."""

    # ---------------------------------------------------------------------------------------------
    # naming and recording
    # ---------------------------------------------------------------------------------------------
    @property
    def server_name(self) -> str:
        return self._stream.info.name if self._stream is not None else "?"

    @property
    def participant(self) -> str:
        return self._stream.info.client if self._stream is not None else "client"

    @property
    def connected(self) -> bool:
        return self._stream is not None and not self._closed.is_set()

    def _note(self, kind: str, text: str, *, marks: tuple[str, ...] = (), request_id: RequestId | None = None,
              method: str | None = None) -> None:
        """Put something the client decided (ignore, time out, disconnect) on the trace."""
        sim = self._sim
        if sim is None or self._stream is None:
            return
        info = self._stream.info
        sim.recorder.record_event(kind=kind, link=info.name, sender=info.client, receiver=info.server, text=text,
                                  transport=info.transport, marks=marks, revision=self.protocol_version,
                                  request_id=request_id, method=method)

    # ---------------------------------------------------------------------------------------------
    # sending, and waiting for the response with the same id
    # ---------------------------------------------------------------------------------------------
    async def _send(self, message: JSONRPCMessage) -> None:
        if self._stream is None:
            raise McpError(INVALID_REQUEST, "this client is not connected: call connect(stream, task_group) first")
        if self._closed.is_set():
            raise ConnectionLost(f"the connection to {self.server_name} is closed ({self.closed_reason})")
        await self._stream.send(message)

    async def _send_quietly(self, message: JSONRPCMessage) -> None:
        try:
            await self._send(message)
        except TransportClosed:
            pass

    def _new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def _new_pending(self, method: str, params: dict[str, Any] | None, on_progress: ProgressCallback | None,
                     ) -> tuple[Pending, dict[str, Any] | None]:
        """The waiter for a new request; with ``on_progress``, a ``progressToken`` goes into its
        ``_meta`` so the server's ``notifications/progress`` can name the request."""
        pending = Pending(method, on_progress)
        if on_progress is None:
            return pending, params
        self._next_token += 1
        pending.progress_token = f"progress-{self._next_token}"
        params = dict(params or {})
        meta = dict(params.get("_meta") or {})
        meta[M.PROGRESS_TOKEN] = pending.progress_token
        params["_meta"] = meta
        return pending, params

    async def _exchange(self, method: str, params: dict[str, Any] | None, *, timeout: float | None,
                        on_progress: ProgressCallback | None = None, cancel_on_timeout: bool = True,
                        ) -> JSONRPCResultResponse | JSONRPCErrorResponse:
        """Send one request and wait for the response with the same id. Many exchanges run at once;
        the receive loop hands each response to its waiter. On timeout, cancel and forget."""
        rid = self._new_id()
        pending, params = self._new_pending(method, params, on_progress)
        self._pending[rid] = pending
        try:
            # The deadline starts when the request is handed to the transport, not when ``send``
            # returns: a transport may itself wait (for an HTTP status line, a body that never comes).
            with anyio.move_on_after(timeout) as scope:  # None or inf: wait as long as it takes
                await self._send(JSONRPCRequest(rid, method, params))
                await pending.finished.wait()
            if scope.cancelled_caught and not pending.finished.is_set():
                await self._on_timeout(rid, method, timeout or 0.0, cancel=cancel_on_timeout)
                raise RequestTimeout(self.server_name, method, rid, timeout or 0.0)
        finally:
            self._pending.pop(rid, None)
        return self._answer_of(pending, rid)

    def _answer_of(self, pending: Pending, rid: RequestId) -> JSONRPCResultResponse | JSONRPCErrorResponse:
        """The response a finished waiter got; a refusal by the transport raises; none means the
        connection ended first."""
        if pending.refused is not None:
            raise pending.refused
        if pending.response is None:
            raise ConnectionLost(f"the connection to {self.server_name} ended before {pending.method} (id {rid}) "
                                 f"was answered ({self.closed_reason or 'transport closed'})",
                                 method=pending.method, request_id=rid)
        return pending.response

    async def _on_timeout(self, rid: RequestId, method: str, seconds: float, *, cancel: bool) -> None:
        self._abandoned[rid] = method
        self._note("timeout", f"{method} (id {rid}) got no response within {seconds:g} s", marks=("timeout",),
                   request_id=rid, method=method)
        # initialize MUST NOT be cancelled; a probe to a server of unknown era is simply forgotten.
        if cancel and method != "initialize" and not self._closed.is_set():
            await self._cancel(rid, f"timed out after {seconds:g} s")

    async def _cancel(self, rid: RequestId, reason: str) -> None:
        """``notifications/cancelled`` for a request we issued (legacy, and modern stdio; on modern
        HTTP the transport turns it into closing the response stream)."""
        self._abandoned.setdefault(rid, "cancelled")
        if self.era == "legacy" and not self.lifecycle.may_send("notifications/cancelled"):
            return
        try:
            await self._send(JSONRPCNotification("notifications/cancelled", {"requestId": rid, "reason": reason}))
        except TransportClosed:
            pass

    # ---------------------------------------------------------------------------------------------
    # reading
    # ---------------------------------------------------------------------------------------------
    async def _run_receive_loop(self, started: anyio.Event) -> None:
        """The one reader of the stream: responses go to their waiters, the server's requests and
        notifications to handlers. Server requests run in their own tasks, so a slow user answering
        an elicitation does not hold up other responses."""
        ended = self._loop_ended = anyio.Event()
        with anyio.CancelScope() as scope:
            self._loop_scope = scope
            stream = self._stream
            assert stream is not None
            try:
                async with anyio.create_task_group() as tg:
                    self._loop_tasks = tg
                    started.set()
                    await self._read(stream, tg)
            except Exception as exc:  # one broken client must not take the Host down
                self._receive_failed(exc)
            finally:
                self._loop_tasks = None
                self.lifecycle.on_event("close")
                self._finish_all()
                ended.set()

    async def _read(self, stream: MessageStream, tg: TaskGroup) -> None:
        """Read and dispatch every message until the link ends."""
        while True:
            try:
                message = await stream.receive()
            except RequestRefused as refused:
                self._on_refused(refused)
                continue
            except StreamLost as lost:
                self._on_stream_lost(lost)
                continue
            except READ_ENDED as exc:
                self.closed_reason = self.closed_reason or f"the server closed the link ({type(exc).__name__})"
                return
            self._dispatch(message, tg)

    def _on_refused(self, refused: RequestRefused) -> None:
        """The transport refused one request without a protocol answer (HTTP 401, 403, 500 …): that
        request fails with the refusal as its error. Nothing is sent back: a refusal is not a message."""
        rid = refused.request_id
        pending = self._pending.get(rid)
        if pending is None or pending.response is not None or pending.refused is not None:
            self._note("transport", f"{self.participant} ignores a refusal of request {rid}, which no longer "
                       f"waits: {refused}", marks=("ignored",), request_id=rid)
            return
        self._note("transport", f"{pending.method} (id {rid}) fails: {refused}", marks=("refused",),
                   request_id=rid, method=pending.method)
        pending.refused = refused
        pending.finish()

    def _on_stream_lost(self, lost: StreamLost) -> None:
        """The transport says a stream broke for good without a word on it (HTTP: a cut response
        stream, a session found gone): see :class:`~mcp_sim.transports.base.StreamLost`. A request
        waiting on it learns from its own timeout; a subscription must not go silent, so
        :mod:`.restart` overrides this to listen again and close the gap."""
        return

    def _receive_failed(self, exc: Exception) -> None:
        self.closed_reason = f"client receive loop failed: {exc!r}"
        log.warning("%s: %s", self.participant, self.closed_reason)

    def _dispatch(self, message: JSONRPCMessage | InvalidMessage, tg: TaskGroup) -> None:
        """Hand one message to whoever handles it. Dispatching never waits: server requests get a task."""
        if isinstance(message, (JSONRPCResultResponse, JSONRPCErrorResponse)):
            self._on_response(message)
        elif isinstance(message, JSONRPCNotification):
            self._on_notification(message)
        elif isinstance(message, JSONRPCRequest):
            if not self._server_request_copy(message):
                tg.start_soon(self._on_server_request, message)
        else:
            self._note("transport", f"{self.participant} could not read a frame: {message.reason}", marks=("invalid",))
            if message.is_answerable and self.era == "legacy" and (
                    message.reply.id is not None or self.protocol_version is None
                    or get_revision(self.protocol_version).error_id_optional):
                # An error without an id (the frame's id is unknown) exists only from 2025-11-25.
                self._invalid_replies += 1
                if self._invalid_replies <= MAX_INVALID_REPLIES:
                    tg.start_soon(self._send_quietly, message.reply)
                elif self._invalid_replies == MAX_INVALID_REPLIES + 1:
                    self._note("transport", f"{self.participant} stops answering unreadable frames: "
                               f"{MAX_INVALID_REPLIES} answered on this connection already", marks=("invalid",))

    def _server_request_copy(self, request: JSONRPCRequest) -> bool:
        """Is ``request`` one the server already sent in this session? The client's copy check, the
        twin of the server's (:mod:`mcp_sim.roles.server_session`): the same id and the same method
        and params is a copy the link made (a duplicated frame), and the Host must not ask its user the
        same question twice — a scripted user's next answer would go to the wrong question. The copy
        is dropped: the first arrival gets the one answer. A *different* request reusing an id is the
        server's bug (rule ``jsonrpc.legacy.request-id-unused-in-session``); it is not answered either, since
        a second response with that id would be taken as the first request's answer."""
        if self.era != "legacy":
            return False  # a modern server sends no requests at all (see client_input)
        said = json.dumps([request.method, request.params], sort_keys=True, separators=(",", ":"), default=str)
        before = self._server_requests.get(request.id)
        if before is None:
            self._server_requests[request.id] = said
            return False
        copy = before == said
        self._note("transport", f"{self.participant} ignores "
                   + (f"a copy of the server's {request.method} (id {request.id!r}): it answers the first one only"
                      if copy else f"a {request.method} reusing the id {request.id!r} of another server request "
                      "in this session"),
                   marks=("duplicate" if copy else "reused-id", "ignored"), request_id=request.id,
                   method=request.method)
        return True

    def _on_response(self, response: JSONRPCResultResponse | JSONRPCErrorResponse) -> None:
        rid = response.id
        pending = self._pending.get(rid) if rid is not None else None
        if pending is not None and pending.response is None:
            pending.response = response
            pending.finish()
            return
        # Not something we are waiting for: say why, so the trace explains the ignored message.
        if rid in self._subscriptions:
            self._subscriptions[rid].closed = True
            return
        if rid is not None and rid in self._abandoned:
            why, text = "late", f"ignores the late response to {self._abandoned[rid]} (id {rid}): it was cancelled"
        elif pending is not None or (isinstance(rid, int) and 0 < rid <= self._next_id):
            why, text = "duplicate", f"ignores a duplicate response to request {rid}"
        elif rid is None and isinstance(response, JSONRPCErrorResponse) and isinstance(response.error.data, Mapping) \
                and "requestId" in response.error.data:
            # An error without an id that names one: the server refused a request reusing an id (see
            # mcp_sim.roles.server_session); the request that holds the id keeps its own answer.
            reused = response.error.data["requestId"]
            why, text = "refused", (f"learns that the server refused a second request with id {reused} "
                                    f"({response.error.data.get('method')}): {response.error.message}")
        else:
            why, text = "unknown", f"ignores a response to request {rid}, which it never sent"
        self.ignored.append((why, rid))
        self._note("transport", f"{self.participant} {text}", marks=(why, "ignored"), request_id=rid)

    def _on_notification(self, note: JSONRPCNotification) -> None:
        """Progress goes to the waiting request, subscription bookkeeping to its :class:`Subscription`,
        everything else up to :meth:`_pass_on`."""
        method, params = note.method, dict(note.params or {})
        if method == "notifications/progress":
            token = params.get("progressToken")
            for pending in self._pending.values():
                if pending.progress_token is not None and pending.progress_token == token and pending.on_progress:
                    pending.on_progress(params.get("progress", 0), params.get("total"), params.get("message"))
            return
        meta = params.get("_meta") or {}
        sub_id = meta.get(M.SUBSCRIPTION_ID) if isinstance(meta, Mapping) else None
        if method == "notifications/subscriptions/acknowledged":
            sub = self._subscriptions.get(sub_id) if sub_id is not None else None
            if sub is not None:
                sub.accepted = dict(params.get("notifications") or {})
                sub.acknowledged.set()
            return
        if method == "notifications/cancelled":
            # Modern servers send it only to end a subscriptions/listen stream.
            rid = params.get("requestId")
            sub = self._subscriptions.pop(rid, None) if rid is not None else None
            if sub is not None:
                sub.closed = True
                sub.acknowledged.set()
            return
        if sub_id is not None and sub_id in self._subscriptions:
            self._subscriptions[sub_id].received.append((method, params))
        self._pass_on(method, params)

    @abstractmethod
    def _pass_on(self, method: str, params: dict[str, Any]) -> None:
        """A notification for the layers above (a change, a log message): see :mod:`.verbs`."""

    @abstractmethod
    async def _on_server_request(self, request: JSONRPCRequest) -> None:
        """A request from the server: see :mod:`.client_input`."""

    # ---------------------------------------------------------------------------------------------
    # closing
    # ---------------------------------------------------------------------------------------------
    async def close(self) -> None:
        """Shut the connection down. Legacy MCP has no shutdown message: closing the transport is the
        shutdown. Modern subscriptions end with it too."""
        await self._disconnect("closed by the host")

    async def _disconnect(self, reason: str) -> None:
        if self._closed.is_set():
            return
        self.closed_reason = reason
        self.lifecycle.on_event("close")
        stream = self._stream
        if stream is not None:
            with anyio.CancelScope(shield=True):
                try:
                    await stream.aclose()
                except Exception as exc:  # the link may already be gone
                    log.debug("closing %s: %s", stream.info.name, exc)
        self._finish_all()
        if self._loop_scope is not None:
            self._loop_scope.cancel()

    def _finish_all(self) -> None:
        """The connection ended: wake every waiter (they find no response) and end every subscription."""
        self._closed.set()
        for pending in self._pending.values():
            pending.finish()
        for sub in self._subscriptions.values():
            sub.closed = True
            sub.acknowledged.set()
