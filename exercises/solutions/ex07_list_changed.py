"""Reference solution for ex07_list_changed. Try the exercise before reading this."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# Which lists each notification makes stale. Templates have no notification of their own: a change to
# them comes as resources/list_changed.
STALE = {
    "notifications/tools/list_changed": ("tools", ["tools/list"]),
    "notifications/prompts/list_changed": ("prompts", ["prompts/list"]),
    "notifications/resources/list_changed": ("resources", ["resources/list", "resources/templates/list"]),
}
FIELD = {"tools/list": "tools", "prompts/list": "prompts", "resources/list": "resources",
         "resources/templates/list": "resourceTemplates"}


def _whole_list(method: str, fetch: Callable[[str, str | None], dict[str, Any]]) -> list[dict[str, Any]]:
    """Every item of ``method``: the first page, then each nextCursor, passed back unchanged."""
    items: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = fetch(method, cursor)
        items.extend(page.get(FIELD[method], []))
        cursor = page.get("nextCursor")
        if cursor is None:
            return items


def on_notification(lists: dict[str, list[dict[str, Any]]], capabilities: dict[str, Any],
                    notification: dict[str, Any],
                    fetch: Callable[[str, str | None], dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The client's lists after ``notification``."""
    if notification.get("method") not in STALE:
        return lists  # log messages, progress, resources/updated … say nothing about lists
    kind, methods = STALE[notification["method"]]
    declared = capabilities.get(kind)
    if not isinstance(declared, dict) or declared.get("listChanged") is not True:
        return lists  # the server never offered this notification: do not act on it
    new = dict(lists)
    for method in methods:
        if method in lists:  # a list the client never fetched stays unfetched
            new[method] = _whole_list(method, fetch)
    return new
