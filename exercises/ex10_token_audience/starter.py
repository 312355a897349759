"""ex10_token_audience — audience and scope validation at an MCP server.

Edit this file, then grade it: ``grade("ex10_token_audience")`` in a notebook or
``mcp-sim grade ex10_token_audience`` in a terminal. The task is described in README.md beside this file.
"""

from __future__ import annotations

from typing import Any


def check_token(token: dict[str, Any], resource: str, required_scopes: list[str], now_ms: float) -> int:
    """The HTTP status for a request bearing ``token``: 200, 401 or 403.
    A first draft: the token is genuine and unexpired, so serve it."""
    if now_ms >= token["exp_ms"]:
        return 401
    return 200
