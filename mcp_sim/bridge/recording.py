"""Recording real traffic: the same trace format as a simulation, on wall-clock time.

A simulation stamps each event with its *virtual* clock. Traffic over a real pipe or a real socket
has no virtual clock: it happens in real time. :class:`WallClockRecorder` is a
:class:`~mcp_sim.trace.recorder.Recorder` whose clock is the wall clock, in milliseconds since the
recorder was created, so the trace player, the diagrams and the JSON Lines export show a real
session exactly like a simulated one — only the times are measured instead of chosen.

This is the one place in the package where real time is read on purpose (the bridge exists to
talk to the real world); everything under ``mcp_sim.sim`` keeps to the virtual clock.
"""

from __future__ import annotations

import time
from typing import Any

from mcp_sim.trace.recorder import Recorder


class WallClockRecorder(Recorder):
    """A recorder for real traffic: ``t_ms`` is wall-clock milliseconds since creation."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._start = time.monotonic()

    def now_ms(self) -> float:
        """Milliseconds since this recorder was created (microsecond resolution)."""
        return round((time.monotonic() - self._start) * 1000.0, 3)

    def _now(self) -> float:
        return self.now_ms()


def stamp(recorder: Recorder) -> float | None:
    """The time to stamp a real frame with: wall-clock for a :class:`WallClockRecorder`, else
    ``None`` (the recorder's own clock decides)."""
    return recorder.now_ms() if isinstance(recorder, WallClockRecorder) else None
