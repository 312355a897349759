"""Course chapter 08's task stories (:mod:`mcp_sim.scenarios.tasks_story`), and the tasks fixes they
rely on: each story, in both eras and over every transport, moves only schema-valid messages and shows
the timing the chapter describes."""

from __future__ import annotations

from typing import Any

import pytest
from test_fidelity import _check_trace
from test_server_support import HAS_SCHEMA, MODERN, RawClient, meta, run_with

from mcp_sim.capabilities.context import Context
from mcp_sim.protocol.schema import schema_errors
from mcp_sim.scenarios.tasks_story import STORIES, TASK_REVISIONS, run_tasks_story, studio, timeline

EXT = "io.modelcontextprotocol/tasks"
EXT_CAPS = {"extensions": {EXT: {}}}
MISSING = {"requiredCapabilities": {"extensions": {EXT: {}}}}


def messages(trace: Any, method: str, kind: str = "response") -> list[dict[str, Any]]:
    return [e.message for e in trace if e.method == method and e.kind == kind]


def at(trace: Any, method: str, kind: str = "response") -> list[float]:
    return [e.t_ms / 1000 for e in trace if e.method == method and e.kind == kind]


@pytest.mark.parametrize("transport", ["memory", "stdio", "http"])
@pytest.mark.parametrize("revision", TASK_REVISIONS)
@pytest.mark.parametrize("story", sorted(STORIES))
def test_every_story_message_is_valid(story: str, revision: str, transport: str) -> None:
    trace = run_tasks_story(story, revision=revision, transport=transport, seed=3)
    if HAS_SCHEMA:
        assert _check_trace(trace, revision) > 0
        for note in messages(trace, "notifications/tasks", "notification"):
            assert schema_errors(note, "ext-tasks", "TaskStatusNotification") == []
    assert timeline(trace).count("\n") > 3


@pytest.mark.parametrize("revision", TASK_REVISIONS)
@pytest.mark.parametrize("story", sorted(STORIES))
def test_stories_are_deterministic(story: str, revision: str) -> None:
    first = [e.to_json() for e in run_tasks_story(story, revision=revision, seed=1)]
    assert first == [e.to_json() for e in run_tasks_story(story, revision=revision, seed=1)]


def test_unknown_story_or_a_revision_without_tasks_is_refused() -> None:
    with pytest.raises(KeyError):
        run_tasks_story("sleep")
    with pytest.raises(ValueError, match="no tasks"):  # a ValueError: the trace player reports it as such
        run_tasks_story("poll", revision="2025-06-18")


@pytest.mark.parametrize("revision", TASK_REVISIONS)
def test_polling_follows_the_poll_interval(revision: str) -> None:
    trace = run_tasks_story("poll", revision=revision)
    assert at(trace, "tasks/get", "request") == [5.0, 10.0, 15.0, 20.0, 25.0]
    statuses = [m["result"]["status"] for m in messages(trace, "tasks/get")]
    assert statuses == ["working"] * 4 + ["completed"]
    last = messages(trace, "tasks/get")[-1]["result"]
    if revision == MODERN:
        assert last["result"]["content"][0]["text"] == "rendered 3 frames" and not messages(trace, "tasks/result")
    else:
        assert "result" not in last
        assert messages(trace, "tasks/result")[0]["result"]["content"][0]["text"] == "rendered 3 frames"


@pytest.mark.parametrize("revision", TASK_REVISIONS)
def test_a_status_notification_replaces_the_polls(revision: str) -> None:
    trace = run_tasks_story("notify", revision=revision)
    assert not messages(trace, "tasks/get", "request")
    method = "notifications/tasks" if revision == MODERN else "notifications/tasks/status"
    assert at(trace, method, "notification") == [24.0]
    note = messages(trace, method, "notification")[0]["params"]
    assert note["status"] == "completed" and ("result" in note) == (revision == MODERN)


@pytest.mark.parametrize("revision", TASK_REVISIONS)
def test_cancel_keeps_the_task_cancelled_and_without_a_result(revision: str) -> None:
    trace = run_tasks_story("cancel", revision=revision)
    gets = [m["result"] for m in messages(trace, "tasks/get")]
    assert [g["status"] for g in gets] == ["working", "cancelled", "cancelled"]
    assert all("result" not in g for g in gets)
    cancels = [m for m in trace if m.method == "tasks/cancel" and m.kind in ("response", "error")]
    if revision == MODERN:
        assert [c.kind for c in cancels] == ["response", "response"]  # the extension only acknowledges
        assert all(set(c.message["result"]) <= {"resultType", "_meta"} for c in cancels)
    else:
        assert cancels[0].message["result"]["status"] == "cancelled"
        assert cancels[1].message["error"]["code"] == -32602
        assert [e.kind for e in trace if e.method == "tasks/result"] == ["request", "error"]


@pytest.mark.parametrize("revision", TASK_REVISIONS)
def test_an_expired_task_is_unknown(revision: str) -> None:
    trace = run_tasks_story("expiry", revision=revision)
    created = messages(trace, "tools/call")[0]["result"]
    ttl = created["task"]["ttl"] if revision != MODERN else created["ttlMs"]
    assert ttl == 10_000
    replies = [e for e in trace if e.method == "tasks/get" and e.kind in ("response", "error")]
    assert [(e.t_ms, e.kind) for e in replies] == [(6000, "response"), (15000, "error")]
    assert replies[0].message["result"]["status"] == "completed"
    assert replies[1].message["error"]["code"] == -32602


def test_rules_in_each_era() -> None:
    legacy = run_tasks_story("rules", revision="2025-11-25")
    tools = {t["name"]: t.get("execution") for t in messages(legacy, "tools/list")[0]["result"]["tools"]}
    assert tools == {"render": {"taskSupport": "optional"}, "export": {"taskSupport": "required"},
                     "publish": {"taskSupport": "optional"}, "preview": None}
    assert [m["error"]["code"] for m in messages(legacy, "tools/call", "error")] == [-32601, -32601]
    modern = run_tasks_story("rules", revision=MODERN)
    assert messages(modern, "tools/call", "error")[0]["error"] == {
        "code": -32021, "message": f"Tool export runs only as a task: declare the {EXT} extension", "data": MISSING}
    inline = messages(modern, "tools/call")[0]["result"]
    assert inline["resultType"] == "complete" and at(modern, "tools/call")[0] == 8.0
    assert messages(modern, "tasks/get", "error")[0]["error"]["code"] == -32021


@pytest.mark.parametrize("revision", TASK_REVISIONS)
def test_a_task_that_asks_the_user(revision: str) -> None:
    trace = run_tasks_story("input", revision=revision)
    if revision == MODERN:
        waiting = messages(trace, "tasks/get")[0]["result"]
        assert waiting["status"] == "input_required" and list(waiting["inputRequests"]) == ["elicitation-1"]
        assert messages(trace, "tasks/update", "request")[0]["params"]["inputResponses"] == {
            "elicitation-1": {"action": "accept", "content": {"publish": True}}}
        assert messages(trace, "tasks/get")[-1]["result"]["result"]["content"][0]["text"] == "published"
    else:
        ask = messages(trace, "elicitation/create", "request")[0]
        assert ask["params"]["_meta"] == {"io.modelcontextprotocol/related-task": {"taskId": "task-1"}}
        statuses = [m["params"]["status"] for m in messages(trace, "notifications/tasks/status", "notification")]
        assert statuses == ["input_required", "working", "completed"]
        assert messages(trace, "tasks/result")[0]["result"]["content"][0]["text"] == "published"


# --- the fixes in capabilities/tasks.py -------------------------------------------------------------

def test_tasks_requests_without_the_extension_are_answered_32021() -> None:
    async def body(c: RawClient) -> dict[str, Any]:
        created = await c.request("tools/call", {"name": "render", "arguments": {"frames": 1},
                                                 "_meta": meta(EXT_CAPS)})
        task_id = created["result"]["taskId"]
        out = {m: await c.request(m, {"taskId": task_id, "_meta": meta({}), **extra}) for m, extra in (
            ("tasks/get", {}), ("tasks/update", {"inputResponses": {}}), ("tasks/cancel", {}))}
        out["unknown"] = await c.request("tasks/get", {"taskId": "nope", "_meta": meta({})})
        await c.send({"jsonrpc": "2.0", "id": "w", "method": "subscriptions/listen",
                      "params": {"_meta": meta({}), "notifications": {"taskIds": [task_id]}}})
        out["listen"] = await c.recv()
        out["still"] = await c.request("tasks/get", {"taskId": task_id, "_meta": meta(EXT_CAPS)})
        return out

    out = run_with(studio, body, revision=MODERN)
    for name in ("tasks/get", "tasks/update", "tasks/cancel", "unknown", "listen"):
        assert out[name]["error"]["code"] == -32021, name
        assert out[name]["error"]["data"] == MISSING
        if HAS_SCHEMA:
            assert schema_errors(out[name], MODERN, "MissingRequiredClientCapabilityError") == []
    assert out["still"]["result"]["status"] == "working"  # the refused cancel did not touch the task


def test_the_extension_acknowledges_a_cancel_of_a_finished_task_and_keeps_its_result() -> None:
    async def body(c: RawClient) -> tuple[dict[str, Any], dict[str, Any]]:
        import anyio

        created = await c.request("tools/call", {"name": "export", "_meta": meta(EXT_CAPS)})
        task_id = created["result"]["taskId"]
        await anyio.sleep(6)
        ack = await c.request("tasks/cancel", {"taskId": task_id, "_meta": meta(EXT_CAPS)})
        return ack, await c.request("tasks/get", {"taskId": task_id, "_meta": meta(EXT_CAPS)})

    ack, after = run_with(studio, body, revision=MODERN)
    assert ack["result"]["resultType"] == "complete"
    assert after["result"]["status"] == "completed"
    assert after["result"]["result"]["content"][0]["text"] == "exported project.zip"


def test_a_fork_that_drops_a_poll_answer_polls_again() -> None:
    from functools import partial

    from mcp_sim.trace.player_state import Change, PlayerState

    trace = run_tasks_story("poll", revision="2025-11-25")
    state = PlayerState(trace, runner=partial(run_tasks_story, "poll"), options={"revision": "2025-11-25", "seed": 0})
    lost = [e for e in state.trace if e.method == "tasks/get" and e.kind == "response"][1]
    forked = list(state.fork(Change.drop(state.trace, lost)).forked)
    text = timeline(forked)
    assert "tasks/get → task-1 working  (dropped on the way)" in text
    # The lost poll (sent at 10 s) has its own deadline of two intervals: it is sent again at 20 s, when the
    # next poll was due anyway, and the one after saw the end: as early as without the loss (rule
    # tasks.sim-client-poll-deadline; before it, the poll waited the client's 30 s timeout).
    assert at(forked, "tasks/get") == [5.0, 10.0, 20.0, 25.0]
    assert at(forked, "tasks/result") == [25.0] == at(list(trace), "tasks/result")


def test_a_tool_error_fails_a_2025_task_but_completes_an_extension_task() -> None:
    # 2025-11-25: a tool result with isError: true makes the task "failed", and tasks/result returns that
    # result. The extension: "completed" with the result inside; "failed" is only for JSON-RPC errors.
    def build():
        server = studio()

        @server.tool(task_support="optional")
        async def broken(ctx: Context) -> str:
            """Always fails."""
            await ctx.sleep(1)
            raise RuntimeError("the disk is full")

        return server

    async def legacy(c: RawClient) -> tuple[dict[str, Any], ...]:
        import anyio

        await c.initialize("2025-11-25")
        created = await c.request("tools/call", {"name": "broken", "arguments": {}, "task": {}})
        task_id = created["result"]["task"]["taskId"]
        await anyio.sleep(2)
        return (await c.request("tasks/get", {"taskId": task_id}),
                await c.request("tasks/result", {"taskId": task_id}))

    got, result = run_with(build, legacy, revision="2025-11-25")
    assert got["result"]["status"] == "failed" and got["result"]["lastUpdatedAt"].endswith(":01.000Z")
    assert result["result"]["isError"] is True

    async def modern(c: RawClient) -> dict[str, Any]:
        import anyio

        created = await c.request("tools/call", {"name": "broken", "arguments": {}, "_meta": meta(EXT_CAPS)})
        await anyio.sleep(2)
        return await c.request("tasks/get", {"taskId": created["result"]["taskId"], "_meta": meta(EXT_CAPS)})

    task = run_with(build, modern, revision=MODERN)["result"]
    assert task["status"] == "completed" and task["result"]["isError"] is True and "error" not in task


@pytest.mark.parametrize("transport", ["memory", "stdio", "http"])
def test_a_2026_tool_never_carries_execution(transport: str) -> None:
    # tasks.ext.no-tool-level-negotiation: the 2026-07-28 Tool has no execution field (SEP-2663 removed
    # tool-level negotiation), so the studio's tools/list shows none; in 2025-11-25 the same tools do.
    modern = run_tasks_story("rules", revision="2026-07-28", transport=transport)
    lists = messages(modern, "tools/list")
    assert lists and all("execution" not in tool for m in lists for tool in m["result"]["tools"])
    if HAS_SCHEMA:
        for m in lists:
            assert schema_errors(m, "2026-07-28", "JSONRPCResultResponse") == []
            assert schema_errors(m["result"], "2026-07-28", "ListToolsResult") == []
    legacy = run_tasks_story("rules", revision="2025-11-25", transport=transport)
    shown = {t["name"]: t.get("execution") for t in messages(legacy, "tools/list")[0]["result"]["tools"]}
    assert shown["export"] == {"taskSupport": "required"} and shown["preview"] is None
