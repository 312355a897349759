"""The simulated world: one virtual clock, one seeded random generator, one recorder.

Everything that happens in a simulation shares one :class:`Simulation`. Code inside it asks the
simulation for the time (:meth:`Simulation.now_ms`) and for randomness (:attr:`Simulation.rng`),
never the ``time`` or ``random`` modules, so that the same seed always replays the same story.

Run a simulated scenario from plain code or from a notebook cell with :meth:`Simulation.run`; it
works even inside Jupyter, whose own event loop is already running (the simulation then runs in a
helper thread and the cell waits for it).
"""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import random
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager, nullcontext
from typing import Any, TypeVar

import anyio

from mcp_sim.sim.collector import paced_collector
from mcp_sim.sim.loop import VirtualTimeLoop

T = TypeVar("T")

_current: contextvars.ContextVar[Simulation | None] = contextvars.ContextVar("mcp_sim_simulation", default=None)


class Simulation:
    """One simulated world. ``seed`` fixes every random choice; the clock starts at 0 ms.

    ``pace_collector`` (default on): while :meth:`run` runs, Python's garbage collector spaces its
    full passes by the size of the heap, so that thousands of simulated clients cost linearly
    (see :mod:`mcp_sim.sim.collector`); ``False`` leaves the process's collector as it is."""

    def __init__(self, seed: int = 0, *, recorder: Any = None, pace_collector: bool = True) -> None:
        self.seed = seed
        self.pace_collector = pace_collector
        self.rng = random.Random(seed)
        if recorder is None:
            from mcp_sim.trace.recorder import Recorder

            recorder = Recorder()
        if getattr(recorder, "clock", True) is None:
            recorder.clock = self.now_ms  # the recorder reads the virtual clock it is handed
        self.recorder = recorder
        self._loop: VirtualTimeLoop | None = None
        self._counters: dict[str, int] = {}

    # -- time ---------------------------------------------------------------------------------
    def now(self) -> float:
        """Simulated seconds since the start (0.0 outside a running simulation)."""
        loop = self._loop
        return loop.now() if loop is not None else 0.0

    def now_ns(self) -> int:
        """Simulated nanoseconds since the start, exactly (a whole number: no float rounding)."""
        loop = self._loop
        return loop.now_ns if loop is not None else 0

    def now_ms(self) -> float:
        """Simulated milliseconds since the start, rounded to microseconds for stable output."""
        loop = self._loop
        return loop.now_ms if loop is not None else 0.0

    async def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` of *simulated* time (the clock jumps; no wall time passes)."""
        await anyio.sleep(seconds)

    @contextmanager
    def fail_after(self, seconds: float, *, what: str = "an answer", who: str = "sim", link: str = "sim",
                   request_id: Any = None, method: str | None = None) -> Iterator[None]:
        """Like ``anyio.fail_after``, but a timeout is *visible*: it is recorded as a ``timeout`` event.

        MCP says every request SHOULD have a timeout and that the requester, on timeout, stops waiting
        (and, in the legacy era, sends ``notifications/cancelled``). Wrapping the wait in this helper
        puts the moment the caller gave up into the trace, e.g.::

            with sim.fail_after(5, what="tools/call #3", who="client/weather", link="weather"):
                reply = await stream.receive()
        """
        try:
            with anyio.fail_after(seconds):
                yield
        except TimeoutError:
            self.recorder.record_event(
                kind="timeout", link=link, sender=who, receiver=who,
                text=f"gave up waiting for {what} after {seconds:g} s (simulated)",
                marks=("timeout",), request_id=request_id, method=method)
            raise

    def random_for(self, label: str) -> random.Random:
        """A private random generator for ``label`` (a link's faults, a server's ids …), seeded from
        this simulation's seed. Separate generators keep one part's draws from shifting another's."""
        return random.Random(self.derive_seed(label))

    # -- deterministic identifiers -------------------------------------------------------------
    def next_number(self, name: str) -> int:
        """1, 2, 3 … per ``name``: deterministic counters for ids, session numbers and the like."""
        self._counters[name] = self._counters.get(name, 0) + 1
        return self._counters[name]

    def token(self, nbytes: int = 16) -> str:
        """A random-looking hex token drawn from the seeded generator (never from ``os.urandom``)."""
        return self.rng.getrandbits(nbytes * 8).to_bytes(nbytes, "big").hex()

    def derive_seed(self, label: str) -> int:
        """A seed for a sub-generator, stable for this simulation's seed and ``label``."""
        digest = hashlib.sha256(f"{self.seed}:{label}".encode()).digest()
        return int.from_bytes(digest[:8], "big")

    # -- running -------------------------------------------------------------------------------
    def run(self, main: Callable[..., Awaitable[T]], *args: Any) -> T:
        """Run ``main(*args)`` on virtual time until it finishes; return its result.

        Safe to call from a Jupyter cell: if an event loop already runs in this thread, the
        simulation runs in a fresh thread and this call waits for it.
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return self._run_here(main, *args)
        box: dict[str, Any] = {}

        def target() -> None:
            try:
                box["value"] = self._run_here(main, *args)
            except BaseException as exc:  # re-raised in the caller's thread
                box["error"] = exc

        thread = threading.Thread(target=target, name="mcp-sim", daemon=True)
        thread.start()
        thread.join()
        if "error" in box:
            raise box["error"]
        return box["value"]  # type: ignore[no-any-return]

    def _run_here(self, main: Callable[..., Awaitable[T]], *args: Any) -> T:
        async def wrapper() -> T:
            loop = asyncio.get_running_loop()
            assert isinstance(loop, VirtualTimeLoop)
            self._loop = loop
            token = _current.set(self)
            try:
                return await main(*args)
            finally:
                _current.reset(token)

        with paced_collector() if self.pace_collector else nullcontext():
            return anyio.run(wrapper, backend="asyncio", backend_options={"loop_factory": VirtualTimeLoop})


def current_simulation() -> Simulation:
    """The simulation the calling task runs in (a clear error outside one)."""
    sim = _current.get()
    if sim is None:
        raise RuntimeError("no simulation is running here: start one with Simulation(seed).run(main)")
    return sim


def maybe_current_simulation() -> Simulation | None:
    return _current.get()
