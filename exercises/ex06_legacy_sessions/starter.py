"""ex06_legacy_sessions — legacy Streamable HTTP sessions, from both sides.

Edit this file, then grade it: ``grade("ex06_legacy_sessions")`` in a notebook or
``mcp-sim grade ex06_legacy_sessions`` in a terminal. The task is described in README.md beside this file.
"""

from __future__ import annotations


def server_status(method: str, headers: dict[str, str], body: str, live_sessions: list[str]) -> int:
    """The HTTP status a legacy server answers this request with (session rules only)."""
    raise NotImplementedError("write server_status()")


def client_headers(method: str, session_id: str | None) -> dict[str, str]:
    """``{"Mcp-Session-Id": ...}`` or ``{}``: the session header the client sends with ``method``."""
    raise NotImplementedError("write client_headers()")


def after_404(method: str, status: int) -> list[str]:
    """The methods the client sends next, in order, after ``method`` was answered ``status``."""
    raise NotImplementedError("write after_404()")
