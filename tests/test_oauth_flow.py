"""The simulated OAuth 2.1 flow of MCP authorization: the authorization server, the protected
resource (the MCP Server's HTTP layer) and the client's flow from a 401 to a token — every step, each
failure, in both eras (the MCP requests differ by era; the OAuth exchanges are the same)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode, urlsplit

import anyio
import pytest

from mcp_sim.protocol.revisions import LATEST, LATEST_LEGACY
from mcp_sim.protocol.schema import find_spec_dir, schema_errors
from mcp_sim.roles.client import Client
from mcp_sim.roles.server import Server
from mcp_sim.security.identity import AuthInfo, User
from mcp_sim.security.lab import server_main
from mcp_sim.security.oauth import (
    FORM,
    OAuthAuthorizationServer,
    ScriptedUser,
    form_body,
    protected_resource_metadata,
    read_form,
    s256,
)
from mcp_sim.security.oauth_client import (
    JWT_BEARER_ASSERTION,
    MachineCredentials,
    OAuthClient,
    OAuthFailed,
    basic_credentials,
    metadata_urls,
    parse_www_authenticate,
    with_authorization,
)
from mcp_sim.security.oauth_web import DocumentSite, ResourceSite, SimulatedWeb, redact
from mcp_sim.security.tokens import AuthorizationServer, TokenRejected
from mcp_sim.sim.world import Simulation
from mcp_sim.transports.http import Headers, HttpRequest, HttpResponse, HttpStatusError
from mcp_sim.transports.http_client import HttpClientStream
from mcp_sim.transports.http_server import SimulatedHttpServer

RESOURCE = "https://notes.example/mcp"
ISSUER = "https://login.example"
PRM_URL = "https://notes.example/.well-known/oauth-protected-resource/mcp"
REDIRECT = "http://127.0.0.1:8765/callback"
ERAS = [LATEST_LEGACY, LATEST]

# The OAuth exchanges of a first authorization, identical in both eras: (method, URL without query, status).
FIRST_AUTHORIZATION = [
    ("GET", PRM_URL, 200),
    ("GET", f"{ISSUER}/.well-known/oauth-authorization-server", 200),
    ("POST", f"{ISSUER}/register", 201),
    ("GET", f"{ISSUER}/authorize", 302),
    ("POST", f"{ISSUER}/token", 200),
]


def tool_name(request: HttpRequest) -> str | None:
    """The tool a ``tools/call`` names: the ``Mcp-Name`` header (2026-07-28) or the body (legacy)."""
    if request.headers.get("Mcp-Name"):
        return request.headers.get("Mcp-Name")
    try:
        message = json.loads(request.body or "{}")
    except ValueError:
        return None
    if isinstance(message, dict) and message.get("method") == "tools/call":
        return (message.get("params") or {}).get("name")
    return None


@dataclass
class World:
    """One simulated deployment: the notes MCP Server behind OAuth, its authorization server, the web."""

    sim: Simulation
    tg: Any
    era: str
    table: AuthorizationServer
    auth_server: OAuthAuthorizationServer
    http: SimulatedHttpServer
    web: SimulatedWeb
    oauth: OAuthClient
    rejections: list[str] = field(default_factory=list)
    client: Client | None = None
    stream: HttpClientStream | None = None
    ready: bool = False

    def new_oauth(self, **kw: Any) -> OAuthClient:
        return OAuthClient(self.web, "client/notes", RESOURCE, kw.pop("client_name", "notes-host"),
                           kw.pop("redirect_uri", REDIRECT), lambda: self.sim.token(16), self.sim.now_ms,
                           revision=kw.pop("revision", self.era), **kw)

    async def connect(self, token: str | None) -> Client:
        """A Host's attempt: a new connection (and Client) carrying ``token``."""
        modern = self.era == LATEST
        client = Client("host", era="modern" if modern else "legacy", versions=(self.era,), sim=self.sim, timeout=5.0)
        self.client = client
        self.stream = self.http.connect("notes", revision=self.era, token=token, open_get_stream=False)
        await client.connect(self.stream, self.tg)
        return client

    async def call(self, name: str, token: str | None) -> str:
        """Connect if needed (a failed opening spends the Client: the Host makes a new one), else put
        the new token on the established connection."""
        if not self.ready:
            client = await self.connect(token)
            self.ready = True
        else:
            assert self.client is not None and self.stream is not None
            client, self.stream.token = self.client, token
        result = await client.call_tool(name, {})
        return str(result["content"][0]["text"])

    def oauth_exchanges_raw(self) -> list[tuple[str, str, int]]:
        """(method, path without query, status) of every OAuth exchange."""
        return [(q.method, q.path.partition("?")[0], r.status) for q, r in self.web.exchanges]

    def oauth_exchanges(self) -> list[tuple[str, str, int]]:
        return [(q.method, f"{_origin_of(self, q)}{q.path.partition('?')[0]}", r.status) for q, r in self.web.exchanges]


def _origin_of(world: World, request: HttpRequest) -> str:
    return RESOURCE.rsplit("/mcp", 1)[0] if request.path.startswith("/.well-known/oauth-protected") else ISSUER


def build(sim: Simulation, tg: Any, era: str, *, refuses: frozenset[str] = frozenset(), access_ttl_ms: float = 3_600_000.0,
          discovery: tuple[Any, ...] = ("oauth", "oidc")) -> World:
    table = AuthorizationServer(ISSUER, lambda: sim.token(16), sim.now_ms)
    auth_server = OAuthAuthorizationServer(ISSUER, table, ScriptedUser(User("ada", "acme"), refuses), resources=(RESOURCE,),
                                           scopes_supported=("notes:read", "notes:write"), discovery=discovery,
                                           access_ttl_ms=access_ttl_ms)
    server = Server("notes", version="1.0.0")

    @server.tool()
    def read_notes() -> str:
        """Your notes."""
        return "buy milk"

    @server.tool()
    def write_note() -> str:
        """Add a note (needs notes:write)."""
        return "written"

    rejections: list[str] = []

    def validate(value: str) -> AuthInfo | None:
        try:
            return table.validate(value, audience=RESOURCE)
        except TokenRejected as exc:
            rejections.append(exc.reason)
            return None

    http = SimulatedHttpServer(
        sim, tg, "notes", server_main(server), versions=[era], token_validator=validate, resource_metadata=PRM_URL,
        protected_resource=protected_resource_metadata(RESOURCE, [ISSUER], ["notes:read", "notes:write"]),
        challenge_scope="notes:read", scopes_for=lambda r: ("notes:write",) if tool_name(r) == "write_note" else ())
    web = SimulatedWeb(sim)
    web.add(ISSUER, auth_server)
    web.add("https://notes.example", ResourceSite(http))
    world = World(sim, tg, era, table, auth_server, http, web, None, rejections)  # type: ignore[arg-type]
    world.oauth = world.new_oauth()
    return world


def play(era: str, story: Callable[[World], Awaitable[Any]], *, seed: int = 3, **kw: Any) -> tuple[World, Any]:
    sim = Simulation(seed)
    box: dict[str, Any] = {}

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            world = build(sim, tg, era, **kw)
            box["world"] = world
            try:
                box["result"] = await story(world)
            finally:
                if world.client is not None:
                    await world.client.close()
                tg.cancel_scope.cancel()

    sim.run(main)
    return box["world"], box.get("result")


async def authorized_call(world: World, name: str = "read_notes") -> str:
    return await with_authorization(world.oauth, lambda token: world.call(name, token))


# -- the whole flow, both eras ----------------------------------------------------------------------

@pytest.mark.parametrize("era", ERAS)
def test_first_call_runs_the_whole_flow(era: str) -> None:
    world, text = play(era, authorized_call)
    assert text == "buy milk"
    assert world.oauth_exchanges() == FIRST_AUTHORIZATION
    events = world.sim.recorder.events
    first_mcp = "server/discover" if era == LATEST else "initialize"
    assert [e.method for e in events if e.kind == "request"][:2] == [first_mcp, first_mcp]
    refusal = next(e for e in events if e.text == "HTTP 401 Unauthorized")
    assert refusal.framing["http"]["response"]["headers"]["WWW-Authenticate"] == (
        f'Bearer resource_metadata="{PRM_URL}", scope="notes:read"')
    # The retried MCP request carries the token; the trace shows it redacted, as in OAuth events.
    token = world.oauth.tokens.access_token if world.oauth.tokens else ""
    retried = [e for e in events if e.kind == "request" and e.method == first_mcp][1]
    assert token.startswith("at_") and token != "at_REDACTED"
    assert retried.framing["http"]["request"]["headers"]["Authorization"] == "Bearer at_REDACTED"
    oauth_events = [e for e in events if "oauth" in e.marks]
    assert len(oauth_events) == 2 * len(FIRST_AUTHORIZATION)
    assert all(token not in json.dumps(e.to_json()) for e in oauth_events)
    assert world.oauth.steps[:3] == ["read the Protected Resource Metadata",
                                     f"discovered the authorization server at {ISSUER}/.well-known/oauth-authorization-server",
                                     "registered dynamically (RFC 7591)"]


@pytest.mark.parametrize("era", ERAS)
def test_authorization_request_carries_pkce_state_and_resource(era: str) -> None:
    world, _ = play(era, authorized_call)
    (authorize, redirect), (token_post, token_reply) = world.web.exchanges[3], world.web.exchanges[4]
    query = read_form(authorize.path.partition("?")[2])
    assert query["code_challenge_method"] == "S256" and query["resource"] == RESOURCE
    assert query["scope"] == "notes:read" and query["redirect_uri"] == REDIRECT
    back = read_form(urlsplit(redirect.headers["Location"]).query)
    assert redirect.headers["Location"].startswith(f"{REDIRECT}?")
    assert back["state"] == query["state"] and back["iss"] == ISSUER
    form = read_form(token_post.body)
    assert token_post.headers["Content-Type"] == FORM
    assert s256(form["code_verifier"]) == query["code_challenge"]
    assert form["code"] == back["code"] and form["resource"] == RESOURCE
    issued = world.table.introspect(token_reply.json()["access_token"])
    assert issued is not None and issued.audience == RESOURCE and issued.scopes == {"notes:read"}
    assert token_reply.headers["Cache-Control"] == "no-store"


def test_determinism_same_seed_same_trace() -> None:
    def trace(seed: int) -> list[dict[str, Any]]:
        world, _ = play(LATEST, authorized_call, seed=seed)
        return [e.to_json() for e in world.sim.recorder.events]

    assert trace(5) == trace(5)
    assert trace(5) != trace(6)


# -- discovery and registration ---------------------------------------------------------------------

def test_discovery_order_and_oidc_fallback() -> None:
    assert metadata_urls(ISSUER) == [f"{ISSUER}/.well-known/oauth-authorization-server",
                                     f"{ISSUER}/.well-known/openid-configuration"]
    assert metadata_urls(f"{ISSUER}/tenant1") == [f"{ISSUER}/.well-known/oauth-authorization-server/tenant1",
                                                  f"{ISSUER}/.well-known/openid-configuration/tenant1",
                                                  f"{ISSUER}/tenant1/.well-known/openid-configuration"]
    world, text = play(LATEST, authorized_call, discovery=("oidc",))
    assert text == "buy milk"
    assert world.oauth_exchanges()[1:3] == [("GET", f"{ISSUER}/.well-known/oauth-authorization-server", 404),
                                            ("GET", f"{ISSUER}/.well-known/openid-configuration", 200)]


@pytest.mark.parametrize("era", ERAS)
def test_preregistered_client_skips_registration(era: str) -> None:
    async def story(world: World) -> str:
        known = world.auth_server.preregister("notes-host", [REDIRECT])
        world.oauth = world.new_oauth(preregistered={ISSUER: known.client_id})
        return await authorized_call(world)

    world, text = play(era, story)
    assert text == "buy milk"
    assert [x for x in FIRST_AUTHORIZATION if x[1] != f"{ISSUER}/register"] == world.oauth_exchanges()
    assert world.oauth.steps[2] == "use the pre-registered client_id"


def test_protected_resource_metadata_at_well_known_uris() -> None:
    async def story(world: World) -> list[int]:
        statuses = []
        for path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource",
                     "/.well-known/oauth-protected-resource/other"):
            response = await world.web.fetch("client/notes", "GET", f"https://notes.example{path}")
            statuses.append(response.status)
        document = await world.oauth._resource_metadata(None)  # no resource_metadata in the challenge
        assert document == {"resource": RESOURCE, "authorization_servers": [ISSUER],
                            "scopes_supported": ["notes:read", "notes:write"], "bearer_methods_supported": ["header"]}
        return statuses

    _, statuses = play(LATEST, story)
    assert statuses == [200, 200, 404]


def test_parse_www_authenticate() -> None:
    assert parse_www_authenticate(f'Bearer error="insufficient_scope", scope="a b", resource_metadata="{PRM_URL}"') == {
        "error": "insufficient_scope", "scope": "a b", "resource_metadata": PRM_URL}
    assert parse_www_authenticate('Basic realm="x"') == {}


# -- failures ---------------------------------------------------------------------------------------

def _authorize_query(client_id: str, **changes: str | None) -> str:
    query = {"response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT,
             "code_challenge": s256("v" * 43), "code_challenge_method": "S256", "resource": RESOURCE,
             "state": "s1", "scope": "notes:read"}
    for name, value in changes.items():
        if value is None:
            query.pop(name, None)
        else:
            query[name] = value
    return f"/authorize?{form_body(query)}"


def _serve(world: World, method: str, path: str, body: str = "", form: bool = False) -> HttpResponse:
    headers = Headers({"Content-Type": FORM} if form else {})
    return world.auth_server.serve(HttpRequest(method, path, headers, body))


@pytest.mark.parametrize(("changes", "error"), [
    ({"code_challenge": None, "code_challenge_method": None}, "invalid_request"),
    ({"code_challenge_method": "plain"}, "invalid_request"),
    ({"code_challenge_method": None}, "invalid_request"),
    ({"resource": "https://other.example/mcp"}, "invalid_target"),
    ({"scope": "admin"}, "invalid_scope"),
    ({"response_type": "token"}, "unsupported_response_type"),
])
def test_authorization_endpoint_refusals_go_back_to_the_client(changes: dict[str, str | None], error: str) -> None:
    async def story(world: World) -> HttpResponse:
        client = world.auth_server.preregister("notes-host", [REDIRECT])
        return _serve(world, "GET", _authorize_query(client.client_id, **changes))

    world, response = play(LATEST, story)
    assert response.status == 302
    back = read_form(urlsplit(response.headers["Location"]).query)
    assert back["error"] == error and back["state"] == "s1" and "code" not in back
    assert world.auth_server._codes == {}


# (another port of the loopback literal is accepted, RFC 8252 section 7.3: tests/test_security_third_pass_b.py)
@pytest.mark.parametrize("redirect_uri", ["http://127.0.0.1:8765/callback/", "http://127.0.0.2:8765/callback",
                                          "http://localhost:8765/callback",
                                          "https://evil.example/callback", ""])
def test_bad_redirect_uri_is_never_redirected_to(redirect_uri: str) -> None:
    async def story(world: World) -> HttpResponse:
        client = world.auth_server.preregister("notes-host", [REDIRECT])
        return _serve(world, "GET", _authorize_query(client.client_id, redirect_uri=redirect_uri))

    _, response = play(LATEST, story)
    assert response.status == 400 and "Location" not in response.headers
    assert response.json()["error"] == "invalid_request"


@pytest.mark.parametrize("era", ERAS)
def test_client_with_a_bad_redirect_uri_stops(era: str) -> None:
    async def story(world: World) -> str:
        known = world.auth_server.preregister("notes-host", ["http://127.0.0.1:1/elsewhere"])
        world.oauth = world.new_oauth(preregistered={ISSUER: known.client_id})
        with pytest.raises(OAuthFailed) as failed:
            await authorized_call(world)
        return failed.value.rule

    world, rule = play(era, story)
    assert rule == "auth.exact-redirect-match"
    assert world.oauth_exchanges()[-1] == ("GET", f"{ISSUER}/authorize", 400)
    assert world.oauth.tokens is None


def test_token_endpoint_checks_the_verifier_and_spends_the_code() -> None:
    async def story(world: World) -> list[str]:
        client = world.auth_server.preregister("notes-host", [REDIRECT])

        def new_code() -> str:
            location = _serve(world, "GET", _authorize_query(client.client_id)).headers["Location"]
            return read_form(urlsplit(location).query)["code"]

        def redeem(code: str, verifier: str, **changes: str) -> str:
            fields = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT,
                      "client_id": client.client_id, "code_verifier": verifier, "resource": RESOURCE, **changes}
            return str(_serve(world, "POST", "/token", form_body(fields), form=True).json().get("error", "ok"))

        good = new_code()
        return [redeem(new_code(), "w" * 43), redeem(new_code(), "v" * 43, resource="https://other.example/mcp"),
                redeem(good, "v" * 43), redeem(good, "v" * 43)]

    _, errors = play(LATEST, story)
    # wrong verifier; another resource than the one authorised; the right one; the same code again
    assert errors == ["invalid_grant", "invalid_target", "ok", "invalid_grant"]


def test_client_refuses_an_authorization_server_without_s256() -> None:
    class NoPkce:
        def __init__(self, inner: OAuthAuthorizationServer) -> None:
            self.inner, self.participant = inner, inner.participant

        def serve(self, request: HttpRequest) -> HttpResponse:
            response = self.inner.serve(request)
            if request.path.startswith("/.well-known/"):
                document = response.json()
                document.pop("code_challenge_methods_supported", None)
                response = HttpResponse(200, response.headers, json.dumps(document))
            return response

    async def story(world: World) -> str:
        world.web.add(ISSUER, NoPkce(world.auth_server))
        with pytest.raises(OAuthFailed) as failed:
            await authorized_call(world)
        return failed.value.rule

    world, rule = play(LATEST, story)
    assert rule == "auth.pkce-refuse-without-methods"
    assert world.oauth_exchanges() == FIRST_AUTHORIZATION[:2]


@pytest.mark.parametrize("era", ERAS)
def test_user_refuses(era: str) -> None:
    async def story(world: World) -> str:
        with pytest.raises(OAuthFailed) as failed:
            await authorized_call(world)
        return failed.value.reason

    world, reason = play(era, story, refuses=frozenset({"notes-host"}))
    assert reason.startswith("access_denied")
    assert world.oauth_exchanges() == FIRST_AUTHORIZATION[:4]
    assert world.oauth.tokens is None


@pytest.mark.parametrize("era", ERAS)
def test_wrong_audience_is_refused(era: str) -> None:
    async def story(world: World) -> tuple[int, str]:
        elsewhere = world.table.issue(User("ada", "acme"), client_id="notes-host", audience="https://other.example/mcp",
                                      scopes=("notes:read",))
        with pytest.raises(HttpStatusError) as refused:
            await world.connect(elsewhere.value)
        return refused.value.status, refused.value.response.headers["WWW-Authenticate"]

    world, (status, challenge) = play(era, story)
    assert status == 401
    assert challenge == f'Bearer error="invalid_token", resource_metadata="{PRM_URL}", scope="notes:read"'
    assert world.rejections == ["the token was issued for 'https://other.example/mcp', not for 'https://notes.example/mcp'"]


@pytest.mark.parametrize("era", ERAS)
def test_expired_token_is_refreshed(era: str) -> None:
    async def story(world: World) -> list[str]:
        texts = [await authorized_call(world)]
        first = world.oauth.tokens
        await anyio.sleep(2.0)  # the token lives one second of virtual time
        texts.append(await authorized_call(world))
        assert first is not None and world.oauth.tokens is not None
        assert world.oauth.tokens.refresh_token != first.refresh_token  # rotated
        spent = {"grant_type": "refresh_token", "refresh_token": first.refresh_token or "",
                 "client_id": world.oauth.client_id or "", "resource": RESOURCE}
        texts.append(_serve(world, "POST", "/token", form_body(spent), form=True).json()["error"])
        return texts

    world, texts = play(era, story, access_ttl_ms=1000.0)
    assert texts == ["buy milk", "buy milk", "invalid_grant"]
    assert world.oauth_exchanges() == [*FIRST_AUTHORIZATION, ("POST", f"{ISSUER}/token", 200)]
    refresh = read_form(world.web.exchanges[-1][0].body)
    assert refresh["grant_type"] == "refresh_token" and refresh["resource"] == RESOURCE
    assert world.rejections == ["the token has expired"]
    refresh_events = [e for e in world.sim.recorder.events if "oauth" in e.marks][-2:]
    assert all(world.oauth.tokens is not None and world.oauth.tokens.refresh_token not in json.dumps(e.to_json())
               for e in refresh_events)


@pytest.mark.parametrize("era", ERAS)
def test_insufficient_scope_steps_up(era: str) -> None:
    async def story(world: World) -> list[str]:
        texts = [await authorized_call(world, "read_notes"), await authorized_call(world, "write_note")]
        return texts

    world, texts = play(era, story)
    assert texts == ["buy milk", "written"]
    step_up = [("GET", PRM_URL, 200), ("GET", f"{ISSUER}/.well-known/oauth-authorization-server", 200),
               ("GET", f"{ISSUER}/authorize", 302), ("POST", f"{ISSUER}/token", 200)]
    assert world.oauth_exchanges() == [*FIRST_AUTHORIZATION, *step_up]
    forbidden = next(e for e in world.sim.recorder.events if e.text == "HTTP 403 Forbidden")
    assert forbidden.framing["http"]["response"]["headers"]["WWW-Authenticate"] == (
        f'Bearer error="insufficient_scope", scope="notes:write notes:read", resource_metadata="{PRM_URL}"')
    second = read_form(world.web.exchanges[-2][0].path.partition("?")[2])
    assert second["scope"] == "notes:read notes:write"
    assert world.oauth.tokens is not None and world.oauth.tokens.scopes == {"notes:read", "notes:write"}


def test_redaction() -> None:
    assert redact('{"access_token": "at_secret", "scope": "x"}', "application/json") == (
        '{"access_token": "at_REDACTED", "scope": "x"}')
    assert redact("grant_type=refresh_token&refresh_token=rt_secret&client_id=c", FORM) == (
        "grant_type=refresh_token&refresh_token=rt_REDACTED&client_id=c")
    assert redact("code=code_abc&state=s", FORM) == "code=code_REDACTED&state=s"
    assert redact("/cb?code=abc&code_verifier=9f3e&state=s") == "/cb?code=REDACTED&code_verifier=REDACTED&state=s"


def test_dynamic_registration_validates_redirect_uris() -> None:
    async def story(world: World) -> list[int]:
        statuses = []
        for uris in ([], ["http://evil.example/cb"], "x", [REDIRECT]):
            body = json.dumps({"client_name": "n", "redirect_uris": uris})
            statuses.append(_serve(world, "POST", "/register", body).status)
        return statuses

    _, statuses = play(LATEST, story)
    assert statuses == [400, 400, 400, 201]


# -- Client ID Metadata Documents, state, and the MCP messages themselves ------------------------------

CLIENT_DOC = "https://host.example/oauth/client.json"


@pytest.mark.parametrize("era", ERAS)
def test_client_id_metadata_document(era: str) -> None:
    async def story(world: World) -> str:
        world.web.add("https://host.example", DocumentSite("host app site", {"/oauth/client.json": {
            "client_id": CLIENT_DOC, "client_name": "notes-host", "redirect_uris": [REDIRECT],
            "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
            "token_endpoint_auth_method": "none"}}))
        world.auth_server.client_documents = lambda url: world.web.fetch_json_now(world.auth_server.participant, url)
        world.oauth = world.new_oauth(metadata_document=CLIENT_DOC)
        return await authorized_call(world)

    world, text = play(era, story)
    assert text == "buy milk"
    assert world.oauth_exchanges_raw() == [
        ("GET", "/.well-known/oauth-protected-resource/mcp", 200), ("GET", "/.well-known/oauth-authorization-server", 200),
        ("GET", "/oauth/client.json", 200), ("GET", "/authorize", 302), ("POST", "/token", 200)]
    assert world.oauth.client_id == CLIENT_DOC
    assert world.oauth.steps[2] == "use the client's metadata document URL as its client_id"
    fetched = [e for e in world.sim.recorder.events if "oauth" in e.marks][5:7]  # inside the browser's /authorize exchange
    assert [(e.sender, e.receiver) for e in fetched] == [("authorization server (login.example)", "host app site"),
                                                          ("host app site", "authorization server (login.example)")]


def test_client_id_metadata_document_must_name_itself() -> None:
    async def story(world: World) -> int:
        world.web.add("https://host.example", DocumentSite("host app site", {"/oauth/client.json": {
            "client_id": "https://elsewhere.example/client.json", "redirect_uris": [REDIRECT]}}))
        world.auth_server.client_documents = lambda url: world.web.fetch_json_now(world.auth_server.participant, url)
        return _serve(world, "GET", _authorize_query(CLIENT_DOC)).status

    _, status = play(LATEST, story)
    assert status == 400


def test_a_redirect_with_another_state_is_rejected() -> None:
    class Forger:
        """An authorization response that does not belong to the client's request (CSRF)."""

        def __init__(self, inner: OAuthAuthorizationServer) -> None:
            self.inner, self.participant = inner, inner.participant

        def serve(self, request: HttpRequest) -> HttpResponse:
            response = self.inner.serve(request)
            if response.status == 302:
                response.headers["Location"] = response.headers["Location"].replace("state=", "state=x")
            return response

    async def story(world: World) -> str:
        world.web.add(ISSUER, Forger(world.auth_server))
        with pytest.raises(OAuthFailed) as failed:
            await authorized_call(world)
        return failed.value.rule

    world, rule = play(LATEST, story)
    assert "state" in rule
    assert world.oauth.tokens is None and world.oauth_exchanges()[-1] == ("GET", f"{ISSUER}/authorize", 302)


@pytest.mark.skipif(find_spec_dir() is None, reason="official MCP schemas not found")
@pytest.mark.parametrize("era", ERAS)
def test_mcp_messages_are_valid_for_their_revision(era: str) -> None:
    async def story(world: World) -> list[str]:
        return [await authorized_call(world, "read_notes"), await authorized_call(world, "write_note")]

    world, _ = play(era, story)
    mcp = [e for e in world.sim.recorder.events if e.kind in ("request", "response", "error", "notification")]
    assert mcp and all(schema_errors(e.message, era, "JSONRPCMessage") == [] for e in mcp)


# -- the url guard and iss (RFC 9207) -------------------------------------------------------------------

def test_the_url_guard_sees_every_learned_url_before_it_is_fetched() -> None:
    """``url_guard`` is called with each URL the flow learned (from the challenge, the resource
    metadata, the AS metadata) — not with the Server's own URL — and a refusal stops the flow
    before anything reaches that address."""
    seen: list[str] = []

    async def story(world: World) -> str:
        world.oauth = world.new_oauth(url_guard=seen.append)
        return await authorized_call(world)

    world, text = play(LATEST, story)
    assert text == "buy milk"
    assert seen == [PRM_URL, f"{ISSUER}/.well-known/oauth-authorization-server", f"{ISSUER}/register",
                    f"{ISSUER}/authorize", f"{ISSUER}/token"]

    def refuse_the_issuer(url: str) -> None:
        if url.startswith(ISSUER):
            raise OAuthFailed(f"refusing {url}", "a learned URL must be safe to fetch")

    async def refused(world: World) -> str:
        world.oauth = world.new_oauth(url_guard=refuse_the_issuer)
        with pytest.raises(OAuthFailed) as failed:
            await authorized_call(world)
        return failed.value.rule

    world, rule = play(LATEST, refused)
    assert rule == "a learned URL must be safe to fetch"
    assert world.oauth_exchanges() == [("GET", PRM_URL, 200)]


def test_a_promised_iss_must_come_back() -> None:
    """The AS metadata says ``authorization_response_iss_parameter_supported``: a redirect without
    ``iss`` may come from another AS (a mix-up), so the client refuses to redeem its code."""

    class DropIss:
        def __init__(self, inner: OAuthAuthorizationServer) -> None:
            self.inner, self.participant = inner, inner.participant

        def serve(self, request: HttpRequest) -> HttpResponse:
            response = self.inner.serve(request)
            if response.status == 302:
                location = response.headers["Location"]
                response.headers["Location"] = location.split("&iss=", 1)[0]
            return response

    async def story(world: World) -> str:
        world.web.add(ISSUER, DropIss(world.auth_server))
        with pytest.raises(OAuthFailed) as failed:
            await authorized_call(world)
        return failed.value.rule

    world, rule = play(LATEST, story)
    assert rule == "auth.iss-validate" and world.oauth.tokens is None
    assert world.oauth_exchanges()[-1] == ("GET", f"{ISSUER}/authorize", 302)


class RewriteIss:
    """An authorization server whose redirects carry ``iss`` = ``value`` (``None``: no ``iss``), and
    whose metadata promises ``iss`` or not (``promised``)."""

    def __init__(self, inner: OAuthAuthorizationServer, value: str | None, promised: bool) -> None:
        self.inner, self.participant, self.value, self.promised = inner, inner.participant, value, promised

    def serve(self, request: HttpRequest) -> HttpResponse:
        response = self.inner.serve(request)
        if request.path.startswith("/.well-known/") and response.status == 200:
            document = response.json()
            document["authorization_response_iss_parameter_supported"] = self.promised
            return HttpResponse(200, response.headers, json.dumps(document))
        if response.status == 302:
            base, _, query = response.headers["Location"].partition("?")
            fields = {k: v for k, v in read_form(query).items() if k != "iss"}
            if self.value is not None:
                fields["iss"] = self.value
            response.headers["Location"] = f"{base}?{urlencode(fields)}"
        return response


# RFC 9207 section 2.4 as 2026-07-28 tabulates it: (metadata promises iss, iss in the response) -> outcome.
ISS_TABLE = [(True, ISSUER, "token"), (True, None, "refused"), (True, ISSUER + "/", "refused"),
             (False, ISSUER, "token"), (False, "HTTPS://LOGIN.EXAMPLE", "refused"), (False, None, "token")]


@pytest.mark.parametrize(("promised", "iss", "outcome"), ISS_TABLE)
@pytest.mark.parametrize("era", ERAS)
def test_the_iss_check_follows_the_era(era: str, promised: bool, iss: str | None, outcome: str) -> None:
    """2026-07-28 (rule auth.iss-validate): the four rows of the table, by plain string comparison
    (no case folding, no trailing-slash normalising: auth.iss-exact-comparison), before the code goes
    to any token endpoint. 2025-11-25 has no iss rule, and the legacy client does not look
    (auth.legacy.iss-not-checked): it redeems the code whatever the response says of iss."""

    async def story(world: World) -> str:
        world.web.add(ISSUER, RewriteIss(world.auth_server, iss, promised))
        try:
            await authorized_call(world)
        except OAuthFailed as failed:
            return failed.rule
        return "token"

    world, got = play(era, story)
    token_posts = [1 for request, _ in world.web.exchanges if request.path == "/token"]
    if era == LATEST:
        assert got == (outcome if outcome == "token" else "auth.iss-validate")
        assert bool(token_posts) is (outcome == "token")
    else:
        assert got == "token" and token_posts == [1]


def test_the_real_wire_default_follows_the_newest_rules() -> None:
    """``revision=None`` (what the real-wire client uses) checks iss in any era's deployment."""

    async def story(world: World) -> str:
        world.oauth = world.new_oauth(revision=None)
        world.web.add(ISSUER, RewriteIss(world.auth_server, "https://elsewhere.example", True))
        with pytest.raises(OAuthFailed) as failed:
            await authorized_call(world)
        return failed.value.rule

    _, rule = play(LATEST_LEGACY, story)
    assert rule == "auth.iss-validate"


# -- a 2025-03-26 server: no Protected Resource Metadata, the origin is the authorization server ---------

OLD_ORIGIN = "https://notes.example"
OLD_REVISION = "2025-03-26"


class Server20250326(SimulatedHttpServer):
    """The HTTP layer of a 2025-03-26 MCP server: that revision had no Protected Resource Metadata, so
    its ``401`` challenge names none (and nothing is served at the well-known URIs)."""

    def _authenticate(self, headers: Headers,
                      request: HttpRequest | None = None) -> tuple[AuthInfo | None, HttpResponse | None]:
        auth, refusal = super()._authenticate(headers, request)
        if refusal is not None:
            kept = {k: v for k, v in parse_www_authenticate(refusal.headers["WWW-Authenticate"]).items()
                    if k != "resource_metadata"}
            refusal.headers["WWW-Authenticate"] = " ".join(["Bearer", ", ".join(f'{k}="{v}"' for k, v in kept.items())]).strip()
        return auth, refusal


def play_2025_03_26(story: Callable[[World], Awaitable[Any]], *, discovery: tuple[Any, ...] = ("oauth",),
                    site: Callable[[OAuthAuthorizationServer], Any] | None = None) -> tuple[World, Any]:
    """A 2025-03-26 deployment: the notes server's own origin runs the authorization server
    (the unchanged simulated one, with ``issuer`` = that origin)."""
    sim = Simulation(5)
    box: dict[str, Any] = {}

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            table = AuthorizationServer(OLD_ORIGIN, lambda: sim.token(16), sim.now_ms)
            auth_server = OAuthAuthorizationServer(OLD_ORIGIN, table, ScriptedUser(User("ada", "acme")),
                                                   resources=(RESOURCE,), discovery=discovery, sends_iss=False)
            server = Server("notes", version="1.0.0", supported_versions=(OLD_REVISION,))

            @server.tool()
            def read_notes() -> str:
                """Your notes."""
                return "buy milk"

            def validate(value: str) -> AuthInfo | None:
                try:
                    return table.validate(value, audience=RESOURCE)
                except TokenRejected:
                    return None

            http = Server20250326(sim, tg, "notes", server_main(server), versions=[OLD_REVISION],
                                  token_validator=validate)
            web = SimulatedWeb(sim)
            web.add(OLD_ORIGIN, site(auth_server) if site is not None else auth_server)
            world = World(sim, tg, OLD_REVISION, table, auth_server, http, web, None)  # type: ignore[arg-type]
            world.oauth = world.new_oauth()
            box["world"] = world
            try:
                box["result"] = await story(world)
            finally:
                if world.client is not None:
                    await world.client.close()
                tg.cancel_scope.cancel()

    sim.run(main)
    return box["world"], box.get("result")


NO_PRM = [("GET", f"{OLD_ORIGIN}/.well-known/oauth-protected-resource/mcp", 404),
          ("GET", f"{OLD_ORIGIN}/.well-known/oauth-protected-resource", 404)]
OLD_FLOW = [("POST", f"{OLD_ORIGIN}/register", 201), ("GET", f"{OLD_ORIGIN}/authorize", 302),
            ("POST", f"{OLD_ORIGIN}/token", 200)]


def old_exchanges(world: World) -> list[tuple[str, str, int]]:
    return [(q.method, f"{OLD_ORIGIN}{q.path.partition('?')[0]}", r.status) for q, r in world.web.exchanges]


def test_a_2025_03_26_server_its_origin_is_the_authorization_server() -> None:
    """No metadata named, both well-known URIs 404: the client reads RFC 8414 metadata at the
    server's origin and runs the usual code flow with PKCE there, saying which rule it follows."""
    world, text = play_2025_03_26(authorized_call)
    assert text == "buy milk"
    assert old_exchanges(world) == [*NO_PRM, ("GET", f"{OLD_ORIGIN}/.well-known/oauth-authorization-server", 200),
                                    *OLD_FLOW]
    refusal = next(e for e in world.sim.recorder.events if e.text == "HTTP 401 Unauthorized")
    assert "resource_metadata" not in json.dumps(refusal.framing)
    assert any("following 2025-03-26" in step for step in world.oauth.steps)
    discovery = world.web.exchanges[2][0]
    assert discovery.headers.get("MCP-Protocol-Version") == OLD_REVISION  # 2025-03-26 asks for it there
    authorize = next(q for q, _ in world.web.exchanges if q.path.startswith("/authorize"))
    query = dict(p.split("=", 1) for p in urlsplit(authorize.path).query.split("&"))
    assert query["code_challenge_method"] == "S256" and query["code_challenge"]


def test_a_2025_03_26_server_without_metadata_gets_the_default_endpoints() -> None:
    """No authorization server metadata either: ``/authorize``, ``/token``, ``/register`` at the
    origin. There is no document to list PKCE methods; 2025-03-26 makes PKCE mandatory, so the client
    proceeds, sending S256 — and the simulated AS, which enforces it, accepts the flow."""
    seen: list[str] = []

    async def story(world: World) -> str:
        world.oauth = world.new_oauth(notice=seen.append)
        return await authorized_call(world)

    world, text = play_2025_03_26(story, discovery=())
    assert text == "buy milk"
    assert old_exchanges(world) == [*NO_PRM, ("GET", f"{OLD_ORIGIN}/.well-known/oauth-authorization-server", 404),
                                    *OLD_FLOW]
    assert len(seen) == 2 and "2025-03-26" in seen[0] and "default endpoints" in seen[1]
    assert world.oauth.tokens is not None


def test_2025_03_26_metadata_without_s256_is_still_refused() -> None:
    """The fallback does not lower the bar for a document that exists: metadata without
    ``code_challenge_methods_supported`` listing S256 stops the flow, as for any other server."""

    class NoPkce:
        def __init__(self, inner: OAuthAuthorizationServer) -> None:
            self.inner, self.participant = inner, inner.participant

        def serve(self, request: HttpRequest) -> HttpResponse:
            response = self.inner.serve(request)
            if request.path == "/.well-known/oauth-authorization-server":
                document = response.json()
                document.pop("code_challenge_methods_supported")
                response = HttpResponse(200, response.headers, json.dumps(document))
            return response

    async def story(world: World) -> str:
        with pytest.raises(OAuthFailed) as failed:
            await authorized_call(world)
        return failed.value.rule

    world, rule = play_2025_03_26(story, site=NoPkce)
    assert rule == "auth.pkce-refuse-without-methods"
    assert old_exchanges(world) == [*NO_PRM, ("GET", f"{OLD_ORIGIN}/.well-known/oauth-authorization-server", 200)]


def test_a_named_metadata_document_that_is_missing_is_no_2025_03_26_server() -> None:
    """A challenge that names its metadata belongs to 2025-06-18 or later: when that document is
    missing the flow stops (no guessing at the origin), as it does when a well-known URI fails
    with anything but 404."""

    async def story(world: World) -> str:
        with pytest.raises(OAuthFailed) as failed:
            await authorized_call(world)
        return failed.value.reason

    def without_prm(world: World) -> None:
        world.web.add("https://notes.example", DocumentSite("notes"))

    async def missing(world: World) -> str:
        without_prm(world)
        return await story(world)

    world, reason = play(LATEST, missing)
    assert reason == "no Protected Resource Metadata found"
    assert world.oauth_exchanges() == [("GET", PRM_URL, 404)]

    class Broken:
        participant = "notes"

        def serve(self, request: HttpRequest) -> HttpResponse:
            return HttpResponse(500 if request.path.endswith("/mcp") else 404)

    world, reason = play_2025_03_26(story, site=lambda _: Broken())
    assert reason == "no Protected Resource Metadata found"
    assert old_exchanges(world) == [("GET", f"{OLD_ORIGIN}/.well-known/oauth-protected-resource/mcp", 500),
                                    ("GET", f"{OLD_ORIGIN}/.well-known/oauth-protected-resource", 404)]


# -- the client-credentials extension: a client with no user --------------------------------------------

MACHINE_ID, MACHINE_SECRET = "nightly-report", "s3cret"


class MachineAuthorizationServer:
    """The simulated AS plus the client-credentials grant, for one client registered out of band:
    its metadata lists the grant and how the client may authenticate; ``POST /token`` with
    ``grant_type=client_credentials`` checks the client and issues a token for the ``resource``
    asked for. Everything else is the unchanged simulated AS."""

    def __init__(self, inner: OAuthAuthorizationServer, methods: tuple[str, ...] = ("client_secret_basic",)) -> None:
        self.inner, self.participant, self.methods = inner, inner.participant, methods
        self.token_requests: list[tuple[dict[str, str], str | None]] = []

    def serve(self, request: HttpRequest) -> HttpResponse:
        path = request.path.partition("?")[0]
        if path == "/.well-known/oauth-authorization-server":
            document = {**self.inner.metadata(), "grant_types_supported": ["client_credentials"],
                        "token_endpoint_auth_methods_supported": list(self.methods)}
            return HttpResponse(200, Headers({"Content-Type": "application/json"}), json.dumps(document))
        form = read_form(request.body)
        if path != "/token" or form.get("grant_type") != "client_credentials":
            return self.inner.serve(request)
        self.token_requests.append((form, request.headers.get("Authorization")))
        basic = basic_credentials(MACHINE_ID, MACHINE_SECRET)
        signed = form.get("client_assertion") == f"signed-for:{ISSUER}"
        if request.headers.get("Authorization") != basic and not signed:
            return HttpResponse(401, Headers({"Content-Type": "application/json"}), json.dumps({"error": "invalid_client"}))
        token = self.inner.tokens.issue(User(MACHINE_ID, "acme"), client_id=MACHINE_ID, audience=form["resource"],
                                        scopes=frozenset(form.get("scope", "").split()), ttl_ms=3_600_000.0)
        return HttpResponse(200, Headers({"Content-Type": "application/json"}), json.dumps(
            {"access_token": token.value, "token_type": "Bearer", "expires_in": 3600, "scope": form.get("scope", "")}))


def test_a_client_with_no_user_uses_the_client_credentials_grant() -> None:
    """Discovery as usual, then one token request: no registration, no browser, no PKCE; the client
    authenticates with its secret (HTTP Basic, as the AS lists) and asks for the Server's resource."""
    async def story(world: World) -> str:
        site = MachineAuthorizationServer(world.auth_server)
        world.web.add(ISSUER, site)
        world.oauth = world.new_oauth(machine=MachineCredentials(MACHINE_ID, client_secret=MACHINE_SECRET))
        text = await authorized_call(world)
        assert [form["grant_type"] for form, _ in site.token_requests] == ["client_credentials"]
        form, header = site.token_requests[0]
        assert form["resource"] == RESOURCE and form["scope"] == "notes:read" and header and header.startswith("Basic ")
        assert "client_secret" not in form and "code_verifier" not in form
        return text

    world, text = play(LATEST, story)
    assert text == "buy milk"
    assert world.oauth_exchanges() == [FIRST_AUTHORIZATION[0], FIRST_AUTHORIZATION[1], ("POST", f"{ISSUER}/token", 200)]
    assert world.oauth.tokens is not None and world.oauth.tokens.refresh_token is None


def test_a_client_with_a_private_key_sends_a_signed_assertion_instead_of_a_secret() -> None:
    """``private_key_jwt``: the form carries RFC 7523's assertion for the issuer (and no client_id:
    the assertion names the client); no Authorization header, no secret anywhere."""
    async def story(world: World) -> list[tuple[dict[str, str], str | None]]:
        site = MachineAuthorizationServer(world.auth_server, methods=("private_key_jwt",))
        world.web.add(ISSUER, site)
        world.oauth = world.new_oauth(machine=MachineCredentials(MACHINE_ID, assertion=lambda aud: f"signed-for:{aud}"))
        await authorized_call(world)
        return site.token_requests

    world, requests = play(LATEST, story)
    [(form, header)] = requests
    assert "signed-for" not in json.dumps([e.framing for e in world.sim.recorder.events], default=str)  # redacted
    assert header is None and "client_id" not in form
    assert form["client_assertion_type"] == JWT_BEARER_ASSERTION and form["client_assertion"] == f"signed-for:{ISSUER}"


@pytest.mark.parametrize("bound_to", [None, "https://elsewhere.example"])
def test_machine_credentials_never_replace_the_code_flow_where_it_applies(bound_to: str | None) -> None:
    """An AS that does not list the grant, or credentials bound to another issuer: the ordinary code
    flow runs, and the machine's secret is never sent."""
    async def story(world: World) -> str:
        if bound_to is not None:
            world.web.add(ISSUER, MachineAuthorizationServer(world.auth_server))
        world.oauth = world.new_oauth(machine=MachineCredentials(MACHINE_ID, client_secret=MACHINE_SECRET,
                                                                 issuer=bound_to))
        return await authorized_call(world)

    world, text = play(LATEST, story)
    assert text == "buy milk"
    sent = " ".join(f"{q.path} {q.body} {q.headers.get('Authorization') or ''}" for q, _ in world.web.exchanges)
    assert MACHINE_SECRET not in sent and "client_credentials" not in sent
    assert ("POST", f"{ISSUER}/register", 201) in world.oauth_exchanges()

