"""Reference solution for ex02_error_codes. Try the exercise before reading this."""

from __future__ import annotations

import json
from typing import Any

MODERN = "2026-07-28"
PV = "io.modelcontextprotocol/protocolVersion"
CC = "io.modelcontextprotocol/clientCapabilities"


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def choose_error_code(line: str, server: dict[str, Any]) -> int | None:
    """The error code the server answers ``line`` with, or None when no error response is due."""
    # 1. Parse.
    try:
        msg = json.loads(line)
    except ValueError:
        return -32700
    # 2. Shape of a request (batches are not allowed in these revisions).
    if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
        return -32600
    method = msg.get("method")
    if not isinstance(method, str) or not method:
        return -32600
    if "params" in msg and not isinstance(msg["params"], dict):
        return -32600
    if "id" not in msg:
        return None  # a notification is never answered
    if not _valid_id(msg["id"]):
        return -32600
    params = msg.get("params", {})
    # 3. Method.
    if method not in server["methods"]:
        return -32601
    # 4. Per-request negotiation in the modern era.
    modern = server["revision"] == MODERN
    caps: dict[str, Any] = {}
    if modern:
        meta = params.get("_meta")
        if not isinstance(meta, dict) or PV not in meta or CC not in meta:
            return -32602
        if meta[PV] not in server["supported_versions"]:
            return -32022
        caps = meta[CC]
    # 5. The method's own params, then its handler.
    if method in server["broken_methods"]:
        return -32603
    if method == "tools/call":
        tool = server["tools"].get(params.get("name"))
        if tool is None:
            return -32602
        if any(arg not in params.get("arguments", {}) for arg in tool["required"]):
            # 2025-06-18 lists invalid arguments among protocol errors; from 2025-11-25 an input
            # validation error is a tool execution error: an isError result (-32602 is accepted too)
            return -32602 if server["revision"] == "2025-06-18" else None
        if modern and tool["needs"] and tool["needs"] not in caps:
            return -32021
        return None  # even a failing tool is a result (isError: true), not a protocol error
    if method == "resources/read" and params.get("uri") not in server["resources"]:
        return -32602 if modern else -32002
    return None
