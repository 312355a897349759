"""Reference solution for ex06_legacy_sessions. Try the exercise before reading this."""

from __future__ import annotations

import json
from typing import Any

SESSION = "mcp-session-id"  # header names are case-insensitive: compare in lower case


def _session_id(headers: dict[str, str]) -> str | None:
    return next((value for name, value in headers.items() if name.lower() == SESSION), None)


def server_status(method: str, headers: dict[str, str], body: str, live_sessions: list[str]) -> int:
    """The HTTP status a legacy server gives this request (only the session rules matter here)."""
    session = _session_id(headers)
    if method == "POST":
        message: Any = json.loads(body)
        if message.get("method") == "initialize":
            return 400 if session is not None else 200  # initialize asks for a session: it cannot carry one
    if session is None:
        return 400  # every other request needs the id the initialize answer gave
    if session not in live_sessions:
        return 404  # never issued, expired or ended: the client must start again
    if method == "DELETE":
        return 200  # the session ends here
    return 200 if "id" in message and "method" in message else 202  # notifications and responses: 202


def client_headers(method: str, session_id: str | None) -> dict[str, str]:
    """The session header the client puts on ``method``, holding ``session_id``."""
    if method == "initialize" or session_id is None:
        return {}  # even after a 404: the old id belongs to a session that no longer exists
    return {"Mcp-Session-Id": session_id}


def after_404(method: str, status: int) -> list[str]:
    """What the client sends next after ``method`` got ``status``."""
    if status != 404:
        return []
    return ["initialize", "notifications/initialized", method]  # a new session, then the request again
