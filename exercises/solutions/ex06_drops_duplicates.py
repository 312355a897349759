"""Reference solution for ex06_drops_duplicates. Try the exercise before reading this."""

from __future__ import annotations

from typing import Any


def on_event(state: dict[str, Any] | None, event: dict[str, Any], link: dict[str, str]) -> tuple[list[dict], dict]:
    """One step of the client's request bookkeeping: the actions for ``event`` and the new state."""
    state = state or {"next_id": 1, "waiting": {}}  # waiting: id (as text) → [id, deadline]
    actions: list[dict[str, Any]] = []
    now = event["at"]
    # 1. Deadlines first: whatever is still waiting at or after its deadline is given up and cancelled.
    modern_http = link["transport"] == "http" and link["revision"] >= "2026-07-28"
    for key, (request_id, deadline) in sorted(state["waiting"].items(), key=lambda item: item[1][1]):
        if now >= deadline:
            actions.append({"do": "close" if modern_http else "cancel", "id": request_id})
            del state["waiting"][key]  # from now on its answer is late: ignored
    # 2. The event itself.
    if event["type"] in ("call", "retry"):  # a retry is a new request: a new id
        request_id = state["next_id"]
        state["next_id"] += 1
        state["waiting"][repr(request_id)] = [request_id, now + event["timeout"]]
        actions.append({"do": "send", "id": request_id})
    elif event["type"] == "response":
        if state["waiting"].pop(repr(event["id"]), None) is not None:  # only an id still waiting
            actions.append({"do": "deliver", "id": event["id"]})
    return actions, state
