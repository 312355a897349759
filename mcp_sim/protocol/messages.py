"""The shapes every MCP message is built from (course chapters 02 and 03).

Three kinds of message, as in JSON-RPC: a :class:`Request` (``method`` + ``params``, answered by one
:class:`Result` or an error), a :class:`Notification` (``method`` + ``params``, never answered) and the
result or error that answers a request. Every typed request below subclasses :class:`Request` and fixes
its ``method`` to a constant, which is how :mod:`mcp_sim.protocol.types` finds the model for a method.

The JSON-RPC *envelope* (``jsonrpc: "2.0"`` and the ``id``) belongs to the wire layer
(:mod:`mcp_sim.wire`). The schemas disagree with themselves about it over time, so a typed request
keeps ``jsonrpc`` and ``id`` only when it was given them:

* up to 2025-06-18 a type such as ``CallToolRequest`` holds only ``method`` and ``params``;
* in 2025-11-25 it includes ``jsonrpc`` and ``id``;
* in 2026-07-28 it includes them again, except the requests that only travel inside an
  ``InputRequiredResult`` (``ElicitRequest``, ``CreateMessageRequest``, ``ListRootsRequest``).

Use :mod:`mcp_sim.protocol.envelopes` to go from a typed model to a wire message and back.

``_meta`` is where MCP puts data *about* a message. In 2026-07-28 every request's ``params._meta``
must carry the protocol version and the client's capabilities (:class:`RequestMetaObject`), because
there is no handshake that would remember them.

Also here: :class:`Implementation`, the capability objects, and the error types.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

from pydantic import Field

from mcp_sim.protocol.base import MCPModel
from mcp_sim.protocol.content import Icon

RequestId: TypeAlias = str | int
"""A request id: a string or an integer, never ``null``."""

ProgressToken: TypeAlias = str | int
"""A token a requester puts in ``_meta.progressToken`` to ask for progress notifications."""

Cursor: TypeAlias = str
"""An opaque pagination position, echoed back to get the next page."""

LoggingLevel: TypeAlias = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
"""Syslog severities, from least to most severe."""

ResultType: TypeAlias = str
"""2026-07-28: ``"complete"``, ``"input_required"``, or an extension's value (``"task"``)."""

CacheScope: TypeAlias = Literal["public", "private"]
"""2026-07-28: may a cached result be shared across users (``public``) or not (``private``)."""


# --- who is talking, and what they can do ------------------------------------------------------------

class Implementation(MCPModel):
    """The name and version of a client or server program.

    ``title`` from 2025-06-18; ``description``, ``icons`` and ``websiteUrl`` from 2025-11-25.
    """

    name: str
    version: str
    title: str | None = None
    description: str | None = None
    icons: list[Icon] | None = None
    websiteUrl: str | None = None


class RootsCapability(MCPModel):
    """Client ``roots`` capability (unnamed in the schema); ``listChanged`` up to 2025-11-25."""

    listChanged: bool | None = None


class SamplingCapability(MCPModel):
    """Client ``sampling`` capability (unnamed); ``context`` and ``tools`` from 2025-11-25."""

    context: dict[str, Any] | None = None
    tools: dict[str, Any] | None = None


class ElicitationCapability(MCPModel):
    """Client ``elicitation`` capability (unnamed); ``form``/``url`` from 2025-11-25, ``{}`` = form."""

    form: dict[str, Any] | None = None
    url: dict[str, Any] | None = None


class TasksCapability(MCPModel):
    """``tasks`` capability of either side (unnamed; 2025-11-25 only): which task requests are supported."""

    list: dict[str, Any] | None = None
    cancel: dict[str, Any] | None = None
    requests: dict[str, Any] | None = None


class ListChangedCapability(MCPModel):
    """A server feature that can announce changes to its list (``prompts``, ``tools``; unnamed)."""

    listChanged: bool | None = None


class ResourcesCapability(MCPModel):
    """Server ``resources`` capability (unnamed): per-resource subscriptions and list changes."""

    subscribe: bool | None = None
    listChanged: bool | None = None


class ClientCapabilities(MCPModel):
    """What a client can do for a server.

    Sent once in ``initialize`` (legacy) or on every request in ``_meta`` (2026-07-28). ``elicitation``
    from 2025-06-18; ``tasks`` only in 2025-11-25; ``extensions`` from 2026-07-28.
    """

    experimental: dict[str, dict[str, Any]] | None = None
    extensions: dict[str, dict[str, Any]] | None = None
    roots: RootsCapability | None = None
    sampling: SamplingCapability | None = None
    elicitation: ElicitationCapability | None = None
    tasks: TasksCapability | None = None


class ServerCapabilities(MCPModel):
    """What a server offers: returned by ``initialize`` (legacy) or ``server/discover`` (2026-07-28).

    ``completions`` from 2025-03-26; ``tasks`` only in 2025-11-25; ``extensions`` from 2026-07-28.
    """

    experimental: dict[str, dict[str, Any]] | None = None
    extensions: dict[str, dict[str, Any]] | None = None
    logging: dict[str, Any] | None = None
    completions: dict[str, Any] | None = None
    prompts: ListChangedCapability | None = None
    resources: ResourcesCapability | None = None
    tools: ListChangedCapability | None = None
    tasks: TasksCapability | None = None


# --- _meta objects -------------------------------------------------------------------------------------

class RequestMetaObject(MCPModel):
    """``params._meta`` of a request.

    2026-07-28 requires ``protocolVersion`` and ``clientCapabilities`` on every request (the keys are
    namespaced: ``io.modelcontextprotocol/protocolVersion`` ...). Earlier revisions only knew
    ``progressToken``. Other keys are kept as they are.
    """

    protocolVersion: str | None = Field(default=None, alias="io.modelcontextprotocol/protocolVersion")
    clientCapabilities: ClientCapabilities | None = Field(
        default=None, alias="io.modelcontextprotocol/clientCapabilities")
    clientInfo: Implementation | None = Field(default=None, alias="io.modelcontextprotocol/clientInfo")
    logLevel: LoggingLevel | None = Field(default=None, alias="io.modelcontextprotocol/logLevel")
    progressToken: ProgressToken | None = None


class ResultMetaObject(MCPModel):
    """``_meta`` of a result; 2026-07-28 lets the server name itself in ``serverInfo``."""

    serverInfo: Implementation | None = Field(default=None, alias="io.modelcontextprotocol/serverInfo")


class NotificationMetaObject(MCPModel):
    """``params._meta`` of a notification; 2026-07-28 names the subscription it belongs to."""

    subscriptionId: RequestId | None = Field(default=None, alias="io.modelcontextprotocol/subscriptionId")


# --- requests, notifications, results ---------------------------------------------------------------

class RequestParams(MCPModel):
    """The ``params`` every request may have: just ``_meta`` (required in 2026-07-28)."""

    meta: RequestMetaObject | None = Field(default=None, alias="_meta")


class PaginatedRequestParams(RequestParams):
    """Params of a ``*/list`` request: an optional ``cursor`` from the previous page."""

    cursor: Cursor | None = None


class NotificationParams(MCPModel):
    """The ``params`` every notification may have: just ``_meta``."""

    meta: NotificationMetaObject | None = Field(default=None, alias="_meta")


class Request(MCPModel):
    """Any request: a ``method`` and its ``params`` (``jsonrpc``/``id`` only when the schema's type has them)."""

    jsonrpc: Literal["2.0"] | None = None
    id: RequestId | None = None
    method: str
    params: RequestParams | None = None


class PaginatedRequest(Request):
    """A request for one page of a list."""

    params: PaginatedRequestParams | None = None


class Notification(MCPModel):
    """Any notification: a ``method`` and its ``params``; nobody answers it."""

    jsonrpc: Literal["2.0"] | None = None
    method: str
    params: NotificationParams | None = None


class Result(MCPModel):
    """Any result. ``resultType`` is required in 2026-07-28 and absent before (then it means "complete")."""

    resultType: ResultType | None = None
    meta: ResultMetaObject | None = Field(default=None, alias="_meta")


class EmptyResult(Result):
    """A result that only acknowledges (``ping``, ``resources/subscribe`` ...)."""


class PaginatedResult(Result):
    """One page of a list; ``nextCursor`` is absent on the last page."""

    nextCursor: Cursor | None = None


class CacheableResult(Result):
    """A result the client may cache (2026-07-28): for ``ttlMs`` milliseconds, shared or not per ``cacheScope``."""

    ttlMs: int | None = Field(default=None, ge=0)
    cacheScope: CacheScope | None = None


class ResultResponse(MCPModel):
    """A whole successful JSON-RPC response (the schema's ``JSONRPCResultResponse``).

    2026-07-28 names one per method (``CallToolResultResponse`` ...) whose ``result`` is typed.
    """

    jsonrpc: Literal["2.0"] = "2.0"
    id: RequestId
    result: Result


# --- errors ------------------------------------------------------------------------------------------

class Error(MCPModel):
    """The ``error`` member of a JSON-RPC error response: ``code``, ``message`` and optional ``data``."""

    code: int
    message: str
    data: Any = None


class ParseError(Error):
    """-32700: the message was not valid JSON (named in the schema from 2026-07-28)."""

    code: Literal[-32700] = -32700


class InvalidRequestError(Error):
    """-32600: valid JSON but not a valid JSON-RPC request (2026-07-28 name)."""

    code: Literal[-32600] = -32600


class MethodNotFoundError(Error):
    """-32601: no such method, or the capability behind it was not advertised (2026-07-28 name)."""

    code: Literal[-32601] = -32601


class InvalidParamsError(Error):
    """-32602: bad params: unknown tool, bad arguments, bad cursor, missing ``_meta`` (2026-07-28 name)."""

    code: Literal[-32602] = -32602


class InternalError(Error):
    """-32603: the receiver failed (2026-07-28 name)."""

    code: Literal[-32603] = -32603


class HeaderMismatchErrorDetail(Error):
    """The ``error`` of a :class:`HeaderMismatchError` (unnamed in the schema)."""

    code: Literal[-32020] = -32020


class MissingRequiredClientCapabilityErrorData(MCPModel):
    """``error.data`` of -32021: the client capabilities the request needs (unnamed in the schema)."""

    requiredCapabilities: ClientCapabilities


class MissingRequiredClientCapabilityErrorDetail(Error):
    """The ``error`` of a :class:`MissingRequiredClientCapabilityError` (unnamed in the schema)."""

    code: Literal[-32021] = -32021
    data: MissingRequiredClientCapabilityErrorData


class UnsupportedProtocolVersionErrorData(MCPModel):
    """``error.data`` of -32022: the version asked for and the versions the server supports (unnamed)."""

    requested: str
    supported: list[str]


class UnsupportedProtocolVersionErrorDetail(Error):
    """The ``error`` of an :class:`UnsupportedProtocolVersionError` (unnamed in the schema)."""

    code: Literal[-32022] = -32022
    data: UnsupportedProtocolVersionErrorData


class ErrorResponse(MCPModel):
    """A whole JSON-RPC error response (the schema's ``JSONRPCErrorResponse``); ``id`` may be absent."""

    jsonrpc: Literal["2.0"] = "2.0"
    id: RequestId | None = None
    error: Error


class HeaderMismatchError(ErrorResponse):
    """-32020 (2026-07-28, HTTP 400): an ``Mcp-*`` header disagrees with the body or is malformed.

    Note that the schema defines the three MCP-specific errors as whole error *responses*, while the
    JSON-RPC ones (:class:`ParseError` ...) are only the ``error`` object.
    """

    error: HeaderMismatchErrorDetail


class MissingRequiredClientCapabilityError(ErrorResponse):
    """-32021 (2026-07-28, HTTP 400): the request needs a client capability it did not declare."""

    error: MissingRequiredClientCapabilityErrorDetail


class UnsupportedProtocolVersionError(ErrorResponse):
    """-32022 (2026-07-28, HTTP 400): the server does not speak the requested protocol version."""

    error: UnsupportedProtocolVersionErrorDetail
