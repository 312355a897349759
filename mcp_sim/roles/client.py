"""The MCP Client: one connection to exactly one server (course chapters 01 roles, 03 lifecycle, 04 MRTR).

The Host creates one :class:`Client` per Server. The client does what the course calls *protocol
work* and nothing else: it opens the connection (the legacy ``initialize`` handshake, or the modern
per-request ``_meta`` plus an optional ``server/discover``), matches responses to requests by ``id``
while many are in flight, refuses to call what the server did not advertise, times requests out on
the virtual clock and cancels them, caches lists, and carries the server's requests for input to its
Host. Every *decision* — may the model see this tool, may this call run, what does the user answer —
belongs to the Host, which the client reaches through :class:`ClientCallbacks`.

The two eras, side by side:

* **legacy** (≤ 2025-11-25): ``initialize`` → result → ``notifications/initialized``; capabilities are
  negotiated once; while a ``tools/call`` is pending the server may *send requests* to the client
  (``sampling/createMessage``, ``elicitation/create``, ``roots/list``).
* **modern** (2026-07-28): no handshake. Every request carries the version and the client's
  capabilities in ``params._meta``; a server that needs input answers ``InputRequiredResult`` and
  the client retries the request with a new ``id`` plus ``inputResponses`` and the echoed
  ``requestState`` (Multi Round-Trip Requests, MRTR).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import anyio
from anyio.abc import TaskGroup

from mcp_sim.protocol import meta as M
from mcp_sim.protocol.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    UNSUPPORTED_PROTOCOL_VERSION,
    McpError,
)
from mcp_sim.protocol.lifecycle import (
    LegacyLifecycle,
    LegacyState,
    client_accepts,
    era_from_discover_reply,
    has_capability,
)
from mcp_sim.protocol.revisions import (
    LATEST,
    REVISIONS,
    SIMULATED_VERSIONS,
    TASKS_EXTENSION_METHODS,
    Era,
    era_of_version,
)
from mcp_sim.roles.cache import AuthorizationContext, ListCache
from mcp_sim.sim.world import Simulation, maybe_current_simulation
from mcp_sim.transports.base import AuthInfo, MessageStream, SessionExpired, TransportClosed, deliver_directly
from mcp_sim.wire.jsonrpc import (
    InvalidMessage,
    JSONRPCErrorResponse,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResultResponse,
    RequestId,
    error_object,
)

log = logging.getLogger(__name__)

ClientEra = Literal["legacy", "modern", "auto"]

DEFAULT_TIMEOUT: Final = 30.0
"""Seconds (virtual) a request may take. The spec: implementations SHOULD set a timeout on every
request and, when it fires, cancel the request."""

PROBE_TIMEOUT: Final = 5.0
"""How long ``era="auto"`` waits for a ``server/discover`` answer before assuming a legacy server."""

MAX_INPUT_ROUNDS: Final = 8
"""How many times a client fulfils ``InputRequiredResult`` for one request before giving up: the
spec lets a server ask again, but a client must not loop forever."""

ProgressCallback = Callable[[float, float | None, str | None], None]
"""Called with ``(progress, total, message)`` for each ``notifications/progress`` of one request. It
runs as the notification arrives (in the receive loop, or with direct delivery inside the server's
``send``), so it must be quick and must not await (hand work to a task if needed)."""


# --------------------------------------------------------------------------------------------------
# What the client needs from its Host
# --------------------------------------------------------------------------------------------------

ElicitationHandler = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]
"""``(server, ElicitRequest params) -> ElicitResult``: ask the user."""
SamplingHandler = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]
"""``(server, CreateMessageRequest params) -> CreateMessageResult``: ask the Host's model."""
RootsHandler = Callable[[str], Awaitable[list[dict[str, Any]]]]
"""``(server) -> [Root, …]``: which folders/URIs are in scope."""
NotificationHandler = Callable[[str, str, dict[str, Any]], None]
"""``(server, method, params)``: a log message or a change notification, for the Host to show."""


@dataclass
class ClientCallbacks:
    """The Host side of a client. A client declares a client capability only if the Host gave it a
    handler for it: the capability object is a promise the client must be able to keep."""

    elicitation: ElicitationHandler | None = None
    elicitation_url: bool = True
    """Also offer URL-mode elicitation (2025-11-25+) when ``elicitation`` is set."""
    sampling: SamplingHandler | None = None
    roots: RootsHandler | None = None
    on_notification: NotificationHandler | None = None


def capabilities_for(callbacks: ClientCallbacks, version: str) -> dict[str, Any]:
    """The ``ClientCapabilities`` object a client with these callbacks declares in ``version``.

    Only fields the revision defines are included (e.g. ``elicitation`` exists from 2025-06-18,
    ``roots.listChanged`` disappears in 2026-07-28)."""
    rev = REVISIONS.get(version)
    known = set(rev.client_capabilities) if rev is not None else set(REVISIONS[LATEST].client_capabilities)
    caps: dict[str, Any] = {}
    if callbacks.roots is not None and "roots" in known:
        caps["roots"] = {"listChanged": True} if "roots.listChanged" in known else {}
    if callbacks.sampling is not None and "sampling" in known:
        caps["sampling"] = {}
    if callbacks.elicitation is not None and "elicitation" in known:
        if "elicitation.form" in known:
            modes: dict[str, Any] = {"form": {}}
            if callbacks.elicitation_url and "elicitation.url" in known:
                modes["url"] = {}
            caps["elicitation"] = modes
        else:
            caps["elicitation"] = {}
    return caps


# --------------------------------------------------------------------------------------------------
# Errors a learner may meet
# --------------------------------------------------------------------------------------------------

class ClientAlreadyConnected(RuntimeError):
    """A second ``connect`` on the same Client: MCP pairs one client with exactly one server."""


class RequestTimeout(TimeoutError):
    """A request got no response in time. The client has already sent ``notifications/cancelled``
    (where the revision allows it) and will ignore a late response."""

    def __init__(self, server: str, method: str, request_id: RequestId, seconds: float) -> None:
        super().__init__(f"{method} (id {request_id}) to {server} got no response within {seconds:g} s; "
                         f"the client cancelled it and will ignore a late response")
        self.server = server
        self.method = method
        self.request_id = request_id
        self.seconds = seconds


MAX_RESTARTS_PER_REQUEST: Final = 2
"""A request that keeps crashing its server is not retried forever."""


class ConnectionLost(TransportClosed):
    """The link to the server ended while a request waited for its response."""


def _era_of_version(version: str) -> Era:
    """The era of ``version``; an unknown version newer than the latest counts as modern (a client
    from the future), an unknown older one as legacy."""
    rev = REVISIONS.get(version)
    if rev is not None:
        return rev.era
    return era_of_version(version, unknown_modern_after=LATEST)


# --------------------------------------------------------------------------------------------------
# Bookkeeping for requests in flight and listen subscriptions
# --------------------------------------------------------------------------------------------------

class _Pending:
    """One request in flight: the arriving response is put here and wakes the one waiter.

    The waiter waits on a plain asyncio future (the simulation runs on asyncio): it is the cheapest
    thing to wake, and a request's wait is the hottest path of the client. ``finish()`` wakes it with
    whatever is known by then — a response, a timeout, or nothing (the connection ended)."""

    __slots__ = ("done", "method", "on_progress", "progress_token", "response", "timed_out")

    def __init__(self, method: str, on_progress: ProgressCallback | None = None) -> None:
        self.method = method
        self.on_progress = on_progress
        self.progress_token: str | int | None = None
        self.done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.response: JSONRPCResultResponse | JSONRPCErrorResponse | None = None
        self.timed_out = False

    def finish(self) -> None:
        if not self.done.done():
            self.done.set_result(None)

    def time_out(self) -> None:
        """The request's deadline passed on the virtual clock (a timer calls this)."""
        if self.response is None:
            self.timed_out = True
        self.finish()


@dataclass
class Subscription:
    """A modern ``subscriptions/listen`` stream (or a legacy ``resources/subscribe``).

    ``accepted`` is the filter the server *acknowledged*, which may be smaller than what was asked:
    the spec tells clients to check it rather than assume the subscription succeeded."""

    id: RequestId
    requested: dict[str, Any]
    accepted: dict[str, Any] = field(default_factory=dict)
    received: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    closed: bool = False
    acknowledged: anyio.Event = field(default_factory=anyio.Event)
    ended_by_client: bool = False
    """True once the client itself closed it (a crash of the server does not end what the client wants)."""
    _client: Client | None = field(default=None, repr=False)

    async def close(self) -> None:
        """End the subscription: ``notifications/cancelled`` for the listen request (stdio; on HTTP
        the transport turns that into closing the stream)."""
        self.ended_by_client = True
        if self.closed or self._client is None:
            return
        self.closed = True
        await self._client._cancel(self.id, "subscription closed by the client")


# --------------------------------------------------------------------------------------------------
# The client
# --------------------------------------------------------------------------------------------------

class Client:
    """One MCP client, bound to one server for its whole life.

    ``era`` says how to open the connection: ``"legacy"`` (``initialize``), ``"modern"``
    (per-request ``_meta``; ``discover=True`` also calls ``server/discover`` first) or ``"auto"``
    (probe with ``server/discover``; a DiscoverResult or a modern error means modern, anything else
    or a timeout means legacy). ``versions`` are the revisions this client speaks, newest preferred.
    """

    def __init__(self, name: str = "mcp-sim-client", version: str = "0.1.0", *,
                 era: ClientEra = "auto",
                 versions: tuple[str, ...] = SIMULATED_VERSIONS,
                 callbacks: ClientCallbacks | None = None,
                 capabilities: dict[str, Any] | None = None,
                 timeout: float = DEFAULT_TIMEOUT,
                 probe_timeout: float = PROBE_TIMEOUT,
                 discover: bool = True,
                 cache: ListCache | None = None,
                 auth: AuthInfo | None = None,
                 log_level: str | None = None,
                 max_input_rounds: int = MAX_INPUT_ROUNDS,
                 restart_on_crash: bool = True,
                 sim: Simulation | None = None) -> None:
        if not versions:
            raise ValueError("a client must speak at least one protocol version")
        self.client_info = {"name": name, "version": version}
        self.era_setting: ClientEra = era
        self.versions = tuple(sorted(set(versions), reverse=True))
        self.callbacks = callbacks or ClientCallbacks()
        self._explicit_capabilities = capabilities
        self._declared_by: dict[tuple[Any, ...], dict[str, Any]] = {}
        self._deadlines: list[tuple[float, int, _Pending]] = []
        """(deadline, order, waiter) of requests with a timeout, a heap (see :meth:`_watch`)."""
        self._deadline_order = itertools.count()
        self._deadline_timer: asyncio.TimerHandle | None = None
        self._deadline_at = 0.0
        self._meta_from: tuple[Any, ...] | None = None
        self._meta: dict[str, Any] = {}
        """The last per-request ``_meta`` built by :meth:`_with_meta`, and what it was built from."""
        self._may_send: tuple[str | None, dict[str, Any] | None, set[str]] = (None, None, set())
        """(revision, server capabilities, methods :meth:`check_can_send` allowed with exactly those)."""
        self.timeout = timeout
        self.probe_timeout = probe_timeout
        self.discover_on_connect = discover
        self.auth = auth
        self.log_level = log_level
        self.max_input_rounds = max_input_rounds
        self.restart_on_crash = restart_on_crash
        """stdio only: when the server process dies, start a new one, re-open the session, re-subscribe
        and retry the requests that were lost (see :meth:`restart_server`)."""
        self.restarts = 0
        """How many times the server process was restarted."""
        self._task_group: TaskGroup | None = None
        self._restart_lock = anyio.Lock()
        self._sim = sim
        self.cache = cache

        # What we learnt about the server.
        self.era: Era | None = None
        self.protocol_version: str | None = None
        self.server_capabilities: dict[str, Any] | None = None
        """From InitializeResult (legacy) or DiscoverResult (modern); ``None`` = not known."""
        self.server_info: dict[str, Any] | None = None
        self.instructions: str | None = None
        self.supported_versions: tuple[str, ...] = ()
        self.lifecycle = LegacyLifecycle("client")

        self._stream: MessageStream | None = None
        self._next_id = 0
        self._next_token = 0
        self._pending: dict[RequestId, _Pending] = {}
        self._abandoned: dict[RequestId, str] = {}
        """Requests we timed out or cancelled: their responses are late and ignored."""
        self._subscriptions: dict[RequestId, Subscription] = {}
        self._resource_subscriptions: set[str] = set()
        self._loop_scope: anyio.CancelScope | None = None
        self._loop_tasks: TaskGroup | None = None
        """The receive loop's task group while it runs (server requests get their tasks there)."""
        self._closed = anyio.Event()
        self.closed_reason: str | None = None
        self.ignored: list[tuple[str, RequestId | None]] = []
        """(why, id) of every response the client ignored: ``late``, ``duplicate`` or ``unknown``."""

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

    @property
    def authorization_context(self) -> AuthorizationContext:
        return AuthorizationContext.of(self.auth)

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

    def capabilities(self, version: str | None = None) -> dict[str, Any]:
        """The client capabilities declared in ``version`` (default: the negotiated one)."""
        if self._explicit_capabilities is not None:
            return self._explicit_capabilities
        return capabilities_for(self.callbacks, version or self.protocol_version or self.versions[0])

    def _declared(self, version: str) -> dict[str, Any]:
        """:meth:`capabilities` for ``version``, kept: every modern request carries it in ``_meta``,
        and it changes only with the version or the callbacks the Host gave. Read it, never change it."""
        if self._explicit_capabilities is not None:
            return self._explicit_capabilities
        cb = self.callbacks
        key = (version, cb.roots is not None, cb.sampling is not None, cb.elicitation is not None, cb.elicitation_url)
        caps = self._declared_by.get(key)
        if caps is None:
            caps = self._declared_by[key] = capabilities_for(cb, version)
        return caps

    # ---------------------------------------------------------------------------------------------
    # connecting
    # ---------------------------------------------------------------------------------------------
    async def connect(self, stream: MessageStream, task_group: TaskGroup) -> Client:
        """Bind this client to ``stream`` and open the connection; the receive loop runs as its own
        task in ``task_group``. A client connects once, to one server: for a second server the Host
        creates a second client."""
        if self._stream is not None:
            raise ClientAlreadyConnected(
                f"this Client is already connected to {self._stream.info.name!r}. MCP pairs each client with "
                f"exactly one server (the 1:1 rule): the Host creates one Client per Server, so connect "
                f"{stream.info.name!r} with a new Client.")
        self._stream = stream
        self._task_group = task_group
        if self._sim is None:
            self._sim = maybe_current_simulation()
        started = anyio.Event()
        task_group.start_soon(self._run_receive_loop, started, name=f"{stream.info.client} receive loop")
        await started.wait()
        await self._open()
        return self

    @asynccontextmanager
    async def connected_to(self, stream: MessageStream) -> AsyncIterator[Client]:
        """``async with client.connected_to(stream):`` — connect, use, close, all in one scope."""
        async with anyio.create_task_group() as tg:
            await self.connect(stream, tg)
            try:
                yield self
            finally:
                await self.close()

    async def _open(self) -> None:
        era = self.era_setting
        if era == "auto":
            era = await self._probe()
        if era == "legacy":
            await self._initialize()
        else:
            self.era = "modern"
            if self.protocol_version is None:
                self._set_version(self._newest("modern"))
            if self.discover_on_connect and self.server_capabilities is None:
                try:
                    await self.discover()
                except McpError as exc:
                    if era_from_discover_reply({"error": {"code": exc.code}}) == "modern":
                        raise
                    raise McpError(exc.code, f"{self.server_name} answered server/discover with {exc.message!r}: it "
                                   f"looks like a legacy server; connect with era='auto' or era='legacy'",
                                   exc.data, rule="Modern servers MUST implement server/discover.",
                                   revision=self.protocol_version) from exc

    def _newest(self, era: Era) -> str:
        for v in self.versions:
            if _era_of_version(v) == era:
                return v
        raise McpError(INVALID_REQUEST, f"this client speaks no {era} protocol version (it speaks "
                       f"{', '.join(self.versions)})")

    def _set_version(self, version: str) -> None:
        self.protocol_version = version
        if self._stream is not None:
            self._stream.revision = version

    async def _probe(self) -> Era:
        """Era detection (spec ``basic/versioning``): send ``server/discover``; a DiscoverResult or a
        recognised modern error means modern; any other error or a timeout means legacy."""
        if not any(_era_of_version(v) == "modern" for v in self.versions):
            return "legacy"
        if not any(_era_of_version(v) == "legacy" for v in self.versions):
            return "modern"
        self._set_version(self._newest("modern"))
        try:
            response = await self._exchange("server/discover", self._with_meta({}), timeout=self.probe_timeout,
                                            cancel_on_timeout=False)
        except RequestTimeout:
            self.protocol_version = None
            return "legacy"
        reply = response.to_dict()
        era = era_from_discover_reply(reply)
        if era == "legacy":
            self.protocol_version = None
            return "legacy"
        self.era = "modern"
        if isinstance(response, JSONRPCResultResponse):
            self._learn_discover(response.result)
        elif response.error.code == UNSUPPORTED_PROTOCOL_VERSION:
            era = self._renegotiate(McpError.from_error_object(response.error))
        return era

    async def _initialize(self) -> None:
        """The legacy handshake: ``initialize`` with the newest legacy version this client speaks,
        its capabilities and ``clientInfo``; accept the server's version only if we speak it (else
        disconnect, as the spec says); then ``notifications/initialized``."""
        self.era = "legacy"
        self.lifecycle = LegacyLifecycle("client")
        offered = self._newest("legacy")
        self._set_version(offered)
        params = {"protocolVersion": offered, "capabilities": self.capabilities(offered),
                  "clientInfo": self.client_info}
        self.lifecycle.check_send("initialize")
        self.lifecycle.on_event("initialize")
        try:
            response = await self._exchange("initialize", params, timeout=self.timeout)
        except RequestTimeout:
            self.lifecycle.on_event("close")
            raise
        if isinstance(response, JSONRPCErrorResponse):
            self.lifecycle.on_event("initialize error")
            await self._disconnect(f"initialize failed: {response.error.message}")
            raise McpError.from_error_object(response.error, revision=offered)
        result = response.result
        self.lifecycle.on_event("initialize result")
        answered = result.get("protocolVersion")
        if not isinstance(answered, str) or not client_accepts(answered, self.versions):
            self.lifecycle.on_event("version rejected")
            reason = (f"the server answered initialize with protocol version {answered!r}, which this client "
                      f"does not speak ({', '.join(self.versions)}); the client disconnects")
            await self._disconnect(reason)
            raise McpError(INVALID_REQUEST, reason,
                           {"requested": offered, "answered": answered, "supported": list(self.versions)},
                           rule="If the client does not support the version in the server's response, it "
                                "SHOULD disconnect.", revision=offered)
        self._set_version(answered)
        self.server_capabilities = dict(result.get("capabilities") or {})
        self.server_info = result.get("serverInfo")
        self.instructions = result.get("instructions")
        self.supported_versions = (answered,)
        self.lifecycle.check_send("notifications/initialized")
        await self._send(JSONRPCNotification("notifications/initialized"))
        self.lifecycle.on_event("notifications/initialized")

    async def discover(self) -> dict[str, Any]:
        """``server/discover`` (modern): the versions and capabilities the server supports. After it,
        the client checks each request against the declared capabilities before sending it."""
        result = await self.request("server/discover", {})
        self._learn_discover(result)
        return result

    def _learn_discover(self, result: Mapping[str, Any]) -> None:
        self.server_capabilities = dict(result.get("capabilities") or {})
        self.supported_versions = tuple(result.get("supportedVersions") or ())
        meta = result.get("_meta") or {}
        self.server_info = meta.get(M.SERVER_INFO) if isinstance(meta, Mapping) else None
        self.instructions = result.get("instructions")
        mutual = [v for v in self.versions if v in self.supported_versions]
        if mutual and self.protocol_version not in self.supported_versions:
            self._set_version(mutual[0])

    def _renegotiate(self, error: McpError) -> Era:
        """After ``-32022``: pick the newest version both sides speak (from ``error.data.supported``).
        Returns the era of that version — it may be legacy, and then the caller runs ``initialize``."""
        data = error.data if isinstance(error.data, Mapping) else {}
        supported = [v for v in data.get("supported") or () if isinstance(v, str)]
        mutual = [v for v in self.versions if v in supported]
        if not mutual:
            raise McpError(UNSUPPORTED_PROTOCOL_VERSION,
                           f"no protocol version in common: the server supports {', '.join(supported) or 'none'}, "
                           f"this client speaks {', '.join(self.versions)}", data,
                           rule="On -32022 the client retries with a mutually supported version, if there is one.",
                           revision=self.protocol_version)
        chosen = mutual[0]
        self._note("transport", f"{self.participant} switches from {self.protocol_version} to {chosen} after -32022",
                   marks=("renegotiate",))
        self._set_version(chosen)
        self.supported_versions = tuple(supported)
        return _era_of_version(chosen)

    # ---------------------------------------------------------------------------------------------
    # restarting a crashed stdio server
    # ---------------------------------------------------------------------------------------------
    def _server_process_died(self) -> bool:
        """True when this is a stdio link whose server process has exited and may be restarted."""
        if not self.restart_on_crash or self.closed_reason == "closed by the host":
            return False
        process = getattr(self._stream, "process", None)
        return hasattr(self._stream, "restart") and getattr(process, "returncode", None) is not None

    async def restart_server(self, *, after_generation: int | None = None) -> None:
        """Start a fresh server process after the old one died, and pick up where the client was.

        The stdio transport page of 2026-07-28 says what a client SHOULD do when its server exits
        unexpectedly: restart it; requests that were in flight are lost (their callers send them
        again, with new ids); subscriptions are re-established, because the new process knows nothing
        of the old one. The session is opened again from scratch — a legacy ``initialize`` or a
        modern discovery — since a new process is a new server. Several requests may notice the
        crash at once; ``after_generation`` makes sure the server is restarted only once for them."""
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
        self._closed.set()
        for pending in self._pending.values():
            pending.finish()
        if self._deadline_timer is not None:
            self._deadline_timer.cancel()
            self._deadline_timer = None
        self._deadlines.clear()
        for sub in self._subscriptions.values():
            sub.closed = True
            sub.acknowledged.set()

    # ---------------------------------------------------------------------------------------------
    # sending and receiving
    # ---------------------------------------------------------------------------------------------
    async def _send(self, message: JSONRPCMessage) -> None:
        if self._stream is None:
            raise McpError(INVALID_REQUEST, "this client is not connected: call connect(stream, task_group) first")
        if self._closed.is_set():
            raise ConnectionLost(f"the connection to {self.server_name} is closed ({self.closed_reason})")
        await self._stream.send(message)

    def _new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    async def _exchange(self, method: str, params: dict[str, Any] | None, *, timeout: float | None,
                        on_progress: ProgressCallback | None = None, cancel_on_timeout: bool = True,
                        ) -> JSONRPCResultResponse | JSONRPCErrorResponse:
        """Send one request and wait for the response with the same id. Many exchanges run at once;
        the receive loop hands each response to its waiter. On timeout, cancel and forget."""
        rid = self._new_id()
        pending = _Pending(method, on_progress)
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
            else:
                await stream.send(JSONRPCRequest(rid, method, params))
            if timeout is not None and timeout != float("inf"):
                self._watch(pending, timeout)
            await pending.done
            if pending.timed_out:
                await self._on_timeout(rid, method, timeout or 0.0, cancel=cancel_on_timeout)
                raise RequestTimeout(self.server_name, method, rid, timeout or 0.0)
        finally:
            self._pending.pop(rid, None)
        if pending.response is None:
            raise ConnectionLost(f"the connection to {self.server_name} ended before {method} (id {rid}) was "
                                 f"answered ({self.closed_reason or 'transport closed'})")
        return pending.response

    def _watch(self, pending: _Pending, timeout: float) -> None:
        """Wake ``pending`` with a timeout if it is still waiting ``timeout`` seconds from now.

        This is what ``anyio.move_on_after`` would do, on the virtual clock, without a cancel scope
        and without a timer per request: the client keeps its deadlines in a heap and one timer for the
        earliest. Answered requests are forgotten lazily, when they reach the top of the heap."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        heap = self._deadlines
        while heap and heap[0][2].done.done():
            heapq.heappop(heap)
        heapq.heappush(heap, (deadline, next(self._deadline_order), pending))
        if self._deadline_timer is None or deadline < self._deadline_at:
            if self._deadline_timer is not None:
                self._deadline_timer.cancel()
            self._deadline_at = deadline
            self._deadline_timer = loop.call_at(deadline, self._deadlines_due)

    def _deadlines_due(self) -> None:
        """The timer of the earliest deadline fired: time out every request due by now, then set the
        timer for the next deadline of a request still waiting."""
        due, heap = self._deadline_at, self._deadlines
        self._deadline_timer = None
        while heap and (heap[0][0] <= due or heap[0][2].done.done()):
            pending = heapq.heappop(heap)[2]
            if not pending.done.done():
                pending.time_out()
        if heap:
            self._deadline_at = heap[0][0]
            self._deadline_timer = asyncio.get_running_loop().call_at(self._deadline_at, self._deadlines_due)

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

    async def _run_receive_loop(self, started: anyio.Event) -> None:
        """The one reader of the stream: responses go to their waiters, the server's requests and
        notifications to handlers. Server requests run in their own tasks, so a slow user answering
        an elicitation does not hold up other responses.

        When the transport offers direct delivery (the memory pipe does), messages reach
        :meth:`_take` the moment the server sends them and this loop only waits for the end of the
        stream; otherwise it reads every message itself. Both paths dispatch the same way."""
        with anyio.CancelScope() as scope:
            self._loop_scope = scope
            stream = self._stream
            assert stream is not None
            try:
                async with anyio.create_task_group() as tg:
                    self._loop_tasks = tg
                    deliver_directly(stream, self._take)
                    started.set()
                    while True:
                        try:
                            message = await stream.receive()
                        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError,
                                TransportClosed) as exc:
                            self.closed_reason = self.closed_reason or f"the server closed the link ({type(exc).__name__})"
                            break
                        self._dispatch(message, tg)
            except Exception as exc:  # one broken client must not take the Host down
                self._receive_failed(exc)
            finally:
                self._loop_tasks = None
                deliver_directly(stream, None)
                self.lifecycle.on_event("close")
                self._finish_all()

    def _take(self, message: JSONRPCMessage | InvalidMessage) -> bool:
        """Direct delivery from the transport: dispatch ``message`` now (dispatching never waits)."""
        tg = self._loop_tasks
        if tg is None:
            return False  # the receive loop has ended: leave it queued, nobody reads it
        try:
            self._dispatch(message, tg)
        except Exception as exc:  # contained exactly as in the receive loop: this client closes
            self._loop_tasks = None
            self._receive_failed(exc)
            if self._loop_scope is not None:
                self._loop_scope.cancel()
        return True

    def _receive_failed(self, exc: Exception) -> None:
        self.closed_reason = f"client receive loop failed: {exc!r}"
        log.warning("%s: %s", self.participant, self.closed_reason)

    def _dispatch(self, message: JSONRPCMessage | InvalidMessage, tg: TaskGroup) -> None:
        if isinstance(message, (JSONRPCResultResponse, JSONRPCErrorResponse)):
            self._on_response(message)
        elif isinstance(message, JSONRPCNotification):
            self._on_notification(message)
        elif isinstance(message, JSONRPCRequest):
            tg.start_soon(self._on_server_request, message)
        else:
            self._note("transport", f"{self.participant} could not read a frame: {message.reason}", marks=("invalid",))
            if message.is_answerable and self.era == "legacy":
                tg.start_soon(self._send_quietly, message.reply)

    async def _send_quietly(self, message: JSONRPCMessage) -> None:
        try:
            await self._send(message)
        except TransportClosed:
            pass

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
        else:
            why, text = "unknown", f"ignores a response to request {rid}, which it never sent"
        self.ignored.append((why, rid))
        self._note("transport", f"{self.participant} {text}", marks=(why, "ignored"), request_id=rid)

    # ---------------------------------------------------------------------------------------------
    # notifications from the server
    # ---------------------------------------------------------------------------------------------
    def _on_notification(self, note: JSONRPCNotification) -> None:
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
        if self.cache is not None:
            self.cache.on_notification(self.server_name, method, params)
        if self.callbacks.on_notification is not None:
            try:
                self.callbacks.on_notification(self.server_name, method, params)
            except Exception as exc:  # a broken handler must not stop the client from reading
                self._note("transport", f"{self.participant}: the notification handler failed on {method}: "
                           f"{type(exc).__name__}: {exc}", marks=("handler-error",))
                log.warning("%s: notification handler failed on %s: %r", self.participant, method, exc)

    # ---------------------------------------------------------------------------------------------
    # requests from the server (legacy only)
    # ---------------------------------------------------------------------------------------------
    async def _on_server_request(self, request: JSONRPCRequest) -> None:
        if self.era == "modern":
            # 2026-07-28: servers never send requests and the client MUST NOT write responses; a
            # server needing input returns InputRequiredResult instead.
            self._note("transport", f"{self.participant} ignores a {request.method} request: in 2026-07-28 servers "
                       "do not send requests (they return InputRequiredResult)", marks=("ignored",),
                       request_id=request.id, method=request.method)
            return
        try:
            result = await self._answer_server_request(request.method, dict(request.params or {}))
            reply: JSONRPCMessage = JSONRPCResultResponse(request.id, result)
        except McpError as exc:
            reply = JSONRPCErrorResponse(request.id, exc.to_error_object())
        except Exception as exc:
            log.exception("%s handling %s", self.participant, request.method)
            reply = JSONRPCErrorResponse(request.id, error_object(INTERNAL_ERROR, f"client error: {exc}"))
        await self._send_quietly(reply)

    async def _answer_server_request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Answer ``ping``, ``sampling/createMessage``, ``elicitation/create`` and ``roots/list`` —
        but only for the capabilities this client declared at ``initialize``."""
        if method == "ping":
            return {}
        if not self.lifecycle.may_send(method, "server"):
            raise McpError(INVALID_REQUEST, f"{method} arrived while the connection is {self.lifecycle.state.value}",
                           rule="The server SHOULD NOT send requests other than pings before initialization is done.")
        return await self.fulfil_input(method, params, self.capabilities())

    async def fulfil_input(self, method: str, params: dict[str, Any], declared: Mapping[str, Any]) -> dict[str, Any]:
        """Fulfil one request for input — a legacy server request or a modern ``inputRequests`` entry —
        through the Host. ``declared`` is what the client declared (at initialize, or on *this* request
        in the modern era): a kind it did not declare is refused, never answered."""
        server = self.server_name
        cb = self.callbacks
        rev = self.protocol_version
        if method == "elicitation/create":
            if cb.elicitation is None or not has_capability(declared, "elicitation"):
                raise method_not_declared(method, "elicitation", rev)
            mode = params.get("mode", "form")
            if mode == "url" and not has_capability(declared, "elicitation.url"):
                raise McpError(INVALID_PARAMS, "URL-mode elicitation was not declared by this client",
                               rule="A server MUST NOT send a URL-mode elicitation unless the client declared "
                                    "elicitation.url.", revision=rev)
            if mode == "form" and not has_capability(declared, "elicitation.form") \
                    and has_capability(declared, "elicitation.url"):
                raise McpError(INVALID_PARAMS, "form-mode elicitation was not declared by this client", revision=rev)
            return await cb.elicitation(server, params)
        if method == "sampling/createMessage":
            if cb.sampling is None or not has_capability(declared, "sampling"):
                raise method_not_declared(method, "sampling", rev)
            return await cb.sampling(server, params)
        if method == "roots/list":
            if cb.roots is None or not has_capability(declared, "roots"):
                raise method_not_declared(method, "roots", rev)
            return {"roots": await cb.roots(server)}
        raise McpError(METHOD_NOT_FOUND, f"Method not found: {method}",
                       rule="A client answers -32601 to a request method it does not implement.", revision=rev)

    # ---------------------------------------------------------------------------------------------
    # making requests
    # ---------------------------------------------------------------------------------------------
    def check_can_send(self, method: str) -> None:
        """Refuse, *before anything goes on the wire*, a method this connection cannot carry: one the
        negotiated revision does not have, or one whose server capability the server did not declare.

        "A well-behaved client never calls a method the server did not advertise." Legacy: checked
        against the InitializeResult. Modern: against the DiscoverResult, if ``server/discover`` was
        called (each request is negotiated on its own, so without discovery the server decides)."""
        version = self.protocol_version or self.versions[0]
        checked = self._may_send
        if checked[0] == version and checked[1] is self.server_capabilities and method in checked[2]:
            return  # allowed a moment ago, and neither the revision nor the server's capabilities changed
        rev = REVISIONS.get(version) or REVISIONS[LATEST]
        info = rev.method(method)
        if info is None and rev.is_modern:
            info = TASKS_EXTENSION_METHODS.get(method)
        if info is None:
            raise McpError(METHOD_NOT_FOUND, f"{method} does not exist in protocol revision {version}",
                           rule="A client only sends the requests its negotiated revision defines.", revision=version)
        if info.direction == "server→client" or info.only_inside_input_requests:
            raise McpError(INVALID_REQUEST, f"{method} is a server-to-client request; a client does not send it",
                           revision=version)
        if info.capability and self.server_capabilities is not None \
                and not has_capability(self.server_capabilities, info.capability):
            raise McpError(METHOD_NOT_FOUND,
                           f"{method} needs the server capability {info.capability!r}, which {self.server_name} "
                           f"did not declare",
                           {"method": method, "requiredServerCapability": info.capability},
                           rule="Both parties use only capabilities that were successfully negotiated: a client "
                                "never calls a method the server did not advertise.", revision=version)
        if checked[0] != version or checked[1] is not self.server_capabilities:
            self._may_send = checked = (version, self.server_capabilities, set())
        checked[2].add(method)

    def _with_meta(self, params: Mapping[str, Any], capabilities: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Modern: add the per-request ``_meta`` (version, client capabilities, client info, log level)."""
        out = dict(params)
        version = self.protocol_version or self._newest("modern")
        caps = capabilities if capabilities is not None else self._declared(version)
        made = self._meta_from
        if made is not None and made[1] is caps and made[0] == version and made[2] is self.client_info \
                and made[3] == self.log_level:
            # The same _meta as the last request: the client's own declaration, for the same version,
            # name and log level. Built once, shared (nothing changes a message once it is sent).
            meta = self._meta
        elif caps is self._declared(version):
            self._meta_from = (version, caps, self.client_info, self.log_level)
            meta = self._meta = M.request_meta(version, caps, self.client_info, log_level=self.log_level)
        else:  # capabilities narrowed for this one request
            meta = M.request_meta(version, dict(caps), self.client_info, log_level=self.log_level)
        given = out.get("_meta")
        out["_meta"] = {**given, **meta} if given else meta
        return out

    async def request(self, method: str, params: Mapping[str, Any] | None = None, *, timeout: float | None = None,
                      on_progress: ProgressCallback | None = None,
                      capabilities: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Send ``method`` and return its result (a JSON object); raise :class:`McpError` for an error
        response, :class:`RequestTimeout` on timeout.

        Modern era: ``capabilities`` narrows what this one request declares; an
        ``InputRequiredResult`` is fulfilled through the Host and the request retried (MRTR)."""
        result, _ = await self._request(method, params, timeout=timeout, on_progress=on_progress,
                                        capabilities=capabilities)
        return result

    async def _request(self, method: str, params: Mapping[str, Any] | None, *, timeout: float | None,
                       on_progress: ProgressCallback | None, capabilities: Mapping[str, Any] | None,
                       ) -> tuple[dict[str, Any], bool]:
        """:meth:`request`, also saying whether the result came from a Multi Round-Trip retry."""
        if self._stream is None:
            raise McpError(INVALID_REQUEST, "this client is not connected: call connect(stream, task_group) first")
        self.check_can_send(method)
        if self.era == "legacy":
            self.lifecycle.check_send(method)
        original = dict(params or {})
        declared = dict(capabilities) if capabilities is not None else None
        renegotiated = False
        rounds = 0
        crashes = 0
        retry_params = original
        mrtr_retry = False
        while True:
            declared_now: Mapping[str, Any] = {}
            if self.era == "modern":
                declared_now = declared if declared is not None else \
                    self._declared(self.protocol_version or self.versions[0])
                wire_params: dict[str, Any] = self._with_meta(retry_params, declared_now)
            else:
                wire_params = retry_params  # legacy capabilities were declared once, at initialize
            generation = self.restarts
            try:
                response = await self._exchange(method, wire_params or None,
                                                timeout=self.timeout if timeout is None else timeout,
                                                on_progress=on_progress)
            except SessionExpired:
                if self.era != "legacy":
                    raise
                # Legacy Streamable HTTP answered 404: the session is gone; start a new one.
                self._note("transport", f"{self.participant} re-initializes: the server ended the session",
                           marks=("session-expired",))
                await self._initialize()
                continue
            except TransportClosed:
                if not self._server_process_died():
                    raise
                # stdio: the server process exited with our request in flight. The request is lost;
                # start a new process (once, however many requests were waiting) and send it again.
                crashes += 1
                if crashes > MAX_RESTARTS_PER_REQUEST:
                    raise
                await self.restart_server(after_generation=generation)
                continue
            if isinstance(response, JSONRPCErrorResponse):
                error = McpError.from_error_object(response.error, revision=self.protocol_version)
                if error.code == UNSUPPORTED_PROTOCOL_VERSION and self.era == "modern" and not renegotiated:
                    renegotiated = True
                    if self._renegotiate(error) == "legacy":
                        await self._initialize()
                    continue
                raise error
            result = response.result
            result_type = result.get("resultType", "complete")
            if result_type == "complete" or self.era == "legacy":
                return result, mrtr_retry
            if result_type != "input_required":
                raise McpError(INVALID_REQUEST, f"{self.server_name} answered {method} with unknown resultType "
                               f"{result_type!r}", rule="An unrecognised resultType MUST be considered invalid.",
                               revision=self.protocol_version)
            rounds += 1
            if rounds > self.max_input_rounds:
                raise McpError(INTERNAL_ERROR, f"{self.server_name} asked for input {rounds} times for one {method}; "
                               f"the client gives up after {self.max_input_rounds} rounds")
            retry_params = await self._fulfil_input_required(original, result, declared_now)
            mrtr_retry = True

    async def _fulfil_input_required(self, original: dict[str, Any], result: Mapping[str, Any],
                                     declared: Mapping[str, Any]) -> dict[str, Any]:
        """MRTR: fulfil every ``inputRequests`` entry through the Host, then build the retry's params —
        the original params plus ``inputResponses`` (same keys) and ``requestState`` echoed exactly (and
        none if none was given). The caller sends it with a new id."""
        requests = result.get("inputRequests") or {}
        if not requests and "requestState" not in result:
            raise McpError(INVALID_REQUEST, "an InputRequiredResult must carry inputRequests or requestState",
                           rule="At least one of inputRequests or requestState MUST be present.",
                           revision=self.protocol_version)
        responses: dict[str, Any] = {}
        for key, input_request in requests.items():
            method = input_request.get("method")
            params = dict(input_request.get("params") or {})
            try:
                responses[key] = await self.fulfil_input(str(method), params, declared)
            except McpError as exc:
                raise McpError(exc.code, f"cannot fulfil input request {key!r} ({method}): {exc.message}", exc.data,
                               rule="A server MUST only ask for input kinds the client declared on that request; "
                                    "the client never fulfils an undeclared kind.",
                               revision=self.protocol_version) from exc
        retry = dict(original)
        if responses:
            retry["inputResponses"] = responses
        if "requestState" in result:
            retry["requestState"] = result["requestState"]
        return retry

    async def notify(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        """Send a client notification (legacy: e.g. ``notifications/roots/list_changed``)."""
        if self.era == "legacy":
            self.lifecycle.check_send(method)
        await self._send(JSONRPCNotification(method, dict(params) if params is not None else None))

    # ---------------------------------------------------------------------------------------------
    # the MCP methods, in MCP's words
    # ---------------------------------------------------------------------------------------------
    async def _list(self, method: str, cursor: str | None, key_field: str = "cursor",
                    params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        server, ctx = self.server_name, self.authorization_context
        key = cursor
        if self.cache is not None:
            cached = self.cache.get(server, ctx, method, key)
            if cached is not None:
                return cached
        body = dict(params or {})
        if cursor is not None:
            body[key_field] = cursor
        result, mrtr_retry = await self._request(method, body, timeout=None, on_progress=None, capabilities=None)
        if self.cache is not None:
            self.cache.put(server, ctx, method, key, result, mrtr_retry=mrtr_retry)
        return result

    async def ping(self) -> dict[str, Any]:
        return await self.request("ping")

    async def list_tools(self, cursor: str | None = None) -> dict[str, Any]:
        """One page of ``tools/list`` (cached as the result's ``ttlMs`` allows)."""
        return await self._list("tools/list", cursor)

    async def list_all_tools(self) -> list[dict[str, Any]]:
        """Every tool, following ``nextCursor`` page by page."""
        return await self._all_pages("tools/list", "tools")

    async def list_prompts(self, cursor: str | None = None) -> dict[str, Any]:
        return await self._list("prompts/list", cursor)

    async def list_resources(self, cursor: str | None = None) -> dict[str, Any]:
        return await self._list("resources/list", cursor)

    async def list_resource_templates(self, cursor: str | None = None) -> dict[str, Any]:
        return await self._list("resources/templates/list", cursor)

    async def _all_pages(self, method: str, field_name: str, limit: int = 100) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        cursor: str | None = None
        for _ in range(limit):
            page = await self._list(method, cursor)
            items.extend(page.get(field_name) or [])
            cursor = page.get("nextCursor")
            if not cursor:
                return items
        raise McpError(INTERNAL_ERROR, f"{self.server_name} returned more than {limit} pages of {method}")

    async def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None, *,
                        timeout: float | None = None, on_progress: ProgressCallback | None = None,
                        capabilities: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """``tools/call``. Returns the ``CallToolResult``; a tool's own failure is a *result* with
        ``isError: true``, not an exception (protocol errors raise :class:`McpError`)."""
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        result, _ = await self._request("tools/call", params, timeout=timeout, on_progress=on_progress,
                                        capabilities=capabilities)
        return result

    async def get_prompt(self, name: str, arguments: Mapping[str, str] | None = None, *,
                         capabilities: Mapping[str, Any] | None = None) -> dict[str, Any]:
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        return await self.request("prompts/get", params, capabilities=capabilities)

    async def read_resource(self, uri: str, *, capabilities: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """``resources/read``; cached per URI when the server gives a ``ttlMs``, invalidated by
        ``notifications/resources/updated``. Results that needed input are never cached."""
        server, ctx = self.server_name, self.authorization_context
        if self.cache is not None and capabilities is None:
            cached = self.cache.get(server, ctx, "resources/read", uri)
            if cached is not None:
                return cached
        result, mrtr_retry = await self._request("resources/read", {"uri": uri}, timeout=None, on_progress=None,
                                                 capabilities=capabilities)
        if self.cache is not None:
            self.cache.put(server, ctx, "resources/read", uri, result, mrtr_retry=mrtr_retry)
        return result

    async def complete(self, ref: Mapping[str, Any], argument: Mapping[str, Any]) -> dict[str, Any]:
        return await self.request("completion/complete", {"ref": dict(ref), "argument": dict(argument)})

    async def subscribe_resource(self, uri: str) -> dict[str, Any]:
        """Legacy ``resources/subscribe`` (needs the server capability ``resources.subscribe``)."""
        result = await self.request("resources/subscribe", {"uri": uri})
        self._resource_subscriptions.add(uri)
        return result

    async def unsubscribe_resource(self, uri: str) -> dict[str, Any]:
        result = await self.request("resources/unsubscribe", {"uri": uri})
        self._resource_subscriptions.discard(uri)
        return result

    async def listen(self, notifications: Mapping[str, Any], *, timeout: float | None = None) -> Subscription:
        """Modern ``subscriptions/listen``: open a long-lived request whose stream carries change
        notifications. Returns once the server sent ``notifications/subscriptions/acknowledged``; check
        :attr:`Subscription.accepted` — the server may honour less than was asked."""
        if self.era != "modern":
            raise McpError(METHOD_NOT_FOUND, "subscriptions/listen exists only in 2026-07-28; legacy clients use "
                           "resources/subscribe and the list_changed notifications of the session",
                           revision=self.protocol_version)
        self.check_can_send("subscriptions/listen")
        rid = self._new_id()
        sub = Subscription(rid, dict(notifications), _client=self)
        self._subscriptions[rid] = sub
        params = self._with_meta({"notifications": dict(notifications)})
        await self._send(JSONRPCRequest(rid, "subscriptions/listen", params))
        with anyio.move_on_after(self.timeout if timeout is None else timeout) as scope:
            await sub.acknowledged.wait()
        if scope.cancelled_caught:
            await sub.close()
            raise RequestTimeout(self.server_name, "subscriptions/listen", rid, self.timeout if timeout is None else timeout)
        if sub.closed and not sub.accepted:
            raise ConnectionLost(f"{self.server_name} ended the subscription before acknowledging it")
        return sub


def method_not_declared(method: str, capability: str, revision: str | None) -> McpError:
    """The error a client answers when the server asks for a kind of input the client did not declare."""
    return McpError(METHOD_NOT_FOUND, f"Method not found: {method} (this client did not declare {capability!r})",
                    rule=f"A server MUST NOT send {method} unless the client declared the {capability!r} capability.",
                    revision=revision)


__all__ = [
    "Client",
    "ClientAlreadyConnected",
    "ClientCallbacks",
    "ConnectionLost",
    "LegacyState",
    "RequestTimeout",
    "Subscription",
    "capabilities_for",
]
