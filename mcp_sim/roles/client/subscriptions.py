"""Subscriptions a client holds open (course notebook on change notifications; spec 2026-07-28
``subscriptions/listen``, legacy ``resources/subscribe``).

In 2026-07-28 a client subscribes by sending one long-lived ``subscriptions/listen`` request: the
server answers first with ``notifications/subscriptions/acknowledged`` (saying which part of the
filter it honours) and then sends change notifications tagged with the subscription's id, until one
side ends the request. A :class:`Subscription` is the client's record of one such stream.

**No silent miss.** A subscriber either hears every change the server sent or sees a signal it can
act on. A stream can end three ways (rules ``subscriptions.server-graceful-result``,
``subscriptions.reconnect-on-drop``): the client closed it (:attr:`Subscription.ended_by_client`);
the server ended it gracefully (a result for the listen request: :attr:`Subscription.closed`); or it
was *dropped* — a cut HTTP stream, a crashed server, a restarted stdio process — with no word on
it. A dropped stream is not the end of what the client wants, so the client listens again (with a
new request id and a deadline on the acknowledgement) and then closes the gap: anything may have
changed while nobody listened, so it tells the Host, for everything the new acknowledgement covers,
what the server would have said (``list_changed``, ``resources/updated``), and the Host reads again
(rule ``subscriptions.sim-no-silent-miss``). Each gap is kept in :attr:`Subscription.gaps`. If the
stream cannot be re-established, :attr:`Subscription.lost` says why and :attr:`Subscription.closed`
is set: the signal. Every loss, restoration and failure is also a :class:`SubscriptionEvent` in the
client's ``subscription_log`` (see :mod:`.restart`), legacy ``resources/subscribe`` included.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio

from mcp_sim.wire.jsonrpc import RequestId

CancelRequest = Callable[[RequestId, str], Awaitable[None]]
"""How a subscription ends its listen request: the client's ``notifications/cancelled`` sender."""


@dataclass
class Subscription:
    """A modern ``subscriptions/listen`` stream (or a legacy ``resources/subscribe``).

    ``accepted`` is the filter the server *acknowledged*, which may be smaller than what was asked:
    the spec tells clients to check it rather than assume the subscription succeeded. ``id`` is the
    id of the listen request now carrying it: a new one each time it is re-established."""

    id: RequestId
    requested: dict[str, Any]
    accepted: dict[str, Any] = field(default_factory=dict)
    received: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    closed: bool = False
    acknowledged: anyio.Event = field(default_factory=anyio.Event)
    ended_by_client: bool = False
    """True once the client itself closed it (a crash of the server does not end what the client wants)."""
    declared: dict[str, Any] | None = None
    """The client capabilities the listen request declared (e.g. the tasks extension, for ``taskIds``);
    a re-listen declares them again."""
    lost: str | None = None
    """Why the stream was dropped and could not be re-established (then :attr:`closed` is set too)."""
    gaps: list[tuple[float, float]] = field(default_factory=list)
    """``(dropped at, listening again at)``, virtual seconds, for each time the stream was re-established;
    each was followed by telling the Host to read again what the filter covers."""
    _cancel: CancelRequest | None = field(default=None, repr=False)

    async def close(self) -> None:
        """End the subscription: ``notifications/cancelled`` for the listen request (stdio; on HTTP
        the transport turns that into closing the stream)."""
        self.ended_by_client = True
        if self.closed or self._cancel is None:
            return
        self.closed = True
        await self._cancel(self.id, "subscription closed by the client")


@dataclass(frozen=True)
class SubscriptionEvent:
    """One thing that happened to a subscription behind the caller's back, for the Host (and for a
    test or soak that checks no change went unnoticed): ``what`` is ``"listen <id>"`` or a legacy
    resource URI."""

    at: float
    kind: Literal["lost", "restored", "failed"]
    what: str
    why: str
