"""ex06_http_answers — what a 2026-07-28 Streamable HTTP endpoint answers.

Edit this file, then grade it: ``grade("ex06_http_answers")`` in a notebook or
``mcp-sim grade ex06_http_answers`` in a terminal. The task is described in README.md beside this file.
"""

from __future__ import annotations

from typing import Any


def answer(method: str, headers: dict[str, str], body: str) -> dict[str, Any]:
    """``{"status": <HTTP status>, "error": <JSON-RPC error code, or None>}`` for this request.

    A first draft that serves everything."""
    return {"status": 200, "error": None}
