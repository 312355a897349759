"""A mailbox: where the texts of JSON-RPC messages wait for the one task that reads them (course chapter 06).

Each end of a simulated Streamable HTTP link has one: the client's inbox of answers, a legacy
session's inbox of requests, a 2026-07-28 call's single request. Writers never wait (the buffer
has no limit: the simulated network already decided when a frame arrives), and exactly one reader
takes the texts in order.

It does what ``anyio.create_memory_object_stream`` does for one reader, with far fewer objects: a
deque, and an event only while the reader actually waits. That matters under load — with thousands
of clients in flight at once, every object a waiting reader keeps alive is one more for Python's
garbage collector to walk in each of its full passes (see ``benchmarks/http_load.py``).
"""

from __future__ import annotations

from collections import deque

import anyio
import anyio.lowlevel

__all__ = ["Mailbox"]


class Mailbox:
    """Texts waiting for one reader: :meth:`put` never waits, :meth:`get` waits for the next text.

    After :meth:`close` the reader still gets what was put before, then ``anyio.EndOfStream``;
    a text put after closing is dropped (nobody will read it)."""

    __slots__ = ("_arrived", "_texts", "closed")

    def __init__(self) -> None:
        self._texts: deque[str] = deque()
        self._arrived: anyio.Event | None = None
        self.closed = False

    def put(self, text: str) -> None:
        if self.closed:
            return
        self._texts.append(text)
        self._wake()

    def close(self) -> None:
        self.closed = True
        self._wake()

    def _wake(self) -> None:
        if self._arrived is not None:
            self._arrived.set()
            self._arrived = None

    async def get(self) -> str:
        """The next text; ``anyio.EndOfStream`` once the mailbox is closed and empty. Like every
        receive in anyio it lets other tasks run first, even when a text is already waiting."""
        await anyio.lowlevel.checkpoint()
        while not self._texts:
            if self.closed:
                raise anyio.EndOfStream
            if self._arrived is None:  # (a second reader, if ever, waits for the same event)
                self._arrived = anyio.Event()
            await self._arrived.wait()
        return self._texts.popleft()
