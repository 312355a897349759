"""Reference solution for ex06_http_answers. Try the exercise before reading this."""

from __future__ import annotations

import json
from typing import Any

VERSION = "2026-07-28"
METHODS = {"server/discover", "tools/list", "tools/call", "resources/list", "resources/templates/list",
           "resources/read", "prompts/list", "prompts/get", "completion/complete", "subscriptions/listen"}
NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}  # what Mcp-Name repeats


def answer(method: str, headers: dict[str, str], body: str) -> dict[str, Any]:
    """The status and JSON-RPC error code a sessionless 2026-07-28 endpoint answers this request with."""
    if method != "POST":
        return {"status": 405, "error": None}  # no GET stream, no session to DELETE
    try:
        message = json.loads(body)
    except ValueError:
        return {"status": 400, "error": -32700}
    head = {name.lower(): value for name, value in headers.items()}  # header names ignore case
    params = message.get("params") or {}
    meta_version = (params.get("_meta") or {}).get("io.modelcontextprotocol/protocolVersion")
    version = head.get("mcp-protocol-version")
    if version is None or (meta_version is not None and version != meta_version):
        return {"status": 400, "error": -32020}
    if head.get("mcp-method") != message.get("method"):
        return {"status": 400, "error": -32020}
    member = NAMED.get(message["method"])
    if member is not None and head.get("mcp-name") != params.get(member):
        return {"status": 400, "error": -32020}
    if "id" not in message:
        return {"status": 202, "error": None}  # a notification: accepted, nothing to answer
    if version != VERSION:
        return {"status": 400, "error": -32022}
    if message["method"] not in METHODS:
        return {"status": 404, "error": -32601}
    return {"status": 200, "error": None}  # Mcp-Session-Id, if any, is simply ignored
