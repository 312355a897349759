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

No direct delivery: handing a frame to the receiving session inside ``send`` saves turns of the
loop, and so it lets tasks on different links run in another order than on the readable pipe — a
different trace.

This module holds the pipe and the sending/receiving methods only; :mod:`mcp_sim.transports.memory`
combines them with its readable stream end.
"""

from __future__ import annotations

import asyncio
import types
from collections import deque
from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import anyio

from mcp_sim.transports.base import TransportClosed
from mcp_sim.wire.jsonrpc import InvalidMessage, JSONRPCMessage, RequestId
from mcp_sim.wire.jsonrpc_accelerated import decode as _decode
from mcp_sim.wire.jsonrpc_accelerated import encode as _encode

if TYPE_CHECKING:
    from mcp_sim.sim.world import Simulation
    from mcp_sim.transports.base import LinkInfo


@types.coroutine
def _other_tasks_first() -> Generator[None, None, None]:
    """Let every other task that is ready run once, then go on: what ``await asyncio.sleep(0)`` does
    (a bare ``yield`` to the task running this coroutine, which puts itself at the back of the ready
    queue), without the steps ``sleep`` takes to find out that its delay is zero."""
    yield


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
        self.open = True
        """Neither end closed: the one flag the usual send and receive look at."""

    def close_writer(self) -> None:
        self.writer_closed = True
        self.open = False
        self.wake_reader()  # a waiting reader learns the stream ended
        self.wake_writers()

    def close_reader(self) -> None:
        self.reader_closed = True
        self.open = False
        self.wake_reader()
        self.wake_writers()

    def put(self, text: str) -> bool:
        """Queue ``text`` and wake the reader, when there is room and neither end is closed (the
        usual case); ``False`` leaves everything as it was (then :meth:`_PipeWriter.send_nowait`
        says why it cannot)."""
        if self.open and len(self.frames) < self.buffer:
            self.frames.append(text)
            reader = self.reader
            if reader is not None:
                self.reader = None
                if not reader.done():
                    reader.set_result(None)
            return True
        return False

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
        if pipe.put(text):
            return
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
        await _other_tasks_first()  # as anyio's ``send`` does
        while len(pipe.frames) >= pipe.buffer and not (pipe.writer_closed or pipe.reader_closed):
            room: asyncio.Future[None] = asyncio.Future()
            pipe.writers.append(room)
            await room
        self.send_nowait(text)

    def close(self) -> None:
        self._pipe.close_writer()

    async def aclose(self) -> None:
        self.close()


class _PipeReader:
    """The receiving end of a :class:`_Pipe`."""

    def __init__(self, pipe: _Pipe) -> None:
        self._pipe = pipe

    async def receive(self) -> str:
        pipe = self._pipe
        frames = pipe.frames
        if not frames and pipe.open:
            # Nothing to read yet: let the other tasks run once before waiting, exactly as anyio's
            # ``receive`` does, so that every task runs in the same order as on the readable pipe.
            await _other_tasks_first()
            if not frames and pipe.open and pipe.reader is None:
                woken = pipe.reader = asyncio.Future()
                try:
                    await woken
                finally:
                    if pipe.reader is woken:
                        pipe.reader = None
        if frames and not pipe.reader_closed and not pipe.writers:
            return frames.popleft()  # the usual case: a frame is waiting
        return await self._receive_otherwise()

    async def _receive_otherwise(self) -> str:
        """The rest of ``receive``: a closed end, a busy reader, a writer waiting for room."""
        pipe = self._pipe
        while not pipe.frames:
            if pipe.reader_closed:
                raise anyio.ClosedResourceError
            if pipe.writer_closed:
                raise anyio.EndOfStream
            if pipe.reader is not None:
                raise anyio.BusyResourceError("receiving")
            woken = pipe.reader = asyncio.Future()
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
        self._pipe.close_reader()

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

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._sending: _Pipe = self._outbox._pipe
        self._receiving: _Pipe = self._inbox._pipe

    def sends_at_once(self) -> bool:
        """True when :meth:`send` will hand the next message over without waiting (room on the wire,
        both ends open): a caller need not prepare for a send that waits."""
        pipe = self._sending
        return pipe.open and len(pipe.frames) < pipe.buffer

    async def send(self, message: JSONRPCMessage, *, related_request_id: RequestId | None = None) -> None:
        text = _encode(message)
        self.sim.recorder.record_sent(self.info.name, self.me, self.peer, text, self.revision, "memory", message)
        pipe = self._sending
        if pipe.open and len(pipe.frames) < pipe.buffer:
            # The usual case, _Pipe.put's steps taken here: room on the wire, handed over without waiting.
            pipe.frames.append(text)
            reader = pipe.reader
            if reader is not None:
                pipe.reader = None
                if not reader.done():
                    reader.set_result(None)
            return
        try:
            try:
                self._outbox.send_nowait(text)
            except anyio.WouldBlock:
                await self._outbox.send(text)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            raise TransportClosed(f"{self.peer} is no longer connected") from exc

    async def receive(self) -> JSONRPCMessage | InvalidMessage:
        # The steps of _PipeReader.receive (see there), taken here: one coroutine less per frame.
        pipe = self._receiving
        frames = pipe.frames
        if not frames and pipe.open:
            await _other_tasks_first()
            if not frames and pipe.open and pipe.reader is None:
                woken: asyncio.Future[None] = asyncio.Future()
                pipe.reader = woken
                try:
                    await woken
                finally:
                    if pipe.reader is woken:
                        pipe.reader = None
        if frames and not pipe.reader_closed and not pipe.writers:
            return _decode(frames.popleft())
        return _decode(await self._inbox._receive_otherwise())
