"""Prompts: reusable message templates the user picks (spec "Server features / Prompts"; course
chapter 05).

A prompt is declared from a function whose parameters are its arguments (all strings on the wire;
required when they have no default) and whose return value becomes the messages: a string is one user
message, a list gives several (strings, ``(role, text)`` pairs or ``PromptMessage`` objects).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcp_sim.capabilities.completion import Completer
from mcp_sim.capabilities.fields import for_revision
from mcp_sim.capabilities.pagination import page_result
from mcp_sim.capabilities.signatures import HandlerSignature, first_doc_paragraph, read_signature
from mcp_sim.capabilities.tools import content_blocks
from mcp_sim.protocol.errors import invalid_params

if TYPE_CHECKING:
    from mcp_sim.capabilities.context import Context


@dataclass
class PromptDefinition:
    """One prompt: its public description plus the function that fills it in."""

    name: str
    handler: HandlerSignature
    arguments: list[dict[str, Any]]
    title: str | None = None
    description: str | None = None
    icons: list[dict[str, Any]] | None = None
    completions: dict[str, Completer] = field(default_factory=dict)
    meta: dict[str, Any] | None = None

    def to_json(self, revision: str) -> dict[str, Any]:
        obj = {"name": self.name, "title": self.title, "description": self.description,
               "arguments": [for_revision("PromptArgument", a, revision) for a in self.arguments] or None,
               "icons": self.icons, "_meta": self.meta}
        return for_revision("Prompt", obj, revision)


def prompt_from_function(fn: Callable[..., Any], *, name: str | None = None, title: str | None = None,
                         description: str | None = None, icons: Sequence[Mapping[str, Any]] | None = None,
                         complete: Mapping[str, Completer] | None = None,
                         argument_descriptions: Mapping[str, str] | None = None) -> PromptDefinition:
    """Build a :class:`PromptDefinition` (the ``@server.prompt()`` decorator)."""
    sig = read_signature(fn)
    descriptions = argument_descriptions or {}
    arguments = []
    for p in sig.params:
        arg: dict[str, Any] = {"name": p.name}
        if p.name in descriptions:
            arg["description"] = descriptions[p.name]
        arg["required"] = p.default is p.empty
        arguments.append(arg)
    unknown = set(complete or {}) - {a["name"] for a in arguments}
    if unknown:
        raise ValueError(f"prompt {fn.__name__}: completion for unknown argument(s) {sorted(unknown)}")
    return PromptDefinition(name=name or fn.__name__, handler=sig, arguments=arguments, title=title,
                            description=description if description is not None else first_doc_paragraph(fn),
                            icons=[dict(i) for i in icons] if icons else None, completions=dict(complete or {}))


def prompt_message(item: Any) -> dict[str, Any]:
    """One ``PromptMessage`` from a string (a user message), a ``(role, text)`` pair or a dict."""
    if hasattr(item, "to_json"):
        item = item.to_json()
    if isinstance(item, str):
        return {"role": "user", "content": {"type": "text", "text": item}}
    if isinstance(item, tuple) and len(item) == 2:
        role, content = item
        return {"role": role, "content": content_blocks(content)[0]}
    if isinstance(item, Mapping) and "role" in item and "content" in item:
        return dict(item)
    raise TypeError(f"cannot turn {item!r} into a prompt message")


def get_prompt_result(value: Any, description: str | None) -> dict[str, Any]:
    """A ``GetPromptResult`` from what the prompt function returned."""
    if isinstance(value, Mapping) and "messages" in value:
        return dict(value)
    items = value if isinstance(value, list) else [value]
    result: dict[str, Any] = {}
    if description:
        result["description"] = description
    result["messages"] = [prompt_message(i) for i in items]
    return result


async def list_prompts(ctx: Context) -> dict[str, Any]:
    """``prompts/list``."""
    server = ctx.server
    result, _ = page_result("prompts", list(server.prompts.values()), ctx.params.get("cursor"), server.page_size,
                            "prompts", lambda p: p.to_json(ctx.revision))
    result.update(ctx.cache_fields(private=server.per_caller))
    return result


async def get_prompt(ctx: Context) -> dict[str, Any]:
    """``prompts/get``: fill the prompt in. Unknown prompt or missing required argument: ``-32602``."""
    name = ctx.params.get("name")
    prompt = ctx.server.prompts.get(name) if isinstance(name, str) else None
    if prompt is None:
        raise invalid_params(f"Unknown prompt: {name}", revision=ctx.revision)
    arguments = ctx.params.get("arguments") or {}
    if not isinstance(arguments, Mapping):
        raise invalid_params("prompts/get arguments must be an object of strings", revision=ctx.revision)
    missing = [a["name"] for a in prompt.arguments if a["required"] and a["name"] not in arguments]
    if missing:
        raise invalid_params(f"Missing required argument(s) for prompt {name}: {', '.join(missing)}",
                             revision=ctx.revision)
    known = {a["name"] for a in prompt.arguments}
    value = await prompt.handler.call({k: v for k, v in arguments.items() if k in known}, ctx)
    return get_prompt_result(value, prompt.description)
