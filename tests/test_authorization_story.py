"""Chapter 11's authorization stories: the exact HTTP exchanges of each, in both eras.

The OAuth exchanges go to the same URLs in 2025-11-25 and 2026-07-28, but not with the same
contents: the 2026-07-28 client names its ``application_type`` when it registers and checks ``iss``
(RFC 9207) before it sends a code anywhere; the 2025-11-25 client does neither (its revision asks for
neither). The MCP around them differs too (``initialize`` + ``notifications/initialized`` and a
session ended by ``DELETE``, or one ``server/discover`` and no session). Each row is (method, URL
without query, status, key headers, the MCP method a POST carried).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcp_sim.protocol.revisions import LATEST, LATEST_LEGACY
from mcp_sim.protocol.schema import find_spec_dir, schema_errors
from mcp_sim.scenarios.authorization_story import (
    ERAS,
    HOST_METADATA,
    ISSUER,
    PRM_URL,
    REDIRECT,
    RESOURCE,
    STORIES,
    UPSTREAM,
    AuthRun,
    Exchange,
    confused_deputy,
    run_authorization_story,
)
from mcp_sim.security.oauth import s256
from mcp_sim.trace import SequenceDiagram
from mcp_sim.trace.player_state import http_text

MCP = "https://notes.example/mcp"
AS_META = f"{ISSUER}/.well-known/oauth-authorization-server"
BEARER = {"Authorization": "Bearer …"}
FORM = {"Content-Type": "application/x-www-form-urlencoded"}
CHALLENGE = f'resource_metadata="{PRM_URL}", scope="notes:read"'
BACK = {"Location": REDIRECT}


def opening(era: str) -> str:
    return "server/discover" if era == LATEST else "initialize"


def discovery_and_token(register: bool = True) -> list[Exchange]:
    """PRM → AS metadata → (register) → authorize → token: the OAuth part of an authorization."""
    rows = [Exchange("GET", PRM_URL, 200, {}), Exchange("GET", AS_META, 200, {})]
    if register:
        rows.append(Exchange("POST", f"{ISSUER}/register", 201, {"Content-Type": "application/json"}))
    return [*rows, Exchange("GET", f"{ISSUER}/authorize", 302, BACK), Exchange("POST", f"{ISSUER}/token", 200, FORM)]


def connected(era: str, *calls: str) -> list[Exchange]:
    """The MCP POSTs of an opening with a token, then one ``tools/call`` per name in ``calls``."""
    rows = [Exchange("POST", MCP, 200, BEARER, opening(era))]
    if era == LATEST_LEGACY:
        rows.append(Exchange("POST", MCP, 202, BEARER, "notifications/initialized"))
    return rows + [Exchange("POST", MCP, 200, BEARER, "tools/call") for _ in calls]


def agenda_call(era: str, upstream: list[Exchange]) -> list[Exchange]:
    """The ``agenda`` call and the upstream exchanges its tool makes. A legacy POST is answered with an
    SSE stream at once (its status comes first); a 2026-07-28 POST here gets one JSON response, whose
    status is known only when the tool has finished."""
    call = Exchange("POST", MCP, 200, BEARER, "tools/call")
    return [call, *upstream] if era == LATEST_LEGACY else [*upstream, call]


def closing(era: str) -> list[Exchange]:
    return [Exchange("DELETE", MCP, 200, BEARER)] if era == LATEST_LEGACY else []


def first_401(era: str, **headers: str) -> Exchange:
    return Exchange("POST", MCP, 401, {**headers, "WWW-Authenticate": f"Bearer {CHALLENGE}"}, opening(era))


@pytest.fixture(scope="module", params=[(s, e) for s in STORIES for e in ERAS], ids=lambda p: f"{p[0]}@{p[1]}")
def run(request: pytest.FixtureRequest) -> AuthRun:
    story, era = request.param
    return run_authorization_story(story, era, seed=1)


def story_run(story: str, era: str) -> AuthRun:
    return run_authorization_story(story, era, seed=1)


# -- the whole flow ---------------------------------------------------------------------------------

@pytest.mark.parametrize("era", ERAS)
def test_first_call_exchanges(era: str) -> None:
    run = story_run("first-call", era)
    assert run.results == ["buy milk"]
    assert run.http_exchanges() == [first_401(era), *discovery_and_token(), *connected(era, "read_notes"),
                                    *closing(era)]
    assert run.steps[:3] == ["read the Protected Resource Metadata", f"discovered the authorization server at {AS_META}",
                             "registered dynamically (RFC 7591)"]


@pytest.mark.parametrize("era", ERAS)
def test_first_call_authorization_request_and_token_request(era: str) -> None:
    run = story_run("first-call", era)
    (authorize, redirect), (token_post, token_reply) = run.world.web.exchanges[3], run.world.web.exchanges[4]
    query = dict(pair.split("=", 1) for pair in authorize.path.partition("?")[2].split("&"))
    assert query["code_challenge_method"] == "S256" and query["resource"] == "https%3A%2F%2Fnotes.example%2Fmcp"
    form = dict(pair.split("=", 1) for pair in token_post.body.split("&"))
    assert s256(form["code_verifier"]) == query["code_challenge"]
    issued = run.world.table.introspect(token_reply.json()["access_token"])
    assert issued is not None and issued.audience == RESOURCE and issued.scopes == {"notes:read"}
    assert redirect.headers["Location"].startswith(f"{REDIRECT}?code=")


def test_the_oauth_exchanges_go_to_the_same_urls_in_both_eras() -> None:
    legacy, modern = (story_run("first-call", era) for era in ERAS)
    oauth = [[x for x in r.http_exchanges() if x.carries is None and x.method != "DELETE"] for r in (legacy, modern)]
    assert oauth[0] == oauth[1] == discovery_and_token()


def registration_body(run: AuthRun) -> dict[str, Any]:
    request = next(q for q, _ in run.world.web.exchanges if q.method == "POST" and q.path == "/register")
    return dict(json.loads(request.body))


def test_the_2026_registration_names_its_application_type() -> None:
    """2026-07-28: a client using Dynamic Client Registration names an application_type (rule
    auth.dcr-application-type), ``native`` for a loopback redirect (auth.dcr-native); the legacy
    client sends what 2025-11-25 asks, without one (auth.legacy.application-type-left-out)."""
    legacy, modern = (story_run("first-call", era) for era in ERAS)
    assert registration_body(modern)["application_type"] == "native"
    assert "application_type" not in registration_body(legacy)
    assert {k: v for k, v in registration_body(modern).items() if k != "application_type"} == registration_body(legacy)
    assert registration_body(modern)["redirect_uris"] == [REDIRECT] and REDIRECT.startswith("http://127.0.0.1:")
    registered = next(a for q, a in modern.world.web.exchanges if q.path == "/register")
    assert registered.status == 201 and registered.json()["application_type"] == "native"


def test_an_explicit_application_type_is_sent_in_either_era() -> None:
    from mcp_sim.security.oauth_client import OAuthClient

    def client(revision: str | None, redirect: str = REDIRECT, kind: str | None = None) -> OAuthClient:
        return OAuthClient(None, "c", RESOURCE, "n", redirect, lambda: "0", lambda: 0.0,  # type: ignore[arg-type]
                           revision=revision, application_type=kind)

    assert client(LATEST).registration_application_type() == "native"
    assert client(None).registration_application_type() == "native"  # the newest rules (the real wire)
    assert client(LATEST, "https://app.example/callback").registration_application_type() == "web"
    assert client(LATEST_LEGACY).registration_application_type() is None
    assert client(LATEST_LEGACY, kind="native").registration_application_type() == "native"


@pytest.mark.parametrize("era", ERAS)
def test_iss_is_checked_per_era(era: str) -> None:
    """A redirect naming another issuer: the 2026-07-28 client refuses before any token request
    (auth.iss-validate); the 2025-11-25 client, whose revision has no iss rule, redeems the code
    (auth.legacy.iss-not-checked)."""
    run = story_run("iss-mismatch", era)
    if era == LATEST:
        assert run.failure is not None and run.failure.rule == "auth.iss-validate" and run.results == []
        assert run.notes["token_requests"] == 0 and run.world.oauth.tokens is None
        assert run.http_exchanges()[-1] == Exchange("GET", f"{ISSUER}/authorize", 302, BACK)
    else:
        assert run.failure is None and run.results == ["buy milk"] and run.notes["token_requests"] == 1
        assert "iss in the response is not checked: 2025-11-25 has no rule for it" in run.steps


@pytest.mark.parametrize("era", ERAS)
def test_a_client_id_metadata_document_replaces_registration(era: str) -> None:
    run = story_run("metadata-document", era)
    assert run.results == ["buy milk"]
    rows = run.http_exchanges()
    assert not any(x.url.endswith("/register") for x in rows)
    fetched = [x for x in rows if x.url == HOST_METADATA]
    assert fetched == [Exchange("GET", HOST_METADATA, 200, {})]
    meta = next(a for q, a in run.world.web.exchanges if q.path == "/.well-known/oauth-authorization-server")
    assert meta.json()["client_id_metadata_document_supported"] is True
    authorize = next(q for q, _ in run.world.web.exchanges if q.path.startswith("/authorize"))
    assert "client_id=https%3A%2F%2Fnotes-host.example%2Foauth%2Fclient.json" in authorize.path
    assert "use the client's metadata document URL as its client_id" in run.steps
    issued = next(iter(run.world.table.issued.values()))
    assert issued.client_id == HOST_METADATA


# -- failures ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("era", ERAS)
def test_wrong_audience(era: str) -> None:
    run = story_run("wrong-audience", era)
    refused = Exchange("POST", MCP, 401, {**BEARER, "WWW-Authenticate": f'Bearer error="invalid_token", {CHALLENGE}'},
                       opening(era))
    assert run.http_exchanges() == [refused, *discovery_and_token(), *connected(era, "read_notes"), *closing(era)]
    assert run.notes["rejections"] == [f"the token was issued for 'https://other.example/mcp', not for '{RESOURCE}'"]
    assert run.results == ["buy milk"]


@pytest.mark.parametrize("era", ERAS)
def test_pkce_missing_then_plain_are_refused(era: str) -> None:
    run = story_run("pkce-refused", era)
    refused = Exchange("GET", f"{ISSUER}/authorize", 302, BACK)
    assert run.http_exchanges() == [refused, refused, first_401(era), *discovery_and_token(),
                                    *connected(era, "read_notes"), *closing(era)]
    assert [(r["error"], r["error_description"]) for r in run.notes["refused"]] == [
        ("invalid_request", "PKCE is required: send code_challenge"),
        ("invalid_request", "code_challenge_method plain refused: only S256")]
    assert all("code" not in r for r in run.notes["refused"])
    assert run.results == ["buy milk"]


@pytest.mark.parametrize("era", ERAS)
def test_no_s256_advertised(era: str) -> None:
    run = story_run("no-s256", era)
    assert run.http_exchanges() == [first_401(era), Exchange("GET", PRM_URL, 200, {}),
                                    Exchange("GET", AS_META, 200, {})]
    assert run.failure is not None and run.failure.rule == "auth.pkce-refuse-without-methods" and run.results == []


@pytest.mark.parametrize("era", ERAS)
def test_bad_redirect_is_an_error_page(era: str) -> None:
    run = story_run("bad-redirect", era)
    assert run.http_exchanges() == [first_401(era), Exchange("GET", PRM_URL, 200, {}), Exchange("GET", AS_META, 200, {}),
                                    Exchange("GET", f"{ISSUER}/authorize", 400, {})]
    assert run.failure is not None and run.failure.rule == "auth.exact-redirect-match"
    assert run.world.oauth.tokens is None


@pytest.mark.parametrize("era", ERAS)
def test_expired_token_is_refreshed(era: str) -> None:
    run = story_run("expired-refresh", era)
    expired = Exchange("POST", MCP, 401, {**BEARER, "WWW-Authenticate": f'Bearer error="invalid_token", {CHALLENGE}'},
                       "tools/call")
    assert run.http_exchanges() == [first_401(era), *discovery_and_token(), *connected(era, "read_notes"), expired,
                                    Exchange("POST", f"{ISSUER}/token", 200, FORM),
                                    Exchange("POST", MCP, 200, BEARER, "tools/call"), *closing(era)]
    assert run.results == ["buy milk", "buy milk"]
    assert run.notes == {"refresh_rotated": True, "rejections": ["the token has expired"]}
    refresh = run.world.web.exchanges[-1][0].body
    assert "grant_type=refresh_token" in refresh and "code_verifier" not in refresh


@pytest.mark.parametrize("era", ERAS)
def test_insufficient_scope_steps_up(era: str) -> None:
    run = story_run("step-up", era)
    forbidden = Exchange("POST", MCP, 403, {**BEARER, "WWW-Authenticate": (
        f'Bearer error="insufficient_scope", scope="notes:write notes:read", resource_metadata="{PRM_URL}"')},
        "tools/call")
    assert run.http_exchanges() == [first_401(era), *discovery_and_token(), *connected(era, "read_notes"), forbidden,
                                    *discovery_and_token(register=False),
                                    Exchange("POST", MCP, 200, BEARER, "tools/call"), *closing(era)]
    assert run.results == ["buy milk", "written"]
    assert run.notes == {"scopes_before": ["notes:read"], "scopes_after": ["notes:read", "notes:write"]}


@pytest.mark.parametrize("era", ERAS)
def test_user_refuses(era: str) -> None:
    run = story_run("user-refuses", era)
    assert run.http_exchanges() == [first_401(era), *discovery_and_token()[:-1]]
    assert run.failure is not None and run.failure.reason.startswith("access_denied")
    location = run.world.web.exchanges[-1][1].headers["Location"]
    assert "error=access_denied" in location and "code=" not in location


# -- upstream: passthrough vs the server's own token -----------------------------------------------------

@pytest.mark.parametrize("era", ERAS)
def test_token_passthrough_is_refused_upstream(era: str) -> None:
    run = story_run("token-passthrough", era)
    upstream = Exchange("GET", f"{UPSTREAM}/events", 401, {**BEARER, "WWW-Authenticate": (
        f'Bearer error="invalid_token", resource_metadata="{UPSTREAM}/.well-known/oauth-protected-resource", '
        'scope="calendar:read"')})
    assert run.http_exchanges() == [first_401(era), *discovery_and_token(), *connected(era, "read_notes"),
                                    *agenda_call(era, [upstream]), *closing(era)]
    assert run.results[1].startswith("error: ") and "calendar API answered 401" in run.results[1]
    assert run.notes["calendar_accepted"] == []


@pytest.mark.parametrize("era", ERAS)
def test_server_gets_its_own_upstream_token(era: str) -> None:
    run = story_run("own-upstream-token", era)
    upstream_prm = f"{UPSTREAM}/.well-known/oauth-protected-resource"
    own = [Exchange("GET", f"{UPSTREAM}/events", 401, {"WWW-Authenticate": (
               f'Bearer resource_metadata="{upstream_prm}", scope="calendar:read"')}),
           Exchange("GET", upstream_prm, 200, {}), Exchange("GET", AS_META, 200, {}),
           Exchange("POST", f"{ISSUER}/register", 201, {"Content-Type": "application/json"}),
           Exchange("GET", f"{ISSUER}/authorize", 302, {"Location": "https://notes.example/oauth/callback"}),
           Exchange("POST", f"{ISSUER}/token", 200, FORM),
           Exchange("GET", f"{UPSTREAM}/events", 200, BEARER)]
    assert run.http_exchanges() == [first_401(era), *discovery_and_token(), *connected(era, "read_notes"),
                                    *agenda_call(era, own), *closing(era)]
    assert run.results == ["buy milk", "standup 09:30, review 14:00"]
    # The calendar API saw the notes server's own client id, and a token with its own audience.
    server_client = run.world.upstream.client_id
    assert run.notes["calendar_accepted"] == [server_client] and server_client != run.world.oauth.client_id
    tokens = run.world.table.issued.values()
    assert sorted(t.audience for t in tokens) == [UPSTREAM, RESOURCE]


# -- every story -------------------------------------------------------------------------------------

def test_no_secret_reaches_the_trace(run: AuthRun) -> None:
    shown = json.dumps([e.to_json() for e in run.recorder.events if "oauth" in e.marks])
    for token in run.world.table.issued:
        assert token not in shown
    assert "rt_" not in shown.replace("rt_REDACTED", "")


@pytest.mark.skipif(find_spec_dir() is None, reason="official MCP schemas not found")
def test_every_mcp_message_is_valid_for_its_revision(run: AuthRun) -> None:
    mcp = [e for e in run.recorder.events if e.kind in ("request", "response", "error", "notification")]
    assert all(schema_errors(e.message, run.revision, "JSONRPCMessage") == [] for e in mcp)


def test_same_seed_same_trace() -> None:
    def trace(seed: int) -> list[dict[str, Any]]:
        return [e.to_json() for e in run_authorization_story("step-up", LATEST, seed).recorder.events]

    assert trace(4) == trace(4) and trace(4) != trace(5)


def test_unknown_story_or_era() -> None:
    with pytest.raises(KeyError, match="first-call"):
        run_authorization_story("nope")
    with pytest.raises(ValueError):
        run_authorization_story("first-call", "2025-06-18")


# -- the views draw the OAuth exchanges ----------------------------------------------------------------

def test_sequence_diagram_draws_oauth_exchanges_as_arrows() -> None:
    run = story_run("first-call", LATEST)
    svg = SequenceDiagram(run.recorder).to_svg()
    for text in ("→ GET /.well-known/oauth-protected-resource/mcp", "→ POST /register", "→ GET /authorize",
                 "← 302 Found", "→ POST /token", "⇄ OAuth HTTP", "browser"):
        assert text in svg, text


def test_player_http_view_shows_the_redacted_bodies() -> None:
    run = story_run("first-call", LATEST)
    oauth = [e for e in run.recorder.events if "oauth" in e.marks]
    token_request, token_answer = oauth[-2], oauth[-1]
    assert "grant_type=authorization_code" in http_text(token_request)
    assert "(carries this message)" in http_text(token_request).splitlines()[0]
    answer = http_text(token_answer)
    assert '"access_token": "at_REDACTED"' in answer and "HTTP/1.1 200 OK" in answer


# -- the confused deputy is a lab ----------------------------------------------------------------------

def test_confused_deputy_runs_the_lab_by_name() -> None:
    vulnerable, fixed = confused_deputy("vulnerable", 0), confused_deputy("fixed", 0)
    assert vulnerable.lab == fixed.lab == "confused-deputy"
    assert vulnerable.succeeded and not fixed.succeeded and fixed.legitimate
