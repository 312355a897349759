"""The MCP Client: one connection to exactly one server (course chapters 01 roles, 03 lifecycle, 04 MRTR).

The Host creates one :class:`Client` per Server. The client does what the course calls *protocol
work* and nothing else: it opens the connection (the legacy ``initialize`` handshake, or the modern
per-request ``_meta`` plus an optional ``server/discover``), matches responses to requests by ``id``
while many are in flight, refuses to call what the server did not advertise, times requests out on
the virtual clock and cancels them, caches lists, and carries the server's requests for input to its
Host. Every *decision* — may the model see this tool, may this call run, what does the user answer —
belongs to the Host, which the client reaches through :class:`ClientCallbacks`.

The two eras, side by side:

* **legacy** (≤ 2025-11-25): ``initialize`` → result → ``notifications/initialized``; capabilities are
  negotiated once; while a ``tools/call`` is pending the server may *send requests* to the client
  (``sampling/createMessage``, ``elicitation/create``, ``roots/list``).
* **modern** (2026-07-28): no handshake. Every request carries the version and the client's
  capabilities in ``params._meta``; a server that needs input answers ``InputRequiredResult`` and
  the client retries the request with a new ``id`` plus ``inputResponses`` and the echoed
  ``requestState`` (Multi Round-Trip Requests, MRTR).

Read it from the bottom up, one idea per module:

* :mod:`.connection` — ids, requests in flight, timeouts (``notifications/cancelled``), late responses;
* :mod:`.opening` — the legacy handshake, the modern ``_meta``, ``server/discover``, ``-32022``, ``era="auto"``;
* :mod:`.client_input` — the request loop (MRTR) and the answers to legacy server requests;
* :mod:`.restart` — a crashed stdio server restarted, subscriptions asked for again, a call whose outcome
  the crash made unknown reported as :class:`OutcomeUnknown` (retried only for tools the host trusts);
* :mod:`.tasks` — ``call_tool``, and tool calls that run as tasks: ``params.task`` and ``tasks/get`` /
  ``tasks/result`` (2025-11-25), the tasks extension with ``tasks/get`` / ``tasks/update`` (2026-07-28),
  polled as the task asks and cancelled when the wait runs out;
* :mod:`.verbs` — :class:`Client` itself: ``list_tools``, ``read_resource`` … and the list cache;
* :mod:`.elicitation` — an elicitation answer must fit the requested schema, or it goes out as ``decline``;
* :mod:`.callbacks`, :mod:`.errors`, :mod:`.subscriptions` — what the Host gives, what a caller may catch,
  what a subscription is.

:mod:`.client_accelerated` is the accelerated twin of the hot paths, chosen by :mod:`mcp_sim.accelerated`.
"""

from __future__ import annotations

from mcp_sim.protocol.lifecycle import LegacyState
from mcp_sim.roles.client.callbacks import (
    ClientCallbacks,
    ElicitationHandler,
    NotificationHandler,
    RootsHandler,
    SamplingHandler,
    capabilities_for,
)
from mcp_sim.roles.client.client_input import MAX_INPUT_ROUNDS
from mcp_sim.roles.client.connection import DEFAULT_TIMEOUT, ProgressCallback
from mcp_sim.roles.client.errors import (
    ClientAlreadyConnected,
    ConnectionLost,
    OutcomeUnknown,
    RequestTimeout,
    method_not_declared,
)
from mcp_sim.roles.client.opening import CLIENT_VERSIONS, PROBE_TIMEOUT, ClientEra
from mcp_sim.roles.client.restart import MAX_RESTARTS_PER_REQUEST
from mcp_sim.roles.client.subscriptions import Subscription
from mcp_sim.roles.client.tasks import TASK_TIMEOUT, TaskLost, TaskTimeout
from mcp_sim.roles.client.verbs import AcceleratedClient, Client
from mcp_sim.transports.base import RequestRefused

__all__ = [
    "CLIENT_VERSIONS",
    "DEFAULT_TIMEOUT",
    "MAX_INPUT_ROUNDS",
    "MAX_RESTARTS_PER_REQUEST",
    "PROBE_TIMEOUT",
    "TASK_TIMEOUT",
    "AcceleratedClient",
    "Client",
    "ClientAlreadyConnected",
    "ClientCallbacks",
    "ClientEra",
    "ConnectionLost",
    "ElicitationHandler",
    "LegacyState",
    "NotificationHandler",
    "OutcomeUnknown",
    "ProgressCallback",
    "RequestRefused",
    "RequestTimeout",
    "RootsHandler",
    "SamplingHandler",
    "Subscription",
    "TaskLost",
    "TaskTimeout",
    "capabilities_for",
    "method_not_declared",
]
