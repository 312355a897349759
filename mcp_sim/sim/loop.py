"""Virtual time: an event loop whose clock only moves when every task is waiting.

Timeouts, latency and sleeps in the simulation use anyio as usual (``anyio.sleep``,
``anyio.fail_after``), but they run on :class:`VirtualTimeLoop`, an asyncio loop whose ``time()`` is a
number the loop advances itself. When no task can run, the loop jumps straight to the next timer
instead of waiting for it, so ten simulated minutes take milliseconds of wall time, and because
nothing depends on the wall clock, the same seed gives the same run, byte for byte.

The clock is never added to: a jump sets it to the next timer's deadline itself, so it cannot
drift, and its exact reading in whole nanoseconds is kept beside it (:attr:`VirtualTimeLoop.now_ns`,
worked out from the deadline with integers, no float rounding). A clock that adds each step to a
float stops moving past about 2²⁴ simulated seconds (194 days): a small step is less than the
spacing of floats there, timers stop advancing and the loop spins. Here any horizon works (2⁴⁰ s,
35,000 years, included). Deadlines themselves are asyncio's floats of seconds: at 2⁴⁰ s floats are
1/4096 s apart, so ``anyio.sleep(0.0001)`` there asks for a moment a float cannot tell from now; the
loop keeps exactly what it is given.

The simulation does no real I/O. If every task waits and no timer is set, nothing can ever happen
again: the loop raises :class:`SimulationStalled` rather than hang the notebook.

Why this module touches asyncio's private parts (the project otherwise uses public APIs only): a
loop built on public APIs alone — a ``SelectorEventLoop`` with this file's selector and ``time()``
overridden — is almost enough, but asyncio fires a timer only when ``deadline < time() +
clock_resolution``, with a fixed resolution from the platform (1 ns on Linux, 15.6 ms on Windows).
Past 2²³ s a float's spacing is wider than 1 ns, so ``time() + resolution == time()`` and a timer
due exactly now never fires: the loop would spin at full CPU. On Windows every timer shorter than
15.6 ms would fire at once, with no time passing. So the loop sets ``_clock_resolution`` itself: one
nanosecond, or the spacing of floats at the current time when that is wider — exactly "fire when
due". It reads the next deadline from ``_scheduled`` so that a jump of years is one step (asyncio
waits at most one day per turn). And it overrides ``_run_once`` for speed (see there): a turn with
callbacks ready skips asyncio's bookkeeping for waiting on files, which the simulation never does.
Every other turn is asyncio's own.
"""

from __future__ import annotations

import asyncio
import heapq
import math
import selectors
from typing import Any

NS_PER_SECOND = 1_000_000_000


class SimulationStalled(RuntimeError):
    """Every task is waiting and no timer is pending: the simulated world can never move again."""


def nearest_ns(seconds: float) -> int:
    """The whole nanosecond nearest to ``seconds``, worked out exactly (integers, no float rounding)."""
    numerator, denominator = seconds.as_integer_ratio()
    return (2 * numerator * NS_PER_SECOND + denominator) // (2 * denominator)


class _VirtualSelector(selectors.DefaultSelector):
    """A selector that never blocks: waiting for a timer becomes jumping the virtual clock to it."""

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
            self._loop.jump_to_next_timer()
        return []


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """An asyncio event loop on a virtual clock that starts at 0 (kept in whole nanoseconds)."""

    stall_wall_timeout: float = 5.0

    def __init__(self) -> None:
        self.now_ns = 0
        """The clock read exactly, in whole nanoseconds since the start."""
        self._now = 0.0
        self.now_ms = 0.0
        """The clock in milliseconds, rounded to microseconds: what a trace event is stamped with. The
        clock moves only in :meth:`advance_to`, so it is worked out there, not for every event."""
        super().__init__(selector=_VirtualSelector(self))
        self._clock_resolution = 1e-9

    def time(self) -> float:
        return self._now

    def advance_to(self, deadline: float) -> None:
        """Move the clock forward to ``deadline`` (seconds), the deadline of the timer that is due next."""
        if deadline <= self._now:
            return
        self._now = now = deadline
        self.now_ns = nearest_ns(deadline)
        self.now_ms = round(deadline * 1000.0, 3)
        # asyncio fires a timer when ``deadline < time() + resolution``; once floats here are spaced
        # wider than a nanosecond, the spacing is the resolution that means "due now" (module docstring).
        self._clock_resolution = max(1e-9, math.ulp(now))

    def jump_to_next_timer(self) -> None:
        """Everybody waits: jump to the earliest timer. asyncio has already dropped cancelled timers
        from the front of its heap, so the first one is live; asyncio itself would wait at most a day
        per turn, a jump goes the whole way."""
        scheduled = self._scheduled  # type: ignore[attr-defined]
        if scheduled:
            self.advance_to(scheduled[0].when())

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
            end_time = self._now + self._clock_resolution
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
