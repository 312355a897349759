"""Typed MCP messages: one pydantic model per spec type, named as in the schema (course appendix A).

This module gathers the models of the topic modules so one import finds them all::

    from mcp_sim.protocol.types import CallToolRequest, CallToolRequestParams, parse_result

=============================  ==========================================================
module                         what it holds
=============================  ==========================================================
``content``                    content blocks, annotations, icons, resource contents
``messages``                   Request / Notification / Result, ``_meta``, capabilities, errors
``primitives``                 Tool, Resource(Template), Prompt, Root
``connection``                 initialize, ping, server/discover, cancelled, progress
``server_features``            tools, resources, prompts, completion, logging, subscriptions
``client_features``            sampling, elicitation, roots
``mrtr``                       InputRequiredResult and friends (2026-07-28)
``tasks``                      experimental tasks (2025-11-25)
``ext_tasks``                  the tasks extension (2026-07-28) — *not* re-exported here,
                               because its names repeat those of ``tasks`` with other shapes
=============================  ==========================================================

One model serves every revision: where revisions differ, the model is the superset and the fields
only some revisions have are optional (its docstring says which). Which revision a message is *valid*
in is the official schema's business (:mod:`mcp_sim.protocol.schema`).

To go from a method name to the right model, use :func:`parse_request`, :func:`parse_result` and
:func:`parse_notification`; they read the model names from the revision registry
(:mod:`mcp_sim.protocol.revisions`), so there is no second table to keep in step.
"""

from __future__ import annotations

import inspect
from types import ModuleType
from typing import Annotated, Any, TypeAlias

from pydantic import BaseModel, Field, ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError

from mcp_sim.protocol import (
    client_features,
    connection,
    content,
    ext_tasks,
    messages,
    mrtr,
    primitives,
    server_features,
    tasks,
)
from mcp_sim.protocol.client_features import (
    BooleanSchema,
    CreateMessageRequest,
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitationCompleteNotification,
    ElicitationCompleteNotificationParams,
    ElicitRequest,
    ElicitRequestedSchema,
    ElicitRequestFormParams,
    ElicitRequestParams,
    ElicitRequestURLParams,
    ElicitResult,
    EnumOption,
    EnumSchema,
    LegacyTitledEnumSchema,
    ListRootsRequest,
    ListRootsResult,
    ModelHint,
    ModelPreferences,
    MultiSelectEnumSchema,
    NumberSchema,
    PrimitiveSchemaDefinition,
    RootsListChangedNotification,
    SamplingContent,
    SamplingMessage,
    SingleSelectEnumSchema,
    StringSchema,
    TitledMultiSelectEnumSchema,
    TitledMultiSelectItems,
    TitledSingleSelectEnumSchema,
    ToolChoice,
    UntitledMultiSelectEnumSchema,
    UntitledMultiSelectItems,
    UntitledSingleSelectEnumSchema,
    URLElicitationRequiredError,
    URLElicitationRequiredErrorData,
    URLElicitationRequiredErrorDetail,
)
from mcp_sim.protocol.connection import (
    CancelledNotification,
    CancelledNotificationParams,
    DiscoverRequest,
    DiscoverResult,
    DiscoverResultResponse,
    InitializedNotification,
    InitializeRequest,
    InitializeRequestParams,
    InitializeResult,
    PingRequest,
    ProgressNotification,
    ProgressNotificationParams,
)
from mcp_sim.protocol.content import (
    Annotations,
    AudioContent,
    BlobResourceContents,
    ContentBlock,
    EmbeddedResource,
    Icon,
    Icons,
    ImageContent,
    MetaObject,
    Number,
    Resource,
    ResourceContents,
    ResourceLink,
    Role,
    SamplingMessageContentBlock,
    TextContent,
    TextResourceContents,
    ToolResultContent,
    ToolUseContent,
)
from mcp_sim.protocol.messages import (
    CacheableResult,
    CacheScope,
    ClientCapabilities,
    Cursor,
    ElicitationCapability,
    EmptyResult,
    Error,
    ErrorResponse,
    HeaderMismatchError,
    HeaderMismatchErrorDetail,
    Implementation,
    InternalError,
    InvalidParamsError,
    InvalidRequestError,
    ListChangedCapability,
    LoggingLevel,
    MethodNotFoundError,
    MissingRequiredClientCapabilityError,
    MissingRequiredClientCapabilityErrorData,
    MissingRequiredClientCapabilityErrorDetail,
    Notification,
    NotificationMetaObject,
    NotificationParams,
    PaginatedRequest,
    PaginatedRequestParams,
    PaginatedResult,
    ParseError,
    ProgressToken,
    Request,
    RequestId,
    RequestMetaObject,
    RequestParams,
    ResourcesCapability,
    Result,
    ResultMetaObject,
    ResultResponse,
    ResultType,
    RootsCapability,
    SamplingCapability,
    ServerCapabilities,
    TasksCapability,
    UnsupportedProtocolVersionError,
    UnsupportedProtocolVersionErrorData,
    UnsupportedProtocolVersionErrorDetail,
)
from mcp_sim.protocol.mrtr import (
    InputRequest,
    InputRequests,
    InputRequiredResult,
    InputResponse,
    InputResponseRequestParams,
    InputResponses,
)
from mcp_sim.protocol.primitives import (
    Prompt,
    PromptArgument,
    PromptMessage,
    PromptReference,
    ResourceTemplate,
    ResourceTemplateReference,
    Root,
    Tool,
    ToolAnnotations,
    ToolExecution,
)
from mcp_sim.protocol.revisions import REVISIONS, TASKS_EXTENSION_METHODS, MethodInfo, get_revision
from mcp_sim.protocol.server_features import (
    CallToolOutcome,
    CallToolRequest,
    CallToolRequestParams,
    CallToolResult,
    CallToolResultResponse,
    CompleteArgument,
    CompleteContext,
    CompleteRequest,
    CompleteRequestParams,
    CompleteResult,
    CompleteResultResponse,
    Completion,
    GetPromptOutcome,
    GetPromptRequest,
    GetPromptRequestParams,
    GetPromptResult,
    GetPromptResultResponse,
    ListPromptsRequest,
    ListPromptsResult,
    ListPromptsResultResponse,
    ListResourcesRequest,
    ListResourcesResult,
    ListResourcesResultResponse,
    ListResourceTemplatesRequest,
    ListResourceTemplatesResult,
    ListResourceTemplatesResultResponse,
    ListToolsRequest,
    ListToolsResult,
    ListToolsResultResponse,
    LoggingMessageNotification,
    LoggingMessageNotificationParams,
    PromptListChangedNotification,
    ReadResourceOutcome,
    ReadResourceRequest,
    ReadResourceRequestParams,
    ReadResourceResult,
    ReadResourceResultResponse,
    ResourceListChangedNotification,
    ResourceRequestParams,
    ResourceUpdatedNotification,
    ResourceUpdatedNotificationParams,
    SetLevelRequest,
    SetLevelRequestParams,
    SubscribeRequest,
    SubscribeRequestParams,
    SubscriptionFilter,
    SubscriptionsAcknowledgedNotification,
    SubscriptionsAcknowledgedNotificationParams,
    SubscriptionsListenRequest,
    SubscriptionsListenRequestParams,
    SubscriptionsListenResult,
    SubscriptionsListenResultMetaObject,
    SubscriptionsListenResultResponse,
    ToolListChangedNotification,
    UnsubscribeRequest,
    UnsubscribeRequestParams,
)
from mcp_sim.protocol.tasks import (
    CancelTaskRequest,
    CancelTaskResult,
    CreateTaskResult,
    GetTaskPayloadRequest,
    GetTaskPayloadResult,
    GetTaskRequest,
    GetTaskResult,
    ListTasksRequest,
    ListTasksResult,
    RelatedTaskMetadata,
    Task,
    TaskAugmentedRequestParams,
    TaskIdRequestParams,
    TaskMetadata,
    TaskStatus,
    TaskStatusNotification,
    TaskStatusNotificationParams,
)

# --- the unions of the schema ---------------------------------------------------------------------
# Requests and notifications are told apart by ``method``. Results have no such tag: use
# parse_result(method, ...) to pick the right model from the request it answers.

ClientRequest: TypeAlias = Annotated[
    InitializeRequest | PingRequest | DiscoverRequest | ListResourcesRequest | ListResourceTemplatesRequest
    | ReadResourceRequest | SubscribeRequest | UnsubscribeRequest | SubscriptionsListenRequest
    | ListPromptsRequest | GetPromptRequest | ListToolsRequest | CallToolRequest | GetTaskRequest
    | GetTaskPayloadRequest | CancelTaskRequest | ListTasksRequest | SetLevelRequest | CompleteRequest,
    Field(discriminator="method"),
]
"""Every request a client may send, over all revisions (each revision's schema allows a subset)."""

ServerRequest: TypeAlias = Annotated[
    PingRequest | GetTaskRequest | GetTaskPayloadRequest | CancelTaskRequest | ListTasksRequest
    | CreateMessageRequest | ListRootsRequest | ElicitRequest,
    Field(discriminator="method"),
]
"""Every request a server may send (up to 2025-11-25; 2026-07-28 has none: see :data:`InputRequest`)."""

ClientNotification: TypeAlias = Annotated[
    CancelledNotification | InitializedNotification | ProgressNotification | TaskStatusNotification
    | RootsListChangedNotification,
    Field(discriminator="method"),
]
"""Every notification a client may send, over all revisions."""

ServerNotification: TypeAlias = Annotated[
    CancelledNotification | ProgressNotification | ResourceListChangedNotification
    | ResourceUpdatedNotification | PromptListChangedNotification | ToolListChangedNotification
    | TaskStatusNotification | LoggingMessageNotification | ElicitationCompleteNotification
    | SubscriptionsAcknowledgedNotification,
    Field(discriminator="method"),
]
"""Every notification a server may send, over all revisions."""

ClientResult: TypeAlias = (
    CreateMessageResult | ListRootsResult | ElicitResult | GetTaskResult | GetTaskPayloadResult
    | CancelTaskResult | ListTasksResult | CreateTaskResult | EmptyResult | Result
)
"""Every result a client may send (up to 2025-11-25; in 2026-07-28 clients send no results)."""

ServerResult: TypeAlias = (
    InitializeResult | DiscoverResult | InputRequiredResult | ListResourcesResult
    | ListResourceTemplatesResult | ReadResourceResult | SubscriptionsListenResult | ListPromptsResult
    | GetPromptResult | ListToolsResult | CallToolResult | CompleteResult | GetTaskResult
    | GetTaskPayloadResult | CancelTaskResult | ListTasksResult | CreateTaskResult | EmptyResult | Result
)
"""Every result a server may send, over all revisions."""


# --- finding a model by name -----------------------------------------------------------------------

def _models_of(*modules: ModuleType) -> dict[str, type[BaseModel]]:
    found: dict[str, type[BaseModel]] = {}
    for module in modules:
        for name, value in vars(module).items():
            if (inspect.isclass(value) and issubclass(value, BaseModel) and value.__module__ == module.__name__
                    and name.isidentifier() and not name.startswith("_")):  # skips pydantic's generic aliases
                found[name] = value
    return found


MODELS: dict[str, type[BaseModel]] = _models_of(
    content, messages, primitives, connection, server_features, client_features, mrtr, tasks)
"""Spec type name → model, for the core protocol (2025-06-18 … 2026-07-28)."""

EXT_TASKS_MODELS: dict[str, type[BaseModel]] = _models_of(ext_tasks)
"""Spec type name → model, for the tasks extension's schema."""


class UnknownMethodError(LookupError):
    """The method is not defined in the revision (a receiver answers ``-32601 Method not found``)."""


def _lookup(method: str, revision: str | None) -> tuple[MethodInfo, dict[str, type[BaseModel]]]:
    """The registry's entry for ``method`` and the model table its type names refer to."""
    if revision is not None:
        rev = get_revision(revision)
        info = rev.method(method)
        if info is not None:
            return info, MODELS
        if rev.is_modern and method in TASKS_EXTENSION_METHODS:
            return TASKS_EXTENSION_METHODS[method], EXT_TASKS_MODELS
        raise UnknownMethodError(f"{method!r} is not a request method of revision {revision}")
    for rev in reversed(REVISIONS.values()):  # newest first: its superset model is the one to use
        info = rev.method(method)
        if info is not None:
            return info, MODELS
    if method in TASKS_EXTENSION_METHODS:
        return TASKS_EXTENSION_METHODS[method], EXT_TASKS_MODELS
    raise UnknownMethodError(f"{method!r} is not a request method of any known revision")


def request_model(method: str, revision: str | None = None) -> type[Request]:
    """The model of ``method``'s request, e.g. ``CallToolRequest`` for ``"tools/call"``.

    With a ``revision``, the method must exist in it; in 2026-07-28 the ``tasks/*`` methods are the
    tasks extension's. Without one, the newest revision that has the method decides.
    """
    info, table = _lookup(method, revision)
    model = table[info.request_type]
    assert issubclass(model, Request)
    return model


def result_model(method: str, revision: str | None = None) -> type[Result]:
    """The model of the ordinary result of ``method``, e.g. ``CallToolResult`` for ``"tools/call"``."""
    info, table = _lookup(method, revision)
    model = table[info.result_type]
    assert issubclass(model, Result)
    return model


def notification_model(method: str, revision: str | None = None) -> type[Notification]:
    """The model of notification ``method``, e.g. ``ProgressNotification``."""
    revisions = [get_revision(revision)] if revision is not None else list(reversed(REVISIONS.values()))
    for rev in revisions:
        info = rev.notifications.get(method)
        if info is not None:
            model = MODELS[info.type_name]
            assert issubclass(model, Notification)
            return model
    if method == ext_tasks.TaskStatusNotification.model_fields["method"].default and (
            revision is None or get_revision(revision).is_modern):
        return ext_tasks.TaskStatusNotification
    where = f"revision {revision}" if revision else "any known revision"
    raise UnknownMethodError(f"{method!r} is not a notification of {where}")


def _message(method: str, params: dict[str, Any] | None) -> dict[str, Any]:
    return {"method": method} if params is None else {"method": method, "params": params}


def parse_request(method: str, params: dict[str, Any] | None = None, *, revision: str | None = None) -> Request:
    """The typed request for ``method`` with ``params`` (no envelope). Bad params raise ``ValidationError``.

    >>> parse_request("tools/call", {"name": "get_weather", "arguments": {"city": "Paris"}}).params.name
    'get_weather'
    """
    return request_model(method, revision).model_validate(_message(method, params))


def parse_notification(method: str, params: dict[str, Any] | None = None, *,
                       revision: str | None = None) -> Notification:
    """The typed notification for ``method`` with ``params``. Bad params raise ``ValidationError``."""
    return notification_model(method, revision).model_validate(_message(method, params))


def _rule_broken(title: str, where: str, message: str, value: Any) -> ValidationError:
    """A ``ValidationError`` for an MCP rule that is not a matter of field types."""
    detail = InitErrorDetails(type=PydanticCustomError("mcp_rule", message), loc=(where,), input=value)
    return ValidationError.from_exception_data(title, [detail])


_TASK_AUGMENTABLE = frozenset({"tools/call", "sampling/createMessage", "elicitation/create"})


def parse_result(method: str, result: dict[str, Any], *, revision: str | None = None) -> Result:
    """The typed result answering a ``method`` request. Bad input raises ``ValidationError``.

    A request may be answered by something other than its ordinary result:

    * ``resultType: "input_required"`` → :class:`InputRequiredResult` (2026-07-28; only for
      ``tools/call``, ``prompts/get`` and ``resources/read``: anything else is an error);
    * ``resultType: "task"`` → the tasks extension's ``CreateTaskResult`` (2026-07-28, ``tools/call``);
    * a ``task`` object and no ordinary fields → 2025-11-25's :class:`CreateTaskResult`.
    """
    info, table = _lookup(method, revision)
    kind = result.get("resultType") if isinstance(result, dict) else None
    if kind == "input_required":
        if not info.may_need_input:
            raise _rule_broken("InputRequiredResult", "resultType",
                               f"only tools/call, prompts/get and resources/read may return "
                               f"input_required, not {method}", result)
        return InputRequiredResult.model_validate(result)
    if kind == "task" and method == "tools/call":
        return ext_tasks.CreateTaskResult.model_validate(result)
    if (isinstance(result, dict) and isinstance(result.get("task"), dict) and method in _TASK_AUGMENTABLE
            and revision in (None, "2025-11-25")):
        return CreateTaskResult.model_validate(result)
    model = table[info.result_type]
    assert issubclass(model, Result)
    return model.model_validate(result)


def parse_as(type_name: str, data: Any, *, extension: bool = False) -> Any:
    """Parse ``data`` as the spec type called ``type_name`` (``extension=True``: the tasks extension's)."""
    table = EXT_TASKS_MODELS if extension else MODELS
    try:
        model = table[type_name]
    except KeyError:
        raise KeyError(f"no model for spec type {type_name!r}") from None
    return model.model_validate(data)


__all__ = [
    "EXT_TASKS_MODELS",
    "MODELS",
    "Annotations",
    "AudioContent",
    "BlobResourceContents",
    "BooleanSchema",
    "CacheScope",
    "CacheableResult",
    "CallToolOutcome",
    "CallToolRequest",
    "CallToolRequestParams",
    "CallToolResult",
    "CallToolResultResponse",
    "CancelTaskRequest",
    "CancelTaskResult",
    "CancelledNotification",
    "CancelledNotificationParams",
    "ClientCapabilities",
    "ClientNotification",
    "ClientRequest",
    "ClientResult",
    "CompleteArgument",
    "CompleteContext",
    "CompleteRequest",
    "CompleteRequestParams",
    "CompleteResult",
    "CompleteResultResponse",
    "Completion",
    "ContentBlock",
    "CreateMessageRequest",
    "CreateMessageRequestParams",
    "CreateMessageResult",
    "CreateTaskResult",
    "Cursor",
    "DiscoverRequest",
    "DiscoverResult",
    "DiscoverResultResponse",
    "ElicitRequest",
    "ElicitRequestFormParams",
    "ElicitRequestParams",
    "ElicitRequestURLParams",
    "ElicitRequestedSchema",
    "ElicitResult",
    "ElicitationCapability",
    "ElicitationCompleteNotification",
    "ElicitationCompleteNotificationParams",
    "EmbeddedResource",
    "EmptyResult",
    "EnumOption",
    "EnumSchema",
    "Error",
    "ErrorResponse",
    "GetPromptOutcome",
    "GetPromptRequest",
    "GetPromptRequestParams",
    "GetPromptResult",
    "GetPromptResultResponse",
    "GetTaskPayloadRequest",
    "GetTaskPayloadResult",
    "GetTaskRequest",
    "GetTaskResult",
    "HeaderMismatchError",
    "HeaderMismatchErrorDetail",
    "Icon",
    "Icons",
    "ImageContent",
    "Implementation",
    "InitializeRequest",
    "InitializeRequestParams",
    "InitializeResult",
    "InitializedNotification",
    "InputRequest",
    "InputRequests",
    "InputRequiredResult",
    "InputResponse",
    "InputResponseRequestParams",
    "InputResponses",
    "InternalError",
    "InvalidParamsError",
    "InvalidRequestError",
    "LegacyTitledEnumSchema",
    "ListChangedCapability",
    "ListPromptsRequest",
    "ListPromptsResult",
    "ListPromptsResultResponse",
    "ListResourceTemplatesRequest",
    "ListResourceTemplatesResult",
    "ListResourceTemplatesResultResponse",
    "ListResourcesRequest",
    "ListResourcesResult",
    "ListResourcesResultResponse",
    "ListRootsRequest",
    "ListRootsResult",
    "ListTasksRequest",
    "ListTasksResult",
    "ListToolsRequest",
    "ListToolsResult",
    "ListToolsResultResponse",
    "LoggingLevel",
    "LoggingMessageNotification",
    "LoggingMessageNotificationParams",
    "MetaObject",
    "MethodNotFoundError",
    "MissingRequiredClientCapabilityError",
    "MissingRequiredClientCapabilityErrorData",
    "MissingRequiredClientCapabilityErrorDetail",
    "ModelHint",
    "ModelPreferences",
    "MultiSelectEnumSchema",
    "Notification",
    "NotificationMetaObject",
    "NotificationParams",
    "Number",
    "NumberSchema",
    "PaginatedRequest",
    "PaginatedRequestParams",
    "PaginatedResult",
    "ParseError",
    "PingRequest",
    "PrimitiveSchemaDefinition",
    "ProgressNotification",
    "ProgressNotificationParams",
    "ProgressToken",
    "Prompt",
    "PromptArgument",
    "PromptListChangedNotification",
    "PromptMessage",
    "PromptReference",
    "ReadResourceOutcome",
    "ReadResourceRequest",
    "ReadResourceRequestParams",
    "ReadResourceResult",
    "ReadResourceResultResponse",
    "RelatedTaskMetadata",
    "Request",
    "RequestId",
    "RequestMetaObject",
    "RequestParams",
    "Resource",
    "ResourceContents",
    "ResourceLink",
    "ResourceListChangedNotification",
    "ResourceRequestParams",
    "ResourceTemplate",
    "ResourceTemplateReference",
    "ResourceUpdatedNotification",
    "ResourceUpdatedNotificationParams",
    "ResourcesCapability",
    "Result",
    "ResultMetaObject",
    "ResultResponse",
    "ResultType",
    "Role",
    "Root",
    "RootsCapability",
    "RootsListChangedNotification",
    "SamplingCapability",
    "SamplingContent",
    "SamplingMessage",
    "SamplingMessageContentBlock",
    "ServerCapabilities",
    "ServerNotification",
    "ServerRequest",
    "ServerResult",
    "SetLevelRequest",
    "SetLevelRequestParams",
    "SingleSelectEnumSchema",
    "StringSchema",
    "SubscribeRequest",
    "SubscribeRequestParams",
    "SubscriptionFilter",
    "SubscriptionsAcknowledgedNotification",
    "SubscriptionsAcknowledgedNotificationParams",
    "SubscriptionsListenRequest",
    "SubscriptionsListenRequestParams",
    "SubscriptionsListenResult",
    "SubscriptionsListenResultMetaObject",
    "SubscriptionsListenResultResponse",
    "Task",
    "TaskAugmentedRequestParams",
    "TaskIdRequestParams",
    "TaskMetadata",
    "TaskStatus",
    "TaskStatusNotification",
    "TaskStatusNotificationParams",
    "TasksCapability",
    "TextContent",
    "TextResourceContents",
    "TitledMultiSelectEnumSchema",
    "TitledMultiSelectItems",
    "TitledSingleSelectEnumSchema",
    "Tool",
    "ToolAnnotations",
    "ToolChoice",
    "ToolExecution",
    "ToolListChangedNotification",
    "ToolResultContent",
    "ToolUseContent",
    "URLElicitationRequiredError",
    "URLElicitationRequiredErrorData",
    "URLElicitationRequiredErrorDetail",
    "UnknownMethodError",
    "UnsubscribeRequest",
    "UnsubscribeRequestParams",
    "UnsupportedProtocolVersionError",
    "UnsupportedProtocolVersionErrorData",
    "UnsupportedProtocolVersionErrorDetail",
    "UntitledMultiSelectEnumSchema",
    "UntitledMultiSelectItems",
    "UntitledSingleSelectEnumSchema",
    "notification_model",
    "parse_as",
    "parse_notification",
    "parse_request",
    "parse_result",
    "request_model",
    "result_model",
]
