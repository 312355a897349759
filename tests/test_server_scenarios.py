"""Item 7: the ready-made servers learners read — weather, notes, issues, finance."""

from __future__ import annotations

import pytest
from test_server_support import MODERN, RawClient, assert_valid, meta, run_with

from mcp_sim.scenarios import finance, issues, notes, weather
from mcp_sim.security.identity import AuthInfo

ALL = [weather.build, notes.build, issues.build, finance.build]


@pytest.mark.parametrize("build", ALL)
@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25", MODERN])
def test_every_scenario_lists_valid_shapes(build, version: str) -> None:  # type: ignore[no-untyped-def]
    async def body(c: RawClient) -> list:
        if version == MODERN:
            params: dict = {"_meta": meta()}
        else:
            await c.initialize(version)
            params = {}
        return [await c.request(m, dict(params)) for m in ("tools/list", "resources/list",
                                                           "resources/templates/list", "prompts/list")]

    tools, resources, templates, prompts = run_with(build, body, auth=AuthInfo("ann", tenant="acme"),
                                                    revision=version)
    assert_valid(tools["result"], version, "ListToolsResult")
    for reply, type_name in ((resources, "ListResourcesResult"), (templates, "ListResourceTemplatesResult"),
                             (prompts, "ListPromptsResult")):
        if "result" in reply:
            assert_valid(reply["result"], version, type_name)
        else:
            assert reply["error"]["code"] == -32601  # a capability this scenario does not offer


def test_weather() -> None:
    async def body(c: RawClient) -> dict:
        return {
            "forecast": await c.request("tools/call", {"name": "get_forecast", "arguments": {"city": "Oslo",
                                                                                             "days": 2},
                                                       "_meta": meta()}),
            "conditions": await c.request("tools/call", {"name": "get_conditions", "arguments": {"city": "Lisbon"},
                                                         "_meta": meta()}),
            "unknown": await c.request("tools/call", {"name": "get_forecast", "arguments": {"city": "Atlantis"},
                                                      "_meta": meta()}),
            "read": await c.request("resources/read", {"uri": "weather://forecast/Paris/2026-07-28",
                                                       "_meta": meta()}),
            "missing": await c.request("resources/read", {"uri": "weather://forecast/Atlantis/2026-07-28",
                                                          "_meta": meta()}),
            "complete": await c.request("completion/complete", {
                "ref": {"type": "ref/prompt", "name": "plan_trip"}, "argument": {"name": "destination",
                                                                                  "value": "po"},
                "_meta": meta()}),
            "prompt": await c.request("prompts/get", {"name": "plan_trip", "arguments": {"destination": "Porto"},
                                                      "_meta": meta()}),
        }

    r = run_with(weather.build, body, revision=MODERN)
    assert r["forecast"]["result"]["content"][0]["text"].startswith("Oslo: day 1:")
    assert r["conditions"]["result"]["structuredContent"]["city"] == "Lisbon"
    assert r["unknown"]["result"]["isError"] is True
    assert r["read"]["result"]["contents"][0]["mimeType"] == "application/json"
    assert r["missing"]["error"]["code"] == -32602
    assert r["complete"]["result"]["completion"]["values"] == ["Porto"]
    assert "Porto" in r["prompt"]["result"]["messages"][0]["content"]["text"]
    # Same seed or not: the weather is a table, so two runs agree byte for byte.
    assert run_with(weather.build, body, seed=7) == r


def test_notes_subscriptions_in_both_eras() -> None:
    server = notes.build()

    async def legacy(c: RawClient) -> list:
        await c.initialize("2025-11-25")
        await c.request("resources/subscribe", {"uri": "notes://files/todo.md"})
        await c.request("tools/call", {"name": "write_note", "arguments": {"path": "todo.md", "text": "- done"}})
        await c.request("tools/call", {"name": "write_note", "arguments": {"path": "new.md", "text": "hi"}})
        read = await c.request("resources/read", {"uri": "notes://files/new.md"})
        return [n["method"] for n in c.notifications()] + [read["result"]["contents"][0]["text"]]

    assert run_with(server, legacy) == ["notifications/resources/updated", "notifications/resources/list_changed",
                                        "hi"]

    async def modern(c: RawClient) -> list:
        await c.send({"jsonrpc": "2.0", "id": "watch", "method": "subscriptions/listen", "params": {
            "_meta": meta(), "notifications": {"resourceSubscriptions": ["notes://files/todo.md"]}}})
        await c.recv()
        await c.request("tools/call", {"name": "delete_note", "arguments": {"path": "new.md"}, "_meta": meta()})
        await c.request("tools/call", {"name": "write_note", "arguments": {"path": "todo.md", "text": "x"},
                                       "_meta": meta()})
        await c.recv()  # the listen stream delivers it on its own schedule
        return c.notifications()

    notes_seen = run_with(server, modern, revision=MODERN)
    assert [n["method"] for n in notes_seen] == ["notifications/subscriptions/acknowledged",
                                                 "notifications/resources/updated"]


def test_issues_tools() -> None:
    server = issues.build()
    tools = {t.name: t.to_json(MODERN) for t in server.tools.values()}
    assert tools["delete_issue"]["annotations"]["destructiveHint"] is True

    async def body(c: RawClient) -> dict:
        created = await c.request("tools/call", {"name": "create_issue", "arguments": {"title": "Dark mode"},
                                                 "_meta": meta()})
        found = await c.request("tools/call", {"name": "search_issues", "arguments": {"query": "dark"},
                                               "_meta": meta()})
        deleted = await c.request("tools/call", {"name": "delete_issue", "arguments": {"number": 3},
                                                 "_meta": meta()})
        again = await c.request("tools/call", {"name": "delete_issue", "arguments": {"number": 3}, "_meta": meta()})
        read = await c.request("resources/read", {"uri": "issues://1", "_meta": meta()})
        return {"created": created, "found": found, "deleted": deleted, "again": again, "read": read}

    r = run_with(server, body, revision=MODERN)
    assert r["created"]["result"]["structuredContent"] == {"number": 3, "title": "Dark mode", "body": "",
                                                           "state": "open", "labels": []}
    assert [i["number"] for i in r["found"]["result"]["structuredContent"]["issues"]] == [3]
    assert r["deleted"]["result"]["content"][0]["text"] == "deleted issue #3"
    assert r["again"]["result"]["isError"] is True
    assert r["read"]["result"]["contents"][0]["text"].startswith('{"number": 1')


def test_finance_is_per_tenant_and_private() -> None:
    async def body(c: RawClient) -> dict:
        return {
            "list": await c.request("tools/list", {"_meta": meta()}),
            "accounts": await c.request("tools/call", {"name": "list_accounts", "_meta": meta()}),
            "foreign": await c.request("tools/call", {"name": "get_balance", "arguments": {"account": "GLX-001"},
                                                      "_meta": meta()}),
            "balance": await c.request("resources/read", {"uri": "finance://accounts/ACME-001", "_meta": meta()}),
        }

    acme = run_with(finance.build, body, auth=AuthInfo("ann", tenant="acme"), revision=MODERN)
    assert acme["list"]["result"]["cacheScope"] == "private"
    assert "transfer" not in [t["name"] for t in acme["list"]["result"]["tools"]]
    assert acme["accounts"]["result"]["content"][0]["text"] == '["ACME-001", "ACME-002"]'
    assert acme["foreign"]["result"]["isError"] is True
    assert acme["balance"]["result"]["cacheScope"] == "private"
    assert '"balance": 825' in acme["balance"]["result"]["contents"][0]["text"]
    globex = run_with(finance.build, body, auth=AuthInfo("gus", tenant="globex", scopes=("finance:write",)))
    assert "transfer" in [t["name"] for t in globex["list"]["result"]["tools"]]
    assert globex["accounts"]["result"]["content"][0]["text"] == '["GLX-001"]'
    nobody = run_with(finance.build, body)
    assert nobody["accounts"]["result"]["isError"] is True


def test_finance_transfer_asks_for_confirmation_mrtr() -> None:
    auth = AuthInfo("gus", tenant="acme", scopes=("finance:write",))

    async def body(c: RawClient) -> tuple:
        args = {"source": "ACME-001", "target": "ACME-002", "amount": 100}
        caps = {"elicitation": {}}
        first = await c.request("tools/call", {"name": "transfer", "arguments": args, "_meta": meta(caps)})
        second = await c.request("tools/call", {"name": "transfer", "arguments": args, "_meta": meta(caps),
                                                "requestState": first["result"]["requestState"],
                                                "inputResponses": {"elicitation-1": {
                                                    "action": "accept", "content": {"confirm": True}}}})
        return first, second

    first, second = run_with(finance.build, body, auth=auth, revision=MODERN)
    assert first["result"]["resultType"] == "input_required"
    assert second["result"]["content"][0]["text"] == "moved 100 EUR from ACME-001 to ACME-002"
