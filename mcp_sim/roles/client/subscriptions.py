"""Subscriptions a client holds open (course notebook on change notifications; spec 2026-07-28
``subscriptions/listen``, legacy ``resources/subscribe``).

In 2026-07-28 a client subscribes by sending one long-lived ``subscriptions/listen`` request: the
server answers first with ``notifications/subscriptions/acknowledged`` (saying which part of the
filter it honours) and then sends change notifications tagged with the subscription's id, until one
side ends the request. A :class:`Subscription` is the client's record of one such stream.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

from mcp_sim.wire.jsonrpc import RequestId

CancelRequest = Callable[[RequestId, str], Awaitable[None]]
"""How a subscription ends its listen request: the client's ``notifications/cancelled`` sender."""


@dataclass
class Subscription:
    """A modern ``subscriptions/listen`` stream (or a legacy ``resources/subscribe``).

    ``accepted`` is the filter the server *acknowledged*, which may be smaller than what was asked:
    the spec tells clients to check it rather than assume the subscription succeeded."""

    id: RequestId
    requested: dict[str, Any]
    accepted: dict[str, Any] = field(default_factory=dict)
    received: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    closed: bool = False
    acknowledged: anyio.Event = field(default_factory=anyio.Event)
    ended_by_client: bool = False
    """True once the client itself closed it (a crash of the server does not end what the client wants)."""
    _cancel: CancelRequest | None = field(default=None, repr=False)

    async def close(self) -> None:
        """End the subscription: ``notifications/cancelled`` for the listen request (stdio; on HTTP
        the transport turns that into closing the stream)."""
        self.ended_by_client = True
        if self.closed or self._cancel is None:
            return
        self.closed = True
        await self._cancel(self.id, "subscription closed by the client")
