"""The model: where an LLM plugs into the Host (course chapters 00 and 01: the complete call).

MCP does not define how a Host talks to its model. The Host shows the model the conversation and a
list of tools (converted to the model API's own tool format), the model answers with either **tool
calls** or a **final answer**, and the Host — not the model — decides whether each call may run.

:class:`Model` is the whole contract. A real LLM plugs in by implementing it (convert the
conversation with :func:`mcp_sim.roles.host_tools.to_openai_tools` or ``to_anthropic_tools``, call the
provider's API, turn its tool calls into :class:`ToolCall`). The simulator ships
:class:`ScriptedModel`, a deterministic stand-in whose "intelligence" is a list of readable rules —
a regular expression over the user's words, the tool it picks and how it fills the arguments — so
every run of a story gives the same trace.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

Role = Literal["user", "assistant", "tool"]


@dataclass(frozen=True)
class ToolSpec:
    """A tool as the Host offers it to the model: a model-safe name (``weather__get_forecast``), a
    description and a JSON Schema for the arguments. The model never sees which server it lives on."""

    name: str
    description: str
    input_schema: Mapping[str, Any]


@dataclass(frozen=True)
class ToolCall:
    """A tool call the model proposes. Proposing is all a model can do: the Host approves and runs it."""

    id: str
    name: str
    arguments: Mapping[str, Any]


@dataclass(frozen=True)
class ChatMessage:
    """One turn of the conversation, in a neutral form the Host converts to each model API."""

    role: Role
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    """For ``role="tool"``: which call this is the result of."""
    is_error: bool = False


@dataclass(frozen=True)
class ModelTurn:
    """What the model answered: tool calls to make, or (when there are none) the final text."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()

    @property
    def is_final(self) -> bool:
        return not self.tool_calls


@runtime_checkable
class Model(Protocol):
    """What the Host needs from a model. Implement these two methods to plug in a real LLM."""

    name: str

    async def respond(self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> ModelTurn:
        """Read the conversation and the tools on offer; propose tool calls or give the final answer."""
        ...

    async def sample(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """Answer a server's ``sampling/createMessage`` (the Host has already checked its budget)."""
        ...


# --------------------------------------------------------------------------------------------------
# The scripted model
# --------------------------------------------------------------------------------------------------

Arguments = Mapping[str, Any] | Callable[[re.Match[str]], Mapping[str, Any]]


@dataclass(frozen=True)
class ToolRule:
    """"When the user says something matching ``pattern``, call ``tool`` with ``arguments``."

    ``arguments`` is a mapping whose string values may use the pattern's named groups
    (``{"city": "{city}"}``), or a function of the match. ``tool`` is the tool's own name; the rule
    matches any offered tool with that name or ending in ``__<tool>`` (the Host's server prefix).
    ``answer`` composes the final answer from the tool's result text (``{result}``) and the groups, or
    is a function ``(result_text, groups) -> str``."""

    pattern: str
    tool: str
    arguments: Arguments = field(default_factory=dict)
    answer: str | Callable[[str, dict[str, str]], str] = "{result}"

    def compose(self, result: str, m: re.Match[str]) -> str:
        groups = {k: (v or "").strip() for k, v in m.groupdict().items()}
        if callable(self.answer):
            return self.answer(result, groups)
        return self.answer.format(result=result, **groups)

    def match(self, text: str) -> re.Match[str] | None:
        return re.search(self.pattern, text, flags=re.IGNORECASE | re.DOTALL)

    def arguments_for(self, m: re.Match[str]) -> dict[str, Any]:
        if callable(self.arguments):
            return dict(self.arguments(m))
        groups = {k: (v or "").strip() for k, v in m.groupdict().items()}
        out: dict[str, Any] = {}
        for key, value in self.arguments.items():
            out[key] = value.format(**groups) if isinstance(value, str) else value
        return out


@dataclass(frozen=True)
class SamplingRule:
    """"When a server's sampling request mentions ``pattern``, answer ``reply``" (``{text}`` = the
    request's last user message)."""

    pattern: str
    reply: str


def find_tool(tools: Sequence[ToolSpec], name: str) -> ToolSpec | None:
    """The offered tool called ``name`` or ``<server>__name``; ``None`` when the Host did not offer it."""
    for tool in tools:
        if tool.name == name or tool.name.endswith(f"__{name}"):
            return tool
    return None


def sampled_text(params: Mapping[str, Any]) -> str:
    """The text of the last message in a ``sampling/createMessage`` request."""
    messages = params.get("messages") or []
    for message in reversed(messages):
        content = message.get("content")
        items = content if isinstance(content, list) else [content]
        texts = [c.get("text", "") for c in items if isinstance(c, Mapping) and c.get("type") == "text"]
        if texts:
            return " ".join(texts)
    return ""


class ScriptedModel:
    """A deterministic stand-in for an LLM: readable rules instead of weights.

    Each user message is matched against ``rules`` in order; the first rule whose tool is on offer
    proposes one tool call. When tool results come back, the rule's ``answer`` template composes the
    final answer. If no rule matches, the model answers ``fallback``."""

    def __init__(self, rules: Sequence[ToolRule] = (), *, name: str = "scripted-model",
                 sampling_rules: Sequence[SamplingRule] = (),
                 fallback: str = "I can't help with that using the tools I have.") -> None:
        self.name = name
        self.rules = list(rules)
        self.sampling_rules = list(sampling_rules)
        self.fallback = fallback
        self._calls = 0

    def _next_call_id(self) -> str:
        self._calls += 1
        return f"call_{self._calls}"

    async def respond(self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> ModelTurn:
        user_index = max((i for i, m in enumerate(messages) if m.role == "user"), default=-1)
        if user_index < 0:
            return ModelTurn(self.fallback)
        request = messages[user_index].text
        since = list(messages[user_index + 1:])
        results = [m for m in since if m.role == "tool"]
        for rule in self.rules:
            m = rule.match(request)
            if m is None:
                continue
            tool = find_tool(tools, rule.tool)
            if tool is None:
                continue
            if not results:
                return ModelTurn(tool_calls=(ToolCall(self._next_call_id(), tool.name, rule.arguments_for(m)),))
            text = "\n".join(r.text for r in results)
            if any(r.is_error for r in results):
                return ModelTurn(f"I could not complete that: {text}")
            return ModelTurn(rule.compose(text, m))
        return ModelTurn(self.fallback)

    async def sample(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """Answer ``sampling/createMessage`` with a ``CreateMessageResult`` from ``sampling_rules``."""
        text = sampled_text(params)
        reply = f"(summary) {text[:80]}"
        for rule in self.sampling_rules:
            if re.search(rule.pattern, text, flags=re.IGNORECASE):
                reply = rule.reply.format(text=text)
                break
        max_tokens = params.get("maxTokens")
        if isinstance(max_tokens, int) and max_tokens > 0:
            reply = " ".join(reply.split()[:max_tokens])
        return {"role": "assistant", "content": {"type": "text", "text": reply}, "model": self.name,
                "stopReason": "endTurn"}


def count_tokens(text: str) -> int:
    """A crude, deterministic token count (words) used for sampling budgets."""
    return len(text.split())
