"""Exercise ex10_authorize_call (chapter 10): the Server's own check of every operation.

The learner writes ``authorize(caller, operation, target)``: ``None`` when the authenticated
``caller`` may perform ``operation`` on ``target``, else the name of the first check that fails —
``"identity"``, ``"scope"``, ``"tenant"`` or ``"ownership"``.

The grader runs two labs with the learner's check inside the Server: ``host-approval-not-authorization``
(a finance Server that trusted the Host's confirmation dialog) and ``state-handle-hijacking`` (a drafts
Server that took possession of a handle as permission), every variant. Direct cases ask the learner
about single calls; their expected answers come from the labs' own fixed checks, run on the same
caller and object.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import strategies as st

from mcp_sim.grading.differential import Mismatch
from mcp_sim.grading.exercises.ex10_labs import (
    Asker,
    expect_lab_holds,
    lab_kinds,
    lab_seed,
    run_learner_lab,
    split_kind,
)
from mcp_sim.grading.exercises.generated import corners_then_generated
from mcp_sim.grading.model import Check, CheckContext, CheckFailed, Exercise, Hint
from mcp_sim.scenarios.security import LABS
from mcp_sim.scenarios.security.tenants import Account, BoundHandles, HandleRecord, Handles, ServerChecks
from mcp_sim.security.authorization import AccessDenied, authorize
from mcp_sim.security.identity import AuthInfo, pick_distinct, pick_name

R_EVERY_CALL = "tools.servers-validate-inputs"
R_HANDLE = "security.bp.state-handle-not-auth"
CHECKS = ("identity", "scope", "tenant", "ownership")

_FINANCE = LABS["host-approval-not-authorization"].defences["fixed"].check
_HANDLES = LABS["state-handle-hijacking"].defences["fixed"].policy
BALANCE = {"name": "get_balance", "scopes": ["finance:read"]}
READ_DRAFT = {"name": "read_draft", "scopes": []}


def caller_of(auth: AuthInfo | None) -> dict[str, Any] | None:
    """The authenticated caller as the learner sees it (``None``: nobody authenticated)."""
    if auth is None:
        return None
    return {"subject": auth.subject, "tenant": auth.tenant, "scopes": list(auth.scopes), "client_id": auth.client_id}


def _decide(asker: Asker, auth: AuthInfo | None, operation: dict[str, Any], target: dict[str, Any]) -> None:
    """Ask the learner; raise :class:`AccessDenied` (as the lab's Server does) unless the answer is None."""
    answer = asker.ask("authorize", caller_of(auth), dict(operation), dict(target), fallback="identity")
    if answer is None:
        return
    if answer not in CHECKS:
        asker.wrong(f"authorize() must return None or one of {', '.join(CHECKS)}; it returned {answer!r}.")
        answer = "identity"
    raise AccessDenied(answer, "refused by the Server's check")


class LearnerHandles(BoundHandles):
    """The fixed handle policy's random, expiring handles, with the learner's check of who may use one."""

    def __init__(self, asker: Asker) -> None:
        self.asker = asker

    def check(self, auth: AuthInfo | None, record: HandleRecord, now: float) -> None:
        subject, tenant, client_id = record.principal
        _decide(self.asker, auth, READ_DRAFT, {"tenant": tenant, "owner": subject, "client_id": client_id})
        if now >= record.expires:
            raise PermissionError("this handle has expired")


def check_lab(ctx: CheckContext, kind: str) -> None:
    lab, variant = split_kind(kind)
    asker = Asker(ctx)
    if lab == "state-handle-hijacking":
        defence: Any = Handles(LearnerHandles(asker))
        rule = R_HANDLE
    else:
        def check(auth: AuthInfo | None, account: Account) -> None:
            _decide(asker, auth, BALANCE, {"tenant": account.tenant, "owner": account.owner, "client_id": None})

        defence, rule = ServerChecks(check), R_EVERY_CALL
    result = run_learner_lab(asker, lab, variant, lab_seed(ctx), defence, rule)
    expect_lab_holds(result, rule, your="your authorize()")


# --- direct cases: one call each, the expected answer from the labs' fixed checks ---------------------

def _people(rng: Any) -> tuple[str, str, str, str]:
    """(owner, owner's tenant, a colleague, another tenant)."""
    tenant, other = pick_distinct(rng, "tenant", 2)
    owner, colleague = pick_name(rng, "user"), pick_name(rng, "user")
    while colleague == owner:
        colleague = pick_name(rng, "user")
    return owner, tenant, colleague, other


def _balance_case(rng: Any, kind: str) -> tuple[AuthInfo | None, dict[str, Any]]:
    owner, tenant, colleague, other = _people(rng)
    target = {"tenant": tenant, "owner": owner, "client_id": None}
    scopes = ("finance:read", *rng.sample(("profile", "finance:write", "mail:read"), 1))
    auth: AuthInfo | None = {
        "nobody is authenticated": None,
        "the owner's token without finance:read": AuthInfo(owner, tenant, scopes=("profile", "finance:readonly")),
        "a caller of another tenant": AuthInfo(colleague, other, scopes=scopes),
        "the owner's name in another tenant": AuthInfo(owner, other, scopes=scopes),
        "a colleague in the same tenant": AuthInfo(colleague, tenant, scopes=scopes),
        "the owner with finance:read": AuthInfo(owner, tenant, scopes=scopes, client_id="app"),
        "the owner through another client": AuthInfo(owner, tenant, scopes=scopes, client_id="phone"),
        "a caller without a subject": AuthInfo("", tenant, scopes=scopes),
        "the owner's token with a wildcard scope": AuthInfo(owner, tenant, scopes=("finance:*", "*")),
        "the owner's token with a shorter scope": AuthInfo(owner, tenant, scopes=("finance", "finance:rea")),
        "another tenant's caller without the scope": AuthInfo(colleague, other, scopes=("profile",)),
        "the owner's name in another tenant, without the scope": AuthInfo(owner, other, scopes=("profile",)),
    }[kind]
    return auth, target


def _draft_case(rng: Any, kind: str) -> tuple[AuthInfo | None, dict[str, Any]]:
    owner, tenant, colleague, other = _people(rng)
    client = rng.choice(("editor", "notes-app", "ide"))
    target = {"tenant": tenant, "owner": owner, "client_id": client}
    auth: AuthInfo | None = {
        "the handle used by another client of its owner": AuthInfo(owner, tenant, client_id="browser-extension"),
        "the handle used by a colleague": AuthInfo(colleague, tenant, client_id=client),
        "the handle used under the owner's name in another tenant": AuthInfo(owner, other, client_id=client),
        "the handle used by nobody": None,
        "the handle used by its owner's client": AuthInfo(owner, tenant, client_id=client),
    }[kind]
    return auth, target


def expected(auth: AuthInfo | None, operation: dict[str, Any], target: dict[str, Any]) -> str | None:
    """What the lab's fixed check says: ``None`` or the name of the check that refused."""
    try:
        if operation["name"] == "read_draft":
            record = HandleRecord("draft", (target["owner"], target["tenant"], target["client_id"]), 600.0)
            _HANDLES.check(auth, record, 0.0)
        else:
            _FINANCE(auth, Account("ACCT-1", target["tenant"], target["owner"], (100,)))
    except AccessDenied as denied:
        return denied.check
    return None


BALANCE_DENIED = ("nobody is authenticated", "a caller without a subject", "the owner's token without finance:read",
                  "the owner's token with a wildcard scope", "the owner's token with a shorter scope",
                  "a caller of another tenant", "the owner's name in another tenant", "a colleague in the same tenant")
ORDER_KINDS = ("another tenant's caller without the scope", "the owner's name in another tenant, without the scope",
               "two scopes needed, the first held", "two scopes needed, the second held")
DRAFT_DENIED = ("the handle used by another client of its owner", "the handle used by a colleague",
                "the handle used under the owner's name in another tenant", "the handle used by nobody")
ALLOWED = ("the owner with finance:read", "the owner through another client", "the handle used by its owner's client")


def oracle(auth: AuthInfo | None, operation: dict[str, Any], target: dict[str, Any]) -> str | None:
    """What the labs' fixed checks decide for any operation: the four checks of
    :func:`mcp_sim.security.authorization.authorize` (the finance Server's), then — for an object issued to
    a client — the handle's client (the drafts Server's bound handles)."""
    try:
        authorize(auth, str(operation["name"]), scopes=operation.get("scopes", ()), tenant=target.get("tenant"),
                  owner=target.get("owner"))
    except AccessDenied as denied:
        return denied.check
    if target.get("client_id") is not None and (auth.client_id if auth else None) != target["client_id"]:
        return "ownership"
    return None


def check_direct(ctx: CheckContext, kind: str) -> None:
    draft = kind.startswith("the handle")
    if kind.startswith("two scopes needed"):
        owner, tenant, _, _ = _people(ctx.rng)
        held = "finance:export" if kind.endswith("the first held") else "finance:read"  # a kind, not a draw
        auth: AuthInfo | None = AuthInfo(owner, tenant, scopes=(held,))
        operation: dict[str, Any] = {"name": "export_statement", "scopes": ["finance:export", "finance:read"]}
        target = {"tenant": tenant, "owner": owner, "client_id": None}
        want = oracle(auth, operation, target)
    else:
        auth, target = (_draft_case if draft else _balance_case)(ctx.rng, kind)
        operation = READ_DRAFT if draft else BALANCE
        want = expected(auth, operation, target)
    caller = caller_of(auth)
    got = ctx.function("authorize")(caller, dict(operation), dict(target))
    if got != want:
        rule = R_HANDLE if draft and kind not in ALLOWED else R_EVERY_CALL
        should = "None (allowed)" if want is None else repr(want)
        raise CheckFailed(f"authorize() returned {got!r} ({kind}).", rule,
                          case=f"authorize({json.dumps(caller)}, {json.dumps(operation)}, {json.dumps(target)})",
                          expected=should)


# --- generated: any caller, operation and object, against the fixed checks --------------------------------

_SCOPES = ("finance:read", "finance:write", "finance:*", "finance", "*", "finance:read-all")


@st.composite
def _calls(draw: st.DrawFn) -> tuple[dict[str, Any] | None, dict[str, Any], dict[str, Any]]:
    required = draw(st.lists(st.sampled_from(_SCOPES[:2]), max_size=2, unique=True))
    target = {"tenant": draw(st.sampled_from(("acme", None))), "owner": draw(st.sampled_from(("ada", None))),
              "client_id": draw(st.sampled_from((None, "editor")))}
    if draw(st.integers(0, 9)) == 0:
        return None, {"name": "op", "scopes": required}, target
    caller = {"subject": draw(st.sampled_from(("ada", "bo", ""))), "tenant": draw(st.sampled_from(("acme", "globex",
                                                                                                   None))),
              "scopes": draw(st.one_of(st.permutations(required), st.lists(st.sampled_from(_SCOPES), max_size=3,
                                                                            unique=True))),
              "client_id": draw(st.sampled_from(("editor", "browser-extension", None)))}
    return caller, {"name": "op", "scopes": required}, target


def _auth(caller: dict[str, Any] | None) -> AuthInfo | None:
    if caller is None:
        return None
    return AuthInfo(caller["subject"], caller["tenant"], scopes=tuple(caller["scopes"]), client_id=caller["client_id"])


def _compare_call(case: tuple[dict[str, Any] | None, dict[str, Any], dict[str, Any]], got: Any,
                  want: str | None) -> Mismatch | None:
    if got == want:
        return None
    rule = R_HANDLE if case[2]["client_id"] is not None and "ownership" in (got, want) else R_EVERY_CALL
    return Mismatch(f"authorize() returned {got!r}.", rule, expected="None (allowed)" if want is None else repr(want))


def check_generated(ctx: CheckContext, kind: str) -> None:
    owner, tenant = "ada", "acme"
    full = {"subject": owner, "tenant": tenant, "scopes": ["finance:read"], "client_id": "editor"}
    op = {"name": "op", "scopes": ["finance:read"]}
    mine = {"tenant": tenant, "owner": owner, "client_id": None}
    corners: list[tuple[dict[str, Any] | None, dict[str, Any], dict[str, Any]]] = [
        (full, op, mine), (None, op, mine), ({**full, "subject": ""}, op, mine),
        ({**full, "scopes": ["finance:*"]}, op, mine), ({**full, "tenant": None}, op, mine),
        ({**full, "tenant": "globex", "scopes": []}, op, mine), ({**full, "subject": "bo", "tenant": "globex"}, op, mine),
        (full, op, {"tenant": None, "owner": None, "client_id": None}),
        ({**full, "subject": "bo"}, op, {**mine, "owner": None}),
        ({**full, "subject": "bo"}, op, {**mine, "tenant": None}),
        ({**full, "client_id": None}, op, {**mine, "client_id": "editor"}),
        (full, {"name": "op", "scopes": ["finance:read", "finance:write"]}, mine),
        ({**full, "scopes": ["finance:write", "finance:read"]}, {"name": "op", "scopes": ["finance:read",
                                                                                          "finance:write"]}, mine),
        ({**full, "scopes": []}, {"name": "op", "scopes": []}, mine)]
    corners_then_generated(ctx, corners, _calls(), learner=lambda c: ctx.function("authorize")(
        copy.deepcopy(c[0]), dict(c[1]), dict(c[2])), oracle=lambda c: oracle(_auth(c[0]), c[1], c[2]),
        compare=_compare_call, describe=lambda c: f"authorize({json.dumps(c[0])}, {json.dumps(c[1])}, "
                                                  f"{json.dumps(c[2])})")


EXERCISE = Exercise(
    id="ex10_authorize_call",
    title="The Server authorizes every call itself: identity, scope, tenant, ownership",
    chapter="10",
    summary="Write the Server's per-operation check; graded by the host-approval-not-authorization and "
            "state-handle-hijacking labs with your check inside the Server.",
    rules=(R_EVERY_CALL, R_HANDLE),
    functions=("authorize",),
    checks=(
        Check("A direct caller is checked like any other", R_EVERY_CALL, check_lab,
              lab_kinds("host-approval-not-authorization"),
              hint="The Server never saw the Host's dialog: check the caller's token on every call.", seeds=1),
        Check("Identity, scope, tenant, ownership — in that order", R_EVERY_CALL, check_direct, BALANCE_DENIED,
              hint="Return the first check that fails: no caller, a missing scope, another tenant, another owner."),
        Check("A state handle is bound to its principal", R_HANDLE, check_lab, lab_kinds("state-handle-hijacking"),
              hint="Holding a handle proves nothing: compare the caller with the principal the handle was issued "
                   "to.", seeds=1),
        Check("Subject, tenant and client of a handle", R_HANDLE, check_direct, DRAFT_DENIED,
              hint="A subject alone is not a principal: the same name in another tenant, or another client of the "
                   "same user, is someone else."),
        Check("The rightful caller is still served", R_EVERY_CALL, check_direct, ALLOWED,
              hint="Refuse only what a check refuses; the owner with the right scope must get their answer."),
        Check("Two faults at once: the first check in the table", R_EVERY_CALL, check_direct, ORDER_KINDS,
              hint="Scope comes before tenant: name the first check that fails, and every required scope counts."),
        Check("Any caller, operation and object answers like the fixed checks", R_EVERY_CALL, check_generated,
              ("generated",), hint="Identity, scope (every one, as whole strings), tenant, ownership, the handle's "
                                   "client — in that order.", seeds=1),
    ),
    hints=(
        Hint("The Host's confirmation protects a user from their own model. It protects nobody from another "
             "caller — another Host, a script with a valid token — so the Server checks every operation itself.",
             R_EVERY_CALL),
        Hint("In order: no caller (or no subject) → 'identity'; a scope of operation['scopes'] missing from "
             "caller['scopes'] → 'scope'; target['tenant'] is not caller['tenant'] → 'tenant'; target['owner'] is "
             "not caller['subject'] → 'ownership'; target['client_id'] given and not caller['client_id'] → "
             "'ownership'. Otherwise None.", R_HANDLE),
    ),
    forbidden=("mcp_sim.security", "mcp_sim.scenarios"),
)
