"""Pacing Python's garbage collector so that a simulation's cost grows linearly with its load.

Nothing here is about MCP: it is about running thousands of simulated clients in one process.
CPython frees most objects the moment their last reference goes; its *cyclic* collector exists for
the rest. It sorts the objects it tracks into three generations and, by default, runs a **full**
pass over every tracked object once every 10 collections of the middle generation (as long as
the objects promoted since the last full pass are at least a quarter of those that survived it).

That rule counts collections, not the size of the heap. With 5,000 clients in flight, every call's
tasks, coroutines and buffers live long enough to be promoted, so the quarter is always reached
and the full passes come as often as with 1,000 clients, per call made, while each pass walks a heap
five times larger: the collector's cost grows with clients × calls, not with calls alone
(``benchmarks/http_load.py`` measures it: with Python's rule, 20–50% more processor time per client
at 5,000 clients than at 1,000, most of it in the collector).

:func:`paced_collector` keeps every collection CPython would make but spaces the full passes by the
size of the heap, the way memory managers usually do: after each full pass, the next one waits
until the young collections have taken in at least as many new objects as the oldest generation
holds (``threshold0 × threshold1 × threshold2 ≥`` its size). A full pass then costs a fixed amount
per new object, whatever the size of the heap, and the cost of a run grows linearly.
:meth:`~mcp_sim.sim.world.Simulation.run` uses it unless the simulation is made with
``pace_collector=False``.

The collector's settings belong to the whole process, so the pacing lasts exactly as long as the
``with`` block and the process's own settings come back afterwards; a block inside another (a
simulation run while another runs) leaves the pacing to the outer one.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["CollectorPacing", "paced_collector"]


class CollectorPacing:
    """A ``gc.callbacks`` hook: after every full pass, space the next one by the heap's size.

    ``floor`` is the process's own ``threshold2``: a full pass never comes sooner than it would have
    without the pacing. :attr:`full_passes` counts the full passes seen, for lessons and tests."""

    def __init__(self, floor: int) -> None:
        self.floor = floor
        self.full_passes = 0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase != "stop" or info["generation"] != 2:
            return
        self.full_passes += 1
        young, middle, _ = gc.get_threshold()
        old = len(gc.get_objects(generation=2))  # one walk of the heap, after a pass that walked it
        admitted_per_middle = max(1, young * middle)  # new objects a middle collection takes in, at least
        gc.set_threshold(young, middle, max(self.floor, -(-old // admitted_per_middle)))


@contextmanager
def paced_collector() -> Iterator[CollectorPacing | None]:
    """Space full garbage collections by the heap's size for the duration of the block.

    Yields the :class:`CollectorPacing` installed, or ``None`` when an enclosing block already paces
    the collector (it stays in charge, and restores the settings when it ends)."""
    if any(isinstance(hook, CollectorPacing) for hook in gc.callbacks):
        yield None
        return
    saved = gc.get_threshold()
    pacing = CollectorPacing(floor=saved[2])
    gc.callbacks.append(pacing)
    try:
        yield pacing
    finally:
        gc.callbacks.remove(pacing)
        gc.set_threshold(*saved)
