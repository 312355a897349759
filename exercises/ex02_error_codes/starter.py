"""ex02_error_codes — choose the error code a server answers with.

Edit this file, then grade it: ``grade("ex02_error_codes")`` in a notebook or
``mcp-sim grade ex02_error_codes`` in a terminal. The task is described in README.md beside this file.
"""

from __future__ import annotations

from typing import Any


def choose_error_code(line: str, server: dict[str, Any]) -> int | None:
    """The JSON-RPC error code the server must answer ``line`` with, or ``None`` if no error response
    is due (a valid request, a failing tool, or any notification).

    ``line`` is the raw text the server read; ``server`` describes the server (see README.md).
    """
    raise NotImplementedError("write choose_error_code()")
