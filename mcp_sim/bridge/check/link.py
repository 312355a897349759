"""The checker's end of a real stdio pipe: raw lines out, every frame recorded, answers by id.

``mcp-sim check`` must be able to send what no well-behaved client sends — a line of broken JSON,
bytes that are not UTF-8, a reused id — so it does not drive the server through the simulator's
:class:`~mcp_sim.roles.client.Client`. A :class:`ProbeLink` starts the server with
:func:`~mcp_sim.bridge.stdio.spawn_stdio` (the same spawn, shutdown and recording as ``mcp-sim
connect``), writes lines of its own choosing, and waits for the response with a given id by
listening to the recorder: what the checker waits for and what the checkers later read are the same
recorded events.

Each frame sent can carry *marks* (``expect:…``, ``nemesis:…``): they say what the workload meant by
it, so the checkers, which read only the trace, know what answer to hold the server to.

The server may send requests of its own (a legacy server may ask for elicitation, roots or a ping):
the link answers them as a client with nothing to offer would — ``ping`` with ``{}``, ``roots/list``
with no roots, an elicitation with ``decline`` — so that a call waiting on such a request can end.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextlib import AsyncExitStack
from typing import Any

import anyio

from mcp_sim.bridge.recording import stamp
from mcp_sim.bridge.stdio import StdioClientStream, spawn_stdio
from mcp_sim.trace.event import TraceEvent
from mcp_sim.trace.recorder import Recorder
from mcp_sim.transports.base import MessageStream
from mcp_sim.wire.jsonrpc import JSONRPCRequest, parse_object

_ANSWERS: dict[str, dict[str, Any]] = {"ping": {}, "roots/list": {"roots": []},
                                       "elicitation/create": {"action": "decline"}}
"""How the link answers a server's own requests (anything else gets -32601)."""


def frame(obj: Any) -> str:
    """One message as one line of compact JSON (JSON escapes any newline inside a string)."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


class ProbeLink:
    """A spawned stdio server that the checker writes raw lines to. Use ``async with``."""

    transport = "stdio"

    def __init__(self, command: Sequence[str], recorder: Recorder, name: str, *, deadline: float,
                 revision: str | None = None, grace: float = 2.0) -> None:
        self.command = list(command)
        self.recorder = recorder
        self.name = name
        self.deadline = deadline
        self.revision = revision
        self.grace = grace
        self.next_id = 1
        self._stream: StdioClientStream | None = None
        self._stack: AsyncExitStack | None = None
        self._responses: dict[Any, list[TraceEvent]] = {}
        self._dead_noted: int | None = None
        recorder.subscribe(self._hear)

    # -- hearing -----------------------------------------------------------------------------------
    def _hear(self, event: TraceEvent) -> None:
        """A recorder listener: note each response the server writes on this link, by id."""
        if event.link != self.name or event.sender != f"server/{self.name}":
            return
        if event.kind in ("response", "error") and event.request_id is not None:
            key = _key(event.request_id)
            self._responses.setdefault(key, []).append(event)

    # -- the process -------------------------------------------------------------------------------
    async def __aenter__(self) -> ProbeLink:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def start(self) -> None:
        """Spawn the server and start answering its own requests."""
        stack = AsyncExitStack()
        self._stream = await stack.enter_async_context(
            spawn_stdio(self.command, name=self.name, recorder=self.recorder, grace=self.grace))
        self._stream.revision = self.revision
        group = await stack.enter_async_context(anyio.create_task_group())
        stack.callback(group.cancel_scope.cancel)
        group.start_soon(self._serve_server_requests, self._stream)
        self._stack = stack

    async def stop(self) -> None:
        """Close stdin and shut the server down (close, wait, SIGTERM, SIGKILL), recording how it ended."""
        stack, self._stack = self._stack, None
        if stack is None:
            return
        if not self.alive:
            self.note_death()
        else:
            self.recorder.record_event(kind="transport", link=self.name, sender=f"client/{self.name}",
                                       receiver=f"server/{self.name}", transport="stdio",
                                       text="check: closing the server's stdin", marks=("check:close",))
        await stack.aclose()
        self._stream = None

    async def kill(self) -> None:
        """SIGKILL the server at once (the nemesis's crash), then let the link close."""
        self.note_death()  # a process that is already gone ended by itself, not by the nemesis
        if self._stream is not None and self.alive:
            self.recorder.record_event(kind="transport", link=self.name, sender=f"client/{self.name}",
                                       receiver=f"server/{self.name}", transport="stdio",
                                       text=f"nemesis: SIGKILL process {self._stream.pid}", marks=("nemesis:kill",))
            try:
                self._stream.process.kill()
            except ProcessLookupError:
                pass
        stack, self._stack = self._stack, None
        if stack is not None:
            await stack.aclose()
        self._stream = None

    def set_revision(self, revision: str) -> None:
        """The revision agreed: frames recorded from now on are labelled with it."""
        self.revision = revision
        if self._stream is not None:
            self._stream.revision = revision

    def note_death(self) -> None:
        """Record, once per process, that the server ended by itself (no stdin closed, no SIGKILL)."""
        stream = self._stream
        if stream is None or stream.process.returncode is None or self._dead_noted == stream.pid:
            return
        self._dead_noted = stream.pid
        self.recorder.record_event(kind="transport", link=self.name, sender=f"server/{self.name}",
                                   receiver=f"client/{self.name}", transport="stdio", marks=("check:dead",),
                                   text=f"check: process {stream.pid} ended by itself with code "
                                        f"{stream.process.returncode}")

    @property
    def alive(self) -> bool:
        return self._stream is not None and self._stream.process.returncode is None

    async def _serve_server_requests(self, stream: MessageStream) -> None:
        while True:
            try:
                message = await stream.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError):
                return
            except Exception:
                continue
            if isinstance(message, JSONRPCRequest):
                answer = _ANSWERS.get(message.method)
                reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message.id}
                if answer is None:
                    reply["error"] = {"code": -32601, "message": f"this checker offers no {message.method}"}
                else:
                    reply["result"] = answer
                try:
                    await stream.send(parse_object(reply))  # type: ignore[arg-type]
                except Exception:  # the server went away: nothing left to answer
                    return

    # -- writing -----------------------------------------------------------------------------------
    def new_id(self) -> int:
        """A fresh request id (ids count up across restarts, so none is ever reused by accident)."""
        value, self.next_id = self.next_id, self.next_id + 1
        return value

    async def send_line(self, text: str, *marks: str) -> TraceEvent | None:
        """Write one line of text to the server's stdin; returns its trace event (``None`` if the pipe is gone)."""
        if self._stream is None or not self.alive:
            self.note_death()
            return None
        self.recorder.mark_next(*marks)
        try:
            await self._stream.send_raw(text)
        except Exception:  # TransportClosed: the server is gone; the checkers see it in the trace
            return None
        return self.recorder.events[-1]

    async def send_bytes(self, data: bytes, *marks: str) -> TraceEvent | None:
        """Write raw bytes and a newline — bytes that need not be UTF-8 — recording them as they read."""
        stream = self._stream
        if stream is None or stream.process.stdin is None or not self.alive:
            self.note_death()
            return None
        event = self.recorder.record_message(
            link=self.name, sender=f"client/{self.name}", receiver=f"server/{self.name}",
            raw=data.decode("utf-8", errors="replace"), revision=self.revision, transport="stdio",
            framing={"stdio": {"stream": "stdin", "bytes": len(data) + 1}}, marks=marks,
            t_ms=stamp(self.recorder))
        try:
            await stream.process.stdin.send(data + b"\n")
        except Exception:
            return None
        return event

    async def send_split(self, text: str, cut: int, pause: float, *marks: str) -> TraceEvent | None:
        """Write one line in two pieces, ``pause`` seconds apart (cut at byte ``cut``): a slow pipe, or a
        writer that flushes mid-line. The trace records the frame once, as the server should read it."""
        stream = self._stream
        if stream is None or stream.process.stdin is None or not self.alive:
            self.note_death()
            return None
        data = text.encode("utf-8") + b"\n"
        cut = max(1, min(cut, len(data) - 1))
        event = self.recorder.record_message(
            link=self.name, sender=f"client/{self.name}", receiver=f"server/{self.name}", raw=text,
            revision=self.revision, transport="stdio", marks=marks, t_ms=stamp(self.recorder),
            framing={"stdio": {"stream": "stdin", "bytes": len(data), "pieces": [cut, len(data) - cut]}})
        try:
            await stream.process.stdin.send(data[:cut])
            await anyio.sleep(pause)
            await stream.process.stdin.send(data[cut:])
        except Exception:
            return None
        return event

    async def request(self, method: str, params: dict[str, Any] | None, *marks: str,
                      request_id: Any = None, wait: bool = True,
                      timeout: float | None = None) -> dict[str, Any] | None:
        """Send a request and (with ``wait``) return the first response with its id, or ``None`` when
        none came within the deadline or ``timeout`` (the checkers report it from the trace)."""
        rid = self.new_id() if request_id is None else request_id
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            message["params"] = params
        before = len(self._responses.get(_key(rid), ()))
        await self.send_line(frame(message), *marks)
        return await self.response(rid, after=before, timeout=timeout) if wait else None

    async def notify(self, method: str, params: dict[str, Any] | None, *marks: str) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self.send_line(frame(message), *marks)

    async def response(self, request_id: Any, *, after: int = 0,
                       timeout: float | None = None) -> dict[str, Any] | None:
        """The first response with ``request_id`` beyond the ``after`` already seen, waiting up to the
        deadline (or until the process ends) for it; ``None`` if none came."""
        key = _key(request_id)
        with anyio.move_on_after(self.deadline if timeout is None else timeout):
            while len(self._responses.get(key, ())) <= after and self.alive:
                await anyio.sleep(0.005)
        if len(self._responses.get(key, ())) <= after:
            await anyio.sleep(0.05)  # the process ended: its last lines may still be in the pipe
            self.note_death()
        events = self._responses.get(key, [])
        return events[after].message if len(events) > after else None

    async def settle(self, seconds: float = 0.2) -> None:
        """Give the server a moment to answer what it will (after frames that may get no answer)."""
        await anyio.sleep(seconds)


def _key(request_id: Any) -> str:
    """Ids compare by JSON value and type (``1`` and ``"1"`` are different ids)."""
    return frame(request_id)
