"""The errors a learner meets when using a Client (course chapters 01 roles, 03 lifecycle, 06 transports).

Protocol errors the *server* answered arrive as :class:`~mcp_sim.protocol.errors.McpError`. These
are the client's own: it connected twice, a request timed out, the link ended while waiting.
"""

from __future__ import annotations

from typing import Final

from mcp_sim.protocol.errors import METHOD_NOT_FOUND, McpError
from mcp_sim.transports.base import TransportClosed
from mcp_sim.wire.jsonrpc import RequestId

OUTCOME_MAY_BE_UNKNOWN: Final = frozenset({"tools/call"})
"""Methods that may change the world: once sent, a lost connection leaves their outcome unknown. The
others only read state (the spec's lists, reads, ``ping``, discovery, subscriptions)."""


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
    """The link to the server ended while a request waited for its response.

    ``request_id`` is set when the request had been handed to the transport (it may have been
    executed); ``None`` when it never left the client."""

    def __init__(self, message: str, *, method: str | None = None, request_id: RequestId | None = None) -> None:
        super().__init__(message)
        self.method = method
        self.request_id = request_id


class OutcomeUnknown(ConnectionLost):
    """The connection ended (the server process died, the link broke) after this request was sent and
    before its response arrived, so nobody knows whether it ran (course chapter 06, transports).

    The client does not send a ``tools/call`` again on its own: running a tool twice may do twice
    what it does (two payments, two e-mails). Only after restarting a stdio server, and only for a
    tool the *host* lists as safe to repeat (``retry_after_crash``), is it retried, and the trace
    says so."""

    def __init__(self, server: str, method: str, request_id: RequestId, why: str) -> None:
        super().__init__(f"the outcome of {method} (id {request_id}) is unknown: {server} {why} before it answered; "
                         f"it was not sent again (it may or may not have run)", method=method, request_id=request_id)


def method_not_declared(method: str, capability: str, revision: str | None) -> McpError:
    """The error a client answers when the server asks for a kind of input the client did not declare."""
    return McpError(METHOD_NOT_FOUND, f"Method not found: {method} (this client did not declare {capability!r})",
                    rule=f"A server MUST NOT send {method} unless the client declared the {capability!r} capability.",
                    revision=revision)
