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
from typing import Any

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


def _server(rng: Any) -> dict[str, Any]:
    host = rng.choice(_HOSTS)
    kind = host.split(".")[0]
    required = sorted(rng.sample([f"{kind}:{s}" for s in _SCOPES], rng.randint(1, 2)))
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


def expected_status(authorization: str | None, token: dict[str, Any] | None, server: dict[str, Any]) -> int:
    """The status the simulator's token table gives: 200, 401 or 403."""
    if authorization is None or not authorization.startswith("Bearer "):
        return 401
    table = AuthorizationServer("https://login.example", lambda: "0", lambda: float(server["now_ms"]))
    value = authorization[len("Bearer "):]
    if token is not None and token["token"] == value:
        table.issued[value] = AccessToken(value, token["subject"], None, token["client_id"], token["audience"],
                                          frozenset(token["scopes"]), 0.0, float(token["expires_at_ms"]),
                                          token["issuer"])
    try:
        table.validate(value, audience=server["resource"], required_scopes=server["required_scopes"])
    except TokenRejected as refused:
        return refused.status
    return 200


NONE_KINDS = ("no Authorization header", "another scheme (Basic)")
INVALID_KINDS = ("a token the authorization server never issued", "an expired token", "a token expiring right now",
                 "a token for another Server", "a token for the same host, another path",
                 "an audience with a trailing slash")
SCOPE_KINDS = ("one required scope missing", "every required scope missing")
OK_KINDS = ("a valid token", "a valid token with extra scopes", "a token expiring in one millisecond")


def build_case(rng: Any, kind: str) -> tuple[str | None, dict[str, Any] | None, dict[str, Any]]:
    server = _server(rng)
    now = server["now_ms"]
    token = _claims(rng, server)
    bearer = f"Bearer {token['token']}"
    other_host = rng.choice([h for h in _HOSTS if h not in server["resource"]])
    changes: dict[str, dict[str, Any]] = {
        "an expired token": {"expires_at_ms": now - rng.randint(1, 30) * 60_000},
        "a token expiring right now": {"expires_at_ms": now},
        "a token for another Server": {"audience": f"https://{other_host}/mcp"},
        "a token for the same host, another path": {"audience": server["resource"].replace("/mcp", "/admin")},
        "an audience with a trailing slash": {"audience": server["resource"] + "/"},
        "one required scope missing": {"scopes": sorted(set(token["scopes"]) - {server["required_scopes"][0]})},
        "every required scope missing": {"scopes": ["profile"]},
        "a valid token with extra scopes": {"scopes": sorted({*server["required_scopes"], "admin:all", "profile"})},
        "a token expiring in one millisecond": {"expires_at_ms": now + 1},
    }
    if kind == "no Authorization header":
        return None, None, server
    if kind == "another scheme (Basic)":
        return f"Basic {rng.choice(('YWRhOnB3', 'Ym86c2VjcmV0'))}", None, server
    if kind == "a token the authorization server never issued":
        return f"Bearer at_{rng.getrandbits(64):016x}", None, server
    if kind == "a valid token":
        return bearer, token, server
    return bearer, {**token, **changes[kind]}, server


def _verdict(ctx: CheckContext, kind: str) -> tuple[str, int, dict[str, Any], dict[str, str], dict[str, Any]]:
    authorization, token, server = build_case(ctx.rng, kind)
    want = expected_status(authorization, token, server)
    got = ctx.function("check_token")(authorization, copy.deepcopy(token), copy.deepcopy(server))
    case = (f"Authorization: {authorization or '(none)'}\ntoken claims: {token}\nserver: {server}\n"
            f"({kind})")
    if not isinstance(got, dict) or not isinstance(got.get("status"), int):
        raise CheckFailed(f"check_token() returned {got!r}, not a dict of the shape "
                          "{\"status\": int, \"www_authenticate\"?: str}.", case=case)
    header = got.get("www_authenticate")
    params = parse_www_authenticate(header) if isinstance(header, str) else {}
    if got["status"] != want:
        rule = {401: R_INVALID if token is not None or kind in INVALID_KINDS else R_NONE, 403: R_SCOPE,
                200: R_OK}[want]
        raise CheckFailed(f"check_token() said HTTP {got['status']}, which is not the status for this request.",
                          rule, case=case, expected=f"HTTP {want}")
    if want != 200:
        if not isinstance(header, str) or not header.startswith("Bearer"):
            raise CheckFailed(f"The {want} carries no Bearer challenge in www_authenticate (it was {header!r}).",
                              R_NONE if want == 401 else R_SCOPE, case=case)
        if params.get("resource_metadata") != server["resource_metadata"]:
            raise CheckFailed(f"The challenge {header!r} does not name this server's resource_metadata, so the "
                              "client cannot find the authorization server.", R_METADATA, case=case,
                              expected=f"resource_metadata=\"{server['resource_metadata']}\"")
    return case, want, server, params, got


def check_none(ctx: CheckContext, kind: str) -> None:
    case, _, _, params, got = _verdict(ctx, kind)
    if "error" in params:
        raise CheckFailed(f"No token was sent, so there is no error code to give; the header was "
                          f"{got.get('www_authenticate')!r}.", R_NONE, case=case)


def check_invalid(ctx: CheckContext, kind: str) -> None:
    case, _, _, params, got = _verdict(ctx, kind)
    if params.get("error") != "invalid_token":
        raise CheckFailed(f"The header {got.get('www_authenticate')!r} does not say the token is invalid.",
                          R_INVALID, case=case, expected='error="invalid_token"')


def check_scope(ctx: CheckContext, kind: str) -> None:
    case, _, server, params, got = _verdict(ctx, kind)
    if params.get("error") != "insufficient_scope":
        raise CheckFailed(f"The header {got.get('www_authenticate')!r} does not say which kind of refusal this is.",
                          R_SCOPE, case=case, expected='error="insufficient_scope"')
    named = set((params.get("scope") or "").split())
    if not set(server["required_scopes"]) <= named:
        raise CheckFailed(f"scope=\"…\" named {sorted(named)}, which leaves out a scope this request needs.", R_SCOPE,
                          case=case, expected=f"scope=\"{' '.join(server['required_scopes'])}\"")


def check_ok(ctx: CheckContext, kind: str) -> None:
    _verdict(ctx, kind)


EXERCISE = Exercise(
    id="ex11_token_check",
    title="The Server's token check: 200, 401 or 403, and the challenge that goes with it",
    chapter="11",
    summary="Validate a bearer token's audience, expiry and scopes like an MCP Server must, and answer 401 / 403 "
            "with the WWW-Authenticate header that tells the client what to do next.",
    rules=(R_NONE, R_METADATA, R_INVALID, R_SCOPE, R_OK),
    functions=("check_token",),
    checks=(
        Check("No token: 401 with resource_metadata and no error", R_NONE, check_none, NONE_KINDS,
              hint="Only 'Bearer <token>' counts as a token; say where the metadata is."),
        Check("A bad token: 401 invalid_token", R_INVALID, check_invalid, INVALID_KINDS,
              hint="Unknown, expired (now is too late) or issued for another audience: compare the audience exactly."),
        Check("A missing scope: 403 insufficient_scope naming the scopes", R_SCOPE, check_scope, SCOPE_KINDS,
              hint="The token is fine but too weak: 403, and scope=\"…\" lists what the request needs."),
        Check("A good token is accepted", R_OK, check_ok, OK_KINDS,
              hint="Extra scopes are fine; a token that expires later than now is still valid."),
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
