"""MCP's error codes and the :class:`McpError` exception (course chapters 02 and 03).

A protocol error is a value a learner can read: its JSON-RPC code, the spec rule it enforces and the
revision that defines it. Raise :class:`McpError` in a handler and the server turns it into the
matching error response; the client raises it when a response carries an error.

Codes beyond JSON-RPC's own five:

* ``-32002`` resource not found (legacy revisions; 2026-07-28 uses ``-32602`` instead);
* ``-32042`` URL elicitation required (2025-11-25 only);
* ``-32020`` header mismatch, ``-32021`` missing required client capability, ``-32022``
  unsupported protocol version (2026-07-28; all answered with HTTP 400).
"""

from __future__ import annotations

from typing import Any, Final

from mcp_sim.wire.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    ErrorObject,
    error_object,
)

RESOURCE_NOT_FOUND: Final = -32002
URL_ELICITATION_REQUIRED: Final = -32042
HEADER_MISMATCH: Final = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY: Final = -32021
UNSUPPORTED_PROTOCOL_VERSION: Final = -32022

__all__ = [
    "HEADER_MISMATCH",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "MISSING_REQUIRED_CLIENT_CAPABILITY",
    "PARSE_ERROR",
    "RESOURCE_NOT_FOUND",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "URL_ELICITATION_REQUIRED",
    "McpError",
]


class McpError(Exception):
    """A JSON-RPC error with the rule behind it.

    ``rule`` is one sentence quoting or paraphrasing the spec requirement, ``revision`` the
    revision whose rule applies. Both are for people; only ``code``, ``message`` and ``data`` go on
    the wire.
    """

    def __init__(self, code: int, message: str, data: Any = None, *, rule: str | None = None,
                 revision: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data
        self.rule = rule
        self.revision = revision

    def to_error_object(self) -> ErrorObject:
        return error_object(self.code, self.message, self.data)

    @classmethod
    def from_error_object(cls, error: ErrorObject | dict[str, Any], *, revision: str | None = None) -> McpError:
        if isinstance(error, dict):
            return cls(error["code"], error["message"], error.get("data"), revision=revision)
        return cls(error.code, error.message, error.data, revision=revision)

    def __str__(self) -> str:
        text = f"[{self.code}] {self.message}"
        if self.rule:
            text += f" — rule: {self.rule}"
        if self.revision:
            text += f" ({self.revision})"
        return text


def method_not_found(method: str, *, revision: str | None = None, why: str | None = None) -> McpError:
    return McpError(METHOD_NOT_FOUND, f"Method not found: {method}", None,
                    rule=why or "A receiver answers -32601 for a method it does not implement or did not "
                         "advertise a capability for.", revision=revision)


def invalid_params(message: str, *, rule: str | None = None, revision: str | None = None, data: Any = None) -> McpError:
    return McpError(INVALID_PARAMS, message, data, rule=rule, revision=revision)
