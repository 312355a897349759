"""ex07_list_changed — what a client does when the server says a list changed.

Edit this file, then grade it: ``grade("ex07_list_changed")`` in a notebook or
``mcp-sim grade ex07_list_changed`` in a terminal. The task is described in README.md beside this file.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Fetch = Callable[[str, "str | None"], dict[str, Any]]


def on_notification(lists: dict[str, list[dict[str, Any]]], capabilities: dict[str, Any],
                    notification: dict[str, Any], fetch: Fetch) -> dict[str, list[dict[str, Any]]]:
    """Return the client's lists after ``notification`` arrived from the server.

    ``lists``: what the client holds, by list method, e.g. ``{"tools/list": [{"name": ...}, ...],
    "prompts/list": [...]}`` — only the lists it has fetched.
    ``capabilities``: the server's capabilities (from ``initialize`` or ``server/discover``).
    ``notification``: the JSON-RPC notification, e.g. ``{"jsonrpc": "2.0", "method":
    "notifications/tools/list_changed"}``.
    ``fetch(method, cursor)``: asks the server for one page of ``method`` (``cursor`` None for the
    first page) and returns the result, e.g. ``{"tools": [...], "nextCursor": "..."}``.
    """
    raise NotImplementedError("write on_notification()")
