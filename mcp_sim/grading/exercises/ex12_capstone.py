"""Exercise ex12_capstone (chapter 12): a learner's server and host policy, graded over the real wire.

The learner writes (a) ``build_server(expenses)``, an expenses server made with the simulator's
:class:`~mcp_sim.roles.server.Server` — a read-only tool, an adding tool, a destructive tool, a
resource template and a prompt, with honest annotations, tool failures as ``isError`` results and
per-caller authorization — and (b) a Host policy: ``review_tool``, ``decide`` and ``may_read`` (see
:mod:`~mcp_sim.grading.exercises.ex12_policy`).

(a) is graded the way a real client meets a server: the learner's file is served as a **real stdio
process** by the grader's launcher (:mod:`mcp_sim.grading.launcher`, the same import and file hooks
as every learner process) and the official ``mcp`` SDK's client drives it
(:mod:`~mcp_sim.grading.exercises.ex12_wire`) once per era — 2025-11-25 with the ``initialize``
handshake, 2026-07-28 with ``server/discover`` — with seeded callers, expenses and arguments. Every
line the server wrote is checked against the official schema of the negotiated revision, and the
answers against the rules below. Then ``mcp-sim check`` (:mod:`mcp_sim.bridge.check`) runs on the same
server, its stdout left as the wire, in both eras under a nemesis seeded by the case's seed: every
finding of a MUST-strength rule fails that check naming the finding's rule and frame, and the rest
become notes. (b) runs inside the simulator's Host against the security labs'
attacks and a legitimate workload that must still work.

A check here may start a process: it reads the learner's file and rules from the learner process it
is given (:class:`~mcp_sim.grading.learner_code.LearnerProcess`), and a stand-in without a file fails
the check with an explanation.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final, get_args

from hypothesis import strategies as st

import mcp_sim.grading.exercises.ex12_policy as policy
from mcp_sim.grading.differential import Mismatch
from mcp_sim.grading.exercises.ex12_wire import Plan, WireRun, drive, run_mcp_sim_check
from mcp_sim.grading.exercises.generated import corners_then_generated
from mcp_sim.grading.launcher import READY_MARK
from mcp_sim.grading.learner_code import HIDDEN_MODULES, SANDBOX_FILE, LearnerProcess
from mcp_sim.grading.model import Check, CheckContext, CheckFailed, Exercise, Hint
from mcp_sim.protocol.schema import schema_errors
from mcp_sim.security.identity import pick_distinct

if TYPE_CHECKING:  # the checker is imported when it runs: every learner process imports this package
    from mcp_sim.bridge.check.findings import CheckReport, Finding

R_PROCESS = "realwire.stdio-server-serves-the-session"
R_VERSION = {"2025-11-25": "lifecycle.server-echoes-supported-version",
             "2026-07-28": "versioning.server-implements-discover"}
R_STDOUT = "stdio.stdout-only-messages"
R_SCHEMA = "jsonrpc.messages-follow-jsonrpc"
R_ANNOTATIONS = "host.annotations-untrusted"
R_TOOL_ERRORS = "tools.execution-error-is-result"
R_RESOURCES = "resources.not-found-legacy"
R_PROMPTS = "prompts.validate-arguments"
R_AUTHZ = "security.bp.verify-every-request"
R_REVIEW = "security.host.tool-review-is-detection"
R_CONFIRM = "host.confirm-with-inputs"
R_WORKLOAD = "host.tool-policy"
R_READ = "host.connections-are-not-a-sandbox"
R_HIDE = "realwire.other-callers-records-not-found"
R_CACHE = "caching.public-crosses-tokens"
R_INFO = {"2025-11-25": "lifecycle.server-answers-capabilities", "2026-07-28": "meta.server-info-in-results"}

ERAS: Final = {"2025-11-25 over stdio (initialize handshake)": "2025-11-25",
               "2026-07-28 over stdio (server/discover)": "2026-07-28"}
_THINGS = ("train ticket", "hotel night", "team lunch", "taxi", "conference fee", "printer paper", "coffee beans",
           "parking", "museum tickets", "software licence")
_RESULTS: Final = {"tools/list": "ListToolsResult", "tools/call": "CallToolResult",
                   "resources/read": "ReadResourceResult", "prompts/get": "GetPromptResult",
                   "prompts/list": "ListPromptsResult", "resources/templates/list": "ListResourceTemplatesResult"}


# --- (a) the server over the real wire -----------------------------------------------------------------

ANNOTATION_DEFAULTS: Final = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False}
"""What a tool's annotations mean when a hint is left out (the ToolAnnotations schema's defaults;
destructiveHint and idempotentHint count only for a tool that is not read-only, which is where they are
compared)."""

def make_plan(rng: Any) -> Plan:
    """The seed's caller, book and arguments: the caller owns 2–4 expenses, two others own 1–3 each."""
    caller, *others = pick_distinct(rng, "user", 3)
    owners = [caller] * rng.randint(2, 4) + [o for o in others for _ in range(rng.randint(1, 3))]
    rng.shuffle(owners)
    ids = rng.sample(range(10, 99), len(owners))
    expenses = [{"id": f"exp-{n}", "owner": owner, "description": rng.choice(_THINGS), "cents": rng.randint(100, 90000)}
                for n, owner in zip(ids, owners, strict=True)]
    mine = rng.choice([e["id"] for e in expenses if e["owner"] == caller])
    theirs = rng.choice([e["id"] for e in expenses if e["owner"] != caller])
    return Plan(caller, expenses, mine, theirs, rng.choice(_THINGS) + f" #{rng.randint(1, 9)}",
                rng.randint(100, 50000), -rng.randint(1, 5000), f"2026-{rng.randint(1, 12):02d}",  # and 0, always
                rng.choice((" ", "   ", "\t", " \n ")))


def launcher_config(learner: Any) -> dict[str, Any]:
    """The learner process's rules, for the launcher (the same hooks, the same hidden files)."""
    if not isinstance(learner, LearnerProcess):
        raise CheckFailed("This check serves your file as a real process, and there is no file to serve here.",
                          R_PROCESS)
    return {"file": str(learner.path.resolve()), "display": learner.display,
            "forbidden": list(learner.exercise.forbidden), "hidden_modules": list(HIDDEN_MODULES),
            "hidden_paths": [str(p) for p in (*learner.hidden_paths, SANDBOX_FILE.parent)],
            "isolation": learner.isolation, "needs": list(learner.exercise.needs)}


def _fail(run: WireRun, text: str, rule: str) -> CheckFailed:
    return CheckFailed(f"[{run.revision}, the official SDK's client over stdio] {text}", rule)


def _json_list(run: WireRun, step: str) -> list[dict[str, Any]]:
    seen = run.seen.get(step)
    if not isinstance(seen, dict) or "text" not in seen or seen.get("is_error"):
        raise _fail(run, f"list_expenses answered {seen!r}; it should succeed with the caller's expenses as JSON "
                         f"text.", R_TOOL_ERRORS)
    try:
        items = json.loads(seen["text"])
        assert isinstance(items, list) and all(isinstance(i, dict) and "id" in i for i in items)
    except (ValueError, AssertionError):
        raise _fail(run, f"list_expenses should return a JSON list of objects with id, description and cents; it "
                         f"returned {seen['text'][:200]!r}.", R_TOOL_ERRORS) from None
    return items


def check_started(run: WireRun) -> None:
    """The process started, loaded the file and kept stdout for protocol lines only."""
    if READY_MARK not in run.stderr:
        told = run.stderr.strip() or run.failure or "(nothing on stderr)"
        raise _fail(run, f"Your server process did not start:\n{told}", R_PROCESS)
    if run.stray_stdout.strip():
        raise _fail(run, f"Your server wrote this to stdout besides MCP messages:\n{run.stray_stdout.strip()[:300]}\n"
                         f"On a real stdio pipe that text corrupts the client's stream.", R_STDOUT)


def check_completed(run: WireRun) -> None:
    """The session ran to its end, in the era's revision."""
    if run.failure:
        tail = "\n".join([line for line in run.stderr.strip().splitlines() if line != READY_MARK][-8:]) or "(nothing)"
        raise _fail(run, f"The session broke off: {run.failure}. Did your server's process end (a crash, sys.exit, "
                         f"os._exit) or stop answering (an endless loop)?\nIts last words on stderr:\n{tail}",
                    R_PROCESS)
    if run.protocol_version != run.revision:
        raise _fail(run, f"The SDK negotiated {run.protocol_version!r} instead of {run.revision}.",
                    R_VERSION.get(run.revision, R_PROCESS))


def answer_to(run: WireRun, method: str, **params: Any) -> dict[str, Any] | None:
    """The server's answer (the whole message) to the client's first ``method`` request whose params
    hold ``params``, from the process's own trace."""
    for frame in run.frames:
        message = frame["message"]
        got = message.get("params") if isinstance(message.get("params"), dict) else {}
        if frame["from"] == "client" and message.get("method") == method and \
                all(got.get(k) == v for k, v in params.items()):
            return next((f["message"] for f in run.frames if f["from"] == "server" and "method" not in f["message"]
                         and f["message"].get("id") == message.get("id")), None)
    return None


def server_names(run: WireRun) -> set[Any]:
    """The names the server gave itself: serverInfo in the opening's result, and in 2026-07-28 in each
    result's _meta."""
    names = set()
    for frame in run.frames:
        result = frame["message"].get("result") if frame["from"] == "server" else None
        if isinstance(result, dict):
            found = result.get("_meta")
            meta: dict[str, Any] = found if isinstance(found, dict) else {}
            for info in (result.get("serverInfo"), meta.get("io.modelcontextprotocol/serverInfo")):
                if isinstance(info, dict):
                    names.add(info.get("name"))
    return names


def check_schema(run: WireRun) -> None:
    """Every message the server wrote is valid for the revision, and so is each result's own type."""
    asked = {json.dumps(f["message"].get("id")): f["message"].get("method") for f in run.frames
             if f["from"] == "client" and "method" in f["message"]}
    for frame in run.frames:
        message = frame["message"]
        if frame["from"] != "server":
            continue
        errors = schema_errors(message, run.revision)
        method = asked.get(json.dumps(message.get("id")))
        if not errors and "result" in message and method in _RESULTS:
            errors = schema_errors(message["result"], run.revision, _RESULTS[method])
        if errors:
            raise _fail(run, f"This message breaks the {run.revision} schema ({'; '.join(errors[:3])}):\n"
                             f"{json.dumps(message)[:400]}", R_SCHEMA)


def check_offer(run: WireRun) -> None:
    """The three tools with honest annotations, the template, the prompt. Annotations are compared by
    meaning: a hint left out means the spec's default (readOnlyHint false, destructiveHint true)."""
    names = server_names(run)
    if names != {"expenses"}:
        raise _fail(run, f"The server names itself {sorted(map(repr, names)) or 'nowhere'} in serverInfo; the README "
                         f"names it 'expenses'.", R_INFO.get(run.revision, R_PROCESS))
    tools = {t.get("name"): t for t in run.seen.get("tools") or [] if isinstance(t, dict)}
    want = {"list_expenses": {"readOnlyHint": True},
            "add_expense": {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False},
            "delete_expense": {"readOnlyHint": False, "destructiveHint": True}}
    for name, hints in want.items():
        if name not in tools:
            raise _fail(run, f"tools/list does not offer {name} (it offers {sorted(map(str, tools))}).", R_ANNOTATIONS)
        annotations = tools[name].get("annotations") or {}
        for hint, value in hints.items():
            if annotations.get(hint, ANNOTATION_DEFAULTS[hint]) is not value:
                raise _fail(run, f"{name} is announced with annotations {json.dumps(annotations)}; it should say "
                                 f"{hint}: {json.dumps(value)}.", R_ANNOTATIONS)
    if "expenses://{expense_id}" not in (run.seen.get("templates") or []):
        raise _fail(run, f"resources/templates/list should offer expenses://{{expense_id}}; it offers "
                         f"{run.seen.get('templates')!r}.", R_RESOURCES)
    if "monthly_report" not in [p.get("name") for p in run.seen.get("prompts") or [] if isinstance(p, dict)]:
        raise _fail(run, f"prompts/list should offer monthly_report; it offers {run.seen.get('prompts')!r}.", R_PROMPTS)


def _new_expense(run: WireRun, step: str, description: str, cents: int, taken: set[str]) -> str:
    """The id of the expense ``step`` added: its answer is the new expense as JSON, under an id that was
    not taken."""
    seen = run.seen.get(step)
    call = f"add_expense({description!r}, {cents})"
    if not isinstance(seen, dict) or seen.get("is_error") is not False:
        raise _fail(run, f"{call} answered {seen!r}; it should succeed.", R_TOOL_ERRORS)
    try:
        added = json.loads(seen["text"])
        assert isinstance(added, dict) and "id" in added
    except (ValueError, AssertionError):
        raise _fail(run, f"{call} should return the new expense as JSON text (id, description, cents); it returned "
                         f"{seen['text'][:200]!r}.", R_TOOL_ERRORS) from None
    if added.get("description") != description or added.get("cents") != cents:
        raise _fail(run, f"{call} returned {added!r}, which is not the expense it was asked to record.", R_TOOL_ERRORS)
    if str(added["id"]) in taken:
        raise _fail(run, f"{call} gave the new expense the id {added['id']!r}, which another expense already has "
                         f"(ids taken: {sorted(taken)}): the new one overwrites it.", R_TOOL_ERRORS)
    return str(added["id"])


def check_calls(run: WireRun, plan: Plan) -> None:
    """Per-caller listing, adding, failures as results, deleting only one's own."""
    own = {e["id"] for e in plan.expenses if e["owner"] == plan.caller}
    before = {str(i["id"]) for i in _json_list(run, "list_before")}
    if before - own:
        raise _fail(run, f"Caller {plan.caller} was shown expenses of other callers: {sorted(before - own)}.", R_AUTHZ)
    if before != own:
        raise _fail(run, f"list_expenses for {plan.caller} should list {sorted(own)}; it listed {sorted(before)}.",
                    R_TOOL_ERRORS)
    taken = {str(e["id"]) for e in plan.expenses}
    first = _new_expense(run, "add", plan.new_description, plan.new_cents, taken)
    small = _new_expense(run, "add_one_cent", plan.new_description + " (small)", 1, taken | {first})
    after = _json_list(run, "list_after")
    if not any(i.get("description") == plan.new_description and i.get("cents") == plan.new_cents for i in after):
        raise _fail(run, f"After add_expense({plan.new_description!r}, {plan.new_cents}) list_expenses does not show "
                         f"it: {after!r}.", R_TOOL_ERRORS)
    if small not in {str(i["id"]) for i in after}:
        raise _fail(run, f"After add_expense({plan.new_description + ' (small)'!r}, 1) list_expenses does not show "
                         f"{small}: {after!r}.", R_TOOL_ERRORS)
    for step, what in (("add_negative", f"cents={plan.bad_cents}"), ("add_zero", "cents=0"),
                       ("add_wrong_type", "cents given as a string"), ("add_blank", f"description={plan.blank!r}")):
        seen = run.seen.get(step)
        if isinstance(seen, dict) and "error" in seen:
            raise _fail(run, f"add_expense with {what} was answered with the JSON-RPC error {seen['error']['code']}. "
                             f"The tool ran and refused: that is a result with isError: true.", R_TOOL_ERRORS)
        if not isinstance(seen, dict) or seen.get("is_error") is not True:
            raise _fail(run, f"add_expense with {what} was accepted ({seen!r}); amounts are positive whole cents "
                             f"and a description is not blank.", R_TOOL_ERRORS)
    theirs = run.seen.get("delete_theirs")
    if not isinstance(theirs, dict) or theirs.get("is_error") is not True:
        raise _fail(run, f"{plan.caller} deleted {plan.theirs}, which belongs to another caller ({theirs!r}).",
                    R_AUTHZ)
    owner = next(str(e["owner"]) for e in plan.expenses if e["id"] == plan.theirs)
    if owner in str(theirs.get("text", "")):
        raise _fail(run, f"{plan.caller} tried to delete {plan.theirs}, and the refusal {theirs.get('text')!r} names "
                         f"who owns it: the answer must not tell a caller whose a record is.", R_HIDE)
    mine = run.seen.get("delete_mine")
    if not isinstance(mine, dict) or mine.get("is_error") is not False:
        raise _fail(run, f"{plan.caller} could not delete their own {plan.mine}: {mine!r}.", R_TOOL_ERRORS)
    if plan.mine in {str(i["id"]) for i in _json_list(run, "list_end")}:
        raise _fail(run, f"delete_expense({plan.mine!r}) succeeded but the expense is still listed.", R_TOOL_ERRORS)
    unknown = run.seen.get("unknown_tool")
    if not isinstance(unknown, dict) or (unknown.get("error") or {}).get("code") != -32602:
        raise _fail(run, f"tools/call for a tool that does not exist should be error -32602; got {unknown!r}.",
                    R_TOOL_ERRORS)


def check_resource_and_prompt(run: WireRun, plan: Plan) -> None:
    """The caller's own expense reads; another caller's is 'not found' in the era's code; the prompt."""
    mine = run.seen.get("read_mine")
    if not isinstance(mine, list) or not any(plan.mine in str(text) for text in mine):
        raise _fail(run, f"resources/read expenses://{plan.mine} (the caller's own) answered {mine!r}.", R_RESOURCES)
    theirs = run.seen.get("read_theirs")
    code = -32002 if run.revision == "2025-11-25" else -32602
    if isinstance(theirs, list):
        raise _fail(run, f"{plan.caller} read expenses://{plan.theirs}, another caller's expense: {theirs!r}.", R_AUTHZ)
    got = (theirs or {}).get("error", {}).get("code") if isinstance(theirs, dict) else None
    if got != code:
        # the other era's not-found code is a slip of the era; any other answer tells the caller it exists
        raise _fail(run, f"resources/read for an expense the caller cannot see should be 'resource not found', "
                         f"{code} in {run.revision}; got {got}.", R_RESOURCES if got in (-32002, -32602) else R_HIDE)
    read = answer_to(run, "resources/read", uri=f"expenses://{plan.mine}") or {}
    scope = (read.get("result") or {}).get("cacheScope") if isinstance(read.get("result"), dict) else None
    if run.revision == "2026-07-28" and scope == "public":
        raise _fail(run, f"resources/read expenses://{plan.mine}, the caller's own expense, is answered with cacheScope "
                         f"'public': a shared cache may hand it to any other caller.", R_CACHE)
    prompt = run.seen.get("prompt")
    if not isinstance(prompt, list) or not any(plan.month in text for text in prompt):
        raise _fail(run, f"prompts/get monthly_report with month={plan.month!r} should mention {plan.month} in its "
                         f"messages; got {prompt!r}.", R_PROMPTS)


def check_server(ctx: CheckContext, kind: str) -> None:
    plan = make_plan(ctx.rng)
    run = drive(launcher_config(ctx.learner), plan, ERAS[kind])
    check_started(run)
    check_schema(run)  # before the SDK's own complaints: the schema says what exactly is wrong
    check_completed(run)
    check_offer(run)
    check_calls(run, plan)
    check_resource_and_prompt(run, plan)


# --- (a) again, under mcp-sim check ----------------------------------------------------------------------

CHECK_KINDS: Final = ("both eras, under the nemesis",)


def breaks(finding: Finding) -> bool:
    """Whether a finding fails the check: the strongest strength (a broken MUST or MUST NOT); the
    others are advice."""
    from mcp_sim.bridge.check.findings import FindingStrength

    return finding.strength == get_args(FindingStrength)[0]


def _frame(trace: Any, finding: Finding) -> str:
    """The line of the trace a finding points at, as it crossed the wire (or its message)."""
    seq = finding.evidence.get("seq")
    for event in trace:
        if event.seq == seq:
            text = event.raw if event.raw is not None else json.dumps(event.message) if event.message else event.text
            return f"\nThe frame it points at (#{seq}, {event.sender} → {event.receiver}): {str(text)[:300]}"
    return ""


def _last_words(trace: Any, finding: Finding) -> str:
    """What the server's process wrote to stderr on the finding's link, its last lines (its own words
    for a crash or a failed start)."""
    lines = [str(e.text) for e in trace if e.link == finding.evidence.get("link") and e.kind == "log" and e.text
             and e.text != READY_MARK and "RuntimeWarning" not in e.text]
    return "\nIts last words on stderr:\n" + "\n".join(lines[-8:]) if lines else ""


def explain_findings(report: CheckReport, trace: Any) -> tuple[str, str] | None:
    """The explanation and rule of the first broken MUST of ``report`` (in the order of the trace), or
    ``None`` when it has none: the rule, where and what was seen, never what the answer should be."""
    broken = [f for f in report.findings if breaks(f)]
    if not broken:
        return None
    first = broken[0]
    others = sorted({f.rule for f in broken[1:]} - {first.rule})
    more = f"\nIt also found: {', '.join(others)}." if others else ""
    return (f"mcp-sim check (the course's checker: both eras, nemesis {', '.join(report.nemesis)}, seed "
            f"{report.seed}) found {len(broken)} failing finding(s). The first, in {first.era}: {first.message}."
            f"{_frame(trace, first)}{_last_words(trace, first) if first.rule == R_PROCESS else ''}{more}", first.rule)


def advice(report: CheckReport) -> list[str]:
    """The findings of a lesser strength, one line each: shown as notes, never a failure."""
    return [f"mcp-sim check advises ({f.strength.lower()}, {f.era}): {f.message} — rule {f.rule}"
            for f in report.findings if not breaks(f)]


def check_mcp_sim_check(ctx: CheckContext, kind: str) -> None:
    """``mcp-sim check`` of the learner's server: every broken MUST fails, the rest become notes."""
    report, trace = run_mcp_sim_check(launcher_config(ctx.learner), make_plan(ctx.rng), ctx.seed)
    if isinstance(ctx.learner, LearnerProcess):
        ctx.learner.notes.extend(n for n in advice(report) if n not in ctx.learner.notes)
    failed = explain_findings(report, trace)
    if failed is not None:
        raise CheckFailed(*failed)


# --- (b) the host policy inside the Host ------------------------------------------------------------------

REVIEW_KINDS: Final = ("tool poisoning: in the description", "tool poisoning: in a parameter description",
                       "tool poisoning: in an enum value", "tool poisoning: in invisible Unicode",
                       "tool poisoning: in the title", "rug pull: a definition changed after approval")
_REVIEW_LABS: Final = {REVIEW_KINDS[0]: ("tool-poisoning", "main"),
                       REVIEW_KINDS[1]: ("tool-poisoning", "parameter-description"),
                       REVIEW_KINDS[2]: ("tool-poisoning", "enum-value"),
                       REVIEW_KINDS[3]: ("tool-poisoning", "invisible-unicode"),
                       REVIEW_KINDS[4]: ("tool-poisoning", "title"),
                       REVIEW_KINDS[5]: ("rug-pull", "parameter-description")}
ANNOTATION_KINDS: Final = ("annotations lab: a destructive tool claims readOnlyHint",
                           "annotations lab: it claims destructiveHint false",
                           "annotations lab: every hint reassuring")
_ANNOTATION_VARIANTS: Final = dict(zip(ANNOTATION_KINDS, ("main", "not-destructive", "all-reassuring"), strict=True))


def _lab(name: str, defence: Any, seed: int, variant: str) -> Any:
    """Run a security lab with the learner's functions as its defence; the learner's own failures
    (a wrong answer, an exception) come out of the simulation as themselves."""
    from mcp_sim.scenarios.security import LABS

    try:
        return LABS[name].run_with(defence, "fixed", seed, variant)
    except BaseExceptionGroup as group:
        leaf: BaseException = group
        while isinstance(leaf, BaseExceptionGroup) and leaf.exceptions:
            leaf = leaf.exceptions[0]
        raise leaf from None


def check_review_direct(ctx: CheckContext, kind: str) -> None:
    """A poisoned definition with one sign only, and its honest twin: False for the one, True for the other."""
    review = ctx.function("review_tool")
    poisoned, honest = policy.review_case(ctx.rng, kind)
    for tool, want in ((poisoned, False), (honest, True)):
        got = review("notes", tool)
        if got is not want:
            rule = R_WORKLOAD if want and got is False else R_REVIEW
            raise CheckFailed(f"{kind}: review_tool() returned {got!r}.", rule,
                              case=f"review_tool('notes', {json.dumps(tool, ensure_ascii=True)})", expected=repr(want))


def check_review(ctx: CheckContext, kind: str) -> None:
    from mcp_sim.scenarios.security.tool_definitions import PinnedReview, Review

    if kind in policy.DIRECT_REVIEW_KINDS:
        check_review_direct(ctx, kind)
        return
    review = ctx.function("review_tool")
    name, variant = _REVIEW_LABS[kind]
    defence = Review(review) if name == "tool-poisoning" else PinnedReview(lambda: review)
    result = _lab(name, defence, ctx.rng.randrange(1 << 30), variant)
    # what the review turned down: the poisoning lab lists it, the rug-pull lab keeps every review's verdict
    rejected = list(result.evidence.get("rejected", [])) or \
        [f"{server}/{tool} ({status})" for server, tool, status, approved in result.evidence.get("findings", [])
         if not approved]
    if result.succeeded:
        raise CheckFailed(f"{kind}: review_tool() let the poisoned definition through and the model obeyed it — "
                          f"{result.facts.goal} reached the attacker.", R_REVIEW)
    if not result.legitimate:
        raise CheckFailed(f"{kind}: the attack failed, but so did the user's own request (honest tools were "
                          f"rejected: {', '.join(rejected) or 'see the lab'}).", R_WORKLOAD)


def check_confirmation(ctx: CheckContext, kind: str) -> None:
    decide = ctx.function("decide")
    try:
        if kind in ANNOTATION_KINDS:
            from mcp_sim.scenarios.security.payments import Approval

            result = _lab("annotations-trusted", Approval(policy.LearnerApproval(decide=decide)),
                          ctx.rng.randrange(1 << 30), _ANNOTATION_VARIANTS[kind])
            if result.succeeded:
                raise CheckFailed(f"{kind}: {result.evidence['tool']} ran without a confirmation and deleted notes "
                                  f"(annotations {json.dumps(result.evidence['annotations'])} from an untrusted "
                                  f"server).", R_CONFIRM)
            if not result.legitimate:
                raise CheckFailed(f"{kind}: the user's own request (list my notes) did not go through.", R_WORKLOAD)
            return
        seen = policy.confirmation_case(decide, kind, ctx.rng.randrange(1 << 30))
    except policy.BadAnswer as exc:
        raise CheckFailed(str(exc), R_CONFIRM) from None
    where = f"{seen.tool} of the {'trusted' if seen.trusted else 'untrusted'} server {seen.server}"
    if kind == "a trusted read-only tool runs unconfirmed":
        if not seen.ran or seen.asked:
            raise CheckFailed(f"decide() answered {seen.answer!r} for {where}, which a trusted server annotates "
                              f"readOnlyHint: true. Reading the user's own data should run without a question.",
                              R_WORKLOAD)
    elif seen.answer == "run" or (not seen.asked and seen.ran):
        raise CheckFailed(f"decide() answered 'run' for {where} ({kind}): it ran without the user's confirmation.",
                          R_CONFIRM)
    elif seen.trusted and not seen.ran:
        raise CheckFailed(f"decide() answered {seen.answer!r} for {where} ({kind}); the user asked for it and would "
                          f"have said yes, so it should be 'ask', not refused.", R_WORKLOAD)


def check_read(ctx: CheckContext, kind: str) -> None:
    args, want = policy.read_case(ctx.rng, kind)
    got = ctx.function("may_read")(*args)
    if got is not want:
        server, uri, trusted, roots = args
        rule = R_WORKLOAD if want else R_READ
        raise CheckFailed(f"may_read() returned {got!r}.", rule,
                          case=f"may_read({server!r}, {uri!r}, trusted={trusted}, roots={roots})",
                          expected=f"{want} ({kind})")


_SEGMENTS = ("/2026-03.csv", "/../.ssh/id_ed25519", "/%2e%2e/.netrc", "/%2E%2E/.netrc", "/a/%2E%2E/b.csv", "", "/",
             "-old/x.csv", "/./x.csv", "/..%2F.netrc")


@st.composite
def _reads(draw: st.DrawFn) -> tuple[str, str, bool, list[str]]:
    roots = draw(st.lists(st.sampled_from(("file:///home/ada/ledger", "FILE:///home/ada/ledger/", "file:///srv/inbox")),
                          min_size=1, max_size=2, unique=True))
    scheme = draw(st.sampled_from(("file", "FILE", "File", "expenses", "notes")))
    base = draw(st.sampled_from(("/home/ada/ledger", "/srv/inbox", "/home/ada")))
    uri = f"{scheme}://{base}{draw(st.sampled_from(_SEGMENTS))}" if scheme.lower() == "file" else f"{scheme}://2026-03"
    return "files", uri, draw(st.booleans()), roots


def check_read_generated(ctx: CheckContext, kind: str) -> None:
    corners = [("files", f"FILE:///home/ada/ledger{seg}", True, ["file:///home/ada/ledger"]) for seg in _SEGMENTS]
    corners_then_generated(
        ctx, corners, _reads(), learner=lambda c: ctx.function("may_read")(*c), oracle=lambda c: policy.expected_read(*c),
        compare=lambda c, got, want: None if got is want else Mismatch(
            f"may_read() returned {got!r}.", R_WORKLOAD if want else R_READ, expected=str(want)),
        describe=lambda c: f"may_read({c[0]!r}, {c[1]!r}, trusted={c[2]}, roots={c[3]})", examples=20)


EXERCISE = Exercise(
    id="ex12_capstone",
    title="Capstone: your server and your Host policy, graded over the real wire",
    chapter="12",
    summary="Build an expenses server (honest annotations, isError failures, per-caller checks, a resource and a "
            "prompt) that the official SDK drives over a real stdio pipe in both eras, and a Host policy that stops "
            "the security labs' attacks while the user's own work still goes through.",
    rules=(R_PROCESS, R_STDOUT, R_SCHEMA, R_ANNOTATIONS, R_TOOL_ERRORS, R_RESOURCES, R_PROMPTS, R_AUTHZ, R_REVIEW,
           R_CONFIRM, R_WORKLOAD, R_READ, R_HIDE, R_CACHE, *R_INFO.values()),
    functions=("build_server", "review_tool", "decide", "may_read"),
    checks=(
        Check("Review: poisoned and changed definitions never reach the model", R_REVIEW, check_review,
              REVIEW_KINDS + policy.DIRECT_REVIEW_KINDS,
              hint="Read every string of the definition (keys, enum values, titles), reveal invisible characters "
                   "first, and refuse text that gives orders, names files or hides itself.", seeds=1),
        Check("Confirmation: what runs, what asks the user, what is refused", R_CONFIRM, check_confirmation,
              policy.CONFIRMATION_KINDS + ANNOTATION_KINDS,
              hint="Believe readOnlyHint only from a trusted server; believe destructiveHint: true from anyone; "
                   "everything else asks.", seeds=1),
        Check("What the model may read", R_READ, check_read, policy.READ_KINDS,
              hint="Untrusted servers: nothing. file:// URIs: decode, resolve '..', then compare whole path "
                   "segments with each root."),
        Check("Any URI and roots: what the model may read", R_READ, check_read_generated, ("generated",),
              hint="Parse the URI (its scheme in any case), decode %XX, resolve '..', compare whole segments.",
              seeds=1),
        Check("Your server, driven by the official SDK over stdio in both eras", R_PROCESS, check_server,
              tuple(ERAS), hint="The failure quotes what the SDK saw and names the rule; the exercise's hints "
                                "(result.hint(n)) take the rules one by one. Keep the tools, template and prompt "
                                "named as in the README.", seeds=1),
        Check("Your server under mcp-sim check (both eras, a nemesis)", R_PROCESS, check_mcp_sim_check, CHECK_KINDS,
              hint="Run it yourself as the README shows: the failure names the broken rule and the frame of the "
                   "trace that shows it.", seeds=1),
    ),
    hints=(
        Hint("Start with the server: build_server(expenses) returns a Server; each tool takes ctx: Context and uses "
             "ctx.auth.subject to keep to the caller's own expenses.", R_AUTHZ),
        Hint("Refuse bad values by raising an ordinary exception (ValueError) inside the tool: the simulator turns it "
             "into a result with isError: true. For a resource that is not the caller's, raise KeyError: that is "
             "'not found' in the right code for each era.", R_TOOL_ERRORS),
        Hint("Annotate every tool honestly: list_expenses readOnlyHint true; add_expense readOnlyHint false, "
             "destructiveHint false; delete_expense readOnlyHint false, destructiveHint true. A hint left out "
             "means its default (readOnlyHint false, destructiveHint true).", R_ANNOTATIONS),
        Hint("Never print() in the server: stdout is the protocol stream. Use logging (stderr) instead.", R_STDOUT),
        Hint("decide(): 'run' only for readOnlyHint from a trusted server (and no destructiveHint: true); 'ask' for "
             "everything else you want to allow.", R_CONFIRM),
    ),
    forbidden=("mcp_sim.security", "mcp_sim.scenarios"),
    needs=("mcp_sim.capabilities.context", "mcp_sim.roles.server", "mcp_sim.grading.launcher",
           "mcp_sim.grading.sandbox"),
)
