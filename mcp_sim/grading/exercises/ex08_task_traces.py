"""Task traces for the chapter-08 exercises (``ex08_next_message`` and ``ex08_diagnose``): not an
exercise itself, the simulator runs they both read.

:func:`task_trace` runs a real :class:`~mcp_sim.roles.client.Client` against a real
:class:`~mcp_sim.roles.server.Server` in a fresh seeded simulation and returns every message they
exchanged. The seed picks the surface — tool names, how long the job takes, the poll interval, the
retention time, the user's answer — and the story's shape is fixed per era, so every seed shows every
step:

* **2025-11-25** (core tasks): ``initialize``; a call *without* ``params.task`` that runs inline; a
  task-augmented ``tools/call``; ``tasks/get`` while it works (and sometimes ``tasks/list``); the
  completion notice ``notifications/tasks/status``; ``tasks/get`` and ``tasks/result`` once it is
  done; a ``tasks/cancel`` of the finished task (answered ``-32602``); a task that fails, and a
  ``tasks/cancel`` of it (refused too); a second task that the client cancels a little later than its
  last update (so the cancel answer's ``lastUpdatedAt`` moves), then cancels again (refused: it is
  already cancelled).
* **2026-07-28** (the ``io.modelcontextprotocol/tasks`` extension): ``server/discover``; a call that
  does not declare the extension and so runs inline; a call that does and gets ``resultType: "task"``;
  ``tasks/get`` while it works; a ``subscriptions/listen`` on its ``taskIds`` that carries the
  completion as ``notifications/tasks`` (then closed with ``notifications/cancelled``, so that request
  is never answered); ``tasks/get`` once it completed; a ``tasks/cancel`` of the finished task (and a
  ``tasks/get`` showing it is still completed); a task
  that waits for the user (``input_required``, then ``tasks/update``); a task the client cancels.

Each message comes back as ``{"from": "client" | "server", "message": {...}, "t_ms": ...}``, with the
world the learner may need to answer (tool outputs, the server's defaults, the user's answer).
"""

from __future__ import annotations

import functools
import json
import random
from typing import Any, Final

import anyio

from mcp_sim.protocol.errors import McpError
from mcp_sim.roles.context import Context
from mcp_sim.roles.host import Host
from mcp_sim.roles.server import Server
from mcp_sim.roles.user import ScriptedUser
from mcp_sim.sim.world import Simulation

LEGACY: Final = "2025-11-25"
MODERN: Final = "2026-07-28"
TASKS_EXT: Final = "io.modelcontextprotocol/tasks"
FAILING_TOOL: Final = "cleanup"
"""A tool whose task fails: a failed task sits among the others, so ``failed`` is terminal too."""

_LONG = ("render", "transcode", "backup", "index_docs", "train_model", "compress")
_ONLY_TASK = ("export", "archive", "publish", "migrate")
_ASKING = ("deploy", "approve_invoice", "delete_old_logs")


def draw_world(rng: Any, revision: str, with_list: bool | None = None) -> dict[str, Any]:
    """The surface of one story: names, durations and answers, all from ``rng``."""
    long_tool, only_task, asking = rng.choice(_LONG), rng.choice(_ONLY_TASK), rng.choice(_ASKING)
    steps, step_s = rng.randint(2, 4), rng.choice((5, 10, 15))
    token = f"{rng.randint(100, 999)}"
    return {
        "revision": revision,
        "long_tool": long_tool, "only_task_tool": only_task, "asking_tool": asking,
        "steps": steps, "step_seconds": step_s,
        "poll_interval_ms": rng.choice((500, 1000, 2000, 5000)),
        "server_ttl_ms": rng.choice((120_000, 300_000, 600_000)),
        "requested_ttl_ms": rng.choice((240_000, 480_000, 900_000)),
        "with_list": rng.random() < 0.5 if with_list is None else with_list,
        "outputs": {long_tool: f"{long_tool} finished (job {token})", only_task: f"{only_task} done",
                    asking: f"{asking}: confirmed"},
        "user_answer": {"action": "accept", "content": {"ok": rng.choice((True, False))}},
        "cancel_after_s": rng.choice((1, 2, 3)),
    }


def _build_server(world: dict[str, Any]) -> Server:
    server = Server("jobs", version="1.0.0", task_ttl_ms=world["server_ttl_ms"],
                    task_poll_interval_ms=world["poll_interval_ms"])
    outputs, steps, step_s = world["outputs"], world["steps"], world["step_seconds"]

    async def long_job(ctx: Context) -> str:
        for n in range(steps):
            await ctx.sleep(step_s)
            await ctx.report_progress(n + 1, steps)
        return str(outputs[world["long_tool"]])

    async def only_task(ctx: Context) -> str:
        await ctx.sleep(5 * step_s)
        return str(outputs[world["only_task_tool"]])

    async def asking(ctx: Context) -> str:
        await ctx.sleep(1)
        await ctx.elicit("Go ahead?", {"type": "object", "properties": {"ok": {"type": "boolean"}}})
        return str(outputs[world["asking_tool"]])

    server.tool(name=world["long_tool"], task_support="optional",
                description="A long job, step by step.")(long_job)
    server.tool(name=world["only_task_tool"], task_support="required",
                description="Runs only as a task.")(only_task)
    server.tool(name=world["asking_tool"], task_support="optional",
                description="Asks the user before it finishes.")(asking)

    async def failing(ctx: Context) -> str:
        await ctx.sleep(1)
        raise McpError(-32603, "the disk is full")  # a protocol error: the task fails in both eras

    server.tool(name=FAILING_TOOL, task_support="optional", description="Fails after a second.")(failing)
    return server


async def _legacy_story(client: Any, world: dict[str, Any]) -> None:
    long_tool = world["long_tool"]
    await client.request("tools/call", {"name": long_tool, "arguments": {}}, timeout=600)
    created = await client.request("tools/call", {"name": long_tool, "arguments": {},
                                                  "task": {"ttl": world["requested_ttl_ms"]}})
    task_id = created["task"]["taskId"]
    await client.request("tasks/get", {"taskId": task_id})
    if world["with_list"]:
        await client.request("tasks/list", {})
    await anyio.sleep(world["steps"] * world["step_seconds"] + 1)
    await client.request("tasks/get", {"taskId": task_id})
    await client.request("tasks/result", {"taskId": task_id}, timeout=60)
    await _expect_error(client.request("tasks/cancel", {"taskId": task_id}))
    failing = await client.request("tools/call", {"name": FAILING_TOOL, "arguments": {}, "task": {}})
    await anyio.sleep(2)
    await client.request("tasks/get", {"taskId": failing["task"]["taskId"]})
    await _expect_error(client.request("tasks/cancel", {"taskId": failing["task"]["taskId"]}))  # failed: refused
    second = await client.request("tools/call", {"name": world["only_task_tool"], "arguments": {}, "task": {}})
    await client.request("tasks/get", {"taskId": task_id})  # an older task, not the newest
    await anyio.sleep(world["cancel_after_s"])  # later than its last update: the cancel answer's lastUpdatedAt moves
    await client.request("tasks/cancel", {"taskId": second["task"]["taskId"]})
    await _expect_error(client.request("tasks/cancel", {"taskId": second["task"]["taskId"]}))  # cancelled: refused
    await anyio.sleep(0.1)


async def _modern_story(client: Any, world: dict[str, Any]) -> None:
    caps = {**client.capabilities(), "extensions": {TASKS_EXT: {}}}
    long_tool = world["long_tool"]
    await client.request("tools/call", {"name": long_tool, "arguments": {}}, timeout=600)
    created = await client.request("tools/call", {"name": long_tool, "arguments": {}}, capabilities=caps)
    task_id = created["taskId"]
    await client.request("tasks/get", {"taskId": task_id}, capabilities=caps)
    watch = await client.listen({"taskIds": [task_id]}, capabilities=caps)  # the end comes on this stream
    await anyio.sleep(world["steps"] * world["step_seconds"] + 1)
    await watch.close()
    await client.request("tasks/get", {"taskId": task_id}, capabilities=caps)
    await _expect_error(client.request("tasks/cancel", {"taskId": task_id}, capabilities=caps))
    await client.request("tasks/get", {"taskId": task_id}, capabilities=caps)
    asked = await client.request("tools/call", {"name": world["asking_tool"], "arguments": {}}, capabilities=caps)
    await anyio.sleep(2)
    pending = await client.request("tasks/get", {"taskId": asked["taskId"]}, capabilities=caps)
    answers = {key: world["user_answer"] for key in pending.get("inputRequests", {})}
    await client.request("tasks/update", {"taskId": asked["taskId"], "inputResponses": answers}, capabilities=caps)
    await anyio.sleep(1)
    await client.request("tasks/get", {"taskId": asked["taskId"]}, capabilities=caps)
    failing = await client.request("tools/call", {"name": FAILING_TOOL, "arguments": {}}, capabilities=caps)
    await anyio.sleep(2)
    await client.request("tasks/get", {"taskId": failing["taskId"]}, capabilities=caps)
    second = await client.request("tools/call", {"name": world["only_task_tool"], "arguments": {}},
                                  capabilities=caps)
    await client.request("tasks/get", {"taskId": task_id}, capabilities=caps)  # an older task, not the newest
    await client.request("tasks/cancel", {"taskId": second["taskId"]}, capabilities=caps)
    await client.request("tasks/get", {"taskId": second["taskId"]}, capabilities=caps)


async def _expect_error(pending: Any) -> None:
    try:
        await pending
    except McpError:
        return


def task_trace(rng: Any, revision: str, with_list: bool | None = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Run the era's story with a surface drawn from ``rng`` (``with_list``: whether a 2025-11-25
    client also sends tasks/list; drawn when ``None``); return its messages and its world."""
    world = draw_world(rng, revision, with_list)
    sim = Simulation(rng.randint(0, 10**6))

    async def main() -> None:
        async with Host(user=ScriptedUser()) as host:
            client = await host.add_server("jobs", _build_server(world), revision=revision)
            await (_legacy_story(client, world) if revision == LEGACY else _modern_story(client, world))

    sim.run(main)
    messages = []
    for event in sim.recorder:
        if event.kind in ("request", "response", "error", "notification") and event.message is not None:
            side = "client" if event.sender.startswith("client") else "server"
            messages.append({"from": side, "message": json.loads(json.dumps(event.message)), "t_ms": event.t_ms})
    return messages, world


@functools.lru_cache(maxsize=1024)
def _recorded(story_seed: int, revision: str, with_list: bool | None = None) -> str:
    """One run, kept as JSON text: a simulation is deterministic, so the same seed need not run twice
    (the grader replays the same cases for every file it grades)."""
    return json.dumps(task_trace(random.Random(story_seed), revision, with_list))


def story(rng: Any, revision: str, with_list: bool | None = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """:func:`task_trace` for a story seed drawn from ``rng``; a fresh copy every time."""
    messages, world = json.loads(_recorded(rng.randrange(1 << 16), revision, with_list))
    return messages, world


def public(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages as the learner sees them: who sent what, without the recorder's timestamps."""
    return [{"from": m["from"], "message": m["message"]} for m in messages]


def schema_problems(message: dict[str, Any], method: str | None, revision: str) -> list[str]:
    """What the official schema of ``revision`` says is wrong with ``message`` (its envelope, then its
    body: the request's type, or the result type of ``method``; the tasks extension's results against
    the extension's schema). Empty when it is valid — or when the schemas are not installed."""
    from mcp_sim.protocol.revisions import TASKS_EXTENSION_METHODS, get_revision
    from mcp_sim.protocol.schema import find_spec_dir

    if find_spec_dir() is None:
        return []
    problems = _errors(message, revision, "JSONRPCMessage")
    if problems:
        return problems
    rev = get_revision(revision)
    if "method" in message:
        info = rev.requests.get(message["method"]) if "id" in message else None
        ext_request = TASKS_EXTENSION_METHODS.get(message["method"]) if rev.is_modern and "id" in message else None
        if ext_request is not None:  # the extension's requests, against the extension's schema
            return _errors(message, "ext-tasks", ext_request.request_type)
        if info is None:
            return []
        instance = message if rev.types_carry_envelope else {k: v for k, v in message.items()
                                                             if k in ("method", "params")}
        return _errors(instance, revision, info.request_type)
    if "result" not in message or method is None:
        return []
    result = message["result"]
    extension = TASKS_EXTENSION_METHODS.get(method)
    if rev.is_modern and extension is not None:
        return _errors(result, "ext-tasks", extension.result_type)
    if rev.is_modern and isinstance(result, dict) and result.get("resultType") == "task":
        return _errors(result, "ext-tasks", "CreateTaskResult")
    req = rev.requests.get(method)
    if req is None:
        return []
    if isinstance(result, dict) and "task" in result and rev.has_tasks:
        return _errors(result, revision, "CreateTaskResult")
    return _errors(result, revision, "Result" if req.result_type == "EmptyResult" else req.result_type)


@functools.lru_cache(maxsize=64)
def _compiled(revision: str, definition: str) -> Any:
    """``definition`` of ``revision``'s schema compiled to Python by ``fastjsonschema`` — once, and
    quickly: the grader validates a learner's message in milliseconds. (The test suite checks the
    simulator's messages with the ``jsonschema`` library, which is slower to load.)"""
    import fastjsonschema

    from mcp_sim.protocol.schema import definitions_key, load_schema

    schema = load_schema(revision)
    root = {k: v for k, v in schema.items() if k not in ("$ref", "anyOf", "oneOf", "$schema", "$id")}
    root["$ref"] = f"#/{definitions_key(revision)}/{definition}"
    return fastjsonschema.compile(root)


def _errors(instance: Any, revision: str, definition: str) -> list[str]:
    import fastjsonschema

    try:
        _compiled(revision, definition)(instance)
    except fastjsonschema.JsonSchemaValueException as exc:
        return [f"{exc.name}: {exc.message}" if exc.name else str(exc.message)]
    return []
