"""Cacheable results: ``ttlMs`` and ``cacheScope`` (spec 2026-07-28 "Server utilities / Caching";
course chapter 07).

In 2026-07-28 list results, ``resources/read`` and ``server/discover`` say how long the client may
reuse them (``ttlMs``) and whether a shared cache may serve them to someone else (``cacheScope``):
``"public"`` when the answer is the same for everyone, ``"private"`` when it depends on who asks — a
tenant's data, or a tool list filtered by the caller's identity. Legacy revisions have neither field.
Results of a Multi Round-Trip retry are never cacheable, so they get ``ttlMs: 0``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

CacheScope = Literal["public", "private"]


@dataclass(frozen=True)
class CachePolicy:
    """How long results stay fresh, in milliseconds of (virtual) time."""

    list_ttl_ms: int = 60_000
    read_ttl_ms: int = 30_000
    discover_ttl_ms: int = 3_600_000


def cache_fields(ttl_ms: int, private: bool) -> dict[str, Any]:
    """The two fields a 2026-07-28 cacheable result must carry."""
    scope: CacheScope = "private" if private else "public"
    return {"ttlMs": max(0, int(ttl_ms)), "cacheScope": scope}
