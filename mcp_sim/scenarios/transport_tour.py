"""Walks along the pipes for course chapter 06 (transports): each function runs one small story in a
fresh simulation and returns its recorder — every line, header and status in it produced by the
simulated transports, never typed by hand.

* :func:`same_call` — one ``tools/call`` to the weather server over ``memory``, ``stdio`` or ``http``;
* :func:`stdout_mixup` — a handler that prints a debug line to stdout (the classic stdio bug), or to
  stderr (the fix);
* :func:`shutdown` — closing a stdio server: stdin first, then SIGTERM, then SIGKILL, as needed;
* :func:`legacy_http` — 2025-11-25 Streamable HTTP: a session, SSE or JSON answers, the ``GET``
  stream, refusals without a session (400) and with a forgotten one (404), ``DELETE``;
* :func:`modern_http` — 2026-07-28: no session, mirrored headers, and the status codes a server gives
  for a good request, a mismatched header, an unknown method, a ``GET`` and a foreign ``Origin``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal

import anyio
from anyio.abc import TaskGroup

from mcp_sim.capabilities.context import Context
from mcp_sim.roles.client import Client
from mcp_sim.roles.server import Server
from mcp_sim.roles.server_session import serve
from mcp_sim.scenarios import weather
from mcp_sim.sim.world import Simulation
from mcp_sim.trace.recorder import Recorder
from mcp_sim.transports import open_link
from mcp_sim.transports.http import (
    ACCEPT_BOTH,
    JSON,
    MCP_PROTOCOL_VERSION,
    MCP_SESSION_ID,
    Headers,
    HttpRequest,
    HttpResponse,
    modern_request_headers,
)
from mcp_sim.transports.http_server import ResponseMode, SimulatedHttpServer
from mcp_sim.wire.jsonrpc import JSONRPCRequest, encode

__all__ = ["Answer", "legacy_http", "modern_http", "same_call", "shutdown", "stdout_mixup"]

LEGACY, MODERN = "2025-11-25", "2026-07-28"
ALLOWED_ORIGIN = "http://localhost:6274"
"""The one browser origin the walks' HTTP servers accept (a local inspector page, say)."""


@dataclass(frozen=True)
class Answer:
    """What a raw HTTP request got: a label saying what was tried, and the full response."""

    label: str
    response: HttpResponse

    def line(self) -> str:
        """``label: HTTP 400 Bad Request  {"jsonrpc": …}`` — the status and, if any, the body."""
        body = f"  {self.response.body}" if self.response.body else ""
        return f"{self.label}: {self.response.status_line()}{body}"


def _era(revision: str) -> Literal["legacy", "modern"]:
    return "legacy" if revision < "2026" else "modern"


def _run(seed: int, story: Callable[[Simulation, TaskGroup], Awaitable[None]]) -> Recorder:
    sim = Simulation(seed)

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            await story(sim, tg)
            tg.cancel_scope.cancel()

    sim.run(main)
    recorder: Recorder = sim.recorder
    return recorder


def same_call(transport: Literal["memory", "stdio", "http"], revision: str = MODERN, *, seed: int = 1) -> Recorder:
    """Connect to the weather server and ask for a two-day forecast for Lisbon, then close."""
    async def story(sim: Simulation, tg: TaskGroup) -> None:
        server = weather.build()
        stream = await open_link(sim, tg, "weather", lambda s: serve(server, s),  # type: ignore[call-overload]
                                 transport=transport, revision=revision)
        client = Client("app", era=_era(revision))
        await client.connect(stream, tg)
        await client.call_tool("get_forecast", {"city": "Lisbon", "days": 2})
        await client.close()

    return _run(seed, story)


def stdout_mixup(*, fixed: bool, revision: str = MODERN, seed: int = 1) -> tuple[Recorder, str]:
    """A stdio server whose tool writes a debug line before answering — to stdout (``fixed=False``,
    as a stray ``print`` would) or to stderr (``fixed=True``). Returns the trace and what the
    caller got: the tool's text, or the error that ended the call."""
    forecaster = Server("forecaster", version="1.0.0")

    @forecaster.tool(annotations={"readOnlyHint": True})
    def forecast(city: str, ctx: Context) -> str:
        """Tomorrow's forecast for a city."""
        debug = f"DEBUG looking up {city}"
        if fixed:
            ctx.stderr(debug)
        else:
            ctx.stdout_raw(debug + "\n")
        return f"{city}: sunny, 21 °C"

    got: list[str] = []

    async def story(sim: Simulation, tg: TaskGroup) -> None:
        stream = await open_link(sim, tg, "forecaster", lambda s: serve(forecaster, s), transport="stdio",
                                 revision=revision)
        client = Client("app", era=_era(revision))
        await client.connect(stream, tg)
        try:
            result = await client.call_tool("forecast", {"city": "Oslo"}, timeout=5)
            got.append(str(result["content"][0]["text"]))
        except Exception as exc:  # what the caller sees is the lesson
            got.append(f"{type(exc).__name__}: {exc}")
        await client.close()

    return _run(seed, story), got[0]


def shutdown(*, exits_on_stdin_eof: bool = True, handles_sigterm: bool = True, seed: int = 1) -> Recorder:
    """Open a stdio link to the weather server, list its tools, and close it the way the spec says.

    ``exits_on_stdin_eof=False`` makes a server that keeps running after its stdin closed (the client
    must send SIGTERM); ``handles_sigterm=False`` one that ignores SIGTERM too (SIGKILL ends it)."""
    async def story(sim: Simulation, tg: TaskGroup) -> None:
        server = weather.build()
        stream = await open_link(sim, tg, "weather", lambda s: serve(server, s), transport="stdio", revision=MODERN,
                                 exits_on_stdin_eof=exits_on_stdin_eof, handles_sigterm=handles_sigterm)
        client = Client("app", era="modern")
        await client.connect(stream, tg)
        await client.list_tools()
        await client.close()

    return _run(seed, story)


def forecast_only() -> Server:
    """A weather server with one tool and nothing else (no prompts, no resources), speaking only
    2026-07-28: the GET and DELETE it refuses with 405 are what a server that supports only this
    revision should answer (rule ``http.modern.legacy-traffic``)."""
    server = Server("weather", version="1.0.0", supported_versions=(MODERN,))

    @server.tool(annotations={"readOnlyHint": True})
    def get_forecast(city: str, days: int = 1) -> str:
        """Forecast for a city, one line per day."""
        return f"{city}: " + "; ".join(f"day {d + 1}: {weather.conditions(city, d)['sky']}" for d in range(days))

    return server


async def _http_server(sim: Simulation, tg: TaskGroup, server: Server, *, response_mode: ResponseMode | None = None,
                       versions: tuple[str, ...] | None = None) -> SimulatedHttpServer:
    return SimulatedHttpServer(sim, tg, "weather", lambda s: serve(server, s), allowed_origins=(ALLOWED_ORIGIN,),
                               response_mode=response_mode, versions=versions)


def legacy_http(*, response_mode: ResponseMode | None = None, seed: int = 1) -> tuple[Recorder, list[Answer]]:
    """A 2025-11-25 client opens a session, calls ``get_forecast`` with a progress token (so its
    answer can be a stream), and closes with ``DELETE``. In between, a second caller tries
    ``tools/list`` with no session id and with one the server never issued.

    ``response_mode`` ``"json"`` makes the server answer every request with one JSON body."""
    answers: list[Answer] = []

    async def story(sim: Simulation, tg: TaskGroup) -> None:
        http = await _http_server(sim, tg, weather.build(), response_mode=response_mode)
        stream = http.connect("weather", revision=LEGACY)
        client = Client("app", era="legacy")
        await client.connect(stream, tg)
        await client.call_tool("get_forecast", {"city": "Oslo", "days": 2}, on_progress=lambda *_: None)
        stranger = http.connect("stranger", revision=LEGACY, open_get_stream=False)
        body = encode(JSONRPCRequest(1, "tools/list", {}))
        base = {"Accept": ACCEPT_BOTH, "Content-Type": JSON, MCP_PROTOCOL_VERSION: LEGACY}
        for label, extra in (("no Mcp-Session-Id", {}), ("an unknown Mcp-Session-Id", {MCP_SESSION_ID: "0123abcd"})):
            answers.append(Answer(label, await stranger.http(HttpRequest("POST", "/mcp", Headers({**base, **extra}),
                                                                         body))))
        await client.close()
        await http.aclose()

    return _run(seed, story), answers


def modern_http(*, seed: int = 1) -> tuple[Recorder, list[Answer]]:
    """A 2026-07-28 client calls ``get_forecast`` on a modern-only server (one tool, nothing else); then
    the very request it sent is posted again, by hand, with its headers right and wrong, to see each
    status the server gives."""
    answers: list[Answer] = []

    async def story(sim: Simulation, tg: TaskGroup) -> None:
        http = await _http_server(sim, tg, forecast_only(), versions=(MODERN,))
        stream = http.connect("weather", revision=MODERN)
        client = Client("app", era="modern")
        await client.connect(stream, tg)
        await client.call_tool("get_forecast", {"city": "Oslo", "days": 2})
        sent = next(e for e in sim.recorder.events if e.kind == "request" and e.method == "tools/call")
        message = JSONRPCRequest(7, "tools/call", (sent.message or {})["params"])
        unknown = JSONRPCRequest(8, "prompts/list", {"_meta": message.params["_meta"]})  # type: ignore[index]
        right = {"Accept": ACCEPT_BOTH, "Content-Type": JSON, **modern_request_headers(message, MODERN)}
        tries: list[tuple[str, HttpRequest]] = [
            ("the headers match the body", HttpRequest("POST", "/mcp", Headers(right), encode(message))),
            ("Mcp-Name names another tool than the body",
             HttpRequest("POST", "/mcp", Headers({**right, "Mcp-Name": "get_conditions"}), encode(message))),
            ("no MCP-Protocol-Version header",
             HttpRequest("POST", "/mcp", Headers({k: v for k, v in right.items() if k != MCP_PROTOCOL_VERSION}),
                         encode(message))),
            ("prompts/list, which this server does not offer",
             HttpRequest("POST", "/mcp", Headers({**right, **modern_request_headers(unknown, MODERN)}),
                         encode(unknown))),
            ("GET, as a legacy client would open its stream",
             HttpRequest("GET", "/mcp", Headers({"Accept": "text/event-stream", MCP_PROTOCOL_VERSION: MODERN}))),
            ("Origin: https://evil.example",
             HttpRequest("POST", "/mcp", Headers({**right, "Origin": "https://evil.example"}), encode(message))),
        ]
        caller = http.connect("by-hand", revision=MODERN)
        for label, request in tries:
            answers.append(Answer(label, await caller.http(request)))
        await client.close()
        await http.aclose()

    return _run(seed, story), answers


def http_lines(recorder: Recorder, link: str | None = None) -> list[str]:
    """The HTTP side of a trace in one line per frame: request line and headers, status, SSE id."""
    from mcp_sim.trace.table import transport_summary

    out = []
    for e in recorder.events:
        if "http" in (e.framing or {}) and (link is None or e.link == link):
            out.append(f"{e.seq:>3} {transport_summary(e):<34} {e.kind:<12} {e.method or e.text or ''}")
    return out
