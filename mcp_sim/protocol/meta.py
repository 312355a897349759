"""The reserved ``_meta`` keys of MCP (2026-07-28 and earlier).

In the modern era every request carries, in ``params._meta``, the protocol version and the client's
capabilities: there is no handshake to remember them, so the server learns them afresh on each
request. Results name the server, and notifications on a subscription stream name the subscription.
"""

from __future__ import annotations

from typing import Any, Final

PROTOCOL_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL: Final = "io.modelcontextprotocol/logLevel"
SERVER_INFO: Final = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID: Final = "io.modelcontextprotocol/subscriptionId"
RELATED_TASK: Final = "io.modelcontextprotocol/related-task"
PROGRESS_TOKEN: Final = "progressToken"

REQUIRED_REQUEST_KEYS: Final = (PROTOCOL_VERSION, CLIENT_CAPABILITIES)


def request_meta(version: str, client_capabilities: dict[str, Any], client_info: dict[str, Any] | None = None,
                 *, log_level: str | None = None, progress_token: str | int | None = None,
                 extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The ``_meta`` object a modern client puts on every request."""
    meta: dict[str, Any] = {PROTOCOL_VERSION: version, CLIENT_CAPABILITIES: client_capabilities}
    if client_info is not None:
        meta[CLIENT_INFO] = client_info
    if log_level is not None:
        meta[LOG_LEVEL] = log_level
    if progress_token is not None:
        meta[PROGRESS_TOKEN] = progress_token
    if extra:
        meta.update(extra)
    return meta


def is_reserved_key(key: str) -> bool:
    """True for keys in a reserved namespace: a prefix whose second label is ``modelcontextprotocol``
    or ``mcp`` (``io.modelcontextprotocol/…``, ``dev.mcp/…``)."""
    prefix, slash, _ = key.partition("/")
    if not slash:
        return False
    labels = prefix.split(".")
    return len(labels) >= 2 and labels[1] in ("modelcontextprotocol", "mcp")
