"""The primitives: what a server offers and what a client exposes (course chapters 04 and 05).

A server offers three kinds of thing, each listed by a ``*/list`` request and used by another:

* a :class:`Tool` is called by the *model* (``tools/call``);
* a :class:`~mcp_sim.protocol.content.Resource` or :class:`ResourceTemplate` is read by the
  *application* (``resources/read``);
* a :class:`Prompt` is chosen by the *user* (``prompts/get``).

A client exposes :class:`Root` folders (``roots/list``, deprecated in 2026-07-28).

These are descriptions, not messages; the messages that carry them are in
:mod:`mcp_sim.protocol.server_features` and :mod:`mcp_sim.protocol.client_features`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from mcp_sim.protocol.base import MCPModel
from mcp_sim.protocol.content import Annotations, ContentBlock, Icon, MetaObject, Resource, Role

__all__ = [
    "Prompt",
    "PromptArgument",
    "PromptMessage",
    "PromptReference",
    "Resource",
    "ResourceTemplate",
    "ResourceTemplateReference",
    "Root",
    "Tool",
    "ToolAnnotations",
    "ToolExecution",
]


class ToolAnnotations(MCPModel):
    """Hints about a tool's behaviour; untrusted unless the server is (2025-03-26+)."""

    title: str | None = None
    readOnlyHint: bool | None = None
    destructiveHint: bool | None = None
    idempotentHint: bool | None = None
    openWorldHint: bool | None = None


class ToolExecution(MCPModel):
    """How a tool may run as a task: ``taskSupport`` forbidden/optional/required (2025-11-25 only)."""

    taskSupport: Literal["forbidden", "optional", "required"] | None = None


class Tool(MCPModel):
    """A function the model can call. ``inputSchema`` is a JSON Schema for ``arguments``.

    ``outputSchema`` (2025-06-18+) describes ``structuredContent``; ``icons`` and ``execution`` from
    2025-11-25. In 2026-07-28 both schemas may be any JSON Schema 2020-12 object.
    """

    name: str
    title: str | None = None
    description: str | None = None
    inputSchema: dict[str, Any]
    outputSchema: dict[str, Any] | None = None
    annotations: ToolAnnotations | None = None
    icons: list[Icon] | None = None
    execution: ToolExecution | None = None
    meta: MetaObject | None = Field(default=None, alias="_meta")


class ResourceTemplate(MCPModel):
    """A family of resources named by an RFC 6570 URI template such as ``file:///{path}``."""

    uriTemplate: str
    name: str
    title: str | None = None
    description: str | None = None
    mimeType: str | None = None
    annotations: Annotations | None = None
    icons: list[Icon] | None = None
    meta: MetaObject | None = Field(default=None, alias="_meta")


class PromptArgument(MCPModel):
    """One argument a prompt template accepts."""

    name: str
    title: str | None = None
    description: str | None = None
    required: bool | None = None


class Prompt(MCPModel):
    """A prompt template the user can pick (``prompts/list``)."""

    name: str
    title: str | None = None
    description: str | None = None
    arguments: list[PromptArgument] | None = None
    icons: list[Icon] | None = None
    meta: MetaObject | None = Field(default=None, alias="_meta")


class PromptMessage(MCPModel):
    """One message of a filled-in prompt: a role and one content block."""

    role: Role
    content: ContentBlock


class PromptReference(MCPModel):
    """Names a prompt whose argument is being completed (``completion/complete``)."""

    type: Literal["ref/prompt"] = "ref/prompt"
    name: str
    title: str | None = None


class ResourceTemplateReference(MCPModel):
    """Names a resource template whose variable is being completed (``completion/complete``)."""

    type: Literal["ref/resource"] = "ref/resource"
    uri: str


class Root(MCPModel):
    """A folder or file the client lets the server work in (``file://`` URI)."""

    uri: str
    name: str | None = None
    meta: MetaObject | None = Field(default=None, alias="_meta")
