"""Change and caching, played on the virtual clock (course chapter 07).

Servers change while clients hold on to what they listed. Three stories show what the protocol
gives a client to keep up, in both eras:

* :func:`watch_a_note` — hearing about change. Legacy (≤ 2025-11-25): ``list_changed`` reaches every
  session whose server declared ``listChanged``, and ``resources/subscribe`` asks for
  ``notifications/resources/updated`` about one URI. Modern (2026-07-28): nothing arrives unless the
  client opened a ``subscriptions/listen`` stream; the server acknowledges what it will honour and
  tags every notification with the stream's ``subscriptionId``.
* :func:`host_relists` — what a Host does with ``tools/list_changed``: forget that server's tools and
  list them again (the notification carries no list); and what happens to a 2026-07-28 Host that
  never listens — its cached list stays until ``ttlMs`` runs out.
* :func:`gateway_timeline` — one list cache shared by several callers with different tokens: public
  entries are shared, private ones are kept per authorization context, entries expire after
  ``ttlMs`` and a change notification drops them for everybody.

:class:`WatchedCache` is the client's own :class:`~mcp_sim.roles.cache.ListCache` that also writes
down, on the virtual clock, every decision it takes; :class:`Timeline` shows those decisions as a table.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal

import anyio

import mcp_sim.scenarios.finance as finance
import mcp_sim.scenarios.notes as notes
import mcp_sim.scenarios.weather as weather
from mcp_sim.capabilities.caching import CachePolicy
from mcp_sim.protocol.errors import McpError
from mcp_sim.protocol.revisions import REVISIONS
from mcp_sim.roles.cache import AuthorizationContext, CacheKey, ListCache
from mcp_sim.roles.client import Client, Subscription
from mcp_sim.roles.host import HOST, Host
from mcp_sim.roles.server import Server
from mcp_sim.roles.server_session import serve
from mcp_sim.security.identity import AuthInfo
from mcp_sim.sim.world import Simulation
from mcp_sim.transports.memory import memory_link

if TYPE_CHECKING:
    from mcp_sim.trace.recorder import Recorder

CacheAction = Literal["hit", "miss", "expired", "stored", "not stored", "invalidated"]

GATEWAY: Final = "gateway"
"""The participant that owns the shared cache in :func:`gateway_timeline` (a Host serving many users)."""


# --------------------------------------------------------------------------------------------------
# A cache that says what it does
# --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CacheEvent:
    """One decision of the cache, at a moment of virtual time."""

    at_ms: int
    server: str
    context: str
    """Whose entry it concerns: an authorization context, or ``everyone`` for a public entry. For a
    miss (no entry at all) it is the caller's context."""
    method: str
    action: CacheAction
    detail: str = ""
    until_ms: int | None = None
    """For ``stored``: until when the entry is fresh."""


def _lane(key: CacheKey) -> str:
    return "everyone" if key.context is None else str(key.context)


class WatchedCache(ListCache):
    """The client's :class:`ListCache`, unchanged, plus a log of every lookup, store and invalidation.

    A lookup that finds nothing is a ``miss``; one that finds an entry whose ``ttlMs`` has run out is
    ``expired`` (the entry is dropped, and the client asks the server again); an entry dropped by a
    change notification is ``invalidated``. :meth:`lanes` draws the log as a diagram."""

    def __init__(self, clock: Callable[[], float]) -> None:
        super().__init__(clock)
        self._now = clock
        self.events: list[CacheEvent] = []

    def _log(self, server: str, context: str, method: str, action: CacheAction, detail: str = "",
             until_ms: int | None = None) -> None:
        self.events.append(CacheEvent(round(self._now() * 1000), server, context, method, action, detail, until_ms))

    def get(self, server: str, auth: AuthorizationContext, method: str, key: str | None) -> dict[str, Any] | None:
        before = set(self.keys())
        found = super().get(server, auth, method, key)
        gone = sorted(before - set(self.keys()), key=str)
        for dropped in gone:
            self._log(server, _lane(dropped), method, "expired")
        if found is not None:
            private = CacheKey(server, auth, method, key) in before
            self._log(server, str(auth) if private else "everyone", method, "hit")
        elif not gone:
            self._log(server, str(auth), method, "miss")
        return found

    def put(self, server: str, auth: AuthorizationContext, method: str, key: str | None,
            result: dict[str, Any], *, mrtr_retry: bool = False) -> bool:
        stored = super().put(server, auth, method, key, result, mrtr_retry=mrtr_retry)
        if stored:
            scope = "public" if result.get("cacheScope") == "public" else "private"
            ttl = int(result["ttlMs"])
            self._log(server, "everyone" if scope == "public" else str(auth), method, "stored",
                      f"{scope}, fresh for {ttl / 1000:g} s", round(self._now() * 1000) + ttl)
        else:
            why = "ttlMs 0" if "ttlMs" in result else "no ttlMs"
            self._log(server, str(auth), method, "not stored", why)
        return stored

    def invalidate(self, server: str, methods: tuple[str, ...] | None = None, key: str | None = None) -> int:
        before = set(self.keys())
        dropped = super().invalidate(server, methods, key)
        for gone in sorted(before - set(self.keys()), key=str):
            self._log(server, _lane(gone), gone.method, "invalidated", "by a change notification")
        return dropped

    def lanes(self, *, until_s: int | None = None) -> CacheLanes:
        """The log as one lane per cache entry (server and whose entry) against virtual seconds."""
        return CacheLanes(tuple(self.events), until_s)


LANE_MARKS: Final = {"stored": "S", "hit": "H", "expired": "E", "invalidated": "X"}
"""The letters of :class:`CacheLanes`; ``━`` marks seconds an entry is fresh, ``╌`` seconds it is
still held but stale (dropped at the next lookup), ``·`` no entry."""


@dataclass(frozen=True)
class CacheLanes:
    """A cache's life drawn against the virtual clock, one character per second, one lane per entry.

    ``S`` stored, ``H`` hit, ``E`` found expired (dropped; an ``S`` follows if the client fetched it
    again), ``X`` dropped by a change notification. Where two things happen in the same second the
    later one is drawn, except that ``E``/``X`` followed by ``S`` draws ``R`` (refetched)."""

    events: tuple[CacheEvent, ...]
    until_s: int | None = None

    def rows(self) -> list[tuple[str, str]]:
        marked = [e for e in self.events if e.action in LANE_MARKS]
        if not marked:
            return []
        end = self.until_s if self.until_s is not None else max(e.at_ms for e in marked) // 1000 + 3
        lanes: dict[str, list[CacheEvent]] = {}
        for e in marked:
            lanes.setdefault(f"{e.server} · {e.context}", []).append(e)
        out = []
        for name, events in lanes.items():
            cells = ["·"] * (end + 1)
            fresh_until: int | None = None
            held = False
            for second in range(end + 1):
                now = [e for e in events if e.at_ms // 1000 == second]
                for e in now:
                    if e.action == "stored":
                        fresh_until, held = e.until_ms, True
                    elif e.action in ("expired", "invalidated"):
                        fresh_until, held = None, False
                if now:
                    letters = [LANE_MARKS[e.action] for e in now]
                    refetched = letters[-1] == "S" and any(x in ("E", "X") for x in letters)
                    cells[second] = "R" if refetched else letters[-1]
                elif held and fresh_until is not None:
                    cells[second] = "━" if second * 1000 < fresh_until else "╌"
            out.append((name, "".join(cells)))
        return out

    def __str__(self) -> str:
        rows = self.rows()
        if not rows:
            return "(nothing was cached)"
        width = max(len(name) for name, _ in rows)
        length = len(rows[0][1])
        ruler = "".join(f"{s:<10}" for s in range(0, length, 10))[:length]
        ticks = "".join("|" if s % 10 == 0 else " " for s in range(length))
        lines = [" " * width + "  " + ruler + "  (virtual seconds)", (" " * width + "  " + ticks).rstrip()]
        lines += [f"{name:<{width}}  {cells}" for name, cells in rows]
        lines.append("S stored  H hit  E expired  X dropped by a notification  R dropped, then fetched again  "
                     "━ fresh  ╌ stale")
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        return f"<pre style='line-height:1.25'>{html.escape(str(self))}</pre>"


# --------------------------------------------------------------------------------------------------
# A timeline on the virtual clock
# --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Row:
    """One moment of a timeline: who looked, what the cache did, whether the server was asked."""

    at_ms: int
    who: str
    server: str
    cache: str
    asked: bool | None
    """Did a request reach the server? ``None`` for rows that are not lookups (a change, a notification)."""
    seen: tuple[str, ...] = ()


COLUMNS: Final = ("time", "who", "server", "cache", "server asked?", "tools seen")


@dataclass(repr=False)
class Timeline:
    """What happened when, as the simulation's clock saw it. ``str()`` (and ``repr()``) is a text
    table; in a notebook it shows as an HTML table."""

    title: str
    rows: list[Row] = field(default_factory=list)
    sim: Simulation | None = None
    cache: WatchedCache | None = None
    """The cache the run used: its log (``events``) and what it still holds (``keys()``)."""

    def cells(self) -> list[tuple[str, ...]]:
        out: list[tuple[str, ...]] = []
        for r in self.rows:
            asked = "" if r.asked is None else "yes" if r.asked else "no"
            out.append((f"{r.at_ms / 1000:g} s", r.who, r.server, r.cache, asked, ", ".join(r.seen)))
        return out

    @property
    def requests(self) -> int:
        """How many lookups reached the server."""
        return sum(1 for r in self.rows if r.asked)

    def __str__(self) -> str:
        rows = [COLUMNS, *self.cells()]
        widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
        lines = [self.title]
        for n, row in enumerate(rows):
            lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
            if n == 0:
                lines.append("  ".join("-" * w for w in widths))
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        head = "".join(f"<th style='text-align:left'>{c}</th>" for c in COLUMNS)
        body = "".join("<tr>" + "".join(f"<td style='text-align:left'>{html.escape(c)}</td>" for c in row) + "</tr>"
                       for row in self.cells())
        return (f"<p><b>{html.escape(self.title)}</b></p><table><thead><tr>{head}</tr></thead>"
                f"<tbody>{body}</tbody></table>")


def _describe(events: Sequence[CacheEvent]) -> str:
    """The cache's decisions during one lookup, in words: ``miss → stored (private, fresh for 20 s)``."""
    parts = []
    for e in events:
        parts.append(f"{e.action} ({e.detail})" if e.detail else e.action)
    return " → ".join(parts) or "not cached"


def _tool_names(tools: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    return tuple(str(t["name"]) for t in tools)


# --------------------------------------------------------------------------------------------------
# Story 1: hearing about change, in each era
# --------------------------------------------------------------------------------------------------

TODO: Final = f"{notes.PREFIX}todo.md"
MISSING: Final = f"{notes.PREFIX}nowhere.md"


async def _quiet(call: Any) -> dict[str, Any] | None:
    """Await a request whose error response is part of the lesson (it is in the trace)."""
    try:
        result: dict[str, Any] = await call
        return result
    except McpError:
        return None


def watch_a_note(revision: str, *, seed: int = 0) -> Simulation:
    """A client watches ``todo.md`` on the notes server and hears about a new tool.

    Legacy: ``resources/subscribe`` to ``todo.md`` (and to a URI that does not exist: ``-32002``), a
    write to the note (``notifications/resources/updated``), a new tool (``tools/list_changed``,
    sent to every session: nobody asked for it), ``resources/unsubscribe``, another write (silence).
    Modern: one ``subscriptions/listen`` names the note and the tool list; the acknowledgement comes
    first, every notification carries the listen request's id; closing the stream ends it all."""
    sim = Simulation(seed)
    modern = REVISIONS[revision].is_modern

    async def main() -> None:
        server = notes.build()
        async with anyio.create_task_group() as tg:
            to_server, server_end = memory_link(sim, "notes")
            tg.start_soon(serve, server, server_end)
            client = Client("watcher", era="modern" if modern else "legacy", versions=(revision,), sim=sim)
            await client.connect(to_server, tg)
            listen: Subscription | None = None
            if modern:
                listen = await client.listen({"resourceSubscriptions": [TODO], "toolsListChanged": True})
            else:
                await client.subscribe_resource(TODO)
                await _quiet(client.subscribe_resource(MISSING))
            await anyio.sleep(1)
            await client.call_tool("write_note", {"path": "todo.md", "text": "# To do\n- learn list_changed\n"})
            await anyio.sleep(1)
            server.add_tool(lambda: f"{len(server.resources)} notes", name="count_notes",
                            description="How many notes there are.")
            await anyio.sleep(1)
            if listen is not None:
                await listen.close()
            else:
                await client.unsubscribe_resource(TODO)
            await anyio.sleep(1)
            await client.call_tool("write_note", {"path": "todo.md", "text": "# To do\n- nothing\n"})
            await anyio.sleep(1)
            await client.close()

    sim.run(main)
    return sim


def listen_in_detail(*, seed: int = 0) -> Simulation:
    """2026-07-28 only: what the acknowledgement is for, two streams at once, and both ways to end one.

    The ``board`` server declares ``listChanged`` but not ``resources.subscribe``, so the first
    stream's acknowledgement leaves ``resourceSubscriptions`` out: the client asked for more than it
    got, and must read the acknowledgement to know. A second stream listens to tools only. A new tool
    is announced on both, each tagged with its own id; the client closes the second stream
    (``notifications/cancelled``); a new prompt reaches only the first; the server then ends the
    first gracefully with a ``SubscriptionsListenResult``."""
    sim = Simulation(seed)

    async def main() -> None:
        server = Server("board", version="1.0.0", subscribe=False)
        server.add_tool(lambda: "pinned", name="pin", description="Pin a card.")
        server.add_prompt(lambda: "Summarise the board.", name="summary", description="Summarise the board.")
        server.add_resource("board://cards", content="3 cards")
        async with anyio.create_task_group() as tg:
            to_server, server_end = memory_link(sim, "board")
            tg.start_soon(serve, server, server_end)
            client = Client("watcher", era="modern", versions=("2026-07-28",), sim=sim)
            await client.connect(to_server, tg)
            everything = await client.listen({"toolsListChanged": True, "promptsListChanged": True,
                                              "resourceSubscriptions": ["board://cards"]})
            tools_only = await client.listen({"toolsListChanged": True})
            await anyio.sleep(1)
            server.add_tool(lambda: "archived", name="archive", description="Archive a card.")
            await anyio.sleep(1)
            await tools_only.close()
            await anyio.sleep(1)
            server.add_prompt(lambda: "Plan the sprint.", name="plan", description="Plan the sprint.")
            await anyio.sleep(1)
            server.close_subscriptions()
            await anyio.sleep(1)
            assert everything.closed
            await client.close()

    sim.run(main)
    return sim


# --------------------------------------------------------------------------------------------------
# Story 2: what a Host does when the tool list changes
# --------------------------------------------------------------------------------------------------

HOST_LOOKS: Final = (6, 30, 61)
"""When (virtual seconds) the Host lists tools again before a model turn, in :func:`host_relists`."""


def host_relists(revision: str, *, listen: bool = True, seed: int = 0) -> Timeline:
    """A Host lists the notes server's tools at 0 s; at 5 s the server gains ``count_notes``; the Host
    lists again before model turns at 6, 30 and 61 s.

    Legacy: the server's ``tools/list_changed`` makes the Host forget that server's tools and re-list
    at once; nothing is cached (no ``ttlMs``), so each later look asks the server. Modern with a
    ``subscriptions/listen`` stream: the notification drops the cached list, the Host re-lists, and
    later looks are answered from the cache. Modern with ``listen=False``: no notification ever comes;
    the cached list (``ttlMs`` 60 s) is served until it expires, so the new tool stays unseen until then."""
    sim = Simulation(seed)
    modern = REVISIONS[revision].is_modern
    era = "2026-07-28, " + ("listening" if listen else "not listening") if modern else revision
    timeline = Timeline(f"A Host and a changing tool list ({era})", sim=sim)

    async def main() -> None:
        server = notes.build()
        async with Host(name="host", tool_review=lambda server, tool: True) as host:
            cache = timeline.cache = host.cache = WatchedCache(sim.now)
            client = await host.add_server("notes", server, revision=revision)
            if modern and listen:
                await client.listen({"toolsListChanged": True})

            def asked() -> int:
                return sum(1 for e in sim.recorder if e.kind == "request" and e.method == "tools/list")

            async def look(why: str) -> None:
                mark, before = len(cache.events), asked()
                tools = await host.list_tools()
                timeline.rows.append(Row(round(sim.now() * 1000), HOST, "notes", why + _describe(cache.events[mark:]),
                                         asked() > before, tuple(t.name for t in tools)))

            await look("")
            await anyio.sleep(5)
            mark, before = len(cache.events), asked()
            server.add_tool(lambda: f"{len(server.resources)} notes", name="count_notes",
                            description="How many notes there are.")
            await anyio.sleep(0.5)  # the notification, and the Host's re-list, arrive meanwhile (if they come)
            heard = [m for _, m, _ in host.notifications if m == "notifications/tools/list_changed"]
            what = "count_notes deployed; " + (f"tools/list_changed → Host re-lists: {_describe(cache.events[mark:])}"
                                               if heard else "no notification")
            timeline.rows.append(Row(5000, "server", "notes", what, asked() > before if heard else None,
                                     tuple(t.name for t in host.servers["notes"].tools)))
            for at in HOST_LOOKS:
                await anyio.sleep(at - sim.now())
                await look("")

    sim.run(main)
    return timeline


# --------------------------------------------------------------------------------------------------
# Story 3: one cache, many callers
# --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Caller:
    """A user of the gateway and the token it presents."""

    label: str
    auth: AuthInfo


CALLERS: Final = {
    "alice": Caller("alice (read)", AuthInfo("alice", "acme", scopes=("finance:read",))),
    "bob": Caller("bob (read)", AuthInfo("bob", "globex", scopes=("finance:read",))),
    "alice-admin": Caller("alice (read+write)", AuthInfo("alice", "acme", scopes=("finance:read", "finance:write"))),
}
"""Two tenants, and one user of the first with a second, stronger token (``finance:write`` shows ``transfer``)."""

GATEWAY_SCRIPT: Final = (
    (0, "alice", "finance"), (0, "alice", "weather"), (5, "bob", "finance"), (5, "bob", "weather"),
    (10, "alice", "finance"), (12, "alice-admin", "finance"), (25, "alice", "finance"), (31, "bob", "weather"),
    (40, "deploy", "finance"), (41, "bob", "finance"),
)
"""(virtual second, caller or ``deploy``, server): who lists which server's tools when; at 40 s the
finance server deploys a new tool."""

TTL_MS: Final = {"finance": 20_000, "weather": 30_000}
"""How long each server says its lists stay fresh (the finance lists are private, the weather lists public)."""


def gateway_timeline(revision: str = "2026-07-28", *, seed: int = 0,
                     script: Sequence[tuple[float, str, str]] = GATEWAY_SCRIPT) -> Timeline:
    """A gateway serves several users from one :class:`WatchedCache`; each user reaches each server
    through a Client of their own, carrying their own token. ``finance`` answers depend on the caller
    (``cacheScope: "private"``, 20 s); ``weather`` answers do not (``"public"``, 30 s). The gateway
    keeps one ``subscriptions/listen`` stream on ``finance`` for ``tools/list_changed``.

    In 2025-11-25 the same script runs with legacy Clients: no ``ttlMs``, so nothing is cached and
    every look asks the server; every finance session hears ``list_changed`` without asking."""
    sim = Simulation(seed)
    modern = REVISIONS[revision].is_modern
    timeline = Timeline(f"One gateway cache, three tokens ({revision})", sim=sim)

    async def main() -> None:
        servers = {"finance": finance.build(), "weather": weather.build()}
        for name, server in servers.items():
            server.cache = CachePolicy(list_ttl_ms=TTL_MS[name])
        cache = timeline.cache = WatchedCache(sim.now)
        clients: dict[tuple[str, str], Client] = {}
        async with anyio.create_task_group() as tg:
            async def client_for(who: str, name: str) -> Client:
                if (who, name) not in clients:
                    caller = CALLERS[who]
                    to_server, server_end = memory_link(sim, name, auth=caller.auth)
                    tg.start_soon(serve, servers[name], server_end)
                    client = Client(GATEWAY, era="modern" if modern else "legacy", versions=(revision,),
                                    cache=cache, auth=caller.auth, discover=False, sim=sim)
                    await client.connect(to_server, tg)
                    if modern and name == "finance" and not any(n == "finance" for _, n in clients):
                        await client.listen({"toolsListChanged": True})
                    clients[who, name] = client
                return clients[who, name]

            for at, who, name in script:
                await anyio.sleep(max(0.0, at - sim.now()))
                if who == "deploy":
                    mark, seen = len(cache.events), len(sim.recorder.events)
                    servers[name].add_tool(lambda: "cash flow", name="forecast_cashflow",
                                           description="Forecast next month's cash flow.")
                    await anyio.sleep(0.5)
                    total = sum(1 for e in cache.events[mark:] if e.action == "invalidated")
                    heard = sum(1 for e in sim.recorder.events[seen:]
                                if e.kind == "notification" and e.method == "notifications/tools/list_changed")
                    what = (f"new tool; tools/list_changed heard {heard}× → {total} "
                            f"entr{'y' if total == 1 else 'ies'} dropped, for every caller")
                    timeline.rows.append(Row(round(at * 1000), "server", name, what, None))
                    continue
                client = await client_for(who, name)
                label = CALLERS[who].label
                sim.recorder.record_app(sender=GATEWAY, receiver=f"client/{name}",
                                        text=f"{label} asks for {name}'s tools")
                mark = len(cache.events)
                before = sum(1 for e in sim.recorder if e.kind == "request" and e.method == "tools/list")
                tools = (await client.list_tools())["tools"]
                after = sum(1 for e in sim.recorder if e.kind == "request" and e.method == "tools/list")
                what = _describe(cache.events[mark:])
                sim.recorder.record_app(sender=f"client/{name}", receiver=GATEWAY, text=f"cache: {what}")
                timeline.rows.append(Row(round(at * 1000), label, name, what, after > before, _tool_names(tools)))
            for client in clients.values():
                await client.close()

    sim.run(main)
    return timeline


def gateway_trace(*, revision: str = "2026-07-28", seed: int = 0) -> Recorder:
    """The trace of :func:`gateway_timeline` (a runner for the trace player: it can fork the revision)."""
    sim = gateway_timeline(revision, seed=seed).sim
    assert sim is not None
    recorder: Recorder = sim.recorder
    return recorder


__all__ = [
    "CALLERS",
    "GATEWAY_SCRIPT",
    "TTL_MS",
    "CacheEvent",
    "Caller",
    "Row",
    "Timeline",
    "WatchedCache",
    "gateway_timeline",
    "gateway_trace",
    "host_relists",
    "listen_in_detail",
    "watch_a_note",
]
