"""Reference solution for ex03_modern_meta. Try the exercise before reading this."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

PV = "io.modelcontextprotocol/protocolVersion"
CC = "io.modelcontextprotocol/clientCapabilities"
CI = "io.modelcontextprotocol/clientInfo"
UNSUPPORTED_PROTOCOL_VERSION = -32022


def build_request(request_id: str | int, method: str, params: dict[str, Any], version: str,
                  capabilities: dict[str, Any], client_info: dict[str, Any]) -> dict[str, Any]:
    """A 2026-07-28 request: the caller's params plus the per-request _meta (inputs untouched)."""
    meta = dict(params.get("_meta", {}))
    meta.update({PV: version, CC: capabilities, CI: client_info})
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**params, "_meta": meta}}


def choose_retry_version(error: dict[str, Any], client_supported: list[str]) -> str | None:
    """After -32022: the newest version both sides speak, or None."""
    if error.get("code") != UNSUPPORTED_PROTOCOL_VERSION:
        return None
    server_supported = (error.get("data") or {}).get("supported", [])
    common = [v for v in client_supported if v in server_supported]
    return max(common) if common else None


def call_with_retry(send: Callable[[dict[str, Any]], dict[str, Any]], new_id: Callable[[], str | int],
                    method: str, params: dict[str, Any], client_supported: list[str],
                    capabilities: dict[str, Any], client_info: dict[str, Any]) -> dict[str, Any] | None:
    """Send with the newest version; on -32022 retry once with a shared version (new id), or give up."""
    response = send(build_request(new_id(), method, params, max(client_supported), capabilities, client_info))
    error = response.get("error")
    if not isinstance(error, dict) or error.get("code") != UNSUPPORTED_PROTOCOL_VERSION:
        return response
    version = choose_retry_version(error, client_supported)
    if version is None:
        return None
    return send(build_request(new_id(), method, params, version, capabilities, client_info))
