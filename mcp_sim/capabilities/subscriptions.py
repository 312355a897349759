"""Change notifications and who asked for them (spec "Resources / Subscriptions", "list_changed", and
2026-07-28 "Subscriptions"; course chapter 07).

When a server's tools, prompts or resources change it may tell clients — but only clients that asked,
and only for kinds it declared in its capabilities:

* **legacy**: ``notifications/tools|prompts|resources/list_changed`` go to every initialised connection
  when the server declared ``listChanged``; ``notifications/resources/updated`` only for URIs the
  connection subscribed to with ``resources/subscribe``.
* **modern**: nothing is sent unless the client opened a ``subscriptions/listen`` stream naming what it
  wants. The server first acknowledges with ``notifications/subscriptions/acknowledged`` listing the
  subset it will honour, then tags every notification with that listen request's id.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from mcp_sim.protocol.lifecycle import has_capability
from mcp_sim.wire.jsonrpc import RequestId

ChangeKind = Literal["tools", "prompts", "resources", "resource", "task"]


@dataclass(frozen=True)
class Change:
    """Something about the server changed: a list, one resource's contents, or a task's status."""

    kind: ChangeKind
    uri: str | None = None
    task_id: str | None = None


LIST_CHANGED_METHOD: Final[Mapping[str, str]] = {
    "tools": "notifications/tools/list_changed",
    "prompts": "notifications/prompts/list_changed",
    "resources": "notifications/resources/list_changed",
}
LIST_CHANGED_FLAG: Final[Mapping[str, str]] = {
    "tools": "toolsListChanged",
    "prompts": "promptsListChanged",
    "resources": "resourcesListChanged",
}
RESOURCE_UPDATED_METHOD: Final = "notifications/resources/updated"


def agreed_filter(requested: Mapping[str, Any], server_capabilities: Mapping[str, Any],
                  task_is_known: Callable[[str], bool] | None = None) -> dict[str, Any]:
    """The part of a ``SubscriptionFilter`` the server will honour, given what it declared."""
    agreed: dict[str, Any] = {}
    for kind, flag in LIST_CHANGED_FLAG.items():
        if requested.get(flag) is True and has_capability(server_capabilities, f"{kind}.listChanged"):
            agreed[flag] = True
    uris = requested.get("resourceSubscriptions")
    if isinstance(uris, list) and has_capability(server_capabilities, "resources.subscribe"):
        agreed["resourceSubscriptions"] = [u for u in uris if isinstance(u, str)]
    task_ids = requested.get("taskIds")
    if isinstance(task_ids, list) and task_is_known is not None:
        agreed["taskIds"] = [t for t in task_ids if isinstance(t, str) and task_is_known(t)]
    return agreed


def filter_wants(agreed: Mapping[str, Any], change: Change) -> bool:
    """True when a listen stream with the ``agreed`` filter should hear about ``change``."""
    if change.kind in LIST_CHANGED_FLAG:
        return agreed.get(LIST_CHANGED_FLAG[change.kind]) is True
    if change.kind == "resource":
        return change.uri in (agreed.get("resourceSubscriptions") or [])
    return change.task_id in (agreed.get("taskIds") or [])


@dataclass
class Listen:
    """One open ``subscriptions/listen`` stream: its id, what it agreed to, and a queue of changes.

    ``None`` in the queue means "the server is closing this subscription gracefully"."""

    id: RequestId
    agreed: dict[str, Any]
    inbox: MemoryObjectSendStream[Change | None] = field(init=False)
    outbox: MemoryObjectReceiveStream[Change | None] = field(init=False)

    def __post_init__(self) -> None:
        self.inbox, self.outbox = anyio.create_memory_object_stream[Change | None](float("inf"))

    def offer(self, change: Change) -> None:
        if filter_wants(self.agreed, change):
            self.inbox.send_nowait(change)

    def close(self) -> None:
        try:
            self.inbox.send_nowait(None)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass


def gap_notifications(agreed: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """What a subscriber with the ``agreed`` filter may have missed while it was not listening, as
    the notifications the server would have sent: one ``list_changed`` per list it follows, one
    ``resources/updated`` per resource (``taskIds`` are left out: a task's caller polls it anyway).
    Told to the Host after a re-subscription, they make it read again (``subscriptions.sim-no-silent-miss``)."""
    out: list[tuple[str, dict[str, Any]]] = [
        (LIST_CHANGED_METHOD[kind], {}) for kind, flag in LIST_CHANGED_FLAG.items() if agreed.get(flag) is True]
    uris = agreed.get("resourceSubscriptions")
    out.extend((RESOURCE_UPDATED_METHOD, {"uri": uri}) for uri in (uris if isinstance(uris, list) else ())
               if isinstance(uri, str))
    return out
