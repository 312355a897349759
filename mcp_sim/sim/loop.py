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

Only public asyncio APIs are used: a ``SelectorEventLoop`` given this module's selector, with
``time()`` and ``call_at()`` overridden. Two details make it exact at any horizon:

* **Where the next timer is.** asyncio tells a selector only how long it may wait, and never more
  than a day, so a jump of years would take thousands of turns. The loop therefore keeps its own
  heap of the timers it was asked for (``call_at`` is the one door every timer goes through) and
  jumps straight to the earliest one still pending.
* **When a timer is due.** asyncio fires a timer when ``deadline < time() + resolution``, the
  resolution being that of the platform's monotonic clock (``time.get_clock_info``: 1 ns on Linux).
  Past 2²³ s floats are spaced wider than 1 ns, so at ``time() == deadline`` that test fails and the
  timer would never fire. So ``time()`` reads the first float at or after the deadline for which the
  test holds: the deadline itself, or one float later far out. :meth:`VirtualTimeLoop.now` is the
  deadline itself. (On a platform whose clock resolution is coarse — 15.6 ms on Windows — asyncio
  fires timers that close together in one turn; the simulation stays deterministic there, but such
  traces differ from Linux ones.)
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import math
import selectors
import time
from collections.abc import Callable
from contextvars import Context
from typing import Any, TypeVarTuple, Unpack

NS_PER_SECOND = 1_000_000_000
Ts = TypeVarTuple("Ts")


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
        self._time = 0.0
        self.now_ms = 0.0
        """The clock in milliseconds, rounded to microseconds: what a trace event is stamped with. The
        clock moves only in :meth:`advance_to`, so it is worked out there, not for every event."""
        self._timers: list[tuple[float, int, asyncio.TimerHandle]] = []
        """Every timer asked for that may still be pending, earliest first (a heap)."""
        self._timer_numbers = itertools.count()
        self._timers_kept = 0
        """How many timers :attr:`_timers` held after it was last swept (see :meth:`call_at`)."""
        self._sweep_above = 64
        """Sweep :attr:`_timers` when it holds more than this: twice what it kept at the last sweep, plus 64."""
        self._resolution = time.get_clock_info("monotonic").resolution
        """What asyncio adds to ``time()`` to decide that a timer is due (see the module docstring)."""
        self.selector = _VirtualSelector(self)
        super().__init__(selector=self.selector)

    def time(self) -> float:
        """The clock as asyncio reads it: :meth:`now`, or the next float when only that makes a timer
        due now count as due (see the module docstring)."""
        return self._time

    def now(self) -> float:
        """The clock in seconds: the deadline of the last timer the loop jumped to."""
        return self._now

    def call_at(self, when: float, callback: Callable[[Unpack[Ts]], object], *args: *Ts,
                context: Context | None = None) -> asyncio.TimerHandle:
        """asyncio's ``call_at``, with the timer also noted in the loop's own heap (``call_later`` and
        every ``sleep`` and timeout come through here)."""
        handle = super().call_at(when, callback, *args, context=context)
        timers = self._timers
        heapq.heappush(timers, (when, next(self._timer_numbers), handle))  # the handle keeps ``when`` as given
        if len(timers) > self._sweep_above:
            # Fired and cancelled timers leave the heap when a jump passes them; a busy world may not
            # jump for a while, so sweep them out whenever the heap has doubled since the last sweep.
            now = self._time
            self._timers = timers = [t for t in timers if t[0] > now and not t[2].cancelled()]
            heapq.heapify(timers)
            self._timers_kept = len(timers)
            self._sweep_above = 2 * len(timers) + 64
        return handle

    def advance_to(self, deadline: float) -> None:
        """Move the clock forward to ``deadline`` (seconds), the deadline of the timer that is due next."""
        if deadline <= self._now:
            return
        self._now = deadline
        self.now_ns = nearest_ns(deadline)
        self.now_ms = round(deadline * 1000.0, 3)
        reading = deadline
        while not deadline < reading + self._resolution:  # floats wider apart than the resolution
            reading = math.nextafter(reading, math.inf)
        self._time = reading

    def jump_to_next_timer(self) -> None:
        """Everybody waits: jump to the earliest pending timer. Timers that fired or were cancelled
        are dropped from the front of the heap on the way (asyncio has asked to wait, so every timer
        due by now has fired)."""
        timers = self._timers
        now = self._time
        while timers and (timers[0][0] <= now or timers[0][2].cancelled()):
            heapq.heappop(timers)
        if timers:
            self.advance_to(timers[0][0])

    def run_in_executor(self, executor: Any, func: Any, *args: Any) -> asyncio.Future[Any]:  # type: ignore[override]
        raise RuntimeError("the simulation runs in one thread on virtual time; threads are not allowed in it")
