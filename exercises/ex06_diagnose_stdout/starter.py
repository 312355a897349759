"""ex06_diagnose_stdout — which line broke the stdio stream, and who wrote it?

Edit this file, then grade it: ``grade("ex06_diagnose_stdout")`` in a notebook or
``mcp-sim grade ex06_diagnose_stdout`` in a terminal. The task is described in README.md beside this file.
"""

from __future__ import annotations

from typing import Any


def diagnose(lines: list[dict[str, str]]) -> dict[str, Any] | None:
    """``{"index": i, "writer": "server" | "client"}`` for the first line that is not a message, or ``None``."""
    raise NotImplementedError("write diagnose()")
