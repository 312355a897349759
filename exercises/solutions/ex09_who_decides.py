"""Reference solution for ex09_who_decides. Try the exercise before reading this."""

from __future__ import annotations

from typing import Any


def _verdict(layer: str, who: str, row: dict[str, Any]) -> dict[str, Any]:
    return {"layer": layer, "decided_by": who, "seq": row["seq"]}


def who_decides(trace: dict[str, Any]) -> dict[str, Any] | None:
    """The first row after which the request could no longer succeed, with its layer and decider."""
    rows = trace["rows"]
    for row in rows:
        message = row.get("message") or {}
        if "dropped" in row.get("marks", ()):
            return _verdict("transports", "client", row)  # lost on the wire; the client's timeout gave up
        if row["kind"] == "error" and row.get("method") in ("initialize", "server/discover"):
            return _verdict("capabilities", "server", row)  # no shared version: the session never opened
        if row["kind"] == "app" and row["from"] == "user" and row.get("text") == "deny":
            return _verdict("roles", "user", row)
        if row["kind"] == "response" and row.get("method") == "tools/call" \
                and message.get("result", {}).get("isError") is True:
            return _verdict("capabilities", "server", row)
    offers = [r for r in rows if r["kind"] == "app" and (r["from"], r["to"]) == ("host", "model")]
    proposed = any("tool_calls" in (r.get("message") or {}) for r in rows if r["from"] == "model")
    if offers and not proposed:
        return _verdict("roles", "host", offers[0])  # the model was never offered the tool it needed
    return None
