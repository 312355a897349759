"""Content: what MCP messages carry (course chapter 05, "What servers offer").

A tool result, a prompt message or a sampled answer is a list of *content blocks*. Each block says
what it is in its ``type`` field, so a receiver can pick the right model without guessing:

========================  ==================  =============================================
``type``                  model               carries
========================  ==================  =============================================
``"text"``                TextContent         plain text
``"image"``               ImageContent        base64 ``data`` + ``mimeType``
``"audio"``               AudioContent        base64 ``data`` + ``mimeType`` (2025-03-26+)
``"resource_link"``       ResourceLink        a pointer to a resource, not its bytes (2025-06-18+)
``"resource"``            EmbeddedResource    the resource's contents inline
``"tool_use"``            ToolUseContent      a model asks to call a tool (sampling, 2025-11-25+)
``"tool_result"``         ToolResultContent   the answer to a ``tool_use`` (sampling, 2025-11-25+)
========================  ==================  =============================================

Spec types: ``Role``, ``Annotations``, ``Icon``, ``Icons``, ``TextContent``, ``ImageContent``,
``AudioContent``, ``ResourceContents``, ``TextResourceContents``, ``BlobResourceContents``,
``EmbeddedResource``, ``ResourceLink``, ``ToolUseContent``, ``ToolResultContent``, ``ContentBlock``,
``SamplingMessageContentBlock``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeAlias

from pydantic import Field

from mcp_sim.protocol.base import MCPModel

Role: TypeAlias = Literal["user", "assistant"]
"""Who a message or a piece of content is for or from."""

Number: TypeAlias = int | float
"""A JSON number. ``int`` is tried first so that ``50`` stays ``50`` (not ``50.0``) on a round trip."""

MetaObject: TypeAlias = dict[str, Any]
"""A free-form ``_meta`` object (the schema's ``MetaObject``)."""


class Annotations(MCPModel):
    """Hints for the client about who a piece of content is for and how much it matters."""

    audience: list[Role] | None = None
    priority: Number | None = Field(default=None, ge=0, le=1)
    lastModified: str | None = None


class Icon(MCPModel):
    """An icon a client may show next to a tool, resource, prompt or implementation (2025-11-25+)."""

    src: str
    mimeType: str | None = None
    sizes: list[str] | None = None
    theme: Literal["light", "dark"] | None = None


class Icons(MCPModel):
    """The ``icons`` mixin: a list of :class:`Icon` (2025-11-25+)."""

    icons: list[Icon] | None = None


class TextContent(MCPModel):
    """Plain text content."""

    type: Literal["text"] = "text"
    text: str
    annotations: Annotations | None = None
    meta: MetaObject | None = Field(default=None, alias="_meta")


class ImageContent(MCPModel):
    """An image, base64-encoded in ``data``."""

    type: Literal["image"] = "image"
    data: str
    mimeType: str
    annotations: Annotations | None = None
    meta: MetaObject | None = Field(default=None, alias="_meta")


class AudioContent(MCPModel):
    """Audio, base64-encoded in ``data`` (2025-03-26 and later)."""

    type: Literal["audio"] = "audio"
    data: str
    mimeType: str
    annotations: Annotations | None = None
    meta: MetaObject | None = Field(default=None, alias="_meta")


class ResourceContents(MCPModel):
    """What every resource's contents have: the ``uri`` they were read from."""

    uri: str
    mimeType: str | None = None
    meta: MetaObject | None = Field(default=None, alias="_meta")


class TextResourceContents(ResourceContents):
    """A resource's contents as text."""

    text: str


class BlobResourceContents(ResourceContents):
    """A resource's contents as base64-encoded bytes."""

    blob: str


ResourceContentsVariant: TypeAlias = TextResourceContents | BlobResourceContents
"""Text or blob: the two shapes ``resources/read`` and an embedded resource can carry."""


class EmbeddedResource(MCPModel):
    """A resource's contents placed inline in a tool result or prompt message."""

    type: Literal["resource"] = "resource"
    resource: ResourceContentsVariant
    annotations: Annotations | None = None
    meta: MetaObject | None = Field(default=None, alias="_meta")


class Resource(MCPModel):
    """A resource a server can read for the client (listed by ``resources/list``).

    ``title`` (2025-06-18+) is for people, ``name`` for programs; ``icons`` from 2025-11-25.
    """

    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mimeType: str | None = None
    size: int | None = None
    annotations: Annotations | None = None
    icons: list[Icon] | None = None
    meta: MetaObject | None = Field(default=None, alias="_meta")


class ResourceLink(Resource):
    """A pointer to a resource inside a result: the client may read it later (2025-06-18+)."""

    type: Literal["resource_link"] = "resource_link"


class ToolUseContent(MCPModel):
    """A sampled model asking to call a tool (sampling with tools, 2025-11-25+)."""

    type: Literal["tool_use"] = "tool_use"
    id: str
    name: str
    input: dict[str, Any]
    meta: MetaObject | None = Field(default=None, alias="_meta")


class ToolResultContent(MCPModel):
    """The result of a ``tool_use``, sent back to the sampled model (2025-11-25+).

    ``structuredContent`` is an object in 2025-11-25 and any JSON value in 2026-07-28.
    """

    type: Literal["tool_result"] = "tool_result"
    toolUseId: str
    content: list[ContentBlock]
    structuredContent: Any = None
    isError: bool | None = None
    meta: MetaObject | None = Field(default=None, alias="_meta")


ContentBlock: TypeAlias = Annotated[
    TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource,
    Field(discriminator="type"),
]
"""Any block of a tool result or prompt message, told apart by its ``type``."""

SamplingMessageContentBlock: TypeAlias = Annotated[
    TextContent | ImageContent | AudioContent | ToolUseContent | ToolResultContent,
    Field(discriminator="type"),
]
"""Any block of a sampling message (2025-11-25 added ``tool_use``/``tool_result``)."""

ToolResultContent.model_rebuild()
