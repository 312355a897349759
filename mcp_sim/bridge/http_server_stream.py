"""The server's end of one real HTTP conversation, as a message stream (course chapter 10).

:class:`HttpServerStream` is what :class:`~mcp_sim.bridge.http_server.StreamableHTTPEndpoint` hands
to the simulator's server session: a legacy session (many POSTs, one stream) or one modern POST.
Messages the client POSTs come in through :meth:`HttpServerStream.deliver`; what the session sends
goes to the channel of the request it answers or belongs to, or to the legacy GET stream.
"""

from __future__ import annotations

import logging
import math

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from mcp_sim.security.identity import AuthInfo
from mcp_sim.transports.base import LinkInfo, TransportClosed
from mcp_sim.wire.jsonrpc import (
    InvalidMessage,
    JSONRPCErrorResponse,
    JSONRPCMessage,
    JSONRPCResultResponse,
    RequestId,
    encode,
)

logger = logging.getLogger(__name__)


class HttpServerStream:
    """The server's end of one HTTP conversation: a legacy session, or one modern POST.

    Messages the client POSTs arrive through :meth:`deliver`; messages the server sends are routed
    to the channel of the request they answer or belong to (``related_request_id``), or else to the
    session's standalone GET stream."""

    def __init__(self, info: LinkInfo, *, session_id: str | None = None, revision: str | None = None,
                 auth: AuthInfo | None = None) -> None:
        self.info = info
        self.session_id = session_id
        self.revision = revision
        self.auth = auth
        self._inbox_send, self._inbox = anyio.create_memory_object_stream[JSONRPCMessage | InvalidMessage](math.inf)
        self._exchanges: dict[RequestId, MemoryObjectSendStream[JSONRPCMessage]] = {}
        self.standalone_send, self.standalone = anyio.create_memory_object_stream[JSONRPCMessage](100)
        self.get_stream_open = False
        self.closed = anyio.Event()

    # -- the HTTP side ---------------------------------------------------------------------------
    def open_exchange(self, request_id: RequestId) -> MemoryObjectReceiveStream[JSONRPCMessage]:
        """A channel for everything the server sends about request ``request_id``."""
        send, receive = anyio.create_memory_object_stream[JSONRPCMessage](math.inf)
        self._exchanges[request_id] = send
        return receive

    def close_exchange(self, request_id: RequestId) -> None:
        channel = self._exchanges.pop(request_id, None)
        if channel is not None:
            channel.close()

    async def deliver(self, message: JSONRPCMessage | InvalidMessage) -> None:
        await self._inbox_send.send(message)

    def end_input(self) -> None:
        """No more client messages: the session's ``receive`` reaches end-of-stream."""
        self._inbox_send.close()

    # -- the session side (MessageStream) --------------------------------------------------------
    async def send(self, message: JSONRPCMessage, *, related_request_id: RequestId | None = None) -> None:
        if self.closed.is_set():
            raise TransportClosed("the HTTP session is closed")
        target: MemoryObjectSendStream[JSONRPCMessage] | None = None
        if isinstance(message, (JSONRPCResultResponse, JSONRPCErrorResponse)) and message.id is not None:
            target = self._exchanges.get(message.id)
        elif related_request_id is not None:
            target = self._exchanges.get(related_request_id)
        if target is not None:
            try:
                target.send_nowait(message)
                return
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                pass
        if self.session_id is None:
            logger.warning("dropped %s: a 2026-07-28 POST has no stream for it", encode(message)[:200])
            return
        try:
            self.standalone_send.send_nowait(message)
        except anyio.WouldBlock:
            logger.warning("dropped a message for the GET stream of session %s: nobody is listening",
                           self.session_id)

    async def receive(self) -> JSONRPCMessage | InvalidMessage:
        try:
            return await self._inbox.receive()
        except anyio.ClosedResourceError:
            raise anyio.EndOfStream from None

    async def aclose(self) -> None:
        self.closed.set()
        self._inbox_send.close()
        self.standalone_send.close()
        for rid in list(self._exchanges):
            self.close_exchange(rid)
