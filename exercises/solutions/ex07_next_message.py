"""Reference solution for ex07_next_message. Try the exercise before reading this."""

from __future__ import annotations

import json
from typing import Any

MODERN = "2026-07-28"
SUB_ID = "io.modelcontextprotocol/subscriptionId"
FLAGS = {"toolsListChanged": "tools", "promptsListChanged": "prompts", "resourcesListChanged": "resources"}


def _key(request_id: Any) -> str:
    return json.dumps(request_id)  # 4 and "4" are different ids


def _sent(transcript: list[dict[str, Any]], side: str) -> list[dict[str, Any]]:
    return [m["message"] for m in transcript if m["from"] == side]


def _new_id(transcript: list[dict[str, Any]]) -> int:
    used = {_key(m["id"]) for m in _sent(transcript, "client") if "method" in m and "id" in m}
    new = 1
    while _key(new) in used:
        new += 1
    return new


def _request(transcript: list[dict[str, Any]], method: str, params: dict[str, Any], modern: bool) -> dict[str, Any]:
    """A new client request; in 2026-07-28 its _meta is the one the client's other requests carry."""
    if modern:
        earlier = [m for m in _sent(transcript, "client") if "id" in m and "method" in m]
        params = {**params, "_meta": dict(earlier[-1]["params"]["_meta"])}
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": _new_id(transcript), "method": method}
    if params:
        message["params"] = params
    return message


def _capabilities(transcript: list[dict[str, Any]]) -> dict[str, Any]:
    """The server's capabilities, from its initialize or server/discover result."""
    for message in _sent(transcript, "server"):
        if "capabilities" in message.get("result", {}):
            capabilities: dict[str, Any] = message["result"]["capabilities"]
            return capabilities
    return {}


def _listen(transcript: list[dict[str, Any]]) -> dict[str, Any] | None:
    return next((m for m in _sent(transcript, "client") if m.get("method") == "subscriptions/listen"), None)


def _server(transcript: list[dict[str, Any]], world: dict[str, Any], modern: bool) -> dict[str, Any]:
    answered = {_key(m["id"]) for m in _sent(transcript, "server") if "method" not in m and "id" in m}
    for request in _sent(transcript, "client"):
        if "id" in request and request.get("method") in ("resources/subscribe", "resources/unsubscribe") \
                and _key(request["id"]) not in answered:
            return {"jsonrpc": "2.0", "id": request["id"], "result": {}}
    listen = _listen(transcript)
    acknowledged = any(m.get("method") == "notifications/subscriptions/acknowledged"
                       for m in _sent(transcript, "server"))
    if listen is not None and not acknowledged:
        # Honour only what this server declared: listChanged per kind, subscribe for resources.
        caps, asked = _capabilities(transcript), listen["params"]["notifications"]
        agreed: dict[str, Any] = {flag: True for flag, kind in FLAGS.items()
                                  if asked.get(flag) is True and caps.get(kind, {}).get("listChanged") is True}
        if "resourceSubscriptions" in asked and caps.get("resources", {}).get("subscribe") is True:
            agreed["resourceSubscriptions"] = list(asked["resourceSubscriptions"])
        return {"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                "params": {"notifications": agreed, "_meta": {SUB_ID: listen["id"]}}}
    happened = world["happened"]
    if happened["change"] == "resource":
        message = {"jsonrpc": "2.0", "method": "notifications/resources/updated",
                   "params": {"uri": happened["uri"]}}
    else:
        message = {"jsonrpc": "2.0", "method": f"notifications/{happened['change']}/list_changed"}
    if modern and listen is not None:  # on a listen stream every notification names the stream
        message["params"] = {**message.get("params", {}), "_meta": {SUB_ID: listen["id"]}}
    return message


def _client(transcript: list[dict[str, Any]], world: dict[str, Any], modern: bool) -> dict[str, Any]:
    methods = [m.get("method") for m in transcript for m in [m["message"]]]
    if "notifications/tools/list_changed" in methods:
        last_change = len(methods) - 1 - methods[::-1].index("notifications/tools/list_changed")
        if "tools/list" not in methods[last_change:]:
            return _request(transcript, "tools/list", {}, modern)  # the notification carries no list
    task = world["task"]
    if task["action"] == "watch":
        if modern:
            wanted: dict[str, Any] = {"resourceSubscriptions": [task["uri"]]}
            wanted.update({flag: True for flag, kind in FLAGS.items() if kind in task["lists"]})
            return _request(transcript, "subscriptions/listen", {"notifications": wanted}, modern)
        return _request(transcript, "resources/subscribe", {"uri": task["uri"]}, modern)
    if modern:
        listen = _listen(transcript)
        assert listen is not None
        return {"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": listen["id"], "reason": "no longer watching"}}
    return _request(transcript, "resources/unsubscribe", {"uri": task["uri"]}, modern)


def next_message(role: str, transcript: list[dict[str, Any]], world: dict[str, Any]) -> dict[str, Any]:
    """The next message ``role`` sends in this paused session."""
    modern = world["revision"] == MODERN
    return _server(transcript, world, modern) if role == "server" else _client(transcript, world, modern)
