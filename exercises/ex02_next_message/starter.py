"""ex02_next_message — write the next JSON-RPC message of a paused MCP session.

Edit this file, then grade it: ``grade("ex02_next_message")`` in a notebook or
``mcp-sim grade ex02_next_message`` in a terminal. The task is described in README.md beside this file.
"""

from __future__ import annotations

from typing import Any


def next_message(role: str, transcript: list[dict[str, Any]], world: dict[str, Any]) -> dict[str, Any]:
    """Return the next message ``role`` ("client" or "server") sends, as a JSON-RPC dict.

    ``transcript``: ``[{"from": "client" | "server", "message": {...}}, ...]``, oldest first.
    ``world``: ``{"server_info": {...}, "server_capabilities": {...}, "tools": [...],
    "call": {"name": ..., "arguments": {...}}}``.

    Examples of what you might return::

        {"jsonrpc": "2.0", "id": 3, "result": {"tools": [...]}}                 # a response
        {"jsonrpc": "2.0", "id": 3, "error": {"code": -32601, "message": "…"}}  # an error response
        {"jsonrpc": "2.0", "method": "notifications/initialized"}               # a notification
        {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {...}}     # a request
    """
    raise NotImplementedError("write next_message()")
