"""The Host's policies: what the model may see, what is reviewed, and what needs the user's
confirmation (course chapter 05, "the Host decides"; spec: Tools, "Security considerations").

Everything a Server says about itself is **untrusted input** to the Host: tool names, descriptions,
schemas and annotations were written by whoever runs the Server. The Host therefore decides with its
own policy, never with the Server's word alone. These are the one model of those decisions: the
:class:`~mcp_sim.roles.host.Host` applies them, and the security labs attack them.

* **exposure** — :class:`ToolPolicy`: which tools the model may see (globs over qualified names,
  servers, read-only), least privilege;
* **review** — ``Host(tool_review=careful_reviewer)``: a definition reaches the model only after it
  was reviewed, and a *changed* definition is reviewed again, because approval is pinned to a
  :func:`fingerprint`, not a name (:class:`ToolReview` records each verdict);
* **namespacing** — two Servers may both offer ``send_email``; the model sees
  ``mail__send_email`` and ``helper__send_email`` (:func:`mcp_sim.roles.host_tools.qualify`);
* **confirmation** — :class:`ApprovalPolicy`: sensitive or destructive calls wait for the user.
  ``readOnlyHint`` and ``destructiveHint`` are *hints*: "clients MUST consider tool annotations to
  be untrusted unless they come from trusted servers";
* **sampling** — :class:`SamplingBudget`: how much of the Host's model servers may spend.

:func:`hidden_instructions` is the one definition of "text in a description that tries to steer the
model": the scripted model obeys exactly what it finds, and the reviewer flags exactly that, so the
labs' model and reviewer can never disagree about what a poisoned description is.
"""

from __future__ import annotations

import fnmatch
import hashlib
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from mcp_sim.security.request_state import canonical_json


def fingerprint(tool: Mapping[str, Any]) -> str:
    """A digest of everything in a tool definition the model reads or the Host decides on.
    Any change to the name, description, schemas or annotations changes the fingerprint."""
    keys = ("name", "title", "description", "inputSchema", "outputSchema", "annotations")
    return hashlib.sha256(canonical_json({k: tool.get(k) for k in keys}).encode()).hexdigest()[:16]


# --- poisoned descriptions ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Directive:
    """An instruction to the model found inside a tool description."""

    read_path: str | None
    """A file the description tells the model to read first."""
    into_argument: str | None
    """The argument the description tells the model to put that content into."""
    text: str


_HIDDEN_BLOCK = re.compile(r"<(?P<tag>[A-Za-z_]+)>(?P<body>.*?)</(?P=tag)>", re.S)
_READ = re.compile(r"\bread\s+(?:the\s+file\s+)?(?P<path>/[\w./-]+)", re.I)
_INTO = re.compile(r"\b(?:as|in|into)\s+(?:the\s+)?[`'\"]?(?P<arg>[A-Za-z_]\w*)[`'\"]?\s+(?:argument|parameter|field)",
                   re.I)
_STEERING = re.compile(r"\b(before (?:using|calling)|always|do not (?:tell|mention)|don't (?:tell|mention)|"
                       r"ignore (?:previous|all)|instead of|never reveal)\b", re.I)


def hidden_instructions(description: str | None) -> list[Directive]:
    """The directives aimed at the model in ``description`` (empty for an honest description).

    A directive is a hidden markup block (``<IMPORTANT>…</IMPORTANT>``) or a steering sentence
    ("Before using this tool…", "do not tell the user…"); from each the file it wants read and the
    argument it wants filled are extracted, when it names them."""
    if not description:
        return []
    chunks = [m.group("body") for m in _HIDDEN_BLOCK.finditer(description)]
    chunks += [s for s in re.split(r"(?<=[.!])\s+", _HIDDEN_BLOCK.sub(" ", description)) if _STEERING.search(s)]
    found = []
    for chunk in chunks:
        read = _READ.search(chunk)
        into = _INTO.search(chunk)
        found.append(Directive(read.group("path") if read else None, into.group("arg") if into else None,
                               " ".join(chunk.split())))
    return found


def careful_reviewer(server: str, tool: Mapping[str, Any]) -> bool:
    """A reviewer who reads the whole description and refuses one that gives the model orders."""
    return not hidden_instructions(tool.get("description"))


# --- the policies the Host applies -------------------------------------------------------------------

class PolicyTool(Protocol):
    """A tool as the policies see it: whose it is, its names, its (untrusted) annotations.
    The Host's :class:`~mcp_sim.roles.host_tools.HostTool` is one."""

    @property
    def server(self) -> str: ...
    @property
    def qualified_name(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def annotations(self) -> Mapping[str, Any]: ...



@dataclass(frozen=True)
class ToolPolicy:
    """Which tools the model may see. Patterns are shell-style globs over qualified names
    (``issues__*``); ``deny`` wins over ``allow``. Exposing fewer tools is least privilege: a tool the
    model never sees is a tool a prompt injection cannot make it call."""

    allow: tuple[str, ...] = ("*",)
    deny: tuple[str, ...] = ()
    servers: tuple[str, ...] | None = None
    """Only these servers' tools (``None`` = all)."""
    read_only: bool = False
    """Only tools annotated ``readOnlyHint: true`` (by a trusted server)."""

    def permits(self, tool: PolicyTool, *, trusted: bool = False) -> bool:
        if self.servers is not None and tool.server not in self.servers:
            return False
        if any(fnmatch.fnmatchcase(tool.qualified_name, p) for p in self.deny):
            return False
        if self.read_only and not (trusted and tool.annotations.get("readOnlyHint") is True):
            return False
        return any(fnmatch.fnmatchcase(tool.qualified_name, p) for p in self.allow)


@dataclass(frozen=True)
class ApprovalPolicy:
    """When the user must approve a tool call before it is sent.

    ``mode``: ``"always"`` (every call), ``"unless-read-only"`` (skip only tools a *trusted* server
    annotates ``readOnlyHint: true``), ``"destructive-only"`` (ask only for possibly destructive ones).
    In every mode a possibly destructive tool is asked about. Per the spec, ``destructiveHint``
    defaults to true when a tool is not read-only, so a tool without annotations counts as destructive;
    and annotations from a server not in ``trusted_servers`` are ignored.

    ``always_confirm``: glob patterns over qualified (``bank__transfer_*``) or bare tool names of
    high-risk tools the user confirms *whatever* the mode and the annotations say — payments,
    deletions, messages sent in the user's name. A server's own elicitation never replaces this."""

    mode: Literal["always", "unless-read-only", "destructive-only"] = "always"
    trusted_servers: frozenset[str] = frozenset()
    always_confirm: tuple[str, ...] = ()

    def is_high_risk(self, tool: PolicyTool) -> bool:
        """True when ``tool`` matches one of the :attr:`always_confirm` patterns."""
        return any(fnmatch.fnmatchcase(tool.qualified_name, p) or fnmatch.fnmatchcase(tool.name, p)
                   for p in self.always_confirm)

    def reasons(self, tool: PolicyTool) -> tuple[str, ...]:
        """Why this call needs approval (empty = it may run without asking)."""
        trusted = tool.server in self.trusted_servers
        ann = tool.annotations if trusted else {}
        read_only = ann.get("readOnlyHint") is True
        destructive = tool.annotations.get("destructiveHint") is True or (
            not read_only and ann.get("destructiveHint", True) is not False)
        out: list[str] = []
        if self.is_high_risk(tool):
            out.append("high-risk: the Host always asks the user")
        if destructive:
            out.append("destructive" if tool.annotations.get("destructiveHint") is True
                       else "may be destructive (no trusted annotations say otherwise)")
        if self.mode == "always":
            out.append("policy: always ask")
        elif self.mode == "unless-read-only" and not read_only and not out:
            out.append("policy: not read-only")
        return tuple(out)


@dataclass
class SamplingBudget:
    """How much of the Host's model the servers may use through sampling: a number of calls and a
    number of tokens (words, in this simulator). Sampling is deprecated in 2026-07-28, and a Host that
    keeps it for compatibility must still bound what servers can spend."""

    max_calls: int = 3
    max_tokens: int = 400
    calls: int = 0
    tokens: int = 0

    def remaining_tokens(self) -> int:
        return max(0, self.max_tokens - self.tokens)


ToolReviewer = Callable[[str, Mapping[str, Any]], "bool | Awaitable[bool]"]
"""``(server, tool definition) -> approve?`` — whoever reviews a new or changed definition before the
model sees it (a person, an admin policy, :func:`~mcp_sim.security.host_policy.careful_reviewer`)."""


@dataclass(frozen=True)
class ToolReview:
    """One review of one definition: which, why it was shown (``new`` or ``changed``), the verdict."""

    server: str
    tool: str
    status: Literal["new", "changed"]
    approved: bool
    fingerprint: str
