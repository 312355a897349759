"""The memory transport: a direct pipe, for lessons where the transport is not the point.

Each message is really encoded to JSON text, recorded, handed over and decoded again, so what the
trace shows is byte-for-byte what the other side parsed.

The pipe itself is the simplest thing that can carry frames between two tasks: a queue of texts and,
when the queue is empty, the one reader waiting for the next frame. Handing a frame to a waiting
reader wakes exactly that reader and nothing else, which keeps an in-process round trip cheap (the
benchmark in ``benchmarks/host.py`` measures it). A session may go one step further and ask for
direct delivery (:func:`~mcp_sim.transports.base.deliver_directly`): the pipe then hands each frame,
decoded, to the session's handler inside ``send``, and only queues what the handler declines.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import Any

import anyio

from mcp_sim.sim.world import Simulation
from mcp_sim.transports.base import AuthInfo, DirectHandler, LinkInfo, TransportClosed
from mcp_sim.wire.jsonrpc import Batch, InvalidMessage, JSONRPCMessage, RequestId, decode, encode


class _Pipe:
    """One direction of a memory link: frames in order, one reader, one writer.

    It behaves like an anyio memory object stream (the names of its methods and errors are the same,
    so :class:`MemoryStream` works with either): ``EndOfStream`` once the writer closed and every frame
    was read, ``ClosedResourceError`` for an end used after it was closed, ``BrokenResourceError`` when
    writing to a reader that is gone. A full pipe (``buffer`` frames) makes the writer wait.
    """

    def __init__(self, buffer: float) -> None:
        self.frames: deque[str] = deque()
        self.buffer = buffer
        self.reader: asyncio.Future[None] | None = None
        """The reader's wake-up call, while it waits for a frame."""
        self.writers: deque[asyncio.Future[None]] = deque()
        """Writers waiting for room (only when ``buffer`` is finite)."""
        self.writer_closed = False
        self.reader_closed = False
        self.listener: Callable[[str], bool] | None = None
        """Direct delivery: called with each frame sent while nothing is queued; ``True`` = taken."""

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
        if pipe.listener is not None and not pipe.frames and pipe.listener(text):
            return  # taken at once (frames already queued go first, through the reader)
        if len(pipe.frames) >= pipe.buffer:
            raise anyio.WouldBlock
        pipe.frames.append(text)
        pipe.wake_reader()

    async def send(self, text: str) -> None:
        pipe = self._pipe
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


class MemoryStream:
    """One end of a memory link."""

    def __init__(self, sim: Simulation, info: LinkInfo, me: str, peer: str, outbox: Any, inbox: Any) -> None:
        self.sim = sim
        self.info = info
        self.me = me
        self.peer = peer
        self.revision: str | None = None
        self.auth: AuthInfo | None = None
        self._outbox = outbox
        """Where this end writes: an anyio memory object send stream or a :class:`_PipeWriter`."""
        self._inbox = inbox

    async def send(self, message: JSONRPCMessage, *, related_request_id: RequestId | None = None) -> None:
        text = encode(message)
        # The transport knows what it is sending, so the recorder need not parse the text again.
        self.sim.recorder.record_sent(self.info.name, self.me, self.peer, text, self.revision, "memory", message)
        try:
            try:
                self._outbox.send_nowait(text)  # a pipe with room (always, unless a buffer was set)
            except anyio.WouldBlock:
                await self._outbox.send(text)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            raise TransportClosed(f"{self.peer} is no longer connected") from exc

    async def send_raw(self, text: str) -> None:
        """Put arbitrary text on the link (for experiments with malformed frames)."""
        self.sim.recorder.record_message(link=self.info.name, sender=self.me, receiver=self.peer, raw=text,
                                         revision=self.revision, transport="memory")
        await self._outbox.send(text)

    async def receive(self) -> JSONRPCMessage | InvalidMessage:
        text = await self._inbox.receive()  # raises anyio.EndOfStream when the peer closed
        # The simulated peers speak 2025-06-18 and later, where a batch is refused with -32600.
        decoded = decode(text, allow_batch=False)
        assert not isinstance(decoded, Batch)
        return decoded

    def deliver_to(self, handler: DirectHandler | None) -> bool:
        """Direct delivery (see :func:`~mcp_sim.transports.base.deliver_directly`): each frame sent to
        this end is decoded and given to ``handler`` inside the sender's ``send``. Only a pipe can."""
        inbox = self._inbox
        if not isinstance(inbox, _PipeReader):
            return False
        if handler is None:
            inbox._pipe.listener = None
            return True

        def listener(text: str) -> bool:
            decoded = decode(text, allow_batch=False)
            assert not isinstance(decoded, Batch)
            return handler(decoded)

        inbox._pipe.listener = listener
        return True

    async def aclose(self) -> None:
        await self._outbox.aclose()
        await self._inbox.aclose()


def memory_link(sim: Simulation, name: str, *, buffer: float = float("inf"),
                auth: AuthInfo | None = None) -> tuple[MemoryStream, MemoryStream]:
    """A connected (client end, server end) pair named ``name``; ``auth`` is the identity the server
    end reports for its caller."""
    info = LinkInfo(name=name, transport="memory", client=f"client/{name}", server=f"server/{name}")
    to_server, to_client = _Pipe(buffer), _Pipe(buffer)
    client_end = MemoryStream(sim, info, info.client, info.server, _PipeWriter(to_server), _PipeReader(to_client))
    server_end = MemoryStream(sim, info, info.server, info.client, _PipeWriter(to_client), _PipeReader(to_server))
    server_end.auth = auth
    return client_end, server_end
