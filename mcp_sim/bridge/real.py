"""The simulator's client against a *real* MCP server (course chapter 12, "The real wire").

Everything the simulated :class:`~mcp_sim.roles.client.Client` does — era detection, the legacy
handshake or per-request ``_meta``, the MRTR loop, capability checks — runs unchanged over a real
pipe or a real socket, and every frame lands in a :class:`~mcp_sim.bridge.recording.WallClockRecorder`,
so the trace player and the diagrams show real traffic the way they show a simulation.

From async code::

    async with connect_real(["python", "-m", "mcp_sim", "serve", "weather"]) as session:
        tools = await session.client.list_all_tools()
        result = await session.client.call_tool("get_forecast", {"city": "Lisbon"})
    session.recorder          # the real traffic, as a trace

``target`` is a command (a list: start it and speak stdio) or a URL (speak Streamable HTTP).

From a notebook or a plain script (no ``await``)::

    with RealServer(["python", "-m", "mcp_sim", "serve", "weather"]) as server:
        server.list_tools()
        server.call_tool("get_forecast", {"city": "Oslo"})
    server.recorder

or in one line, ``trace = run_real(command, calls=[("get_forecast", {"city": "Oslo"})])``. These run
the real event loop in a helper thread (anyio's blocking portal), so they work inside Jupyter too.
Leaving the block shuts the server down the way the spec says: close stdin, wait, SIGTERM, SIGKILL.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager, asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from anyio.from_thread import BlockingPortal, start_blocking_portal

from mcp_sim.bridge.recording import WallClockRecorder
from mcp_sim.bridge.stdio import SHUTDOWN_GRACE_SECONDS
from mcp_sim.roles.client import Client, ClientCallbacks, ClientEra
from mcp_sim.roles.client.elicitation import content_errors, placeholder_content
from mcp_sim.sim.world import Simulation
from mcp_sim.trace.recorder import Recorder
from mcp_sim.transports.base import MessageStream

if TYPE_CHECKING:
    from mcp_sim.bridge.http_client import Authorizer

Target = Sequence[str] | str
"""A server command (``["python", "server.py"]``) or a Streamable HTTP URL."""


def python_command(*args: str) -> list[str]:
    """``[this Python, *args]``: run a module or script with the interpreter running this code."""
    return [sys.executable, *args]


def accept_elicitation(content: Mapping[str, Any] | None = None) -> ClientCallbacks:
    """Callbacks that accept every form elicitation without asking anyone: with ``content`` when
    given, else with honest placeholders (:func:`~mcp_sim.roles.client.elicitation.placeholder_content`:
    defaults, first enum options, ``true``, ``0``, ``""`` where allowed). An answer that would not be
    valid against the requested schema — a required e-mail, URI or date, say — is a ``decline``
    instead; URL-mode elicitations are declined (nobody is there to open the link)."""

    async def elicit(server: str, params: dict[str, Any]) -> dict[str, Any]:
        if params.get("mode", "form") != "form":
            return {"action": "decline"}
        schema = params.get("requestedSchema")
        answer = dict(content) if content is not None else placeholder_content(schema)
        if answer is None or content_errors(schema, answer):
            return {"action": "decline"}
        return {"action": "accept", "content": answer}

    return ClientCallbacks(elicitation=elicit)


@dataclass
class RealSession:
    """A connected client and what it recorded."""

    client: Client
    stream: MessageStream
    recorder: Recorder

    @property
    def era(self) -> str | None:
        return self.client.era

    @property
    def protocol_version(self) -> str | None:
        return self.client.protocol_version


@asynccontextmanager
async def open_real_stream(target: Target, *, recorder: Recorder, name: str | None = None,
                           env: Mapping[str, str] | None = None,
                           shutdown_grace: float = SHUTDOWN_GRACE_SECONDS,
                           headers: Mapping[str, str] | None = None,
                           authorizer: Authorizer | None = None) -> AsyncIterator[MessageStream]:
    """A client stream to ``target``: a spawned stdio server, or a Streamable HTTP endpoint.
    ``shutdown_grace``: seconds a stdio server gets to exit after its stdin closes (and after SIGTERM);
    ``headers`` go on every HTTP request (``{"Authorization": "Bearer …"}``); ``authorizer`` answers
    an HTTP ``401``/``403`` with a new token (:mod:`mcp_sim.bridge.oauth_http`)."""
    if isinstance(target, str):
        from mcp_sim.bridge.http_client import open_http

        async with open_http(target, name=name, recorder=recorder, headers=headers,
                             authorizer=authorizer) as http_stream:
            yield http_stream
    else:
        from mcp_sim.bridge.stdio import spawn_stdio

        async with spawn_stdio(list(target), name=name, recorder=recorder, env=env,
                               grace=shutdown_grace) as stdio_stream:
            yield stdio_stream


@asynccontextmanager
async def connect_real(target: Target, *, era: ClientEra = "auto", recorder: Recorder | None = None,
                       name: str | None = None, callbacks: ClientCallbacks | None = None,
                       versions: tuple[str, ...] | None = None, timeout: float = 30.0,
                       probe_timeout: float = 5.0, env: Mapping[str, str] | None = None,
                       client_name: str = "mcp-sim-client",
                       shutdown_grace: float = SHUTDOWN_GRACE_SECONDS,
                       headers: Mapping[str, str] | None = None,
                       authorizer: Authorizer | None = None) -> AsyncIterator[RealSession]:
    """Connect the simulator's Client to a real server; yields a :class:`RealSession`.

    ``era``: ``"auto"`` probes with ``server/discover`` and falls back to ``initialize``;
    ``"legacy"``/``"modern"`` force one. ``callbacks`` are the Host side (elicitation answers …);
    by default elicitations are accepted with placeholder values (:func:`accept_elicitation`).
    ``headers`` go on every HTTP request (a bearer token, say); ``authorizer`` runs MCP authorization
    when the server answers ``401``/``403`` (:func:`~mcp_sim.bridge.oauth_http.open_oauth`)."""
    recorder = recorder if recorder is not None else WallClockRecorder()
    options: dict[str, Any] = {}
    if versions is not None:
        options["versions"] = versions
    client = Client(client_name, era=era, callbacks=callbacks or accept_elicitation(), timeout=timeout,
                    probe_timeout=probe_timeout, sim=Simulation(recorder=recorder), **options)
    async with open_real_stream(target, recorder=recorder, name=name, env=env,
                                shutdown_grace=shutdown_grace, headers=headers,
                                authorizer=authorizer) as stream, \
            client.connected_to(stream):
        yield RealSession(client, stream, recorder)


# --- the synchronous helpers, for notebooks and scripts ------------------------------------------------

@dataclass
class RealServer(AbstractContextManager["RealServer"]):
    """A real MCP server you can talk to without ``await`` (a notebook cell, a script).

    ``with RealServer(command) as server:`` starts it, connects the simulator's client and gives
    synchronous ``list_tools()``, ``call_tool()``, ``read_resource()``, ``get_prompt()``; leaving the
    block shuts it down. ``server.recorder`` holds the real traffic as a trace."""

    target: Target
    era: ClientEra = "auto"
    name: str | None = None
    callbacks: ClientCallbacks | None = None
    timeout: float = 30.0
    env: Mapping[str, str] | None = None
    recorder: Recorder = field(default_factory=WallClockRecorder)
    _portal_cm: Any = field(default=None, init=False, repr=False)
    _portal: BlockingPortal | None = field(default=None, init=False, repr=False)
    _session_cm: Any = field(default=None, init=False, repr=False)
    session: RealSession | None = field(default=None, init=False, repr=False)

    def start(self) -> RealServer:
        self._portal_cm = start_blocking_portal(backend="asyncio")
        self._portal = self._portal_cm.__enter__()
        cm = connect_real(self.target, era=self.era, recorder=self.recorder, name=self.name,
                          callbacks=self.callbacks, timeout=self.timeout, env=self.env)
        self._session_cm = self._portal.wrap_async_context_manager(cm)
        try:
            self.session = self._session_cm.__enter__()
        except BaseException:
            self._portal_cm.__exit__(*sys.exc_info())
            raise
        return self

    def stop(self) -> None:
        """Disconnect and shut the server down (close stdin → wait → SIGTERM → SIGKILL)."""
        if self._session_cm is not None:
            cm, self._session_cm = self._session_cm, None
            try:
                cm.__exit__(None, None, None)
            finally:
                self._portal_cm.__exit__(None, None, None)
                self._portal = None
                self.session = None

    def __enter__(self) -> RealServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def client(self) -> Client:
        if self.session is None:
            raise RuntimeError("the server is not running: use `with RealServer(...) as server:`")
        return self.session.client

    def _call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        if self._portal is None:
            raise RuntimeError("the server is not running: use `with RealServer(...) as server:`")
        return self._portal.call(lambda: fn(*args, **kwargs))

    def list_tools(self) -> list[dict[str, Any]]:
        return self._call(self.client.list_all_tools)  # type: ignore[no-any-return]

    def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None) -> dict[str, Any]:
        return self._call(self.client.call_tool, name, arguments)  # type: ignore[no-any-return]

    def list_resources(self) -> dict[str, Any]:
        return self._call(self.client.list_resources)  # type: ignore[no-any-return]

    def read_resource(self, uri: str) -> dict[str, Any]:
        return self._call(self.client.read_resource, uri)  # type: ignore[no-any-return]

    def list_prompts(self) -> dict[str, Any]:
        return self._call(self.client.list_prompts)  # type: ignore[no-any-return]

    def get_prompt(self, name: str, arguments: Mapping[str, str] | None = None) -> dict[str, Any]:
        return self._call(self.client.get_prompt, name, arguments)  # type: ignore[no-any-return]


def run_real(target: Target, *, calls: Iterable[tuple[str, Mapping[str, Any]]] = (), era: ClientEra = "auto",
             name: str | None = None, callbacks: ClientCallbacks | None = None) -> Recorder:
    """Start a real server, connect, list its tools, make ``calls`` (``(tool, arguments)`` pairs),
    shut it down, and return the recorded trace."""
    with RealServer(target, era=era, name=name, callbacks=callbacks) as server:
        server.list_tools()
        for tool, arguments in calls:
            server.call_tool(tool, arguments)
    return server.recorder
