"""ex09_host_policy — the Host's tool filter and approval decision.

Edit this file, then grade it: ``grade("ex09_host_policy")`` in a notebook or
``mcp-sim grade ex09_host_policy`` in a terminal. The task is described in README.md beside this file.
"""

from __future__ import annotations

from typing import Any


def may_see(tool: dict[str, Any], server: str, trusted: bool, policy: dict[str, Any]) -> bool:
    """May the model be offered ``tool`` of ``server`` under ``policy``?"""
    raise NotImplementedError("write may_see()")


def must_ask(tool: dict[str, Any], server: str, trusted: bool, policy: dict[str, Any]) -> bool:
    """Must the user approve a call to ``tool`` of ``server`` under ``policy``?"""
    raise NotImplementedError("write must_ask()")
