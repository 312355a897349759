"""ex09_who_decides — a complete call went wrong: which layer decided it, who, and on which row?

Edit this file, then grade it: ``grade("ex09_who_decides")`` in a notebook or
``mcp-sim grade ex09_who_decides`` in a terminal. The task is described in README.md beside this file.
"""

from __future__ import annotations

from typing import Any


def who_decides(trace: dict[str, Any]) -> dict[str, Any] | None:
    """``{"layer": ..., "decided_by": ..., "seq": n}`` for the row that decided the call's outcome,
    or ``None`` when the user got what they asked for."""
    raise NotImplementedError("write who_decides()")
