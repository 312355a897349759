"""ex11_token_check — the Server's check of a bearer token.

Edit this file, then grade it: ``grade("ex11_token_check")`` in a notebook or
``mcp-sim grade ex11_token_check`` in a terminal. The task is described in README.md beside this file.
"""

from __future__ import annotations

from typing import Any


def check_token(authorization: str | None, token: dict[str, Any] | None, server: dict[str, Any]) -> dict[str, Any]:
    """``{"status": 200}``, or ``{"status": 401 or 403, "www_authenticate": "Bearer …"}``.

    ``authorization`` is the request's Authorization header (or None); ``token`` the authorization
    server's claims about the presented token (or None: it never issued it); ``server`` this Server's
    ``resource``, ``resource_metadata``, ``required_scopes`` and ``now_ms``."""
    # A first draft: it lets every bearer token through.
    if authorization is None:
        return {"status": 401, "www_authenticate": f'Bearer resource_metadata="{server["resource_metadata"]}"'}
    return {"status": 200}
