"""ex06_drops_duplicates — request bookkeeping that survives drops, duplicates and late answers.

Edit this file, then grade it: ``grade("ex06_drops_duplicates")`` in a notebook or
``mcp-sim grade ex06_drops_duplicates`` in a terminal. The task is described in README.md beside this file.
"""

from __future__ import annotations

from typing import Any


def on_event(state: Any, event: dict[str, Any], link: dict[str, str]) -> tuple[list[dict[str, Any]], Any]:
    """``(actions, state)`` after ``event``. A first draft that trusts the link: it sends and delivers."""
    state = state or {"next_id": 1}
    if event["type"] in ("call", "retry"):
        state["next_id"] += 1
        return [{"do": "send", "id": state["next_id"] - 1}], state
    if event["type"] == "response":
        return [{"do": "deliver", "id": event["id"]}], state
    return [], state
