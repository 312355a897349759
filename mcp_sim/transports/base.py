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

A transport may also offer *direct delivery* (see :func:`deliver_directly`): handing the decoded
message straight to the receiving session the moment it is sent, instead of queueing it for the
session's read loop. None of the package's transports offers it: it saves turns of the event loop,
and so it lets tasks on different links run in another order than the read loop does — another
trace for the same story. A session may still ask (the answer is then ``False``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

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


DirectHandler = Callable[[JSONRPCMessage | InvalidMessage], bool]
"""Takes one arriving message and returns ``True`` once it has dealt with it, or ``False`` to leave it
in the stream's queue for the session's read loop (which then gets it, in order, from ``receive``)."""


def deliver_directly(stream: Any, handler: DirectHandler | None) -> bool:
    """Ask ``stream`` to hand every arriving message to ``handler`` as soon as it is sent, instead of
    queueing it for ``receive``; ``None`` stops that. Returns ``False`` when the transport cannot (then
    nothing changes and the session keeps reading with ``receive``).

    The handler runs inside the sender's ``send`` call, so it must not block: it deals with what it
    can at once (a response for a waiter, a request for an idle worker) and declines the rest. Once
    it declines a message, it must keep declining until its read loop has caught up, so that
    messages are still handled in the order they were sent. End of stream is always reported by
    ``receive``, so a session keeps its read loop either way."""
    deliver = getattr(stream, "deliver_to", None)
    return bool(deliver(handler)) if deliver is not None else False


class TransportClosed(Exception):
    """Sending on a link whose other end is gone (crashed, closed, disconnected)."""


class SessionExpired(TransportClosed):
    """Legacy Streamable HTTP answered 404 for our ``Mcp-Session-Id``: the session is gone and the
    client MUST start a new one with ``initialize`` (without a session id)."""
