"""Item 3: deterministic lists, opaque cursors, and 2026-07-28 caching hints."""

from __future__ import annotations

from test_server_support import MODERN, RawClient, assert_valid, meta, run_with

from mcp_sim.roles.server import Server
from mcp_sim.security.identity import AuthInfo


def many(page_size: int | None = 2, **options: object) -> Server:
    server = Server("many", page_size=page_size, **options)  # type: ignore[arg-type]
    for name in ("delta", "alpha", "charlie", "bravo", "echo"):
        server.add_tool(lambda: "x", name=name, description=f"tool {name}")
    for i in range(3):
        server.add_prompt(lambda: "p", name=f"prompt{i}")
        server.add_resource(f"mem://r{i}", content=f"r{i}")
    return server


async def all_pages(c: RawClient, method: str, key: str, modern: bool) -> tuple[list, list]:
    names, replies, cursor = [], [], None
    while True:
        params: dict = {"_meta": meta()} if modern else {}
        if cursor is not None:
            params["cursor"] = cursor
        reply = await c.request(method, params)
        replies.append(reply["result"])
        names += [item.get("name") for item in reply["result"][key]]
        cursor = reply["result"].get("nextCursor")
        if cursor is None:
            return names, replies


def test_pagination_legacy_and_modern_in_registration_order() -> None:
    async def body(c: RawClient) -> dict:
        out = {"modern": await all_pages(c, "tools/list", "tools", True),
               "modern_prompts": await all_pages(c, "prompts/list", "prompts", True),
               "modern_resources": await all_pages(c, "resources/list", "resources", True)}
        out["bad"] = await c.request("tools/list", {"cursor": "garbage!", "_meta": meta()})
        out["wrong_list"] = await c.request("prompts/list", {"cursor": out["modern"][1][0]["nextCursor"],
                                                             "_meta": meta()})
        return out

    r = run_with(many, body, revision=MODERN)
    names, pages = r["modern"]
    assert names == ["delta", "alpha", "charlie", "bravo", "echo"]
    assert [len(p["tools"]) for p in pages] == [2, 2, 1]
    for page in pages:
        assert page["ttlMs"] == 60000 and page["cacheScope"] == "public" and page["resultType"] == "complete"
        assert_valid(page, MODERN, "ListToolsResult")
    assert r["modern_prompts"][0] == ["prompt0", "prompt1", "prompt2"]
    assert_valid(r["modern_resources"][1][0], MODERN, "ListResourcesResult")
    assert r["bad"]["error"]["code"] == -32602
    assert r["wrong_list"]["error"]["code"] == -32602

    async def legacy(c: RawClient) -> tuple:
        await c.initialize("2025-06-18")
        return await all_pages(c, "tools/list", "tools", False)

    names, pages = run_with(many, legacy, revision="2025-06-18")
    assert names == ["delta", "alpha", "charlie", "bravo", "echo"]
    assert all("ttlMs" not in p and "cacheScope" not in p for p in pages)
    for page in pages:
        assert_valid(page, "2025-06-18", "ListToolsResult")


def test_tools_filtered_by_caller_make_the_list_private() -> None:
    def server() -> Server:
        s = many(page_size=None)
        s.add_tool(lambda: "secret", name="admin_only", visible=lambda auth: auth is not None and "admin" in auth.scopes)
        return s

    async def body(c: RawClient) -> tuple:
        listed = await c.request("tools/list", {"_meta": meta()})
        call = await c.request("tools/call", {"name": "admin_only", "_meta": meta()})
        return listed, call

    listed, call = run_with(server, body, auth=AuthInfo("bob", scopes=()))
    assert "admin_only" not in [t["name"] for t in listed["result"]["tools"]]
    assert listed["result"]["cacheScope"] == "private"
    assert call["error"]["code"] == -32602
    listed, call = run_with(server, body, auth=AuthInfo("root", scopes=("admin",)))
    assert "admin_only" in [t["name"] for t in listed["result"]["tools"]]
    assert call["result"]["content"] == [{"type": "text", "text": "secret"}]


def test_per_caller_server_is_private_everywhere_and_retries_are_not_cached() -> None:
    async def body(c: RawClient) -> list:
        return [await c.request(m, {"_meta": meta()}) for m in
                ("tools/list", "prompts/list", "resources/list", "resources/templates/list", "server/discover")] + [
            await c.request("resources/read", {"uri": "mem://r0", "_meta": meta()})]

    for reply in run_with(lambda: many(per_caller=True), body):
        assert reply["result"]["cacheScope"] == "private"
    read = run_with(many, body)[-1]["result"]
    assert read["ttlMs"] == 30000 and read["cacheScope"] == "public"
    assert_valid(read, MODERN, "ReadResourceResult")
