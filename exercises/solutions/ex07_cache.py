"""Reference solution for ex07_cache. Try the exercise before reading this."""

from __future__ import annotations

import json
from typing import Any


def _key(method: str, cursor: str | None, caller: dict[str, Any] | None) -> str:
    # A JSON list as the key: the cache itself must stay JSON data. None (public) is shared by everyone;
    # a private entry is filed under the caller's whole authorization context: subject, tenant, client
    # and scopes (in a fixed order, so the same grant always gives the same key).
    who = None if caller is None else [caller.get("subject"), caller.get("tenant"), caller.get("client_id"),
                                       sorted(set(caller.get("scopes") or ()))]
    return json.dumps([method, cursor, who])


def cache_store(cache: dict[str, Any], now_ms: int, caller: dict[str, Any], method: str, cursor: str | None,
                result: dict[str, Any]) -> dict[str, Any]:
    """The cache after ``result`` arrived at ``now_ms`` for ``caller``'s ``method``/``cursor`` request."""
    ttl = result.get("ttlMs")
    if isinstance(ttl, bool) or not isinstance(ttl, int) or ttl <= 0:
        return cache  # absent (a 2025 server), 0 or negative: stale at once, never kept
    public = result.get("cacheScope") == "public"  # anything else is read as private, the safe way
    cache = dict(cache)
    cache[_key(method, cursor, None if public else caller)] = {"result": result, "expires": now_ms + ttl}
    return cache


def cache_lookup(cache: dict[str, Any], now_ms: int, caller: dict[str, Any], method: str,
                 cursor: str | None) -> dict[str, Any] | None:
    """A result still fresh at ``now_ms`` that ``caller`` may see, or None."""
    for who in (caller, None):  # the caller's own private entry first, then a public one
        entry = cache.get(_key(method, cursor, who))
        if entry is not None and now_ms < entry["expires"]:  # at the expiry instant it is stale
            result: dict[str, Any] = entry["result"]
            return result
    return None
