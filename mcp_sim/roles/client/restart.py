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
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, Final

import anyio

from mcp_sim.protocol.lifecycle import LegacyLifecycle
from mcp_sim.roles.client.callbacks import ClientCallbacks
from mcp_sim.roles.client.client_input import ClientInput
from mcp_sim.roles.client.connection import ProgressCallback
from mcp_sim.roles.client.errors import OUTCOME_MAY_BE_UNKNOWN, ConnectionLost, OutcomeUnknown, RequestTimeout
from mcp_sim.roles.client.opening import ClientEra
from mcp_sim.sim.world import Simulation
from mcp_sim.transports.base import TransportClosed
from mcp_sim.wire.jsonrpc import JSONRPCRequest

MAX_RESTARTS_PER_REQUEST: Final = 2
"""A request that keeps crashing its server is not retried forever; nor is a re-open that keeps failing."""



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

    async def _resubscribe(self) -> None:
        """Ask the new server process for every subscription the client still wants."""
        for uri in sorted(self._resource_subscriptions):
            await self.request("resources/subscribe", {"uri": uri})
        wanted = [sub for sub in self._subscriptions.values() if not sub.ended_by_client]
        self._subscriptions.clear()
        for sub in wanted:
            rid = self._new_id()
            sub.id, sub.accepted, sub.closed, sub.acknowledged = rid, {}, False, anyio.Event()
            self._subscriptions[rid] = sub
            await self._send(JSONRPCRequest(rid, "subscriptions/listen",
                                            self._with_meta({"notifications": dict(sub.requested)})))
            with anyio.move_on_after(self.timeout):
                await sub.acknowledged.wait()
