"""Exercise ex09_host_policy (chapter 09): the Host's tool filter and approval decision.

The learner writes the two questions a Host asks about every tool before the model sees it:
``may_see(tool, server, trusted, policy)`` — may the model be offered this tool? — and
``must_ask(tool, server, trusted, policy)`` — must the user approve a call to it? ``policy`` is a
plain dict with the fields of the Host's own :class:`~mcp_sim.security.host_policy.ToolPolicy` and
:class:`~mcp_sim.security.host_policy.ApprovalPolicy`; the expected answers come from those classes
(the learner may not import them). Every seed tries every case kind — each filter rule, each
approval mode against each trust/annotation pattern, and the high-risk list — and the seed picks
server and tool names and which glob spells a rule.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import strategies as st

from mcp_sim.grading.differential import differential
from mcp_sim.grading.model import Check, CheckContext, CheckFailed, Exercise, Hint
from mcp_sim.roles.host_tools import HostTool
from mcp_sim.security.host_policy import ApprovalPolicy, ToolPolicy

R_FILTER = "host.tool-policy"
R_HINTS = "host.annotations-untrusted"
R_CONFIRM = "host.human-in-the-loop"
R_APPROVAL = "host.approval-policy"

_SERVERS = ("issues", "mail", "files", "calendar", "bank")
_TOOLS = ("search", "get_item", "create_item", "delete_item", "send_message", "transfer_funds", "list_all")


def _tool(rng: Any, annotations: dict[str, Any] | None, name: str | None = None) -> dict[str, Any]:
    tool: dict[str, Any] = {"name": name or rng.choice(_TOOLS),
                            "description": rng.choice(("Harmless and read-only.", "Safe to call any time.", "")),
                            "inputSchema": {"type": "object"}}
    if annotations is not None:
        tool["annotations"] = dict(annotations)
    return tool


def expected(tool: dict[str, Any], server: str, trusted: bool, policy: dict[str, Any]) -> tuple[bool, bool]:
    """(may_see, must_ask) by the Host's own policy code."""
    host_tool = HostTool(server, tool, f"{server}__{tool['name']}")
    servers = policy.get("servers")
    tool_policy = ToolPolicy(allow=tuple(policy.get("allow", ("*",))), deny=tuple(policy.get("deny", ())),
                             servers=tuple(servers) if servers is not None else None,
                             read_only=bool(policy.get("read_only", False)))
    approval = ApprovalPolicy(mode=policy.get("approval", "always"),
                              trusted_servers=frozenset({server}) if trusted else frozenset(),
                              always_confirm=tuple(policy.get("always_confirm", ())))
    return tool_policy.permits(host_tool, trusted=trusted), bool(approval.reasons(host_tool))


Case = tuple[dict[str, Any], str, bool, dict[str, Any]]


# kind -> the cases it tries: (tool, server, trusted, policy). Every variation is tried on every seed.
def _filter_cases(rng: Any, kind: str) -> list[Case]:
    server = rng.choice(_SERVERS)
    others = [s for s in _SERVERS if s != server]
    ro = {"readOnlyHint": True}
    if kind == "the default policy shows everything":
        return [(_tool(rng, None), server, trusted, {}) for trusted in (True, False)]
    if kind == "a deny glob hides the tool":
        return [(_tool(rng, ro, "delete_item"), server, True, {"deny": [glob]})
                for glob in ("*__delete_*", f"{server}__delete_*", "*delete*")]
    if kind == "deny wins over allow":
        tool = _tool(rng, ro, "delete_item")
        return [(tool, server, True, {"allow": [f"{server}__*"], "deny": ["*__delete_*"]}),
                (tool, server, True, {"deny": ["*__delete_*"], "allow": [f"{server}__delete_item"]})]
    if kind == "a tool no allow glob matches is hidden":
        return [(_tool(rng, ro, "send_message"), server, True, {"allow": [f"{server}__search", f"{server}__get_*"]})]
    if kind == "an allow glob matches the qualified name, not the bare one":
        return [(_tool(rng, ro, "search"), server, True, {"allow": ["search"]})]
    if kind == "a server not on the list is hidden":
        return [(_tool(rng, ro), server, True, {"servers": rng.sample(others, 2)}),
                (_tool(rng, ro), server, True, {"servers": []})]
    if kind == "a server on the list is shown":
        return [(_tool(rng, None), server, False, {"servers": [server, rng.choice(others)]})]
    if kind == "read_only: an untrusted readOnlyHint is not enough":
        return [(_tool(rng, ro), server, False, {"read_only": True})]
    if kind == "read_only: a trusted readOnlyHint is shown":
        return [(_tool(rng, ro), server, True, {"read_only": True})]
    if kind == "read_only: a trusted tool without the hint is hidden":
        return [(_tool(rng, annotations), server, True, {"read_only": True})
                for annotations in ({"destructiveHint": False}, {"readOnlyHint": False}, None)]
    if kind == "a deny glob matches the qualified name, not the bare one":
        return [(_tool(rng, ro, "delete_item"), server, True, {"deny": ["delete_item"]})]
    if kind == "read_only false written out changes nothing":
        return [(_tool(rng, None), server, False, {"read_only": False})]
    raise KeyError(kind)


FILTER_KINDS = ("the default policy shows everything", "a deny glob hides the tool", "deny wins over allow",
                "a tool no allow glob matches is hidden", "an allow glob matches the qualified name, not the bare one",
                "a server not on the list is hidden", "a server on the list is shown",
                "read_only: an untrusted readOnlyHint is not enough", "read_only: a trusted readOnlyHint is shown",
                "read_only: a trusted tool without the hint is hidden", "read_only false written out changes nothing",
                "a deny glob matches the qualified name, not the bare one")

_PATTERNS = {
    "untrusted readOnlyHint": (False, {"readOnlyHint": True}),
    "untrusted destructiveHint false": (False, {"readOnlyHint": False, "destructiveHint": False}),
    "trusted readOnlyHint": (True, {"readOnlyHint": True}),
    "trusted no annotations": (True, None),
    "trusted not read-only, destructiveHint false": (True, {"readOnlyHint": False, "destructiveHint": False}),
    "trusted readOnlyHint but destructiveHint true": (True, {"readOnlyHint": True, "destructiveHint": True}),
}
MODES = ("always", "unless-read-only", "destructive-only")
APPROVAL_KINDS = (*(f"{mode}: {pattern}" for mode in MODES for pattern in _PATTERNS),
                  "no approval field: trusted readOnlyHint")
CONFIRM_KINDS = ("always_confirm by qualified name", "always_confirm by bare name",
                 "always_confirm elsewhere changes nothing")


def _approval_cases(rng: Any, kind: str) -> list[Case]:
    server = rng.choice(_SERVERS)
    if kind in CONFIRM_KINDS:
        out = []
        for name in ("transfer_funds", "send_message"):
            tool = _tool(rng, {"readOnlyHint": True}, name)
            pattern = {"always_confirm by qualified name": f"{server}__{name.split('_')[0]}_*",
                       "always_confirm by bare name": f"{name.split('_')[0]}_*",
                       "always_confirm elsewhere changes nothing": "wire_*"}[kind]
            out += [(tool, server, True, {"approval": mode, "always_confirm": [pattern]})
                    for mode in ("unless-read-only", "destructive-only")]
        return out
    mode, pattern_name = kind.split(": ", 1)
    trusted, annotations = _PATTERNS[pattern_name]
    if mode == "no approval field":  # the default mode is "always"
        return [(_tool(rng, annotations), server, trusted, {})]
    return [(_tool(rng, annotations), server, trusted, {"approval": mode})]


def _case_text(tool: dict[str, Any], server: str, trusted: bool, policy: dict[str, Any]) -> str:
    return (f"Tool {json.dumps(tool)} from the {'trusted' if trusted else 'untrusted'} server {server!r} "
            f"(the model would see it as {server}__{tool['name']}), policy {json.dumps(policy)}")


def _filter_rule(tool: dict[str, Any], server: str, trusted: bool, policy: dict[str, Any], got: Any) -> str:
    """The rule a wrong may_see() breaks: the trust in annotations when the answer is the one a policy
    without read_only would give, else the filter itself."""
    if policy.get("read_only") and got is expected(tool, server, trusted, {**policy, "read_only": False})[0]:
        return R_HINTS
    return R_FILTER


def _approval_rule(tool: dict[str, Any], server: str, trusted: bool, policy: dict[str, Any], got: Any) -> str:
    """The rule a wrong must_ask() breaks: the high-risk list when the answer is the one a policy
    without it would give, else the trust in annotations."""
    if policy.get("always_confirm") and got is expected(tool, server, trusted, {**policy, "always_confirm": []})[1]:
        return R_CONFIRM
    return R_HINTS


def _judge(ctx: CheckContext, case: Case) -> None:
    tool, server, trusted, policy = case
    see, ask = expected(tool, server, trusted, policy)
    got = ctx.function("may_see")(copy.deepcopy(tool), server, trusted, copy.deepcopy(policy))
    if got is not see:
        raise CheckFailed(f"may_see() returned {got!r}.", _filter_rule(tool, server, trusted, policy, got),
                          case=_case_text(tool, server, trusted, policy), expected=repr(see))
    got = ctx.function("must_ask")(copy.deepcopy(tool), server, trusted, copy.deepcopy(policy))
    if got is not ask:
        raise CheckFailed(f"must_ask() returned {got!r}.", _approval_rule(tool, server, trusted, policy, got),
                          case=_case_text(tool, server, trusted, policy), expected=repr(ask))


def check_filter(ctx: CheckContext, kind: str) -> None:
    for tool, server, trusted, policy in _filter_cases(ctx.rng, kind):
        want, _ = expected(tool, server, trusted, policy)
        got = ctx.function("may_see")(copy.deepcopy(tool), server, trusted, copy.deepcopy(policy))
        if got is not want:
            rule = R_HINTS if kind.startswith("read_only:") else R_FILTER
            raise CheckFailed(f"may_see() returned {got!r}.", rule, case=_case_text(tool, server, trusted, policy),
                              expected=f"{want} ({kind})")


def check_approval(ctx: CheckContext, kind: str) -> None:
    for tool, server, trusted, policy in _approval_cases(ctx.rng, kind):
        _, want = expected(tool, server, trusted, policy)
        got = ctx.function("must_ask")(copy.deepcopy(tool), server, trusted, copy.deepcopy(policy))
        if got is not want:
            rule = R_CONFIRM if kind in CONFIRM_KINDS else R_APPROVAL if "policy" not in kind and \
                kind.startswith("no approval") else R_HINTS
            raise CheckFailed(f"must_ask() returned {got!r}.", rule, case=_case_text(tool, server, trusted, policy),
                              expected=f"{want} ({kind})")


# --- generated: any tool, server, trust and policy, against the Host's own ToolPolicy/ApprovalPolicy ------

_HINT = st.sampled_from(("absent", True, False))
_GLOBS = ("*", "*__*", "{server}__*", "{server}__{name}", "{name}", "*__{prefix}_*", "{prefix}_*", "*{prefix}*",
          "other__*", "{server}_*")


def _globs(draw: Any, server: str, name: str) -> list[str] | None:
    chosen = draw(st.one_of(st.none(), st.lists(st.sampled_from(_GLOBS), max_size=2)))
    if chosen is None:
        return None
    return [g.format(server=server, name=name, prefix=name.split("_")[0]) for g in chosen]


@st.composite
def _cases(draw: Any) -> Case:
    server, name = draw(st.sampled_from(_SERVERS)), draw(st.sampled_from(_TOOLS))
    tool: dict[str, Any] = {"name": name, "description": "A tool.", "inputSchema": {"type": "object"}}
    if draw(st.booleans()):
        hints = {k: v for k in ("readOnlyHint", "destructiveHint") if (v := draw(_HINT)) != "absent"}
        tool["annotations"] = hints
    policy: dict[str, Any] = {}
    for field, value in (("allow", _globs(draw, server, name)), ("deny", _globs(draw, server, name)),
                         ("always_confirm", _globs(draw, server, name))):
        if value is not None:
            policy[field] = value
    servers = draw(st.sampled_from(("absent", "with it", "without it", "empty")))
    if servers != "absent":
        others = [s for s in _SERVERS if s != server][:2]
        policy["servers"] = {"with it": [server, *others[:1]], "without it": others, "empty": []}[servers]
    read_only = draw(st.sampled_from(("absent", True, False)))
    if read_only != "absent":
        policy["read_only"] = read_only
    mode = draw(st.sampled_from(("absent", *MODES)))
    if mode != "absent":
        policy["approval"] = mode
    return tool, server, draw(st.booleans()), policy


def check_generated(ctx: CheckContext, kind: str) -> None:
    differential(ctx, _cases(), learner=lambda case: _judge(ctx, case), oracle=lambda case: None,
                 compare=lambda *_: None, describe=lambda case: _case_text(*case), raises_rule=R_FILTER,
                 examples=25)


EXERCISE = Exercise(
    id="ex09_host_policy",
    title="The Host's policy: which tools the model sees, and when the user is asked",
    chapter="09",
    summary="Write a Host's tool filter (allow/deny globs over qualified names, a server list, read-only) and "
            "its approval decision (three modes, trust, annotation defaults, a high-risk list).",
    rules=(R_FILTER, R_HINTS, R_CONFIRM, R_APPROVAL),
    functions=("may_see", "must_ask"),
    checks=(
        Check("The tool filter: globs, deny over allow, servers, read-only", R_FILTER, check_filter, FILTER_KINDS,
              hint="Build the qualified name server__tool first; then servers, deny, read_only, allow — in that "
                   "order, and read_only believes only a trusted server."),
        Check("Approval in each mode, with and without trust", R_HINTS, check_approval, APPROVAL_KINDS,
              hint="Throw away an untrusted server's annotations first; then a tool is read-only only if it says "
                   "so, and destructive unless it says destructiveHint: false."),
        Check("High-risk tools are always confirmed", R_CONFIRM, check_approval, CONFIRM_KINDS,
              hint="Match always_confirm against both the qualified and the bare name."),
        Check("Any tool, trust and policy: the course Host's answers", R_FILTER, check_generated, ("generated",),
              hint="Work the smallest case through by hand: servers, deny, read_only, allow; then trust, "
                   "annotations, the high-risk list and the mode."),
    ),
    hints=(
        Hint("Everything a server says about a tool is untrusted input. Decide with the Host's policy: the "
             "qualified name, the server's trust, and only then the annotations.", R_HINTS),
        Hint("may_see: False if servers is given and the server is not in it; False if any deny glob matches "
             "server__tool; False if read_only and not (trusted and readOnlyHint is true); else whether an allow "
             "glob (default ['*']) matches server__tool. Use fnmatch.fnmatchcase.", R_FILTER),
        Hint("must_ask: annotations count only if trusted. read_only = readOnlyHint is true; destructive = "
             "destructiveHint is true in the tool as sent, or (not read_only and destructiveHint is not false). "
             "Ask if high-risk or destructive; 'always' always asks; 'unless-read-only' asks unless read_only; "
             "'destructive-only' asks for nothing more.", R_CONFIRM),
    ),
    forbidden=("mcp_sim.security", "mcp_sim.roles"),
)
