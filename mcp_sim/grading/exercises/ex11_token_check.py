"""Exercise ex11_token_check (chapter 11): the resource server's check of a bearer token.

The learner writes what an MCP Server's HTTP layer does with ``Authorization: Bearer …`` before any
MCP message is read: ``check_token(authorization, token, server)`` answers ``{"status": 200}``, or
``401``/``403`` with the ``WWW-Authenticate`` header that sends the client on its way. ``token`` is
what the authorization server says about the presented token (its claims, as introspection would
return them) or ``None`` for a string it never issued. The expected verdict comes from the
simulator's own token table (:meth:`~mcp_sim.security.tokens.AuthorizationServer.validate`); the
learner's header is read with the simulator's own parser and compared parameter by parameter. Every
seed tries every case kind; the seed picks hosts, scopes, tokens and times.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from hypothesis import strategies as st

from mcp_sim.grading.differential import Mismatch
from mcp_sim.grading.exercises.generated import corners_then_generated
from mcp_sim.grading.model import Check, CheckContext, CheckFailed, Exercise, Hint
from mcp_sim.security.oauth_client import parse_www_authenticate
from mcp_sim.security.tokens import AccessToken, AuthorizationServer, TokenRejected

R_NONE = "auth.status-codes"
"""No bearer token: 401 (authorization is needed); no error code, since no token was there to be wrong."""
R_METADATA = "auth.server-prm-discovery-mechanism"
"""The challenge names resource_metadata, so the client can find the authorization server."""
R_INVALID = "auth.server-validates-audience"
"""Unknown, expired, or issued for another resource (audience compared exactly): 401 invalid_token."""
R_SCOPE = "auth.insufficient-scope-403"
"""A valid token without a needed scope: 403 insufficient_scope naming the scopes."""
R_OK = "auth.server-validates-tokens"
"""A known, unexpired token for this server with the needed scopes is accepted (extra scopes are fine)."""

_HOSTS = ("notes.example", "files.acme.example", "crm.example.org", "mail.example.net")
_SCOPES = ("read", "write", "admin", "export", "share")


R_EXPIRED = "auth.invalid-token-401"
"""An unknown or expired token: 401."""


def _server(rng: Any) -> dict[str, Any]:
    host = rng.choice(_HOSTS)
    kind = host.split(".")[0]
    required = sorted(rng.sample([f"{kind}:{s}" for s in _SCOPES], 2))  # always two: any() and all() differ
    return {"resource": f"https://{host}/mcp", "resource_metadata": f"https://{host}/.well-known/oauth-protected-"
            f"resource/mcp", "required_scopes": required, "now_ms": float(rng.randint(10, 90) * 60_000)}


def _claims(rng: Any, server: dict[str, Any], **changes: Any) -> dict[str, Any]:
    now = server["now_ms"]
    claims = {"token": f"at_{rng.getrandbits(64):016x}", "subject": rng.choice(("ada", "bo", "chen")),
              "client_id": f"client_{rng.getrandbits(24):06x}", "audience": server["resource"],
              "scopes": sorted(set(server["required_scopes"]) | set(rng.sample(["profile", "offline"], 1))),
              "expires_at_ms": now + rng.randint(1, 50) * 60_000, "issuer": "https://login.example"}
    claims.update(changes)
    return claims


def bearer_value(authorization: str | None) -> str | None:
    """The token in ``Authorization: Bearer <token>``, or ``None`` when no bearer token was sent. The
    scheme is compared without regard to case (RFC 7235 § 2.1: "auth-scheme is case-insensitive"), and one
    or more spaces separate it from the token."""
    if authorization is None:
        return None
    scheme, _, value = authorization.partition(" ")
    value = value.strip(" ")
    return value if scheme.lower() == "bearer" and value else None


def expected(authorization: str | None, token: dict[str, Any] | None, server: dict[str, Any]) -> tuple[int, str]:
    """The status the simulator's token table gives (200, 401 or 403), and the rule behind it."""
    value = bearer_value(authorization)
    if value is None:
        return 401, R_NONE
    table = AuthorizationServer("https://login.example", lambda: "0", lambda: float(server["now_ms"]))
    if token is not None and token["token"] == value:
        table.issued[value] = AccessToken(value, token["subject"], None, token["client_id"], token["audience"],
                                          frozenset(token["scopes"]), 0.0, float(token["expires_at_ms"]),
                                          token["issuer"])
    try:
        table.validate(value, audience=server["resource"], required_scopes=server["required_scopes"])
    except TokenRejected as refused:
        return refused.status, refused.rule
    return 200, R_OK


def expected_status(authorization: str | None, token: dict[str, Any] | None, server: dict[str, Any]) -> int:
    """The status the simulator's token table gives: 200, 401 or 403."""
    return expected(authorization, token, server)[0]


NONE_KINDS = ("no Authorization header", "another scheme (Basic)", "the Bearer scheme alone",
              "the Bearer scheme and a space")
INVALID_KINDS = ("a token the authorization server never issued", "an expired token", "a token expiring right now",
                 "a token for another Server", "a token for the same host, another path",
                 "an audience with a trailing slash", "an audience that is a prefix of the resource",
                 "an expired token presented with bearer in lower case")
SCOPE_KINDS = ("the first of two required scopes missing", "the second of two required scopes missing",
               "every required scope missing", "a scope that extends a required one", "a wildcard scope")
OK_KINDS = ("a valid token", "a valid token with extra scopes", "a token expiring in one millisecond",
            "the required scopes in another order", "the scheme in lower case", "the scheme in upper case",
            "two spaces after the scheme")
ORDER_KINDS = ("expired and a scope missing", "another Server's token and a scope missing")


def build_case(rng: Any, kind: str) -> tuple[str | None, dict[str, Any] | None, dict[str, Any]]:
    server = _server(rng)
    now = server["now_ms"]
    token = _claims(rng, server)
    bearer = f"Bearer {token['token']}"
    other_host = rng.choice([h for h in _HOSTS if h not in server["resource"]])
    first, second = server["required_scopes"]
    changes: dict[str, dict[str, Any]] = {
        "an expired token": {"expires_at_ms": now - rng.randint(1, 30) * 60_000},
        "an expired token presented with bearer in lower case": {"expires_at_ms": now - rng.randint(1, 30) * 60_000},
        "a token expiring right now": {"expires_at_ms": now},
        "a token for another Server": {"audience": f"https://{other_host}/mcp"},
        "a token for the same host, another path": {"audience": server["resource"].replace("/mcp", "/admin")},
        "an audience with a trailing slash": {"audience": server["resource"] + "/"},
        "an audience that is a prefix of the resource": {"audience": server["resource"][:-1]},
        "the first of two required scopes missing": {"scopes": sorted({second, "profile"})},
        "the second of two required scopes missing": {"scopes": sorted({first, "profile"})},
        "every required scope missing": {"scopes": ["profile"]},
        "a scope that extends a required one": {"scopes": sorted({first, second + "-all"})},
        "a wildcard scope": {"scopes": sorted({first.split(":")[0] + ":*", "*", second[:-1]})},
        "a valid token with extra scopes": {"scopes": sorted({*server["required_scopes"], "admin:all", "profile"})},
        "the required scopes in another order": {"scopes": ["profile", second, first]},
        "a token expiring in one millisecond": {"expires_at_ms": now + 1},
        "expired and a scope missing": {"expires_at_ms": now - rng.randint(1, 30) * 60_000, "scopes": ["profile"]},
        "another Server's token and a scope missing": {"audience": f"https://{other_host}/mcp", "scopes": ["profile"]},
    }
    if kind == "no Authorization header":
        return None, None, server
    if kind == "another scheme (Basic)":
        return f"Basic {rng.choice(('YWRhOnB3', 'Ym86c2VjcmV0'))}", None, server
    if kind in ("the Bearer scheme alone", "the Bearer scheme and a space"):
        return ("Bearer" if kind.endswith("alone") else "Bearer "), None, server  # each a kind, not a draw
    if kind == "a token the authorization server never issued":
        return f"Bearer at_{rng.getrandbits(64):016x}", None, server
    if kind in ("a valid token", "the scheme in lower case", "the scheme in upper case", "two spaces after the scheme"):
        scheme = {"the scheme in lower case": "bearer", "the scheme in upper case": "BEARER",
                  "two spaces after the scheme": "Bearer "}.get(kind, "Bearer")
        return f"{scheme} {token['token']}", token, server
    if kind == "an expired token presented with bearer in lower case":
        bearer = f"bearer {token['token']}"
    return bearer, {**token, **changes[kind]}, server


_PARAM = r'[!#$%&\'*+.^_`|~0-9A-Za-z-]+[ \t]*=[ \t]*(?:[!#$%&\'*+.^_`|~0-9A-Za-z-]+|"(?:[^"\\]|\\.)*")'
_CHALLENGE = re.compile(rf"[Bb][Ee][Aa][Rr][Ee][Rr](?: +{_PARAM}(?:[ \t]*,[ \t]*{_PARAM})*)?")
"""A Bearer challenge as RFC 7235 § 4.1 writes it: the scheme, then comma-separated auth-params."""


def judge(authorization: str | None, token: dict[str, Any] | None, server: dict[str, Any],
          got: Any) -> tuple[str, str, str] | None:
    """What is wrong with the learner's answer ``got``: (explanation, rule, expected), or ``None``."""
    want, rule = expected(authorization, token, server)
    if not isinstance(got, dict) or not isinstance(got.get("status"), int) or isinstance(got.get("status"), bool):
        return (f"check_token() returned {got!r}, not a dict of the shape "
                "{\"status\": int, \"www_authenticate\"?: str}.", rule, f"HTTP {want}")
    header = got.get("www_authenticate")
    params = parse_www_authenticate(header) if isinstance(header, str) else {}
    if got["status"] != want:
        if want == 200:
            rule = R_SCOPE if got["status"] == 403 else R_OK
        return f"check_token() said HTTP {got['status']}, which is not the status for this request.", rule, \
            f"HTTP {want}"
    if want == 200:
        return None
    if not isinstance(header, str) or header.strip().partition(" ")[0].lower() != "bearer":
        return (f"The {want} carries no Bearer challenge in www_authenticate (it was {header!r}).",
                R_NONE if want == 401 else R_SCOPE, "a Bearer challenge")
    if not _CHALLENGE.fullmatch(header.strip()):
        return (f"The challenge {header!r} is not a list of name=value parameters separated by commas (RFC 7235 "
                "§ 4.1), so a client cannot read it.", R_METADATA, 'Bearer name="value", name="value"')
    if params.get("resource_metadata") != server["resource_metadata"]:
        return (f"The challenge {header!r} does not name this server's resource_metadata, so the client cannot "
                "find the authorization server.", R_METADATA, f"resource_metadata=\"{server['resource_metadata']}\"")
    error = {R_NONE: None, R_SCOPE: "insufficient_scope"}.get(rule, "invalid_token")
    if error is None and "error" in params:
        return f"No token was sent, so there is no error code to give; the header was {header!r}.", R_NONE, \
            "no error parameter"
    if error is not None and params.get("error") != error:
        return (f"The header {header!r} does not say which kind of refusal this is.", rule,
                f'error="{error}"')
    if want == 403 and not set(server["required_scopes"]) <= set((params.get("scope") or "").split()):
        return (f"scope=\"…\" named {sorted(set((params.get('scope') or '').split()))}, which leaves out a scope "
                "this request needs.", R_SCOPE, f"scope=\"{' '.join(server['required_scopes'])}\"")
    return None


def _describe(authorization: str | None, token: dict[str, Any] | None, server: dict[str, Any]) -> str:
    return f"Authorization: {authorization or '(none)'}\ntoken claims: {token}\nserver: {server}"


def _run(ctx: CheckContext, kind: str) -> None:
    authorization, token, server = build_case(ctx.rng, kind)
    got = ctx.function("check_token")(authorization, copy.deepcopy(token), copy.deepcopy(server))
    wrong = judge(authorization, token, server, got)
    if wrong is not None:
        explanation, rule, want = wrong
        raise CheckFailed(explanation, rule, case=f"{_describe(authorization, token, server)}\n({kind})",
                          expected=want)


def check_direct(ctx: CheckContext, kind: str) -> None:
    _run(ctx, kind)


# --- generated: any header, token and server, against the simulator's token table ----------------------

FAULTS = ("no header", "Basic", "Bearer alone", "bearer", "BEARER", "two spaces", "unknown token", "another token's value",
          "expired", "expiring now", "expiring in 1 ms", "audience + /", "audience prefix", "another path",
          "another server", "one scope missing", "no scope", "a wildcard scope", "a longer scope", "scopes reordered",
          "extra scopes")
"""What can be changed about a valid request, one axis each: a generated case is a valid one with a few of
these applied (shrinking drops the ones that do not matter)."""


Case = tuple[str | None, dict[str, Any] | None, dict[str, Any]]


@st.composite
def _inputs(draw: st.DrawFn) -> Case:
    host = draw(st.sampled_from(_HOSTS))
    pool = [f"{host.split('.')[0]}:{s}" for s in _SCOPES]
    required = draw(st.lists(st.sampled_from(pool), min_size=2, max_size=3, unique=True))
    faults = set(draw(st.lists(st.sampled_from(FAULTS), max_size=3, unique=True)))
    return _faulty(faults, host, required, float(draw(st.integers(10, 90)) * 60_000),
                   "at_" + draw(st.sampled_from(("1f2e", "9a0b"))), draw(st.integers(0, len(required) - 1)))


def _faulty(faults: set[str], host: str, required: list[str], now: float, value: str, dropped: int) -> Case:
    """A valid request for ``required`` at ``host``, with ``faults`` applied."""
    kind = host.split(".")[0]
    resource = f"https://{host}/mcp"
    server = {"resource": resource, "resource_metadata": f"https://{host}/.well-known/oauth-protected-resource/mcp",
              "required_scopes": required, "now_ms": now}
    scopes = list(required)
    if "one scope missing" in faults:
        scopes.pop(dropped)
    if "no scope" in faults:
        scopes = []
    if "a wildcard scope" in faults:
        scopes = [f"{kind}:*", "*"]
    if "a longer scope" in faults:
        scopes = [s + "-all" for s in scopes] or [f"{kind}:read-all"]
    if "scopes reordered" in faults:
        scopes.reverse()
    if "extra scopes" in faults:
        scopes += ["profile", f"{kind}:other"]
    audience = {"audience + /": resource + "/", "audience prefix": resource[:-1], "another path": f"https://{host}/a",
                "another server": "https://other.example/mcp"}
    expires = now + (0.0 if "expiring now" in faults else -1.0 if "expired" in faults else
                     1.0 if "expiring in 1 ms" in faults else 60_000.0)
    token: dict[str, Any] | None = {
        "token": value, "subject": "ada", "client_id": "cli",
        "audience": next((audience[f] for f in FAULTS if f in faults and f in audience), resource),
        "scopes": scopes, "expires_at_ms": expires, "issuer": "https://login.example"}
    if "unknown token" in faults:
        token = None
    presented = "at_other" if "another token's value" in faults else value
    scheme = next((f for f in ("Basic", "bearer", "BEARER") if f in faults), "Bearer")
    authorization: str | None = f"{scheme}{'  ' if 'two spaces' in faults else ' '}{presented}"
    if "Bearer alone" in faults:
        authorization = "Bearer"
    if "no header" in faults:
        authorization = None
    return authorization, token, server


def _compare(case: Case, got: Any, want: int) -> Mismatch | None:
    wrong = judge(*case, got)
    return None if wrong is None else Mismatch(*wrong)


def check_generated(ctx: CheckContext, kind: str) -> None:
    host = ctx.rng.choice(_HOSTS)
    required = sorted(ctx.rng.sample([f"{host.split('.')[0]}:{s}" for s in _SCOPES], 2))
    corners = [_faulty({f}, host, required, 600_000.0, "at_1f2e", i % 2) for i, f in enumerate(FAULTS)]
    corners_then_generated(ctx, corners, _inputs(), learner=lambda c: ctx.function("check_token")(
        c[0], copy.deepcopy(c[1]), copy.deepcopy(c[2])), oracle=lambda c: expected_status(*c), compare=_compare,
        describe=lambda c: _describe(*c))


EXERCISE = Exercise(
    id="ex11_token_check",
    title="The Server's token check: 200, 401 or 403, and the challenge that goes with it",
    chapter="11",
    summary="Validate a bearer token's audience, expiry and scopes like an MCP Server must, and answer 401 / 403 "
            "with the WWW-Authenticate header that tells the client what to do next.",
    rules=(R_NONE, R_METADATA, R_INVALID, R_EXPIRED, R_SCOPE, R_OK),
    functions=("check_token",),
    checks=(
        Check("No token: 401 with resource_metadata and no error", R_NONE, check_direct, NONE_KINDS,
              hint="Only 'Bearer <token>' counts as a token; say where the metadata is."),
        Check("A bad token: 401 invalid_token", R_INVALID, check_direct, INVALID_KINDS,
              hint="Unknown, expired (now is too late) or issued for another audience: compare the audience exactly."),
        Check("A missing scope: 403 insufficient_scope naming the scopes", R_SCOPE, check_direct, SCOPE_KINDS,
              hint="The token is fine but too weak: 403, and scope=\"…\" lists what the request needs."),
        Check("A good token is accepted", R_OK, check_direct, OK_KINDS,
              hint="Extra scopes are fine; a token that expires later than now is still valid; the scheme's case "
                   "does not matter (RFC 7235)."),
        Check("Two faults at once: the 401 comes first", R_INVALID, check_direct, ORDER_KINDS,
              hint="A token that is expired or for another Server is invalid here, whatever its scopes."),
        Check("Any header, token and server: the simulator's answer", R_INVALID, check_generated, ("generated",),
              hint="No bearer token, then unknown, expired, another audience (401), then every required scope "
                   "(403).", seeds=1),
    ),
    hints=(
        Hint("Order: no Bearer token → 401 without error; unknown token (token is None) → 401 invalid_token; "
             "now_ms >= expires_at_ms → 401 invalid_token; audience != resource → 401 invalid_token; a required "
             "scope missing → 403 insufficient_scope; else 200.", R_INVALID),
        Hint("Every 401 and 403 carries WWW-Authenticate: Bearer …, resource_metadata=\"<server['resource_metadata']>\".",
             R_METADATA),
        Hint("For 403: Bearer error=\"insufficient_scope\", scope=\"<the required scopes, space-separated>\", "
             "resource_metadata=\"…\".", R_SCOPE),
    ),
    forbidden=("mcp_sim.security", "mcp_sim.transports"),
)
