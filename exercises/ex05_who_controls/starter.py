"""ex05_who_controls — who controls each primitive, and when must the Host ask the user?

Edit this file, then grade it: ``grade("ex05_who_controls")`` in a notebook or
``mcp-sim grade ex05_who_controls`` in a terminal. The task is described in README.md beside this file.
"""

from __future__ import annotations

from typing import Any


def who_controls(entry: dict[str, Any]) -> str:
    """``"model"``, ``"application"`` or ``"user"`` for an entry of a list result."""
    raise NotImplementedError("write who_controls()")


def needs_approval(tool: dict[str, Any], trusted: bool) -> bool:
    """Must the user approve a call to ``tool``, from a server the Host does (not) trust?"""
    raise NotImplementedError("write needs_approval()")
