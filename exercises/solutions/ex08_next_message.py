"""Reference solution for ex08_next_message. Try the exercise before reading this."""

from __future__ import annotations

from typing import Any

MODERN = "2026-07-28"
EXT = "io.modelcontextprotocol/tasks"
TERMINAL = ("completed", "failed", "cancelled")


def _tasks(transcript: list[dict[str, Any]]) -> tuple[dict[str, dict[str, Any]], dict[str, str], list[str]]:
    """taskId -> latest Task seen, taskId -> tool, and the taskIds in creation order."""
    latest: dict[str, dict[str, Any]] = {}
    tool: dict[str, str] = {}
    order: list[str] = []
    requests: dict[Any, dict[str, Any]] = {}
    for entry in transcript:
        msg = entry["message"]
        if entry["from"] == "client" and "method" in msg and "id" in msg:
            requests[msg["id"]] = msg
            continue
        if entry["from"] == "server" and msg.get("method") in ("notifications/tasks/status", "notifications/tasks"):
            # the Task itself; a listen stream's _meta (its subscriptionId) belongs to the stream, not the task
            latest[msg["params"]["taskId"]] = {k: v for k, v in msg["params"].items() if k != "_meta"}
            continue
        if entry["from"] != "server" or "result" not in msg:
            continue
        req, result = requests.get(msg["id"], {}), msg["result"]
        task = result.get("task") if "task" in result else result if "taskId" in result else None
        if task is None:
            continue
        latest[task["taskId"]] = task
        if req.get("method") == "tools/call":
            tool[task["taskId"]] = req["params"]["name"]
            order.append(task["taskId"])
    return latest, tool, order


def _server(transcript: list[dict[str, Any]], world: dict[str, Any]) -> dict[str, Any]:
    modern = world["revision"] == MODERN
    # answered, or cancelled by the client (a closed subscriptions/listen is never answered)
    answered = {e["message"]["id"] for e in transcript if e["from"] == "server" and "method" not in e["message"]}
    answered |= {e["message"]["params"]["requestId"] for e in transcript if e["from"] == "client"
                 and e["message"].get("method") == "notifications/cancelled"}
    pending = next(e["message"] for e in transcript if e["from"] == "client" and "method" in e["message"]
                   and "id" in e["message"] and e["message"]["id"] not in answered)
    method, params, rid = pending["method"], pending.get("params", {}), pending["id"]
    latest, tool, _ = _tasks(transcript)
    server, now = world["server"], world["now"]

    def reply(result: dict[str, Any]) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": rid, "result": {"resultType": "complete", **result} if modern else result}

    if method == "tools/call":
        name = params["name"]
        caps = (params.get("_meta") or {}).get("io.modelcontextprotocol/clientCapabilities") or {}
        wants = EXT in (caps.get("extensions") or {}) if modern else isinstance(params.get("task"), dict)
        if not wants or server["tools"][name] == "forbidden":
            return reply({"content": [{"type": "text", "text": server["outputs"][name]}]})
        task: dict[str, Any] = {"taskId": server["next_task_id"], "status": "working", "createdAt": now,
                                "lastUpdatedAt": now}
        if modern:
            task.update(ttlMs=server["default_ttl_ms"], pollIntervalMs=server["poll_interval_ms"])
            return {"jsonrpc": "2.0", "id": rid, "result": {"resultType": "task", **task}}
        ttl = params["task"].get("ttl", server["default_ttl_ms"])
        task.update(ttl=ttl, pollInterval=server["poll_interval_ms"])
        return reply({"task": task})
    current = latest[params["taskId"]]
    if method == "tasks/get":
        return reply(dict(current))
    if method == "tasks/result":
        text = server["outputs"][tool[params["taskId"]]]
        return reply({"content": [{"type": "text", "text": text}],
                      "_meta": {"io.modelcontextprotocol/related-task": {"taskId": params["taskId"]}}})
    if method == "tasks/cancel":
        if modern:                       # the extension acknowledges; a finished task stays as it is
            return reply({})
        if current["status"] in TERMINAL:
            return {"jsonrpc": "2.0", "id": rid, "error": {
                "code": -32602, "message": f"Task {params['taskId']} is already {current['status']}"}}
        return reply({**current, "status": "cancelled", "lastUpdatedAt": now})
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"Method not found: {method}"}}


def _client(transcript: list[dict[str, Any]], world: dict[str, Any]) -> dict[str, Any]:
    modern = world["revision"] == MODERN
    used = [e["message"]["id"] for e in transcript if e["from"] == "client" and "id" in e["message"]]
    new_id = max([i for i in used if isinstance(i, int)], default=0) + 1
    latest, _, order = _tasks(transcript)
    task_id = order[-1]
    status = latest[task_id]["status"]
    if world["intent"] == "cancel":
        method, params = "tasks/cancel", {"taskId": task_id}
    elif modern and status == "input_required":
        answers = {key: world["user_answer"] for key in latest[task_id].get("inputRequests", {})}
        method, params = "tasks/update", {"taskId": task_id, "inputResponses": answers}
    elif not modern and status == "completed":
        method, params = "tasks/result", {"taskId": task_id}
    else:
        method, params = "tasks/get", {"taskId": task_id}
    if modern:
        params["_meta"] = {"io.modelcontextprotocol/protocolVersion": MODERN,
                           "io.modelcontextprotocol/clientCapabilities": world["client_capabilities"]}
    return {"jsonrpc": "2.0", "id": new_id, "method": method, "params": params}


def next_message(role: str, transcript: list[dict[str, Any]], world: dict[str, Any]) -> dict[str, Any]:
    """The message ``role`` sends next in this tasks session."""
    return _server(transcript, world) if role == "server" else _client(transcript, world)
