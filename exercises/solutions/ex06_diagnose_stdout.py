"""Reference solution for ex06_diagnose_stdout. Try the exercise before reading this."""

from __future__ import annotations

import json
from typing import Any

WRITERS = {"stdout": "server", "stdin": "client"}  # who writes each protocol pipe


def is_message(text: str) -> bool:
    """Is this line one JSON-RPC 2.0 message (request, notification, result or error)?"""
    try:
        value = json.loads(text)
    except ValueError:
        return False
    if not isinstance(value, dict) or value.get("jsonrpc") != "2.0":
        return False  # valid JSON is not enough: a log object is not a message
    if isinstance(value.get("method"), str):
        return True
    return "id" in value and ("result" in value or "error" in value)


def diagnose(lines: list[dict[str, str]]) -> dict[str, Any] | None:
    """The first stdin/stdout line that is not a message, and who wrote it; None if there is none."""
    for index, line in enumerate(lines):
        if line["stream"] in WRITERS and not is_message(line["text"]):  # stderr is for logs: never judged
            return {"index": index, "writer": WRITERS[line["stream"]]}
    return None
