"""Reference solution for ex11_token_check. Try the exercise before reading this."""

from __future__ import annotations

from typing import Any


def _challenge(server: dict[str, Any], error: str | None = None, scope: str | None = None) -> str:
    params = []
    if error is not None:
        params.append(f'error="{error}"')
    if scope is not None:
        params.append(f'scope="{scope}"')
    params.append(f'resource_metadata="{server["resource_metadata"]}"')
    return "Bearer " + ", ".join(params)


def check_token(authorization: str | None, token: dict[str, Any] | None, server: dict[str, Any]) -> dict[str, Any]:
    """What the Server answers before reading any MCP message: 200, or 401/403 with a challenge."""
    scheme, _, value = (authorization or "").partition(" ")
    value = value.strip(" ")
    if scheme.lower() != "bearer" or not value:  # the scheme in any case (RFC 7235 § 2.1)
        return {"status": 401, "www_authenticate": _challenge(server)}
    if token is None or token["token"] != value:
        return {"status": 401, "www_authenticate": _challenge(server, "invalid_token")}
    if server["now_ms"] >= token["expires_at_ms"]:
        return {"status": 401, "www_authenticate": _challenge(server, "invalid_token")}
    if token["audience"] != server["resource"]:
        return {"status": 401, "www_authenticate": _challenge(server, "invalid_token")}
    missing = [s for s in server["required_scopes"] if s not in token["scopes"]]
    if missing:
        needed = " ".join(server["required_scopes"])
        return {"status": 403, "www_authenticate": _challenge(server, "insufficient_scope", needed)}
    return {"status": 200}
