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
* **sampling** — :class:`SamplingBudget`: how much of the Host's model servers may spend;
  :class:`SamplingMediator`: what the user sees of a request, and where its answer goes.

:func:`review_definition` is the Host's review: it reads **every** string in a definition — name,
title, description, each parameter's description, enum values and defaults, the output schema,
annotations — after undoing the tricks that hide text from a person (invisible format characters,
Unicode "tag" characters, compatibility forms), and reports general signs of text aimed at the model
rather than at a reader: orders, secrecy, markup blocks, references to files or to *other* tools. It
does not look for one attack's wording; a model that obeys hidden text (the labs have one) is written
separately, so a lab's reviewer is not right by construction. :func:`hidden_instructions` is the
older, narrower parser of one description, kept for the exercises that use it.
"""

from __future__ import annotations

import fnmatch
import hashlib
import re
import unicodedata
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
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


def definition_texts(tool: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Every string in a tool definition, with where it sits (``inputSchema.properties.to.description``):
    keys and values alike, because a model reads a parameter's *name* and its enum values too.
    Only ``_meta`` is left out: it is for the client, never shown to the model."""
    found: list[tuple[str, str]] = []

    def walk(value: Any, where: str) -> None:
        if isinstance(value, str):
            found.append((where, value))
        elif isinstance(value, Mapping):
            for key, item in value.items():
                if where == "" and key == "_meta":
                    continue
                found.append((f"{where}.{key}".lstrip(".") + " (key)", str(key)))
                walk(item, f"{where}.{key}".lstrip("."))
        elif isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                walk(item, f"{where}[{i}]")

    walk(tool, "")
    return found


def reveal(text: str) -> str:
    """``text`` as a model would read it: Unicode tag characters (U+E0020…U+E007E, invisible on screen)
    turned back into the ASCII they encode, other invisible format characters dropped, compatibility
    forms (full-width letters …) folded by NFKC."""
    out = []
    for ch in text:
        code = ord(ch)
        if 0xE0020 <= code <= 0xE007E:
            out.append(chr(code - 0xE0000))
        elif unicodedata.category(ch) != "Cf":
            out.append(ch)
    return unicodedata.normalize("NFKC", "".join(out))


_SIGNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("an order to the model", re.compile(
        r"\b(before|after|when(ever)?)\s+(you\s+)?(us|call|invok|run)\w*\b|\b(always|never|must|you should|"
        r"make sure|ignore|instead|override|forget|pretend)\b|\bdo(n't| not)\b", re.I)),
    ("secrecy towards the user", re.compile(r"\b(tell|mention|reveal|show|inform|notify)\w*\b.{0,30}\buser\b|"
                                            r"\b(secret(ly)?|silently|quietly|hidden)\b", re.I)),
    ("a markup block addressed to the model", re.compile(r"<\s*/?\s*[A-Za-z_]+\s*>|\[(system|inst)\]", re.I)),
    ("a file path or credential", re.compile(r"(~|\.\.)?/[\w.-]+/[\w./-]+|\b(ssh|id_rsa|id_ed25519|\.env|"
                                             r"credential|password|api[_ ]?key|token)s?\b", re.I)),
    ("a reference to another tool", re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b|\b\w+__\w+\b")),
)


@dataclass(frozen=True)
class Finding:
    """One reason a reviewer refuses a definition: which text, where, and what it looks like."""

    where: str
    sign: str
    text: str


def review_definition(server: str, tool: Mapping[str, Any]) -> list[Finding]:
    """What is wrong with a definition, read in full (empty = nothing suspicious).

    Checks every string :func:`definition_texts` finds: hidden characters (text a person reviewing
    the tool cannot see), then the general signs of text written for the model — orders, secrecy,
    markup blocks, paths and credentials, and names of tools other than this tool and its own
    parameters (one server's text must not talk about another server's tools)."""
    own = {str(tool.get("name", ""))}
    schema = tool.get("inputSchema")
    if isinstance(schema, Mapping) and isinstance(schema.get("properties"), Mapping):
        own |= set(schema["properties"])
    findings: list[Finding] = []
    for where, text in definition_texts(tool):
        visible = reveal(text)
        if visible != text:
            findings.append(Finding(where, "hidden or disguised characters", visible))
        if where.endswith("(key)"):
            continue
        for sign, pattern in _SIGNS:
            for match in pattern.finditer(visible):
                if sign == "a reference to another tool" and match.group(0) in own:
                    continue
                findings.append(Finding(where, sign, " ".join(visible.split())[:120]))
                break
    return findings


def careful_reviewer(server: str, tool: Mapping[str, Any]) -> bool:
    """A reviewer who reads every string of the definition (:func:`review_definition`) and approves it
    only when nothing in it is aimed at the model."""
    return not review_definition(server, tool)


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

    **High risk is decided by what a tool does, not by its name.** The Host's own risk list,
    ``high_risk_servers``, names the servers whose actions matter — the bank, the mail account, the
    production database: every tool of theirs that a trusted annotation does not declare read-only is
    confirmed, *whatever* it is called and whatever the mode. Hints can only raise the risk: a tool
    annotated ``destructiveHint: true`` or ``openWorldHint: true`` by anybody is confirmed too.
    ``always_confirm`` (globs over qualified or bare names) adds single tools by name; on its own it is
    not a policy, because the same action under another name would slip past it. A server's own
    elicitation never replaces this confirmation: the server writes the question."""

    mode: Literal["always", "unless-read-only", "destructive-only"] = "always"
    trusted_servers: frozenset[str] = frozenset()
    always_confirm: tuple[str, ...] = ()
    high_risk_servers: frozenset[str] = frozenset()

    def trusts(self, server: str) -> bool:
        """Whether the Host believes ``server``'s annotations (``trusted_servers`` are glob patterns;
        ``"*"`` — trusting every server — is the mistake the annotations lab shows)."""
        return any(fnmatch.fnmatchcase(server, p) for p in self.trusted_servers)

    def _read_only(self, tool: PolicyTool) -> bool:
        return self.trusts(tool.server) and tool.annotations.get("readOnlyHint") is True

    def is_high_risk(self, tool: PolicyTool) -> bool:
        """True when the Host's own risk list makes ``tool`` high-risk: its server is on the list and no
        trusted annotation says it only reads; or a hint says it destroys or reaches the outside world;
        or its name matches one of the :attr:`always_confirm` patterns."""
        if tool.server in self.high_risk_servers and not self._read_only(tool):
            return True
        hinted = tool.annotations.get("destructiveHint") is True or tool.annotations.get("openWorldHint") is True
        if hinted and self.high_risk_servers:
            return True
        return any(fnmatch.fnmatchcase(tool.qualified_name, p) or fnmatch.fnmatchcase(tool.name, p)
                   for p in self.always_confirm)

    def reasons(self, tool: PolicyTool) -> tuple[str, ...]:
        """Why this call needs approval (empty = it may run without asking)."""
        ann = tool.annotations if self.trusts(tool.server) else {}
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


CHARS_PER_TOKEN = 4
"""How the budget turns characters into tokens: a common rule of thumb for English text. Counting
characters (not words) means one long unbroken "word" costs what it is."""


@dataclass
class SamplingUse:
    """What one server has spent in the current window."""

    window_start: float
    calls: int = 0
    chars: int = 0


@dataclass
class SamplingBudget:
    """How much of the Host's model each server may use through sampling, per window of virtual time:
    ``max_calls`` requests and ``max_tokens`` tokens (counted from characters,
    :data:`CHARS_PER_TOKEN`), per server, starting again every ``window_seconds``.

    Per server, because one server's appetite must not spend another's share (nor can it hide behind
    a shared counter); in characters, because output size — not word count — is what costs; in
    windows, so a legitimate server can sample again later. The Host asks :meth:`admit` before each
    request, caps its ``maxTokens`` with :meth:`limit`, and :meth:`charge` trims the model's answer to
    what remains and books it. Sampling is deprecated in 2026-07-28, and a Host that keeps it for
    compatibility must still bound what servers can spend."""

    max_calls: int = 3
    max_tokens: int = 400
    window_seconds: float = 3600.0
    use: dict[str, SamplingUse] = field(default_factory=dict)

    def _current(self, server: str, now: float) -> SamplingUse:
        use = self.use.get(server)
        if use is None or now - use.window_start >= self.window_seconds:
            use = self.use[server] = SamplingUse(now)
        return use

    def admit(self, server: str, now: float) -> bool:
        use = self._current(server, now)
        return use.calls < self.max_calls and use.chars < self.max_tokens * CHARS_PER_TOKEN

    def remaining_tokens(self, server: str = "", now: float = 0.0) -> int:
        use = self._current(server, now)
        return max(0, self.max_tokens - -(-use.chars // CHARS_PER_TOKEN))

    def limit(self, server: str, asked: object, now: float) -> int:
        """The ``maxTokens`` to send the model: what the server asked, at most what it has left."""
        left = self.remaining_tokens(server, now)
        return min(asked, left) if isinstance(asked, int) and not isinstance(asked, bool) and asked > 0 else left

    def charge(self, server: str, text: str, now: float) -> str:
        """Book one answer for ``server``; return it trimmed to the characters the server had left."""
        use = self._current(server, now)
        allowed = max(0, self.max_tokens * CHARS_PER_TOKEN - use.chars)
        text = text[:allowed]
        use.calls += 1
        use.chars += len(text)
        return text

    @property
    def calls(self) -> int:
        """Sampling calls granted so far, all servers and windows of the current state."""
        return sum(u.calls for u in self.use.values())

    @property
    def tokens(self) -> int:
        """Tokens granted in the current windows, all servers (characters / :data:`CHARS_PER_TOKEN`)."""
        return sum(-(-u.chars // CHARS_PER_TOKEN) for u in self.use.values())


class SamplingMediator:
    """What the Host does around a server's ``sampling/createMessage`` besides the budget: what its user
    is shown (and may edit), which context goes with the request, and where the model's answer goes.

    ``host`` is the :class:`~mcp_sim.roles.host.Host` (its ``conversation`` and ``servers``). This base
    class changes nothing and attaches no context — a client MAY ignore ``includeContext`` — and the
    answer goes back only to the server that asked. The sampling labs plug in mistakes and fixes."""

    async def request(self, host: Any, server: str, params: dict[str, Any]) -> dict[str, Any]:
        """The request as the model will see it (raise ``McpError`` to refuse it)."""
        return params

    async def result(self, host: Any, server: str, result: dict[str, Any]) -> dict[str, Any]:
        """The answer as the server will get it."""
        return result


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
