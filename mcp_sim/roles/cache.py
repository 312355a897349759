"""The client's list cache (course notebook on capabilities: caching; spec 2026-07-28 ``server/utilities/caching``).

In 2026-07-28 every list result (``tools/list``, ``prompts/list``, ``resources/list``,
``resources/templates/list``), ``resources/read`` and ``server/discover`` carries two caching hints:

* ``ttlMs`` — the result is fresh while ``now < received + ttlMs``. ``0`` means "immediately stale";
  an absent value (an older server) or a negative one is treated as ``0``, i.e. not cached at all.
* ``cacheScope`` — ``"public"`` (the same for every caller) or ``"private"`` (depends on who asks).
  A private entry MUST NOT be served to another authorization context, so this cache keys every
  private entry by the caller's :class:`AuthorizationContext` (subject, tenant, scopes, client id and
  audience): one tenant's tool list is never shown to another tenant, nor a read-write token's list
  to a read-only one, nor one client's list to another client of the same user.

Two more rules from the spec: a relevant ``list_changed``/``updated`` notification invalidates the
entry, and the results of Multi Round-Trip retries (requests carrying ``inputResponses`` or
``requestState``) and ``input_required`` results are never cached. Time is the simulation's virtual
clock, so expiry is deterministic.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

from mcp_sim.transports.base import AuthInfo

LIST_METHODS: Final = frozenset({"tools/list", "prompts/list", "resources/list", "resources/templates/list"})
"""The list results a client may cache; ``resources/read`` is cached per URI as well."""

INVALIDATES: Final[Mapping[str, tuple[str, ...]]] = {
    "notifications/tools/list_changed": ("tools/list",),
    "notifications/prompts/list_changed": ("prompts/list",),
    "notifications/resources/list_changed": ("resources/list", "resources/templates/list"),
}
"""Which cached methods each change notification makes stale (``resources/updated`` is per URI)."""


@dataclass(frozen=True)
class AuthorizationContext:
    """Whose view of the server a result is: **everything** in the authorization that may change what
    the server answers — the subject and tenant the token was issued to, the scopes it grants, the
    client it was issued to and its audience.

    Two callers with different contexts may legitimately see different tool lists (the spec lets a
    tool set vary "according to the authorization supplied with the current request"). Keying on
    less — the user alone, say — would let the same user's read-only token, or a narrowly scoped
    third-party app the user authorised, be served the list made for the user's fully scoped IDE."""

    subject: str | None = None
    tenant: str | None = None
    scopes: tuple[str, ...] = ()
    """Sorted, without repeats: the same grant always files under the same key."""
    client_id: str | None = None
    audience: str | None = None

    @classmethod
    def of(cls, auth: AuthInfo | None) -> AuthorizationContext:
        if auth is None:
            return ANONYMOUS
        return cls(auth.subject, auth.tenant, tuple(sorted(set(auth.scopes))), auth.client_id, auth.audience)

    def __str__(self) -> str:
        if self.subject is None and self.tenant is None and not self.scopes and self.client_id is None:
            return "anonymous"
        text = f"{self.subject or '?'}@{self.tenant or '-'}"
        if self.client_id:
            text += f" via {self.client_id}"
        if self.scopes:
            text += f" [{' '.join(self.scopes)}]"
        if self.audience:
            text += f" for {self.audience}"
        return text


ANONYMOUS: Final = AuthorizationContext()

class CacheKey(NamedTuple):
    """Where one cached result is filed."""

    server: str
    context: AuthorizationContext | None
    """The caller's authorization context; ``None`` for a public entry, shared by everybody."""
    method: str
    key: str | None
    """The cursor of a list page, or the URI of a read."""


def ttl_ms_of(result: Mapping[str, Any]) -> int:
    """The result's ``ttlMs`` as the spec says to read it: absent, negative or not an integer → 0."""
    ttl = result.get("ttlMs")
    if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or ttl < 0:
        return 0
    return int(ttl)


@dataclass
class CacheEntry:
    result: dict[str, Any]
    expires_at: float
    """Virtual seconds."""
    scope: str


class ListCache:
    """Cached list (and read) results, keyed by server, authorization context, method and cursor/URI.

    ``clock`` returns the current virtual time in seconds. One cache may be shared by every Client
    of a Host; the server name in the key keeps servers apart, the authorization context keeps
    tenants apart.
    """

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._entries: dict[CacheKey, CacheEntry] = {}
        self.hits = 0
        self.misses = 0

    def get(self, server: str, auth: AuthorizationContext, method: str, key: str | None) -> dict[str, Any] | None:
        """A fresh cached result for this caller, or ``None``. A private entry is looked up under the
        caller's own context only; a public one is shared by everybody."""
        now = self._clock()
        for ctx in (auth, None):
            filed = CacheKey(server, ctx, method, key)
            entry = self._entries.get(filed)
            if entry is None:
                continue
            if now < entry.expires_at:
                self.hits += 1
                return entry.result
            del self._entries[filed]
        self.misses += 1
        return None

    def put(self, server: str, auth: AuthorizationContext, method: str, key: str | None,
            result: dict[str, Any], *, mrtr_retry: bool = False) -> bool:
        """Store ``result`` if the rules allow; return whether it was stored.

        Not stored: a ``ttlMs`` of 0 (or absent/negative), an ``input_required`` result, the result of
        a Multi Round-Trip retry. A result without ``cacheScope`` is treated as private, the safe
        reading."""
        if mrtr_retry or result.get("resultType") == "input_required":
            return False
        ttl = ttl_ms_of(result)
        if ttl <= 0:
            return False
        scope = "public" if result.get("cacheScope") == "public" else "private"
        ctx = None if scope == "public" else auth
        self._entries[CacheKey(server, ctx, method, key)] = CacheEntry(result, self._clock() + ttl / 1000.0, scope)
        return True

    def invalidate(self, server: str, methods: tuple[str, ...] | None = None, key: str | None = None) -> int:
        """Drop entries of ``server`` (only ``methods``, and only ``key`` when given), for every
        authorization context: a change notification says the server's data changed, whoever asked."""
        doomed = [k for k in self._entries
                  if k.server == server and (methods is None or k.method in methods) and (key is None or k.key == key)]
        for k in doomed:
            del self._entries[k]
        return len(doomed)

    def on_notification(self, server: str, method: str, params: Mapping[str, Any] | None) -> int:
        """Apply a change notification; return how many entries it invalidated."""
        if method in INVALIDATES:
            return self.invalidate(server, INVALIDATES[method])
        if method == "notifications/resources/updated":
            uri = (params or {}).get("uri")
            return self.invalidate(server, ("resources/read",), uri if isinstance(uri, str) else None)
        return 0

    def __len__(self) -> int:
        return len(self._entries)

    def keys(self) -> list[CacheKey]:
        return list(self._entries)
