"""ex12_capstone — your server and your Host policy, graded over the real wire.

Edit this file, then grade it: ``grade("ex12_capstone")`` in a notebook or
``mcp-sim grade ex12_capstone`` in a terminal. The task is described in README.md beside this file.
"""

from __future__ import annotations

from typing import Any

from mcp_sim.capabilities.context import Context  # noqa: F401  (your tools take ctx: Context)
from mcp_sim.roles.server import Server

# --- (a) the server ----------------------------------------------------------------------------------


def build_server(expenses: list[dict[str, Any]]) -> Server:
    """The expenses server. ``expenses``: every caller's expenses, each
    ``{"id": str, "owner": str, "description": str, "cents": int}``."""
    raise NotImplementedError("write build_server()")


# --- (b) the Host policy -----------------------------------------------------------------------------


def review_tool(server: str, tool: dict[str, Any]) -> bool:
    """May this tool definition (exactly as tools/list sent it) reach the model?"""
    raise NotImplementedError("write review_tool()")


def decide(server: str, tool: dict[str, Any], trusted: bool) -> str:
    """"run" (no confirmation), "ask" (the user confirms first) or "refuse" (the model never sees it)."""
    raise NotImplementedError("write decide()")


def may_read(server: str, uri: str, trusted: bool, roots: list[str]) -> bool:
    """May the Host show the resource ``uri`` of ``server`` to the model? ``roots``: the file:// folders the
    user shared."""
    raise NotImplementedError("write may_read()")
