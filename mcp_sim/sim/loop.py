"""Virtual time: an event loop whose clock only moves when every task is waiting.

Timeouts, latency and sleeps in the simulation use anyio as usual (``anyio.sleep``,
``anyio.fail_after``), but they run on :class:`VirtualTimeLoop`, an asyncio loop whose ``time()`` is a
number the loop advances itself. When no task can run, the loop jumps straight to the next timer
instead of waiting for it, so ten simulated minutes take milliseconds of wall time, and because
nothing depends on the wall clock, the same seed gives the same run, byte for byte.

The simulation does no real I/O. If every task waits and no timer is set, nothing can ever happen
again: the loop raises :class:`SimulationStalled` rather than hang the notebook.
"""

from __future__ import annotations

import asyncio
import heapq
import selectors
from typing import Any


class SimulationStalled(RuntimeError):
    """Every task is waiting and no timer is pending: the simulated world can never move again."""


class _VirtualSelector(selectors.DefaultSelector):
    """A selector that never blocks: waiting ``timeout`` seconds becomes advancing virtual time."""

    def __init__(self, loop: VirtualTimeLoop) -> None:
        super().__init__()
        self._loop = loop
        self.no_files = True
        """Only the loop's own wake-up pipe is registered (the simulation does no real I/O)."""

    def register(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        key = super().register(fileobj, events, data)
        self.no_files = len(self.get_map()) <= 1
        return key

    def unregister(self, fileobj: Any) -> selectors.SelectorKey:
        key = super().unregister(fileobj)
        self.no_files = len(self.get_map()) <= 1
        return key

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        if timeout == 0 and self.no_files:
            # Callbacks are ready to run and the only file registered is the loop's own wake-up pipe
            # (the simulation does no I/O): asking the kernel would cost a system call per turn of the
            # loop and tell nothing new, because a thread's ``call_soon_threadsafe`` has already put
            # its callback in the ready queue. The pipe is read the next time the loop would wait.
            return []
        ready = super().select(0)
        if ready:
            return ready
        if timeout is None:
            # Nothing is scheduled. Give other threads (e.g. a learner's code running in a worker
            # thread with a wall-clock limit) a real chance to wake us before declaring a stall.
            ready = super().select(self._loop.stall_wall_timeout)
            if ready:
                return ready
            raise SimulationStalled(
                "every simulated task is waiting and no timer is pending; the simulation cannot progress "
                "(a request was sent with no timeout to a peer that will never answer?)")
        if timeout > 0:
            self._loop.advance(timeout)
        return []


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """An asyncio event loop on a virtual clock that starts at 0.0 seconds."""

    stall_wall_timeout: float = 5.0

    def __init__(self) -> None:
        self._virtual_now = 0.0
        self.now_ms = 0.0
        """The clock in milliseconds, rounded to microseconds: what a trace event is stamped with. The
        clock moves only in :meth:`advance`, so it is worked out there, not for every event."""
        super().__init__(selector=_VirtualSelector(self))
        self._clock_resolution = 1e-9

    def time(self) -> float:
        return self._virtual_now

    def advance(self, seconds: float) -> None:
        """Move the clock forward; called by the selector when everybody waits."""
        self._virtual_now += seconds
        self.now_ms = round(self._virtual_now * 1000.0, 3)

    def _run_once(self) -> None:
        """One turn of the loop. When callbacks are already waiting, nobody is debugging the loop and
        no real file is watched, a turn is short: move the timers that are due, then run the
        callbacks that were ready — what asyncio's own turn does in that case, minus the bookkeeping
        for waiting on files. Every other turn (the world is idle and the clock must jump, or real
        I/O is involved) is asyncio's own."""
        ready = self._ready  # type: ignore[attr-defined]
        if not ready or self._debug or not self._selector.no_files:  # type: ignore[attr-defined]
            super()._run_once()  # type: ignore[misc]
            return
        scheduled = self._scheduled  # type: ignore[attr-defined]
        if scheduled:
            end_time = self._virtual_now + self._clock_resolution
            while scheduled:
                handle = scheduled[0]
                if handle._cancelled:
                    self._timer_cancelled_count -= 1  # type: ignore[attr-defined]
                elif handle._when >= end_time:
                    break
                heapq.heappop(scheduled)
                handle._scheduled = False
                if not handle._cancelled:
                    ready.append(handle)
        for _ in range(len(ready)):
            handle = ready.popleft()
            if not handle._cancelled:
                handle._run()

    def run_in_executor(self, executor: Any, func: Any, *args: Any) -> asyncio.Future[Any]:  # type: ignore[override]
        raise RuntimeError("the simulation runs in one thread on virtual time; threads are not allowed in it")
