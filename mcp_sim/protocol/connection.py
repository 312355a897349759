"""Messages about the conversation itself, not about a feature (course chapter 03).

* **Legacy handshake** (up to 2025-11-25): the client sends ``initialize`` with its version,
  capabilities and name; the server answers with its own; the client confirms with
  ``notifications/initialized``. Only then may other requests flow.
* **Discovery** (2026-07-28): there is no handshake. ``server/discover`` asks a server which versions
  and capabilities it has; every other request carries the client's side in ``params._meta``.
* **ping** (up to 2025-11-25): are you still there?
* **Cancellation** and **progress**: ``notifications/cancelled`` stops a request in flight;
  ``notifications/progress`` reports on one that asked for it with ``_meta.progressToken``.
"""

from __future__ import annotations

from typing import Literal

from mcp_sim.protocol.content import Number
from mcp_sim.protocol.messages import (
    CacheableResult,
    ClientCapabilities,
    Implementation,
    Notification,
    NotificationParams,
    ProgressToken,
    Request,
    RequestId,
    RequestParams,
    Result,
    ResultResponse,
    ServerCapabilities,
)

# --- legacy handshake --------------------------------------------------------------------------------


class InitializeRequestParams(RequestParams):
    """The client's newest supported version, its capabilities and its name."""

    protocolVersion: str
    capabilities: ClientCapabilities
    clientInfo: Implementation


class InitializeRequest(Request):
    """``initialize``: the first request of a legacy connection (removed in 2026-07-28)."""

    method: Literal["initialize"] = "initialize"
    params: InitializeRequestParams


class InitializeResult(Result):
    """The version the server chose, its capabilities, its name and optional ``instructions`` for the model."""

    protocolVersion: str
    capabilities: ServerCapabilities
    serverInfo: Implementation
    instructions: str | None = None


class InitializedNotification(Notification):
    """``notifications/initialized``: the client has read the result; normal traffic may start."""

    method: Literal["notifications/initialized"] = "notifications/initialized"


class PingRequest(Request):
    """``ping``: either side checks the other is alive; the answer is an empty result (removed 2026-07-28)."""

    method: Literal["ping"] = "ping"


# --- modern discovery --------------------------------------------------------------------------------


class DiscoverRequest(Request):
    """``server/discover`` (2026-07-28): what versions and capabilities does this server have?"""

    method: Literal["server/discover"] = "server/discover"
    params: RequestParams


class DiscoverResult(CacheableResult):
    """The server's supported versions, capabilities and optional instructions (2026-07-28; cacheable)."""

    supportedVersions: list[str]
    capabilities: ServerCapabilities
    instructions: str | None = None


class DiscoverResultResponse(ResultResponse):
    """The response to ``server/discover`` (2026-07-28)."""

    result: DiscoverResult


# --- cancellation and progress -----------------------------------------------------------------------


class CancelledNotificationParams(NotificationParams):
    """Which request to stop and why. ``requestId`` is optional only in 2025-11-25 (tasks use ``tasks/cancel``)."""

    requestId: RequestId | None = None
    reason: str | None = None


class CancelledNotification(Notification):
    """``notifications/cancelled``: the sender no longer wants the answer to one of its requests.

    In 2026-07-28 a client sends it only on stdio (on HTTP it closes the stream), and a server only
    to end a ``subscriptions/listen`` stream.
    """

    method: Literal["notifications/cancelled"] = "notifications/cancelled"
    params: CancelledNotificationParams


class ProgressNotificationParams(NotificationParams):
    """How far along: ``progress`` must grow; ``total`` and ``message`` (2025-03-26+) are optional."""

    progressToken: ProgressToken
    progress: Number
    total: Number | None = None
    message: str | None = None


class ProgressNotification(Notification):
    """``notifications/progress``: news about a request that carried ``_meta.progressToken``."""

    method: Literal["notifications/progress"] = "notifications/progress"
    params: ProgressNotificationParams


__all__ = [
    "CancelledNotification",
    "CancelledNotificationParams",
    "DiscoverRequest",
    "DiscoverResult",
    "DiscoverResultResponse",
    "InitializeRequest",
    "InitializeRequestParams",
    "InitializeResult",
    "InitializedNotification",
    "PingRequest",
    "ProgressNotification",
    "ProgressNotificationParams",
]
