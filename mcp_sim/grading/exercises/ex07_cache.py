"""Exercise ex07_cache (chapter 07): a client's cache of list results — ``ttlMs``, ``cacheScope``, who asked.

In 2026-07-28 every list result says how long it stays fresh (``ttlMs``, milliseconds) and whether it
is the same for everybody (``cacheScope: "public"``) or depends on the caller (``"private"``). The
learner writes the two halves of the Host's one shared cache, as data in and data out:
``cache_store(cache, now_ms, caller, method, cursor, result)`` returns the new cache and
``cache_lookup(cache, now_ms, caller, method, cursor)`` returns a fresh result or ``None``.

Every case plays a script of stores and lookups on the virtual clock. The results are what a seeded
catalog server sent the real Client over the wire (one connection per caller, in 2026-07-28 — or in
a 2025 revision, whose results carry no ``ttlMs``). What each lookup must return comes from the
simulator's own client cache, :class:`mcp_sim.roles.cache.ListCache`, given the same script.
"""

from __future__ import annotations

import copy
import functools
import json
import random
from dataclasses import dataclass, field
from typing import Any

from mcp_sim.grading.exercises.ex07_world import (
    MODERN,
    SUBJECTS,
    TENANTS,
    Connect,
    catalog,
    list_everything,
    record,
    results_by_request,
)
from mcp_sim.grading.model import Check, CheckContext, CheckFailed, Exercise, Hint
from mcp_sim.roles.cache import AuthorizationContext, ListCache
from mcp_sim.roles.server import Server
from mcp_sim.security.identity import AuthInfo

R_FRESH = "caching.ttl-fresh"
R_EXPIRY = "caching.refetch-when-stale"
R_ZERO = "caching.ttl-absent"
R_PRIVATE = "caching.private-not-shared"
R_PUBLIC = "caching.public-shared"
R_KEY = "caching.key-is-method-and-params"

TTLS = (1000, 1500, 5000, 30_000, 60_000, 90_000)
"""ttlMs values the cases use: whole eighths of a second, so the simulator's clock in seconds is exact."""
STEP = 125

CLIENTS = ("desk-ide", "mail-agent", "cli-helper", "notes-app")
"""Client ids a caller's token may have been issued to."""

@dataclass
class World:
    """Who asks and what the server answered. Five callers: 0 and 2 share a tenant; 3 is caller 0's user
    through another client, 4 the same user and client as 0 with another set of scopes."""

    revision: str
    callers: list[dict[str, Any]]
    results: dict[tuple[int, str, str | None], dict[str, Any]]
    cursors: dict[str, list[str | None]] = field(default_factory=dict)
    """Each list's cursors in page order (``None`` first)."""


def make_world(ctx: CheckContext, *, revision: str = MODERN, ttl_ms: int | None = None,
               private: bool = True) -> World:
    """The world of this case's seed: every kind of one seed meets the same callers and server."""
    return _world(ctx.seed, revision, ttl_ms, private)


@functools.lru_cache(maxsize=64)
def _world(seed: int, revision: str, ttl_ms: int | None, private: bool) -> World:
    """Three callers list tools and prompts of a seeded catalog server (tools per caller when ``private``).

    Kept for a while (worlds are pure functions of their arguments and never changed): the kinds of a
    seed share one simulator run."""
    rng = random.Random(f"ex07_cache|{seed}")
    subjects = rng.sample(SUBJECTS, 3)
    tenants = rng.sample(TENANTS, 2)
    ide, app = rng.sample(CLIENTS, 2)
    full, narrow = ["catalog:read", "catalog:write"], ["catalog:read"]

    def caller(subject: str, tenant: str, client_id: str, scopes: list[str]) -> dict[str, Any]:
        return {"subject": subject, "tenant": tenant, "client_id": client_id, "scopes": scopes}

    callers = [caller(subjects[0], tenants[0], ide, full), caller(subjects[1], tenants[1], ide, full),
               caller(subjects[2], tenants[0], ide, full), caller(subjects[0], tenants[0], app, full),
               caller(subjects[0], tenants[0], ide, narrow)]
    ttl = rng.choice(TTLS) if ttl_ms is None else ttl_ms
    server = catalog(rng, page_size=2, tenants=tuple(tenants) if private else (), ttl_ms=ttl)

    async def story(connect: Connect, srv: Server) -> None:
        for caller in callers:
            client = await connect(_auth(caller))
            await list_everything(client, ("tools/list", "prompts/list"))

    world = World(revision, callers, {})
    for request, result, link in results_by_request(record(rng.randint(0, 2**31), revision, server, story)):
        if request["method"] in ("tools/list", "prompts/list"):
            cursor = (request.get("params") or {}).get("cursor")
            world.results[(link, request["method"], cursor)] = result
            if link == 0:
                world.cursors.setdefault(request["method"], []).append(cursor)
    return world


def _auth(caller: dict[str, Any]) -> AuthInfo:
    return AuthInfo(subject=caller["subject"], tenant=caller["tenant"], scopes=tuple(caller["scopes"]),
                    client_id=caller["client_id"])


def _who(caller: dict[str, Any]) -> str:
    return f"{caller['subject']}@{caller['tenant']} via {caller['client_id']} [{' '.join(caller['scopes'])}]"


def _page(world: World, method: str, cursor: str | None) -> str:
    n = world.cursors[method].index(cursor) + 1
    return f"{method} page {n}" + ("" if cursor is None else f" (cursor {cursor!r})")


def _hints(result: dict[str, Any]) -> str:
    ttl = f"ttlMs {result['ttlMs']}" if "ttlMs" in result else "no ttlMs"
    scope = f"cacheScope {result['cacheScope']!r}" if "cacheScope" in result else "no cacheScope"
    return f"{ttl}, {scope}"


class Script:
    """Plays stores and lookups on the learner's cache and on the simulator's :class:`ListCache`."""

    def __init__(self, ctx: CheckContext, world: World) -> None:
        self.ctx, self.world = ctx, world
        self.cache: Any = {}
        self.now_ms = 0
        self.oracle = ListCache(lambda: self.now_ms / 1000)
        self.history: list[str] = []

    def _context(self, who: int) -> AuthorizationContext:
        return AuthorizationContext.of(_auth(self.world.callers[who]))

    def store(self, at_ms: int, who: int, method: str, cursor: str | None = None) -> None:
        result = self.world.results[(who, method, cursor)]
        self.now_ms = at_ms
        self.oracle.put("catalog", self._context(who), method, cursor, copy.deepcopy(result))
        got = self.ctx.function("cache_store")(self.cache, at_ms, dict(self.world.callers[who]), method, cursor,
                                               copy.deepcopy(result))
        if not isinstance(got, (dict, list)):
            raise CheckFailed(f"cache_store() must return the cache (a dict or list of JSON data) so the next call "
                              f"gets it back; it returned {got!r}.")
        try:
            json.dumps(got)
        except (TypeError, ValueError) as exc:
            raise CheckFailed(f"cache_store() returned a cache that is not JSON data ({exc}).") from None
        self.cache = got
        self.history.append(f"at {at_ms} ms {_who(self.world.callers[who])} received {_page(self.world, method, cursor)} "
                            f"({_hints(result)})")

    def lookup(self, at_ms: int, who: int, method: str, cursor: str | None = None, *,
               stale_rule: str, fresh_rule: str = R_FRESH) -> None:
        self.now_ms = at_ms
        want = self.oracle.get("catalog", self._context(who), method, cursor)
        got = self.ctx.function("cache_lookup")(copy.deepcopy(self.cache), at_ms, dict(self.world.callers[who]),
                                                method, cursor)
        if got == want:
            return
        story = "; ".join(self.history) or "nothing was stored"
        asked = f"at {at_ms} ms {_who(self.world.callers[who])} looks up {_page(self.world, method, cursor)}"
        if want is None:
            raise CheckFailed(f"{story}. Then {asked}: the cache must answer None (ask the server), but "
                              f"cache_lookup() returned a result{_whose(self.world, got)}.", stale_rule)
        if got is None:
            raise CheckFailed(f"{story}. Then {asked}: that result is fresh and may be served, but cache_lookup() "
                              f"returned None.", fresh_rule)
        raise CheckFailed(f"{story}. Then {asked}: cache_lookup() returned{_whose(self.world, got)} instead of "
                          f"the result stored for it.", R_KEY)


def _whose(world: World, got: Any) -> str:
    """`` (X's page N)`` when ``got`` is one of the world's results, else empty."""
    for (who, method, cursor), result in world.results.items():
        if got == result:
            return f" ({_who(world.callers[who])}'s {_page(world, method, cursor)})"
    return f" {json.dumps(got)[:120]}" if got is not None else ""


def _start(ctx: CheckContext) -> int:
    return ctx.rng.randint(0, 400) * STEP


def check_fresh(ctx: CheckContext, kind: str) -> None:
    world = make_world(ctx, private=ctx.rng.random() < 0.5)
    script, t0 = Script(ctx, world), _start(ctx)
    ttl = world.results[(0, "tools/list", None)]["ttlMs"]
    if kind == "second page on its own":
        second = world.cursors["tools/list"][1]
        script.store(t0, 0, "tools/list")
        script.store(t0 + STEP, 0, "tools/list", second)
        script.lookup(t0 + 2 * STEP, 0, "tools/list", second, stale_rule=R_KEY)
        script.lookup(t0 + 2 * STEP, 0, "tools/list", stale_rule=R_KEY)
        return
    script.store(t0, 0, "tools/list")
    script.lookup(t0 if kind == "just stored" else t0 + ttl - 1, 0, "tools/list", stale_rule=R_EXPIRY)


def check_expiry(ctx: CheckContext, kind: str) -> None:
    world = make_world(ctx)
    script, t0 = Script(ctx, world), _start(ctx)
    ttl = world.results[(0, "tools/list", None)]["ttlMs"]
    script.store(t0, 0, "tools/list")
    if kind == "exactly at expiry":
        script.lookup(t0 + ttl, 0, "tools/list", stale_rule=R_EXPIRY)
    elif kind == "long after expiry":
        script.lookup(t0 + ttl * ctx.rng.randint(2, 5) + ctx.rng.randint(1, 999), 0, "tools/list", stale_rule=R_EXPIRY)
    else:  # a second answer to the same request, half a ttlMs later
        t1 = t0 + ttl // 2
        script.store(t1, 0, "tools/list")
        script.lookup(t0 + ttl, 0, "tools/list", stale_rule=R_EXPIRY, fresh_rule=R_EXPIRY)
        script.lookup(t1 + ttl, 0, "tools/list", stale_rule=R_EXPIRY)


def check_zero(ctx: CheckContext, kind: str) -> None:
    revision = kind.rpartition(" ")[2] if kind.startswith("no ttlMs") else MODERN
    world = make_world(ctx, revision=revision, ttl_ms=0 if kind == "ttlMs 0" else None)
    script, t0 = Script(ctx, world), _start(ctx)
    method = ctx.rng.choice(("tools/list", "prompts/list"))
    script.store(t0, 0, method)
    script.lookup(t0, 0, method, stale_rule=R_ZERO)
    script.lookup(t0 + ctx.rng.randint(1, 500), 0, method, stale_rule=R_ZERO)


def check_private(ctx: CheckContext, kind: str) -> None:
    world = make_world(ctx, private=True)
    script, t0 = Script(ctx, world), _start(ctx)
    script.store(t0, 0, "tools/list")
    if kind == "another tenant":
        script.lookup(t0 + STEP, 1, "tools/list", stale_rule=R_PRIVATE)
    elif kind == "same tenant, another user":
        script.lookup(t0 + STEP, 2, "tools/list", stale_rule=R_PRIVATE)
    elif kind == "same user, another client":
        script.lookup(t0 + STEP, 3, "tools/list", stale_rule=R_PRIVATE)
    elif kind == "same user, other scopes":
        script.lookup(t0 + STEP, 4, "tools/list", stale_rule=R_PRIVATE)
    else:
        script.store(t0 + STEP, 1, "tools/list")
        script.lookup(t0 + 2 * STEP, 0, "tools/list", stale_rule=R_PRIVATE)
        script.lookup(t0 + 2 * STEP, 1, "tools/list", stale_rule=R_PRIVATE)
        script.lookup(t0 + 2 * STEP, 2, "tools/list", stale_rule=R_PRIVATE)


def check_public(ctx: CheckContext, kind: str) -> None:
    beside = kind == "public prompts beside private tools"
    world = make_world(ctx, private=beside)
    script, t0 = Script(ctx, world), _start(ctx)
    method = "prompts/list" if beside else "tools/list"
    if beside:
        script.store(t0, 0, "tools/list")
    script.store(t0, 0, method)
    who = 2 if kind == "same tenant, another user" else 1
    script.lookup(t0 + STEP, who, method, stale_rule=R_PUBLIC, fresh_rule=R_PUBLIC)


def check_key(ctx: CheckContext, kind: str) -> None:
    world = make_world(ctx, private=ctx.rng.random() < 0.5)
    script, t0 = Script(ctx, world), _start(ctx)
    second = world.cursors["tools/list"][1]
    script.store(t0, 0, "tools/list")
    if kind == "tools vs prompts":
        script.lookup(t0 + STEP, 0, "prompts/list", stale_rule=R_KEY)
        script.store(t0 + STEP, 0, "prompts/list")
        script.lookup(t0 + 2 * STEP, 0, "tools/list", stale_rule=R_KEY)
        script.lookup(t0 + 2 * STEP, 0, "prompts/list", stale_rule=R_KEY)
    elif kind == "page 1 vs page 2":
        script.store(t0 + STEP, 0, "tools/list", second)
        script.lookup(t0 + 2 * STEP, 0, "tools/list", stale_rule=R_KEY)
        script.lookup(t0 + 2 * STEP, 0, "tools/list", second, stale_rule=R_KEY)
    else:
        script.lookup(t0 + STEP, 0, "tools/list", second, stale_rule=R_KEY)


EXERCISE = Exercise(
    id="ex07_cache",
    title="A cache of list results: ttlMs, cacheScope and who asked",
    chapter="07",
    summary="Keep list results while ttlMs says they are fresh, never serve ttlMs 0 or a 2025 result without "
            "one, share public entries, and never give one caller's private entry to another.",
    rules=(R_FRESH, R_EXPIRY, R_ZERO, R_PRIVATE, R_PUBLIC, R_KEY),
    functions=("cache_store", "cache_lookup"),
    checks=(
        Check("A fresh result is served from the cache", R_FRESH, check_fresh,
              ("just stored", "one ms before expiry", "second page on its own"),
              hint="Store when the result arrived and its ttlMs; it is fresh while now_ms < arrival + ttlMs."),
        Check("Stale from received + ttlMs on", R_EXPIRY, check_expiry,
              ("exactly at expiry", "long after expiry", "a newer result restarts the clock"),
              hint="Compare with <, not <=: at arrival + ttlMs the entry is already stale."),
        Check("ttlMs 0 or absent: never served", R_ZERO, check_zero,
              ("ttlMs 0", "no ttlMs 2025-11-25", "no ttlMs 2025-06-18"),
              hint="Read a missing ttlMs as 0, and a ttlMs of 0 as 'do not keep this'."),
        Check("A private entry goes only to its own caller", R_PRIVATE, check_private,
              ("another tenant", "same tenant, another user", "same user, another client", "same user, other scopes",
               "each caller their own"),
              hint="File a private entry under the caller's whole authorization context — subject, tenant, client "
                   "and scopes together; look it up the same way."),
        Check("A public entry serves every caller", R_PUBLIC, check_public,
              ("another tenant", "same tenant, another user", "public prompts beside private tools"),
              hint="The scope belongs to each result: a public result is filed where every caller finds it."),
        Check("Each method and page is its own entry", R_KEY, check_key,
              ("tools vs prompts", "page 1 vs page 2", "a page never stored"),
              hint="The key includes the method and the cursor (None for the first page)."),
    ),
    hints=(
        Hint("Key each entry by (method, cursor) — plus, for a private result, everything in the caller's "
             "authorization (subject, tenant, client, scopes). "
             "Keep the result, and the instant it stops being fresh: now_ms + ttlMs.", R_KEY),
        Hint("A result is fresh while now_ms < expiry; at expiry it is stale. A ttlMs of 0, or none at all, "
             "means: do not keep it.", R_ZERO),
        Hint("On lookup, try the caller's own private entry, then the public one; anything else is a miss "
             "(None).", R_PRIVATE),
    ),
    forbidden=("mcp_sim.roles", "mcp_sim.capabilities", "mcp_sim.grading"),
)
