"""The check zoo's second twin: the zoo server (``server.py``) that also offers tasks and listen streams.

Run as ``python tasks_server.py`` it is a correct dual-era server with a third tool, ``report``, that
runs as a task: in a legacy session (2025-11-25) it declares the ``tasks`` capability (list, cancel,
``tools/call``) and gives ``report`` ``execution.taskSupport: "optional"``; in 2026-07-28 it declares the
``io.modelcontextprotocol/tasks`` extension and makes a task of every ``report`` call whose request
declares it. A task finishes ``TASK_SECONDS`` after it was created (its status is worked out when
asked: the server is single-threaded). It also declares ``tools.listChanged`` and answers a 2026-07-28
``subscriptions/listen`` with the acknowledgement, then one ``notifications/resources/updated`` for a
subscribed resource. Everything else is ``server.py``'s.

``python tasks_server.py --defect NAME`` has exactly one defect out of ``DEFECTS``;
``tests/test_check_workloads.py`` checks each is reported under the right rule.
"""

from __future__ import annotations

import secrets
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import server as zoo

DEFECTS = {
    "task-never-ends": "a task stays working forever",
    "unknown-task-result": "answers tasks/get of an unknown task id with a made-up task",
    "listen-not-acknowledged": "never acknowledges subscriptions/listen",
    "undeclared-tasks": "declares no tasks capability, yet makes a task of a task-augmented call",
    "result-without-related-task": "answers tasks/result without the related-task _meta",
    "cancel-keeps-working": "answers tasks/cancel with the task still working",
    "cancel-returns-task": "answers a 2026-07-28 tasks/cancel with the task instead of an empty result",
    "extension-not-required": "serves a 2026-07-28 tasks/get that did not declare the extension",
    "task-for-plain-call": "makes a 2026-07-28 task of a call that did not declare the extension",
    "required-served-plain": "lists report as required-as-task, yet serves a plain call of it",
    "listen-unasked": "sends prompts/list_changed, which no listen asked for, on a listen stream",
}
DEFECT = sys.argv[sys.argv.index("--defect") + 1] if "--defect" in sys.argv else ""
zoo.DEFECT = ""  # the first twin's own defects stay off
EXTENSION = "io.modelcontextprotocol/tasks"
RELATED = "io.modelcontextprotocol/related-task"
SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"
TASK_SECONDS = 0.15
POLL_MS = 50
TTL_MS = 60_000
REPORT = {"name": "report", "description": "Write a report on a topic (slow: runs as a task).",
          "inputSchema": {"type": "object", "properties": {"topic": {"type": "string"}}, "required": ["topic"]}}
PLAIN_TOOLS = [*zoo.TOOLS, REPORT]
LEGACY_TOOLS = [*zoo.TOOLS, {**REPORT, "execution": {
    "taskSupport": "required" if DEFECT == "required-served-plain" else "optional"}}]
tasks: dict[str, dict] = {}
original_serve = zoo.serve
original_capabilities = zoo.capabilities


def stamp(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat().replace("+00:00", "Z")


def capabilities() -> dict:
    caps = original_capabilities()
    caps["tools"] = {"listChanged": True}
    if zoo.legacy_session and DEFECT != "undeclared-tasks":
        caps["tasks"] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
    elif not zoo.legacy_session:
        caps["extensions"] = {EXTENSION: {}}
    return caps


def status_of(task: dict) -> str:
    if task["status"] == "working" and DEFECT != "task-never-ends" and time.time() >= task["done_at"]:
        task["status"], task["updated"] = "completed", task["done_at"]
    return task["status"]


def view(task: dict, modern: bool) -> dict:
    """The task as the era shows it (legacy Task; modern DetailedTask without resultType)."""
    status = status_of(task)
    out = {"taskId": task["id"], "status": status, "createdAt": stamp(task["created"]),
           "lastUpdatedAt": stamp(task["updated"])}
    if modern:
        out.update(ttlMs=TTL_MS, pollIntervalMs=POLL_MS)
        if status == "completed":
            out["result"] = task["result"]
    else:
        out.update(ttl=TTL_MS, pollInterval=POLL_MS)
    return out


def new_task(params: dict) -> dict:
    now = time.time()
    topic = (params.get("arguments") or {}).get("topic", "")
    task = {"id": secrets.token_hex(16), "status": "working", "created": now, "updated": now,
            "done_at": now + TASK_SECONDS,
            "result": {"content": [{"type": "text", "text": f"A report on {topic}."}], "isError": False}}
    tasks[task["id"]] = task
    return task


def declares_extension(params: dict) -> bool:
    caps = (params.get("_meta") or {}).get(zoo.CAPS_KEY) or {}
    return EXTENSION in (caps.get("extensions") or {})


def serve(method: object, rid: object, params: dict, modern: bool) -> None:
    if method == "tools/list":
        zoo.TOOLS[:] = PLAIN_TOOLS if modern else LEGACY_TOOLS
    elif method == "tools/call" and DEFECT == "undeclared-tasks" and not modern and "task" in params:
        zoo.answer(rid, {"task": view(new_task(params), False)}, False)  # any tool, no capability declared
        return
    elif method == "tools/call" and params.get("name") == REPORT["name"]:
        if modern and (declares_extension(params) or DEFECT == "task-for-plain-call"):
            zoo.write({"jsonrpc": "2.0", "id": rid, "result": {"resultType": "task", **view(new_task(params), True)}})
            return
        if not modern and "task" in params and "tasks" in capabilities():
            zoo.answer(rid, {"task": view(new_task(params), False)}, False)
            return
    elif isinstance(method, str) and method.startswith("tasks/"):
        serve_task(method, rid, params, modern)
        return
    elif method == "subscriptions/listen" and modern:
        listen(rid, params)
        return
    original_serve(method, rid, params, modern)


def serve_task(method: str, rid: object, params: dict, modern: bool) -> None:
    if not modern and "tasks" not in capabilities() and DEFECT != "undeclared-tasks":
        zoo.fail(rid, -32601, "Method not found")
        return
    if modern and not declares_extension(params) and DEFECT != "extension-not-required":
        zoo.fail(rid, -32021, "Missing required client capability",
                 {"requiredCapabilities": {"extensions": {EXTENSION: {}}}})
        return
    if method == "tasks/list" and not modern:
        if params.get("cursor") is not None:
            zoo.fail(rid, -32602, "Invalid cursor")
        else:
            zoo.answer(rid, {"tasks": [view(t, False) for t in tasks.values()]}, False)
        return
    task = tasks.get(params.get("taskId"))
    if task is None and DEFECT == "unknown-task-result" and method == "tasks/get":
        task = new_task({})
    if method not in ("tasks/get", "tasks/result", "tasks/cancel") or task is None:
        zoo.fail(rid, -32602 if task is None else -32601, "Unknown task" if task is None else "Method not found")
        return
    if method == "tasks/get":
        zoo.answer(rid, view(task, modern), modern)
    elif method == "tasks/result" and not modern:
        while status_of(task) == "working":  # tasks/result waits for the end (briefly: the work is short)
            time.sleep(0.01)
        meta = {} if DEFECT == "result-without-related-task" else {"_meta": {RELATED: {"taskId": task["id"]}}}
        zoo.answer(rid, {**task["result"], **meta}, False)
    elif method == "tasks/cancel":
        if status_of(task) != "working":
            zoo.fail(rid, -32602, f"Task already {task['status']}") if not modern else zoo.answer(rid, {}, True)
            return
        if DEFECT != "cancel-keeps-working":
            task["status"], task["updated"] = "cancelled", time.time()
        if modern:
            zoo.answer(rid, view(task, True) if DEFECT == "cancel-returns-task" else {}, True)
        else:
            zoo.answer(rid, view(task, False), False)
    else:
        zoo.fail(rid, -32601, "Method not found")


def listen(rid: object, params: dict) -> None:
    """Acknowledge what can be honoured, then tell of one change of a subscribed resource."""
    if DEFECT == "listen-not-acknowledged":
        return
    asked = params.get("notifications") or {}
    agreed: dict = {}
    if asked.get("toolsListChanged") is True:
        agreed["toolsListChanged"] = True
    uris = [u for u in asked.get("resourceSubscriptions") or [] if u == zoo.README["uri"]]
    if uris:
        agreed["resourceSubscriptions"] = uris
    meta = {SUBSCRIPTION: rid}
    zoo.write({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
               "params": {"_meta": meta, "notifications": agreed}})
    if uris:
        zoo.write({"jsonrpc": "2.0", "method": "notifications/resources/updated",
                   "params": {"_meta": meta, "uri": uris[0]}})
    if DEFECT == "listen-unasked":
        zoo.write({"jsonrpc": "2.0", "method": "notifications/prompts/list_changed", "params": {"_meta": meta}})


zoo.serve = serve
zoo.capabilities = capabilities
zoo.TOOLS[:] = LEGACY_TOOLS
zoo.PAGE = (len(zoo.TOOLS) + 1) // 2


if __name__ == "__main__":
    zoo.main()
