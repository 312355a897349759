"""The stdio transport, simulated: the server is a child process of the client (course chapter 06).

What the spec says (stdio section, every revision) and where each rule lives here:

* The client *launches* the server as a subprocess (:class:`SimulatedProcess`). The server reads
  JSON-RPC from its **stdin** and writes JSON-RPC to its **stdout**; both are UTF-8 byte streams.
* Messages are delimited by newlines and MUST NOT contain embedded newlines.
  :func:`~mcp_sim.wire.jsonrpc.encode` guarantees that (JSON escapes ``\\n`` inside strings), so each
  message is exactly one line. Text written raw with a newline inside becomes *two* lines, each of
  which the reader fails to parse.
* The server MUST NOT write anything to stdout that is not a valid MCP message. A stray
  ``print("debug")`` in a handler is the classic bug: the line goes down the same pipe, the client
  reads it as a frame and gets a parse error (:class:`~mcp_sim.wire.jsonrpc.InvalidMessage`); the
  trace shows it as an ``invalid`` event. ``print(..., file=process.stderr)`` is the fix.
* **stderr** is for logging of any kind; the client SHOULD NOT treat it as errors. Every stderr line is
  recorded as a ``log`` event.
* Shutdown: the client closes the server's stdin, waits, sends SIGTERM, waits, sends SIGKILL
  (:meth:`StdioClientStream.aclose`); every step is in the trace.
* If the server exits unexpectedly, everything in flight is lost: the client end's ``receive`` ends
  with ``anyio.EndOfStream`` and ``send`` raises :class:`~mcp_sim.transports.base.TransportClosed`.
  2026-07-28 adds that the client SHOULD restart it and retry (and re-send ``subscriptions/listen``):
  :meth:`StdioClientStream.restart`.
* One client per server: the process's pipes belong to the client that launched it.

Each line on the wire is recorded with ``framing={"stdio": {"stream": "stdin"|"stdout"|"stderr",
"line": <the text including its newline>}}``. Faults (:mod:`mcp_sim.transports.faults`) act on whole
lines.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Literal

import anyio
from anyio.abc import TaskGroup, TaskStatus

from mcp_sim.security.identity import AuthInfo
from mcp_sim.sim.world import Simulation
from mcp_sim.transports.base import LinkInfo, MessageStream, TransportClosed
from mcp_sim.transports.faults import Faults, LinkFaults, Shipment, Wire, decode_frame
from mcp_sim.wire.jsonrpc import InvalidMessage, JSONRPCMessage, RequestId, encode

__all__ = [
    "SIGKILL",
    "SIGTERM",
    "AlreadyConnected",
    "Pipe",
    "SimulatedProcess",
    "StdioClientStream",
    "StdioServerStream",
]

SIGTERM = 15
SIGKILL = 9

ServerMain = Callable[[MessageStream], Awaitable[None]]


class AlreadyConnected(RuntimeError):
    """A stdio server has exactly one client: the process that launched it owns its stdin and stdout.
    A second client must launch its own server process."""


class Pipe:
    """One direction of a process's plumbing (stdin, stdout or stderr): a byte stream.

    The writer feeds bytes and finally closes it; the reader gets newline-terminated lines and then
    end-of-file. The pipe knows nothing about JSON: framing is only "split at ``\\n``"."""

    def __init__(self, name: Literal["stdin", "stdout", "stderr"]) -> None:
        self.name = name
        self._tx, self._rx = anyio.create_memory_object_stream[bytes](float("inf"))
        self._buffer = bytearray()
        self.closed = False

    def feed(self, data: bytes) -> None:
        """Write bytes (ignored once the pipe is closed: the reader is gone)."""
        if self.closed:
            return
        try:
            self._tx.send_nowait(data)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            self.closed = True

    def close(self) -> None:
        """The writer closes its end: the reader sees end-of-file after what is already buffered."""
        self.closed = True
        self._tx.close()

    async def read_line(self) -> bytes | None:
        """The next line without its ``\\n``, or ``None`` at end-of-file. A last line without a newline
        is still returned (a process may die mid-write)."""
        while True:
            index = self._buffer.find(b"\n")
            if index >= 0:
                line = bytes(self._buffer[:index])
                del self._buffer[:index + 1]
                return line
            try:
                self._buffer += await self._rx.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError):
                if self._buffer:
                    line = bytes(self._buffer)
                    self._buffer.clear()
                    return line
                return None


class _LineWriter:
    """What a handler sees as its process's ``sys.stdout``/``sys.stderr``: ``print(..., file=w)``
    works, and each completed line goes down the pipe."""

    def __init__(self, emit: Callable[[str], None]) -> None:
        self._emit = emit
        self._partial = ""

    def write(self, text: str) -> int:
        self._partial += text
        *lines, self._partial = self._partial.split("\n")
        for line in lines:
            self._emit(line)
        return len(text)

    def flush(self) -> None:
        pass


class SimulatedProcess:
    """A server launched as a child process: pid, stdin/stdout/stderr pipes, exit code, signals.

    ``main(stream)`` is the server program: it is given the process's :class:`StdioServerStream` and
    serves until stdin reaches end-of-file. When ``main`` returns, the process exits with code 0 (unless
    ``exits_on_stdin_eof`` is false: a badly behaved server that must be signalled). An exception in
    ``main`` kills the process with exit code 1 and a traceback line on stderr, as Python would.
    SIGTERM exits with ``-15`` unless ``handles_sigterm`` is false; SIGKILL always exits with ``-9``.
    """

    def __init__(self, sim: Simulation, task_group: TaskGroup, name: str, main: ServerMain, *,
                 faults: Faults | LinkFaults | None = None, auth: AuthInfo | None = None,
                 command: tuple[str, ...] | None = None, exits_on_stdin_eof: bool = True,
                 handles_sigterm: bool = True, wires: tuple[Wire, Wire] | None = None,
                 generation: int = 1) -> None:
        self.sim = sim
        self.task_group = task_group
        self.name = name
        self.main = main
        self.faults = faults
        self.auth = auth
        self.command = command or ("mcp-server", name)
        self.exits_on_stdin_eof = exits_on_stdin_eof
        self.handles_sigterm = handles_sigterm
        self.generation = generation
        self.info = LinkInfo(name=name, transport="stdio", client=f"client/{name}", server=f"server/{name}")
        link_faults = LinkFaults.of(faults)
        self.to_server, self.to_client = wires or (
            Wire(sim, link_faults.to_server, label=f"{name}:stdin"),
            Wire(sim, link_faults.to_client, label=f"{name}:stdout"))
        self.pid = 1000 + sim.next_number("pid")
        self.stdin_pipe = Pipe("stdin")
        self.stdout_pipe = Pipe("stdout")
        self.stderr_pipe = Pipe("stderr")
        self.stdout = _LineWriter(self.stdout_write_line)
        """The process's ``sys.stdout``: anything printed here goes down the MCP pipe (the classic bug)."""
        self.stderr = _LineWriter(self.stderr_write_line)
        """The process's ``sys.stderr``: the right place for logs."""
        self.stderr_lines: list[str] = []
        self.returncode: int | None = None
        self.server_stream = StdioServerStream(self)
        self.client: StdioClientStream | None = None
        self._scope: anyio.CancelScope | None = None
        self._exit_code: int | None = None
        self._exited = anyio.Event()

    # -- lifecycle --------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self.returncode is None and self._scope is not None

    async def start(self) -> None:
        """Spawn the process (its ``main`` runs as a task of the link's task group)."""
        self._event(f"client launches `{' '.join(self.command)}` as process {self.pid}", ("spawn",))
        await self.task_group.start(self._run, name=f"process {self.pid} ({self.name})")

    async def _run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        code = 0
        with anyio.CancelScope() as scope:
            self._scope = scope
            task_status.started()
            try:
                await self.main(self.server_stream)
                if not self.exits_on_stdin_eof:
                    self._event("stdin reached end-of-file but the process keeps running", ())
                    await anyio.sleep_forever()
            except Exception as exc:  # the server program died: Python prints a traceback on stderr
                self.stderr_write_line(f"Traceback (most recent call last): {type(exc).__name__}: {exc}")
                code = 1
        self._exit(self._exit_code if self._exit_code is not None else code)

    def _exit(self, code: int) -> None:
        self.returncode = code
        how = {-SIGTERM: "terminated by SIGTERM", -SIGKILL: "killed by SIGKILL"}.get(code, f"exited with code {code}")
        self._event(f"process {self.pid} {how}", ("exit", "crash") if code > 0 else ("exit",))
        self.stdin_pipe.close()
        lost = self.to_server.discard_in_flight()
        if lost:
            self._event(f"{lost} line(s) still on their way to stdin are lost", ("lost",))
        # Lines the process already wrote stay in the pipe: end-of-file arrives after them.
        self.to_client.ship_control(self.stdout_pipe.close)
        self.stderr_pipe.close()
        self._exited.set()

    async def wait(self) -> int:
        """Wait for the process to exit; its exit code (negative = killed by that signal)."""
        await self._exited.wait()
        assert self.returncode is not None
        return self.returncode

    def send_signal(self, signal: int) -> None:
        """Deliver SIGTERM or SIGKILL (recorded). A process that ignores SIGTERM keeps running."""
        if not self.running:
            return
        if signal == SIGKILL:
            self._event(f"client sends SIGKILL to process {self.pid}", ("SIGKILL",))
            self._stop(-SIGKILL)
        elif signal == SIGTERM:
            self._event(f"client sends SIGTERM to process {self.pid}", ("SIGTERM",))
            if self.handles_sigterm:
                self._stop(-SIGTERM)
            else:
                self._event(f"process {self.pid} ignores SIGTERM", ())
        else:
            raise ValueError(f"the simulation models SIGTERM ({SIGTERM}) and SIGKILL ({SIGKILL}), not {signal}")

    def terminate(self) -> None:
        self.send_signal(SIGTERM)

    def kill(self) -> None:
        self.send_signal(SIGKILL)

    def crash(self, exit_code: int = 1, reason: str = "the server process crashed") -> None:
        """The process dies on its own (a bug, an out-of-memory kill …): requests in flight are lost."""
        if not self.running:
            return
        self.stderr_write_line(f"fatal: {reason}")
        self._stop(exit_code)

    def _stop(self, code: int) -> None:
        if self._exit_code is None:
            self._exit_code = code
        assert self._scope is not None
        self._scope.cancel()

    # -- the pipes, as the process writes them ---------------------------------------------------
    def connect(self) -> StdioClientStream:
        """The client end of this process's pipes. Exactly one client per process."""
        if self.client is not None:
            raise AlreadyConnected(
                f"the stdio server {self.name!r} (process {self.pid}) already has its client; stdio is one "
                "client per server process — launch another process for another client")
        self.client = StdioClientStream(self)
        return self.client

    def stdout_write_line(self, line: str) -> None:
        """Write one line to stdout (the process-side primitive every stdout write ends in)."""
        if self.stdout_pipe.closed or self.returncode is not None:
            return
        for shipment in self.to_client.plan(line):
            self.sim.recorder.record_message(
                link=self.info.name, sender=self.info.server, receiver=self.info.client, raw=shipment.frame,
                revision=self.server_stream.revision, transport="stdio", marks=shipment.marks,
                framing={"stdio": {"stream": "stdout", "line": shipment.frame + "\n"}})
            self._act(shipment)
            self.to_client.ship(shipment, self._feed_stdout)

    def stdout_write_raw(self, text: str) -> None:
        """Write arbitrary text to stdout, e.g. a debug print. Every ``\\n`` ends a line on the wire."""
        lines = text.split("\n")
        if text.endswith("\n"):
            lines.pop()
        for line in lines:
            self.stdout_write_line(line)

    def stderr_write_line(self, line: str) -> None:
        """A log line on stderr: recorded as a ``log`` event, never as an error."""
        if self.stderr_pipe.closed:
            return
        self.stderr_lines.append(line)
        self.sim.recorder.record_event(kind="log", link=self.info.name, sender=self.info.server,
                                       receiver=self.info.client, text=line, transport="stdio",
                                       framing={"stdio": {"stream": "stderr", "line": line + "\n"}})
        self.stderr_pipe.feed((line + "\n").encode("utf-8"))

    def stderr_write(self, text: str) -> None:
        """Write text to stderr; each line becomes a ``log`` event."""
        self.stderr.write(text if text.endswith("\n") else text + "\n")

    def _feed_stdout(self, line: str) -> None:
        self.stdout_pipe.feed((line + "\n").encode("utf-8"))

    def _feed_stdin(self, line: str) -> None:
        self.stdin_pipe.feed((line + "\n").encode("utf-8"))

    def _act(self, shipment: Shipment) -> None:
        if shipment.action == "crash":
            self.crash(reason=f"crashed while line {shipment.number} was on the wire (fault crash_at)")
        elif shipment.action in ("disconnect", "cut"):
            self._event("the pipes broke (fault disconnect_at)", ("disconnect",))
            self.stdin_pipe.close()
            self.to_client.ship_control(self.stdout_pipe.close)

    def _event(self, text: str, marks: tuple[str, ...]) -> None:
        self.sim.recorder.record_event(kind="transport", link=self.info.name, sender=self.info.client,
                                       receiver=self.info.server, text=text, transport="stdio", marks=marks)


class StdioServerStream:
    """The server program's end: it reads its stdin and writes its stdout."""

    def __init__(self, process: SimulatedProcess) -> None:
        self.process = process
        self.info = process.info
        self.revision: str | None = None
        self.auth: AuthInfo | None = process.auth
        """The identity the process was launched with (stdio has no tokens: the launching user's)."""

    async def send(self, message: JSONRPCMessage, *, related_request_id: RequestId | None = None) -> None:
        if self.process.returncode is not None or self.process.stdout_pipe.closed:
            raise TransportClosed(f"process {self.process.pid}'s stdout is closed")
        self.process.stdout_write_line(encode(message))

    async def receive(self) -> JSONRPCMessage | InvalidMessage:
        line = await self.process.stdin_pipe.read_line()
        if line is None:
            raise anyio.EndOfStream
        return decode_frame(line, self.revision)

    async def aclose(self) -> None:
        """The server closes its stdout: the client sees end-of-file (the spec's server-side shutdown)."""
        self.process.to_client.ship_control(self.process.stdout_pipe.close)


class StdioClientStream:
    """The client's end of a stdio link: it writes the server's stdin and reads its stdout.

    ``process`` is the current server process; :meth:`restart` replaces it with a fresh one (a new
    server session: a legacy client must ``initialize`` again, a modern one re-sends
    ``subscriptions/listen``). :meth:`aclose` runs the spec's shutdown sequence.
    """

    def __init__(self, process: SimulatedProcess, *, shutdown_grace: float = 2.0) -> None:
        self.process = process
        self.info = process.info
        self.sim = process.sim
        self.revision: str | None = None
        self.auth: AuthInfo | None = None
        self.shutdown_grace = shutdown_grace
        """Seconds (simulated) to wait after closing stdin, and again after SIGTERM."""

    async def send(self, message: JSONRPCMessage, *, related_request_id: RequestId | None = None) -> None:
        self._write_line(encode(message))

    async def send_raw(self, text: str) -> None:
        """Write arbitrary text to the server's stdin (an experiment: a client that breaks the rule)."""
        lines = text.split("\n")
        if text.endswith("\n"):
            lines.pop()
        for line in lines:
            self._write_line(line)

    def _write_line(self, line: str) -> None:
        process = self.process
        if process.returncode is not None or process.stdin_pipe.closed:
            raise TransportClosed(f"broken pipe: process {process.pid} is not reading its stdin "
                                  f"(exit code {process.returncode})")
        for shipment in process.to_server.plan(line):
            self.sim.recorder.record_message(
                link=self.info.name, sender=self.info.client, receiver=self.info.server, raw=shipment.frame,
                revision=self.revision, transport="stdio", marks=shipment.marks,
                framing={"stdio": {"stream": "stdin", "line": shipment.frame + "\n"}})
            process._act(shipment)
            process.to_server.ship(shipment, process._feed_stdin)

    async def receive(self) -> JSONRPCMessage | InvalidMessage:
        line = await self.process.stdout_pipe.read_line()
        if line is None:
            raise anyio.EndOfStream
        return decode_frame(line, self.revision)

    async def read_stderr_line(self) -> str | None:
        """The next line the server wrote to stderr (``None`` at end-of-file)."""
        line = await self.process.stderr_pipe.read_line()
        return None if line is None else line.decode("utf-8", errors="replace")

    async def aclose(self) -> None:
        """Shut the server down the way the spec says: close stdin, wait; SIGTERM, wait; SIGKILL."""
        process = self.process
        if process.returncode is not None:
            return
        process._event(f"client closes process {process.pid}'s stdin (shutdown step 1)", ("shutdown",))
        process.stdin_pipe.close()
        with anyio.move_on_after(self.shutdown_grace):
            await process.wait()
            return
        process._event(f"process {process.pid} still running {self.shutdown_grace:g} s after stdin closed "
                       "(shutdown step 2: SIGTERM)", ("shutdown",))
        process.terminate()
        with anyio.move_on_after(self.shutdown_grace):
            await process.wait()
            return
        process._event(f"process {process.pid} still running {self.shutdown_grace:g} s after SIGTERM "
                       "(shutdown step 3: SIGKILL)", ("shutdown",))
        process.kill()
        await process.wait()

    async def restart(self) -> StdioClientStream:
        """Launch a fresh server process and connect this client end to it; returns ``self``.

        Whatever was in flight to the old process is lost; the caller retries its requests. The link
        (and its fault plan and frame numbering) carries over, the server session does not."""
        old = self.process
        if old.returncode is None:
            old.kill()
            await old.wait()
        new = SimulatedProcess(old.sim, old.task_group, old.name, old.main, faults=old.faults, auth=old.auth,
                               command=old.command, exits_on_stdin_eof=old.exits_on_stdin_eof,
                               handles_sigterm=old.handles_sigterm, wires=(old.to_server, old.to_client),
                               generation=old.generation + 1)
        new.client = self
        self.process = new
        await new.start()
        return self
