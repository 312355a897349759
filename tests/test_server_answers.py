"""Item 2: answering requests in both eras — handshake, lifecycle, errors, exact shapes on the wire."""

from __future__ import annotations

import pytest
from test_server_support import CLIENT_INFO, LEGACY, MODERN, RawClient, assert_valid, meta, run_with

from mcp_sim.capabilities.context import Context
from mcp_sim.roles.server import Server


def build() -> Server:
    server = Server("demo", version="2.0.0", instructions="Be kind.")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    def boom() -> str:
        """Always fails."""
        raise RuntimeError("the flux capacitor is empty")

    @server.tool()
    async def chatty(ctx: Context) -> str:
        """Logs at two levels and reports progress."""
        await ctx.log("debug", "fine detail")
        await ctx.log("warning", {"disk": "almost full"}, "storage")
        await ctx.report_progress(1, 2)
        await ctx.sleep(10)
        await ctx.report_progress(2, 2, "done")
        return "ok"

    @server.resource("demo://readme", mime_type="text/plain")
    def readme() -> str:
        return "hello"

    @server.resource("demo://broken")
    def broken() -> str:
        raise OSError("disk on fire")

    @server.prompt()
    def greet(name: str) -> str:
        """Greet someone."""
        return f"Say hello to {name}"

    return server


@pytest.mark.parametrize("version", LEGACY)
def test_legacy_handshake_and_core_requests(version: str) -> None:
    async def body(c: RawClient) -> dict:
        out = {"init": await c.initialize(version)}
        out["ping"] = await c.request("ping")
        out["list"] = await c.request("tools/list")
        out["call"] = await c.request("tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}})
        out["bad_args"] = await c.request("tools/call", {"name": "add", "arguments": {"a": "two"}})
        out["crash"] = await c.request("tools/call", {"name": "boom"})
        out["unknown"] = await c.request("tools/call", {"name": "nope", "arguments": {}})
        out["read"] = await c.request("resources/read", {"uri": "demo://readme"})
        out["missing"] = await c.request("resources/read", {"uri": "demo://nothing"})
        out["broken"] = await c.request("resources/read", {"uri": "demo://broken"})
        out["prompt"] = await c.request("prompts/get", {"name": "greet", "arguments": {"name": "Ada"}})
        out["prompt_missing_arg"] = await c.request("prompts/get", {"name": "greet"})
        out["discover"] = await c.request("server/discover", {})
        out["after"] = await c.request("tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}})
        return out

    r = run_with(build, body, revision=version)
    assert r["init"]["result"] == {
        "protocolVersion": version,
        "capabilities": {"logging": {}, "prompts": {"listChanged": True},
                         "resources": {"subscribe": True, "listChanged": True}, "tools": {"listChanged": True}},
        "serverInfo": {"name": "demo", "version": "2.0.0"},
        "instructions": "Be kind."}
    assert_valid(r["init"]["result"], version, "InitializeResult")
    assert r["ping"] == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert r["call"]["result"] == {"content": [{"type": "text", "text": "5"}]}
    assert_valid(r["call"]["result"], version, "CallToolResult")
    assert r["bad_args"]["result"]["isError"] is True
    assert "Invalid arguments for tool add" in r["bad_args"]["result"]["content"][0]["text"]
    assert "'two' is not of type 'integer'" in r["bad_args"]["result"]["content"][0]["text"]
    assert r["crash"]["result"] == {"content": [{"type": "text", "text": "Tool boom failed: RuntimeError: the flux "
                                                 "capacitor is empty"}], "isError": True}
    assert r["unknown"]["error"]["code"] == -32602
    assert r["read"]["result"] == {"contents": [{"uri": "demo://readme", "mimeType": "text/plain", "text": "hello"}]}
    assert r["missing"]["error"]["code"] == -32002
    assert r["broken"]["error"]["code"] == -32603 and "disk on fire" in r["broken"]["error"]["message"]
    assert r["prompt"]["result"] == {"description": "Greet someone.", "messages": [
        {"role": "user", "content": {"type": "text", "text": "Say hello to Ada"}}]}
    assert_valid(r["prompt"]["result"], version, "GetPromptResult")
    assert r["prompt_missing_arg"]["error"]["code"] == -32602
    assert r["discover"]["error"]["code"] == -32601  # not a legacy method
    assert r["after"]["result"]["content"][0]["text"] == "2"  # the session survived every error
    for key, reply in r.items():
        assert "resultType" not in reply.get("result", {}), key


def test_modern_requests_carry_result_type_and_server_info() -> None:
    async def body(c: RawClient) -> dict:
        return {
            "discover": await c.request("server/discover", {"_meta": meta()}),
            "call": await c.request("tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}, "_meta": meta()}),
            "missing": await c.request("resources/read", {"uri": "demo://nothing", "_meta": meta()}),
            "no_meta": await c.request("tools/list", {}),
            "half_meta": await c.request("tools/list", {"_meta": {"io.modelcontextprotocol/protocolVersion": MODERN}}),
            "old_version": await c.request("tools/list", {"_meta": {
                "io.modelcontextprotocol/protocolVersion": "2099-01-01",
                "io.modelcontextprotocol/clientCapabilities": {}}}),
            "ping": await c.request("ping", {"_meta": meta()}),
            "set_level": await c.request("logging/setLevel", {"level": "debug", "_meta": meta()}),
            "nonsense": await c.request("tools/frobnicate", {"_meta": meta()}),
        }

    r = run_with(build, body, revision=MODERN)
    info = {"io.modelcontextprotocol/serverInfo": {"name": "demo", "version": "2.0.0"}}
    assert r["discover"]["result"] == {
        "resultType": "complete", "supportedVersions": ["2025-06-18", "2025-11-25", "2026-07-28"],
        "capabilities": {"logging": {}, "prompts": {"listChanged": True},
                         "resources": {"subscribe": True, "listChanged": True}, "tools": {"listChanged": True}},
        "instructions": "Be kind.", "ttlMs": 3600000, "cacheScope": "public", "_meta": info}
    assert_valid(r["discover"]["result"], MODERN, "DiscoverResult")
    assert r["call"]["result"] == {"resultType": "complete", "content": [{"type": "text", "text": "5"}], "_meta": info}
    assert_valid(r["call"]["result"], MODERN, "CallToolResult")
    assert r["missing"]["error"]["code"] == -32602  # SEP-2164
    assert r["no_meta"]["error"]["code"] == -32602
    assert r["half_meta"]["error"]["data"] == {"missing": ["io.modelcontextprotocol/clientCapabilities"]}
    assert r["old_version"]["error"] == {"code": -32022, "message": "Unsupported protocol version: 2099-01-01",
                                         "data": {"requested": "2099-01-01",
                                                  "supported": ["2025-06-18", "2025-11-25", "2026-07-28"]}}
    assert r["ping"]["error"]["code"] == -32601
    assert r["set_level"]["error"]["code"] == -32601
    assert r["nonsense"]["error"]["code"] == -32601


def test_lifecycle_is_enforced_for_a_legacy_only_server() -> None:
    def legacy_only() -> Server:
        server = build()
        server.supported_versions = ("2025-06-18",)
        return server

    async def body(c: RawClient) -> dict:
        out = {"early": await c.request("tools/list")}
        out["init"] = await c.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                                     "clientInfo": {"name": "c", "version": "1"}})
        out["before_initialized"] = await c.request("tools/list")
        await c.notify("notifications/initialized")
        out["ok"] = await c.request("tools/list")
        out["again"] = await c.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                                      "clientInfo": {"name": "c", "version": "1"}})
        return out

    r = run_with(legacy_only, body)
    assert r["early"]["error"]["code"] == -32600
    assert r["init"]["result"]["protocolVersion"] == "2025-06-18"  # its own newest, not the client's
    # A request after the initialize result implies notifications/initialized, lost or late on the
    # wire (simulator rule lifecycle.sim-request-implies-initialized): answered, not refused.
    assert "tools" in r["before_initialized"]["result"]
    assert "tools" in r["ok"]["result"]
    assert r["again"]["error"]["code"] == -32600


def test_modern_only_server_refuses_initialize() -> None:
    def modern_only() -> Server:
        server = build()
        server.supported_versions = (MODERN,)
        return server

    async def body(c: RawClient) -> dict:
        return await c.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                              "clientInfo": {"name": "c", "version": "1"}})

    assert run_with(modern_only, body)["error"]["code"] == -32601


def test_unadvertised_capability_is_method_not_found() -> None:
    def tools_only() -> Server:
        server = Server("t")
        server.add_tool(lambda: "x", name="x")
        return server

    async def body(c: RawClient) -> tuple:
        modern = await c.request("prompts/list", {"_meta": meta()})
        return modern, await c.request("resources/read", {"uri": "a://b", "_meta": meta()})

    modern, read = run_with(tools_only, body)
    assert modern["error"]["code"] == -32601 and read["error"]["code"] == -32601


def test_unreadable_frames_are_answered() -> None:
    async def body(c: RawClient) -> list:
        await c.stream.send_raw("{not json")
        await c.stream.send_raw('{"jsonrpc":"2.0","id":7,"method":"tools/list","params":[1]}')
        await c.stream.send_raw('{"jsonrpc":"2.0","method":"x","params":[1]}')  # notification: no answer
        first = await c.recv()
        second = await c.recv()
        ok = await c.request("tools/list", {"_meta": meta()})
        return [first, second, ok]

    first, second, ok = run_with(build, body)
    assert first["error"]["code"] == -32700 and "id" not in first
    assert second["error"]["code"] == -32600 and second["id"] == 7
    assert ok["result"]["resultType"] == "complete"


def test_logging_and_progress_legacy_honours_set_level() -> None:
    async def body(c: RawClient) -> dict:
        await c.initialize("2025-11-25")
        await c.request("tools/call", {"name": "chatty", "arguments": {}, "_meta": {"progressToken": "p1"}})
        first = list(c.received)
        c.received.clear()
        await c.request("logging/setLevel", {"level": "debug"})
        await c.request("tools/call", {"name": "chatty", "arguments": {}})
        bad = await c.request("logging/setLevel", {"level": "loud"})
        return {"first": first, "second": list(c.received), "bad": bad}

    r = run_with(build, body, revision="2025-11-25")
    first_notes = [m for m in r["first"] if "method" in m]
    assert first_notes == [
        {"jsonrpc": "2.0", "method": "notifications/message",
         "params": {"level": "warning", "logger": "storage", "data": {"disk": "almost full"}}},
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "p1", "progress": 1,
                                                                        "total": 2}},
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "p1", "progress": 2,
                                                                        "total": 2, "message": "done"}},
    ]
    levels = [m["params"]["level"] for m in r["second"] if m.get("method") == "notifications/message"]
    assert levels == ["debug", "warning"]
    assert not [m for m in r["second"] if m.get("method") == "notifications/progress"]  # no token, no progress
    assert r["bad"]["error"]["code"] == -32602


def test_logging_modern_only_when_the_request_opts_in() -> None:
    async def body(c: RawClient) -> tuple:
        await c.request("tools/call", {"name": "chatty", "arguments": {}, "_meta": meta()})
        silent = [m for m in c.received if "method" in m]
        c.received.clear()
        await c.request("tools/call", {"name": "chatty", "arguments": {},
                                       "_meta": meta(**{"io.modelcontextprotocol/logLevel": "info"})})
        return silent, [m for m in c.received if "method" in m]

    silent, opted = run_with(build, body, revision=MODERN)
    assert silent == []
    assert opted == [{"jsonrpc": "2.0", "method": "notifications/message",
                      "params": {"level": "warning", "logger": "storage", "data": {"disk": "almost full"}}}]


def test_cancellation_stops_a_request_without_response() -> None:
    async def body(c: RawClient) -> tuple:
        await c.send({"jsonrpc": "2.0", "id": 50, "method": "tools/call",
                      "params": {"name": "chatty", "arguments": {}, "_meta": meta()}})
        await c.notify("notifications/cancelled", {"requestId": 50, "reason": "changed my mind"})
        after = await c.request("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}, "_meta": meta()})
        return after, [m for m in c.received if m.get("id") == 50]

    after, answered = run_with(build, body)
    assert after["result"]["content"][0]["text"] == "3"
    assert answered == []


@pytest.mark.parametrize(("version", "answered"), [("2025-06-18", False), ("2025-11-25", True)])
def test_an_unreadable_frame_is_answered_without_an_id_only_where_the_schema_allows_it(
        version: str, answered: bool) -> None:
    """-32700 for a frame nobody can read carries no id. Only 2025-11-25 and later let an error go
    without one; in 2025-06-18 every error needs an id, so the server only logs the frame (what it
    sends stays valid for the revision agreed)."""
    async def body(c: RawClient) -> list:
        await c.request("initialize", {"protocolVersion": version, "capabilities": {}, "clientInfo": CLIENT_INFO})
        await c.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        await c.stream.send_raw("{not json")
        await c.stream.send_raw('{"jsonrpc":"2.0","id":7,"method":"tools/list","params":[1]}')  # has an id
        first = await c.recv()
        second = await c.recv() if answered else None
        return [first, second]

    first, second = run_with(build, body, revision=version)
    if answered:
        assert first["error"]["code"] == -32700 and "id" not in first
        assert second is not None and second["id"] == 7
    else:
        assert first["error"]["code"] == -32600 and first["id"] == 7  # the parse error was not answered
