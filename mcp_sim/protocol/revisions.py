"""The released MCP revisions, as data (course chapter 03).

One :class:`Revision` per released revision says which requests exist and who sends them, which
notifications exist, which capability fields each side can declare, which error codes are defined,
and which *era* the revision belongs to:

* **legacy** (2024-11-05 … 2025-11-25): stateful. A connection opens with the ``initialize``
  handshake, capabilities are negotiated once, and the server may send requests to the client
  (sampling, elicitation, roots) over the same connection.
* **modern** (2026-07-28): stateless. Every request carries its protocol version and the client's
  capabilities in ``params._meta``; ``server/discover`` replaces the handshake; a server that needs
  the client's input returns an ``InputRequiredResult`` instead of sending a request.

Each revision is written as the changes from the one before it, just as the spec's changelogs read.
This registry is the single place these facts live: the server and client consult it, the notebooks'
comparison tables and the diagrams are drawn from it, and the tests check it against the official
schemas. Every "does this revision have X" question is a field of :class:`Revision`
(``has_elicitation_modes``, ``has_tasks``, ``has_sse_priming`` …), so no other module compares
version dates; :func:`revision_at` answers for a date that is not a released revision. It also
places every method in one of the course's three layers (:data:`LAYERS`, which says where the
lifecycle sits and why), and says which fields of which types each revision knows
(:data:`FIELD_SPANS`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Final, Literal

from mcp_sim.protocol.comparison import ComparisonTable
from mcp_sim.protocol.errors import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    RESOURCE_NOT_FOUND,
    UNSUPPORTED_PROTOCOL_VERSION,
    URL_ELICITATION_REQUIRED,
)
from mcp_sim.wire.jsonrpc import STANDARD_ERROR_MESSAGES

Era = Literal["legacy", "modern"]
Direction = Literal["client→server", "server→client", "both"]
Layer = Literal["roles", "capabilities", "transports"]

LAYERS: Final[tuple[Layer, ...]] = ("roles", "capabilities", "transports")
"""The course's three layers, in the order it teaches them. Each method sits in one:

* **roles** — who talks: the Host with its user and model (not MCP messages: the app's own talk);
* **capabilities** — what is offered: tools, resources, prompts, completions, the client features
  (sampling, elicitation, roots), logging, subscriptions, tasks — *and the lifecycle*
  (``initialize``/``notifications/initialized``, ``server/discover``). The lifecycle sits here because
  what it exchanges is capabilities: both sides declare what they offer and agree on a revision, and
  every later capability check reads what was declared there (feature ``lifecycle``);
* **transports** — how messages travel: framing, the pipes, and the base protocol's utilities that
  are about the flow of messages rather than any offering (``ping``, ``notifications/cancelled``,
  ``notifications/progress``).

The official spec has two layers: its *data layer* (JSON-RPC messages, lifecycle, primitives) is the
course's capabilities layer plus the JSON-RPC format; its *transport layer* (stdio, Streamable HTTP,
framing, authorization) is the course's transports layer. Roles are the course's own lens on who
sends what (see :mod:`mcp_sim`).
"""


@dataclass(frozen=True)
class MethodInfo:
    """What a revision says about one request method.

    ``capability`` names the capability that must be declared before the method may be used: a
    server capability (``"tools"``, ``"resources.subscribe"``) for client→server requests, a client
    capability (``"sampling"``) for server→client ones, ``None`` when none is needed.
    """

    method: str
    direction: Direction
    request_type: str
    result_type: str
    capability: str | None = None
    cacheable: bool = False
    """2026-07-28: the result carries ``ttlMs``/``cacheScope``."""
    may_need_input: bool = False
    """2026-07-28: the server may answer with an ``InputRequiredResult`` (Multi Round-Trip Request)."""
    only_inside_input_requests: bool = False
    """2026-07-28: never sent as a JSON-RPC request, only embedded in ``inputRequests``."""
    layer: Layer = "capabilities"
    """Which of the course's three layers the method belongs to (see :data:`LAYERS`)."""
    feature: str | None = None
    """The part of MCP it belongs to (``tools``, ``resources``, ``lifecycle`` …); by default the first
    segment of :attr:`capability`. Trace captions and filters use it."""

    def __post_init__(self) -> None:
        if self.feature is None and self.capability is not None:
            object.__setattr__(self, "feature", self.capability.partition(".")[0])


@dataclass(frozen=True)
class NotificationInfo:
    """What a revision says about one notification method."""

    method: str
    direction: Direction
    type_name: str
    capability: str | None = None
    layer: Layer = "capabilities"
    feature: str | None = None

    def __post_init__(self) -> None:
        if self.feature is None and self.capability is not None:
            object.__setattr__(self, "feature", self.capability.partition(".")[0])


@dataclass(frozen=True)
class Revision:
    """Everything one released MCP revision defines, as data."""

    version: str
    era: Era
    requests: Mapping[str, MethodInfo]
    notifications: Mapping[str, NotificationInfo]
    client_capabilities: tuple[str, ...]
    server_capabilities: tuple[str, ...]
    error_codes: Mapping[int, str]
    batching: bool = False
    schema_dialect: str = "draft-07"
    resource_not_found_code: int = RESOURCE_NOT_FOUND
    summary: str = ""
    http_headers: tuple[str, ...] = ()
    has_progress_message: bool = False
    """``notifications/progress`` may carry a ``message`` (2025-03-26 on)."""
    has_structured_tool_output: bool = False
    """Tools may declare ``outputSchema`` and results carry ``structuredContent`` (2025-06-18 on)."""
    has_elicitation_modes: bool = False
    """Elicitation has a ``mode`` (``form``/``url``) and the client declares ``elicitation.form`` /
    ``elicitation.url`` (2025-11-25 on)."""
    has_tasks: bool = False
    """Tasks are part of the core protocol (2025-11-25 only; 2026-07-28 moves them to an extension)."""
    has_sse_priming: bool = False
    """A Streamable HTTP server opens each SSE stream with a priming event (2025-11-25 on)."""
    types_carry_envelope: bool = False
    """The schema's request and notification types include ``jsonrpc`` (and a request's ``id``);
    before 2025-11-25 they held ``method`` and ``params`` only."""
    error_id_optional: bool = False
    """An error response may leave out ``id`` (when no request can be named: 2025-11-25 on); before,
    the schema requires it."""

    @property
    def is_modern(self) -> bool:
        return self.era == "modern"

    def method(self, name: str) -> MethodInfo | None:
        """The :class:`MethodInfo` for ``name`` or ``None`` if this revision has no such request."""
        return self.requests.get(name)

    def sendable_by(self, side: Literal["client", "server"]) -> list[str]:
        """Request methods that ``side`` may send as JSON-RPC requests in this revision."""
        want = "client→server" if side == "client" else "server→client"
        return sorted(
            m.method for m in self.requests.values()
            if m.direction in (want, "both") and not m.only_inside_input_requests
        )

    def notifications_sendable_by(self, side: Literal["client", "server"]) -> list[str]:
        want = "client→server" if side == "client" else "server→client"
        return sorted(n.method for n in self.notifications.values() if n.direction in (want, "both"))


# --- building blocks -----------------------------------------------------------------------------

C2S: Final = "client→server"
S2C: Final = "server→client"
BOTH: Final = "both"


def _m(method: str, direction: Direction, request_type: str, result_type: str, capability: str | None = None,
       **kw: object) -> MethodInfo:
    return MethodInfo(method, direction, request_type, result_type, capability, **kw)  # type: ignore[arg-type]


def _index(items: Iterable[MethodInfo]) -> dict[str, MethodInfo]:
    return {m.method: m for m in items}


def _nindex(items: Iterable[NotificationInfo]) -> dict[str, NotificationInfo]:
    return {n.method: n for n in items}


def _without(d: Mapping[str, object], *names: str) -> dict:  # type: ignore[type-arg]
    missing = [n for n in names if n not in d]
    if missing:
        raise KeyError(missing)
    return {k: v for k, v in d.items() if k not in names}


_JSONRPC_ERRORS: Final = STANDARD_ERROR_MESSAGES
"""JSON-RPC 2.0's own five codes, with their standard messages (defined in :mod:`mcp_sim.wire`)."""

# --- 2024-11-05: the first release ---------------------------------------------------------------

_R2024_REQUESTS = _index([
    _m("initialize", C2S, "InitializeRequest", "InitializeResult", feature="lifecycle"),
    _m("ping", BOTH, "PingRequest", "EmptyResult", layer="transports"),
    _m("resources/list", C2S, "ListResourcesRequest", "ListResourcesResult", "resources"),
    _m("resources/templates/list", C2S, "ListResourceTemplatesRequest", "ListResourceTemplatesResult", "resources"),
    _m("resources/read", C2S, "ReadResourceRequest", "ReadResourceResult", "resources"),
    _m("resources/subscribe", C2S, "SubscribeRequest", "EmptyResult", "resources.subscribe"),
    _m("resources/unsubscribe", C2S, "UnsubscribeRequest", "EmptyResult", "resources.subscribe"),
    _m("prompts/list", C2S, "ListPromptsRequest", "ListPromptsResult", "prompts"),
    _m("prompts/get", C2S, "GetPromptRequest", "GetPromptResult", "prompts"),
    _m("tools/list", C2S, "ListToolsRequest", "ListToolsResult", "tools"),
    _m("tools/call", C2S, "CallToolRequest", "CallToolResult", "tools"),
    _m("logging/setLevel", C2S, "SetLevelRequest", "EmptyResult", "logging"),
    # No capability guards completion in 2024-11-05: the ``completions`` capability came with 2025-03-26.
    _m("completion/complete", C2S, "CompleteRequest", "CompleteResult"),
    _m("sampling/createMessage", S2C, "CreateMessageRequest", "CreateMessageResult", "sampling"),
    _m("roots/list", S2C, "ListRootsRequest", "ListRootsResult", "roots"),
])

_R2024_NOTIFICATIONS = _nindex([
    NotificationInfo("notifications/initialized", C2S, "InitializedNotification", feature="lifecycle"),
    NotificationInfo("notifications/cancelled", BOTH, "CancelledNotification", layer="transports"),
    NotificationInfo("notifications/progress", BOTH, "ProgressNotification", layer="transports"),
    NotificationInfo("notifications/roots/list_changed", C2S, "RootsListChangedNotification", "roots.listChanged"),
    NotificationInfo("notifications/resources/list_changed", S2C, "ResourceListChangedNotification",
                     "resources.listChanged"),
    NotificationInfo("notifications/resources/updated", S2C, "ResourceUpdatedNotification", "resources.subscribe"),
    NotificationInfo("notifications/prompts/list_changed", S2C, "PromptListChangedNotification",
                     "prompts.listChanged"),
    NotificationInfo("notifications/tools/list_changed", S2C, "ToolListChangedNotification", "tools.listChanged"),
    NotificationInfo("notifications/message", S2C, "LoggingMessageNotification", "logging"),
])

R2024_11_05: Final = Revision(
    version="2024-11-05",
    era="legacy",
    requests=_R2024_REQUESTS,
    notifications=_R2024_NOTIFICATIONS,
    client_capabilities=("experimental", "roots", "roots.listChanged", "sampling"),
    server_capabilities=("experimental", "logging", "prompts", "prompts.listChanged", "resources",
                         "resources.subscribe", "resources.listChanged", "tools", "tools.listChanged"),
    error_codes={**_JSONRPC_ERRORS, RESOURCE_NOT_FOUND: "Resource not found"},
    summary="First release: initialize handshake, tools/resources/prompts, sampling, roots, logging; "
            "stdio and HTTP+SSE.",
)

# --- 2025-03-26: Streamable HTTP, batching, tool annotations, audio ------------------------------

R2025_03_26: Final = replace(
    R2024_11_05,
    version="2025-03-26",
    requests={**R2024_11_05.requests,
              "completion/complete": _m("completion/complete", C2S, "CompleteRequest", "CompleteResult",
                                        "completions")},
    server_capabilities=(*R2024_11_05.server_capabilities, "completions"),
    batching=True,
    has_progress_message=True,
    summary="Streamable HTTP replaces HTTP+SSE; JSON-RPC batching; tool annotations; audio content; "
            "OAuth 2.1; completions capability.",
)

# --- 2025-06-18: elicitation, structured tool output, no more batching ---------------------------

R2025_06_18: Final = replace(
    R2025_03_26,
    version="2025-06-18",
    requests={
        **R2025_03_26.requests,
        "elicitation/create": _m("elicitation/create", S2C, "ElicitRequest", "ElicitResult", "elicitation"),
    },
    client_capabilities=(*R2025_03_26.client_capabilities, "elicitation"),
    batching=False,
    has_structured_tool_output=True,
    http_headers=("MCP-Protocol-Version", "Mcp-Session-Id"),
    summary="Elicitation; structured tool output (outputSchema/structuredContent); resource links; "
            "MCP-Protocol-Version header; batching removed.",
)

# --- 2025-11-25: JSON Schema 2020-12, icons, URL elicitation, sampling with tools, tasks ---------

_TASK_REQUESTS = [
    _m("tasks/get", BOTH, "GetTaskRequest", "GetTaskResult", "tasks"),
    _m("tasks/result", BOTH, "GetTaskPayloadRequest", "GetTaskPayloadResult", "tasks"),
    _m("tasks/list", BOTH, "ListTasksRequest", "ListTasksResult", "tasks.list"),
    _m("tasks/cancel", BOTH, "CancelTaskRequest", "CancelTaskResult", "tasks.cancel"),
]

R2025_11_25: Final = replace(
    R2025_06_18,
    version="2025-11-25",
    requests={**R2025_06_18.requests, **_index(_TASK_REQUESTS)},
    notifications={
        **R2025_06_18.notifications,
        **_nindex([
            NotificationInfo("notifications/tasks/status", BOTH, "TaskStatusNotification", "tasks"),
            NotificationInfo("notifications/elicitation/complete", S2C, "ElicitationCompleteNotification",
                             "elicitation.url"),
        ]),
    },
    client_capabilities=("experimental", "roots", "roots.listChanged", "sampling", "sampling.context",
                         "sampling.tools", "elicitation", "elicitation.form", "elicitation.url", "tasks",
                         "tasks.list", "tasks.cancel", "tasks.requests"),
    server_capabilities=(*R2025_06_18.server_capabilities, "tasks", "tasks.list", "tasks.cancel",
                         "tasks.requests"),
    error_codes={**R2025_06_18.error_codes, URL_ELICITATION_REQUIRED: "URL elicitation required"},
    schema_dialect="2020-12",
    has_elicitation_modes=True,
    has_tasks=True,
    has_sse_priming=True,
    types_carry_envelope=True,
    error_id_optional=True,
    summary="JSON Schema 2020-12; icons; URL-mode elicitation; sampling with tools; experimental tasks; "
            "403 for a bad Origin.",
)

# --- 2026-07-28: the modern, stateless era -------------------------------------------------------

_MODERN_REQUESTS = _index([
    _m("server/discover", C2S, "DiscoverRequest", "DiscoverResult", cacheable=True, feature="lifecycle"),
    _m("resources/list", C2S, "ListResourcesRequest", "ListResourcesResult", "resources", cacheable=True),
    _m("resources/templates/list", C2S, "ListResourceTemplatesRequest", "ListResourceTemplatesResult",
       "resources", cacheable=True),
    _m("resources/read", C2S, "ReadResourceRequest", "ReadResourceResult", "resources", cacheable=True,
       may_need_input=True),
    _m("subscriptions/listen", C2S, "SubscriptionsListenRequest", "SubscriptionsListenResult",
       feature="subscriptions"),
    _m("prompts/list", C2S, "ListPromptsRequest", "ListPromptsResult", "prompts", cacheable=True),
    _m("prompts/get", C2S, "GetPromptRequest", "GetPromptResult", "prompts", may_need_input=True),
    _m("tools/list", C2S, "ListToolsRequest", "ListToolsResult", "tools", cacheable=True),
    _m("tools/call", C2S, "CallToolRequest", "CallToolResult", "tools", may_need_input=True),
    _m("completion/complete", C2S, "CompleteRequest", "CompleteResult", "completions"),
    # Deprecated client features that survive only as entries of InputRequiredResult.inputRequests:
    _m("sampling/createMessage", S2C, "CreateMessageRequest", "CreateMessageResult", "sampling",
       only_inside_input_requests=True),
    _m("roots/list", S2C, "ListRootsRequest", "ListRootsResult", "roots", only_inside_input_requests=True),
    _m("elicitation/create", S2C, "ElicitRequest", "ElicitResult", "elicitation",
       only_inside_input_requests=True),
])

R2026_07_28: Final = Revision(
    version="2026-07-28",
    era="modern",
    requests=_MODERN_REQUESTS,
    notifications=_nindex([
        NotificationInfo("notifications/cancelled", BOTH, "CancelledNotification", layer="transports"),
        NotificationInfo("notifications/progress", S2C, "ProgressNotification", layer="transports"),
        NotificationInfo("notifications/resources/list_changed", S2C, "ResourceListChangedNotification",
                         "resources.listChanged"),
        NotificationInfo("notifications/resources/updated", S2C, "ResourceUpdatedNotification",
                         "resources.subscribe"),
        NotificationInfo("notifications/prompts/list_changed", S2C, "PromptListChangedNotification",
                         "prompts.listChanged"),
        NotificationInfo("notifications/tools/list_changed", S2C, "ToolListChangedNotification",
                         "tools.listChanged"),
        NotificationInfo("notifications/message", S2C, "LoggingMessageNotification", "logging"),
        NotificationInfo("notifications/subscriptions/acknowledged", S2C, "SubscriptionsAcknowledgedNotification",
                         feature="subscriptions"),
    ]),
    client_capabilities=("experimental", "extensions", "roots", "sampling", "sampling.context", "sampling.tools",
                         "elicitation", "elicitation.form", "elicitation.url"),
    server_capabilities=("experimental", "extensions", "completions", "logging", "prompts", "prompts.listChanged",
                         "resources", "resources.subscribe", "resources.listChanged", "tools",
                         "tools.listChanged"),
    error_codes={
        **_JSONRPC_ERRORS,
        HEADER_MISMATCH: "Header mismatch",
        MISSING_REQUIRED_CLIENT_CAPABILITY: "Missing required client capability",
        UNSUPPORTED_PROTOCOL_VERSION: "Unsupported protocol version",
    },
    schema_dialect="2020-12",
    resource_not_found_code=INVALID_PARAMS,
    http_headers=("MCP-Protocol-Version", "Mcp-Method", "Mcp-Name"),
    has_progress_message=True,
    has_structured_tool_output=True,
    has_elicitation_modes=True,
    has_sse_priming=True,
    types_carry_envelope=True,
    error_id_optional=True,
    summary="Stateless: per-request _meta version and capabilities, server/discover, InputRequiredResult "
            "(MRTR), subscriptions/listen, ttlMs/cacheScope; ping, logging/setLevel and sessions removed; "
            "tasks move to an extension.",
)

REVISIONS: Final[dict[str, Revision]] = {
    r.version: r for r in (R2024_11_05, R2025_03_26, R2025_06_18, R2025_11_25, R2026_07_28)
}
"""Every released revision, oldest first."""

LATEST: Final = "2026-07-28"
LATEST_LEGACY: Final = "2025-11-25"
LEGACY_VERSIONS: Final = tuple(v for v, r in REVISIONS.items() if r.era == "legacy")
MODERN_VERSIONS: Final = tuple(v for v, r in REVISIONS.items() if r.era == "modern")
SIMULATED_VERSIONS: Final = ("2025-06-18", "2025-11-25", "2026-07-28")
"""The revisions whose messages the simulator's servers and clients produce."""

ASSUMED_HTTP_VERSION: Final = "2025-03-26"
"""The version a Streamable HTTP server assumes when a request carries no ``MCP-Protocol-Version``
header (the revision that introduced Streamable HTTP)."""

TASKS_EXTENSION: Final = "io.modelcontextprotocol/tasks"
"""The 2026-07-28 tasks extension id, negotiated through ``capabilities.extensions``."""

TASKS_EXTENSION_METHODS: Final = _index([
    _m("tasks/get", C2S, "GetTaskRequest", "GetTaskResult", feature="tasks"),
    _m("tasks/update", C2S, "UpdateTaskRequest", "UpdateTaskResult", feature="tasks"),
    _m("tasks/cancel", C2S, "CancelTaskRequest", "CancelTaskResult", feature="tasks"),
])


def _places() -> dict[str, tuple[Layer, str | None]]:
    out: dict[str, tuple[Layer, str | None]] = {}
    infos: list[MethodInfo | NotificationInfo] = []
    for rev in REVISIONS.values():
        infos += [*rev.requests.values(), *rev.notifications.values()]
    infos += TASKS_EXTENSION_METHODS.values()
    for info in infos:
        out.setdefault(info.method, (info.layer, info.feature))
    return out


PLACES: Final[Mapping[str, tuple[Layer, str | None]]] = _places()
"""Every method any revision (or the tasks extension) defines → (its layer, its feature)."""


def _namespace(method: str) -> str:
    """``tools/call`` and ``notifications/tools/list_changed`` → ``tools``; ``ping`` → ``""``."""
    rest = method.removeprefix("notifications/")
    return rest.partition("/")[0] if "/" in rest else ""


def place_of(method: str) -> tuple[Layer, str | None]:
    """(layer, feature) of ``method``. A method no revision defines (a typo, a custom method) sits in
    the capabilities layer, with the feature of any known method in the same namespace
    (``tools/…`` → ``tools``)."""
    known = PLACES.get(method)
    if known is not None:
        return known
    namespace = _namespace(method)
    for name, (_, feature) in PLACES.items():
        if namespace and feature is not None and _namespace(name) == namespace:
            return "capabilities", feature
    return "capabilities", None


class UnknownRevisionError(KeyError):
    """Raised for a version string that is not a released MCP revision."""


def get_revision(version: str) -> Revision:
    """The :class:`Revision` for ``version``; a clear error if there is none."""
    try:
        return REVISIONS[version]
    except KeyError:
        raise UnknownRevisionError(
            f"{version!r} is not a released MCP revision; known: {', '.join(REVISIONS)}") from None


def era_of(version: str) -> Era:
    return get_revision(version).era


# --- versions the registry does not know -----------------------------------------------------------
# Versions are dates, so the questions about versions that are not released revisions (a peer from
# the future, a header with a date between two releases) are answered here, by comparing dates, and
# nowhere else.

def revision_at(version: str) -> Revision:
    """The released revision whose rules apply at ``version``: itself when it is released, else the
    newest revision released before that date (the oldest one for anything earlier)."""
    known = REVISIONS.get(version)
    if known is not None:
        return known
    before = [r for v, r in REVISIONS.items() if v <= version]
    return before[-1] if before else R2024_11_05


def era_of_version(version: str, *, unknown_modern_after: str = LATEST_LEGACY) -> Era:
    """The era of ``version``. An unknown version counts as modern when it is dated after
    ``unknown_modern_after`` (by default the newest legacy revision, since the stateless era began
    after it), else as legacy."""
    known = REVISIONS.get(version)
    if known is not None:
        return known.era
    return "modern" if version > unknown_modern_after else "legacy"


def versions_up_to(version: str, among: Iterable[str] = SIMULATED_VERSIONS) -> tuple[str, ...]:
    """The versions in ``among`` released no later than ``version`` and of its era, oldest first: what a
    client pinned to ``version`` may offer."""
    era = revision_at(version).era
    return tuple(v for v in among if v <= version and revision_at(v).era == era)


# --- fields that came and went ---------------------------------------------------------------------

FIELD_SPANS: Final[Mapping[str, Mapping[str, tuple[str, str | None]]]] = {
    "Tool": {"title": ("2025-06-18", None), "annotations": ("2025-03-26", None),
             "outputSchema": ("2025-06-18", None), "icons": ("2025-11-25", None),
             "execution": ("2025-11-25", "2025-11-25"), "_meta": ("2025-06-18", None)},
    "Resource": {"title": ("2025-06-18", None), "icons": ("2025-11-25", None), "_meta": ("2025-06-18", None)},
    "ResourceTemplate": {"title": ("2025-06-18", None), "icons": ("2025-11-25", None),
                         "_meta": ("2025-06-18", None)},
    "Prompt": {"title": ("2025-06-18", None), "icons": ("2025-11-25", None), "_meta": ("2025-06-18", None)},
    "PromptArgument": {"title": ("2025-06-18", None)},
    "Implementation": {"title": ("2025-06-18", None), "description": ("2025-11-25", None),
                       "icons": ("2025-11-25", None), "websiteUrl": ("2025-11-25", None)},
    "CallToolResult": {"structuredContent": ("2025-06-18", None)},
}
"""Type name → field → (the first revision that defines it, the last one or ``None``): ``title`` came in
2025-06-18, ``icons`` in 2025-11-25, the experimental ``execution`` lived in 2025-11-25 only. Fields not
listed exist in every revision."""


def has_field(type_name: str, field: str, revision: str) -> bool:
    """True when ``revision``'s ``type_name`` defines ``field``."""
    span = FIELD_SPANS.get(type_name, {}).get(field)
    if span is None:
        return True
    first, last = span
    return revision >= first and (last is None or revision <= last)


# --- the comparison table --------------------------------------------------------------------------

_DIRECTION_WORD: Final = {C2S: "C→S", S2C: "S→C", BOTH: "both"}


def comparison_table(what: Literal["requests", "notifications", "capabilities", "errors"] = "requests",
                     versions: Iterable[str] | None = None) -> ComparisonTable:
    """A table of ``what`` across revisions. Cells say ``C→S``/``S→C``/``both`` or ``–`` (absent);
    ``in inputRequests`` marks 2026-07-28 requests that only travel inside an InputRequiredResult.
    Every cell also carries a word, so meaning never depends on colour."""
    revs = [get_revision(v) for v in (versions or REVISIONS)]
    columns = tuple(r.version for r in revs)
    rows: list[tuple[str, tuple[str, ...]]] = []
    if what == "requests":
        names = sorted({m for r in revs for m in r.requests})
        for name in names:
            cells = []
            for r in revs:
                info = r.requests.get(name)
                if info is None:
                    cells.append("–")
                elif info.only_inside_input_requests:
                    cells.append("in inputRequests")
                else:
                    cells.append(_DIRECTION_WORD[info.direction])
            rows.append((name, tuple(cells)))
        title = "Requests by revision (C→S: client to server, S→C: server to client, –: absent)"
    elif what == "notifications":
        names = sorted({n for r in revs for n in r.notifications})
        for name in names:
            cells = [_DIRECTION_WORD[r.notifications[name].direction] if name in r.notifications else "–"
                     for r in revs]
            rows.append((name, tuple(cells)))
        title = "Notifications by revision"
    elif what == "capabilities":
        client = sorted({c for r in revs for c in r.client_capabilities})
        server = sorted({c for r in revs for c in r.server_capabilities})
        for c in client:
            rows.append((f"client: {c}", tuple("yes" if c in r.client_capabilities else "–" for r in revs)))
        for c in server:
            rows.append((f"server: {c}", tuple("yes" if c in r.server_capabilities else "–" for r in revs)))
        title = "Capability fields by revision"
    elif what == "errors":
        codes = sorted({c for r in revs for c in r.error_codes}, reverse=True)
        for code in codes:
            rows.append((str(code), tuple(r.error_codes.get(code, "–") for r in revs)))
        title = "Error codes by revision"
    else:
        raise ValueError(f"unknown table {what!r}")
    eras = tuple(f"{r.version}: {r.era} era — {r.summary}" for r in revs)
    return ComparisonTable(title, columns, tuple(rows), eras)
