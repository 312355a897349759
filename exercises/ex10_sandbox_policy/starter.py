"""ex10_sandbox_policy — the sandbox a Host starts each local server in.

Edit this file, then grade it: ``grade("ex10_sandbox_policy")`` in a notebook or
``mcp-sim grade ex10_sandbox_policy`` in a terminal. The task is described in README.md beside this file.
"""

from __future__ import annotations

from typing import Any


def sandbox_policy(needs: dict[str, Any], roots: list[str]) -> dict[str, list[str]]:
    """The policy one server process starts under. A first draft: what every process gets by default —
    everything its user has."""
    return {"readable": ["*"], "writable": ["*"], "environment": ["*"], "egress": ["*"]}
