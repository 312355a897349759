"""Exercise ex05_who_controls (chapter 05): whom each primitive is designed for, and when the Host asks.

Two decisions a Host makes. ``who_controls(entry)``: an entry from a list result — a tool, a
resource, a resource template or a prompt — and whom the spec designed it to be controlled by: the
model, the application or the user (the spec mandates no interaction model; the course's Host plays
each primitive this way). ``needs_approval(tool, trusted)``: must the user approve a call to this tool? Every seed
tries every case kind — each primitive (with names and descriptions that try to mislead), and each
combination of trusted or untrusted server with each annotation pattern — and the seed picks only
names, titles and descriptions. Each case is built with its answer.
"""

from __future__ import annotations

import copy
import itertools
import json
from dataclasses import dataclass
from typing import Any

from mcp_sim.grading.model import Check, CheckContext, CheckFailed, Exercise, Hint
from mcp_sim.security.host_policy import ApprovalPolicy

R_CONTROL = "host.controls-per-primitive"
R_HINTS = "host.annotations-untrusted"
R_POLICY = "host.unless-read-only"

_LISTS = {"tools": ("tools/list", "tools", "model"), "resources": ("resources/list", "resources", "application"),
          "resource templates": ("resources/templates/list", "resourceTemplates", "application"),
          "prompts": ("prompts/list", "prompts", "user")}
_BAIT = {  # descriptions that point at another controller: a server can write anything there
    "tools": ("The user picks this prompt.", "A prompt template for the app to attach."),
    "resources": ("Call this tool whenever the user asks.", "The model should call this first."),
    "resource templates": ("A prompt the user picks.", "Call this tool with a day."),
    "prompts": ("Call this tool whenever the user asks.", "The model reads this first."),
}


def _entry(rng: Any, kind: str, description: str) -> dict[str, Any]:
    name = rng.choice(("weekly_report", "run_query", "summarise", "code_review", "inbox", "release_notes"))
    if kind == "tools":
        item: dict[str, Any] = {"name": name, "inputSchema": {"type": "object"}}
    elif kind == "resources":
        item = {"uri": f"notes://{name}", "name": name, "mimeType": "text/markdown"}
    elif kind == "resource templates":
        item = {"uriTemplate": f"notes://{name}/{{day}}", "name": name}
    else:
        item = {"name": name, "arguments": [{"name": "topic", "required": rng.choice((True, False))}]}
    item["description"] = description
    method, key, _ = _LISTS[kind]
    return {"list": method, "key": key, "entry": item}


def check_control(ctx: CheckContext, kind: str) -> None:
    for bait in _BAIT[kind]:  # every misleading description, on every seed
        _one_control(ctx, kind, _entry(ctx.rng, kind, bait))


def _one_control(ctx: CheckContext, kind: str, entry: dict[str, Any]) -> None:
    want = _LISTS[kind][2]
    got = ctx.function("who_controls")(copy.deepcopy(entry))
    if got != want:
        raise CheckFailed(f"Entry from {entry['list']}: {json.dumps(entry['entry'])}\nwho_controls() said "
                          f"{got!r}, which is not whom the spec designed {kind} for (the list an entry came from "
                          f"decides, not its name or description).", R_CONTROL,
                          case=f"an entry of {entry['list']}", expected=repr(want))


_APPROVAL = {
    "untrusted, readOnlyHint true": (False, {"readOnlyHint": True}, True),
    "untrusted, destructiveHint false": (False, {"destructiveHint": False}, True),
    "untrusted, no annotations": (False, {}, True),
    "trusted, readOnlyHint true": (True, {"readOnlyHint": True}, False),
    "trusted, no annotations": (True, {}, True),
    "trusted, not read-only, destructiveHint false": (True, {"readOnlyHint": False, "destructiveHint": False}, True),
    "trusted, read-only but destructiveHint true": (True, {"readOnlyHint": True, "destructiveHint": True}, True),
}


def check_approval(ctx: CheckContext, kind: str) -> None:
    trusted, annotations, want = _APPROVAL[kind]
    name = ctx.rng.choice(("delete_note", "get_forecast", "send_email", "list_files", "transfer"))
    tool: dict[str, Any] = {"name": name, "description": ctx.rng.choice(("Safe and read-only.", "Harmless.", "")),
                            "inputSchema": {"type": "object"}}
    if annotations:
        tool["annotations"] = {**annotations, "title": name.replace("_", " ").title()}
    got = ctx.function("needs_approval")(copy.deepcopy(tool), trusted)
    if got is not want:
        why = ("only a trusted server's readOnlyHint (and no destructiveHint: true) lets the Host skip asking"
               if not want else "annotations are hints: the Host can rely on a read-only hint only from a server "
                                "it trusts")
        raise CheckFailed(f"Tool {json.dumps(tool)} from a {'trusted' if trusted else 'untrusted'} server: "
                          f"needs_approval() returned {got!r}, which is not the course Host's policy — {why}.",
                          R_HINTS if not trusted else R_POLICY, case=f"{kind}: {json.dumps(tool)}",
                          expected=repr(want))


# --- generated: every annotation pattern, against the simulator's own ApprovalPolicy -------------------

@dataclass(frozen=True)
class _Tool:
    """A tool as :class:`~mcp_sim.security.host_policy.ApprovalPolicy` sees it."""

    server: str
    name: str
    annotations: dict[str, Any]

    @property
    def qualified_name(self) -> str:
        return f"{self.server}.{self.name}"


_HINTS = ("absent", True, False)
_SHAPES = ("no annotations key", "empty annotations")


def every_tool() -> list[tuple[Any, ...]]:
    """Every annotation pattern (each hint absent, true or false; no annotations key; empty annotations;
    a title beside the hints), from each kind of server — the fewest hints first, so the first case that
    fails is the smallest."""
    cases: list[tuple[Any, ...]] = []
    for trusted in (True, False):
        cases += [(trusted, shape, "absent", "absent", "absent", "absent", False) for shape in _SHAPES]
        cases += [(trusted, "annotations", *hints, titled) for hints in itertools.product(_HINTS, repeat=4)
                  for titled in (False, True) if not titled or hints[2:] == ("absent", "absent")]
    return sorted(cases, key=lambda c: sum(h != "absent" for h in c[2:6]))


_POLICY = ApprovalPolicy(mode="unless-read-only", trusted_servers=frozenset({"trusted"}))


def _tool_of(t: tuple[Any, ...]) -> tuple[dict[str, Any], bool]:
    trusted, shape, read_only, destructive, idempotent, open_world, titled = t
    tool: dict[str, Any] = {"name": "act", "description": "Harmless and read-only.", "inputSchema": {"type": "object"}}
    hints = {k: v for k, v in (("readOnlyHint", read_only), ("destructiveHint", destructive),
                               ("idempotentHint", idempotent), ("openWorldHint", open_world)) if v != "absent"}
    if titled:
        hints["title"] = "Act"
    if shape == "annotations":
        tool["annotations"] = hints
    elif shape == "empty annotations":
        tool["annotations"] = {}
    return tool, trusted


def _oracle_approval(t: tuple[Any, ...]) -> bool:
    tool, trusted = _tool_of(t)
    seen = _Tool("trusted" if trusted else "unknown", tool["name"], dict(tool.get("annotations", {})))
    return bool(_POLICY.reasons(seen))


def check_generated(ctx: CheckContext, kind: str) -> None:
    """Every pattern (the space is small enough to try all of it), against the simulator's ApprovalPolicy;
    the first that differs is reported — the cases come fewest hints first."""
    decide = ctx.function("needs_approval")
    for case in every_tool():
        tool, trusted = _tool_of(case)
        want, got = _oracle_approval(case), decide(copy.deepcopy(tool), trusted)
        if got is not want:
            raise CheckFailed(f"Tool {json.dumps(tool)} from a {'trusted' if trusted else 'untrusted'} server: "
                              f"needs_approval() returned {got!r}, which is not what the simulator's Host policy "
                              f"decides.", R_POLICY if trusted else R_HINTS,
                              case=f"{json.dumps(tool)}, trusted={trusted}", expected=repr(want))


EXERCISE = Exercise(
    id="ex05_who_controls",
    title="Who controls it, and when does the Host ask?",
    chapter="05",
    summary="Say whom each server primitive is designed for (model, application, user), and decide, as the "
            "course's Host does, when a tool call needs the user's approval given its annotations and whether "
            "the server is trusted.",
    rules=(R_CONTROL, R_HINTS, R_POLICY),
    functions=("who_controls", "needs_approval"),
    checks=(
        Check("Each primitive has its controller", R_CONTROL, check_control, tuple(_LISTS),
              hint="Look at the list the entry came from; names and descriptions can say anything."),
        Check("An untrusted server's annotations change nothing", R_HINTS, check_approval,
              tuple(k for k in _APPROVAL if k.startswith("untrusted")),
              hint="Whose annotations may the Host believe?"),
        Check("A trusted server's annotations: only read-only skips approval", R_POLICY, check_approval,
              tuple(k for k in _APPROVAL if k.startswith("trusted")),
              hint="What does a missing destructiveHint mean, and which hint says the tool changes nothing?"),
        Check("Every annotation pattern is decided like the simulator's Host", R_POLICY, check_generated,
              ("generated",), hint="Only a trusted server's readOnlyHint: true, without destructiveHint: true, "
                                   "skips the user; other hints change nothing."),
    ),
    hints=(
        Hint("Three primitives, three designs: tools → the model, resources and resource templates → the "
             "application (the Host), prompts → the user.", R_CONTROL),
        Hint("A server can annotate anything. Ignore the annotations of a server the Host does not trust.", R_HINTS),
        Hint("Even from a trusted server, skip approval only for readOnlyHint: true — and never when "
             "destructiveHint is true.", R_POLICY),
    ),
    forbidden=("mcp_sim.security", "mcp_sim.roles"),
)
