"""Reference solution for ex02_next_message. Try the exercise before reading this."""

from __future__ import annotations

import json
from typing import Any


def _key(request_id: Any) -> str:
    # 7 and "7" are different ids: compare them as JSON text, which keeps the type.
    return json.dumps(request_id)


def _pending(transcript: list[dict[str, Any]], requester: str) -> dict[str, Any] | None:
    """The oldest request sent by ``requester`` that the other side has not answered yet."""
    answered = {_key(m["message"]["id"]) for m in transcript
                if m["from"] != requester and "method" not in m["message"] and "id" in m["message"]}
    for m in transcript:
        msg = m["message"]
        if m["from"] == requester and "method" in msg and "id" in msg and _key(msg["id"]) not in answered:
            return msg
    return None


def _result(request_id: Any, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def next_message(role: str, transcript: list[dict[str, Any]], world: dict[str, Any]) -> dict[str, Any]:
    """The next message ``role`` sends in this paused session."""
    if role == "server":
        request = _pending(transcript, "client")
        if request is None:
            raise ValueError("the server has nothing to answer")
        method = request["method"]
        if method == "initialize":
            return _result(request["id"], {"protocolVersion": request["params"]["protocolVersion"],
                                           "capabilities": world["server_capabilities"],
                                           "serverInfo": world["server_info"]})
        if method == "tools/list":
            return _result(request["id"], {"tools": world["tools"]})
        if method == "ping":
            return _result(request["id"], {})
        return {"jsonrpc": "2.0", "id": request["id"],
                "error": {"code": -32601, "message": f"Method not found: {method}"}}

    # The client: answer the server first, then finish the handshake, then do what the host wants.
    request = _pending(transcript, "server")
    if request is not None:
        return _result(request["id"], {})  # the only server request in these sessions is ping
    methods = [m["message"].get("method") for m in transcript if m["from"] == "client"]
    if "notifications/initialized" not in methods:
        return {"jsonrpc": "2.0", "method": "notifications/initialized"}
    used = {_key(m["message"]["id"]) for m in transcript
            if m["from"] == "client" and "method" in m["message"] and "id" in m["message"]}
    new_id = 1
    while _key(new_id) in used:
        new_id += 1
    call = world["call"]
    return {"jsonrpc": "2.0", "id": new_id, "method": "tools/call",
            "params": {"name": call["name"], "arguments": call["arguments"]}}
