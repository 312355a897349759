"""The memory transport: a direct pipe, for lessons where the transport is not the point (course
chapter 06).

Each message is really encoded to JSON text, recorded, handed over and decoded again, so what the
trace shows is byte-for-byte what the other side parsed.

Each direction of the link is an anyio memory object stream of texts: the sender puts a frame in,
the receiving session's read loop takes it out, in order. A frame is handed over at once when the
stream has room (always, unless a ``buffer`` was set), the way a wire takes bytes without waiting
for the reader.

The accelerated twin (:mod:`mcp_sim.transports.memory_accelerated`, chosen by
:mod:`mcp_sim.accelerated` when a link is made) carries the same frames in the same order, in fewer
Python steps.
"""

from __future__ import annotations

from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from mcp_sim import accelerated
from mcp_sim.sim.world import Simulation
from mcp_sim.transports.base import AuthInfo, LinkInfo, TransportClosed
from mcp_sim.transports.memory_accelerated import PipeEnd, pipe
from mcp_sim.wire.jsonrpc import Batch, InvalidMessage, JSONRPCMessage, RequestId, decode, encode


class MemoryStream:
    """One end of a memory link."""

    def __init__(self, sim: Simulation, info: LinkInfo, me: str, peer: str, outbox: MemoryObjectSendStream[str],
                 inbox: MemoryObjectReceiveStream[str]) -> None:
        self.sim = sim
        self.info = info
        self.me = me
        self.peer = peer
        self.revision: str | None = None
        self.auth: AuthInfo | None = None
        self._outbox = outbox
        """Where this end writes its frames."""
        self._inbox = inbox
        """Where the peer's frames arrive."""

    async def send(self, message: JSONRPCMessage, *, related_request_id: RequestId | None = None) -> None:
        text = encode(message)
        # The transport knows what it is sending, so it tells the recorder (the one choke point).
        self.sim.recorder.record_sent(self.info.name, self.me, self.peer, text, self.revision, "memory", message)
        await self._hand_over(text)

    async def send_raw(self, text: str) -> None:
        """Put arbitrary text on the link (for experiments with malformed frames)."""
        self.sim.recorder.record_message(link=self.info.name, sender=self.me, receiver=self.peer, raw=text,
                                         revision=self.revision, transport="memory")
        await self._hand_over(text)

    async def _hand_over(self, text: str) -> None:
        try:
            try:
                self._outbox.send_nowait(text)  # room on the wire: handed over without waiting
            except anyio.WouldBlock:
                await self._outbox.send(text)  # a full buffer: wait for the reader
        except (anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            raise TransportClosed(f"{self.peer} is no longer connected") from exc

    async def receive(self) -> JSONRPCMessage | InvalidMessage:
        try:
            text = self._inbox.receive_nowait()  # a frame is waiting: take it without yielding
        except anyio.WouldBlock:
            text = await self._inbox.receive()  # wait for the next one (anyio.EndOfStream: the peer closed)
        # The simulated peers speak 2025-06-18 and later, where a batch is refused with -32600.
        decoded = decode(text, allow_batch=False)
        assert not isinstance(decoded, Batch)
        return decoded

    async def aclose(self) -> None:
        await self._outbox.aclose()
        await self._inbox.aclose()


class AcceleratedMemoryStream(PipeEnd, MemoryStream):
    """A memory link end on the accelerated twin's pipe (see the module docstring)."""


def memory_link(sim: Simulation, name: str, *, buffer: float = float("inf"),
                auth: AuthInfo | None = None) -> tuple[MemoryStream, MemoryStream]:
    """A connected (client end, server end) pair named ``name``; ``auth`` is the identity the server
    end reports for its caller."""
    info = LinkInfo(name=name, transport="memory", client=f"client/{name}", server=f"server/{name}")
    end: type[MemoryStream] = MemoryStream
    streams: Any = anyio.create_memory_object_stream[str]
    if accelerated.enabled():
        end, streams = AcceleratedMemoryStream, pipe
    to_server_send, to_server_receive = streams(buffer)
    to_client_send, to_client_receive = streams(buffer)
    client_end = end(sim, info, info.client, info.server, to_server_send, to_client_receive)
    server_end = end(sim, info, info.server, info.client, to_client_send, to_server_receive)
    server_end.auth = auth
    return client_end, server_end
