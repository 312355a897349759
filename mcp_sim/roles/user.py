"""The user and the approvers (course chapter 01, roles and the complete call; chapter 04, elicitation).

The user is the person in front of the Host. MCP never talks to them directly: a server that needs
their input asks the client (legacy ``elicitation/create``, or an ``inputRequests`` entry in
2026-07-28), the client asks its Host, and the Host asks the user. Approving a tool call is the Host's
own business — "user authorization happens at the Host layer, before the actual call is sent".

Everything here is pluggable so notebooks can swap a scripted user for a widget:

* :class:`Approver` — yes or no for a tool call: :class:`AlwaysApprove`, :class:`NeverApprove`,
  :class:`ScriptedApprover` (answers in order), :class:`CallableApprover` (a function or a widget);
* :class:`User` — answers elicitations: :class:`ScriptedUser` (answers prepared in advance) and
  :class:`InteractiveUser` (asks a function, e.g. ``input`` or a widget, field by field).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, NamedTuple, Protocol, runtime_checkable


class ApprovalRequest(NamedTuple):
    """What the Host shows the user before a tool call runs (an immutable record, made for every
    call that needs approval)."""

    server: str
    tool: str
    """The tool's own name on its server."""
    qualified_name: str
    """The name the model used (``issues__create_issue``)."""
    arguments: Mapping[str, Any]
    reasons: tuple[str, ...] = ()
    """Why approval is needed (``"destructive"``, ``"policy: always ask"`` …)."""
    annotations: Mapping[str, Any] = MappingProxyType({})

    def describe(self) -> str:
        """The question, in words."""
        args = ", ".join(f"{k}={v!r}" for k, v in self.arguments.items())
        why = f" [{'; '.join(self.reasons)}]" if self.reasons else ""
        return f"Allow {self.server} to run {self.tool}({args})?{why}"

    def trace_data(self) -> dict[str, Any]:
        """What the trace keeps of the question besides its words."""
        return {"approval": self.qualified_name, "arguments": self.arguments}


@runtime_checkable
class Approver(Protocol):
    """Decides whether one tool call may run."""

    async def approve(self, request: ApprovalRequest) -> bool: ...


class AlwaysApprove:
    """Approve everything (for demos; a real Host should not ship this)."""

    async def approve(self, request: ApprovalRequest) -> bool:
        return True


class NeverApprove:
    """Refuse everything: the model's tool calls never reach a server."""

    async def approve(self, request: ApprovalRequest) -> bool:
        return False


class ScriptedApprover:
    """Answers from a list, in order (``[True, False]``); refuses once the list runs out, because an
    unanswered approval dialog must never count as "yes"."""

    def __init__(self, answers: Sequence[bool]) -> None:
        self.answers = list(answers)
        self.asked: list[ApprovalRequest] = []

    async def approve(self, request: ApprovalRequest) -> bool:
        self.asked.append(request)
        return self.answers.pop(0) if self.answers else False


class CallableApprover:
    """Ask a function (sync or async) — a notebook widget, ``input``, a test probe."""

    def __init__(self, decide: Callable[[ApprovalRequest], bool | Awaitable[bool]]) -> None:
        self.decide = decide

    async def approve(self, request: ApprovalRequest) -> bool:
        answer = self.decide(request)
        if inspect.isawaitable(answer):
            answer = await answer
        return bool(answer)


# --------------------------------------------------------------------------------------------------
# Users who answer elicitations
# --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ElicitationPrompt:
    """A server's question, as the Host shows it: which server asks, its message, and either a form
    (``requested_schema``, a flat JSON Schema object) or a URL to open (URL mode, 2025-11-25+)."""

    server: str
    message: str
    requested_schema: Mapping[str, Any] = field(default_factory=dict)
    mode: str = "form"
    url: str | None = None

    @classmethod
    def from_params(cls, server: str, params: Mapping[str, Any]) -> ElicitationPrompt:
        return cls(server, str(params.get("message", "")), params.get("requestedSchema") or {},
                   str(params.get("mode", "form")), params.get("url"))


@runtime_checkable
class User(Protocol):
    """Answers a server's elicitation with an ``ElicitResult`` (``action`` accept/decline/cancel)."""

    async def elicit(self, prompt: ElicitationPrompt) -> dict[str, Any]: ...


def _defaults(schema: Mapping[str, Any]) -> dict[str, Any]:
    props = schema.get("properties") or {}
    return {k: v["default"] for k, v in props.items() if isinstance(v, Mapping) and "default" in v}


class ScriptedUser:
    """A user whose answers are written in advance.

    ``answers`` is a list consumed in order; each item is the form content (a dict), or the string
    ``"decline"``/``"cancel"``, or a function of the prompt. With the list exhausted the user fills
    the form from the schema's defaults, or declines if there are none. ``approvals`` makes the same
    object usable as an :class:`Approver`."""

    def __init__(self, answers: Sequence[Any] = (), *, approvals: Sequence[bool] = (),
                 name: str = "user") -> None:
        self.name = name
        self.answers = list(answers)
        self.approvals = list(approvals)
        self.prompts: list[ElicitationPrompt] = []

    async def elicit(self, prompt: ElicitationPrompt) -> dict[str, Any]:
        self.prompts.append(prompt)
        answer = self.answers.pop(0) if self.answers else None
        if callable(answer):
            answer = answer(prompt)
        if prompt.mode == "url":
            # In URL mode the user completes the flow in a browser; the client only reports consent.
            return {"action": "decline"} if answer in ("decline", False) else {"action": "accept"}
        if answer in ("decline", "cancel"):
            return {"action": answer}
        if answer is None:
            defaults = _defaults(prompt.requested_schema)
            return {"action": "accept", "content": defaults} if defaults else {"action": "decline"}
        return {"action": "accept", "content": dict(answer)}

    async def approve(self, request: ApprovalRequest) -> bool:
        return self.approvals.pop(0) if self.approvals else False


def _convert(value: str, prop: Mapping[str, Any]) -> Any:
    kind = prop.get("type")
    if kind == "integer":
        return int(value)
    if kind == "number":
        return float(value)
    if kind == "boolean":
        return value.strip().lower() in ("y", "yes", "true", "1")
    return value


class InteractiveUser:
    """A user asked field by field through ``ask(question) -> answer`` (sync or async): ``input`` in a
    terminal, a widget in a notebook. An empty answer to the first question declines."""

    def __init__(self, ask: Callable[[str], str | Awaitable[str]]) -> None:
        self.ask = ask

    async def _ask(self, question: str) -> str:
        answer = self.ask(question)
        if inspect.isawaitable(answer):
            answer = await answer
        return str(answer)

    async def elicit(self, prompt: ElicitationPrompt) -> dict[str, Any]:
        if prompt.mode == "url":
            answer = await self._ask(f"{prompt.server}: {prompt.message}\nOpen {prompt.url}? [y/N] ")
            return {"action": "accept" if answer.strip().lower() in ("y", "yes") else "decline"}
        props = prompt.requested_schema.get("properties") or {}
        content: dict[str, Any] = {}
        for i, (key, prop) in enumerate(props.items()):
            title = prop.get("title") or prop.get("description") or key
            answer = await self._ask(f"{prompt.server}: {prompt.message}\n{title}: ")
            if not answer and i == 0:
                return {"action": "decline"}
            if answer:
                content[key] = _convert(answer, prop)
        return {"action": "accept", "content": content}

    async def approve(self, request: ApprovalRequest) -> bool:
        answer = await self._ask(request.describe() + " [y/N] ")
        return answer.strip().lower() in ("y", "yes")
