"""ex08_next_message — play the Client or the Server of a tasks session: write the next message.

Edit this file, then grade it: ``grade("ex08_next_message")`` in a notebook or
``mcp-sim grade ex08_next_message`` in a terminal. The task is described in README.md beside this file.
"""

from __future__ import annotations

from typing import Any


def next_message(role: str, transcript: list[dict[str, Any]], world: dict[str, Any]) -> dict[str, Any]:
    """The one JSON-RPC message ``role`` (``"client"`` or ``"server"``) sends next."""
    raise NotImplementedError("write next_message(): start with the server's answer to tools/call")
