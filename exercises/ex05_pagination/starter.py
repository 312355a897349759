"""ex05_pagination — a paginating list handler with opaque cursors.

Edit this file, then grade it: ``grade("ex05_pagination")`` in a notebook or
``mcp-sim grade ex05_pagination`` in a terminal. The task is described in README.md beside this file.
"""

from __future__ import annotations

from typing import Any


def list_page(items: list[Any], cursor: str | None, page_size: int) -> dict[str, Any]:
    """``{"items": page, "nextCursor"?: str}``, or ``{"error": {"code", "message"}}`` for a bad cursor."""
    raise NotImplementedError("write list_page()")
