"""Restarting a crashed stdio server and picking up where the client was (course chapter 06,
transports; spec 2026-07-28 ``basic/transports``, stdio).

On stdio the client *launches* the server as a subprocess, so when that process exits unexpectedly
the client is the one that can bring it back. The stdio transport page says what it SHOULD do then:
restart it; requests that were in flight are lost (they are sent again, with new ids); subscriptions
are re-established, because the new process knows nothing of the old one. The session is opened
again from scratch — a legacy ``initialize`` or a modern discovery — since a new process is a new
server.
"""

from __future__ import annotations

from typing import Any, Final

import anyio

from mcp_sim.protocol.lifecycle import LegacyLifecycle
from mcp_sim.roles.client.callbacks import ClientCallbacks
from mcp_sim.roles.client.client_input import ClientInput
from mcp_sim.roles.client.errors import ConnectionLost
from mcp_sim.roles.client.opening import ClientEra
from mcp_sim.sim.world import Simulation
from mcp_sim.wire.jsonrpc import JSONRPCRequest

MAX_RESTARTS_PER_REQUEST: Final = 2
"""A request that keeps crashing its server is not retried forever."""


class RestartingClient(ClientInput):
    """The request loop, plus bringing a crashed stdio server back."""

    def __init__(self, name: str, version: str, *, era: ClientEra, versions: tuple[str, ...],
                 callbacks: ClientCallbacks | None, capabilities: dict[str, Any] | None, timeout: float,
                 probe_timeout: float, discover: bool, log_level: str | None, max_input_rounds: int,
                 restart_on_crash: bool, sim: Simulation | None) -> None:
        super().__init__(name, version, era=era, versions=versions, callbacks=callbacks, capabilities=capabilities,
                         timeout=timeout, probe_timeout=probe_timeout, discover=discover, log_level=log_level,
                         max_input_rounds=max_input_rounds, sim=sim)
        self.restart_on_crash = restart_on_crash
        """stdio only: when the server process dies, start a new one, re-open the session, re-subscribe
        and retry the requests that were lost (see :meth:`restart_server`)."""
        self._restart_lock = anyio.Lock()
        self._resource_subscriptions: set[str] = set()
        """URIs of legacy ``resources/subscribe`` the client still wants (asked again after a restart)."""

    def _server_process_died(self) -> bool:
        """True when this is a stdio link whose server process has exited and may be restarted."""
        if not self.restart_on_crash or self.closed_reason == "closed by the host":
            return False
        process = getattr(self._stream, "process", None)
        return hasattr(self._stream, "restart") and getattr(process, "returncode", None) is not None

    async def _recover_from_crash(self, crashes: int, generation: int) -> bool:
        """The request was lost with a server process that exited: start a new process (once, however
        many requests were waiting) and let the request be sent again — at most
        :data:`MAX_RESTARTS_PER_REQUEST` times."""
        if not self._server_process_died() or crashes > MAX_RESTARTS_PER_REQUEST:
            return False
        await self.restart_server(after_generation=generation)
        return True

    async def restart_server(self, *, after_generation: int | None = None) -> None:
        """Start a fresh server process after the old one died, and pick up where the client was.

        Several requests may notice the crash at once; ``after_generation`` (the value of
        :attr:`restarts` when the request was sent) makes sure the server is restarted only once for them."""
        async with self._restart_lock:
            if after_generation is not None and self.restarts != after_generation:
                return  # another waiter already restarted it
            stream = self._stream
            restart = getattr(stream, "restart", None)
            if stream is None or restart is None or self._task_group is None:
                raise ConnectionLost(f"{self.server_name} is gone and this transport cannot restart it")
            old = getattr(stream, "process", None)
            self._note("transport", f"{self.participant} restarts {self.server_name}: the server process exited "
                       f"(code {getattr(old, 'returncode', '?')})", marks=("restart",))
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
            await self._open()
        await self._resubscribe()

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
