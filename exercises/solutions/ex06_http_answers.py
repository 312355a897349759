"""Reference solution for ex06_http_answers. Try the exercise before reading this."""

from __future__ import annotations

import json
from typing import Any

VERSION = "2026-07-28"
META_VERSION = "io.modelcontextprotocol/protocolVersion"
REQUIRED_META = (META_VERSION, "io.modelcontextprotocol/clientCapabilities")
METHODS = {"server/discover", "tools/list", "tools/call", "resources/list", "resources/templates/list",
           "resources/read", "prompts/list", "prompts/get", "completion/complete", "subscriptions/listen"}
NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}  # what Mcp-Name repeats


def _is_message(message: Any) -> bool:
    """A JSON-RPC request or notification MCP accepts: an object (no batch), "2.0", a string method,
    params (if any) an object, and an id, when there is one, that is a string or an integer — never null."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or not isinstance(message.get("method"), str):
        return False
    if "params" in message and not isinstance(message["params"], dict):
        return False  # MCP's params are always an object
    if "id" in message:
        rid = message["id"]
        return isinstance(rid, (str, int)) and not isinstance(rid, bool)
    return True


def answer(method: str, headers: dict[str, str], body: str) -> dict[str, Any]:
    """The status and JSON-RPC error code a sessionless 2026-07-28 endpoint answers this request with."""
    if method != "POST":
        return {"status": 405, "error": None}  # no GET stream, no session to DELETE
    try:
        message = json.loads(body)
    except ValueError:
        return {"status": 400, "error": -32700}
    if not _is_message(message):
        return {"status": 400, "error": -32600}  # a batch, a response, a null id: not a request we take
    head = {name.lower(): value for name, value in headers.items()}  # header names ignore case
    params = message.get("params", {})
    meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
    version = head.get("mcp-protocol-version")
    if version is None or (META_VERSION in meta and version != meta[META_VERSION]):
        return {"status": 400, "error": -32020}
    if head.get("mcp-method") != message["method"]:
        return {"status": 400, "error": -32020}
    member = NAMED.get(message["method"])
    if member is not None and head.get("mcp-name") != params.get(member):
        return {"status": 400, "error": -32020}
    if "id" not in message:
        return {"status": 202, "error": None}  # a notification: accepted, nothing to answer
    if message["method"] == "initialize":  # a legacy handshake: refused, naming the versions we speak
        return {"status": 400, "error": -32602}
    if isinstance(meta.get(META_VERSION), str) and meta[META_VERSION] != VERSION:
        return {"status": 400, "error": -32022}  # the version first: which methods exist depends on it
    if message["method"] not in METHODS:
        return {"status": 404, "error": -32601}
    if any(key not in meta for key in REQUIRED_META):
        return {"status": 400, "error": -32602}  # a request without its _meta fields is malformed
    return {"status": 200, "error": None}  # Mcp-Session-Id, if any, is simply ignored
