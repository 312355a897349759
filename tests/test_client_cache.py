"""The list cache: ttlMs, invalidation, tenant isolation; modern subscriptions/listen; legacy subscribe."""

from __future__ import annotations

from typing import Any

import anyio
from test_client_fakeserver import Ctx, FakeServer, run

from mcp_sim.roles.cache import AuthorizationContext, ListCache, ttl_ms_of
from mcp_sim.roles.client import Client
from mcp_sim.security.identity import AuthInfo
from mcp_sim.sim.world import Simulation, current_simulation
from mcp_sim.transports.memory import memory_link
from mcp_sim.wire.jsonrpc import JSONRPCNotification


def tools_listing(ttl: int | None = 60_000, scope: str = "private") -> Any:
    """A tools/list handler whose answer depends on the caller's tenant, as the spec allows."""
    async def handler(params: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
        tenant = ctx.stream.auth.tenant if ctx.stream.auth else "nobody"
        result: dict[str, Any] = {"tools": [{"name": f"report_{tenant}", "inputSchema": {"type": "object"}}]}
        if ttl is not None:
            result.update(ttlMs=ttl, cacheScope=scope)
        return result

    return handler


def count(server: FakeServer, method: str) -> int:
    return sum(1 for m in server.received if m.get("method") == method)


def test_ttl_is_read_as_the_spec_says() -> None:
    assert ttl_ms_of({"ttlMs": 500}) == 500
    assert ttl_ms_of({}) == 0
    assert ttl_ms_of({"ttlMs": -5}) == 0
    assert ttl_ms_of({"ttlMs": True}) == 0


def test_cache_honours_ttl_and_list_changed() -> None:
    server = FakeServer(era="modern", handlers={"tools/list": tools_listing(ttl=10_000)})

    async def body(client: Client) -> list[int]:
        client.cache = ListCache(current_simulation().now)
        calls = []
        await client.list_tools()
        await client.list_tools()                  # fresh: served from the cache
        calls.append(count(server, "tools/list"))
        await anyio.sleep(11)                      # ttlMs 10 000 has passed
        await client.list_tools()
        calls.append(count(server, "tools/list"))
        # A change notification invalidates the entry at once.
        client._on_notification(JSONRPCNotification("notifications/tools/list_changed", {}))
        await client.list_tools()
        calls.append(count(server, "tools/list"))
        return calls

    calls, _ = run(server, body, Client(era="modern"))
    assert calls == [1, 2, 3]


def test_absent_ttl_is_never_cached() -> None:
    server = FakeServer(era="legacy", handlers={"tools/list": tools_listing(ttl=None)})

    async def body(client: Client) -> int:
        client.cache = ListCache(current_simulation().now)
        await client.list_tools()
        await client.list_tools()
        return count(server, "tools/list")

    calls, _ = run(server, body, Client(era="legacy"))
    assert calls == 2


def test_one_tenants_list_is_never_served_to_another() -> None:
    """Two clients share the Host's cache; their tokens belong to different tenants."""
    sim = Simulation(0)
    server = FakeServer(era="modern", handlers={"tools/list": tools_listing(ttl=60_000, scope="private")})
    acme = AuthInfo(subject="alice", tenant="acme")
    globex = AuthInfo(subject="bob", tenant="globex")

    async def main() -> dict[str, list[str]]:
        cache = ListCache(sim.now)
        seen: dict[str, list[str]] = {}
        async with anyio.create_task_group() as tg:
            clients = []
            for auth in (acme, globex, acme):
                c_end, s_end = memory_link(sim, "finance", auth=auth)
                tg.start_soon(server, s_end)
                client = Client(era="modern", cache=cache, auth=auth)
                await client.connect(c_end, tg)
                clients.append(client)
                names = [t["name"] for t in (await client.list_tools())["tools"]]
                seen.setdefault(auth.tenant or "", []).extend(names)
            keys = cache.keys()
            for client in clients:
                await client.close()
        assert {k[1] for k in keys} == {AuthorizationContext("alice", "acme"), AuthorizationContext("bob", "globex")}
        return seen

    seen = sim.run(main)
    assert seen == {"acme": ["report_acme", "report_acme"], "globex": ["report_globex"]}
    assert count(server, "tools/list") == 2  # alice's second look came from her own cache entry


def test_public_entries_are_shared() -> None:
    cache = ListCache(lambda: 0.0)
    a, b = AuthorizationContext("alice", "acme"), AuthorizationContext("bob", "globex")
    cache.put("weather", a, "tools/list", None, {"tools": [], "ttlMs": 1000, "cacheScope": "public"})
    assert cache.get("weather", b, "tools/list", None) is not None
    cache.put("finance", a, "tools/list", None, {"tools": [], "ttlMs": 1000, "cacheScope": "private"})
    assert cache.get("finance", b, "tools/list", None) is None


def test_mrtr_and_input_required_results_are_never_cached() -> None:
    cache = ListCache(lambda: 0.0)
    ctx = AuthorizationContext()
    assert not cache.put("s", ctx, "resources/read", "u", {"resultType": "input_required", "ttlMs": 1000})
    assert not cache.put("s", ctx, "resources/read", "u", {"contents": [], "ttlMs": 1000}, mrtr_retry=True)
    assert cache.put("s", ctx, "resources/read", "u", {"contents": [], "ttlMs": 1000})
    assert cache.on_notification("s", "notifications/resources/updated", {"uri": "u"}) == 1


def test_modern_listen_checks_the_acknowledged_filter_and_invalidates() -> None:
    async def listen(params: dict[str, Any], ctx: Ctx) -> None:
        sub = {"io.modelcontextprotocol/subscriptionId": ctx.request_id}
        await ctx.notify("notifications/subscriptions/acknowledged",
                         {"notifications": {"toolsListChanged": True}, "_meta": sub})
        await anyio.sleep(1)
        await ctx.notify("notifications/tools/list_changed", {"_meta": sub})
        return None  # the stream stays open

    server = FakeServer(era="modern", capabilities={"tools": {"listChanged": True}},
                        handlers={"subscriptions/listen": listen, "tools/list": tools_listing()})

    async def body(client: Client) -> tuple[dict[str, Any], list[str], int]:
        client.cache = ListCache(current_simulation().now)
        await client.list_tools()
        sub = await client.listen({"toolsListChanged": True, "promptsListChanged": True})
        await anyio.sleep(2)
        await client.list_tools()  # invalidated by the notification: asked again
        await sub.close()
        return sub.accepted, [m for m, _ in sub.received], count(server, "tools/list")

    (accepted, received, lists), rec = run(server, body, Client(era="modern"))
    assert accepted == {"toolsListChanged": True}  # the server honoured less than was asked
    assert received == ["notifications/tools/list_changed"]
    assert lists == 2
    listen_id = next(e.request_id for e in rec.events if e.method == "subscriptions/listen")
    cancel = next(e for e in rec.events if e.method == "notifications/cancelled")
    assert cancel.message["params"]["requestId"] == listen_id  # type: ignore[index]


def test_legacy_resources_subscribe() -> None:
    async def subscribe(params: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
        await ctx.notify("notifications/resources/updated", {"uri": params["uri"]})
        return {}

    updates: list[str] = []
    server = FakeServer(era="legacy", capabilities={"resources": {"subscribe": True}},
                        handlers={"resources/subscribe": subscribe})
    client = Client(era="legacy")
    client.callbacks.on_notification = lambda s, m, p: updates.append(p["uri"])

    async def body(c: Client) -> None:
        await c.subscribe_resource("file:///notes.md")
        await anyio.sleep(1)

    run(server, body, client)
    assert updates == ["file:///notes.md"]
