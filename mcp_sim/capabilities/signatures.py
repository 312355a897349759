"""How a plain Python function becomes an MCP handler (course chapter 05, "What servers offer").

A tool, prompt, resource template or completion is declared by writing an ordinary function. This
module reads its signature once: which parameter (if any) wants the request's :class:`Context`, which
ones are the MCP arguments, and their type hints. Handlers may be ``def`` or ``async def``; the
server awaits either the same way.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class HandlerSignature:
    """What the server needs to know to call ``fn``."""

    fn: Callable[..., Any]
    context_param: str | None
    """The parameter that receives the :class:`~mcp_sim.roles.context.Context` (excluded from schemas)."""
    params: tuple[inspect.Parameter, ...]
    """The MCP-visible parameters, in declaration order."""
    hints: Mapping[str, Any]
    """Resolved type hints (``Any`` where none was written)."""
    return_hint: Any

    async def call(self, arguments: Mapping[str, Any], ctx: Any) -> Any:
        """Call the function with ``arguments`` (and ``ctx`` if it asked for one); await it if async."""
        kwargs = dict(arguments)
        if self.context_param is not None:
            kwargs[self.context_param] = ctx
        value = self.fn(**kwargs)
        if type(value) not in _NEVER_AWAITABLE and inspect.isawaitable(value):
            value = await value
        return value


_NEVER_AWAITABLE = frozenset({str, int, float, bool, dict, list, tuple, type(None)})
"""What plain functions usually return: asking ``inspect.isawaitable`` about these is a waste."""


def _is_context(name: str, hint: Any) -> bool:
    if name == "ctx" or name == "context":
        return True
    hint_name = hint if isinstance(hint, str) else getattr(hint, "__name__", "")
    return hint_name == "Context"


def read_signature(fn: Callable[..., Any]) -> HandlerSignature:
    """Inspect ``fn`` once. ``*args``/``**kwargs`` are not allowed: every argument needs a name."""
    sig = inspect.signature(fn)
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception:  # unresolvable forward references: fall back to the raw annotations
        hints = {k: v for k, v in getattr(fn, "__annotations__", {}).items()}
    context_param = None
    params = []
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise TypeError(f"{fn.__name__}: *args/**kwargs cannot become MCP arguments; name each one")
        if context_param is None and _is_context(p.name, hints.get(p.name, p.annotation)):
            context_param = p.name
            continue
        params.append(p)
    resolved = {p.name: hints.get(p.name, Any) for p in params}
    return HandlerSignature(fn, context_param, tuple(params), resolved, hints.get("return", inspect.Signature.empty))


def first_doc_paragraph(fn: Callable[..., Any]) -> str | None:
    """The docstring's first paragraph: what a tool or prompt says about itself."""
    doc = inspect.getdoc(fn)
    if not doc:
        return None
    return doc.split("\n\n", 1)[0].replace("\n", " ").strip() or None
