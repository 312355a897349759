"""Completion: suggestions for prompt arguments and URI-template parameters (spec "Server utilities /
Completion"; course chapter 05).

When a user types the ``destination`` of a prompt or the ``{city}`` of a resource template, the client
may send ``completion/complete`` with what was typed so far and the arguments already chosen; the
server answers with at most 100 values, the ``total`` it knows of and ``hasMore``. A completer is a
list of candidates (matched by case-insensitive prefix) or a function of ``value`` (and optionally
``arguments``, the values already resolved, and ``ctx``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

from mcp_sim.capabilities.signatures import read_signature
from mcp_sim.protocol.errors import invalid_params

if TYPE_CHECKING:
    from mcp_sim.capabilities.context import Context

Completer: TypeAlias = Sequence[str] | Callable[..., Any]
MAX_VALUES = 100


async def complete_values(completer: Completer, value: str, arguments: Mapping[str, str],
                          ctx: Context) -> list[str]:
    """Run one completer and return its candidates for ``value``."""
    if callable(completer):
        sig = read_signature(completer)
        offered = {"value": value, "arguments": dict(arguments)}
        kwargs = {p.name: offered[p.name] for p in sig.params if p.name in offered}
        if not kwargs and sig.params:
            kwargs = {sig.params[0].name: value}
        found = await sig.call(kwargs, ctx)
        return [str(v) for v in (found or [])]
    needle = value.casefold()
    return [c for c in completer if c.casefold().startswith(needle)]


def completion_result(values: Sequence[str]) -> dict[str, Any]:
    """A ``CompleteResult``: at most 100 values, with ``total`` and ``hasMore``."""
    shown = list(values[:MAX_VALUES])
    return {"completion": {"values": shown, "total": len(values), "hasMore": len(values) > len(shown)}}


async def complete(ctx: Context) -> dict[str, Any]:
    """``completion/complete`` for a ``ref/prompt`` argument or a ``ref/resource`` template parameter."""
    params = ctx.params
    ref = params.get("ref")
    argument = params.get("argument")
    if not isinstance(ref, Mapping) or not isinstance(argument, Mapping) \
            or not isinstance(argument.get("name"), str) or not isinstance(argument.get("value"), str):
        raise invalid_params("completion/complete needs ref {type, name|uri} and argument {name, value}",
                             revision=ctx.revision)
    context = params.get("context") or {}
    resolved = context.get("arguments") or {} if isinstance(context, Mapping) else {}
    server = ctx.server
    completers: Mapping[str, Completer]
    if ref.get("type") == "ref/prompt":
        prompt = server.prompts.get(ref.get("name"))  # type: ignore[arg-type]
        if prompt is None:
            raise invalid_params(f"Unknown prompt: {ref.get('name')}", revision=ctx.revision)
        completers = prompt.completions
    elif ref.get("type") == "ref/resource":
        template = server.templates.get(ref.get("uri"))  # type: ignore[arg-type]
        if template is None:
            # A static resource has no parameters to complete: an empty answer, not an error.
            return completion_result([])
        completers = template.completions
    else:
        raise invalid_params(f"Unknown completion reference type: {ref.get('type')!r}", revision=ctx.revision)
    completer = completers.get(argument["name"])
    if completer is None:
        return completion_result([])
    return completion_result(await complete_values(completer, argument["value"], resolved, ctx))
