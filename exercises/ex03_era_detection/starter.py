"""ex03_era_detection — decide modern or legacy from a server/discover probe.

Edit this file, then grade it: ``grade("ex03_era_detection")`` in a notebook or
``mcp-sim grade ex03_era_detection`` in a terminal. The task is described in README.md beside this file.
"""

from __future__ import annotations

from typing import Any


def detect_era(reply: dict[str, Any] | None) -> str:
    """``"modern"`` or ``"legacy"`` from the probe's JSON-RPC response (``None`` = timed out)."""
    raise NotImplementedError("write detect_era()")


def detect_era_http(status: int, body: dict[str, Any] | None) -> str:
    """``"modern"`` or ``"legacy"`` from an HTTP status code and its JSON body (``None`` = no body)."""
    raise NotImplementedError("write detect_era_http()")
