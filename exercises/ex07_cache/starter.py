"""ex07_cache — a client's cache of list results: ttlMs, cacheScope and who asked.

Edit this file, then grade it: ``grade("ex07_cache")`` in a notebook or
``mcp-sim grade ex07_cache`` in a terminal. The task is described in README.md beside this file.
"""

from __future__ import annotations

from typing import Any


def cache_store(cache: dict[str, Any], now_ms: int, caller: dict[str, Any], method: str, cursor: str | None,
                result: dict[str, Any]) -> dict[str, Any]:
    """Return the cache after ``result`` arrived at ``now_ms`` (milliseconds on the virtual clock).

    ``cache``: what your last ``cache_store`` returned (``{}`` at first) — any JSON data you like.
    ``caller``: who asked, ``{"subject": "alice", "tenant": "acme", "client_id": "desk-ide",
    "scopes": ["catalog:read"]}`` (the authorization the request carried).
    ``method``, ``cursor``: the request, e.g. ``"tools/list"`` and ``None`` for the first page.
    ``result``: the server's result, e.g. ``{"resultType": "complete", "tools": [...], "nextCursor": "...",
    "ttlMs": 60000, "cacheScope": "private"}`` (a 2025 server sends no ttlMs and no cacheScope).
    """
    raise NotImplementedError("write cache_store()")


def cache_lookup(cache: dict[str, Any], now_ms: int, caller: dict[str, Any], method: str,
                 cursor: str | None) -> dict[str, Any] | None:
    """Return the cached result ``caller`` may be given for this request at ``now_ms``, or ``None``."""
    raise NotImplementedError("write cache_lookup()")
