"""Exercise ex10_token_audience (chapter 10): a resource server's audience and scope validation.

The learner writes ``check_token(token, resource, required_scopes, now_ms)``: the HTTP status an MCP
server answers a request bearing ``token`` (its claims, as introspection gives them) — ``200`` to serve
it, ``401`` for a token that is expired or was not issued for this server (its audience is not exactly
``resource``), ``403`` for a genuine token without a scope the request needs.

The grader runs the ``token-passthrough`` lab, every variant: a first run shows the tokens the lab's
victim and attacker present (audience, scopes); the learner decides each across the process boundary;
a second run on the same seed has the issues server check audiences exactly when the learner refused
the attacker's token, and the learner must accept the victim's own. Direct cases compare single
answers with the lab's own fixed validation (:meth:`AuthorizationServer.validate` with the audience
checked) on real tokens.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from mcp_sim.grading.differential import Mismatch
from mcp_sim.grading.exercises.ex10_labs import (
    Asker,
    checked,
    expect_lab_holds,
    lab_kinds,
    lab_seed,
    run_learner_lab,
    split_kind,
)
from mcp_sim.grading.exercises.generated import corners_then_generated
from mcp_sim.grading.model import Check, CheckContext, CheckFailed, Exercise, Hint
from mcp_sim.scenarios.security import LABS
from mcp_sim.scenarios.security.tenants import AudienceCheck
from mcp_sim.security.identity import User, pick_name
from mcp_sim.security.tokens import AccessToken, AuthorizationServer, TokenRejected

R_AUDIENCE = "auth.server-validates-audience"
R_SCOPE = "auth.insufficient-scope-403"
R_VALID = "auth.invalid-token-401"

_LAB = LABS["token-passthrough"]
TTL_MS = 3_600_000.0


def claims(token: AccessToken) -> dict[str, Any]:
    """What introspection tells the server about a token (the learner's input)."""
    return {"sub": token.subject, "tenant": token.tenant, "client_id": token.client_id, "aud": token.audience,
            "scopes": sorted(token.scopes), "iss": token.issuer, "exp_ms": token.expires_at_ms}


def _lab_tokens(seed: int, variant: str) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """First pass: the issues server's URI and the two tokens the lab presents to it — the victim's own, and
    the one the malicious server replays — as the lab issues them (at time 0, valid for an hour)."""
    shown = _LAB.run_with(AudienceCheck(False), "vulnerable", seed, variant).evidence
    resource = str(shown["presented_to"])
    base = {"sub": shown["victim"], "tenant": None, "client_id": "victim-host", "iss": "https://login.example",
            "exp_ms": TTL_MS}
    own = {**base, "aud": resource, "scopes": ["issues:read"]}
    replayed = {**base, "aud": str(shown["token_audience"]), "scopes": ["issues:read", "profile"]}
    return resource, own, replayed


def check_lab(ctx: CheckContext, kind: str) -> None:
    lab, variant = split_kind(kind)
    seed = lab_seed(ctx)
    resource, own, replayed = _lab_tokens(seed, variant)
    asker = Asker(ctx)
    answers = []
    for token in (own, replayed):
        status = asker.ask("check_token", dict(token), resource, [], 0.0, fallback=401)
        checked(status, int, "check_token", "an HTTP status (200, 401 or 403)", asker)
        answers.append(status)
    asker.raise_failure()
    if answers[0] != 200:
        raise CheckFailed(f"check_token() refused the victim's own token for {resource} with {answers[0]}: "
                          f"{json.dumps(own)}. A token issued for this server is served; refusing everything is not "
                          f"a fix.", R_VALID)
    result = run_learner_lab(asker, lab, variant, seed, AudienceCheck(answers[1] != 200), R_AUDIENCE)
    expect_lab_holds(result, R_AUDIENCE, your="your token check")


# --- direct cases: real tokens, the fixed validation's answer ----------------------------------------

def _oracle(claims_: dict[str, Any], resource: str, required: list[str], now: float) -> tuple[int, str]:
    """The status the lab's fixed validation answers for these claims, and the rule behind it. A token
    without an ``aud`` claim names no resource, so it is not for this one."""
    auth_server = AuthorizationServer("https://login.example", lambda: "t" * 16, lambda: now)
    value = "at_" + "t" * 16
    auth_server.issued[value] = AccessToken(value, str(claims_.get("sub")), claims_.get("tenant"),
                                            str(claims_.get("client_id")), str(claims_.get("aud", "")),
                                            frozenset(claims_["scopes"]), 0.0, float(claims_["exp_ms"]),
                                            str(claims_.get("iss")))
    try:
        auth_server.validate(value, audience=resource, required_scopes=tuple(required), check_audience=True)
    except TokenRejected as exc:
        return exc.status, exc.rule
    return 200, R_VALID


def _case(rng: Any, kind: str) -> tuple[dict[str, Any], str, list[str], float, int]:
    """The claims of a real token for ``kind``, the resource it is presented to, the scopes the request
    needs, the time, and the status the lab's fixed validation answers."""
    server = pick_name(rng, "server")
    resource = rng.choice((f"https://{server}.example/mcp", f"https://mcp.{server}.example/api/mcp"))
    scope, second = rng.sample(("issues:read", "files:read", "mail:send", "issues:write"), 2)
    extra = rng.choice(("profile", "offline_access"))
    audience = {
        "an exact audience and the scope": resource,
        "an audience that extends the URI": f"{resource}.{pick_name(rng, 'server')}.example/mcp",
        "a sibling path on the same host": f"{resource}-uploads",
        "the host without the path": resource[:resource.index("/", len("https://"))],
        "the URI with a trailing slash": resource + "/",
        "another server's URI": f"https://{pick_name(rng, 'server')}.example/mcp",
        "an audience that is a prefix of the URI": resource[:-1],
        "the URI in upper case": resource.upper(),
        "another server's URI, a scope missing too": f"https://{pick_name(rng, 'server')}.example/mcp",
    }.get(kind, resource)
    required = [scope]
    scopes = [scope, extra]
    if kind in ("a scope missing", "expired, a scope missing too", "another server's URI, a scope missing too"):
        scopes = [extra]
    elif kind == "a scope that only starts like the one needed":
        scopes = [f"{scope}-all", extra]
    elif kind == "a scope that is a prefix of the one needed":
        scopes = [scope[:-1], extra]
    elif kind == "a wildcard scope":
        scopes = [scope.split(":")[0] + ":*", "*", extra]
    elif kind in ("two scopes needed, the first held", "two scopes needed, the second held"):
        required = sorted([scope, second])
        scopes = [required[0 if kind.endswith("first held") else 1], extra]  # which one: a kind, not a draw
    elif kind == "the same action on another resource":
        required = [rng.choice(("issues:read", "files:read"))]
        scopes = [{"issues:read": "files:read", "files:read": "issues:read"}[required[0]], extra]
    elif kind == "two scopes needed, held in another order":
        required, scopes = sorted([scope, second]), [extra, *sorted([scope, second], reverse=True)]
    issued_at = float(rng.randint(0, 10_000_000))
    late = kind in ("an expired token", "expired, a scope missing too")
    now = issued_at + (TTL_MS + rng.randint(1, 60_000) if late else TTL_MS if kind == "a token expiring right now"
                       else TTL_MS - 1 if kind == "a token with one millisecond left" else rng.randint(1, 60_000))
    user = User(pick_name(rng, "user"), pick_name(rng, "tenant"))
    token = {"sub": user.subject, "tenant": user.tenant, "client_id": rng.choice(("ide", "cli")), "aud": audience,
             "scopes": scopes, "iss": "https://login.example", "exp_ms": issued_at + TTL_MS}
    if kind == "a token without an audience":
        del token["aud"]
    want, _ = _oracle(token, resource, required, now)
    return token, resource, required, now, want


AUDIENCE_KINDS = ("an audience that extends the URI", "a sibling path on the same host", "the host without the path",
                  "the URI with a trailing slash", "another server's URI", "an audience that is a prefix of the URI",
                  "the URI in upper case", "a token without an audience")
SCOPE_KINDS = ("a scope missing", "a scope that only starts like the one needed",
               "a scope that is a prefix of the one needed", "a wildcard scope", "two scopes needed, the first held",
               "two scopes needed, the second held", "the same action on another resource")
VALID_KINDS = ("an expired token", "a token expiring right now", "a token with one millisecond left",
               "an exact audience and the scope", "two scopes needed, held in another order")
ORDER_KINDS = ("expired, a scope missing too", "another server's URI, a scope missing too")


def _call(claims_: dict[str, Any], resource: str, required: list[str], now: float) -> str:
    return f"check_token({json.dumps(claims_)}, {resource!r}, {json.dumps(required)}, {now})"


def check_direct(ctx: CheckContext, kind: str) -> None:
    token, resource, required, now, want = _case(ctx.rng, kind)
    got = ctx.function("check_token")(dict(token), resource, list(required), now)
    if got != want:
        _, rule = _oracle(token, resource, required, now)
        if want == 200:
            rule = R_SCOPE if got == 403 else R_VALID
        raise CheckFailed(f"check_token() returned {got!r} ({kind}).", rule, case=_call(token, resource, required, now),
                          expected=f"HTTP {want}")


# --- generated: any audience, scopes and time, against the fixed validation -------------------------------

_RESOURCES = ("https://issues.example/mcp", "https://mcp.notes.example/api/mcp")
_POOL = ("issues:read", "issues:write", "files:read", "profile")


@st.composite
def _token_cases(draw: st.DrawFn) -> tuple[dict[str, Any], str, list[str], float]:
    resource = draw(st.sampled_from(_RESOURCES))
    host = resource[:resource.index("/", len("https://"))]
    aud = draw(st.one_of(st.just(resource), st.sampled_from((
        resource + "/", resource[:-1], resource + "-uploads", host, resource.upper(), "https://other.example/mcp",
        resource + ".other.example", None))))
    required = draw(st.lists(st.sampled_from(_POOL), max_size=3, unique=True))
    odd = st.sampled_from((*_POOL, "issues:*", "*", "issues:read-all", "issues:rea", "files"))
    held = draw(st.one_of(st.permutations(required), st.lists(odd, max_size=5, unique=True)))
    held = [*held, *draw(st.lists(odd, max_size=2, unique=True))]
    exp = float(draw(st.integers(1, 10_000)) * 1000)
    now = exp + draw(st.one_of(st.just(0.0), st.sampled_from((-60_000.0, -1.0, 1.0, 60_000.0))))
    claims_: dict[str, Any] = {"sub": "ada", "tenant": "acme", "client_id": "ide", "aud": aud, "scopes": held,
                               "iss": "https://login.example", "exp_ms": exp}
    if aud is None:
        del claims_["aud"]
    return claims_, resource, required, now


def _compare(case: tuple[dict[str, Any], str, list[str], float], got: Any, want: int) -> Mismatch | None:
    if got == want and isinstance(got, int) and not isinstance(got, bool):
        return None
    _, rule = _oracle(*case)
    if want == 200:
        rule = R_SCOPE if got == 403 else R_VALID
    return Mismatch(f"check_token() returned {got!r}.", rule, expected=f"HTTP {want}")


def _corners() -> list[tuple[dict[str, Any], str, list[str], float]]:
    """Every audience form, scope form and time around ``exp_ms``, each with the rest valid; then the pairs
    of faults whose order decides the status."""
    resource, exp = _RESOURCES[0], 3_600_000.0
    base: dict[str, Any] = {"sub": "ada", "tenant": "acme", "client_id": "ide", "aud": resource,
                            "scopes": ["issues:read", "profile"], "iss": "https://login.example", "exp_ms": exp}
    need = ["issues:read"]
    out = [(base, resource, need, exp - 1)]
    for aud in (resource + "/", resource[:-1], resource + "-uploads", "https://issues.example", resource.upper(),
                resource + ".other.example", None):
        out.append(({k: v for k, v in base.items() if k != "aud"} if aud is None else {**base, "aud": aud},
                    resource, need, exp - 1))
    for held in (["issues:rea"], ["issues:read-all"], ["issues:*"], ["*"], ["issues"], ["profile"], []):
        out.append(({**base, "scopes": held}, resource, need, exp - 1))
    two = ["issues:read", "issues:write"]
    out += [({**base, "scopes": ["issues:write"]}, resource, two, exp - 1),
            ({**base, "scopes": ["issues:write", "profile", "issues:read"]}, resource, two, exp - 1),
            ({**base, "scopes": []}, resource, [], exp - 1)]
    out += [(base, resource, need, exp), (base, resource, need, exp + 1)]
    out += [({**base, "scopes": []}, resource, need, exp), ({**base, "scopes": [], "aud": resource + "/"}, resource,
                                                            need, exp - 1)]
    return out


def check_generated(ctx: CheckContext, kind: str) -> None:
    corners_then_generated(ctx, _corners(), _token_cases(), learner=lambda c: ctx.function("check_token")(dict(c[0]), c[1], list(c[2]), c[3]),
                 oracle=lambda c: _oracle(*c)[0], compare=_compare, describe=lambda c: _call(*c))


EXERCISE = Exercise(
    id="ex10_token_audience",
    title="A token is for one server: audience and scope, matched exactly",
    chapter="10",
    summary="Write an MCP server's token check — exact audience, whole-string scopes, expiry — and the status it "
            "answers; graded by the token-passthrough lab.",
    rules=(R_AUDIENCE, R_SCOPE, R_VALID),
    functions=("check_token",),
    checks=(
        Check("A token replayed from another server is refused", R_AUDIENCE, check_lab, lab_kinds("token-passthrough"),
              hint="A genuine, unexpired token proves who the user is — not that it was meant for you.", seeds=1),
        Check("The audience is exactly this server", R_AUDIENCE, check_direct, AUDIENCE_KINDS,
              hint="Compare the whole audience string with your canonical URI: no prefix, no host-only match, no "
                   "normalising."),
        Check("Scopes are whole strings; a missing one is 403", R_SCOPE, check_direct, SCOPE_KINDS,
              hint="Every required scope must be in token['scopes'] exactly; answer 403, not 401, when one is "
                   "missing."),
        Check("Expired tokens are refused, valid ones served", R_VALID, check_direct, VALID_KINDS,
              hint="now_ms >= exp_ms is expired (401); an exact audience with the scopes is 200."),
        Check("Two faults at once: 401 comes before 403", R_VALID, check_direct, ORDER_KINDS,
              hint="A token that is expired or not for this server is refused as such (401), whatever its scopes."),
        Check("Any token, resource and time answers like the fixed validation", R_AUDIENCE, check_generated,
              ("generated",), hint="Expiry, then the exact audience, then every required scope as a whole string.", seeds=1),
    ),
    hints=(
        Hint("A server that accepts any genuine token lets every other server its users talk to replay their "
             "tokens against it. The audience names the one server a token is for.", R_AUDIENCE),
        Hint("check_token: 401 if now_ms >= token['exp_ms']; 401 if token['aud'] != resource; 403 if a required "
             "scope is not in token['scopes']; else 200.", R_SCOPE),
    ),
    forbidden=("mcp_sim.security", "mcp_sim.scenarios", "mcp_sim.transports"),
)
