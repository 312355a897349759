"""Exercise ex09_who_decides (chapter 09): a complete call went wrong — which layer decided it, who,
and on which row?

The learner reads the trace of one complete call, played by the simulator
(:func:`mcp_sim.scenarios.complete_call.run_complete_call`), with the rows' layer and caption left out,
and returns ``{"layer": ..., "decided_by": ..., "seq": ...}`` for the row where the outcome was decided
— or ``None`` when the call succeeded. Every seed tries every case kind: each outcome in both eras
(the user says no, the policy hides the tool, the tool fails, the wire loses the request, the
versions do not match, and a successful call); the seed picks the server's name, the bug's title and
the issue number, so the traces differ in their words while each kind's decision stays where it is.
"""

from __future__ import annotations

import copy
import functools
import json
import random
from typing import Any

from hypothesis import strategies as st

from mcp_sim.grading.differential import differential
from mcp_sim.grading.model import Check, CheckContext, CheckFailed, Exercise, Hint
from mcp_sim.scenarios.complete_call import OUTCOMES, run_complete_call

R_APPROVAL = "host.human-in-the-loop"
R_POLICY = "host.tool-policy"
R_TOOL_ERROR = "tools.execution-error-is-result"
R_TIMEOUT = "lifecycle.timeouts"
R_VERSION = "versioning.modern-only-refusal-names-versions"

EXPECTED = {"user-denies": R_APPROVAL, "policy-hides": R_POLICY, "tool-fails": R_TOOL_ERROR,
            "timeout": R_TIMEOUT, "version-mismatch": R_VERSION, "answered": R_TOOL_ERROR}

_SERVERS = ("issues", "tracker", "bugs", "tickets", "jira_clone")
_TITLES = ("the login page crashes on Safari", "dark mode forgets its setting", "export to CSV drops accents",
           "search returns closed issues", "the footer overlaps the menu", "uploads stall at 99%")
_DECOYS = ("the error page shows a stack trace", "saving fails with an error when offline",
           "timeout errors on the dashboard", "the deny button does nothing")


def build_case(rng: Any, kind: str, model_api: str = "openai") -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The trace the learner reads for ``kind`` (``"<outcome> in <revision>"``) and its answer."""
    outcome, revision = kind.rsplit(" in ", 1)
    titles = _DECOYS if outcome == "answered" else _TITLES  # a success that talks about errors is still one
    return json.loads(_played(outcome, revision, rng.randint(0, 999), rng.randint(3, 999), rng.choice(titles),
                              rng.choice(_SERVERS), model_api))


@functools.lru_cache(maxsize=256)
def _played(outcome: str, revision: str, seed: int, number: int, title: str, server: str, model_api: str) -> str:
    """The case as JSON text, kept for a while: grading the same seed again replays it from memory."""
    run = run_complete_call(outcome, revision=revision, seed=seed, number=number, title=title, server=server,
                            model_api=model_api)  # type: ignore[arg-type]
    rows = []
    for e in run.events:
        row: dict[str, Any] = {"seq": e.seq, "t_ms": e.t_ms, "from": e.sender, "to": e.receiver, "kind": e.kind}
        if e.method:
            row["method"] = e.method
        if e.marks:
            row["marks"] = list(e.marks)
        if e.kind == "app" or e.message is None:
            row["text"] = e.text
        if e.message is not None:
            row["message"] = e.message
        rows.append(row)
    decisive = run.decisive
    answer = None if decisive is None else {"layer": run.outcome.layer, "decided_by": run.outcome.decider,
                                            "seq": decisive.seq}
    return json.dumps([{"revision": revision, "rows": rows}, answer])


def _show(trace: dict[str, Any]) -> str:
    lines = []
    for r in trace["rows"]:
        what = r.get("method") or r.get("text") or ""
        marks = f" [{', '.join(r['marks'])}]" if r.get("marks") else ""
        lines.append(f"  #{r['seq']} {r['from']} → {r['to']} {r['kind']}{marks}: {what}")
    return "\n".join(lines)


def _ask(ctx: CheckContext, kind: str, rng: Any = None, model_api: str = "openai") -> None:
    trace, want = build_case(ctx.rng if rng is None else rng, kind, model_api)
    got = ctx.function("who_decides")(copy.deepcopy(trace))
    outcome = kind.rsplit(" in ", 1)[0]
    if want is None:
        if got is not None:
            raise CheckFailed(f"Trace ({trace['revision']}):\n{_show(trace)}\nThe user got their issue: no layer "
                              f"refused anything, yet who_decides() returned {got!r}.", R_TOOL_ERROR,
                              case=f"the trace above ({trace['revision']})", expected="None")
        return
    if got != want:
        raise CheckFailed(f"Trace ({trace['revision']}):\n{_show(trace)}\nwho_decides() returned {json.dumps(got)}, "
                          f"which is not the layer, participant and row that decided this call.", EXPECTED[outcome],
                          case=f"the trace above ({trace['revision']})",
                          expected=f"{json.dumps(want)}: this call ended because "
                                   f"{OUTCOMES[outcome].explanation[0].lower()}{OUTCOMES[outcome].explanation[1:]}")


def check_generated(ctx: CheckContext, kind: str) -> None:
    """Every outcome in either era, for a Host speaking either model API, on other runs of this seed."""
    kinds = [k for c in EXERCISE.checks if c.run is _ask for k in c.kinds]

    def learner(case: tuple[int, str, int]) -> None:
        which, api, story = case
        _ask(ctx, kinds[which], random.Random(f"ex09_who_decides|{ctx.seed}|{story}"), api)

    differential(ctx, st.tuples(st.integers(0, len(kinds) - 1), st.sampled_from(("openai", "anthropic")),
                                st.integers(0, 2)),
                 learner=learner, oracle=lambda case: None, compare=lambda *_: None,
                 describe=lambda case: f"the kind {kinds[case[0]]!r}, a Host speaking {case[1]}, run {case[2] + 1}",
                 raises_rule=R_TOOL_ERROR, examples=8)


def _kinds(*outcomes: str) -> tuple[str, ...]:
    return tuple(f"{o} in {rev}" for o in outcomes for rev in ("2025-11-25", "2026-07-28"))


EXERCISE = Exercise(
    id="ex09_who_decides",
    title="Who decided? The layer, the participant and the row of a complete call that went wrong",
    chapter="09",
    summary="Read a simulator trace of a complete call and name the layer (roles, capabilities, transports), "
            "the participant (user, host, server, client) and the row that decided its outcome, in either era.",
    rules=(R_APPROVAL, R_POLICY, R_TOOL_ERROR, R_TIMEOUT, R_VERSION),
    functions=("who_decides",),
    checks=(
        Check("A call that succeeded has no culprit", R_TOOL_ERROR, _ask, _kinds("answered"),
              hint="Did the user get what they asked for? Then return None, whatever else the trace contains."),
        Check("Decided in the roles layer: the user or the Host's policy", R_POLICY, _ask,
              _kinds("user-denies", "policy-hides"),
              hint="Before any tools/call is sent, only the Host's talk with the user and the model can end the "
                   "call: who said no, and in which row?"),
        Check("Decided by the server: the tool or the lifecycle", R_TOOL_ERROR, _ask,
              _kinds("tool-fails", "version-mismatch"),
              hint="Find the server's answer that ended it: an isError result, or an error to the opening "
                   "request."),
        Check("Decided on the wire: a lost frame and the client's timeout", R_TIMEOUT, _ask, _kinds("timeout"),
              hint="Look at the marks: a frame that never arrived is where it went wrong, and the one who "
                   "gave up waiting decided."),
        Check("Any outcome, era and model API, on other runs", R_POLICY, check_generated, ("generated",),
              hint="Walk the smallest case's rows in order: after which one could the request no longer succeed?"),
    ),
    hints=(
        Hint("Walk the rows in order and find the first one after which the request could no longer succeed.",
             R_APPROVAL),
        Hint("Layers: roles = user, host and model talking inside the application; capabilities = MCP messages "
             "between client and server (the tool's result, the opening handshake); transports = what happens "
             "to frames on the wire (a 'dropped' mark).", R_TIMEOUT),
        Hint("Return {\"layer\": ..., \"decided_by\": ..., \"seq\": n} with decided_by one of \"user\", \"host\", "
             "\"server\", \"client\"; for a hidden tool the row is the Host's first message to the model; for a "
             "lost request it is the dropped frame.", R_POLICY),
    ),
    forbidden=("mcp_sim.scenarios.complete_call",),
)
