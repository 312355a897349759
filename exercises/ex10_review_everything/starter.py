"""ex10_review_everything — the Host's review of every tool definition, pinned by a fingerprint.

Edit this file, then grade it: ``grade("ex10_review_everything")`` in a notebook or
``mcp-sim grade ex10_review_everything`` in a terminal. The task is described in README.md beside this file.
"""

from __future__ import annotations

from typing import Any


def review(server: str, tool: dict[str, Any]) -> bool:
    """May this definition reach the model? A first draft: it reads the description only."""
    description = tool.get("description") or ""
    return "<IMPORTANT>" not in description


def fingerprint(tool: dict[str, Any]) -> str:
    """What approval is pinned to. A first draft: the tool's name."""
    return str(tool["name"])
