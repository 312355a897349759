"""Item 4: changes at run time — list_changed, resource subscriptions, subscriptions/listen."""

from __future__ import annotations

import anyio
from test_server_support import MODERN, RawClient, assert_valid, meta, run_with

from mcp_sim.protocol.schema import find_spec_dir
from mcp_sim.roles.server import Server
from mcp_sim.roles.server_session import serve
from mcp_sim.sim.world import Simulation, current_simulation
from mcp_sim.transports.memory import memory_link

SUB = "io.modelcontextprotocol/subscriptionId"


def build(list_changed: bool = True) -> Server:
    server = Server("live", list_changed=list_changed)
    server.add_tool(lambda: "1", name="one")
    server.add_prompt(lambda: "p", name="p")
    server.add_resource("mem://a", content="A")
    server.add_resource("mem://b", content="B")
    return server


def test_legacy_list_changed_and_resource_updated_only_for_subscribed() -> None:
    server = build()

    async def body(c: RawClient) -> list:
        await c.initialize("2025-11-25")
        await c.request("resources/subscribe", {"uri": "mem://a"})
        missing = await c.request("resources/subscribe", {"uri": "mem://zzz"})
        server.add_tool(lambda: "2", name="two")
        server.set_resource("mem://a", "A2")
        server.set_resource("mem://b", "B2")  # not subscribed: nothing
        server.remove_prompt("p")
        await c.request("ping")
        await c.request("resources/unsubscribe", {"uri": "mem://a"})
        server.set_resource("mem://a", "A3")
        await c.request("ping")
        return [missing, *c.notifications()]

    missing, *notes = run_with(server, body, revision="2025-11-25")
    assert missing["error"]["code"] == -32002
    assert notes == [
        {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"},
        {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "mem://a"}},
        {"jsonrpc": "2.0", "method": "notifications/prompts/list_changed"},
    ]


def test_no_list_changed_without_the_capability() -> None:
    server = build(list_changed=False)

    async def body(c: RawClient) -> list:
        init = await c.initialize("2025-06-18")
        server.add_tool(lambda: "2", name="two")
        await c.request("ping")
        return [init, *c.notifications()]

    init, *notes = run_with(server, body)
    assert init["result"]["capabilities"]["tools"] == {"listChanged": False}
    assert notes == []


def test_modern_listen_acknowledges_tags_and_closes_gracefully() -> None:
    server = build()

    async def body(c: RawClient) -> list:
        # Nothing is sent to a modern client that did not listen.
        await c.request("tools/list", {"_meta": meta()})
        server.add_tool(lambda: "2", name="two")
        await c.send({"jsonrpc": "2.0", "id": "L1", "method": "subscriptions/listen", "params": {
            "_meta": meta(), "notifications": {"toolsListChanged": True, "resourceSubscriptions": ["mem://a"],
                                               "taskIds": ["t-unknown"]}}})
        ack = await c.recv()
        server.remove_tool("two")
        server.set_resource("mem://a", "A2")
        server.set_resource("mem://b", "B2")
        server.remove_prompt("p")  # promptsListChanged not requested
        first, second = await c.recv(), await c.recv()
        server.close_subscriptions()
        end = await c.recv()
        return [ack, first, second, end, c.received]

    ack, first, second, end, everything = run_with(server, body, revision=MODERN)
    assert ack == {"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": {
        "notifications": {"toolsListChanged": True, "resourceSubscriptions": ["mem://a"]}, "_meta": {SUB: "L1"}}}
    assert first == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {"_meta": {SUB: "L1"}}}
    assert second == {"jsonrpc": "2.0", "method": "notifications/resources/updated",
                      "params": {"uri": "mem://a", "_meta": {SUB: "L1"}}}
    assert end == {"jsonrpc": "2.0", "id": "L1", "result": {"resultType": "complete", "_meta": {
        SUB: "L1", "io.modelcontextprotocol/serverInfo": {"name": "live", "version": "0.1.0"}}}}
    assert_valid(end["result"], MODERN, "SubscriptionsListenResult")
    assert_valid(ack, MODERN, "SubscriptionsAcknowledgedNotification")
    assert len([m for m in everything if "method" in m]) == 3


def test_listen_cancelled_by_client_gets_no_response_and_no_more_notifications() -> None:
    server = build()

    async def body(c: RawClient) -> list:
        await c.send({"jsonrpc": "2.0", "id": 9, "method": "subscriptions/listen",
                      "params": {"_meta": meta(), "notifications": {"toolsListChanged": True}}})
        await c.recv()
        await c.notify("notifications/cancelled", {"requestId": 9})
        await c.request("tools/list", {"_meta": meta()})
        server.add_tool(lambda: "3", name="three")
        await c.request("tools/list", {"_meta": meta()})
        return c.received

    received = run_with(server, body)
    assert [m.get("method") for m in received] == ["notifications/subscriptions/acknowledged", None, None]
    assert all(m.get("id") != 9 for m in received)


def test_one_server_many_connections_each_with_its_own_state() -> None:
    server = build()

    async def main() -> tuple:
        sim = current_simulation()
        a_end, a_srv = memory_link(sim, "a")
        b_end, b_srv = memory_link(sim, "b")
        a, b = RawClient(a_end), RawClient(b_end)
        async with anyio.create_task_group() as tg:
            tg.start_soon(serve, server, a_srv)
            tg.start_soon(serve, server, b_srv)
            await a.initialize("2025-11-25")
            await a.request("resources/subscribe", {"uri": "mem://a"})
            await b.initialize("2025-06-18")
            await b.request("logging/setLevel", {"level": "error"})
            server.set_resource("mem://a", "new")
            await a.request("ping")
            await b.request("ping")
            await a_end.aclose()
            await b_end.aclose()
        return a.notifications(), b.notifications(), len(server.sessions)

    a_notes, b_notes, left = Simulation(1).run(main)
    assert [n["method"] for n in a_notes] == ["notifications/resources/updated"]
    assert b_notes == []
    assert left == 0


def test_schema_dir_lookup_is_optional() -> None:
    # The tests validate against the official schemas when they are present and skip that otherwise.
    assert find_spec_dir() is None or (find_spec_dir() / MODERN / "schema.json").is_file()  # type: ignore[operator]
