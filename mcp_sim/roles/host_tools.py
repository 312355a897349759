"""The tools a Host aggregates from its servers, the names the model sees, and the model APIs'
formats (course chapter 01, "the Host aggregates").

Each server names its tools on its own, so two servers may both offer ``search``. The Host gives every
tool a collision-free, model-legal name (``weather__get_forecast``, :func:`qualify`) and keeps the
MCP ``Tool`` object beside it (:class:`HostTool`). MCP does not say how a Host talks to its model:
the converters turn the same tools and conversation into OpenAI chat-completions or Anthropic
Messages JSON (no network), and :func:`result_text` is what the model reads of a ``CallToolResult``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mcp_sim.roles.model import ChatMessage, ToolSpec


@dataclass(frozen=True)
class HostTool:
    """A tool of one server, as the Host aggregates it."""

    server: str
    tool: Mapping[str, Any]
    """The MCP ``Tool`` object exactly as ``tools/list`` returned it."""
    qualified_name: str
    """The collision-free name the model sees (``weather__get_forecast``)."""

    @property
    def name(self) -> str:
        return str(self.tool["name"])

    @property
    def annotations(self) -> Mapping[str, Any]:
        return self.tool.get("annotations") or {}

    def spec(self) -> ToolSpec:
        description = self.tool.get("description") or self.tool.get("title") or self.name
        schema = self.tool.get("inputSchema") or {"type": "object", "properties": {}}
        return ToolSpec(self.qualified_name, str(description), schema)


_MODEL_NAME_RE = re.compile(r"[^A-Za-z0-9_-]")
MAX_TOOL_NAME = 64
"""Both OpenAI and Anthropic accept tool names matching ``^[a-zA-Z0-9_-]{1,64}$``."""


def qualify(server: str, tool: str, taken: set[str]) -> str:
    """``server__tool``, made legal for model APIs (other characters become ``_``, at most 64) and
    unique among ``taken`` (a numeric suffix if two servers' names collide after cleaning)."""
    base = _MODEL_NAME_RE.sub("_", f"{server}__{tool}")[:MAX_TOOL_NAME]
    name, n = base, 1
    while name in taken:
        n += 1
        suffix = f"_{n}"
        name = base[:MAX_TOOL_NAME - len(suffix)] + suffix
    taken.add(name)
    return name


# --------------------------------------------------------------------------------------------------
# Converting to model APIs (JSON only, no network)
# --------------------------------------------------------------------------------------------------

def to_openai_tools(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """OpenAI chat-completions ``tools``: ``{"type": "function", "function": {name, description,
    parameters}}``, where ``parameters`` is the MCP ``inputSchema``."""
    return [{"type": "function",
             "function": {"name": t.name, "description": t.description, "parameters": dict(t.input_schema)}}
            for t in tools]


def to_anthropic_tools(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """Anthropic Messages ``tools``: ``{name, description, input_schema}``."""
    return [{"name": t.name, "description": t.description, "input_schema": dict(t.input_schema)} for t in tools]


def to_openai_messages(messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
    """The conversation as OpenAI chat-completions ``messages`` (tool results as ``role: "tool"``)."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "tool":
            out.append({"role": "tool", "tool_call_id": m.tool_call_id, "content": m.text})
        elif m.tool_calls:
            out.append({"role": "assistant", "content": m.text or None, "tool_calls": [
                {"id": c.id, "type": "function",
                 "function": {"name": c.name, "arguments": json.dumps(dict(c.arguments), sort_keys=True)}}
                for c in m.tool_calls]})
        else:
            out.append({"role": m.role, "content": m.text})
    return out


def to_anthropic_messages(messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
    """The conversation as Anthropic Messages ``messages`` (tool use/results as content blocks)."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "tool":
            block = {"type": "tool_result", "tool_use_id": m.tool_call_id,
                     "content": [{"type": "text", "text": m.text}], "is_error": m.is_error}
            if out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], list):
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
        elif m.tool_calls:
            blocks: list[dict[str, Any]] = [{"type": "text", "text": m.text}] if m.text else []
            blocks += [{"type": "tool_use", "id": c.id, "name": c.name, "input": dict(c.arguments)}
                       for c in m.tool_calls]
            out.append({"role": "assistant", "content": blocks})
        else:
            out.append({"role": m.role, "content": m.text})
    return out


TOOL_CONVERTERS: dict[str, Callable[[Sequence[ToolSpec]], list[dict[str, Any]]]] = {
    "openai": to_openai_tools, "anthropic": to_anthropic_tools}
MESSAGE_CONVERTERS: dict[str, Callable[[Sequence[ChatMessage]], list[dict[str, Any]]]] = {
    "openai": to_openai_messages, "anthropic": to_anthropic_messages}


def result_text(result: Mapping[str, Any]) -> str:
    """The text a model is shown for a ``CallToolResult``: its text blocks, else its structured content."""
    texts = [c.get("text", "") for c in result.get("content") or [] if isinstance(c, Mapping) and c.get("type") == "text"]
    if texts:
        return "\n".join(texts)
    if "structuredContent" in result:
        return json.dumps(result["structuredContent"], sort_keys=True)
    return ""
