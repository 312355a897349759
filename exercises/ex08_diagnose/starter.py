"""ex08_diagnose — which message in this tasks trace breaks which rule?

Edit this file, then grade it: ``grade("ex08_diagnose")`` in a notebook or
``mcp-sim grade ex08_diagnose`` in a terminal. The task is described in README.md beside this file.
"""

from __future__ import annotations

from typing import Any


def diagnose(trace: dict[str, Any]) -> dict[str, Any] | None:
    """``{"index": i, "rule": tag}`` for the message that breaks a rule, or ``None``."""
    raise NotImplementedError("write diagnose()")
