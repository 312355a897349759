"""The memory transport: a direct pipe, for lessons where the transport is not the point.

Each message is really encoded to JSON text, recorded, handed over and decoded again, so what the
trace shows is byte-for-byte what the other side parsed.
"""

from __future__ import annotations

import anyio
from anyio.abc import ObjectReceiveStream, ObjectSendStream

from mcp_sim.sim.world import Simulation
from mcp_sim.transports.base import AuthInfo, LinkInfo, TransportClosed
from mcp_sim.wire.jsonrpc import Batch, InvalidMessage, JSONRPCMessage, RequestId, decode, encode


class MemoryStream:
    """One end of a memory link."""

    def __init__(self, sim: Simulation, info: LinkInfo, me: str, peer: str,
                 outbox: ObjectSendStream[str], inbox: ObjectReceiveStream[str]) -> None:
        self.sim = sim
        self.info = info
        self.me = me
        self.peer = peer
        self.revision: str | None = None
        self.auth: AuthInfo | None = None
        self._outbox = outbox
        self._inbox = inbox

    async def send(self, message: JSONRPCMessage, *, related_request_id: RequestId | None = None) -> None:
        text = encode(message)
        self.sim.recorder.record_message(link=self.info.name, sender=self.me, receiver=self.peer, raw=text,
                                         revision=self.revision, transport="memory")
        try:
            await self._outbox.send(text)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            raise TransportClosed(f"{self.peer} is no longer connected") from exc

    async def send_raw(self, text: str) -> None:
        """Put arbitrary text on the link (for experiments with malformed frames)."""
        self.sim.recorder.record_message(link=self.info.name, sender=self.me, receiver=self.peer, raw=text,
                                         revision=self.revision, transport="memory")
        await self._outbox.send(text)

    async def receive(self) -> JSONRPCMessage | InvalidMessage:
        text = await self._inbox.receive()  # raises anyio.EndOfStream when the peer closed
        # The simulated peers speak 2025-06-18 and later, where a batch is refused with -32600.
        decoded = decode(text, allow_batch=False)
        assert not isinstance(decoded, Batch)
        return decoded

    async def aclose(self) -> None:
        await self._outbox.aclose()
        await self._inbox.aclose()


def memory_link(sim: Simulation, name: str, *, buffer: float = float("inf"),
                auth: AuthInfo | None = None) -> tuple[MemoryStream, MemoryStream]:
    """A connected (client end, server end) pair named ``name``; ``auth`` is the identity the server
    end reports for its caller."""
    info = LinkInfo(name=name, transport="memory", client=f"client/{name}", server=f"server/{name}")
    c2s_send, c2s_recv = anyio.create_memory_object_stream[str](buffer)
    s2c_send, s2c_recv = anyio.create_memory_object_stream[str](buffer)
    client_end = MemoryStream(sim, info, info.client, info.server, c2s_send, s2c_recv)
    server_end = MemoryStream(sim, info, info.server, info.client, s2c_send, c2s_recv)
    server_end.auth = auth
    return client_end, server_end
