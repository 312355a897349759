"""The one transport interface every pipe implements (course chapter 06, transports).

A session — the client's or the server's — talks through a :class:`MessageStream`: it sends and
receives JSON-RPC messages and never sees bytes. Each transport turns messages into its own frames
(a memory hand-off, a stdio line, an HTTP exchange), records each frame at the moment it goes onto
the wire, and turns frames back into messages. That is the choke point where the recorder sits, so
no trace can disagree with what flowed.

``receive`` returns an :class:`~mcp_sim.wire.InvalidMessage` for a frame that could not be read, so
the session can answer it with the right JSON-RPC error, and raises ``anyio.EndOfStream`` when the
peer has closed the link.

``send`` takes ``related_request_id`` for messages that belong to an in-flight request (progress,
logs and — in the legacy era — server-to-client requests made while handling it). Streamable HTTP
uses it to put the message on that request's SSE stream; the other transports ignore it.

Every message reaches a session through its read loop (``receive``). Handing a message to the
receiving session inside the sender's ``send`` would save turns of the event loop, but it lets tasks
on different links run in another order than the read loop does — another trace for the same story —
so no transport here does it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from mcp_sim.security.identity import AuthInfo  # the trust model's; a stream carries the caller's
from mcp_sim.wire.jsonrpc import InvalidMessage, JSONRPCMessage, RequestId


@dataclass(frozen=True)
class LinkInfo:
    """Who is at each end of a link and what carries it."""

    name: str
    """The link's name, usually the server's name (one client per server)."""
    transport: str
    """``memory``, ``stdio`` or ``http``."""
    client: str
    """The client participant, ``client/<name>``."""
    server: str
    """The server participant, ``server/<name>``."""


@runtime_checkable
class MessageStream(Protocol):
    """One end of a link, as a session sees it."""

    info: LinkInfo
    revision: str | None
    """The revision in use on this link, for the trace (set by the session once it is known)."""
    auth: AuthInfo | None
    """The caller's identity on the server end (``None`` when the transport established none)."""

    async def send(self, message: JSONRPCMessage, *, related_request_id: RequestId | None = None) -> None: ...

    async def receive(self) -> JSONRPCMessage | InvalidMessage: ...

    async def aclose(self) -> None: ...


class TransportClosed(Exception):
    """Sending on a link whose other end is gone (crashed, closed, disconnected)."""


class SessionExpired(TransportClosed):
    """Legacy Streamable HTTP answered 404 for our ``Mcp-Session-Id``: the session is gone and the
    client MUST start a new one with ``initialize`` (without a session id)."""


class StreamLost(Exception):
    """A stream that carried the server's messages broke and cannot be resumed, and nothing on it said
    so: a 2026-07-28 response stream cut by a crash or a broken connection (``request_id`` names its
    request, e.g. a ``subscriptions/listen``), or a legacy session the server forgot while the client
    was only listening (``request_id`` is ``None``). A client stream that reports lost streams raises
    it from ``receive``, in order after the messages that came before the break; the client decides
    what the loss means (a subscription re-listens and re-reads: ``mcp_sim.roles.client.restart``)
    and reads on. Like a refusal it is never a message, so nothing answers it."""

    def __init__(self, message: str, request_id: RequestId | None) -> None:
        super().__init__(message)
        self.request_id = request_id


class RequestRefused(Exception):
    """The transport refused one request and brought no protocol answer for it: an HTTP ``401`` from an
    authorization layer, a ``500`` from a proxy, a connection that could not be made. A client stream
    raises it from ``receive``; the client fails the request named by :attr:`request_id` with it and
    reads on. It is never a message, so nothing answers it (answering a refusal would only be refused
    again, as fast as the network allows)."""

    def __init__(self, message: str, request_id: RequestId, *, status: int | None = None) -> None:
        super().__init__(message)
        self.request_id = request_id
        self.status = status
