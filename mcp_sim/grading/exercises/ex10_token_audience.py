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

from mcp_sim.grading.exercises.ex10_labs import (
    Asker,
    checked,
    expect_lab_holds,
    lab_kinds,
    lab_seed,
    run_learner_lab,
    split_kind,
)
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

def _case(rng: Any, kind: str) -> tuple[AccessToken, str, list[str], float, int]:
    """A real token for ``kind``, the resource it is presented to, the scope the request needs, the time,
    and the status the lab's fixed validation answers."""
    server = pick_name(rng, "server")
    resource = rng.choice((f"https://{server}.example/mcp", f"https://mcp.{server}.example/api/mcp"))
    scope = rng.choice(("issues:read", "files:read", "mail:send"))
    extra = rng.choice(("profile", "offline_access"))
    audience = {
        "an exact audience and the scope": resource,
        "an audience that extends the URI": f"{resource}.{pick_name(rng, 'server')}.example/mcp",
        "a sibling path on the same host": f"{resource}-uploads",
        "the host without the path": resource[:resource.index("/", len("https://"))],
        "the URI with a trailing slash": resource + "/",
        "another server's URI": f"https://{pick_name(rng, 'server')}.example/mcp",
    }.get(kind, resource)
    scopes = [scope, extra]
    if kind == "a scope missing":
        scopes = [extra]
    elif kind == "a scope that only starts like the one needed":
        scopes = [f"{scope}-all", extra]
    issued_at = float(rng.randint(0, 10_000_000))
    now = issued_at + (TTL_MS + rng.randint(1, 60_000) if kind == "an expired token" else rng.randint(1, 60_000))
    auth_server = AuthorizationServer("https://login.example", lambda: "t" * 16, lambda: issued_at)
    user = User(pick_name(rng, "user"), pick_name(rng, "tenant"))
    token = auth_server.issue(user, client_id=rng.choice(("ide", "cli")), audience=audience, scopes=scopes,
                              ttl_ms=TTL_MS)
    auth_server.clock_ms = lambda: now
    try:
        auth_server.validate(token.value, audience=resource, required_scopes=(scope,), check_audience=True)
        want = 200
    except TokenRejected as exc:
        want = exc.status
    return token, resource, [scope], now, want


AUDIENCE_KINDS = ("an audience that extends the URI", "a sibling path on the same host", "the host without the path",
                  "the URI with a trailing slash", "another server's URI")
SCOPE_KINDS = ("a scope missing", "a scope that only starts like the one needed")
VALID_KINDS = ("an expired token", "an exact audience and the scope")


def check_direct(ctx: CheckContext, kind: str) -> None:
    token, resource, required, now, want = _case(ctx.rng, kind)
    got = ctx.function("check_token")(claims(token), resource, list(required), now)
    if got != want:
        rule = R_AUDIENCE if kind in AUDIENCE_KINDS else R_SCOPE if kind in SCOPE_KINDS else R_VALID
        raise CheckFailed(f"check_token({json.dumps(claims(token))}, {resource!r}, {required}, {now}) should be "
                          f"{want} ({kind}); it returned {got!r}.", rule)


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
    ),
    hints=(
        Hint("A server that accepts any genuine token lets every other server its users talk to replay their "
             "tokens against it. The audience names the one server a token is for.", R_AUDIENCE),
        Hint("check_token: 401 if now_ms >= token['exp_ms']; 401 if token['aud'] != resource; 403 if a required "
             "scope is not in token['scopes']; else 200.", R_SCOPE),
    ),
    forbidden=("mcp_sim.security", "mcp_sim.scenarios", "mcp_sim.transports"),
)
