"""Opening the session and detecting the server's era (course chapter 03, lifecycle and versions;
spec ``basic/lifecycle`` and ``basic/versioning``).

The two eras open a connection differently:

* **legacy** (≤ 2025-11-25): ``initialize`` → ``InitializeResult`` → ``notifications/initialized``.
  Version and capabilities are negotiated once; if the client does not speak the version the server
  answered, it SHOULD disconnect.
* **modern** (2026-07-28): no handshake. Every request carries the version and the client's
  capabilities in ``params._meta``; ``server/discover`` (optional for the client) tells what the
  server supports. A server that does not speak the request's version answers ``-32022`` with the
  versions it does speak, and the client retries with one they share.

``era="auto"`` probes: it sends ``server/discover``; a DiscoverResult or a recognised modern error
means a modern server, any other error or a timeout means a legacy one. A refusal by the transport
itself (HTTP 401, 403, 5xx: :class:`~mcp_sim.transports.base.RequestRefused`) says nothing about the
era: the probe ends at once with that error instead of trying ``initialize`` or waiting it out. This layer also holds the
two checks every request goes through before it is sent: is the method allowed on this connection
(:meth:`SessionOpening.check_can_send`), and which ``_meta`` does it carry (:meth:`SessionOpening._with_meta`).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any, Final, Literal, Self

import anyio
from anyio.abc import TaskGroup

from mcp_sim.protocol import meta as M
from mcp_sim.protocol import revisions
from mcp_sim.protocol.errors import INVALID_REQUEST, METHOD_NOT_FOUND, UNSUPPORTED_PROTOCOL_VERSION, McpError
from mcp_sim.protocol.lifecycle import (
    LegacyLifecycle,
    client_accepts,
    era_from_discover_reply,
    has_capability,
)
from mcp_sim.protocol.revisions import LATEST, REVISIONS, TASKS_EXTENSION_METHODS, Era
from mcp_sim.roles.client.callbacks import ClientCallbacks, capabilities_for
from mcp_sim.roles.client.connection import ClientConnection, ProgressCallback
from mcp_sim.roles.client.errors import ClientAlreadyConnected, RequestTimeout
from mcp_sim.sim.world import Simulation, maybe_current_simulation
from mcp_sim.transports.base import MessageStream, RequestRefused
from mcp_sim.wire.jsonrpc import JSONRPCErrorResponse, JSONRPCNotification, JSONRPCResultResponse

ClientEra = Literal["legacy", "modern", "auto"]

CLIENT_VERSIONS: Final = tuple(REVISIONS)
"""Every released revision, 2024-11-05 on: what a Client speaks unless told otherwise. A server may
answer ``initialize`` with any legacy revision; the client accepts it and keeps to that revision's
rules (the capabilities it declares, the methods it sends, the headers it sets, all read from
:mod:`mcp_sim.protocol.revisions`)."""

PROBE_TIMEOUT: Final = 5.0
"""How long ``era="auto"`` waits for a ``server/discover`` answer before assuming a legacy server."""


def era_of_version(version: str) -> Era:
    """The era of ``version``; an unknown version newer than the latest counts as modern (a client
    from the future), an unknown older one as legacy (the registry decides)."""
    return revisions.era_of_version(version, unknown_modern_after=LATEST)


class SessionOpening(ClientConnection):
    """The connection, plus what it takes to open an MCP session on it and to keep to what was agreed."""

    def __init__(self, name: str, version: str, *, era: ClientEra, versions: tuple[str, ...],
                 callbacks: ClientCallbacks | None, capabilities: dict[str, Any] | None, timeout: float,
                 probe_timeout: float, discover: bool, log_level: str | None, sim: Simulation | None) -> None:
        super().__init__(timeout=timeout, sim=sim)
        if not versions:
            raise ValueError("a client must speak at least one protocol version")
        self.client_info = {"name": name, "version": version}
        self.era_setting: ClientEra = era
        self.versions = tuple(sorted(set(versions), reverse=True))
        self.callbacks = callbacks or ClientCallbacks()
        self._explicit_capabilities = capabilities
        self.probe_timeout = probe_timeout
        self.discover_on_connect = discover
        self.log_level = log_level
        self.sessions_opened = 0
        """How many legacy sessions ``initialize`` has opened on this connection (a new one after a
        ``404`` or a restart)."""
        self._initializing: anyio.Event | None = None
        """Set while a legacy ``initialize`` is in flight: other requests wait for it (the lifecycle allows
        nothing but pings until the session is open), then go out on the new session."""
        self._task_group: TaskGroup | None = None

        # What we learnt about the server.
        self.server_capabilities: dict[str, Any] | None = None
        """From InitializeResult (legacy) or DiscoverResult (modern); ``None`` = not known."""
        self.server_info: dict[str, Any] | None = None
        self.instructions: str | None = None
        self.supported_versions: tuple[str, ...] = ()

    def capabilities(self, version: str | None = None) -> dict[str, Any]:
        """The client capabilities declared in ``version`` (default: the negotiated one)."""
        if self._explicit_capabilities is not None:
            return self._explicit_capabilities
        return capabilities_for(self.callbacks, version or self.protocol_version or self.versions[0])

    def _declared(self, version: str) -> dict[str, Any]:
        """What a modern request declares by default: the client's capabilities in ``version``."""
        return self.capabilities(version)

    # ---------------------------------------------------------------------------------------------
    # connecting
    # ---------------------------------------------------------------------------------------------
    async def connect(self, stream: MessageStream, task_group: TaskGroup) -> Self:
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
    async def connected_to(self, stream: MessageStream) -> AsyncIterator[Self]:
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
            return
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
            if era_of_version(v) == era:
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
        if not any(era_of_version(v) == "modern" for v in self.versions):
            return "legacy"
        if not any(era_of_version(v) == "legacy" for v in self.versions):
            return "modern"
        self._set_version(self._newest("modern"))
        try:
            response = await self._exchange("server/discover", self._with_meta({}), timeout=self.probe_timeout,
                                            cancel_on_timeout=False)
        except RequestTimeout:
            self.protocol_version = None
            return "legacy"
        era = era_from_discover_reply(response.to_dict())
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
        self._initializing = opened = anyio.Event()
        try:
            await self._initialize_once()
            self.sessions_opened += 1
        finally:
            self._initializing = None
            opened.set()

    async def _initialize_once(self) -> None:
        self.era = "legacy"
        self.lifecycle = LegacyLifecycle("client")
        self._server_requests = {}  # a new session: the server's request ids start afresh
        offered = self._newest("legacy")
        self._set_version(offered)
        params = {"protocolVersion": offered, "capabilities": self.capabilities(offered),
                  "clientInfo": self.client_info}
        self.lifecycle.check_send("initialize")
        self.lifecycle.on_event("initialize")
        try:
            response = await self._exchange("initialize", params, timeout=self.timeout)
        except (RequestTimeout, RequestRefused):
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

    @abstractmethod
    async def request(self, method: str, params: Mapping[str, Any] | None = None, *, timeout: float | None = None,
                      on_progress: ProgressCallback | None = None,
                      capabilities: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Send ``method`` and return its result: the request loop of :mod:`.client_input`."""

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
        return era_of_version(chosen)

    # ---------------------------------------------------------------------------------------------
    # what every request is checked against and carries
    # ---------------------------------------------------------------------------------------------
    def check_can_send(self, method: str) -> None:
        """Refuse, *before anything goes on the wire*, a method this connection cannot carry: one the
        negotiated revision does not have, or one whose server capability the server did not declare.

        "A well-behaved client never calls a method the server did not advertise." Legacy: checked
        against the InitializeResult. Modern: against the DiscoverResult, if ``server/discover`` was
        called (each request is negotiated on its own, so without discovery the server decides)."""
        version = self.protocol_version or self.versions[0]
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

    def _with_meta(self, params: Mapping[str, Any], capabilities: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Modern: add the per-request ``_meta`` (version, client capabilities, client info, log level).

        There is no handshake to remember them, so every request says them again; ``capabilities``
        narrows what this one request declares."""
        version = self.protocol_version or self._newest("modern")
        caps = dict(capabilities) if capabilities is not None else self._declared(version)
        meta = M.request_meta(version, caps, self.client_info, log_level=self.log_level)
        out = dict(params)
        given = out.get("_meta")
        out["_meta"] = {**given, **meta} if given else meta
        return out
