"""ex03_modern_meta — build a 2026-07-28 request and recover from -32022.

Edit this file, then grade it: ``grade("ex03_modern_meta")`` in a notebook or
``mcp-sim grade ex03_modern_meta`` in a terminal. The task is described in README.md beside this file.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

PV = "io.modelcontextprotocol/protocolVersion"
CC = "io.modelcontextprotocol/clientCapabilities"
CI = "io.modelcontextprotocol/clientInfo"


def build_request(request_id: str | int, method: str, params: dict[str, Any], version: str,
                  capabilities: dict[str, Any], client_info: dict[str, Any]) -> dict[str, Any]:
    """The JSON-RPC request, with ``params`` plus ``_meta`` holding PV, CC and CI.

    Keep any keys already in ``params["_meta"]``; do not modify ``params``.
    """
    raise NotImplementedError("write build_request()")


def choose_retry_version(error: dict[str, Any], client_supported: list[str]) -> str | None:
    """Given the ``error`` object of a response (``{"code", "message", "data"}``), the version to retry
    with: the newest one in both ``error["data"]["supported"]`` and ``client_supported``.

    ``None`` when there is none, or when the error is not -32022.
    """
    raise NotImplementedError("write choose_retry_version()")


def call_with_retry(send: Callable[[dict[str, Any]], dict[str, Any]], new_id: Callable[[], str | int],
                    method: str, params: dict[str, Any], client_supported: list[str],
                    capabilities: dict[str, Any], client_info: dict[str, Any]) -> dict[str, Any] | None:
    """Send ``method`` with the newest client version; after -32022 retry once (new id) with a shared
    version and return that response; return ``None`` without sending again if nothing is shared."""
    raise NotImplementedError("write call_with_retry()")
