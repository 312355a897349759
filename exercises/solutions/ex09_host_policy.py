"""Reference solution for ex09_host_policy. Try the exercise before reading this."""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Any


def _matches(name: str, patterns: list[str]) -> bool:
    return any(fnmatchcase(name, p) for p in patterns)


def may_see(tool: dict[str, Any], server: str, trusted: bool, policy: dict[str, Any]) -> bool:
    """The filter: the server list, then deny (which wins), then read-only, then allow."""
    qualified = f"{server}__{tool['name']}"
    servers = policy.get("servers")
    if servers is not None and server not in servers:
        return False
    if _matches(qualified, policy.get("deny", [])):
        return False
    annotations = tool.get("annotations") or {}
    if policy.get("read_only") and not (trusted and annotations.get("readOnlyHint") is True):
        return False  # an untrusted server's readOnlyHint proves nothing
    return _matches(qualified, policy.get("allow", ["*"]))


def must_ask(tool: dict[str, Any], server: str, trusted: bool, policy: dict[str, Any]) -> bool:
    """Ask for high-risk and possibly destructive tools in every mode; the mode may ask for more."""
    sent = tool.get("annotations") or {}
    believed = sent if trusted else {}
    read_only = believed.get("readOnlyHint") is True
    destructive = sent.get("destructiveHint") is True or (
        not read_only and believed.get("destructiveHint", True) is not False)
    qualified = f"{server}__{tool['name']}"
    confirm = policy.get("always_confirm", [])
    if _matches(qualified, confirm) or _matches(tool["name"], confirm) or destructive:
        return True
    mode = policy.get("approval", "always")
    if mode == "always":
        return True
    if mode == "unless-read-only":
        return not read_only
    return False
