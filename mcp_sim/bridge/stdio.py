"""The real stdio transport: newline-delimited JSON over a process's stdin and stdout (course chapter 12).

The rules (all revisions):

* the client launches the server as a subprocess and writes JSON-RPC messages to its **stdin**; the
  server writes its messages to **stdout**. UTF-8, one message per line, no embedded newlines (JSON
  escapes them inside strings, so an encoded message never contains one);
* the server MUST NOT write anything to stdout that is not a valid MCP message — a stray ``print``
  corrupts the protocol. Logs go to **stderr**, which the client may show, forward or ignore;
* shutdown: the client closes the server's stdin, waits for it to exit, then sends SIGTERM, then
  SIGKILL. A server SHOULD exit when its stdin reaches end-of-file.

Two ends live here. :class:`StdioServerStream` is a server's end over *this* process's stdin and
stdout (what ``mcp-sim serve`` uses); :func:`spawn_stdio` starts a real server command and yields a
:class:`StdioClientStream` over its pipes. Both are :class:`~mcp_sim.transports.base.MessageStream`
implementations, so the simulator's sessions run over them unchanged, and both record every line
they write or read in a recorder, so a real session can be replayed like a simulated one.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import IO

import anyio
import anyio.abc
import anyio.to_thread

from mcp_sim.bridge.recording import WallClockRecorder, stamp
from mcp_sim.protocol.revisions import REVISIONS
from mcp_sim.security.identity import AuthInfo
from mcp_sim.trace.recorder import Recorder
from mcp_sim.transports.base import LinkInfo, TransportClosed
from mcp_sim.wire.jsonrpc import Batch, InvalidMessage, JSONRPCMessage, RequestId, decode, encode

logger = logging.getLogger(__name__)

SHUTDOWN_GRACE_SECONDS = 2.0
"""How long a server gets to exit on its own after its stdin closes, and again after SIGTERM."""


def _decode_line(line: bytes, revision: str | None) -> JSONRPCMessage | InvalidMessage:
    """One stdio line as a message. The simulator speaks 2025-06-18 and later, where a JSON-RPC batch
    is not allowed: a batch line is answered with -32600 like any other invalid request."""
    decoded = decode(line, allow_batch=False)
    assert not isinstance(decoded, Batch)
    return decoded


def _decode_server_line(line: bytes, revision: str | None) -> list[JSONRPCMessage | InvalidMessage]:
    """One line from a real server, as the messages it carries. A server that negotiated 2025-03-26
    may send a JSON-RPC batch (that revision allowed them and required receivers to accept them): its
    items are read one by one. In every other revision a batch is one invalid message."""
    rev = REVISIONS.get(revision) if revision is not None else None
    decoded = decode(line, allow_batch=rev is not None and rev.batching)
    return list(decoded.items) if isinstance(decoded, Batch) else [decoded]


# --- the server's end: this process's stdin and stdout ------------------------------------------------

@contextmanager
def claim_stdout() -> Iterator[IO[bytes]]:
    """Reserve the real stdout for protocol messages and send every other write to stderr.

    The protocol gets a private duplicate of file descriptor 1; then fd 1 itself is pointed at
    stderr. A stray ``print()`` — from a handler, a library, even C code — now lands in the log
    instead of corrupting the JSON stream the client is parsing. Restored on exit."""
    sys.stdout.flush()
    private_fd = os.dup(1)
    os.dup2(2, 1)
    wire = os.fdopen(private_fd, "wb", buffering=0)
    try:
        yield wire
    finally:
        try:
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
        os.dup2(private_fd, 1)
        wire.close()


class StdioServerStream:
    """A server's end of a stdio link: read lines from stdin, write lines to stdout.

    ``stdin``/``stdout`` default to this process's own (binary) streams; pass others to test. Reads
    and writes happen in worker threads so a slow pipe never blocks the event loop."""

    def __init__(self, info: LinkInfo, *, recorder: Recorder | None = None,
                 stdin: IO[bytes] | None = None, stdout: IO[bytes] | None = None,
                 auth: AuthInfo | None = None) -> None:
        self.info = info
        self.revision: str | None = None
        self.auth = auth
        self.recorder = recorder if recorder is not None else WallClockRecorder()
        self._stdin = stdin if stdin is not None else sys.stdin.buffer
        self._stdout = stdout if stdout is not None else sys.stdout.buffer
        self._write_lock = anyio.Lock()
        self._closed = False

    def _record(self, raw: str, sender: str, receiver: str, pipe: str) -> None:
        self.recorder.record_message(link=self.info.name, sender=sender, receiver=receiver, raw=raw,
                                     revision=self.revision, transport="stdio",
                                     framing={"stdio": {"stream": pipe, "bytes": len(raw.encode()) + 1}},
                                     t_ms=stamp(self.recorder))

    async def send(self, message: JSONRPCMessage, *, related_request_id: RequestId | None = None) -> None:
        await self.send_raw(encode(message))

    async def send_raw(self, text: str) -> None:
        """Write one line to stdout (the text must not contain a newline)."""
        if self._closed:
            raise TransportClosed("the stdio link is closed")
        self._record(text, self.info.server, self.info.client, "stdout")
        data = text.encode("utf-8") + b"\n"

        def write() -> None:
            self._stdout.write(data)
            self._stdout.flush()

        async with self._write_lock:
            try:
                await anyio.to_thread.run_sync(write)
            except (BrokenPipeError, OSError, ValueError) as exc:
                raise TransportClosed("the client closed our stdout") from exc

    async def receive(self) -> JSONRPCMessage | InvalidMessage:
        while True:
            if self._closed:
                raise anyio.EndOfStream
            line = await anyio.to_thread.run_sync(self._stdin.readline, abandon_on_cancel=True)
            if not line:
                logger.info("stdin reached end-of-file: the client is done")
                raise anyio.EndOfStream
            line = line.rstrip(b"\r\n")
            if not line.strip():
                continue  # a blank line carries no message; nothing to answer
            raw = line.decode("utf-8", errors="replace")
            self._record(raw, self.info.client, self.info.server, "stdin")
            return _decode_line(line, self.revision)

    async def aclose(self) -> None:
        self._closed = True


# --- the client's end: a real server subprocess -----------------------------------------------------

class StdioClientStream:
    """A client's end of a stdio link to a running server process (made by :func:`spawn_stdio`)."""

    def __init__(self, info: LinkInfo, process: anyio.abc.Process, recorder: Recorder,
                 inbox: anyio.abc.ObjectReceiveStream[JSONRPCMessage | InvalidMessage]) -> None:
        self.info = info
        self.revision: str | None = None
        self.auth: AuthInfo | None = None
        self.process = process
        self.recorder = recorder
        self._inbox = inbox
        self._write_lock = anyio.Lock()
        self._stdin_closed = False

    @property
    def pid(self) -> int:
        return self.process.pid

    async def send(self, message: JSONRPCMessage, *, related_request_id: RequestId | None = None) -> None:
        await self.send_raw(encode(message))

    async def send_raw(self, text: str) -> None:
        """Write one line to the server's stdin — any text, for experiments with malformed frames."""
        if self._stdin_closed or self.process.stdin is None:
            raise TransportClosed("the server's stdin is closed")
        self.recorder.record_message(link=self.info.name, sender=self.info.client, receiver=self.info.server,
                                     raw=text, revision=self.revision, transport="stdio",
                                     framing={"stdio": {"stream": "stdin", "bytes": len(text.encode()) + 1}},
                                     t_ms=stamp(self.recorder))
        async with self._write_lock:
            try:
                await self.process.stdin.send(text.encode("utf-8") + b"\n")
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, BrokenPipeError) as exc:
                raise TransportClosed(f"{self.info.server} is no longer reading its stdin") from exc

    async def receive(self) -> JSONRPCMessage | InvalidMessage:
        try:
            return await self._inbox.receive()
        except anyio.ClosedResourceError:
            raise anyio.EndOfStream from None

    async def close_stdin(self) -> None:
        """The first step of a stdio shutdown: tell the server we are done."""
        if not self._stdin_closed and self.process.stdin is not None:
            self._stdin_closed = True
            try:
                await self.process.stdin.aclose()
            except (anyio.BrokenResourceError, OSError):
                pass

    async def aclose(self) -> None:
        await self.close_stdin()


async def _read_lines(stream: anyio.abc.ByteReceiveStream) -> AsyncIterator[bytes]:
    """Split a byte stream into lines (without their line ending); the last partial line too."""
    buffer = b""
    while True:
        try:
            chunk = await stream.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            break
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        for line in lines:
            yield line.rstrip(b"\r")
    if buffer:
        yield buffer.rstrip(b"\r")


async def _wait_exit(process: anyio.abc.Process, timeout: float) -> bool:
    """Poll for the process's exit (``process.wait()`` would also wait for its pipes to close)."""
    with anyio.move_on_after(timeout):
        while process.returncode is None:
            await anyio.sleep(0.01)
    return process.returncode is not None


async def stop_process(process: anyio.abc.Process, *, grace: float = SHUTDOWN_GRACE_SECONDS,
                       close_stdin: bool = True) -> str:
    """The spec's shutdown sequence: close stdin → wait → SIGTERM → wait → SIGKILL.

    Returns how the process ended: ``"exited"``, ``"terminated"`` or ``"killed"``."""
    with anyio.CancelScope(shield=True):
        if close_stdin and process.stdin is not None:
            try:
                await process.stdin.aclose()
            except (anyio.BrokenResourceError, OSError):
                pass
        if await _wait_exit(process, grace):
            return "exited"
        try:
            process.terminate()
        except ProcessLookupError:
            return "exited"
        if await _wait_exit(process, grace):
            return "terminated"
        try:
            process.kill()
        except ProcessLookupError:
            pass
        await _wait_exit(process, grace)
    return "killed"


def link_name(command: Sequence[str]) -> str:
    """A readable name for the link to ``command``: its last word that is not an option
    (``python -m mcp_sim.cli serve weather`` → ``weather``, ``python server.py`` → ``server``)."""
    words = [w for w in command[1:] if not w.startswith("-")] or [command[0]]
    base = os.path.basename(words[-1].rstrip("/\\"))
    for suffix in (".py", ".js", ".ts", ".mjs"):
        base = base.removesuffix(suffix)
    return base or "server"


@asynccontextmanager
async def spawn_stdio(command: Sequence[str], *, name: str | None = None, recorder: Recorder | None = None,
                      env: Mapping[str, str] | None = None, cwd: str | None = None,
                      grace: float = SHUTDOWN_GRACE_SECONDS) -> AsyncIterator[StdioClientStream]:
    """Start ``command`` as a real MCP server over stdio and yield the client's end of the link.

    The server's stdout lines become messages (each recorded as it arrives); its stderr lines become
    ``log`` events in the trace and records of the ``mcp_sim.bridge.stdio`` logger. Leaving the block
    shuts the server down the way the spec says: close stdin, wait, SIGTERM, wait, SIGKILL.

    ``env`` entries are added to this process's environment for the child."""
    if not command:
        raise ValueError("a server command is needed, e.g. ['python', 'server.py']")
    name = name or link_name(command)
    recorder = recorder if recorder is not None else WallClockRecorder()
    info = LinkInfo(name=name, transport="stdio", client=f"client/{name}", server=f"server/{name}")
    child_env: dict[str, str] | None = None
    if env:
        child_env = {**os.environ, **env}
    process = await anyio.open_process(list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, env=child_env, cwd=cwd)
    recorder.record_event(kind="transport", link=name, sender=info.client, receiver=info.server,
                          text=f"spawned process {process.pid}: {' '.join(command)}", transport="stdio")
    send_inbox, inbox = anyio.create_memory_object_stream[JSONRPCMessage | InvalidMessage](256)
    stream = StdioClientStream(info, process, recorder, inbox)

    stdout_done, stderr_done = anyio.Event(), anyio.Event()

    async def read_stdout() -> None:
        assert process.stdout is not None
        async with send_inbox:
            async for line in _read_lines(process.stdout):
                if not line.strip():
                    continue
                raw = line.decode("utf-8", errors="replace")
                recorder.record_message(link=name, sender=info.server, receiver=info.client, raw=raw,
                                        revision=stream.revision, transport="stdio",
                                        framing={"stdio": {"stream": "stdout", "bytes": len(line) + 1}},
                                        t_ms=stamp(recorder))
                try:
                    for message in _decode_server_line(line, stream.revision):
                        await send_inbox.send(message)
                except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                    break
        stdout_done.set()

    async def read_stderr() -> None:
        assert process.stderr is not None
        async for line in _read_lines(process.stderr):
            text = line.decode("utf-8", errors="replace")
            logger.info("[%s stderr] %s", name, text)
            recorder.record_event(kind="log", link=name, sender=info.server, receiver=info.client, text=text,
                                  transport="stdio", framing={"stdio": {"stream": "stderr"}},
                                  revision=stream.revision)
        stderr_done.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(read_stdout)
        tg.start_soon(read_stderr)
        try:
            yield stream
        finally:
            stream._stdin_closed = True
            how = await stop_process(process, grace=grace)
            # The pipes reach end-of-file once the process is gone: let the readers record the
            # last lines it wrote (bounded, in case a grandchild still holds a pipe open).
            with anyio.CancelScope(shield=True), anyio.move_on_after(grace):
                await stdout_done.wait()
                await stderr_done.wait()
            recorder.record_event(kind="transport", link=name, sender=info.server, receiver=info.client,
                                  text=f"process {process.pid} {how} with code {process.returncode}",
                                  transport="stdio")
            tg.cancel_scope.cancel()
            await inbox.aclose()
            for pipe in (process.stdout, process.stderr):
                if pipe is not None:
                    with anyio.CancelScope(shield=True):
                        await pipe.aclose()
