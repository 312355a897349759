"""The workloads for tasks and for 2026-07-28 listen streams, where the server offers them (chapter 12).

Like the other steps of :mod:`.workloads`, these only *ask*: every request is marked with what the
server is expected to do, and the checkers in :mod:`.tasks_checks` judge the recorded answers.

* **Legacy tasks (2025-11-25)**, where ``initialize`` declared ``tasks.requests.tools.call``: a tool
  whose ``execution.taskSupport`` allows it is called with ``params.task``; the task is polled with
  ``tasks/get`` until it is terminal (at the ``pollInterval`` asked for, never past the deadline),
  its result fetched with ``tasks/result``, a finished task's cancellation tried (it must be refused),
  a second task cancelled at once, ``tasks/list`` read where ``tasks.list`` is declared, and an id
  nobody issued asked for with ``tasks/get``, ``tasks/result`` and ``tasks/cancel``. A server that
  declared no ``tasks`` is sent one task-augmented call anyway: it must serve it as a plain call.
* **The tasks extension (2026-07-28)**, where ``server/discover`` lists
  ``io.modelcontextprotocol/tasks``: the first tools are called with the extension in the request's
  client capabilities; a call the server turns into a task (``resultType: "task"``) is polled to its
  end, a second one cancelled, and ``tasks/get`` is asked for an unknown id with and without the
  extension declared (over stdio and HTTP, where the link's stream names the task in ``Mcp-Name`` too).
* **``subscriptions/listen`` (2026-07-28; over HTTP a POST whose SSE stream stays open)**, where the server declares ``listChanged`` or
  ``resources.subscribe``: a listen asking for just what was declared, the wait for its
  acknowledgement and for what the server sends on it, then ``notifications/cancelled`` naming the
  listen's id, which is how a stdio client ends a stream.
"""

from __future__ import annotations

from typing import Any, Final

import anyio

from mcp_sim.bridge.check.session import CAPABILITIES_KEY, EraSession, example_arguments

TASKS_EXTENSION: Final = "io.modelcontextprotocol/tasks"
UNKNOWN_TASK: Final = "mcp-sim-check-no-such-task"
TASK_TTL_MS: Final = 60_000
TERMINAL: Final = ("completed", "failed", "cancelled")
SUBSCRIPTION_KEY: Final = "io.modelcontextprotocol/subscriptionId"
ACKNOWLEDGED: Final = "notifications/subscriptions/acknowledged"
LISTEN_WAIT: Final = 0.3
"""Seconds a listen stays open after its acknowledgement, for what the server sends on it."""


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _result(answer: dict[str, Any] | None) -> dict[str, Any]:
    return _object((answer or {}).get("result"))


def task_tools(session: EraSession) -> list[dict[str, Any]]:
    """The legacy tools that may be called as tasks (``execution.taskSupport`` optional or required),
    when ``initialize`` declared ``tasks.requests.tools.call``; else none."""
    requests = _object(_object(session.capabilities.get("tasks")).get("requests"))
    if "call" not in _object(requests.get("tools")):
        return []
    return [t for t in session.tools
            if _object(t.get("execution")).get("taskSupport") in ("optional", "required")]


def _call_params(tool: dict[str, Any]) -> dict[str, Any]:
    return {"name": tool.get("name"), "arguments": example_arguments(tool.get("inputSchema"))}


def with_extension(session: EraSession, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """Modern ``params`` whose ``_meta`` declares the tasks extension in the client's capabilities."""
    out = session.params(params)
    out["_meta"][CAPABILITIES_KEY] = {"extensions": {TASKS_EXTENSION: {}}}
    return out


def _task_of(session: EraSession, answer: dict[str, Any] | None) -> dict[str, Any] | None:
    """The task an answer carries: ``result.task`` (legacy CreateTaskResult), or the result itself
    when its ``resultType`` is ``"task"`` (modern); ``None`` when it is no task."""
    result = _result(answer)
    task = _object(result.get("task")) if session.era == "legacy" else (
        result if result.get("resultType") == "task" else {})
    return task if isinstance(task.get("taskId"), str) else None


async def poll(session: EraSession, task: dict[str, Any], *, declare: bool) -> str | None:
    """``tasks/get`` until the task is terminal, at its poll interval (between 20 ms and 0.5 s), for at
    most the deadline; the last status seen (``None`` if a poll went unanswered)."""
    status: Any = task.get("status")
    interval = task.get("pollInterval" if session.era == "legacy" else "pollIntervalMs")
    pause = min(0.5, max(0.02, interval / 1000)) if isinstance(interval, (int, float)) else 0.05
    with anyio.move_on_after(session.link.deadline):
        while status not in TERMINAL:
            params = {"taskId": task["taskId"]}
            answer = await session.link.request(
                "tasks/get", with_extension(session, params) if declare else session.params(params),
                "expect:task-status", "task:poll")
            if answer is None:
                return None
            status = _result(answer).get("status")
            if status is None:
                return None  # an error: the expectation reports it
            if status not in TERMINAL:
                await anyio.sleep(pause)
    return status if isinstance(status, str) else None


async def tasks(session: EraSession) -> None:
    """The task workload of the session's era (nothing where the server offers no tasks)."""
    if session.era == "legacy":
        await legacy_tasks(session)
    else:
        await modern_tasks(session)


async def legacy_tasks(session: EraSession) -> None:
    """2025-11-25 tasks: create, poll, fetch, cancel, list, and an unknown id (see the module's text)."""
    candidates = task_tools(session)
    caps = _object(session.capabilities.get("tasks"))
    if not candidates:
        if session.tools and "tasks" not in session.capabilities:
            await session.call("tools/call", {**_call_params(session.tools[0]), "task": {"ttl": TASK_TTL_MS}},
                               "expect:no-task")
        return
    tool = candidates[0]
    created = await session.call("tools/call", {**_call_params(tool), "task": {"ttl": TASK_TTL_MS}},
                                 "expect:task-created")
    task = _task_of(session, created)
    if task is not None:
        status = await poll(session, task, declare=False)
        if status in TERMINAL:
            await session.call("tasks/result", {"taskId": task["taskId"]}, "expect:task-result")
            if "cancel" in caps:
                await session.call("tasks/cancel", {"taskId": task["taskId"]}, "expect:cancel-terminal")
        elif status is not None and "cancel" in caps:
            await session.call("tasks/cancel", {"taskId": task["taskId"]}, "task:give-up")
    if "cancel" in caps:
        second = _task_of(session, await session.call(
            "tools/call", {**_call_params(tool), "task": {"ttl": TASK_TTL_MS}}, "expect:task-created"))
        if second is not None:
            await session.call("tasks/cancel", {"taskId": second["taskId"]}, "expect:task-cancel")
            await session.call("tasks/get", {"taskId": second["taskId"]}, "expect:task-status", "task:check")
    if "list" in caps and task is not None:
        cursor: str | None = None
        for _page in range(5):
            listed = await session.call("tasks/list", {"cursor": cursor} if cursor else {}, "expect:task-list")
            found = _result(listed).get("nextCursor")
            cursor = found if isinstance(found, str) else None
            if cursor is None:
                break
        await session.call("tasks/get", {"taskId": task["taskId"]}, "expect:task-status", "task:after-list")
    for method in ("tasks/get", "tasks/result", "tasks/cancel"):
        await session.call(method, {"taskId": UNKNOWN_TASK}, "expect:unknown-task")


async def modern_tasks(session: EraSession) -> None:
    """The 2026-07-28 tasks extension, where ``server/discover`` lists it (see the module's text)."""
    if TASKS_EXTENSION not in _object(session.capabilities.get("extensions")):
        return  # (over HTTP the link's stream mirrors the task id in Mcp-Name, as the transport asks)
    await session.link.request("tasks/get", with_extension(session, {"taskId": UNKNOWN_TASK}),
                               "expect:unknown-task")
    await session.link.request("tasks/get", session.params({"taskId": UNKNOWN_TASK}), "expect:task-undeclared")
    for tool in session.tools[:3]:
        answer = await session.link.request("tools/call", with_extension(session, _call_params(tool)),
                                            "task:offer")
        task = _task_of(session, answer)
        if task is None:
            continue
        status = await poll(session, task, declare=True)
        if status is not None and status not in TERMINAL:
            await session.link.request("tasks/cancel", with_extension(session, {"taskId": task["taskId"]}),
                                       "task:give-up")
        second = _task_of(session, await session.link.request(
            "tools/call", with_extension(session, _call_params(tool)), "task:offer"))
        if second is not None:
            await session.link.request("tasks/cancel", with_extension(session, {"taskId": second["taskId"]}),
                                       "expect:task-cancel")
        return


def listen_filter(session: EraSession) -> dict[str, Any]:
    """The notifications a listen asks for: each list whose ``listChanged`` is declared, and the first
    resource where ``resources.subscribe`` is declared."""
    wanted: dict[str, Any] = {}
    for capability, key in (("tools", "toolsListChanged"), ("prompts", "promptsListChanged"),
                            ("resources", "resourcesListChanged")):
        if _object(session.capabilities.get(capability)).get("listChanged") is True:
            wanted[key] = True
    if _object(session.capabilities.get("resources")).get("subscribe") is True and session.resources:
        uri = session.resources[0].get("uri")
        if isinstance(uri, str):
            wanted["resourceSubscriptions"] = [uri]
    return wanted


async def listen(session: EraSession) -> None:
    """2026-07-28 ``subscriptions/listen``: open, wait for the acknowledgement (up to the deadline) and
    a moment more, then end it with ``notifications/cancelled``."""
    wanted = listen_filter(session) if session.era == "modern" else {}
    # (over HTTP the listen is a POST whose SSE stream stays open; the link's stream hangs it up for
    # the notifications/cancelled, since closing the stream is the cancellation there)
    if not wanted:
        return
    rid = session.link.new_id()
    start = len(session.link.recorder.events)
    await session.call("subscriptions/listen", {"notifications": wanted}, "listen", "expect:listen",
                       wait=False, request_id=rid)
    with anyio.move_on_after(session.link.deadline):
        while not _heard(session, start, rid) and session.link.alive:
            await anyio.sleep(0.01)
    await anyio.sleep(LISTEN_WAIT)
    await session.link.notify("notifications/cancelled", session.params({"requestId": rid, "reason": "check"}),
                              "expect:no-response", "listen:close")
    await session.link.settle(0.1)


def _heard(session: EraSession, start: int, rid: Any) -> bool:
    """Whether, since event ``start``, the server acknowledged the listen ``rid`` or answered it."""
    server = f"server/{session.link.name}"
    for e in session.link.recorder.events[start:]:
        if e.sender != server or not isinstance(e.message, dict):
            continue
        if e.kind in ("response", "error") and e.request_id == rid:
            return True
        meta = _object(_object(e.message.get("params")).get("_meta"))
        if e.method == ACKNOWLEDGED and meta.get(SUBSCRIPTION_KEY) == rid:
            return True
    return False
