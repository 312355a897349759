"""The accelerated twin of the Client's hot paths: the same behaviour and trace, fewer Python steps.

Read :mod:`.connection`, :mod:`.opening` and :mod:`.client_input` first: they are the Client as the
course explains it. This module is what the Host benchmark (``benchmarks/host.py``) runs when
:func:`mcp_sim.accelerated.enabled` is on, in the pattern of the standard library's ``heapq`` /
``_heapq``. Each method here replaces one of theirs and must do exactly the same work, *at the same
moments*: a test runs client-heavy stories both ways and compares the traces byte for byte. What it
changes:

* **Waiting.** A request waits on a bare asyncio future with one timer, instead of an ``anyio.Event``
  inside an ``anyio.move_on_after`` cancel scope (which sets the same timer, and more).
* **Sending.** When the accelerated memory pipe can hand a request over without waiting, the send
  needs no cancel scope around it: no deadline can pass inside a call that does not wait.
* **Kept answers.** The declared capabilities, the per-request ``_meta`` and the methods the
  pre-send checks allowed (revision, server capabilities, lifecycle state) are kept and reused while
  what they were computed from is unchanged.
* **The first exchange in one step.** A plain request on the accelerated memory pipe (no progress
  callback, no narrowed capabilities, no session being opened) is checked, sent and waited for in
  :meth:`AcceleratedParts._request` itself, without the readable layers in between. A complete
  result is returned at once; any other outcome (an error response, an ``InputRequiredResult``, a
  lost link) is handed to the readable ``_request`` as the outcome of its first exchange
  (:meth:`AcceleratedParts._replay`), so what happens next is the readable client's own doing.

It imports only the layers it speeds up, never :mod:`.verbs` (which imports it).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import anyio
from anyio.abc import TaskGroup

from mcp_sim.protocol import meta as M
from mcp_sim.protocol.lifecycle import LegacyState
from mcp_sim.roles.client.client_input import ClientInput
from mcp_sim.roles.client.connection import Pending, ProgressCallback
from mcp_sim.roles.client.errors import RequestTimeout
from mcp_sim.transports.base import RequestRefused, TransportClosed
from mcp_sim.transports.memory_accelerated import PipeEnd
from mcp_sim.wire.jsonrpc import (
    InvalidMessage,
    JSONRPCErrorResponse,
    JSONRPCMessage,
    JSONRPCRequest,
    JSONRPCResultResponse,
)

INFINITY: Final = float("inf")


class FuturePending(Pending):
    """A request in flight whose waiter waits on a plain asyncio future (the cheapest thing to wake).

    A timeout counts exactly when the readable waiter's would: the timer fired while the waiter still
    waited, and nothing finished the request (no response, no closed connection) before it woke."""

    __slots__ = ("done", "finish_called", "timed_out")

    def __init__(self, method: str, on_progress: ProgressCallback | None = None) -> None:
        # Not Pending.__init__: no anyio.Event, the future below is the wake-up call.
        self.method = method
        self.on_progress = on_progress
        self.progress_token: str | int | None = None
        self.response: JSONRPCResultResponse | JSONRPCErrorResponse | None = None
        self.refused: RequestRefused | None = None
        self.done: asyncio.Future[None] = asyncio.Future()
        self.finish_called = False
        self.timed_out = False

    def finish(self) -> None:
        self.finish_called = True
        if not self.done.done():
            self.done.set_result(None)

    def time_out(self) -> None:
        """The request's deadline passed on the virtual clock (its timer calls this)."""
        if not self.done.done():
            self.timed_out = True
            self.done.set_result(None)


@dataclass
class MetaMade:
    """The ``_meta`` last built for the client's own declaration, and what it was built from."""

    version: str
    capabilities: Mapping[str, Any]
    client_info: dict[str, Any]
    log_level: str | None
    meta: dict[str, Any]


@dataclass
class SendsChecked:
    """Methods :meth:`~.client_input.ClientInput._check_request` allowed with exactly these: the
    version (an era change always comes with one), the server-capabilities object (a new one, e.g.
    after a restart, starts afresh) and the legacy lifecycle state."""

    version: str | None
    server_capabilities: dict[str, Any] | None
    state: LegacyState
    methods: set[str]


@dataclass
class PlainKept:
    """What :meth:`AcceleratedParts._plain_params` worked out, and from what (``key``)."""

    key: tuple[Any, ...]
    declared: dict[str, Any]
    """What a modern request declares (empty in the legacy era, as the readable loop starts it)."""
    meta: dict[str, Any] | None
    """The ``_meta`` of a modern request (``None`` in the legacy era)."""
    methods: set[str]
    """The methods the pre-send checks allowed."""


class AcceleratedParts(ClientInput):
    """The twins of the connection's and the session's hot methods (mixed in before the Client)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._declared_by: dict[tuple[Any, ...], dict[str, Any]] = {}
        self._meta_made: MetaMade | None = None
        self._sends_checked: SendsChecked | None = None
        self._plain_kept: PlainKept | None = None
        self._first_outcome: JSONRPCResultResponse | JSONRPCErrorResponse | TransportClosed | None = None
        """The outcome of a first exchange made by :meth:`_request`, while the readable ``_request``
        it is handed to has not reached its own first exchange (see :meth:`_replay`)."""
        self._first_declared: dict[str, Any] = {}
        """What that first exchange declared, for the readable ``_request`` to start from."""

    # ---------------------------------------------------------------------------------------------
    # the first exchange of a plain request, in one step
    # ---------------------------------------------------------------------------------------------
    async def _request(self, method: str, params: Mapping[str, Any] | None, *, timeout: float | None,
                       on_progress: ProgressCallback | None, capabilities: Mapping[str, Any] | None,
                       ) -> tuple[dict[str, Any], bool]:
        """What the readable ``_request`` (and the restarting client's before it) does up to the end
        of its first exchange, for a plain request on the accelerated memory pipe: the connection is
        open (nothing to restart), no session is being opened (nothing to wait for), the send cannot
        wait. Anything else takes the readable way from the start."""
        stream = self._stream
        seconds = self.timeout if timeout is None else timeout
        if on_progress is not None or capabilities is not None or self._initializing is not None \
                or not isinstance(stream, PipeEnd) or self._closed.is_set() \
                or seconds is None or seconds == INFINITY or not stream.sends_at_once():
            return await super()._request(method, params, timeout=timeout, on_progress=on_progress,  # type: ignore[misc, no-any-return]
                                          capabilities=capabilities)
        wire_params, declared = self._plain_params(method, params)
        try:
            rid = self._new_id()
            pending = FuturePending(method)
            self._pending[rid] = pending
            try:
                loop = asyncio.get_running_loop()
                timer = loop.call_at(loop.time() + seconds, pending.time_out)
                try:
                    await stream.send(JSONRPCRequest(rid, method, wire_params or None))
                    await pending.done
                finally:
                    timer.cancel()
                if pending.timed_out and not pending.finish_called:
                    await self._on_timeout(rid, method, seconds, cancel=True)
                    raise RequestTimeout(self.server_name, method, rid, seconds)
            finally:
                self._pending.pop(rid, None)
            response = pending.response
            if response is None:
                response = self._answer_of(pending, rid)
        except TransportClosed as lost:
            return await self._replay(lost, declared, method, params, timeout)
        if type(response) is JSONRPCResultResponse:
            result = response.result
            if self.era == "legacy" or result.get("resultType", "complete") == "complete":
                return result, False
        return await self._replay(response, declared, method, params, timeout)

    def _plain_params(self, method: str, params: Mapping[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any]]:
        """The pre-send checks of ``method``, then the params the readable ``_request`` sends for a
        plain request (a copy, with the client's ``_meta`` in the modern era) and what it declares
        (empty in the legacy era). What the checks allowed
        and the ``_meta`` made are kept together with everything they were worked out from (era,
        versions, server capabilities, lifecycle state, declared capabilities and callbacks, client
        info, log level): while all of it is equal, one comparison stands for the checks and the
        building."""
        cb = self.callbacks
        key = (self.era, self.protocol_version, self.server_capabilities, self.lifecycle.state,
               self._explicit_capabilities, cb.roots is not None, cb.sampling is not None, cb.elicitation is not None,
               cb.elicitation_url, self.client_info, self.log_level)
        kept = self._plain_kept
        if kept is None or kept.key != key or method not in kept.methods:
            self._check_request(method)
            declared: dict[str, Any] = {}
            meta = None
            if self.era == "modern":
                declared = self._declared(self.protocol_version or self.versions[0])
                meta = self._with_meta({}, declared)["_meta"]
            if self.protocol_version is None:  # the versions to choose from: nothing worth keeping
                kept = PlainKept(key, declared, meta, set())
            elif kept is None or kept.key != key:
                kept = self._plain_kept = PlainKept(key, declared, meta, set())
            kept.methods.add(method)
        out = dict(params or {})
        meta = kept.meta
        if meta is not None:
            given = out.get("_meta")
            out["_meta"] = {**given, **meta} if given else meta
        return out, kept.declared

    async def _replay(self, outcome: JSONRPCResultResponse | JSONRPCErrorResponse | TransportClosed,
                      declared: dict[str, Any], method: str, params: Mapping[str, Any] | None,
                      timeout: float | None) -> tuple[dict[str, Any], bool]:
        """Run the readable ``_request`` with ``outcome`` as the outcome of its first exchange: its
        wait for an opening session and its checks were made before the request was sent, so they
        are skipped, its first round declares what was sent (``declared``: what the readable loop
        worked out before sending), and its first :meth:`_exchange` gives ``outcome`` instead of
        sending. It gets there without waiting, so no other request can come in between. (The
        restart and session counters it also reads first cannot move while a request waits on a
        memory link.)"""
        self._first_outcome = outcome
        self._first_declared = declared
        try:
            return await super()._request(method, params, timeout=timeout, on_progress=None,  # type: ignore[misc, no-any-return]
                                          capabilities=None)
        finally:
            self._first_outcome = None

    async def _session_open(self) -> None:
        if self._first_outcome is None:
            await super()._session_open()  # type: ignore[misc]

    def _dispatch(self, message: JSONRPCMessage | InvalidMessage, tg: TaskGroup) -> None:
        """The awaited result of a request in flight (nearly every message a server sends) finishes
        its waiter here, as the readable ``_on_response`` would; everything else is the readable
        connection's."""
        if type(message) is JSONRPCResultResponse:
            pending = self._pending.get(message.id)
            if pending is not None and pending.response is None:
                pending.response = message
                if type(pending) is FuturePending:  # FuturePending.finish's steps, taken here
                    pending.finish_called = True
                    done = pending.done
                    if not done.done():
                        done.set_result(None)
                else:
                    pending.finish()
                return
        super()._dispatch(message, tg)

    # ---------------------------------------------------------------------------------------------
    # waiting: a future and a timer per request, no cancel scope
    # ---------------------------------------------------------------------------------------------
    async def _exchange(self, method: str, params: dict[str, Any] | None, *, timeout: float | None,
                        on_progress: ProgressCallback | None = None, cancel_on_timeout: bool = True,
                        ) -> JSONRPCResultResponse | JSONRPCErrorResponse:
        outcome = self._first_outcome
        if outcome is not None:  # see _replay
            self._first_outcome = None
            if isinstance(outcome, TransportClosed):
                raise outcome
            return outcome
        rid = self._new_id()
        pending = FuturePending(method, on_progress)
        if on_progress is not None:
            self._next_token += 1
            pending.progress_token = f"progress-{self._next_token}"
            params = dict(params or {})
            meta = dict(params.get("_meta") or {})
            meta[M.PROGRESS_TOKEN] = pending.progress_token
            params["_meta"] = meta
        self._pending[rid] = pending
        try:
            stream = self._stream
            if stream is None or self._closed.is_set():
                await self._send(JSONRPCRequest(rid, method, params))  # raises: says why it cannot send
            if timeout is None or timeout == INFINITY:
                await stream.send(JSONRPCRequest(rid, method, params))  # type: ignore[union-attr]
                await pending.done
            elif isinstance(stream, PipeEnd) and stream.sends_at_once():
                # The same timer, and a send that cannot wait: no deadline can pass inside it, so there
                # is nothing for a cancel scope around it to cancel.
                loop = asyncio.get_running_loop()
                timer = loop.call_at(loop.time() + timeout, pending.time_out)
                try:
                    await stream.send(JSONRPCRequest(rid, method, params))
                    await pending.done
                finally:
                    timer.cancel()
            else:
                # The timer anyio.move_on_after sets: the same deadline, set at the same moment (before
                # the send, which a transport may make wait); a send still waiting at the deadline is
                # cancelled, as the readable cancel scope would.
                loop = asyncio.get_running_loop()
                send_scope = anyio.CancelScope()  # no deadline of its own: the one timer cancels it

                def deadline_passed() -> None:
                    pending.time_out()
                    send_scope.cancel()

                timer = loop.call_at(loop.time() + timeout, deadline_passed)
                try:
                    with send_scope:
                        await stream.send(JSONRPCRequest(rid, method, params))  # type: ignore[union-attr]
                    await pending.done
                finally:
                    timer.cancel()
            if pending.timed_out and not pending.finish_called:
                await self._on_timeout(rid, method, timeout or 0.0, cancel=cancel_on_timeout)
                raise RequestTimeout(self.server_name, method, rid, timeout or 0.0)
        finally:
            self._pending.pop(rid, None)
        response = pending.response
        return response if response is not None else self._answer_of(pending, rid)

    # ---------------------------------------------------------------------------------------------
    # kept answers
    # ---------------------------------------------------------------------------------------------
    def _declared(self, version: str) -> dict[str, Any]:
        """Kept per version and per set of callbacks; read it, never change it."""
        if self._first_outcome is not None:
            return self._first_declared  # see _replay
        if self._explicit_capabilities is not None:
            return self._explicit_capabilities
        cb = self.callbacks
        key = (version, cb.roots is not None, cb.sampling is not None, cb.elicitation is not None, cb.elicitation_url)
        caps = self._declared_by.get(key)
        if caps is None:
            caps = self._declared_by[key] = super()._declared(version)
        return caps

    def _with_meta(self, params: Mapping[str, Any], capabilities: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The same ``_meta`` as the last request, shared, when the client's own declaration, version,
        name and log level are the same (nothing changes a message once it is sent)."""
        version = self.protocol_version or self._newest("modern")
        caps = capabilities if capabilities is not None else self._declared(version)
        made = self._meta_made
        if made is not None and made.capabilities is caps and made.version == version \
                and made.client_info is self.client_info and made.log_level == self.log_level:
            meta = made.meta
        else:
            declared = self._declared(version)
            if caps is declared:
                meta = M.request_meta(version, declared, self.client_info, log_level=self.log_level)
                self._meta_made = MetaMade(version, declared, self.client_info, self.log_level, meta)
            else:  # capabilities narrowed for this one request
                meta = M.request_meta(version, dict(caps), self.client_info, log_level=self.log_level)
        out = dict(params)
        given = out.get("_meta")
        out["_meta"] = {**given, **meta} if given else meta
        return out

    def _check_request(self, method: str) -> None:
        """Allowed a moment ago, and nothing it depends on changed: allowed again."""
        if self._first_outcome is not None:
            return  # checked before the request was sent (see _replay)
        checked = self._sends_checked
        if checked is not None and method in checked.methods and checked.version == self.protocol_version \
                and checked.server_capabilities is self.server_capabilities \
                and checked.state is self.lifecycle.state:
            return
        super()._check_request(method)
        if checked is None or checked.version != self.protocol_version \
                or checked.server_capabilities is not self.server_capabilities \
                or checked.state is not self.lifecycle.state:
            checked = self._sends_checked = SendsChecked(self.protocol_version, self.server_capabilities,
                                                         self.lifecycle.state, set())
        checked.methods.add(method)
