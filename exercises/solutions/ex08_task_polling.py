"""Reference solution for ex08_task_polling. Try the exercise before reading this."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

LEGACY = "2025-11-25"
STOP = ("completed", "failed", "cancelled", "input_required")


def run_task(job: dict[str, Any], send: Callable[[dict[str, Any]], dict[str, Any]], new_id: Callable[[], Any],
             now: Callable[[], int], sleep: Callable[[int], None]) -> dict[str, Any]:
    """Call, poll at the server's pace, stop when the status says so, cancel at the deadline."""
    legacy = job["revision"] == LEGACY
    call = job["call"]
    extra = {} if legacy else {"_meta": call["_meta"]}   # 2026-07-28: every request carries _meta

    def request(method: str, params: dict[str, Any]) -> dict[str, Any]:
        return send({"jsonrpc": "2.0", "id": new_id(), "method": method, "params": params})

    answer = request("tools/call", call)["result"]
    if legacy:
        task = answer["task"]
    elif answer.get("resultType") == "task":
        task = {k: v for k, v in answer.items() if k != "resultType"}
    else:                                                 # the server ran the call inline
        return {"status": "completed", "taskId": None, "result": answer}
    task_id = task["taskId"]
    while task["status"] not in STOP:
        interval = task.get("pollInterval" if legacy else "pollIntervalMs", job["default_poll_ms"])
        left = job["deadline_ms"] - now()
        if left <= 0:
            request("tasks/cancel", {"taskId": task_id, **extra})
            return {"status": "cancelled", "taskId": task_id, "result": None}
        sleep(min(interval, left))
        if now() >= job["deadline_ms"]:
            continue                                      # the deadline came first: cancel, do not poll
        task = request("tasks/get", {"taskId": task_id, **extra})["result"]
    result = None
    if task["status"] == "completed":
        result = request("tasks/result", {"taskId": task_id})["result"] if legacy else task["result"]
    return {"status": task["status"], "taskId": task_id, "result": result}
