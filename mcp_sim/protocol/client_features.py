"""Client features: what a server may ask of the client (course chapter 04).

* **Sampling** (``sampling/createMessage``): "please ask your LLM this". From 2025-11-25 the request
  may offer ``tools`` and the messages may hold ``tool_use``/``tool_result`` blocks.
* **Elicitation** (``elicitation/create``, 2025-06-18+): "please ask your user this". *Form mode*
  sends a flat JSON Schema of primitive fields (:data:`PrimitiveSchemaDefinition`); *URL mode*
  (2025-11-25+) sends the user to a web page for things that must not pass through the client.
* **Roots** (``roots/list``): "which folders may I work in?".

Up to 2025-11-25 the server sends these as JSON-RPC requests. In 2026-07-28 servers never send
requests: the same messages travel inside an ``InputRequiredResult`` (see :mod:`mcp_sim.protocol.mrtr`)
and carry no ``jsonrpc``/``id``. Sampling and roots are deprecated in 2026-07-28.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeAlias

from pydantic import Discriminator, Field, Tag

from mcp_sim.protocol.base import MCPModel
from mcp_sim.protocol.content import (
    AudioContent,
    ImageContent,
    MetaObject,
    Number,
    Role,
    SamplingMessageContentBlock,
    TextContent,
    ToolResultContent,
    ToolUseContent,
)
from mcp_sim.protocol.messages import (
    Error,
    ErrorResponse,
    Notification,
    NotificationParams,
    Request,
    RequestParams,
    Result,
)
from mcp_sim.protocol.primitives import Root, Tool
from mcp_sim.protocol.tasks import TaskAugmentedRequestParams

# --- sampling ----------------------------------------------------------------------------------------


class ModelHint(MCPModel):
    """A model name (or part of one) the server would like, e.g. ``"claude-3-sonnet"``."""

    name: str | None = None


class ModelPreferences(MCPModel):
    """How the server weighs cost, speed and intelligence (each 0–1) when the client picks a model."""

    hints: list[ModelHint] | None = None
    costPriority: Number | None = Field(default=None, ge=0, le=1)
    speedPriority: Number | None = Field(default=None, ge=0, le=1)
    intelligencePriority: Number | None = Field(default=None, ge=0, le=1)


class ToolChoice(MCPModel):
    """Whether the sampled model must, may or must not call one of the offered tools (2025-11-25+)."""

    mode: Literal["auto", "required", "none"] | None = None


SamplingContent: TypeAlias = (
    Annotated[TextContent | ImageContent | AudioContent | ToolUseContent | ToolResultContent,
              Field(discriminator="type")]
    | list[SamplingMessageContentBlock]
)
"""One block, or (2025-11-25+) a list of blocks. Up to 2025-06-18 only text, image or audio."""


class SamplingMessage(MCPModel):
    """One message of the conversation the server wants the client's LLM to continue."""

    role: Role
    content: SamplingContent
    meta: MetaObject | None = Field(default=None, alias="_meta")


class CreateMessageRequestParams(TaskAugmentedRequestParams):
    """What to sample: messages, preferences, limits; ``tools``/``toolChoice`` from 2025-11-25.

    ``includeContext`` values other than ``"none"`` are deprecated from 2025-11-25.
    """

    messages: list[SamplingMessage]
    modelPreferences: ModelPreferences | None = None
    systemPrompt: str | None = None
    includeContext: Literal["none", "thisServer", "allServers"] | None = None
    temperature: Number | None = None
    maxTokens: int
    stopSequences: list[str] | None = None
    metadata: dict[str, Any] | None = None
    tools: list[Tool] | None = None
    toolChoice: ToolChoice | None = None


class CreateMessageRequest(Request):
    """``sampling/createMessage``: the server asks the client's LLM for a completion (deprecated 2026-07-28)."""

    method: Literal["sampling/createMessage"] = "sampling/createMessage"
    params: CreateMessageRequestParams


class CreateMessageResult(Result):
    """The sampled message, the model that wrote it and why it stopped (``endTurn``, ``toolUse`` ...)."""

    role: Role
    content: SamplingContent
    model: str
    stopReason: str | None = None


# --- elicitation: the form fields ---------------------------------------------------------------------


class StringSchema(MCPModel):
    """A text field; ``format`` may ask for an email, a URI, a date or a date-time."""

    type: Literal["string"] = "string"
    title: str | None = None
    description: str | None = None
    minLength: int | None = None
    maxLength: int | None = None
    format: Literal["email", "uri", "date", "date-time"] | None = None
    default: str | None = None


class NumberSchema(MCPModel):
    """A number field (``type`` ``"number"`` or ``"integer"``)."""

    type: Literal["number", "integer"]
    title: str | None = None
    description: str | None = None
    minimum: Number | None = None
    maximum: Number | None = None
    default: Number | None = None


class BooleanSchema(MCPModel):
    """A yes/no field."""

    type: Literal["boolean"] = "boolean"
    title: str | None = None
    description: str | None = None
    default: bool | None = None


class EnumOption(MCPModel):
    """One choice with a display title: ``{"const": value, "title": label}`` (unnamed in the schema)."""

    const: str
    title: str


class UntitledSingleSelectEnumSchema(MCPModel):
    """Pick one of ``enum``; the values are shown as they are (2025-11-25+)."""

    type: Literal["string"] = "string"
    title: str | None = None
    description: str | None = None
    enum: list[str]
    default: str | None = None


class TitledSingleSelectEnumSchema(MCPModel):
    """Pick one of ``oneOf``, each value with its own display title (2025-11-25+)."""

    type: Literal["string"] = "string"
    title: str | None = None
    description: str | None = None
    oneOf: list[EnumOption]
    default: str | None = None


class UntitledMultiSelectItems(MCPModel):
    """``items`` of an untitled multi-select: ``{"type": "string", "enum": [...]}`` (unnamed)."""

    type: Literal["string"] = "string"
    enum: list[str]


class UntitledMultiSelectEnumSchema(MCPModel):
    """Pick several of ``items.enum`` (2025-11-25+)."""

    type: Literal["array"] = "array"
    title: str | None = None
    description: str | None = None
    minItems: int | None = None
    maxItems: int | None = None
    items: UntitledMultiSelectItems
    default: list[str] | None = None


class TitledMultiSelectItems(MCPModel):
    """``items`` of a titled multi-select: ``{"anyOf": [{"const", "title"} ...]}`` (unnamed)."""

    anyOf: list[EnumOption]


class TitledMultiSelectEnumSchema(MCPModel):
    """Pick several of ``items.anyOf``, each with a display title (2025-11-25+)."""

    type: Literal["array"] = "array"
    title: str | None = None
    description: str | None = None
    minItems: int | None = None
    maxItems: int | None = None
    items: TitledMultiSelectItems
    default: list[str] | None = None


class LegacyTitledEnumSchema(MCPModel):
    """Pick one of ``enum`` with parallel display names in ``enumNames``.

    This is 2025-06-18's ``EnumSchema``; 2025-11-25 renamed it and deprecated ``enumNames``.
    """

    type: Literal["string"] = "string"
    title: str | None = None
    description: str | None = None
    enum: list[str]
    enumNames: list[str] | None = None
    default: str | None = None


def _field_kind(value: Any) -> str:
    """Which form-field model fits ``value``: by ``type``, then by the keys that tell enums apart."""
    if not isinstance(value, dict):
        return type(value).__name__
    kind = value.get("type")
    if kind == "boolean":
        return "BooleanSchema"
    if kind in ("number", "integer"):
        return "NumberSchema"
    if kind == "array":
        items = value.get("items")
        titled = isinstance(items, dict) and "anyOf" in items
        return "TitledMultiSelectEnumSchema" if titled else "UntitledMultiSelectEnumSchema"
    if "oneOf" in value:
        return "TitledSingleSelectEnumSchema"
    if "enumNames" in value:
        return "LegacyTitledEnumSchema"
    if "enum" in value:
        return "UntitledSingleSelectEnumSchema"
    return "StringSchema"


PrimitiveSchemaDefinition: TypeAlias = Annotated[
    Annotated[StringSchema, Tag("StringSchema")]
    | Annotated[NumberSchema, Tag("NumberSchema")]
    | Annotated[BooleanSchema, Tag("BooleanSchema")]
    | Annotated[UntitledSingleSelectEnumSchema, Tag("UntitledSingleSelectEnumSchema")]
    | Annotated[TitledSingleSelectEnumSchema, Tag("TitledSingleSelectEnumSchema")]
    | Annotated[UntitledMultiSelectEnumSchema, Tag("UntitledMultiSelectEnumSchema")]
    | Annotated[TitledMultiSelectEnumSchema, Tag("TitledMultiSelectEnumSchema")]
    | Annotated[LegacyTitledEnumSchema, Tag("LegacyTitledEnumSchema")],
    Discriminator(_field_kind),
]
"""One field of an elicitation form: only flat, primitive fields are allowed (no nesting)."""

SingleSelectEnumSchema: TypeAlias = UntitledSingleSelectEnumSchema | TitledSingleSelectEnumSchema
MultiSelectEnumSchema: TypeAlias = UntitledMultiSelectEnumSchema | TitledMultiSelectEnumSchema
EnumSchema: TypeAlias = SingleSelectEnumSchema | MultiSelectEnumSchema | LegacyTitledEnumSchema
"""The enum field kinds of 2025-11-25+ (in 2025-06-18 ``EnumSchema`` was what is now the legacy one)."""


# --- elicitation: the messages ------------------------------------------------------------------------


class ElicitRequestedSchema(MCPModel):
    """``requestedSchema`` of a form: an object schema whose properties are primitive fields (unnamed)."""

    type: Literal["object"] = "object"
    properties: dict[str, PrimitiveSchemaDefinition]
    required: list[str] | None = None
    schema_uri: str | None = Field(default=None, alias="$schema")


class ElicitRequestFormParams(TaskAugmentedRequestParams):
    """Form mode: show ``message`` and a form built from ``requestedSchema``.

    ``mode: "form"`` may be omitted (it is the default, and the only mode before 2025-11-25).
    """

    mode: Literal["form"] | None = None
    message: str
    requestedSchema: ElicitRequestedSchema


class ElicitRequestURLParams(TaskAugmentedRequestParams):
    """URL mode (2025-11-25+): send the user to ``url`` (e.g. to enter an API key out of band).

    ``elicitationId`` is required in 2025-11-25 and gone in 2026-07-28.
    """

    mode: Literal["url"] = "url"
    message: str
    url: str
    elicitationId: str | None = None


def _elicit_mode(value: Any) -> str:
    mode = value.get("mode") if isinstance(value, dict) else getattr(value, "mode", None)
    return "url" if mode == "url" else "form"


ElicitRequestParams: TypeAlias = Annotated[
    Annotated[ElicitRequestFormParams, Tag("form")] | Annotated[ElicitRequestURLParams, Tag("url")],
    Discriminator(_elicit_mode),
]
"""Form or URL mode, told apart by ``mode`` (absent means form)."""


class ElicitRequest(Request):
    """``elicitation/create``: the server asks the user, through the client, for information (2025-06-18+)."""

    method: Literal["elicitation/create"] = "elicitation/create"
    params: ElicitRequestParams


class ElicitResult(Result):
    """The user's answer: ``accept`` (with ``content``), ``decline`` or ``cancel``.

    Content values are strings, numbers or booleans; lists of strings (multi-select) from 2025-11-25.
    """

    action: Literal["accept", "decline", "cancel"]
    content: dict[str, str | int | bool | list[str]] | None = None


class ElicitationCompleteNotificationParams(NotificationParams):
    """Params of ``notifications/elicitation/complete`` (unnamed in the schema)."""

    elicitationId: str


class ElicitationCompleteNotification(Notification):
    """The out-of-band URL elicitation ``elicitationId`` has finished (2025-11-25 only)."""

    method: Literal["notifications/elicitation/complete"] = "notifications/elicitation/complete"
    params: ElicitationCompleteNotificationParams


class URLElicitationRequiredErrorData(MCPModel):
    """``error.data`` of -32042: the URL elicitations the user must complete first (unnamed)."""

    elicitations: list[ElicitRequestURLParams]


class URLElicitationRequiredErrorDetail(Error):
    """The ``error`` of a :class:`URLElicitationRequiredError` (unnamed)."""

    code: Literal[-32042] = -32042
    data: URLElicitationRequiredErrorData


class URLElicitationRequiredError(ErrorResponse):
    """-32042 (2025-11-25 only): the request cannot proceed until the user completes a URL elicitation."""

    error: URLElicitationRequiredErrorDetail


# --- roots -------------------------------------------------------------------------------------------


class ListRootsRequest(Request):
    """``roots/list``: the server asks which folders it may work in (deprecated 2026-07-28)."""

    method: Literal["roots/list"] = "roots/list"
    params: RequestParams | None = None


class ListRootsResult(Result):
    """The client's roots."""

    roots: list[Root]


class RootsListChangedNotification(Notification):
    """The client's roots changed; the server may ask again (up to 2025-11-25)."""

    method: Literal["notifications/roots/list_changed"] = "notifications/roots/list_changed"
