"""Reference solution for ex08_diagnose. Try the exercise before reading this."""

from __future__ import annotations

from typing import Any

MODERN = "2026-07-28"
EXT = "io.modelcontextprotocol/tasks"
TERMINAL = ("completed", "failed", "cancelled")
OWN_NAMES = {"2025-11-25": ("ttl", "pollInterval"), MODERN: ("ttlMs", "pollIntervalMs")}
OTHER_NAMES = {"2025-11-25": ("ttlMs", "pollIntervalMs"), MODERN: ("ttl", "pollInterval")}


def _declared_extension(request: dict[str, Any]) -> bool:
    caps = request.get("params", {}).get("_meta", {}).get("io.modelcontextprotocol/clientCapabilities", {})
    return EXT in caps.get("extensions", {})


def diagnose(trace: dict[str, Any]) -> dict[str, Any] | None:
    """The first message that breaks a tasks rule, as ``{"index", "rule"}``, or None."""
    revision = trace["revision"]
    modern = revision == MODERN
    requests: dict[str, dict[str, Any]] = {}     # request id (as text) -> request
    status: dict[str, str] = {}                  # taskId -> latest status shown
    server_tasks: dict[str, Any] | None = None   # 2025-11-25 capabilities.tasks of the server

    def bad(index: int, rule: str) -> dict[str, Any]:
        return {"index": index, "rule": rule}

    for index, entry in enumerate(trace["messages"]):
        msg = entry["message"]
        if entry["from"] == "client":
            if "id" not in msg or "method" not in msg:
                continue
            requests[repr(msg["id"])] = msg
            method, params = msg["method"], msg.get("params", {})
            if not modern:
                caps = server_tasks or {}
                if method == "tools/call" and "task" in params and "call" not in caps.get("requests", {}).get(
                        "tools", {}):
                    return bad(index, "undeclared")
                if method == "tasks/list" and "list" not in caps:
                    return bad(index, "undeclared")
                if method == "tasks/cancel" and "cancel" not in caps:
                    return bad(index, "undeclared")
            continue
        if "method" in msg:   # a notification from the server
            if msg["method"] in ("notifications/tasks/status", "notifications/tasks"):
                task = msg["params"]
                found = _check_task(index, task, revision, status)
                if found:
                    return found
            continue
        request = requests.get(repr(msg.get("id")), {})
        method = request.get("method")
        if method == "initialize" and "result" in msg:
            server_tasks = msg["result"].get("capabilities", {}).get("tasks", {})
            continue
        if "result" not in msg:
            continue
        result = msg["result"]
        if method == "tools/call":
            if modern and result.get("resultType") == "task":
                if not _declared_extension(request):
                    return bad(index, "undeclared")
                if "task" in result or "taskId" not in result:
                    return bad(index, "era-shape")
                task = result
            elif not modern and ("task" in result or "taskId" in result):
                if "taskId" in result:
                    return bad(index, "era-shape")
                task = result["task"]
            else:
                continue
            found = _check_task(index, task, revision, status)
            if found:
                return found
            continue
        if method in ("tasks/get", "tasks/cancel"):
            asked = request["params"]["taskId"]
            if method == "tasks/cancel" and not modern and status.get(asked) in TERMINAL:
                return bad(index, "cancel-finished")
            if "taskId" not in result:      # the extension's empty cancel answer
                continue
            if result["taskId"] != asked:
                return bad(index, "wrong-task-id")
            found = _check_task(index, result, revision, status)
            if found:
                return found
    return None


def _check_task(index: int, task: dict[str, Any], revision: str, status: dict[str, str]) -> dict[str, Any] | None:
    if any(name in task for name in OTHER_NAMES[revision]):
        return {"index": index, "rule": "era-shape"}
    if revision == MODERN and "result" in task and task["status"] != "completed":
        return {"index": index, "rule": "result-while-working"}
    before = status.get(task["taskId"])
    if before in TERMINAL and task["status"] != before:
        return {"index": index, "rule": "terminal-regress"}
    status[task["taskId"]] = task["status"]
    return None
