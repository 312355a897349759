"""Reference solution for ex05_tool_results. Try the exercise before reading this."""

from __future__ import annotations

import json
from typing import Any


def run_tool(server: dict[str, Any], name: str, city: str) -> dict[str, Any] | str:
    """The tool's handler (given): a dict on success, a string (the failure's text) when it fails."""
    if city not in server["tools"][name]["known"]:
        return f"no station in {city}"
    celsius = 10 + sum(map(ord, city)) % 20
    return {"city": city, "celsius": celsius} if name == "temperature" else {"text": f"{city}: sunny, {celsius} C"}


def _result(request: dict[str, Any], server: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    if server["revision"] == "2026-07-28":  # every modern Result says which kind it is
        body = {"resultType": "complete", **body}
    return {"jsonrpc": "2.0", "id": request["id"], "result": body}


def _error(request: dict[str, Any], code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request["id"], "error": {"code": code, "message": message}}


def answer(request: dict[str, Any], server: dict[str, Any]) -> dict[str, Any]:
    """The server's response to a tools/call or resources/read request."""
    params = request["params"]
    if request["method"] == "resources/read":
        uri = params["uri"]
        if uri not in server["resources"]:
            code = -32602 if server["revision"] == "2026-07-28" else -32002
            return _error(request, code, f"Resource not found: {uri}")
        contents = [{"uri": uri, "mimeType": "text/plain", "text": server["resources"][uri]}]
        body: dict[str, Any] = {"contents": contents}
        if server["revision"] == "2026-07-28":  # a read result is cacheable: it must say for how long, and by whom
            body.update(ttlMs=30_000, cacheScope="public")  # the same notes for every caller
        return _result(request, server, body)
    name = params["name"]
    if name not in server["tools"]:  # nothing ran: a protocol error
        return _error(request, -32602, f"Unknown tool: {name}")
    city = params.get("arguments", {}).get("city")
    if not isinstance(city, str):  # the model can fix its arguments: tell it in a result
        return _result(request, server, {"content": [{"type": "text", "text": "city (a string) is required"}],
                                         "isError": True})
    outcome = run_tool(server, name, city)
    if isinstance(outcome, str):  # the tool ran and failed: still a result
        return _result(request, server, {"content": [{"type": "text", "text": outcome}], "isError": True})
    if server["tools"][name]["outputSchema"] is not None:
        return _result(request, server, {"content": [{"type": "text", "text": json.dumps(outcome)}],
                                         "structuredContent": outcome})
    return _result(request, server, {"content": [{"type": "text", "text": outcome["text"]}]})
