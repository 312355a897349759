"""Reference solution for ex05_diagnose. Try the exercise before reading this."""

from __future__ import annotations

from typing import Any

NOT_FOUND = {"2025-11-25": -32002, "2026-07-28": -32602}
TYPES = {"string": str, "number": (int, float), "integer": int, "boolean": bool, "object": dict, "array": list}


def conforms(value: Any, schema: dict[str, Any]) -> bool:
    """Enough of JSON Schema for an object schema: the type, required properties, property types."""
    if not isinstance(value, dict):
        return False
    if any(name not in value for name in schema.get("required", [])):
        return False
    for name, sub in schema.get("properties", {}).items():
        want = TYPES.get(sub.get("type", ""), object)
        if name in value and (not isinstance(value[name], want) or isinstance(value[name], bool) != (want is bool)):
            return False
    return True


def diagnose(trace: dict[str, Any]) -> dict[str, Any] | None:
    """The first message that breaks a rule, as ``{"index", "rule"}``, or None for a sound trace."""
    revision = trace["revision"]
    methods: dict[Any, tuple[str, dict[str, Any]]] = {}   # request id -> (method, params)
    schemas: dict[str, dict[str, Any]] = {}               # tool name -> outputSchema
    issued: set[str] = set()                              # nextCursor values the server sent
    for index, entry in enumerate(trace["messages"]):
        msg = entry["message"]
        if "method" in msg:
            params = msg.get("params", {})
            methods[msg["id"]] = (msg["method"], params)
            if "cursor" in params and params["cursor"] not in issued:
                return {"index": index, "rule": "invented-cursor"}
            continue
        method, params = methods[msg["id"]]
        if "error" in msg:
            if method == "resources/read" and msg["error"]["code"] != NOT_FOUND[revision]:
                return {"index": index, "rule": "not-found-code"}
            continue
        result = msg["result"]
        if revision == "2026-07-28" and "resultType" not in result:
            return {"index": index, "rule": "result-type"}
        if method == "tools/list":
            schemas.update({t["name"]: t["outputSchema"] for t in result["tools"] if "outputSchema" in t})
            if "nextCursor" in result:
                issued.add(result["nextCursor"])
        if method == "tools/call" and params["name"] in schemas:
            if not conforms(result.get("structuredContent"), schemas[params["name"]]):
                return {"index": index, "rule": "output-schema"}
    return None
