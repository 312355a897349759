"""Host policies: what the model may see and what needs the user's confirmation (course chapter
5.2.3, "the Host decides"; spec: Tools, "Security considerations").

Everything a Server says about itself is **untrusted input** to the Host: tool names, descriptions,
schemas and annotations were written by whoever runs the Server. The Host therefore decides, with
its own policy and never with the Server's word alone:

* **exposure** — which Servers' tools the model may see at all (:attr:`HostPolicy.exposed_servers`);
* **review** — a tool definition reaches the model only after it was reviewed, and a *changed*
  definition is reviewed again: approval is pinned to a :func:`fingerprint`, not a name. The Host does
  this with ``Host(tool_review=careful_reviewer)``; :class:`DefinitionReview` is the same rule as a
  standalone object;
* **namespacing** — two Servers may both offer ``send_email``; the model sees
  ``mail__send_email`` and ``helper__send_email``, never one silently replacing the other;
* **confirmation** — sensitive or destructive calls wait for the user. ``readOnlyHint`` and
  ``destructiveHint`` are *hints*: "clients MUST consider tool annotations to be untrusted unless
  they come from trusted servers" (:class:`ConfirmationPolicy`);
* **argument filtering** — arguments that would carry data out of bounds are refused
  (:class:`ArgumentFilter`).

:func:`hidden_instructions` is the one definition of "text in a description that tries to steer the
model": the scripted model obeys exactly what it finds, and the reviewer flags exactly that, so the
labs' model and reviewer can never disagree about what a poisoned description is.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mcp_sim.security.request_state import canonical_json
from mcp_sim.security.sandbox import normalise

NAMESPACE_SEPARATOR = "__"


def qualified_name(server: str, tool: str) -> str:
    """The name the model sees for ``tool`` of ``server`` when the Host namespaces tools."""
    return f"{server}{NAMESPACE_SEPARATOR}{tool}"


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


# --- review of definitions -------------------------------------------------------------------------

Reviewer = Callable[[str, Mapping[str, Any]], bool]
"""``(server, tool definition) -> approve?``: the person (or admin policy) who looks at a definition."""


def careful_reviewer(server: str, tool: Mapping[str, Any]) -> bool:
    """A reviewer who reads the whole description and refuses one that gives the model orders."""
    return not hidden_instructions(tool.get("description"))


@dataclass(frozen=True)
class ReviewFinding:
    server: str
    tool: str
    status: str
    """``new``, ``changed``, ``unchanged`` or ``removed``."""
    approved: bool
    reasons: tuple[str, ...] = ()


@dataclass
class DefinitionReview:
    """Pins each approved definition by :func:`fingerprint`; new and changed ones go to the reviewer.

    ``pin_by_fingerprint=False`` is the rug-pull mistake: approval is remembered by *name*, so a
    Server can swap the description after approval and the new text reaches the model unreviewed.
    """

    reviewer: Reviewer = careful_reviewer
    pin_by_fingerprint: bool = True
    pinned: dict[tuple[str, str], str] = field(default_factory=dict)
    findings: list[ReviewFinding] = field(default_factory=list)

    def admit(self, server: str, tools: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
        """The definitions of ``server`` that may reach the model now."""
        admitted = []
        for tool in tools:
            key = (server, tool["name"])
            fp = fingerprint(tool) if self.pin_by_fingerprint else tool["name"]
            if self.pinned.get(key) == fp:
                admitted.append(tool)
                continue
            status = "changed" if key in self.pinned else "new"
            approved = self.reviewer(server, tool)
            reasons = tuple(d.text for d in hidden_instructions(tool.get("description")))
            self.findings.append(ReviewFinding(server, tool["name"], status, approved, reasons))
            if approved:
                self.pinned[key] = fp
                admitted.append(tool)
            else:
                self.pinned.pop(key, None)
        return admitted


# --- confirmation ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class ConfirmationPolicy:
    """When a call waits for the user.

    ``trust_annotations=True`` is the mistake: a tool that *says* ``readOnlyHint: true`` runs without
    asking. The fixed policy trusts annotations only from ``trusted_servers`` and otherwise asks for
    every call not in ``auto_approved`` (tools the Host itself vetted)."""

    trust_annotations: bool = False
    trusted_servers: frozenset[str] = frozenset()
    auto_approved: frozenset[tuple[str, str]] = frozenset()
    always_confirm: frozenset[str] = frozenset()
    """Tool names that always need confirmation, whatever anyone says (payments, deletion …)."""

    def needs_confirmation(self, server: str, tool: Mapping[str, Any]) -> tuple[bool, str]:
        name = tool["name"]
        if name in self.always_confirm:
            return True, f"{name} is on the Host's always-confirm list"
        if (server, name) in self.auto_approved:
            return False, f"the Host vetted {server}/{name} itself"
        hints = tool.get("annotations") or {}
        if self.trust_annotations or server in self.trusted_servers:
            if hints.get("readOnlyHint") is True:
                return False, f"{server} says {name} is read-only (readOnlyHint), and the Host believed it"
            return True, f"{name} is not marked read-only"
        return True, f"annotations from {server} are untrusted hints, so the Host asks"


# --- argument filtering ----------------------------------------------------------------------------

@dataclass(frozen=True)
class ArgumentFilter:
    """Refuses arguments that would carry data where it must not go.

    ``path_roots``: path-like string arguments must lie inside one of them (after normalisation).
    ``forbidden_values``: exact secrets the Host knows of (e.g. data marked sensitive by another
    Server) that must not leave through any tool argument."""

    path_roots: tuple[str, ...] | None = None
    forbidden_values: frozenset[str] = frozenset()

    def problems(self, arguments: Mapping[str, Any]) -> list[str]:
        out = []
        for key, value in arguments.items():
            if not isinstance(value, str):
                continue
            if any(secret and secret in value for secret in self.forbidden_values):
                out.append(f"argument {key!r} carries data marked sensitive")
            if self.path_roots is not None and value.startswith("/"):
                path = normalise(value)
                if not any(path == r or path.startswith(r.rstrip("/") + "/") for r in map(normalise, self.path_roots)):
                    out.append(f"argument {key!r} names {path}, outside the allowed roots")
        return out


@dataclass
class HostPolicy:
    """All the Host's decisions in one place; the labs flip one field between vulnerable and fixed."""

    exposed_servers: frozenset[str] | None = None
    """``None`` = every connected Server's tools may reach the model."""
    review: DefinitionReview | None = None
    """``None`` = definitions reach the model unreviewed."""
    namespacing: bool = True
    confirmation: ConfirmationPolicy = field(default_factory=ConfirmationPolicy)
    arguments: ArgumentFilter = field(default_factory=ArgumentFilter)

    def visible_name(self, server: str, tool: str) -> str:
        return qualified_name(server, tool) if self.namespacing else tool

    def may_expose(self, server: str) -> bool:
        return self.exposed_servers is None or server in self.exposed_servers
