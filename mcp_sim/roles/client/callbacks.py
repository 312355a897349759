"""What the client needs from its Host (course chapters 01 roles and 04 client features).

A client does protocol work; every *decision* — what the user answers, what the model writes, which
folders are in scope — belongs to the Host. The Host hands its client one handler per kind of input
in :class:`ClientCallbacks`, and the client declares a client capability only for a kind it has a
handler for: a declared capability is a promise the client must be able to keep (spec
``basic/lifecycle``, capability negotiation).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from mcp_sim.protocol.revisions import LATEST, REVISIONS

ElicitationHandler = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]
"""``(server, ElicitRequest params) -> ElicitResult``: ask the user."""
SamplingHandler = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]
"""``(server, CreateMessageRequest params) -> CreateMessageResult``: ask the Host's model."""
RootsHandler = Callable[[str], Awaitable[list[dict[str, Any]]]]
"""``(server) -> [Root, …]``: which folders/URIs are in scope."""
NotificationHandler = Callable[[str, str, dict[str, Any]], None]
"""``(server, method, params)``: a log message or a change notification, for the Host to show."""


@dataclass
class ClientCallbacks:
    """The Host side of a client. A client declares a client capability only if the Host gave it a
    handler for it: the capability object is a promise the client must be able to keep."""

    elicitation: ElicitationHandler | None = None
    elicitation_url: bool = True
    """Also offer URL-mode elicitation (2025-11-25+) when ``elicitation`` is set."""
    sampling: SamplingHandler | None = None
    roots: RootsHandler | None = None
    on_notification: NotificationHandler | None = None


def capabilities_for(callbacks: ClientCallbacks, version: str) -> dict[str, Any]:
    """The ``ClientCapabilities`` object a client with these callbacks declares in ``version``.

    Only fields the revision defines are included (e.g. ``elicitation`` exists from 2025-06-18,
    ``roots.listChanged`` disappears in 2026-07-28)."""
    rev = REVISIONS.get(version)
    known = set(rev.client_capabilities) if rev is not None else set(REVISIONS[LATEST].client_capabilities)
    caps: dict[str, Any] = {}
    if callbacks.roots is not None and "roots" in known:
        caps["roots"] = {"listChanged": True} if "roots.listChanged" in known else {}
    if callbacks.sampling is not None and "sampling" in known:
        caps["sampling"] = {}
    if callbacks.elicitation is not None and "elicitation" in known:
        if "elicitation.form" in known:
            modes: dict[str, Any] = {"form": {}}
            if callbacks.elicitation_url and "elicitation.url" in known:
                modes["url"] = {}
            caps["elicitation"] = modes
        else:
            caps["elicitation"] = {}
    return caps
