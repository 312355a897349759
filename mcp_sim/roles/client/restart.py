"""Restarting a crashed stdio server and telling the truth about what was lost (course chapter 06,
transports; spec 2026-07-28 ``basic/transports``, stdio).

On stdio the client *launches* the server as a subprocess, so when that process exits unexpectedly
the client is the one that can bring it back. The stdio transport page says what it SHOULD do then:
restart it; requests that were in flight are lost; subscriptions are re-established, because the new
process knows nothing of the old one. The session is opened again from scratch — a legacy
``initialize`` or a modern discovery — since a new process is a new server.

What "lost" means depends on the request:

* a request that never left the client, or one that only *reads* (lists, ``resources/read``,
  ``ping`` …), is simply sent again to the new process, with a new id;
* a ``tools/call`` that was sent may have run before the process died — or not. Nobody knows, and a
  tool may change the world (a payment, an e-mail), so the client does **not** send it again on its
  own: the caller gets :class:`~mcp_sim.roles.client.errors.OutcomeUnknown`, naming the method and
  the old id. Only a tool the *host* lists in ``retry_after_crash`` (its own judgement: the
  ``readOnlyHint`` / ``idempotentHint`` annotations are hints from the server, not promises) is
  retried, and the trace says so.

Crashes can come at any moment, also while the session is being opened again: the restart is one
loop (start a process, open the session) that tries again with a fresh process, at most
:data:`MAX_RESTARTS_PER_REQUEST` times, and the client closes with a clear reason if it cannot. A
process that dies while the client is idle is noticed by the next request, which restarts it first.

**Subscriptions never go silent** (rule ``subscriptions.sim-no-silent-miss``; see
:mod:`.subscriptions`). The server keeps no subscription across a new process or a new session
(``subscriptions.listen-again-after-reconnect``, ``stdio.modern.restart-after-crash``), so the
client asks again for every one it still wants, whenever the old one was lost:

* after a **stdio restart** (both eras);
* after a **legacy HTTP session renewal** — a ``404`` met by a request, or by the listening ``GET``
  while the client was idle (:meth:`RestartingClient._on_stream_lost` then renews the session itself,
  if the client holds resource subscriptions);
* when a **2026-07-28 listen stream is dropped** on HTTP (cut, server crash, broken connection): the
  transport reports it (:class:`~mcp_sim.transports.base.StreamLost`) and the client listens again
  (``subscriptions.reconnect-on-drop``).

Each re-subscription has a deadline (the acknowledgement of a ``subscriptions/listen``, the answer
of a ``resources/subscribe``: the client's request timeout) and is tried
:data:`MAX_RESUBSCRIBE_ATTEMPTS` times. Once it holds, the client closes the gap: it tells the Host
what may have changed meanwhile (:func:`~mcp_sim.capabilities.subscriptions.gap_notifications`), and
the Host reads again (``change.read-again-after-subscribing``). If it never holds, the subscription
is marked lost and the failure is reported — on the :class:`Subscription`, in the trace, and in
:attr:`RestartingClient.subscription_log` — never carried on with nothing.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, Final, Literal, Self

import anyio
from anyio.abc import TaskGroup

from mcp_sim.capabilities.subscriptions import LIST_CHANGED_FLAG, LIST_CHANGED_METHOD, gap_notifications
from mcp_sim.protocol import meta as M
from mcp_sim.protocol.errors import McpError
from mcp_sim.protocol.lifecycle import LegacyLifecycle, has_capability
from mcp_sim.roles.client.callbacks import ClientCallbacks
from mcp_sim.roles.client.client_input import ClientInput
from mcp_sim.roles.client.connection import ProgressCallback
from mcp_sim.roles.client.errors import OUTCOME_MAY_BE_UNKNOWN, ConnectionLost, OutcomeUnknown, RequestTimeout
from mcp_sim.roles.client.opening import ClientEra
from mcp_sim.roles.client.subscriptions import Subscription, SubscriptionEvent
from mcp_sim.sim.world import Simulation
from mcp_sim.transports.base import MessageStream, RequestRefused, StreamLost, TransportClosed
from mcp_sim.wire.jsonrpc import JSONRPCRequest

MAX_RESTARTS_PER_REQUEST: Final = 2
"""A request that keeps crashing its server is not retried forever; nor is a re-open that keeps failing."""

MAX_RESUBSCRIBE_ATTEMPTS: Final = 2
"""How many times the client asks again for one lost subscription before it reports it lost."""

RESUBSCRIBE_FAILED: Final = (McpError, RequestTimeout, RequestRefused, TransportClosed)
"""What a re-subscription may fail with: it is reported, and never fails the request that caused it."""


class RestartingClient(ClientInput):
    """The request loop, plus bringing a crashed stdio server back."""

    def __init__(self, name: str, version: str, *, era: ClientEra, versions: tuple[str, ...],
                 callbacks: ClientCallbacks | None, capabilities: dict[str, Any] | None, timeout: float,
                 probe_timeout: float, discover: bool, log_level: str | None, max_input_rounds: int,
                 restart_on_crash: bool, retry_after_crash: Collection[str], sim: Simulation | None) -> None:
        super().__init__(name, version, era=era, versions=versions, callbacks=callbacks, capabilities=capabilities,
                         timeout=timeout, probe_timeout=probe_timeout, discover=discover, log_level=log_level,
                         max_input_rounds=max_input_rounds, sim=sim)
        self.restart_on_crash = restart_on_crash
        """stdio only: when the server process dies, start a new one, re-open the session and
        re-subscribe (see :meth:`restart_server`)."""
        self.retry_after_crash = frozenset(retry_after_crash)
        """Names of tools the host trusts to be idempotent: a ``tools/call`` of one of them whose outcome a
        crash made unknown is sent again (and the trace says why). Any other call fails with
        :class:`OutcomeUnknown`."""
        self._restart_lock = anyio.Lock()
        self._reopening = False
        """True while :meth:`restart_server` opens the new session: its own requests do not restart."""
        self._resource_subscriptions: set[str] = set()
        """URIs of legacy ``resources/subscribe`` the client still wants (asked again after a restart)."""
        self.subscription_log: list[SubscriptionEvent] = []
        """Every subscription lost, restored or given up on, in order: the signals a subscriber acts on."""
        self._resubscribing = False
        """True while a renewed legacy session is asked for its subscriptions again (no nesting)."""

    async def connect(self, stream: MessageStream, task_group: TaskGroup) -> Self:
        """Connect, and ask a transport that can tell of lost streams (Streamable HTTP) to do so."""
        if hasattr(stream, "report_lost_streams"):
            stream.report_lost_streams = True
        return await super().connect(stream, task_group)

    def _server_process_died(self) -> bool:
        """True when this is a stdio link whose server process has exited and may be restarted."""
        if not self.restart_on_crash or self.closed_reason == "closed by the host":
            return False
        process = getattr(self._stream, "process", None)
        return hasattr(self._stream, "restart") and getattr(process, "returncode", None) is not None

    async def _request(self, method: str, params: Mapping[str, Any] | None, *, timeout: float | None,
                       on_progress: ProgressCallback | None, capabilities: Mapping[str, Any] | None,
                       ) -> tuple[dict[str, Any], bool]:
        """A process that died while the client was idle is restarted before the next request."""
        if not self._reopening and self._closed.is_set() and self._server_process_died():
            await self.restart_server(after_generation=self.restarts)
        return await super()._request(method, params, timeout=timeout, on_progress=on_progress,
                                      capabilities=capabilities)

    async def _recover_from_crash(self, lost: TransportClosed, method: str, params: Mapping[str, Any],
                                  crashes: int, generation: int) -> bool:
        """The link ended with this request in flight. If the server process died: restart it (once,
        however many requests were waiting), then say whether the request may be sent again — only if
        it never left the client, only reads, or is a tool the host trusts to be idempotent."""
        if self._reopening or not self._server_process_died() or crashes > MAX_RESTARTS_PER_REQUEST:
            return False
        sent_id = lost.request_id if isinstance(lost, ConnectionLost) else None
        unknown = sent_id is not None and method in OUTCOME_MAY_BE_UNKNOWN
        try:
            await self.restart_server(after_generation=generation)
        except ConnectionLost as failed:
            if sent_id is not None and unknown:
                raise OutcomeUnknown(self.server_name, method, sent_id, "exited and could not be restarted") from failed
            raise
        if sent_id is None or not unknown:
            return True
        tool = str(params.get("name"))
        why = f"exited (restart {self.restarts})"
        if tool not in self.retry_after_crash:
            self._note("app", f"{self.participant} does not retry {method} {tool!r} (id {sent_id}): the server "
                       f"process died before answering, so its outcome is unknown", marks=("outcome-unknown",),
                       request_id=sent_id, method=method)
            raise OutcomeUnknown(self.server_name, method, sent_id, why) from lost
        self._note("app", f"{self.participant} is retrying {method} {tool!r} (id {sent_id}) because the host "
                   f"trusts it to be idempotent (retry_after_crash)", marks=("retry",), request_id=sent_id,
                   method=method)
        return True

    async def restart_server(self, *, after_generation: int | None = None) -> None:
        """Start a fresh server process after the old one died, and pick up where the client was.

        Several requests may notice the crash at once; ``after_generation`` (the value of
        :attr:`restarts` when the request was sent) makes sure the server is restarted only once for
        them. If the new process dies too, or its session cannot be opened (a lost ``initialize``),
        another process is started, up to :data:`MAX_RESTARTS_PER_REQUEST` more times; then the client
        closes, saying why, and no request is ever sent to a process whose session is not open."""
        async with self._restart_lock:
            if after_generation is not None and self.restarts != after_generation:
                return  # another waiter already restarted it
            for attempt in range(MAX_RESTARTS_PER_REQUEST + 1):
                failure = await self._start_and_open()
                if failure is None:
                    break
                if attempt == MAX_RESTARTS_PER_REQUEST:
                    reason = f"restarting {self.server_name} failed {attempt + 1} times (last: {failure})"
                    await self._disconnect(reason)
                    self.closed_reason = reason
                    raise ConnectionLost(reason)
        await self._resubscribe()

    async def _start_and_open(self) -> str | None:
        """One attempt: a new process, its receive loop, the session opened. ``None`` when it worked,
        else what went wrong."""
        stream = self._stream
        restart = getattr(stream, "restart", None)
        if stream is None or restart is None or self._task_group is None:
            raise ConnectionLost(f"{self.server_name} is gone and this transport cannot restart it")
        if self._loop_scope is not None and self._loop_ended is not None:
            # The old receive loop must be gone before the new one reads the same stream.
            self._loop_scope.cancel()
            await self._loop_ended.wait()
        code = getattr(getattr(stream, "process", None), "returncode", None)
        why = f"the server process exited (code {code})" if code is not None else "its session could not be opened"
        self._note("transport", f"{self.participant} restarts {self.server_name}: {why}", marks=("restart",))
        await restart()
        self.restarts += 1
        self._closed = anyio.Event()
        self.closed_reason = None
        self.lifecycle = LegacyLifecycle("client")
        self.server_capabilities = None
        if self.era == "legacy":
            self.protocol_version = None
        started = anyio.Event()
        self._task_group.start_soon(self._run_receive_loop, started, name=f"{stream.info.client} receive loop")
        await started.wait()
        self._reopening = True
        try:
            await self._open()
        except (TransportClosed, RequestTimeout) as exc:
            return f"{type(exc).__name__}: {exc}"
        finally:
            self._reopening = False
        return None

    # ---------------------------------------------------------------------------------------------
    # subscriptions that never go silent
    # ---------------------------------------------------------------------------------------------
    def _log_subscription(self, kind: Literal["lost", "restored", "failed"], what: str, why: str) -> None:
        event = SubscriptionEvent(anyio.current_time(), kind, what, why)
        self.subscription_log.append(event)
        self._note("app", f"{self.participant}: subscription {what} {kind}: {why}",
                   marks=("subscription", f"subscription-{kind}"))

    async def _resubscribe(self, why: str = "the server process was restarted") -> None:
        """Ask the new server process (or session) for every subscription the client still wants."""
        await self._resubscribe_resources(why)
        wanted = [sub for sub in self._subscriptions.values() if not sub.ended_by_client]
        self._subscriptions.clear()
        now = anyio.current_time()
        for sub in wanted:
            self._log_subscription("lost", f"listen {sub.id}", why)
            # Each re-listen waits for its acknowledgement on its own: the request that restarted
            # the server carries on meanwhile.
            if self._loop_tasks is not None:
                self._loop_tasks.start_soon(self._listen_again, sub, why, now)
            else:
                await self._listen_again(sub, why, now)

    async def _resubscribe_resources(self, why: str) -> None:
        """Legacy: ``resources/subscribe`` again for every URI still wanted, then tell the Host what
        may have changed while there was no session (each resource, and each list the server said
        would announce changes)."""
        if self.era != "legacy" or self._resubscribing:
            return
        self._resubscribing = True
        try:
            restored: list[str] = []
            for uri in sorted(self._resource_subscriptions):
                self._log_subscription("lost", uri, why)
                failure = ""
                for _ in range(MAX_RESUBSCRIBE_ATTEMPTS):
                    try:
                        await self.request("resources/subscribe", {"uri": uri})
                        restored.append(uri)
                        self._log_subscription("restored", uri, "subscribed again")
                        break
                    except RESUBSCRIBE_FAILED as exc:
                        failure = f"{type(exc).__name__}: {exc}"
                else:
                    self._log_subscription("failed", uri, f"resources/subscribe failed "
                                           f"{MAX_RESUBSCRIBE_ATTEMPTS} times (last: {failure})")
            caps = self.server_capabilities or {}
            gap: list[tuple[str, dict[str, Any]]] = [(LIST_CHANGED_METHOD[kind], {}) for kind in LIST_CHANGED_FLAG
                   if has_capability(caps, f"{kind}.listChanged")]
            gap += [("notifications/resources/updated", {"uri": uri}) for uri in restored]
            self._close_gap(gap, why)
        finally:
            self._resubscribing = False

    async def _listen_again(self, sub: Subscription, why: str, lost_at: float) -> bool:
        """Modern: a new ``subscriptions/listen`` for ``sub`` (a new id), whose acknowledgement must come
        within the request timeout; tried :data:`MAX_RESUBSCRIBE_ATTEMPTS` times. Then close the gap,
        or mark the subscription lost and say why. ``True`` if it holds again."""
        try:
            return await self._listen_again_once_or_twice(sub, why, lost_at)
        except anyio.get_cancelled_exc_class():
            # Cut short (the server died again, the client closed): keep the subscription among the
            # wanted ones, so that the next restart asks for it again.
            if sub.lost is None and not sub.ended_by_client and sub not in self._subscriptions.values():
                self._subscriptions[sub.id] = sub
            raise

    async def _listen_again_once_or_twice(self, sub: Subscription, why: str, lost_at: float) -> bool:
        failure = ""
        for _ in range(MAX_RESUBSCRIBE_ATTEMPTS):
            rid = self._new_id()
            sub.id, sub.accepted, sub.closed, sub.acknowledged = rid, {}, False, anyio.Event()
            self._subscriptions[rid] = sub
            try:
                await self._send(JSONRPCRequest(rid, "subscriptions/listen",
                                                self._with_meta({"notifications": dict(sub.requested)},
                                                                sub.declared)))
                with anyio.move_on_after(self.timeout) as scope:
                    await sub.acknowledged.wait()
            except TransportClosed as exc:
                self._subscriptions.pop(rid, None)
                failure = f"{type(exc).__name__}: {exc}"
                break
            if not scope.cancelled_caught and not sub.closed:
                sub.gaps.append((lost_at, anyio.current_time()))
                self._log_subscription("restored", f"listen {rid}", f"listening again after: {why}")
                self._close_gap([(method, {**params, "_meta": {M.SUBSCRIPTION_ID: rid}})
                                 for method, params in gap_notifications(sub.accepted)], why)
                return True
            self._subscriptions.pop(rid, None)
            if scope.cancelled_caught:
                failure = f"subscriptions/listen (id {rid}) was not acknowledged within {self.timeout:g} s"
                await self._cancel(rid, failure)
            else:
                failure = f"{self.server_name} ended subscriptions/listen (id {rid}) before acknowledging it"
        sub.closed = True
        sub.lost = f"could not listen again after {why} ({failure})"
        self._log_subscription("failed", f"listen {sub.id}", sub.lost)
        return False

    def _close_gap(self, gap: list[tuple[str, dict[str, Any]]], why: str) -> None:
        """Tell the Host what may have changed while nobody listened, as the server would have: it reads
        again (``change.read-again-after-subscribing``)."""
        if not gap:
            return
        self._note("app", f"{self.participant} subscribed again after {why}; changes made in between may be "
                   f"missed, so it tells the host to read again: {', '.join(m for m, _ in gap)}",
                   marks=("subscription", "gap"))
        for method, params in gap:
            self._pass_on(method, params)

    def _on_stream_lost(self, lost: StreamLost) -> None:
        """The transport says a stream broke for good (HTTP). A dropped listen stream is listened to
        again; a legacy session found gone by the listening ``GET`` is renewed at once when the client
        holds resource subscriptions (nothing else would notice until the next request)."""
        tasks = self._loop_tasks
        if tasks is None or self._closed.is_set():
            return
        if lost.request_id is None:
            if self.era == "legacy" and self._resource_subscriptions:
                tasks.start_soon(self._renew_idle_session, self.sessions_opened, str(lost))
            return
        sub = self._subscriptions.pop(lost.request_id, None)
        if sub is None or sub.ended_by_client:
            return
        why = str(lost)
        if not sub.acknowledged.is_set():
            # Not acknowledged yet: whoever waits for the acknowledgement (listen, or a re-listen)
            # learns at once that this stream ended first, and decides what to do.
            sub.closed = True
            sub.acknowledged.set()
            return
        self._log_subscription("lost", f"listen {lost.request_id}", why)
        tasks.start_soon(self._listen_again, sub, why, anyio.current_time())

    async def _renew_idle_session(self, session: int, why: str) -> None:
        await self._session_open()
        if self.sessions_opened != session or self._closed.is_set():
            return  # a request has already opened a new session
        self._note("transport", f"{self.participant} re-initializes: the server ended the session while the "
                   f"client was only listening ({why})", marks=("session-expired",))
        try:
            await self._initialize()
        except RESUBSCRIBE_FAILED as exc:
            for uri in sorted(self._resource_subscriptions):
                self._log_subscription("failed", uri, f"the session could not be renewed: {exc}")

    async def _initialize(self) -> None:
        """Legacy ``initialize``; a *renewed* session (after a ``404``: not the first, not a restart's,
        which :meth:`restart_server` follows up itself) gets the client's subscriptions again."""
        renewal = self.sessions_opened > 0 and not self._reopening
        await super()._initialize()
        if renewal:
            await self._resubscribe_resources("the server ended the session (HTTP 404) and a new one was opened")
