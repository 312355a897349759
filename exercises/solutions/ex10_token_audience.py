"""Reference solution for ex10_token_audience. Try the exercise before reading this."""

from __future__ import annotations

from typing import Any


def check_token(token: dict[str, Any], resource: str, required_scopes: list[str], now_ms: float) -> int:
    """The status for a request bearing ``token`` at ``resource``: 401 expired or not for us, 403 a scope
    missing, 200 served."""
    if now_ms >= token["exp_ms"]:
        return 401
    if token.get("aud") != resource:  # exactly this server's URI: no prefix, no host-only match, no aud: not ours
        return 401
    if not set(required_scopes) <= set(token["scopes"]):
        return 403
    return 200
