"""The errors a learner meets when using a Client (course chapters 01 roles, 03 lifecycle, 06 transports).

Protocol errors the *server* answered arrive as :class:`~mcp_sim.protocol.errors.McpError`. These
are the client's own: it connected twice, a request timed out, the link ended while waiting.
"""

from __future__ import annotations

from mcp_sim.protocol.errors import METHOD_NOT_FOUND, McpError
from mcp_sim.transports.base import TransportClosed
from mcp_sim.wire.jsonrpc import RequestId


class ClientAlreadyConnected(RuntimeError):
    """A second ``connect`` on the same Client: MCP pairs one client with exactly one server."""


class RequestTimeout(TimeoutError):
    """A request got no response in time. The client has already sent ``notifications/cancelled``
    (where the revision allows it) and will ignore a late response."""

    def __init__(self, server: str, method: str, request_id: RequestId, seconds: float) -> None:
        super().__init__(f"{method} (id {request_id}) to {server} got no response within {seconds:g} s; "
                         f"the client cancelled it and will ignore a late response")
        self.server = server
        self.method = method
        self.request_id = request_id
        self.seconds = seconds


class ConnectionLost(TransportClosed):
    """The link to the server ended while a request waited for its response."""


def method_not_declared(method: str, capability: str, revision: str | None) -> McpError:
    """The error a client answers when the server asks for a kind of input the client did not declare."""
    return McpError(METHOD_NOT_FOUND, f"Method not found: {method} (this client did not declare {capability!r})",
                    rule=f"A server MUST NOT send {method} unless the client declared the {capability!r} capability.",
                    revision=revision)
