"""The accelerated twin of the memory transport (:mod:`mcp_sim.transports.memory`; see
:mod:`mcp_sim.accelerated`).

:func:`pipe` makes the two ends of one direction of a link: a queue of texts and, when the queue is
empty, the one reader waiting for the next frame. It does what an anyio memory object stream does
for the readable transport — the same method names and errors (``EndOfStream`` once the writer
closed and every frame was read, ``ClosedResourceError`` for an end used after it was closed,
``BrokenResourceError`` when writing to a reader that is gone; a full pipe makes the writer wait)
and the same turns of the event loop (a reader with nothing to read lets the other tasks run once
before it waits), so every task runs in the same order and the trace is the same, byte for byte —
with a fraction of the Python steps. Frames are encoded and decoded with the codec's accelerated
twin (:mod:`mcp_sim.wire.jsonrpc_accelerated`).

No direct delivery (:func:`~mcp_sim.transports.base.deliver_directly`): handing a frame to the
receiving session inside ``send`` saves turns of the loop, and so it lets tasks on different links
run in another order than on the readable pipe — a different trace.

This module holds the pipe and the sending/receiving methods only; :mod:`mcp_sim.transports.memory`
combines them with its readable stream end.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import TYPE_CHECKING, Any

import anyio

from mcp_sim.transports.base import TransportClosed
from mcp_sim.wire import jsonrpc_accelerated
from mcp_sim.wire.jsonrpc import InvalidMessage, JSONRPCMessage, RequestId

if TYPE_CHECKING:
    from mcp_sim.sim.world import Simulation
    from mcp_sim.transports.base import LinkInfo


class _Pipe:
    """One direction of a memory link: frames in order, one reader, one writer."""

    def __init__(self, buffer: float) -> None:
        self.frames: deque[str] = deque()
        self.buffer = buffer
        self.reader: asyncio.Future[None] | None = None
        """The reader's wake-up call, while it waits for a frame."""
        self.writers: deque[asyncio.Future[None]] = deque()
        """Writers waiting for room (only when ``buffer`` is finite)."""
        self.writer_closed = False
        self.reader_closed = False

    def wake_reader(self) -> None:
        reader, self.reader = self.reader, None
        if reader is not None and not reader.done():
            reader.set_result(None)

    def wake_writers(self) -> None:
        while self.writers:
            writer = self.writers.popleft()
            if not writer.done():
                writer.set_result(None)


class _PipeWriter:
    """The sending end of a :class:`_Pipe`."""

    def __init__(self, pipe: _Pipe) -> None:
        self._pipe = pipe

    def send_nowait(self, text: str) -> None:
        pipe = self._pipe
        if pipe.writer_closed:
            raise anyio.ClosedResourceError
        if pipe.reader_closed:
            raise anyio.BrokenResourceError
        if len(pipe.frames) >= pipe.buffer:
            raise anyio.WouldBlock
        pipe.frames.append(text)
        pipe.wake_reader()

    async def send(self, text: str) -> None:
        pipe = self._pipe
        await asyncio.sleep(0)  # as anyio's ``send`` does: the other tasks run once first
        while len(pipe.frames) >= pipe.buffer and not (pipe.writer_closed or pipe.reader_closed):
            room = asyncio.get_running_loop().create_future()
            pipe.writers.append(room)
            await room
        self.send_nowait(text)

    def close(self) -> None:
        self._pipe.writer_closed = True
        self._pipe.wake_reader()  # a waiting reader learns the stream ended
        self._pipe.wake_writers()

    async def aclose(self) -> None:
        self.close()


class _PipeReader:
    """The receiving end of a :class:`_Pipe`."""

    def __init__(self, pipe: _Pipe) -> None:
        self._pipe = pipe

    async def receive(self) -> str:
        pipe = self._pipe
        if pipe.frames and not pipe.reader_closed and not pipe.writers:
            return pipe.frames.popleft()  # the usual case: a frame is waiting
        if not pipe.frames and not pipe.reader_closed and not pipe.writer_closed:
            # Nothing to read yet: let the other tasks run once before waiting, exactly as anyio's
            # ``receive`` does, so that every task runs in the same order as on the readable pipe.
            await asyncio.sleep(0)
        while not pipe.frames:
            if pipe.reader_closed:
                raise anyio.ClosedResourceError
            if pipe.writer_closed:
                raise anyio.EndOfStream
            if pipe.reader is not None:
                raise anyio.BusyResourceError("receiving")
            woken = pipe.reader = asyncio.get_running_loop().create_future()
            try:
                await woken
            finally:
                if pipe.reader is woken:
                    pipe.reader = None
        if pipe.reader_closed:
            raise anyio.ClosedResourceError
        text = pipe.frames.popleft()
        if pipe.writers:
            pipe.wake_writers()
        return text

    def close(self) -> None:
        self._pipe.reader_closed = True
        self._pipe.wake_reader()
        self._pipe.wake_writers()

    async def aclose(self) -> None:
        self.close()


def pipe(buffer: float) -> tuple[_PipeWriter, _PipeReader]:
    """The (sending, receiving) ends of one direction of a link, as ``anyio.create_memory_object_stream``."""
    shared = _Pipe(buffer)
    return _PipeWriter(shared), _PipeReader(shared)


class PipeEnd:
    """The memory stream end's sending and receiving, on a :func:`pipe`, with the accelerated codec."""

    if TYPE_CHECKING:  # provided by the readable MemoryStream this is combined with
        sim: Simulation
        info: LinkInfo
        me: str
        peer: str
        revision: str | None
        _outbox: Any
        _inbox: Any

    async def send(self, message: JSONRPCMessage, *, related_request_id: RequestId | None = None) -> None:
        text = jsonrpc_accelerated.encode(message)
        self.sim.recorder.record_sent(self.info.name, self.me, self.peer, text, self.revision, "memory", message)
        try:
            try:
                self._outbox.send_nowait(text)
            except anyio.WouldBlock:
                await self._outbox.send(text)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            raise TransportClosed(f"{self.peer} is no longer connected") from exc

    async def receive(self) -> JSONRPCMessage | InvalidMessage:
        return jsonrpc_accelerated.decode(await self._inbox.receive())
