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

from hypothesis import strategies as st

from mcp_sim.grading.differential import Mismatch, differential
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
R_SAME = "caching.private-same-context"

TTLS = (1000, 1500, 5000, 30_000, 60_000, 90_000)
"""ttlMs values the cases use: whole eighths of a second, so the simulator's clock in seconds is exact."""
STEP = 125

STORING = 5
"""Callers the server answered (the first five of :attr:`World.callers`)."""

CLIENTS = ("desk-ide", "mail-agent", "cli-helper", "notes-app")
"""Client ids a caller's token may have been issued to."""

@dataclass
class World:
    """Who asks and what the server answered. Seven callers: 0 and 2 share a tenant; 3 is caller 0's user
    through another client, 4 the same user and client as 0 with fewer scopes; 5 differs from 0 only by
    tenant, 6 is caller 0 with the same scopes written in another order (the same grant). Callers 5
    and 6 only look up: the server answered callers 0–4."""

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
               caller(subjects[0], tenants[0], ide, narrow), caller(subjects[0], tenants[1], ide, full),
               caller(subjects[0], tenants[0], ide, full[::-1])]
    ttl = rng.choice(TTLS) if ttl_ms is None else ttl_ms
    server = catalog(rng, page_size=2, tenants=tuple(tenants) if private else (), ttl_ms=ttl)

    async def story(connect: Connect, srv: Server) -> None:
        for caller in callers[:STORING]:
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

    def store(self, at_ms: int, who: int, method: str, cursor: str | None = None, *,
              hints: dict[str, Any] | None = None) -> None:
        """``who``'s result for ``method``/``cursor`` arrives at ``at_ms``; ``hints`` overrides its
        ``ttlMs``/``cacheScope`` (a value ``None`` removes the field)."""
        result = copy.deepcopy(self.world.results[(who, method, cursor)])
        for name, value in (hints or {}).items():
            if value is None:
                result.pop(name, None)
            else:
                result[name] = value
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
            raise CheckFailed(f"{story}. Then {asked}: cache_lookup() returned a result{_whose(self.world, got)}, "
                              f"which this caller may not be served now.", stale_rule, case=asked,
                              expected="None (the client asks the server)")
        if got is None:
            raise CheckFailed(f"{story}. Then {asked}: cache_lookup() returned None, though a result this caller "
                              f"may be served is in the cache.", fresh_rule, case=asked,
                              expected="the result stored for it")
        raise CheckFailed(f"{story}. Then {asked}: cache_lookup() returned{_whose(self.world, got)}, not the "
                          f"result stored for this request.", R_KEY, case=asked, expected="the result stored for it")


def _whose(world: World, got: Any) -> str:
    """`` (X's page N)`` when ``got`` is one of the world's results, else empty."""
    for (who, method, cursor), result in world.results.items():
        if got == result:
            return f" ({_who(world.callers[who])}'s {_page(world, method, cursor)})"
    return f" {json.dumps(got)[:120]}" if got is not None else ""


def _start(ctx: CheckContext) -> int:
    return ctx.rng.randint(0, 400) * STEP


def check_fresh(ctx: CheckContext, kind: str) -> None:
    """Each kind runs on a server whose tools are private and on one whose tools are public."""
    for private in (True, False):
        world = make_world(ctx, private=private)
        script, t0 = Script(ctx, world), _start(ctx)
        ttl = world.results[(0, "tools/list", None)]["ttlMs"]
        if kind == "second page on its own":
            second = world.cursors["tools/list"][1]
            script.store(t0, 0, "tools/list")
            script.store(t0 + STEP, 0, "tools/list", second)
            script.lookup(t0 + 2 * STEP, 0, "tools/list", second, stale_rule=R_KEY)
            script.lookup(t0 + 2 * STEP, 0, "tools/list", stale_rule=R_KEY)
            continue
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
    elif kind == "ttlMs 1":  # the shortest freshness there is: fresh at the instant it arrived
        script.store(t0 + STEP, 0, "prompts/list", hints={"ttlMs": 1})
        script.lookup(t0 + STEP, 0, "prompts/list", stale_rule=R_EXPIRY)
        script.lookup(t0 + 2 * STEP, 0, "prompts/list", stale_rule=R_EXPIRY)
    elif kind == "a short ttlMs, at its expiry":  # 125 ms: a whole second would hide a ms/s mix-up
        script.store(t0 + STEP, 0, "prompts/list", hints={"ttlMs": STEP})
        script.lookup(t0 + STEP + STEP - 1, 0, "prompts/list", stale_rule=R_EXPIRY)
        script.lookup(t0 + 2 * STEP, 0, "prompts/list", stale_rule=R_EXPIRY)
    else:  # a second answer to the same request, half a ttlMs later
        t1 = t0 + ttl // 2
        script.store(t1, 0, "tools/list")
        script.lookup(t0 + ttl, 0, "tools/list", stale_rule=R_EXPIRY, fresh_rule=R_EXPIRY)
        script.lookup(t1 + ttl, 0, "tools/list", stale_rule=R_EXPIRY)


def check_zero(ctx: CheckContext, kind: str) -> None:
    revision = kind.rpartition(" ")[2] if kind.startswith("no ttlMs") else MODERN
    world = make_world(ctx, revision=revision, ttl_ms=0 if kind == "ttlMs 0" else None)
    script, t0 = Script(ctx, world), _start(ctx)
    hints = {"ttlMs": -ctx.rng.choice((1, 1000, 60_000))} if kind == "ttlMs negative" else None
    for method in ("tools/list", "prompts/list"):
        script.store(t0, 0, method, hints=hints)
        script.lookup(t0, 0, method, stale_rule=R_ZERO)
        script.lookup(t0 + ctx.rng.randint(1, 500), 0, method, stale_rule=R_ZERO)


PRIVATE_LOOKUPS = {"another tenant": 1, "same tenant, another user": 2, "same user, another client": 3,
                   "same user, fewer scopes": 4, "same user and client, another tenant": 5}


def check_private(ctx: CheckContext, kind: str) -> None:
    world = make_world(ctx, private=True)
    script, t0 = Script(ctx, world), _start(ctx)
    if kind == "same user, more scopes":  # a narrow token's entry is not the full-access IDE's either
        script.store(t0, 4, "tools/list")
        script.lookup(t0 + STEP, 0, "tools/list", stale_rule=R_PRIVATE)
        return
    script.store(t0, 0, "tools/list")
    if kind in PRIVATE_LOOKUPS:
        script.lookup(t0 + STEP, PRIVATE_LOOKUPS[kind], "tools/list", stale_rule=R_PRIVATE)
    elif kind == "the same grant, scopes in another order":
        script.lookup(t0 + STEP, 6, "tools/list", stale_rule=R_PRIVATE, fresh_rule=R_SAME)
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
    who = {"same tenant, another user": 2, "same user, fewer scopes": 4}.get(kind, 1)
    script.lookup(t0 + STEP, who, method, stale_rule=R_PUBLIC, fresh_rule=R_PUBLIC)


def check_key(ctx: CheckContext, kind: str) -> None:
    """Each kind runs on a server whose tools are private and on one whose tools are public."""
    for private in (True, False):
        world = make_world(ctx, private=private)
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


# --- generated: any script of stores and lookups, against the simulator's ListCache ---------------------

@dataclass(frozen=True)
class Op:
    """One step of a generated script: a result arrives (``store``) or a caller looks up (``lookup``)."""

    store: bool
    at_ms: int
    who: int
    method: str
    page: int
    ttl: int | None = None
    """``ttlMs`` of a stored result (``None``: absent)."""
    scope: str = "private"


_TTLS = (None, 0, -STEP, STEP, 1000, 1500, 5000)
_RADIX = (2, 16, 7, 2, 2, len(_TTLS), 2)
"""A noise op as one integer (cheaper to draw and to shrink than a tuple): store?, time step, caller,
method, page, ttlMs, scope."""
_GAPS = ("0", "1", "ttl-1", "ttl", "ttl+1", "2ttl")
"""How long after the probed store its lookup comes: the boundaries of freshness."""
_OPS = st.tuples(st.lists(st.integers(0, 2 * 16 * 7 * 2 * 2 * len(_TTLS) * 2 - 1), max_size=3),
                 st.integers(0, STORING - 1), st.sampled_from(_TTLS), st.sampled_from(("private", "public")),
                 st.sampled_from(("tools/list", "prompts/list")), st.integers(0, 1), st.integers(0, 6),
                 st.booleans(), st.sampled_from(_GAPS))


def _script_of(raw: tuple[Any, ...]) -> list[Op]:
    """A few ops of noise, then the probe: one store and one lookup by any caller, of the same request
    or of another one, at a freshness boundary. Times never go back (steps of 125 ms, so expiry
    instants are hit exactly, and a few odd ms); a store by a caller the server never answered is a
    lookup; prompts have one page."""
    noise, storer, ttl, scope, method, page, looker, same_request, gap = raw
    ops, at = [], 0
    for number in noise:
        digits = []
        for base in _RADIX:
            number, digit = divmod(number, base)
            digits.append(digit)
        store, step, who, method_no, noise_page, ttl_no, scope_no = digits
        noise_method = ("tools/list", "prompts/list")[method_no]
        at += step * STEP if step < 12 else (step - 11)
        ops.append(Op(bool(store) and who < STORING, at, who, noise_method,
                      noise_page if noise_method == "tools/list" else 0, _TTLS[ttl_no], ("private", "public")[scope_no]))
    page = page if method == "tools/list" else 0
    ops.append(Op(True, at, storer, method, page, ttl, scope))
    span = ttl if isinstance(ttl, int) and ttl > 0 else STEP
    after = {"0": 0, "1": 1, "ttl-1": span - 1, "ttl": span, "ttl+1": span + 1, "2ttl": 2 * span}[gap]
    asked = (method, page) if same_request else (("prompts/list", 0) if method == "tools/list" and page == 0
                                                 else ("tools/list", 0 if page else 1))
    ops.append(Op(False, at + after, looker, *asked))
    return ops


def _describe(ops: list[Op]) -> str:
    lines = []
    for op in ops:
        what = f"{op.method} page {op.page + 1}"
        if op.store:
            ttl = "no ttlMs" if op.ttl is None else f"ttlMs {op.ttl}"
            lines.append(f"at {op.at_ms} ms caller {op.who} receives {what} ({ttl}, cacheScope {op.scope!r})")
        else:
            lines.append(f"at {op.at_ms} ms caller {op.who} looks up {what}")
    return "; ".join(lines)


def _lookup_rule(world: World, ops: list[Op], i: int, got: Any, want: Any) -> str:
    """The rule a wrong answer to lookup ``ops[i]`` breaks, from the stores before it."""
    op = ops[i]
    me = AuthorizationContext.of(_auth(world.callers[op.who]))
    stores = [o for o in ops[:i] if o.store]
    if want is not None and got is None:
        source = next(o for o in reversed(stores) if (o.method, o.page) == (op.method, op.page)
                      and (o.scope == "public" or AuthorizationContext.of(_auth(world.callers[o.who])) == me))
        if source.scope == "public" and source.who != op.who:
            return R_PUBLIC
        return R_SAME if source.who != op.who else R_FRESH
    same_key = [o for o in stores if (o.method, o.page) == (op.method, op.page)]
    if not same_key:
        return R_KEY
    mine = [o for o in same_key if o.scope == "public"
            or AuthorizationContext.of(_auth(world.callers[o.who])) == me]
    if not mine:
        return R_PRIVATE
    last = mine[-1]
    if last.ttl is None or last.ttl <= 0:
        return R_ZERO
    return R_EXPIRY


class _Played:
    """Plays a generated script on the learner's cache and the oracle; the first wrong lookup raises."""

    def __init__(self, ctx: CheckContext, world: World) -> None:
        self.ctx, self.world = ctx, world

    @staticmethod
    def _public(script: Script, op: Op, cursor: str | None) -> Any:
        """The fresh public entry for this request, if any: when the caller also has a private one, either
        may be served (which one first is the simulator's choice)."""
        for key in script.oracle.keys():
            if key.context is None and (key.method, key.key) == (op.method, cursor):
                return script.oracle.get("catalog", AuthorizationContext(subject="\0public"), op.method, cursor)
        return None

    def __call__(self, ops: list[Op]) -> None:
        world, script = self.world, Script(self.ctx, self.world)
        for i, op in enumerate(ops):
            cursor = world.cursors[op.method][op.page]
            if op.store:
                script.store(op.at_ms, op.who, op.method, cursor, hints={"ttlMs": op.ttl, "cacheScope": op.scope})
                continue
            script.now_ms = op.at_ms
            want = script.oracle.get("catalog", script._context(op.who), op.method, cursor)
            got = self.ctx.function("cache_lookup")(copy.deepcopy(script.cache), op.at_ms,
                                                    dict(world.callers[op.who]), op.method, cursor)
            if got != want and not (got is not None and want is not None and got == self._public(script, op, cursor)):
                answer = "None" if got is None else "a cached result"
                raise CheckFailed(f"Lookup {i + 1} of this script: your cache_lookup() returned {answer}{_whose(world, got) if got is not None else ''}.",
                                  _lookup_rule(world, ops, i, got, want),
                                  expected="None (ask the server)" if want is None else "the result stored for it")


def _never_differs(case: Any, got: Any, want: Any) -> Mismatch | None:
    return None  # the script raises at its first wrong lookup


def check_generated(ctx: CheckContext, kind: str) -> None:
    world = make_world(ctx, private=True)
    differential(ctx, _OPS.map(_script_of), learner=_Played(ctx, world), oracle=lambda ops: None,
                 compare=_never_differs, describe=_describe, raises_rule=R_KEY, examples=25)


EXERCISE = Exercise(
    id="ex07_cache",
    title="A cache of list results: ttlMs, cacheScope and who asked",
    chapter="07",
    summary="Keep list results while ttlMs says they are fresh, never serve ttlMs 0 or a 2025 result without "
            "one, share public entries, and never give one caller's private entry to another.",
    rules=(R_FRESH, R_EXPIRY, R_ZERO, R_PRIVATE, R_SAME, R_PUBLIC, R_KEY),
    functions=("cache_store", "cache_lookup"),
    checks=(
        Check("A fresh result is served from the cache", R_FRESH, check_fresh,
              ("just stored", "one ms before expiry", "second page on its own"),
              hint="Store when the result arrived and its ttlMs; it is fresh while now_ms < arrival + ttlMs."),
        Check("Stale from received + ttlMs on", R_EXPIRY, check_expiry,
              ("exactly at expiry", "long after expiry", "ttlMs 1", "a short ttlMs, at its expiry",
               "a newer result restarts the clock"),
              hint="Compare with <, not <=: at arrival + ttlMs the entry is already stale."),
        Check("ttlMs 0 or absent: never served", R_ZERO, check_zero,
              ("ttlMs 0", "ttlMs negative", "no ttlMs 2025-11-25", "no ttlMs 2025-06-18"),
              hint="Read a missing ttlMs as 0, and a ttlMs of 0 as 'do not keep this'."),
        Check("A private entry goes only to its own caller", R_PRIVATE, check_private,
              (*PRIVATE_LOOKUPS, "same user, more scopes", "the same grant, scopes in another order",
               "each caller their own"),
              hint="File a private entry under the caller's whole authorization context — subject, tenant, client "
                   "and scopes together; look it up the same way."),
        Check("A public entry serves every caller", R_PUBLIC, check_public,
              ("another tenant", "same tenant, another user", "same user, fewer scopes",
               "public prompts beside private tools"),
              hint="The scope belongs to each result: a public result is filed where every caller finds it."),
        Check("Each method and page is its own entry", R_KEY, check_key,
              ("tools vs prompts", "page 1 vs page 2", "a page never stored"),
              hint="The key includes the method and the cursor (None for the first page)."),
        Check("Any script of stores and lookups answers like the simulator's cache", R_KEY, check_generated,
              ("generated",),
              hint="Replay the script by hand: which entries exist, whose are they, and which are still fresh?"),
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
