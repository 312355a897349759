"""Real-wire sessions a notebook cell can start, show and stop (course chapter 12, "The real wire").

Chapter 12 puts the simulator on a real wire in both directions:

* **a real client, our server**: :func:`sdk_client_session` writes a server factory from the
  notebook into a temporary module, starts ``mcp-sim serve module:build`` as a real process and lets
  the official Python SDK's client (package ``mcp``) talk to it over the process's stdin and stdout.
  The server records every line it reads and writes (``mcp-sim serve --trace``), and that trace comes
  back as the run's trace;
* **our client, a real server**: :func:`sim_client_session` starts the SDK-built server of
  :mod:`mcp_sim.bridge.sdk_notes` as a process and drives it with the simulator's
  :class:`~mcp_sim.roles.client.Client`, recording the client's end of the pipe;
* **real HTTP**: :func:`sdk_client_over_http` serves a simulated server on a loopback Streamable HTTP
  endpoint (an ephemeral port) and lets the SDK client post to it.

Every helper is synchronous (it runs its own event loop in a worker thread, so it works inside
Jupyter, whose loop is already running), bounded by a timeout, and stops what it started before it
returns: nothing is left running and no port stays open.

Real traffic is not reproducible the way a simulation is: times are measured, process ids and ports
change from run to run, the spawn line names this machine's interpreter. :func:`steady` turns a real
trace into a stable copy for a page that must read the same every time — times become the order of
events (1 ms apart), process ids, ports, session ids and paths are masked — while the recorder
itself keeps the measured values.
"""

from __future__ import annotations

import inspect
import os
import re
import sys
import tempfile
import textwrap
import threading
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from mcp_sim.trace.event import TraceEvent
from mcp_sim.trace.events import Trace

if TYPE_CHECKING:
    from mcp_sim.roles.client import ClientEra

DEFAULT_TIMEOUT = 20.0
"""Seconds a whole real-wire session may take before it is cancelled (and its process stopped)."""


def run_sync(fn: Callable[[], Awaitable[Any]], *, timeout: float = DEFAULT_TIMEOUT) -> Any:
    """Run the coroutine function ``fn`` on a fresh event loop in a worker thread and return its
    result. A notebook's own loop is already running, so a real session gets a loop of its own;
    ``timeout`` bounds it (``TimeoutError`` when exceeded, after everything has been stopped)."""
    box: dict[str, Any] = {}

    async def bounded() -> Any:
        with anyio.fail_after(timeout):
            return await fn()

    def target() -> None:
        try:
            box["value"] = anyio.run(bounded)
        except BaseException as exc:  # handed to the caller's thread below
            box["error"] = exc

    worker = threading.Thread(target=target, name="mcp-sim-real-wire", daemon=True)
    worker.start()
    worker.join(timeout + 30.0)  # the loop's own deadline fires first; this only guards a wedged thread
    if worker.is_alive():
        raise TimeoutError(f"the real-wire session did not finish within {timeout} s")
    if "error" in box:
        raise box["error"]
    return box["value"]


# --- a server from the notebook, as a module a process can import -----------------------------------

@dataclass
class ServerModule:
    """A server factory written out as a module in a temporary folder, servable by another process."""

    folder: Path
    module: str
    factory: str

    @property
    def spec(self) -> str:
        """The ``SERVER`` argument of ``mcp-sim serve``: ``module:factory``."""
        return f"{self.module}:{self.factory}"

    def env(self) -> dict[str, str]:
        """This process's environment with the folder importable (``PYTHONPATH``)."""
        path = os.environ.get("PYTHONPATH")
        return {**os.environ, "PYTHONPATH": str(self.folder) + (os.pathsep + path if path else "")}

    def serve_argv(self, *extra: str) -> list[str]:
        """The command line of ``mcp-sim serve`` for this server, run by the current interpreter."""
        return [sys.executable, "-m", "mcp_sim.cli", "serve", self.spec, *extra]


def factory_source(factory: Callable[[], Any]) -> str:
    """The source of a zero-argument server factory (a ``def`` written in a notebook cell or a file).
    Its imports must be inside its body: only the function itself travels to the other process."""
    return textwrap.dedent(inspect.getsource(factory))


def write_server_module(factory: Callable[[], Any], folder: Path, module: str = "notebook_server", *,
                        run_stdio: bool = False) -> ServerModule:
    """Write ``factory``'s source into ``folder/module.py``. ``run_stdio``: also make the file a
    script that serves the factory's server over stdio (``factory().run("stdio")``, the SDK's way)."""
    source = factory_source(factory)
    if run_stdio:
        source += (f"\n\nif __name__ == \"__main__\":\n    import logging, sys\n"
                   f"    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)\n"
                   f"    {factory.__name__}().run(\"stdio\")\n")
    (folder / f"{module}.py").write_text(source, encoding="utf-8")
    return ServerModule(folder, module, factory.__name__)


# --- steady copies of real traces --------------------------------------------------------------------

_MASKS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"process \d+"), "process <pid>"),
    (re.compile(r"127\.0\.0\.1:\d+"), "127.0.0.1:<port>"),
    (re.compile(r"session [0-9a-f]+…"), "session <id>…"),
    (re.compile(r"(?<!\S)(?:[A-Za-z]:)?[\\/][^\s]*[\\/]([^\s\\/]+)"), r"\1"),  # a path: keep its last part
    (re.compile(r"\bpython[0-9.]*(?:\.exe)?\b"), "python"),
)
_VOLATILE_HEADERS = ("mcp-session-id", "host", "date", "content-length", "server")


def _mask_text(text: str | None) -> str | None:
    if text is None:
        return None
    for pattern, replacement in _MASKS:
        text = pattern.sub(replacement, text)
    return text


def _mask_framing(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: ("<masked>" if k.lower() in _VOLATILE_HEADERS else _mask_framing(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask_framing(v) for v in value]
    if isinstance(value, str):
        return _mask_text(value)
    return value


def steady(trace: Any, *, title: str | None = None) -> Trace:
    """A stable copy of a real trace, for pages that must read the same on every run: each event's
    time becomes its position (0, 1, 2 … ms), and process ids, ports, HTTP session ids and file
    paths are masked in texts, captions and framing. Messages themselves are kept as sent."""
    events: Iterable[TraceEvent] = Trace.of(trace)
    out = [replace(e, t_ms=float(i), text=_mask_text(e.text), caption=_mask_text(e.caption) or "",
                   framing=_mask_framing(e.framing))
           for i, e in enumerate(events)]
    return Trace(out, title=title)


def real_times(trace: Any) -> list[float]:
    """The measured times (milliseconds) of a trace's JSON-RPC frames."""
    return [e.t_ms for e in Trace.of(trace) if e.message is not None]


# --- a real client (the official SDK) against a server from the notebook ----------------------------

@dataclass
class SdkRun:
    """What one SDK-client session saw, and the server's trace of it."""

    mode: str
    protocol_version: str | None
    seen: dict[str, Any]
    trace: Trace
    exit_code: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


SdkSteps = Callable[[Any], Awaitable[dict[str, Any]]]
"""An async function given the SDK's connected ``Client``; returns what it wants to report."""


async def _default_steps(client: Any) -> dict[str, Any]:
    tools = (await client.list_tools()).tools
    return {"tools": [t.name for t in tools]}


def sdk_client_sessions(factory: Callable[[], Any], *, modes: Iterable[str] = ("legacy", "auto"),
                        steps: SdkSteps | None = None, timeout: float = DEFAULT_TIMEOUT) -> dict[str, SdkRun]:
    """Serve ``factory``'s server as real ``mcp-sim serve`` processes over stdio — one per mode, all at
    once — and let the official SDK's client connect to each (``"legacy"`` = the ``initialize``
    handshake, ``"auto"`` = probe with ``server/discover`` first), run ``steps`` and disconnect. The
    SDK closes each server's stdin; the server exits and writes its trace (``--trace``), which is read
    back. Everything is gone when this returns. Results by mode."""
    from mcp import Client as SdkClient
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from mcp_sim.trace.jsonl import load_jsonl

    run_steps = steps or _default_steps
    wanted = list(modes)
    answers: dict[str, tuple[str | None, dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory(prefix="mcp-sim-ch12-") as tmp:
        folder = Path(tmp)
        module = write_server_module(factory, folder)

        async def one(index: int, mode: str) -> None:
            argv = module.serve_argv("--trace", str(folder / f"trace-{index}.jsonl"))
            params = StdioServerParameters(command=argv[0], args=argv[1:], env=module.env())
            # The server's stderr goes to a real file: a notebook's sys.stderr has no file descriptor
            # a child process could inherit.
            with (folder / f"stderr-{index}.log").open("w", encoding="utf-8") as errlog:
                async with SdkClient(stdio_client(params, errlog=errlog), mode=mode) as client:
                    seen = await run_steps(client)
                    answers[mode] = (client.protocol_version, seen)

        async def main() -> None:
            async with anyio.create_task_group() as tg:
                for index, mode in enumerate(wanted):
                    tg.start_soon(one, index, mode)

        run_sync(main, timeout=timeout)
        runs: dict[str, SdkRun] = {}
        for index, mode in enumerate(wanted):
            # The SDK waits for each process on exit; the trace is written as the server shuts down.
            trace_file, stderr_file = folder / f"trace-{index}.jsonl", folder / f"stderr-{index}.log"
            events = load_jsonl(trace_file) if trace_file.exists() else []
            stderr = stderr_file.read_text(encoding="utf-8") if stderr_file.exists() else ""
            version, seen = answers[mode]
            runs[mode] = SdkRun(mode, version, seen, Trace(events), extra={"stderr": stderr})
    return runs


def sdk_client_session(factory: Callable[[], Any], *, mode: str = "legacy", steps: SdkSteps | None = None,
                       timeout: float = DEFAULT_TIMEOUT) -> SdkRun:
    """One session of :func:`sdk_client_sessions`, in ``mode``."""
    return sdk_client_sessions(factory, modes=(mode,), steps=steps, timeout=timeout)[mode]


# --- the simulator's client against a real server (one written with the official SDK) ---------------

@dataclass
class SimRun:
    """What one simulated-client session against a real server saw, and the client's trace of it."""

    era: str | None
    protocol_version: str | None
    seen: dict[str, Any]
    trace: Trace


SimSteps = Callable[[Any], Awaitable[dict[str, Any]]]
"""An async function given the simulator's connected :class:`~mcp_sim.roles.client.Client`."""


async def _default_sim_steps(client: Any) -> dict[str, Any]:
    return {"tools": [t["name"] for t in await client.list_all_tools()]}


def sim_client_sessions(factory: Callable[[], Any], *, eras: Iterable[ClientEra] = ("legacy", "modern"),
                        steps: SimSteps | None = None, timeout: float = DEFAULT_TIMEOUT) -> dict[ClientEra, SimRun]:
    """Write ``factory`` (a function returning an SDK server, e.g. ``MCPServer``, with its imports in
    its body) into a script; for each of ``eras`` (``"auto"``, ``"legacy"``, ``"modern"``) start it as
    a real process — all at once, each with its own pipe — drive it over stdio with the simulator's
    client, run ``steps``, and shut the process down the spec's way (close stdin, wait, SIGTERM,
    SIGKILL). Returns what each client recorded, by era asked for."""
    from mcp_sim.bridge.real import connect_real

    run_steps = steps or _default_sim_steps
    wanted = list(eras)
    runs: dict[ClientEra, SimRun] = {}
    with tempfile.TemporaryDirectory(prefix="mcp-sim-ch12-") as tmp:
        module = write_server_module(factory, Path(tmp), "sdk_server", run_stdio=True)
        argv = [sys.executable, str(module.folder / "sdk_server.py")]

        async def one(era: ClientEra) -> None:
            async with connect_real(argv, era=era, timeout=timeout, name="sdk_server",
                                    shutdown_grace=min(5.0, timeout)) as session:
                seen = await run_steps(session.client)
                era_seen, version = session.client.era, session.client.protocol_version
            runs[era] = SimRun(era_seen, version, seen, Trace(session.recorder.events))

        async def main() -> None:
            async with anyio.create_task_group() as tg:
                for era in wanted:
                    tg.start_soon(one, era)

        run_sync(main, timeout=timeout)
    return {era: runs[era] for era in wanted}


def sim_client_session(factory: Callable[[], Any], *, era: ClientEra = "auto", steps: SimSteps | None = None,
                       timeout: float = DEFAULT_TIMEOUT) -> SimRun:
    """One session of :func:`sim_client_sessions`, in ``era``."""
    return sim_client_sessions(factory, eras=(era,), steps=steps, timeout=timeout)[era]


# --- the SDK's client against a simulated server, over real loopback HTTP ----------------------------

def sdk_client_over_http(server: Any, *, mode: str = "legacy", steps: SdkSteps | None = None,
                         timeout: float = DEFAULT_TIMEOUT) -> SdkRun:
    """Serve the simulated ``server`` on ``http://127.0.0.1:<any free port>/mcp`` (in this process,
    on the helper's own event loop), let the SDK's client post to it, then stop the endpoint and
    close the port. Returns the endpoint's trace (each frame with its HTTP exchange)."""
    from mcp import Client as SdkClient

    from mcp_sim.bridge.http_server import serve_http

    steps = steps or _default_steps

    async def main() -> SdkRun:
        async with serve_http(server) as handle:
            async with SdkClient(handle.url, mode=mode) as client:
                seen = await steps(client)
                version = client.protocol_version
            events = list(handle.recorder.events)
        return SdkRun(mode, version, seen, Trace(events), extra={"port_closed": _port_closed(handle.port)})

    result: SdkRun = run_sync(main, timeout=timeout)
    return result


def _port_closed(port: int) -> bool:
    """Whether nothing listens on 127.0.0.1:``port`` any more."""
    import socket

    with socket.socket() as probe:
        probe.settimeout(0.5)
        return probe.connect_ex(("127.0.0.1", port)) != 0


# --- mcp-sim check on servers from the notebook --------------------------------------------------------

CHECK_TIMEOUT = 100.0
"""Seconds all the checks of :func:`check_servers` may take together (they start a dozen processes)."""


@dataclass
class CheckRun:
    """One server checked by ``mcp-sim check``: its report and the run's trace (wall clock, as recorded)."""

    name: str
    report: Any
    """The :class:`~mcp_sim.bridge.check.findings.CheckReport`."""
    trace: Trace

    def findings_text(self) -> str:
        """The findings by rule, strength and era, then each era's verdict: words that do not change
        from run to run (no times, no process ids)."""
        skipped = any(summary.skipped for summary in self.report.eras.values())
        verdict = ("not checked in every era" if skipped else
                   "passed, no MUST broken" if self.report.passed else "FAILED, a MUST is broken")
        lines = [f"{self.name}: {verdict}"]
        for era, summary in self.report.eras.items():
            counts = ", ".join(f"{n} {s}" for s, n in summary.findings.items() if n) or "no findings"
            lines.append(f"  {era:7} {summary.revision or summary.skipped}: {counts}")
        rows = self.report.by_rule()
        width = max((len(rule) for rule, *_ in rows), default=0)
        lines += [f"    {strength:<6} {rule:<{width}}  {era}  ×{count}" for rule, strength, era, count in rows]
        return "\n".join(lines)

    def link_trace(self, era: str) -> Trace:
        """The events of this era's workload process (``<server>-<era>``), without the side probes."""
        return Trace([e for e in self.trace if e.link.endswith(f"-{era}")], title=f"{self.name}, {era} era")

    def before_nemesis(self, era: str) -> Trace:
        """This era's workload process up to the nemesis's first action, without stderr lines, its
        events numbered from 1: one request at a time, so this part goes the same way on every run
        (the other processes, checked at the same time, numbered their events in between; after the
        nemesis's first action, duplicates, concurrent calls and a busy machine decide the order)."""
        events: list[TraceEvent] = []
        for e in self.link_trace(era):
            if any(mark.startswith("nemesis:") for mark in e.marks):
                break
            if e.kind != "log":
                events.append(replace(e, seq=len(events) + 1))
        return Trace(events, title=f"{self.name}, {era} era, before the nemesis")


def check_servers(*, simulated: dict[str, Callable[[], Any]] | None = None,
                  sdk: dict[str, Callable[[], Any]] | None = None, options: Any = None,
                  timeout: float = CHECK_TIMEOUT) -> dict[str, CheckRun]:
    """Run ``mcp-sim check`` (:func:`~mcp_sim.bridge.check.run.run_check`) on servers written in the
    notebook, all at once, each in every era of ``options`` (both by default).

    ``simulated`` maps a name to a factory of a simulator ``Server``: it is written into a module and
    served as a real process by ``mcp-sim serve``. ``sdk`` maps a name to a factory of an SDK server
    (``MCPServer``): it is written into a script that runs it over stdio. The checker starts, kills
    and restarts the processes itself and stops every one before it returns; ``timeout`` bounds the
    whole (``TimeoutError``, after everything is stopped). Results by name, simulated servers first."""
    from mcp_sim.bridge.check.run import CheckOptions, run_check

    options = options or CheckOptions()
    runs: dict[str, CheckRun] = {}
    with tempfile.TemporaryDirectory(prefix="mcp-sim-ch12-check-") as tmp:
        folder = Path(tmp)
        commands: dict[str, list[str]] = {}
        for name, factory in (simulated or {}).items():
            module = write_server_module(factory, folder, f"{name}_server")
            # A script beside the module: its folder is on its own import path, so ``mcp-sim serve
            # module:factory`` finds the module without touching the environment.
            (folder / f"{name}.py").write_text(
                f"import sys\n\nfrom mcp_sim.cli import main\n\nsys.exit(main([\"serve\", {module.spec!r}]))\n",
                encoding="utf-8")
            commands[name] = [sys.executable, str(folder / f"{name}.py")]
        for name, factory in (sdk or {}).items():
            write_server_module(factory, folder, name, run_stdio=True)
            commands[name] = [sys.executable, str(folder / f"{name}.py")]

        async def main() -> None:
            async def one(name: str) -> None:
                report, trace = await run_check(commands[name], options)
                runs[name] = CheckRun(name, report, trace)

            async with anyio.create_task_group() as tg:
                for name in commands:
                    tg.start_soon(one, name)

        run_sync(main, timeout=timeout)
    return {name: runs[name] for name in commands}
