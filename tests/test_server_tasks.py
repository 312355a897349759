"""Item 6: tasks — 2025-11-25 experimental core tasks and the 2026-07-28 tasks extension."""

from __future__ import annotations

import anyio
from test_server_support import HAS_SCHEMA, MODERN, RawClient, assert_valid, meta, run_with

from mcp_sim.capabilities.context import Context
from mcp_sim.protocol.schema import schema_errors
from mcp_sim.roles.server import Server
from mcp_sim.security.identity import AuthInfo

EXT = "io.modelcontextprotocol/tasks"
EXT_CAPS = {"extensions": {EXT: {}}, "elicitation": {}}


def assert_ext_valid(obj: dict, type_name: str) -> None:
    if HAS_SCHEMA:
        assert not schema_errors(obj, "ext-tasks", type_name), schema_errors(obj, "ext-tasks", type_name)


def build() -> Server:
    server = Server("jobs")

    @server.tool(task_support="optional")
    async def slow(steps: int, ctx: Context) -> str:
        """A long job: ten simulated seconds per step."""
        for n in range(steps):
            await ctx.sleep(10)
            await ctx.report_progress(n + 1, steps)
        return f"done after {steps} steps"

    @server.tool(task_support="required")
    async def batch(ctx: Context) -> str:
        """Only as a task."""
        await ctx.sleep(5)
        return "batch done"

    @server.tool(task_support="optional")
    async def approve(ctx: Context) -> str:
        """Waits for the user's approval inside the task."""
        await ctx.sleep(1)
        answer = await ctx.elicit("Approve?", {"type": "object", "properties": {"ok": {"type": "boolean"}}})
        return f"approved={answer['content']['ok']}"

    @server.tool()
    def quick() -> str:
        """Never a task."""
        return "quick"

    return server


def test_core_tasks_2025_11_25() -> None:
    async def body(c: RawClient) -> dict:
        out = {"init": await c.initialize("2025-11-25")}
        out["list"] = await c.request("tools/list")
        out["create"] = await c.request("tools/call", {"name": "slow", "arguments": {"steps": 3},
                                                       "task": {"ttl": 120000}})
        task_id = out["create"]["result"]["task"]["taskId"]
        out["get"] = await c.request("tasks/get", {"taskId": task_id})
        out["tasks"] = await c.request("tasks/list", {})
        out["result"] = await c.request("tasks/result", {"taskId": task_id})
        out["get_done"] = await c.request("tasks/get", {"taskId": task_id})
        out["cancel_done"] = await c.request("tasks/cancel", {"taskId": task_id})
        second = await c.request("tools/call", {"name": "slow", "arguments": {"steps": 5}, "task": {}})
        out["cancel"] = await c.request("tasks/cancel", {"taskId": second["result"]["task"]["taskId"]})
        out["required"] = await c.request("tools/call", {"name": "batch", "arguments": {}})
        out["forbidden"] = await c.request("tools/call", {"name": "quick", "arguments": {}, "task": {}})
        out["unknown"] = await c.request("tasks/get", {"taskId": "nope"})
        out["status"] = c.notifications("notifications/tasks/status")
        return out

    r = run_with(build, body, revision="2025-11-25")
    assert r["init"]["result"]["capabilities"]["tasks"] == {"list": {}, "cancel": {},
                                                            "requests": {"tools": {"call": {}}}}
    tools = {t["name"]: t for t in r["list"]["result"]["tools"]}
    assert tools["slow"]["execution"] == {"taskSupport": "optional"} and "execution" not in tools["quick"]
    created = r["create"]["result"]
    assert created == {"task": {"taskId": "task-1", "status": "working", "createdAt": "2026-01-01T00:00:00.000Z",
                                "lastUpdatedAt": "2026-01-01T00:00:00.000Z", "ttl": 120000, "pollInterval": 1000}}
    assert_valid(created, "2025-11-25", "CreateTaskResult")
    assert r["get"]["result"]["status"] == "working"
    assert_valid(r["get"]["result"], "2025-11-25", "GetTaskResult")
    assert [t["taskId"] for t in r["tasks"]["result"]["tasks"]] == ["task-1"]
    assert_valid(r["tasks"]["result"], "2025-11-25", "ListTasksResult")
    assert r["result"]["result"] == {"content": [{"type": "text", "text": "done after 3 steps"}],
                                     "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "task-1"}}}
    assert r["get_done"]["result"]["status"] == "completed"
    assert r["get_done"]["result"]["lastUpdatedAt"] == "2026-01-01T00:00:30.000Z"
    assert r["cancel_done"]["error"]["code"] == -32602
    assert r["cancel"]["result"]["status"] == "cancelled"
    assert_valid(r["cancel"]["result"], "2025-11-25", "CancelTaskResult")
    assert r["required"]["error"]["code"] == -32601
    assert r["forbidden"]["error"]["code"] == -32601
    assert r["unknown"]["error"]["code"] == -32602
    assert [n["params"]["status"] for n in r["status"]] == ["completed", "cancelled"]


def test_2025_06_18_has_no_tasks() -> None:
    async def body(c: RawClient) -> tuple:
        init = await c.initialize("2025-06-18")
        call = await c.request("tools/call", {"name": "slow", "arguments": {"steps": 1}})
        return init, call

    init, call = run_with(build, body, revision="2025-06-18")
    assert "tasks" not in init["result"]["capabilities"]
    assert call["result"]["content"][0]["text"] == "done after 1 steps"


def test_extension_tasks_2026() -> None:
    async def body(c: RawClient) -> dict:
        out = {"discover": await c.request("server/discover", {"_meta": meta()})}
        out["inline"] = await c.request("tools/call", {"name": "slow", "arguments": {"steps": 1}, "_meta": meta()})
        out["required"] = await c.request("tools/call", {"name": "batch", "_meta": meta()})
        out["create"] = await c.request("tools/call", {"name": "slow", "arguments": {"steps": 2},
                                                       "_meta": meta(EXT_CAPS)})
        task_id = out["create"]["result"]["taskId"]
        out["working"] = await c.request("tasks/get", {"taskId": task_id, "_meta": meta(EXT_CAPS)})
        await anyio.sleep(25)
        out["completed"] = await c.request("tasks/get", {"taskId": task_id, "_meta": meta(EXT_CAPS)})
        # A task that needs input: input_required, then tasks/update.
        ask = await c.request("tools/call", {"name": "approve", "_meta": meta(EXT_CAPS)})
        ask_id = ask["result"]["taskId"]
        await anyio.sleep(2)
        out["input_required"] = await c.request("tasks/get", {"taskId": ask_id, "_meta": meta(EXT_CAPS)})
        out["update"] = await c.request("tasks/update", {"taskId": ask_id, "_meta": meta(EXT_CAPS), "inputResponses": {
            "elicitation-1": {"action": "accept", "content": {"ok": True}}, "stray": {}}})
        await anyio.sleep(1)
        out["approved"] = await c.request("tasks/get", {"taskId": ask_id})  # the extension allows no _meta
        long = await c.request("tools/call", {"name": "slow", "arguments": {"steps": 9}, "_meta": meta(EXT_CAPS)})
        out["cancel"] = await c.request("tasks/cancel", {"taskId": long["result"]["taskId"], "_meta": meta(EXT_CAPS)})
        out["cancelled"] = await c.request("tasks/get", {"taskId": long["result"]["taskId"], "_meta": meta(EXT_CAPS)})
        return out

    r = run_with(build, body, revision=MODERN)
    assert r["discover"]["result"]["capabilities"]["extensions"] == {EXT: {}}
    assert r["inline"]["result"]["resultType"] == "complete"  # the client did not declare the extension
    assert r["required"]["error"] == {"code": -32021, "message": f"Tool batch runs only as a task: declare the {EXT} "
                                      "extension", "data": {"requiredCapabilities": {"extensions": {EXT: {}}}}}
    created = r["create"]["result"]
    assert {k: v for k, v in created.items() if k != "_meta"} == {
        "resultType": "task", "taskId": "task-1", "status": "working", "createdAt": "2026-01-01T00:00:10.000Z",
        "lastUpdatedAt": "2026-01-01T00:00:10.000Z", "ttlMs": 60000, "pollIntervalMs": 1000}
    assert_ext_valid(created, "CreateTaskResult")
    assert r["working"]["result"]["status"] == "working" and r["working"]["result"]["resultType"] == "complete"
    done = r["completed"]["result"]
    assert done["status"] == "completed"
    assert done["result"] == {"resultType": "complete", "content": [{"type": "text", "text": "done after 2 steps"}]}
    assert_ext_valid(done, "GetTaskResult")
    pending = r["input_required"]["result"]
    assert pending["status"] == "input_required"
    assert pending["inputRequests"]["elicitation-1"]["method"] == "elicitation/create"
    assert_ext_valid(pending, "GetTaskResult")
    assert r["update"]["result"]["resultType"] == "complete"
    assert r["approved"]["result"]["result"]["content"][0]["text"] == "approved=True"
    assert r["cancel"]["result"]["resultType"] == "complete"
    assert r["cancelled"]["result"]["status"] == "cancelled"


def test_extension_task_notifications_on_listen_and_owner_isolation() -> None:
    server = build()
    alice, bob = AuthInfo("alice"), AuthInfo("bob")

    async def create(c: RawClient) -> str:
        reply = await c.request("tools/call", {"name": "slow", "arguments": {"steps": 1}, "_meta": meta(EXT_CAPS)})
        return str(reply["result"]["taskId"])

    task_id = run_with(server, create, auth=alice)

    async def other(c: RawClient) -> dict:
        return await c.request("tasks/get", {"taskId": task_id, "_meta": meta(EXT_CAPS)})

    assert run_with(server, other, auth=bob)["error"]["code"] == -32602

    async def watch(c: RawClient) -> list:
        reply = await c.request("tools/call", {"name": "slow", "arguments": {"steps": 2}, "_meta": meta(EXT_CAPS)})
        new_id = reply["result"]["taskId"]
        await c.send({"jsonrpc": "2.0", "id": "w", "method": "subscriptions/listen", "params": {
            "_meta": meta(EXT_CAPS), "notifications": {"taskIds": [new_id, task_id, "ghost"]}}})
        ack = await c.recv()
        note = await c.recv()
        return [ack, note]

    ack, note = run_with(server, watch, auth=alice)
    assert ack["params"]["notifications"] == {"taskIds": ["task-2", "task-1"]}
    assert note["method"] == "notifications/tasks"
    assert note["params"]["taskId"] == "task-2" and note["params"]["status"] == "completed"
    assert note["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": "w"}


def build_with_inputs() -> Server:
    from mcp_sim.capabilities.mrtr import elicit

    form = {"type": "object", "properties": {"v": {"type": "string"}}, "required": ["v"]}
    server = Server("forms")

    @server.tool(task_support="required", ask_first={"who": elicit("Who?", form)})
    async def report(ctx: Context) -> str:
        """Asks who the report is for (before the task), then works as a task."""
        who = (await ctx.ask({"who": elicit("Who?", form)}))["who"]["content"]["v"]
        await ctx.sleep(3)
        return f"report for {who}"

    @server.tool(task_support="optional")
    async def two(ctx: Context) -> str:
        """Asks two questions at once inside the task."""
        got = await ctx.ask({"a": elicit("A?", form), "b": elicit("B?", form)})
        return f"{got['a']['content']['v']}+{got['b']['content']['v']}"

    return server


def test_input_gathered_before_the_task_and_answered_one_key_at_a_time() -> None:
    def answer(v: str) -> dict:
        return {"action": "accept", "content": {"v": v}}

    async def body(c: RawClient) -> dict:
        out = {"round1": await c.request("tools/call", {"name": "report", "_meta": meta(EXT_CAPS)})}
        state = out["round1"]["result"]["requestState"]
        out["round2"] = await c.request("tools/call", {"name": "report", "_meta": meta(EXT_CAPS), "requestState": state,
                                                       "inputResponses": {"who": answer("Ada")}})
        await anyio.sleep(5)
        out["report"] = await c.request("tasks/get", {"taskId": out["round2"]["result"]["taskId"], "_meta": meta(EXT_CAPS)})
        task_id = (await c.request("tools/call", {"name": "two", "_meta": meta(EXT_CAPS)}))["result"]["taskId"]
        await anyio.sleep(1)
        out["both"] = await c.request("tasks/get", {"taskId": task_id, "_meta": meta(EXT_CAPS)})
        await c.request("tasks/update", {"taskId": task_id, "_meta": meta(EXT_CAPS), "inputResponses": {"a": answer("x")}})
        out["one_left"] = await c.request("tasks/get", {"taskId": task_id, "_meta": meta(EXT_CAPS)})
        await c.request("tasks/update", {"taskId": task_id, "_meta": meta(EXT_CAPS), "inputResponses": {"b": answer("y")}})
        await anyio.sleep(1)
        out["done"] = await c.request("tasks/get", {"taskId": task_id, "_meta": meta(EXT_CAPS)})
        out["not_an_answer"] = await c.request("tools/call", {"name": "report", "_meta": meta(EXT_CAPS),
                                                              "requestState": state, "inputResponses": {"who": 12345}})
        return out

    r = run_with(build_with_inputs, body, revision=MODERN)
    first = r["round1"]["result"]
    assert first["resultType"] == "input_required" and set(first["inputRequests"]) == {"who"} and "taskId" not in first
    created = r["round2"]["result"]
    assert created["resultType"] == "task" and "requestState" not in created
    assert_ext_valid(created, "CreateTaskResult")
    assert r["report"]["result"]["result"]["content"][0]["text"] == "report for Ada"
    assert set(r["both"]["result"]["inputRequests"]) == {"a", "b"}
    assert r["one_left"]["result"]["status"] == "input_required"
    assert set(r["one_left"]["result"]["inputRequests"]) == {"b"}  # the answered key is gone
    assert r["done"]["result"]["result"]["content"][0]["text"] == "x+y"
    assert r["not_an_answer"]["error"]["code"] == -32602 and "inputResponses['who']" in r["not_an_answer"]["error"]["message"]
