"""Server features: the requests a client sends to use what a server offers (course chapters 05 and 07).

* **Tools**: ``tools/list``, ``tools/call`` and ``notifications/tools/list_changed``.
* **Resources**: ``resources/list``, ``resources/templates/list``, ``resources/read``,
  ``resources/subscribe``/``unsubscribe`` (up to 2025-11-25), ``notifications/resources/*``.
* **Prompts**: ``prompts/list``, ``prompts/get``, ``notifications/prompts/list_changed``.
* **Completion**: ``completion/complete`` suggests values for a prompt or template argument.
* **Logging**: ``logging/setLevel`` (up to 2025-11-25; in 2026-07-28 the level travels in ``_meta``)
  and ``notifications/message``.
* **Subscriptions** (2026-07-28): ``subscriptions/listen`` opens one stream for all the change
  notifications the client wants, acknowledged by ``notifications/subscriptions/acknowledged``.

2026-07-28 additions that show up here: list results and ``resources/read`` are cacheable (``ttlMs``,
``cacheScope``); ``tools/call``, ``prompts/get`` and ``resources/read`` may answer with an
``InputRequiredResult`` and accept ``inputResponses``/``requestState`` on the retry.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeAlias

from pydantic import Discriminator, Field, Tag

from mcp_sim.protocol.base import MCPModel
from mcp_sim.protocol.content import (
    BlobResourceContents,
    ContentBlock,
    Resource,
    TextResourceContents,
)
from mcp_sim.protocol.messages import (
    CacheableResult,
    LoggingLevel,
    Notification,
    NotificationParams,
    PaginatedRequest,
    PaginatedResult,
    Request,
    RequestId,
    RequestParams,
    Result,
    ResultMetaObject,
    ResultResponse,
)
from mcp_sim.protocol.mrtr import InputRequiredResult, InputResponseRequestParams
from mcp_sim.protocol.primitives import (
    Prompt,
    PromptMessage,
    PromptReference,
    ResourceTemplate,
    ResourceTemplateReference,
    Tool,
)
from mcp_sim.protocol.tasks import TaskMetadata

# --- tools -------------------------------------------------------------------------------------------


class ListToolsRequest(PaginatedRequest):
    """``tools/list``: which tools does the server offer?"""

    method: Literal["tools/list"] = "tools/list"


class ListToolsResult(PaginatedResult, CacheableResult):
    """One page of tools; cacheable in 2026-07-28."""

    tools: list[Tool]


class CallToolRequestParams(InputResponseRequestParams):
    """Which tool, with which ``arguments``. ``task`` only in 2025-11-25; MRTR fields in 2026-07-28."""

    name: str
    arguments: dict[str, Any] | None = None
    task: TaskMetadata | None = None


class CallToolRequest(Request):
    """``tools/call``: run a tool."""

    method: Literal["tools/call"] = "tools/call"
    params: CallToolRequestParams


class CallToolResult(Result):
    """What the tool returned. A failure of the tool itself is ``isError: true``, not a protocol error.

    ``structuredContent`` (2025-06-18+) matches the tool's ``outputSchema``: an object up to
    2025-11-25, any JSON value in 2026-07-28.
    """

    content: list[ContentBlock]
    structuredContent: Any = None
    isError: bool | None = None


class ToolListChangedNotification(Notification):
    """The server's tool list changed; list again (or drop the cached list)."""

    method: Literal["notifications/tools/list_changed"] = "notifications/tools/list_changed"


# --- resources ---------------------------------------------------------------------------------------


class ListResourcesRequest(PaginatedRequest):
    """``resources/list``: which resources can be read?"""

    method: Literal["resources/list"] = "resources/list"


class ListResourcesResult(PaginatedResult, CacheableResult):
    """One page of resources; cacheable in 2026-07-28."""

    resources: list[Resource]


class ListResourceTemplatesRequest(PaginatedRequest):
    """``resources/templates/list``: which URI templates does the server understand?"""

    method: Literal["resources/templates/list"] = "resources/templates/list"


class ListResourceTemplatesResult(PaginatedResult, CacheableResult):
    """One page of resource templates; cacheable in 2026-07-28."""

    resourceTemplates: list[ResourceTemplate]


class ResourceRequestParams(RequestParams):
    """Params naming one resource by ``uri``."""

    uri: str


class ReadResourceRequestParams(ResourceRequestParams, InputResponseRequestParams):
    """Params of ``resources/read``; MRTR fields in 2026-07-28."""


class ReadResourceRequest(Request):
    """``resources/read``: get a resource's contents."""

    method: Literal["resources/read"] = "resources/read"
    params: ReadResourceRequestParams


class ReadResourceResult(CacheableResult):
    """The resource's contents (one resource may have several parts); cacheable in 2026-07-28."""

    contents: list[TextResourceContents | BlobResourceContents]


class SubscribeRequestParams(ResourceRequestParams):
    """Params of ``resources/subscribe``."""


class SubscribeRequest(Request):
    """``resources/subscribe``: tell me when this resource changes (up to 2025-11-25)."""

    method: Literal["resources/subscribe"] = "resources/subscribe"
    params: SubscribeRequestParams


class UnsubscribeRequestParams(ResourceRequestParams):
    """Params of ``resources/unsubscribe``."""


class UnsubscribeRequest(Request):
    """``resources/unsubscribe``: stop telling me (up to 2025-11-25)."""

    method: Literal["resources/unsubscribe"] = "resources/unsubscribe"
    params: UnsubscribeRequestParams


class ResourceListChangedNotification(Notification):
    """The list of resources changed."""

    method: Literal["notifications/resources/list_changed"] = "notifications/resources/list_changed"


class ResourceUpdatedNotificationParams(NotificationParams):
    """Which subscribed resource changed."""

    uri: str


class ResourceUpdatedNotification(Notification):
    """A subscribed resource changed; read it again if you care."""

    method: Literal["notifications/resources/updated"] = "notifications/resources/updated"
    params: ResourceUpdatedNotificationParams


# --- prompts -----------------------------------------------------------------------------------------


class ListPromptsRequest(PaginatedRequest):
    """``prompts/list``: which prompt templates are there?"""

    method: Literal["prompts/list"] = "prompts/list"


class ListPromptsResult(PaginatedResult, CacheableResult):
    """One page of prompts; cacheable in 2026-07-28."""

    prompts: list[Prompt]


class GetPromptRequestParams(InputResponseRequestParams):
    """Which prompt, with which (string) ``arguments``; MRTR fields in 2026-07-28."""

    name: str
    arguments: dict[str, str] | None = None


class GetPromptRequest(Request):
    """``prompts/get``: fill in a prompt template."""

    method: Literal["prompts/get"] = "prompts/get"
    params: GetPromptRequestParams


class GetPromptResult(Result):
    """The filled-in prompt: messages ready to hand to the model."""

    description: str | None = None
    messages: list[PromptMessage]


class PromptListChangedNotification(Notification):
    """The list of prompts changed."""

    method: Literal["notifications/prompts/list_changed"] = "notifications/prompts/list_changed"


# --- completion --------------------------------------------------------------------------------------


class CompleteArgument(MCPModel):
    """The argument being typed and its partial ``value`` (unnamed in the schema)."""

    name: str
    value: str


class CompleteContext(MCPModel):
    """Arguments already filled in, to narrow the suggestions (2025-06-18+; unnamed in the schema)."""

    arguments: dict[str, str] | None = None


class CompleteRequestParams(RequestParams):
    """What to complete: the prompt or template (``ref``), the argument, and the context."""

    ref: Annotated[PromptReference | ResourceTemplateReference, Field(discriminator="type")]
    argument: CompleteArgument
    context: CompleteContext | None = None


class CompleteRequest(Request):
    """``completion/complete``: suggest values for an argument, like an IDE's autocompletion."""

    method: Literal["completion/complete"] = "completion/complete"
    params: CompleteRequestParams


class Completion(MCPModel):
    """Up to 100 suggested ``values``; ``total``/``hasMore`` say whether there are more (unnamed)."""

    values: list[str] = Field(max_length=100)
    total: int | None = None
    hasMore: bool | None = None


class CompleteResult(Result):
    """The suggestions."""

    completion: Completion


# --- logging -----------------------------------------------------------------------------------------


class SetLevelRequestParams(RequestParams):
    """The least severe level the client wants to receive."""

    level: LoggingLevel


class SetLevelRequest(Request):
    """``logging/setLevel`` (up to 2025-11-25; 2026-07-28 sends ``_meta`` ``logLevel`` per request)."""

    method: Literal["logging/setLevel"] = "logging/setLevel"
    params: SetLevelRequestParams


class LoggingMessageNotificationParams(NotificationParams):
    """One log entry: its ``level``, an optional ``logger`` name and any JSON ``data``."""

    level: LoggingLevel
    logger: str | None = None
    data: Any


class LoggingMessageNotification(Notification):
    """``notifications/message``: a log entry from the server (deprecated 2026-07-28)."""

    method: Literal["notifications/message"] = "notifications/message"
    params: LoggingMessageNotificationParams


# --- subscriptions (2026-07-28) ---------------------------------------------------------------------


class SubscriptionFilter(MCPModel):
    """Which change notifications a ``subscriptions/listen`` stream should carry.

    ``resourceSubscriptions`` replaces ``resources/subscribe``. The tasks extension adds ``taskIds``.
    """

    toolsListChanged: bool | None = None
    promptsListChanged: bool | None = None
    resourcesListChanged: bool | None = None
    resourceSubscriptions: list[str] | None = None


class SubscriptionsListenRequestParams(RequestParams):
    """What the client wants to hear about."""

    notifications: SubscriptionFilter


class SubscriptionsListenRequest(Request):
    """``subscriptions/listen``: open a long-lived stream of change notifications (2026-07-28)."""

    method: Literal["subscriptions/listen"] = "subscriptions/listen"
    params: SubscriptionsListenRequestParams


class SubscriptionsAcknowledgedNotificationParams(NotificationParams):
    """The subset of the filter the server agreed to honour."""

    notifications: SubscriptionFilter


class SubscriptionsAcknowledgedNotification(Notification):
    """First message of a listen stream: what the server will actually send (2026-07-28)."""

    method: Literal["notifications/subscriptions/acknowledged"] = "notifications/subscriptions/acknowledged"
    params: SubscriptionsAcknowledgedNotificationParams


class SubscriptionsListenResultMetaObject(ResultMetaObject):
    """``_meta`` of the listen result: which subscription ended (its request id)."""

    subscriptionId: RequestId = Field(alias="io.modelcontextprotocol/subscriptionId")


class SubscriptionsListenResult(Result):
    """The server closed a listen stream gracefully (2026-07-28)."""

    meta: SubscriptionsListenResultMetaObject = Field(alias="_meta")


# --- typed responses (2026-07-28) -------------------------------------------------------------------


def _final_or_input_required(value: Any) -> str:
    kind = value.get("resultType") if isinstance(value, dict) else getattr(value, "resultType", None)
    return "input_required" if kind == "input_required" else "final"


CallToolOutcome: TypeAlias = Annotated[
    Annotated[InputRequiredResult, Tag("input_required")] | Annotated[CallToolResult, Tag("final")],
    Discriminator(_final_or_input_required),
]
"""What ``tools/call`` may answer in 2026-07-28: the result, or a request for input first."""

GetPromptOutcome: TypeAlias = Annotated[
    Annotated[InputRequiredResult, Tag("input_required")] | Annotated[GetPromptResult, Tag("final")],
    Discriminator(_final_or_input_required),
]
"""What ``prompts/get`` may answer in 2026-07-28."""

ReadResourceOutcome: TypeAlias = Annotated[
    Annotated[InputRequiredResult, Tag("input_required")] | Annotated[ReadResourceResult, Tag("final")],
    Discriminator(_final_or_input_required),
]
"""What ``resources/read`` may answer in 2026-07-28."""


class CallToolResultResponse(ResultResponse):
    """The response to ``tools/call`` (2026-07-28)."""

    result: CallToolOutcome


class GetPromptResultResponse(ResultResponse):
    """The response to ``prompts/get`` (2026-07-28)."""

    result: GetPromptOutcome


class ReadResourceResultResponse(ResultResponse):
    """The response to ``resources/read`` (2026-07-28)."""

    result: ReadResourceOutcome


class ListToolsResultResponse(ResultResponse):
    """The response to ``tools/list`` (2026-07-28)."""

    result: ListToolsResult


class ListPromptsResultResponse(ResultResponse):
    """The response to ``prompts/list`` (2026-07-28)."""

    result: ListPromptsResult


class ListResourcesResultResponse(ResultResponse):
    """The response to ``resources/list`` (2026-07-28)."""

    result: ListResourcesResult


class ListResourceTemplatesResultResponse(ResultResponse):
    """The response to ``resources/templates/list`` (2026-07-28)."""

    result: ListResourceTemplatesResult


class CompleteResultResponse(ResultResponse):
    """The response to ``completion/complete`` (2026-07-28)."""

    result: CompleteResult


class SubscriptionsListenResultResponse(ResultResponse):
    """The final response to ``subscriptions/listen`` (2026-07-28)."""

    result: SubscriptionsListenResult
