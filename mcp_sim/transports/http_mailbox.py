"""A mailbox: where the texts of JSON-RPC messages wait for the one task that reads them (course chapter 06).

Each end of a simulated Streamable HTTP link has one: the client's inbox of answers, a legacy
session's inbox of requests, a 2026-07-28 call's single request. Writers never wait (the buffer
has no limit: the simulated network already decided when a frame arrives), and exactly one reader
takes the texts in order.

It does what ``anyio.create_memory_object_stream`` does for one reader, with far fewer objects: a
deque, and one future only while the reader actually waits. That matters under load: with
thousands of clients in flight at once, every object a waiting reader keeps alive is one more for
Python's garbage collector to walk in each of its full passes (see ``benchmarks/http_load.py``). A
reader waiting on an ``anyio.Event`` keeps about nine objects alive (the event, the asyncio event it
wraps, its dict and its queue of waiters, a future and three coroutines); one waiting on a future
keeps three. The simulation always runs on asyncio (its virtual clock is an asyncio loop), and anyio
cancels an asyncio task by cancelling what it awaits, so a cancel scope around :meth:`Mailbox.get`
works as it does around any anyio call.
"""

from __future__ import annotations

import asyncio
from collections import deque

import anyio

__all__ = ["Mailbox"]


class Mailbox:
    """Texts waiting for one reader: :meth:`put` never waits, :meth:`get` waits for the next text
    (a second task calling :meth:`get` while one waits gets ``anyio.BusyResourceError``).

    After :meth:`close` the reader still gets what was put before, then ``anyio.EndOfStream``;
    a text put after closing is dropped (nobody will read it)."""

    __slots__ = ("_texts", "_waiter", "closed")

    def __init__(self) -> None:
        self._texts: deque[str] = deque()
        self._waiter: asyncio.Future[None] | None = None
        """The reader's wake-up call, while it waits."""
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
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def get(self) -> str:
        """The next text; ``anyio.EndOfStream`` once the mailbox is closed and empty. Like every
        receive in anyio it lets other tasks run first, even when a text is already waiting
        (``asyncio.sleep(0)`` is what ``anyio.lowlevel.checkpoint()`` does on asyncio)."""
        await asyncio.sleep(0)
        while not self._texts:
            if self.closed:
                raise anyio.EndOfStream
            if self._waiter is not None:
                raise anyio.BusyResourceError("receiving")  # one reader at a time
            waiter = self._waiter = asyncio.get_running_loop().create_future()
            try:
                await waiter
            finally:
                # Woken, or cancelled while waiting (which cancels the future too): either way the
                # next wait needs a fresh one.
                if self._waiter is waiter:
                    self._waiter = None
        return self._texts.popleft()
