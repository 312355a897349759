"""ex08_task_polling — run a tools/call as a task: poll, stop in time, cancel at the deadline.

Edit this file, then grade it: ``grade("ex08_task_polling")`` in a notebook or
``mcp-sim grade ex08_task_polling`` in a terminal. The task is described in README.md beside this file.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def run_task(job: dict[str, Any], send: Callable[[dict[str, Any]], dict[str, Any]], new_id: Callable[[], Any],
             now: Callable[[], int], sleep: Callable[[int], None]) -> dict[str, Any]:
    """Send ``tools/call`` with ``job["call"]``; if the answer is a task, poll ``tasks/get`` until its
    status ends polling or ``job["deadline_ms"]`` passes (then ``tasks/cancel``). Return
    ``{"status": ..., "taskId": ... or None, "result": ... or None}``."""
    # A first draft: it polls as fast as it can and takes every answer for the final one.
    answer = send({"jsonrpc": "2.0", "id": new_id(), "method": "tools/call", "params": job["call"]})["result"]
    task = answer.get("task", answer)
    while task["status"] == "working":
        task = send({"jsonrpc": "2.0", "id": new_id(), "method": "tasks/get",
                     "params": {"taskId": task["taskId"]}})["result"]
    return {"status": "completed", "taskId": task["taskId"], "result": None}
