"""Faults on the wire: latency, loss, duplicates, reordering, corruption, crashes (course chapter 06,
the fault lab).

Real links misbehave, and MCP's rules for timeouts, cancellation, duplicate and late responses only
make sense once you have watched them misbehave. This module is the one place where misbehaviour is
decided. Every transport hands each *frame* it puts on the wire (a memory hand-off, a stdio line, an
HTTP body, an SSE event) to a :class:`Wire`, one per direction of a link. The wire decides the frame's
fate from the link's :class:`Faults` and its own seeded random generator, and returns one or more
:class:`Shipment` objects; the transport records each one in the trace *with its marks* (``dropped``,
``duplicate``, ``corrupted``, ``reordered``, ``crash``, ``disconnect``, ``cut``) and then ships it. So a
dropped request is in the trace — marked — and simply never arrives.

Everything is deterministic: the generator is derived from the simulation's seed and the link's name
(:meth:`~mcp_sim.sim.world.Simulation.random_for`), and latency is simulated time on the virtual clock.
The same seed replays the same faults; another seed gives another story.

Frames are numbered per direction from 1, so a lesson can say exactly "drop the 2nd message to the
server" (``LinkFaults(to_server=Faults(drop_at=(2,)))``) instead of relying on chance.
"""

from __future__ import annotations

import asyncio
import heapq
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import anyio
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from mcp_sim.protocol.revisions import REVISIONS
from mcp_sim.security.identity import AuthInfo
from mcp_sim.sim.world import Simulation
from mcp_sim.transports.base import LinkInfo, TransportClosed
from mcp_sim.transports.memory import MemoryStream
from mcp_sim.wire.jsonrpc import (
    INVALID_REQUEST,
    Batch,
    InvalidMessage,
    JSONRPCErrorResponse,
    JSONRPCMessage,
    RequestId,
    decode,
    encode,
    error_object,
)

__all__ = [
    "Faults",
    "FaultyMemoryStream",
    "Latency",
    "LinkFaults",
    "Shipment",
    "Wire",
    "corrupt_text",
    "decode_frame",
    "faulty_memory_link",
]


@dataclass(frozen=True)
class Latency:
    """How long a frame spends on the wire, in simulated seconds: fixed or drawn per frame.

    ``Latency.fixed(0.02)``, ``Latency.uniform(0.01, 0.05)``, ``Latency.exponential(0.02)`` or
    ``Latency.normal(0.02, 0.005)`` (never below zero). Draws come from the link's seeded generator.
    """

    kind: Literal["fixed", "uniform", "exponential", "normal"] = "fixed"
    a: float = 0.0
    b: float = 0.0

    @classmethod
    def fixed(cls, seconds: float) -> Latency:
        return cls("fixed", seconds)

    @classmethod
    def uniform(cls, low: float, high: float) -> Latency:
        return cls("uniform", low, high)

    @classmethod
    def exponential(cls, mean: float) -> Latency:
        return cls("exponential", mean)

    @classmethod
    def normal(cls, mean: float, stddev: float) -> Latency:
        return cls("normal", mean, stddev)

    def draw(self, rng: random.Random) -> float:
        if self.kind == "fixed":
            return self.a
        if self.kind == "uniform":
            return rng.uniform(self.a, self.b)
        if self.kind == "exponential":
            return rng.expovariate(1.0 / self.a) if self.a > 0 else 0.0
        return max(0.0, rng.gauss(self.a, self.b))


@dataclass(frozen=True)
class Faults:
    """What can go wrong on one direction of a link (use :class:`LinkFaults` for two different ones).

    Probabilities are per frame, in ``[0, 1]``; ``*_at`` fields name exact frame numbers (1 = the first
    frame in that direction) so an exercise can be precise.

    * ``latency`` — seconds (a number or a :class:`Latency`). Pipes and connections keep order: a frame
      never overtakes an earlier one unless it is ``reordered``.
    * ``drop`` / ``drop_at`` — the frame is lost: recorded with the mark ``dropped``, never delivered.
      The caller learns only from its timeout.
    * ``duplicate`` / ``duplicate_at`` — the frame arrives twice (second copy marked ``duplicate``),
      the copy after the original. A receiver ignores a response whose id it no longer waits for, and
      a copy of a request it has seen (both the server's and the client's session check).
    * ``reorder`` — the frame is held back ``reorder_hold`` seconds so later frames overtake it (but
      never the end of its stream or pipe: a control signal waits for every frame in flight).
    * ``corrupt`` / ``corrupt_at`` — one character becomes a control character, so the frame is no
      longer JSON: the receiver sees a parse error (``-32700``).
    * ``disconnect_at`` — the Nth frame never arrives and the connection breaks (both ends see the
      link closed).
    * ``crash_at`` — the server process dies as the Nth client→server frame reaches it; the request
      is lost with everything else in flight. stdio: the process exits (the client may restart it);
      HTTP: the server restarts empty, forgetting every session; memory: the pipe breaks (there is no
      process to bring back). Either way a ``tools/call`` already sent ends with the client's
      ``OutcomeUnknown``: it may or may not have run.
    * ``cut_sse_at`` — the Nth SSE event on this link is lost and its stream is cut. Legacy
      Streamable HTTP resumes with ``GET`` + ``Last-Event-ID``; 2026-07-28 cannot resume, and a cut
      response stream means the request is cancelled and lost.
    """

    latency: float | Latency = 0.0
    drop: float = 0.0
    duplicate: float = 0.0
    reorder: float = 0.0
    reorder_hold: float = 0.010
    corrupt: float = 0.0
    drop_at: tuple[int, ...] = ()
    duplicate_at: tuple[int, ...] = ()
    corrupt_at: tuple[int, ...] = ()
    disconnect_at: int | None = None
    crash_at: int | None = None
    cut_sse_at: int | None = None

    def latency_of(self, rng: random.Random) -> float:
        if isinstance(self.latency, Latency):
            return self.latency.draw(rng)
        return float(self.latency)


@dataclass(frozen=True)
class LinkFaults:
    """Different faults for the two directions of a link (``None`` = a perfect direction)."""

    to_server: Faults | None = None
    to_client: Faults | None = None

    @classmethod
    def of(cls, faults: Faults | LinkFaults | None) -> LinkFaults:
        """A :class:`Faults` applies to both directions; a :class:`LinkFaults` is kept as is."""
        if faults is None:
            return cls()
        if isinstance(faults, LinkFaults):
            return faults
        return cls(to_server=faults, to_client=faults)


Action = Literal["crash", "disconnect", "cut"]


@dataclass
class Shipment:
    """One frame's fate: the text that travels, its marks, its delay, whether it arrives at all, and
    any link-level consequence (``crash``, ``disconnect``, ``cut``) the transport must carry out."""

    frame: str
    marks: tuple[str, ...] = ()
    delay: float = 0.0
    delivered: bool = True
    action: Action | None = None
    number: int = 0
    fifo: bool = field(default=True, repr=False)


def corrupt_text(text: str, rng: random.Random) -> str:
    """Replace one character of ``text`` with a control character (U+0001…U+0008).

    JSON allows no raw control characters, neither between tokens nor inside strings, so the result
    is never valid JSON (and, unlike a newline, never splits a stdio line): the receiver always answers
    with a parse error. That makes corruption a reliable teaching tool rather than a lottery."""
    bad = chr(rng.randrange(1, 9))
    if not text:
        return bad
    pos = rng.randrange(len(text))
    return text[:pos] + bad + text[pos + 1:]


class Wire:
    """One direction of a link, as a delay line with faults.

    :meth:`plan` decides what happens to a frame; :meth:`ship` delivers a planned shipment after its
    delay by calling ``deliver(frame)``. Deliveries are kept in order of arrival time (and, for frames
    that were not reordered, in sending order, as on a pipe or a TCP connection). A frame in flight is
    not a task: one timer on the virtual clock fires for the earliest, and delivery only drops the
    frame into the receiver's buffer, so an idle link owns nothing and never keeps a task group open.
    """

    def __init__(self, sim: Simulation, faults: Faults | None, *, label: str) -> None:
        self.sim = sim
        self.faults = faults
        self.label = label
        self.rng = sim.random_for(f"faults:{label}") if faults is not None else None
        self.frames = 0
        """How many frames were planned so far (frame numbers start at 1)."""
        self.sse_events = 0
        self._heap: list[tuple[float, int, Callable[[str], None], str]] = []
        self._seq = 0
        self._last_due = 0.0
        self._latest_due = 0.0
        """When the last frame now in flight arrives, held-back (reordered) ones included."""
        self._timer: asyncio.TimerHandle | None = None
        self._timer_due = 0.0

    @property
    def perfect(self) -> bool:
        return self.faults is None

    def plan(self, frame: str, *, faultable: bool = True, sse: bool = False, duplicable: bool = True,
             ) -> list[Shipment]:
        """Decide a frame's fate. ``faultable=False`` for control frames (an HTTP status line, the end
        of a stream) that only suffer latency; ``sse=True`` for an SSE event (counted for ``cut_sse_at``);
        ``duplicable=False`` for a frame this link cannot carry twice (see :mod:`.http_client`: a
        stateless HTTP POST). The dice are rolled all the same, so the rest of the run is unchanged.
        """
        self.frames += 1
        number = self.frames
        if sse:
            self.sse_events += 1
        f = self.faults
        if f is None or self.rng is None:
            return [Shipment(frame, number=number)]
        rng = self.rng
        delay = f.latency_of(rng)
        if not faultable:
            return [Shipment(frame, delay=delay, number=number)]
        if f.crash_at == number:
            return [Shipment(frame, ("crash",), delivered=False, action="crash", number=number)]
        if f.disconnect_at == number:
            return [Shipment(frame, ("disconnect",), delivered=False, action="disconnect", number=number)]
        if sse and f.cut_sse_at == self.sse_events:
            return [Shipment(frame, ("cut",), delivered=False, action="cut", number=number)]
        if number in f.drop_at or (f.drop > 0 and rng.random() < f.drop):
            return [Shipment(frame, ("dropped",), delivered=False, number=number)]
        marks: tuple[str, ...] = ()
        if number in f.corrupt_at or (f.corrupt > 0 and rng.random() < f.corrupt):
            frame = corrupt_text(frame, rng)
            marks += ("corrupted",)
        fifo = True
        if f.reorder > 0 and rng.random() < f.reorder:
            delay += f.reorder_hold
            marks += ("reordered",)
            fifo = False
        out = [Shipment(frame, marks, delay, number=number, fifo=fifo)]
        if (number in f.duplicate_at or (f.duplicate > 0 and rng.random() < f.duplicate)) and duplicable:
            out.append(Shipment(frame, (*marks, "duplicate"), delay, number=number, fifo=fifo))
        return out

    def ship(self, shipment: Shipment, deliver: Callable[[str], None]) -> None:
        """Deliver ``shipment`` now or after its delay (never if it was dropped)."""
        if not shipment.delivered:
            return
        if shipment.delay <= 0 and not self._heap:
            deliver(shipment.frame)
            return
        now = self.sim.now()
        due = now + shipment.delay
        if shipment.fifo:
            due = max(due, self._last_due)
            self._last_due = due
        self._latest_due = max(self._latest_due, due)
        self._seq += 1
        heapq.heappush(self._heap, (due, self._seq, deliver, shipment.frame))
        self._arm()

    def ship_control(self, deliver: Callable[[], None]) -> None:
        """Deliver a control signal (end-of-file, the end of an HTTP response or SSE stream) after every
        frame already in flight, with no fault and no frame number: a closed pipe is seen after the
        bytes written before. *Every* frame — also one held back by ``reorder``: the end of a stream
        must not overtake an event it carries, or the reader would be released and the late event
        dropped although the trace shows it sent."""
        if not self._heap:
            deliver()
            return
        now = self.sim.now()
        due = max(now, self._last_due, self._latest_due)
        self._last_due = due
        self._seq += 1
        heapq.heappush(self._heap, (due, self._seq, lambda _frame: deliver(), ""))
        self._arm()

    def _arm(self) -> None:
        # Frames in flight are not tasks: like packets in a network they are timed deliveries, one
        # loop timer for the earliest. Delivery only puts bytes into the receiver's buffer.
        due = self._heap[0][0]
        if self._timer is not None and self._timer_due <= due:
            return
        if self._timer is not None:
            self._timer.cancel()
        loop = asyncio.get_running_loop()
        self._timer_due = due
        self._timer = loop.call_at(due, self._deliver_due)

    def _deliver_due(self) -> None:
        self._timer = None
        now = self.sim.now()
        while self._heap and self._heap[0][0] <= now + 1e-12:
            _, _, deliver, frame = heapq.heappop(self._heap)
            deliver(frame)
        if self._heap:
            self._arm()

    def discard_in_flight(self) -> int:
        """Forget every frame still in flight (the connection broke); returns how many were lost."""
        lost = len(self._heap)
        self._heap.clear()
        self._latest_due = self._last_due
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        return lost


def decode_frame(text: str | bytes, revision: str | None) -> JSONRPCMessage | InvalidMessage:
    """Decode one received frame for a session: a message, or an :class:`InvalidMessage` whose
    ``reply`` the receiver should send back (a parse error for broken JSON).

    A JSON-RPC batch (legal only in 2025-03-26) is answered as invalid here: the simulator's sessions
    handle one message per frame."""
    rev = REVISIONS.get(revision) if revision is not None else None
    decoded = decode(text, allow_batch=rev is not None and rev.batching)
    if isinstance(decoded, Batch):
        reason = "this simulator's sessions do not unpack JSON-RPC batches (only 2025-03-26 allowed them)"
        raw = text.decode("utf-8", errors="replace") if isinstance(text, bytes) else text
        return InvalidMessage(raw, JSONRPCErrorResponse(None, error_object(INVALID_REQUEST, None, {"reason": reason})),
                              reason)
    return decoded


# --- the memory link with faults ------------------------------------------------------------------

class FaultyMemoryStream(MemoryStream):
    """A memory-link end whose frames cross a :class:`Wire`, so the fault lab works without any
    framing in the way. Built by :func:`faulty_memory_link`."""

    def __init__(self, sim: Simulation, info: LinkInfo, me: str, peer: str, outbox: MemoryObjectSendStream[str],
                 inbox: MemoryObjectReceiveStream[str], wire: Wire, breaker: Callable[[Action], None]) -> None:
        super().__init__(sim, info, me, peer, outbox, inbox)
        self._tx = outbox
        self.wire = wire
        self._breaker = breaker
        self.broken = False

    async def send(self, message: JSONRPCMessage, *, related_request_id: RequestId | None = None) -> None:
        await self.send_raw(encode(message))

    async def send_raw(self, text: str) -> None:
        if self.broken:
            raise TransportClosed(f"the link {self.info.name!r} is broken")
        for shipment in self.wire.plan(text):
            self.sim.recorder.record_message(link=self.info.name, sender=self.me, receiver=self.peer,
                                             raw=shipment.frame, revision=self.revision, transport="memory",
                                             marks=shipment.marks)
            if shipment.action is not None:
                self._breaker(shipment.action)
                return
            self.wire.ship(shipment, self._put)

    def _put(self, text: str) -> None:
        try:
            self._tx.send_nowait(text)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass  # the other end is gone: the frame falls on the floor, as on a real broken link

    async def receive(self) -> JSONRPCMessage | InvalidMessage:
        try:
            text = await self._inbox.receive()
        except anyio.ClosedResourceError:
            raise anyio.EndOfStream from None
        return decode_frame(text, self.revision)


def faulty_memory_link(sim: Simulation, name: str, faults: Faults | LinkFaults | None, *,
                       task_group: TaskGroup | None = None, auth: AuthInfo | None = None,
                       on_crash: Callable[[], None] | None = None) -> tuple[FaultyMemoryStream, FaultyMemoryStream]:
    """A connected (client end, server end) memory pair whose two directions suffer ``faults``.

    ``on_crash`` is called when a ``crash_at`` fault fires (``open_link`` passes a function that
    cancels the server's task, as if its process died). ``task_group`` is accepted for compatibility
    and not needed: frames in flight are timed deliveries, not tasks."""
    link_faults = LinkFaults.of(faults)
    info = LinkInfo(name=name, transport="memory", client=f"client/{name}", server=f"server/{name}")
    c2s_send, c2s_recv = anyio.create_memory_object_stream[str](float("inf"))
    s2c_send, s2c_recv = anyio.create_memory_object_stream[str](float("inf"))
    to_server = Wire(sim, link_faults.to_server, label=f"{name}:to_server")
    to_client = Wire(sim, link_faults.to_client, label=f"{name}:to_client")
    ends: list[FaultyMemoryStream] = []

    def breaker(action: Action) -> None:
        text = ("the server crashed; every request in flight is lost" if action == "crash"
                else "the connection broke; every frame in flight is lost")
        sim.recorder.record_event(kind="transport", link=name, sender=info.server if action == "crash" else info.client,
                                  receiver=info.client, text=text, transport="memory", marks=(action,))
        for end in ends:
            end.broken = True
            end.wire.discard_in_flight()
            end._tx.close()
        if action == "crash" and on_crash is not None:
            on_crash()

    client_end = FaultyMemoryStream(sim, info, info.client, info.server, c2s_send, s2c_recv, to_server, breaker)
    server_end = FaultyMemoryStream(sim, info, info.server, info.client, s2c_send, c2s_recv, to_client, breaker)
    server_end.auth = auth
    ends.extend((client_end, server_end))
    return client_end, server_end
