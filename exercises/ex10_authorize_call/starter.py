"""ex10_authorize_call — the Server's own check of every operation.

Edit this file, then grade it: ``grade("ex10_authorize_call")`` in a notebook or
``mcp-sim grade ex10_authorize_call`` in a terminal. The task is described in README.md beside this file.
"""

from __future__ import annotations

from typing import Any


def authorize(caller: dict[str, Any] | None, operation: dict[str, Any], target: dict[str, Any]) -> str | None:
    """None when ``caller`` may perform ``operation`` on ``target``; else the name of the check that fails.

    A first draft: "the Host already asked the user", so everything is allowed."""
    return None
