"""ex09_next_step — play the Host: the next step of a complete call.

Edit this file, then grade it: ``grade("ex09_next_step")`` in a notebook or
``mcp-sim grade ex09_next_step`` in a terminal. The task is described in README.md beside this file.
"""

from __future__ import annotations

from typing import Any


def next_step(step: str, situation: dict[str, Any]) -> Any:
    """What the Host sends at ``step`` ("offer", "propose", "call" or "reply") in ``situation``."""
    raise NotImplementedError("write next_step()")
