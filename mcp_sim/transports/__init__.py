"""Layer 3, the pipes: memory, stdio and Streamable HTTP on one virtual clock (course chapter 06).

Everything above this package talks through a :class:`~mcp_sim.transports.base.MessageStream`
(``send``/``receive``/``aclose``) and never sees bytes. Below it each transport frames the messages
its own way — a hand-off in memory, a line on a pipe, an HTTP exchange with SSE events — records every
frame in the trace at the moment it goes on the wire, and can be made to misbehave with
:class:`~mcp_sim.transports.faults.Faults`.

Most code needs only :func:`open_link`::

    async with anyio.create_task_group() as tg:
        stream = await open_link(sim, tg, "weather", lambda s: serve(weather_server, s), transport="stdio")
        ...  # hand `stream` to a client session
        await stream.aclose()

Modules: :mod:`.base` (the interface), :mod:`.memory`, :mod:`.stdio`, :mod:`.http` (requests and
responses as data), :mod:`.sse`, :mod:`.http_server`, :mod:`.http_client`, :mod:`.faults`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection
from typing import Literal, overload

import anyio
from anyio.abc import TaskGroup

from mcp_sim.security.identity import AuthInfo
from mcp_sim.sim.world import Simulation
from mcp_sim.transports.base import LinkInfo, MessageStream, SessionExpired, TransportClosed
from mcp_sim.transports.faults import Faults, FaultyMemoryStream, Latency, LinkFaults, faulty_memory_link
from mcp_sim.transports.http import Headers, HttpExchange, HttpRequest, HttpResponse, HttpStatusError
from mcp_sim.transports.http_client import HttpClientStream
from mcp_sim.transports.http_server import ResponseMode, SimulatedHttpServer, TokenValidator, static_tokens
from mcp_sim.transports.memory import MemoryStream, memory_link
from mcp_sim.transports.sse import SseEvent
from mcp_sim.transports.stdio import AlreadyConnected, SimulatedProcess, StdioClientStream, StdioServerStream

__all__ = [
    "AlreadyConnected",
    "AuthInfo",
    "Faults",
    "FaultyMemoryStream",
    "Headers",
    "HttpClientStream",
    "HttpExchange",
    "HttpRequest",
    "HttpResponse",
    "HttpStatusError",
    "Latency",
    "LinkFaults",
    "LinkInfo",
    "MemoryStream",
    "MessageStream",
    "ServerMain",
    "SessionExpired",
    "SimulatedHttpServer",
    "SimulatedProcess",
    "SseEvent",
    "StdioClientStream",
    "StdioServerStream",
    "TransportClosed",
    "open_link",
    "static_tokens",
]

ServerMain = Callable[[MessageStream], Awaitable[None]]
"""A server program: serves one connection (a :class:`MessageStream`) until ``anyio.EndOfStream``."""

Transport = Literal["memory", "stdio", "http"]


@overload
async def open_link(sim: Simulation, task_group: TaskGroup, name: str, server_main: ServerMain | None, *,
                    transport: Literal["memory"] = ..., revision: str | None = None,
                    faults: Faults | LinkFaults | None = None, auth: AuthInfo | None = None,
                    http_server: SimulatedHttpServer | None = None, token: str | None = None,
                    origin: str | None = None, open_get_stream: bool = True, allowed_origins: Collection[str] | None = None,
                    token_validator: TokenValidator | None = None, required_scopes: tuple[str, ...] = (),
                    response_mode: ResponseMode | None = None, exits_on_stdin_eof: bool = True,
                    handles_sigterm: bool = True, shutdown_grace: float = 2.0) -> MemoryStream: ...


@overload
async def open_link(sim: Simulation, task_group: TaskGroup, name: str, server_main: ServerMain | None, *,
                    transport: Literal["stdio"], revision: str | None = None,
                    faults: Faults | LinkFaults | None = None, auth: AuthInfo | None = None,
                    http_server: SimulatedHttpServer | None = None, token: str | None = None,
                    origin: str | None = None, open_get_stream: bool = True, allowed_origins: Collection[str] | None = None,
                    token_validator: TokenValidator | None = None, required_scopes: tuple[str, ...] = (),
                    response_mode: ResponseMode | None = None, exits_on_stdin_eof: bool = True,
                    handles_sigterm: bool = True, shutdown_grace: float = 2.0) -> StdioClientStream: ...


@overload
async def open_link(sim: Simulation, task_group: TaskGroup, name: str, server_main: ServerMain | None, *,
                    transport: Literal["http"], revision: str | None = None,
                    faults: Faults | LinkFaults | None = None, auth: AuthInfo | None = None,
                    http_server: SimulatedHttpServer | None = None, token: str | None = None,
                    origin: str | None = None, open_get_stream: bool = True, allowed_origins: Collection[str] | None = None,
                    token_validator: TokenValidator | None = None, required_scopes: tuple[str, ...] = (),
                    response_mode: ResponseMode | None = None, exits_on_stdin_eof: bool = True,
                    handles_sigterm: bool = True, shutdown_grace: float = 2.0) -> HttpClientStream: ...


async def open_link(sim: Simulation, task_group: TaskGroup, name: str, server_main: ServerMain | None, *,
                    transport: Transport = "memory", revision: str | None = None,
                    faults: Faults | LinkFaults | None = None, auth: AuthInfo | None = None,
                    http_server: SimulatedHttpServer | None = None, token: str | None = None,
                    origin: str | None = None, open_get_stream: bool = True, allowed_origins: Collection[str] | None = None,
                    token_validator: TokenValidator | None = None, required_scopes: tuple[str, ...] = (),
                    response_mode: ResponseMode | None = None, exits_on_stdin_eof: bool = True,
                    handles_sigterm: bool = True,
                    shutdown_grace: float = 2.0) -> MemoryStream | StdioClientStream | HttpClientStream:
    """Connect a new client to a server program and return the client's end of the link.

    The server side runs as tasks of ``task_group`` (so it lives exactly as long as the caller's
    ``async with`` block); ``server_main(stream)`` is the server program, e.g.
    ``lambda s: serve(server, s)``, and must serve until ``anyio.EndOfStream``.

    ``transport``:

    * ``"memory"`` — a direct pipe (:class:`MemoryStream`, or :class:`FaultyMemoryStream` when
      ``faults`` are given). ``auth`` is the identity the server end reports.
    * ``"stdio"`` — the server is launched as a :class:`SimulatedProcess`; the result is a
      :class:`StdioClientStream` whose ``.process`` has the process controls (``stdout_write_raw``,
      ``stderr_write``, ``crash``, ``terminate``, ``kill``, ``returncode``, ``pid``) and which offers
      ``restart()`` (a fresh process: a new server session) and ``aclose()`` (stdin close → SIGTERM →
      SIGKILL, waiting ``shutdown_grace`` simulated seconds between steps). ``auth`` is the identity
      the process runs as; ``exits_on_stdin_eof``/``handles_sigterm`` make a badly behaved server.
    * ``"http"`` — Streamable HTTP. Pass ``http_server`` to join an existing
      :class:`SimulatedHttpServer` (many clients, one server; ``server_main`` is then unused), or let
      this call create one named ``name`` from ``server_main`` and the server options
      ``allowed_origins``, ``token_validator``, ``required_scopes``, ``response_mode``. The result is an
      :class:`HttpClientStream`; ``token`` (default ``auth.token``) is sent as a bearer token and
      ``origin`` as the ``Origin`` header. The era follows each message (``_meta`` protocolVersion) or
      ``revision``: legacy sessions with ``Mcp-Session-Id``, or 2026-07-28 stateless POSTs.

    ``revision`` is stored on the client end for the trace (a session may set it later). ``faults``
    (:class:`Faults` for both directions, :class:`LinkFaults` for one) are applied frame by frame and
    drawn from the simulation's seeded generator, so the same seed replays the same faults.

    Close the returned stream with ``await stream.aclose()`` when done; for HTTP also
    ``await server.aclose()`` if you created the server yourself.
    """
    if transport == "memory":
        return await _open_memory(sim, task_group, name, _need(server_main), revision, faults, auth)
    if transport == "stdio":
        process = SimulatedProcess(sim, task_group, name, _need(server_main), faults=faults, auth=auth,
                                   exits_on_stdin_eof=exits_on_stdin_eof, handles_sigterm=handles_sigterm)
        await process.start()
        client = process.connect()
        client.shutdown_grace = shutdown_grace
        client.revision = revision
        process.server_stream.revision = revision
        return client
    if transport == "http":
        server = http_server
        if server is None:
            server = SimulatedHttpServer(sim, task_group, name, _need(server_main), allowed_origins=allowed_origins,
                                         token_validator=token_validator, required_scopes=required_scopes,
                                         response_mode=response_mode)
        if token is None and auth is not None:
            token = auth.token
        return server.connect(name if http_server is None else name or None, faults=faults, token=token,
                              origin=origin, revision=revision, open_get_stream=open_get_stream,
                              task_group=task_group)
    raise ValueError(f"unknown transport {transport!r}: use 'memory', 'stdio' or 'http'")


def _need(server_main: ServerMain | None) -> ServerMain:
    if server_main is None:
        raise ValueError("a server program (server_main) is needed unless you join an existing http_server")
    return server_main


async def _open_memory(sim: Simulation, task_group: TaskGroup, name: str, server_main: ServerMain,
                       revision: str | None, faults: Faults | LinkFaults | None,
                       auth: AuthInfo | None) -> MemoryStream:
    scope = anyio.CancelScope()
    client: MemoryStream
    server: MemoryStream
    if faults is None:
        client, server = memory_link(sim, name, auth=auth)
    else:
        client, server = faulty_memory_link(sim, name, faults, auth=auth, on_crash=scope.cancel)
    client.revision = server.revision = revision

    async def run_server() -> None:
        with scope:
            await server_main(server)
        await server.aclose()

    task_group.start_soon(run_server, name=f"server {name}")
    return client
