"""Reference solution for ex10_authorize_call. Try the exercise before reading this."""

from __future__ import annotations

from typing import Any


def authorize(caller: dict[str, Any] | None, operation: dict[str, Any], target: dict[str, Any]) -> str | None:
    """None when ``caller`` may perform ``operation`` on ``target``; else the first check that fails."""
    if caller is None or not caller.get("subject"):
        return "identity"
    if not set(operation.get("scopes", [])) <= set(caller.get("scopes", [])):
        return "scope"
    if target.get("tenant") is not None and caller.get("tenant") != target["tenant"]:
        return "tenant"
    if target.get("owner") is not None and caller["subject"] != target["owner"]:
        return "ownership"
    if target.get("client_id") is not None and caller.get("client_id") != target["client_id"]:
        return "ownership"  # a handle issued to one client is not another client's, even the same user's
    return None
