"""ex07_next_message — subscriptions in both eras: write the next message.

Edit this file, then grade it: ``grade("ex07_next_message")`` in a notebook or
``mcp-sim grade ex07_next_message`` in a terminal. The task is described in README.md beside this file.
"""

from __future__ import annotations

from typing import Any


def next_message(role: str, transcript: list[dict[str, Any]], world: dict[str, Any]) -> dict[str, Any]:
    """Return the next message ``role`` ("client" or "server") sends, as a JSON-RPC dict.

    ``transcript``: ``[{"from": "client" | "server", "message": {...}}, ...]``, oldest first.
    ``world``: ``{"revision": "2025-11-25" | "2026-07-28" | ..., "task": ..., "happened": ...}`` —
    ``task`` (client) is what the host asks for next, ``{"action": "watch" | "stop watching",
    "uri": ..., "lists": ["tools", ...]}``, or None; ``happened`` (server) is what just changed on the
    server, ``{"change": "resource", "uri": ...}`` or ``{"change": "tools"}``, or None.
    """
    raise NotImplementedError("write next_message()")
