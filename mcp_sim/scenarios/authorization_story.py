"""Authorization stories for course chapter 11: MCP's OAuth 2.1 flow, told once per era.

One deployment plays every story: the ``notes`` MCP Server at ``https://notes.example/mcp``, protected
by the authorization server at ``https://login.example``; a Host whose Client connects over Streamable
HTTP; the user Ada, signed in at the authorization server in her browser; and, for the upstream
stories, a calendar API at ``https://calendar.example`` that the notes server calls on Ada's behalf.

The stories (:data:`STORIES`; :func:`run_authorization_story` runs one in a fresh simulation):

* ``first-call`` — the whole flow, from the first ``401`` to a working ``tools/call``; the
  authorization server does not support Client ID Metadata Documents, so the Host registers
  dynamically (in 2026-07-28 with ``application_type: "native"``);
* ``metadata-document`` — the authorization server advertises
  ``client_id_metadata_document_supported`` and the Host publishes a metadata document: its https
  URL is the ``client_id``, the authorization server fetches it, and nothing is registered;
* ``iss-mismatch`` — the authorization response names another issuer than the one the client
  recorded: the 2026-07-28 client refuses to send the code anywhere (RFC 9207); the 2025-11-25
  client, whose revision has no ``iss`` rule, does not look;
* ``wrong-audience`` — the Client presents a token issued for another server: ``401 invalid_token``,
  then the flow for *this* server;
* ``pkce-refused`` — a careless client asks for a code without PKCE, then with ``plain``: both are
  sent back with ``error=invalid_request``; then the simulator's own client does it right;
* ``no-s256`` — an authorization server whose metadata does not promise ``S256``: the client stops;
* ``bad-redirect`` — a client registered with another redirect URI: the authorization server shows an
  error page (``400``) and never redirects;
* ``expired-refresh`` — the access token runs out: ``401``, the refresh grant, the call again;
* ``step-up`` — a tool needs a scope the token lacks: ``403 insufficient_scope``, authorize again with
  the wider scope;
* ``user-refuses`` — Ada says no on the consent screen: ``error=access_denied``, no token;
* ``token-passthrough`` — the notes server forwards Ada's token to the calendar API, which checks the
  audience and refuses it;
* ``own-upstream-token`` — the notes server is the calendar API's OAuth client in its own right: it gets
  its own token (audience: the calendar API) and the call works.

The confused deputy (an MCP proxy with one static client id at a third-party authorization server) is
a security lab: :func:`confused_deputy` runs it by name (``confused-deputy``) through the lab table.

Every MCP message comes from the simulator's own Client and Server; every OAuth exchange from
:mod:`mcp_sim.security.oauth` (the authorization server) and :mod:`mcp_sim.security.oauth_client`
(the client's half), carried and recorded by :class:`~mcp_sim.security.oauth_web.SimulatedWeb`.
The stories only decide what each party is configured to do.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, NamedTuple
from urllib.parse import urlencode, urlsplit

import anyio

from mcp_sim.protocol.revisions import LATEST, LATEST_LEGACY
from mcp_sim.roles.client import Client
from mcp_sim.roles.context import Context
from mcp_sim.roles.server import Server
from mcp_sim.scenarios.authorization_faults import OtherIssuer, WithoutS256
from mcp_sim.security.identity import AuthInfo, User
from mcp_sim.security.lab import server_main
from mcp_sim.security.oauth import (
    PRM_PATH,
    OAuthAuthorizationServer,
    ScriptedUser,
    json_response,
    protected_resource_metadata,
    read_form,
    s256,
)
from mcp_sim.security.oauth_client import OAuthClient, OAuthFailed, TokenSet, with_authorization
from mcp_sim.security.oauth_web import DocumentSite, ResourceSite, SimulatedWeb
from mcp_sim.security.tokens import AuthorizationServer, TokenRejected
from mcp_sim.sim.world import Simulation
from mcp_sim.transports.http import Headers, HttpRequest, HttpResponse
from mcp_sim.transports.http_server import SimulatedHttpServer

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from mcp_sim.scenarios.security import LabResult
    from mcp_sim.trace.recorder import Recorder

RESOURCE: Final = "https://notes.example/mcp"
"""The notes MCP Server's canonical URI: the audience its tokens must name."""
ISSUER: Final = "https://login.example"
PRM_URL: Final = f"https://notes.example{PRM_PATH}/mcp"
"""Where the notes server publishes its Protected Resource Metadata (RFC 9728, path-aware)."""
REDIRECT: Final = "http://127.0.0.1:8765/callback"
"""Where Ada's browser brings the code back: a loopback address of the Host (a native app), named by
its IP literal as RFC 8252 section 8.3 recommends (rule ``auth.loopback-ip-literal``)."""
HOST_METADATA: Final = "https://notes-host.example/oauth/client.json"
"""Where the Host publishes its Client ID Metadata Document (the ``metadata-document`` story): this
https URL is its ``client_id``."""
UPSTREAM: Final = "https://calendar.example"
"""The calendar API the notes server calls: another resource, with its own audience."""
UPSTREAM_PRM_URL: Final = f"{UPSTREAM}{PRM_PATH}"
SERVER_REDIRECT: Final = "https://notes.example/oauth/callback"
"""Where the browser returns when the notes server itself is the OAuth client (of the calendar API)."""
ERAS: Final = (LATEST_LEGACY, LATEST)
SCOPES: Final = ("notes:read", "notes:write", "calendar:read")
ADA: Final = User("ada", "acme")


def tool_name(request: HttpRequest) -> str | None:
    """The tool a ``tools/call`` POST names: the ``Mcp-Name`` header (2026-07-28) or the body (legacy)."""
    if request.headers.get("Mcp-Name"):
        return request.headers.get("Mcp-Name")
    try:
        message = json.loads(request.body or "{}")
    except ValueError:
        return None
    if isinstance(message, dict) and message.get("method") == "tools/call":
        return str((message.get("params") or {}).get("name"))
    return None


@dataclass
class CalendarApi:
    """The upstream API: an OAuth resource server of its own, answering ``GET /events``.

    It validates every token the way an MCP Server must: known, unexpired, **issued for this API**
    (audience ``https://calendar.example``) and carrying ``calendar:read``."""

    table: AuthorizationServer
    participant: str = "calendar API (calendar.example)"
    seen: list[str] = field(default_factory=list)
    """Who each accepted call came from (``client_id``): what the API's audit log records."""

    def serve(self, request: HttpRequest) -> HttpResponse:
        if request.path == PRM_PATH:
            return json_response(200, protected_resource_metadata(UPSTREAM, [ISSUER], ["calendar:read"]))
        header = request.headers.get("Authorization") or ""
        challenge = f'resource_metadata="{UPSTREAM_PRM_URL}", scope="calendar:read"'
        if not header.startswith("Bearer "):
            return HttpResponse(401, Headers({"WWW-Authenticate": f"Bearer {challenge}"}))
        try:
            auth = self.table.validate(header[len("Bearer "):], audience=UPSTREAM, required_scopes=("calendar:read",))
        except TokenRejected as refused:
            error = "insufficient_scope" if refused.status == 403 else "invalid_token"
            return HttpResponse(refused.status, Headers({"WWW-Authenticate": f'Bearer error="{error}", {challenge}'}))
        self.seen.append(auth.client_id or "")
        return json_response(200, {"events": ["standup 09:30", "review 14:00"]})


@dataclass
class Deployment:
    """One simulated deployment: the notes MCP Server behind OAuth, its authorization server, the
    calendar API upstream, the simulated web, and the Host's OAuth client for the notes server."""

    sim: Simulation
    tg: TaskGroup
    revision: str
    table: AuthorizationServer
    auth_server: OAuthAuthorizationServer
    http: SimulatedHttpServer
    web: SimulatedWeb
    calendar: CalendarApi
    oauth: OAuthClient = field(init=False)
    upstreams: dict[str, OAuthClient] = field(default_factory=dict)
    """The notes server's own OAuth clients for the calendar API, one per user (by subject): upstream
    tokens are bound to the user who authorised them (the ``own-upstream-token`` story)."""
    passthrough: bool = False
    """Whether the notes server forwards the caller's token upstream instead of using its own."""
    rejections: list[str] = field(default_factory=list)
    """Why the notes server refused each token it refused (its log, not sent to anyone)."""
    client: Client | None = None
    _stream: Any = None

    def oauth_client(self, **options: Any) -> OAuthClient:
        """The Host's OAuth state for the notes server (``options``: ``preregistered``,
        ``redirect_uri`` …); it follows the authorization rules of the deployment's revision."""
        return OAuthClient(self.web, "client/notes", RESOURCE, options.pop("client_name", "notes-host"),
                           options.pop("redirect_uri", REDIRECT), lambda: self.sim.token(16), self.sim.now_ms,
                           revision=options.pop("revision", self.revision), **options)

    def upstream_for(self, subject: str) -> OAuthClient:
        """The notes server's OAuth client for the calendar API on behalf of user ``subject`` (made on
        first use): one per user, so one user's upstream token never serves another."""
        if subject not in self.upstreams:
            self.upstreams[subject] = OAuthClient(self.web, "server/notes", UPSTREAM, "notes-server",
                                                  SERVER_REDIRECT, lambda: self.sim.token(16), self.sim.now_ms,
                                                  revision=self.revision)
        return self.upstreams[subject]

    @property
    def upstream(self) -> OAuthClient:
        """The notes server's upstream client for Ada, the stories' user."""
        return self.upstream_for(ADA.subject)

    async def call(self, name: str, token: str | None) -> str:
        """One ``tools/call`` with ``token``: on a new connection the first time (a failed opening spends
        the Client, so a retry makes a new one), later on the same connection with the token replaced."""
        if self.client is None or self._stream is None:
            client = Client("host", era="modern" if self.revision == LATEST else "legacy", versions=(self.revision,),
                            sim=self.sim, timeout=5.0)
            stream = self.http.connect("notes", revision=self.revision, token=token, open_get_stream=False)
            await client.connect(stream, self.tg)
            self.client, self._stream = client, stream
        else:
            self._stream.token = token
        result = await self.client.call_tool(name, {})
        return str(result["content"][0]["text"])

    async def authorized_call(self, name: str = "read_notes") -> str:
        """What a Host does: call, and on a ``401``/``403`` let the OAuth client get a token and retry."""
        return await with_authorization(self.oauth, lambda token: self.call(name, token))


def notes_server(deployment: Callable[[], Deployment]) -> Server:
    """The notes MCP Server: ``read_notes`` (any valid token; the ``401`` suggests ``notes:read``),
    ``write_note`` (needs ``notes:write``) and ``agenda``, which asks the calendar API upstream for
    today's events.

    ``deployment`` returns the deployment the server runs in: the ``agenda`` tool needs it (the web,
    the server's own OAuth client), and it is built after the server."""
    server = Server("notes", version="1.0.0")

    @server.tool()
    def read_notes() -> str:
        """Your notes."""
        return "buy milk"

    @server.tool()
    def write_note() -> str:
        """Add a note (needs notes:write)."""
        return "written"

    @server.tool()
    async def agenda(ctx: Context) -> str:
        """Today's events, from the calendar API."""
        world = deployment()
        upstream = world.upstream_for(ctx.auth.subject if ctx.auth is not None else "")
        if world.passthrough:
            # The mistake: the caller's token was issued for *this* server; forwarding it asks the
            # calendar API to accept a token that was never meant for it.
            token = ctx.auth.token if ctx.auth is not None else None
        else:
            token = upstream.tokens.access_token if upstream.tokens is not None else None
        answer = await world.web.fetch("server/notes", "GET", f"{UPSTREAM}/events",
                                       headers={"Authorization": f"Bearer {token}"} if token else {})
        if answer.status == 401 and not world.passthrough:
            # The server's own flow, for this user. A real server sends the user to the authorization
            # URL by URL-mode elicitation and checks that the same user completes it; here the scripted
            # browser follows it at once (rule auth.upstream-scripted-browser).
            token = await upstream.on_challenge(answer)
            answer = await world.web.fetch("server/notes", "GET", f"{UPSTREAM}/events",
                                           headers={"Authorization": f"Bearer {token}"})
        if answer.status != 200:
            raise RuntimeError(f"the calendar API answered {answer.status}: "
                               f"{answer.headers.get('WWW-Authenticate') or answer.body}")
        return ", ".join(json.loads(answer.body or "{}")["events"])

    return server


def build(sim: Simulation, tg: TaskGroup, revision: str, *, refuses: frozenset[str] = frozenset(),
          access_ttl_ms: float = 3_600_000.0) -> Deployment:
    """Wire up the deployment: authorization server, notes server (HTTP, dual PRM URIs, scoped
    challenges), calendar API, and the web that carries OAuth's exchanges."""
    table = AuthorizationServer(ISSUER, lambda: sim.token(16), sim.now_ms)
    auth_server = OAuthAuthorizationServer(ISSUER, table, ScriptedUser(ADA, refuses), resources=(RESOURCE, UPSTREAM),
                                           scopes_supported=SCOPES, access_ttl_ms=access_ttl_ms)
    box: list[Deployment] = []
    rejections: list[str] = []

    def validate(value: str) -> AuthInfo | None:
        try:
            return table.validate(value, audience=RESOURCE)
        except TokenRejected as exc:
            rejections.append(exc.reason)
            return None

    http = SimulatedHttpServer(
        sim, tg, "notes", server_main(notes_server(lambda: box[0])), versions=[revision], token_validator=validate,
        resource_metadata=PRM_URL, challenge_scope="notes:read",
        protected_resource=protected_resource_metadata(RESOURCE, [ISSUER], ["notes:read", "notes:write"]),
        scopes_for=lambda r: ("notes:write",) if tool_name(r) == "write_note" else ())
    web = SimulatedWeb(sim)
    calendar = CalendarApi(table)
    web.add(ISSUER, auth_server)
    web.add("https://notes.example", ResourceSite(http))
    web.add(UPSTREAM, calendar)
    world = Deployment(sim, tg, revision, table, auth_server, http, web, calendar, rejections=rejections)
    world.oauth = world.oauth_client()
    box.append(world)
    return world


# --------------------------------------------------------------------------------------------------
# The stories
# --------------------------------------------------------------------------------------------------

@dataclass
class AuthRun:
    """One story's run: the trace, the deployment it ran in, and what came of it."""

    story: str
    revision: str
    recorder: Recorder
    world: Deployment
    results: list[str] = field(default_factory=list)
    """The tool results the Host got, in order."""
    failure: OAuthFailed | None = None
    """Why the OAuth flow stopped, when it did."""
    notes: dict[str, Any] = field(default_factory=dict)
    """Story-specific facts (the refused attempts, the upstream's audit log …)."""

    @property
    def steps(self) -> list[str]:
        """What the Host's OAuth client did, one line a step."""
        return list(self.world.oauth.steps)

    def http_exchanges(self) -> list[Exchange]:
        """Every HTTP exchange of the run in order — MCP's POSTs and OAuth's requests alike — one row
        per request, read from the trace (so the rows are what the learner sees in the player)."""
        pending: dict[str, list[tuple[dict[str, Any], str | None]]] = {}
        out = []
        for e in self.recorder.events:
            http = (e.framing or {}).get("http")
            if not isinstance(http, dict) or not isinstance(http.get("request"), dict):
                continue
            response = http.get("response")
            if not isinstance(response, dict):
                carries = e.method if e.kind in ("request", "notification") else None
                pending.setdefault(e.link, []).append((http["request"], carries))
                continue
            waiting = pending.get(e.link)
            if not waiting:
                continue  # a later event of an exchange already counted (an SSE event, the stream closing)
            # The innermost open request this answers: an exchange made while serving another (the
            # authorization server fetching a client's metadata document) is answered first.
            same = [i for i, (sent, _) in enumerate(waiting) if sent == http["request"]]
            request, carries = waiting.pop(same[-1] if same else 0)
            out.append(Exchange(str(request.get("method", "POST")), _url_of(request), int(response["status"]),
                                _key_headers(request, response), carries))
        return out


class Exchange(NamedTuple):
    """One HTTP exchange: ``method``, ``url`` (without its query), ``status``, the key headers and —
    for an MCP POST — the MCP method it carried (``None`` for OAuth's own requests).

    Key headers: ``WWW-Authenticate``; ``Location`` without its query; a form or JSON body's
    ``Content-Type`` on OAuth's POSTs; and ``Authorization`` when one was sent — shown as ``Bearer …``,
    because a token is a secret and the trace never keeps it."""

    method: str
    url: str
    status: int
    headers: dict[str, str]
    carries: str | None = None


def _url_of(request: dict[str, Any]) -> str:
    path = str(request.get("path") or "/mcp").partition("?")[0]
    origin = request.get("origin") or "https://notes.example"
    return f"{origin}{path}"


def _key_headers(request: dict[str, Any], response: dict[str, Any]) -> dict[str, str]:
    sent = {k.lower(): str(v) for k, v in (request.get("headers") or {}).items()}
    got = {k.lower(): str(v) for k, v in (response.get("headers") or {}).items()}
    out: dict[str, str] = {}
    if "authorization" in sent:
        out["Authorization"] = "Bearer …"
    if request.get("method") == "POST" and "content-type" in sent and "origin" in request:
        out["Content-Type"] = sent["content-type"]
    if "www-authenticate" in got:
        out["WWW-Authenticate"] = got["www-authenticate"]
    if "location" in got:
        out["Location"] = got["location"].partition("?")[0]
    return out


Story = Callable[[Deployment, AuthRun], Awaitable[None]]


async def first_call(world: Deployment, run: AuthRun) -> None:
    """No token yet: ``401`` → PRM → AS metadata → register → authorize (browser) → token → retry."""
    run.results.append(await world.authorized_call("read_notes"))


async def metadata_document(world: Deployment, run: AuthRun) -> None:
    """The authorization server supports Client ID Metadata Documents (and says so in its metadata);
    the Host publishes one at :data:`HOST_METADATA`. The Host's ``client_id`` is that URL: no
    registration request, and the authorization server fetches the document to learn the Host's name
    and redirect URIs."""
    document = {"client_id": HOST_METADATA, "client_name": "notes-host", "redirect_uris": [REDIRECT],
                "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
                "token_endpoint_auth_method": "none"}
    world.web.add("https://notes-host.example", DocumentSite("notes-host.example",
                                                             {urlsplit(HOST_METADATA).path: document}))
    world.auth_server.client_documents = lambda url: world.web.fetch_json_now(world.auth_server.participant, url)
    world.oauth = world.oauth_client(metadata_document=HOST_METADATA)
    run.notes["document"] = document
    run.results.append(await world.authorized_call("read_notes"))


async def iss_mismatch(world: Deployment, run: AuthRun) -> None:
    """Something between the authorization server and the Host's loopback listener (here: a site that
    rewrites the redirect) makes the response name another issuer. The 2026-07-28 client compares
    ``iss`` with the issuer it recorded and sends the code nowhere; the 2025-11-25 client follows its
    revision, which has no ``iss`` rule, and redeems the code."""
    world.web.add(ISSUER, OtherIssuer(world.auth_server, "https://login.example.evil"))
    await _expect_failure(world, run, "read_notes")
    run.notes["token_requests"] = sum(1 for request, _ in world.web.exchanges if request.path == "/token")


async def wrong_audience(world: Deployment, run: AuthRun) -> None:
    """The Client holds a genuine token from the same authorization server, issued for another
    server (say, it mixed up two connections). The notes server checks the audience: ``401``."""
    elsewhere = world.table.issue(ADA, client_id="notes-host", audience="https://other.example/mcp",
                                  scopes=("notes:read",))
    world.oauth.tokens = TokenSet(elsewhere.value, elsewhere.expires_at_ms, elsewhere.scopes)
    run.results.append(await world.authorized_call("read_notes"))
    run.notes["rejections"] = list(world.rejections)


async def pkce_refused(world: Deployment, run: AuthRun) -> None:
    """A careless client sends the browser to ``/authorize`` twice — without a code challenge, then
    with ``code_challenge_method=plain`` — and is sent back with an error each time. Then the
    simulator's own client, which always uses ``S256``, gets through."""
    known = world.auth_server.preregister("careless-host", [REDIRECT])
    verifier = world.sim.token(16) + world.sim.token(16)
    base = {"response_type": "code", "client_id": known.client_id, "redirect_uri": REDIRECT,
            "resource": RESOURCE, "scope": "notes:read", "state": world.sim.token(8)}
    refused = []
    for extra in ({}, {"code_challenge": verifier, "code_challenge_method": "plain"}):
        answer = await world.web.fetch("browser", "GET", f"{ISSUER}/authorize?{urlencode({**base, **extra})}")
        refused.append(dict(_query(answer.headers.get("Location") or "")))
    run.notes["refused"] = refused
    run.notes["s256"] = {"verifier": verifier, "challenge": s256(verifier)}
    run.results.append(await world.authorized_call("read_notes"))


async def no_s256(world: Deployment, run: AuthRun) -> None:
    """An authorization server whose metadata lacks ``code_challenge_methods_supported``: the client
    cannot know PKCE is enforced, so it stops before registering."""
    world.web.add(ISSUER, WithoutS256(world.auth_server))
    await _expect_failure(world, run, "read_notes")


async def bad_redirect(world: Deployment, run: AuthRun) -> None:
    """The Host's client was registered (ahead of time) with another redirect URI. The authorization
    server matches redirect URIs exactly and shows an error page: it never redirects to an address
    it cannot vouch for."""
    known = world.auth_server.preregister("notes-host", ["http://127.0.0.1:1/elsewhere"])
    world.oauth = world.oauth_client(preregistered={ISSUER: known.client_id})
    await _expect_failure(world, run, "read_notes")


async def expired_refresh(world: Deployment, run: AuthRun) -> None:
    """Tokens live one second here. The second call, two seconds later, meets ``401 invalid_token``;
    the client uses its refresh token (no user, no browser) and calls again."""
    run.results.append(await world.authorized_call("read_notes"))
    first = world.oauth.tokens
    await anyio.sleep(2.0)
    run.results.append(await world.authorized_call("read_notes"))
    assert first is not None and world.oauth.tokens is not None
    run.notes["refresh_rotated"] = first.refresh_token != world.oauth.tokens.refresh_token
    run.notes["rejections"] = list(world.rejections)


async def step_up(world: Deployment, run: AuthRun) -> None:
    """The first token carries ``notes:read`` only (what the ``401`` asked for). ``write_note`` needs
    ``notes:write``: ``403 insufficient_scope`` names the scopes, the client authorizes again."""
    run.results.append(await world.authorized_call("read_notes"))
    run.notes["scopes_before"] = sorted(world.oauth.tokens.scopes) if world.oauth.tokens else []
    run.results.append(await world.authorized_call("write_note"))
    run.notes["scopes_after"] = sorted(world.oauth.tokens.scopes) if world.oauth.tokens else []


async def user_refuses(world: Deployment, run: AuthRun) -> None:
    """Ada does not authorise ``notes-host``: the browser comes back with ``error=access_denied``."""
    await _expect_failure(world, run, "read_notes")


async def token_passthrough(world: Deployment, run: AuthRun) -> None:
    """The notes server forwards the token it received (audience: the notes server) to the calendar
    API. The API checks the audience and refuses; the tool call fails."""
    world.passthrough = True
    run.results.append(await world.authorized_call("read_notes"))
    run.results.append(await _tool_text(world, "agenda"))
    run.notes["calendar_accepted"] = list(world.calendar.seen)


async def own_upstream_token(world: Deployment, run: AuthRun) -> None:
    """The notes server is an OAuth client of the calendar API in its own right. On the API's
    ``401`` it runs the same flow as the Host did — its own registration, Ada's consent for *it*, a
    token whose audience is the calendar API — and the call works. The Host's token never leaves the
    notes server."""
    run.results.append(await world.authorized_call("read_notes"))
    run.results.append(await _tool_text(world, "agenda"))
    run.notes["calendar_accepted"] = list(world.calendar.seen)
    run.notes["upstream_steps"] = list(world.upstream.steps)


async def _tool_text(world: Deployment, name: str) -> str:
    """A call on the established connection; a tool error becomes its text (``isError: true``)."""
    assert world.client is not None
    result = await world.client.call_tool(name, {})
    text = str(result["content"][0]["text"])
    return f"error: {text}" if result.get("isError") else text


async def _expect_failure(world: Deployment, run: AuthRun, name: str) -> None:
    try:
        run.results.append(await world.authorized_call(name))
    except OAuthFailed as failed:
        run.failure = failed


def _query(location: str) -> list[tuple[str, str]]:
    return sorted(read_form(urlsplit(location).query).items())


@dataclass(frozen=True)
class AuthStory:
    """A story: what it shows, the function that plays it, and how the deployment is set up."""

    description: str
    play: Story
    options: dict[str, Any] = field(default_factory=dict)


STORIES: Final[dict[str, AuthStory]] = {
    "first-call": AuthStory("the whole flow, from the first 401 to a working tools/call", first_call),
    "metadata-document": AuthStory("a Client ID Metadata Document: the client_id is an https URL, nothing is "
                                   "registered", metadata_document),
    "iss-mismatch": AuthStory("the redirect names another issuer: 2026-07-28 refuses it, 2025-11-25 has no rule",
                              iss_mismatch),
    "wrong-audience": AuthStory("a token issued for another server is refused (401 invalid_token)", wrong_audience),
    "pkce-refused": AuthStory("no PKCE, then plain PKCE: the authorization server refuses both", pkce_refused),
    "no-s256": AuthStory("the client refuses an authorization server that does not promise S256", no_s256),
    "bad-redirect": AuthStory("an unregistered redirect URI: an error page, never a redirect", bad_redirect),
    "expired-refresh": AuthStory("an expired token is refreshed without the user", expired_refresh,
                                 {"access_ttl_ms": 1000.0}),
    "step-up": AuthStory("403 insufficient_scope: authorize again with the wider scope", step_up),
    "user-refuses": AuthStory("the user says no: access_denied, no token", user_refuses,
                              {"refuses": frozenset({"notes-host"})}),
    "token-passthrough": AuthStory("the server forwards the client's token upstream and is refused",
                                   token_passthrough),
    "own-upstream-token": AuthStory("the server gets its own token for the upstream API", own_upstream_token),
}
"""Every story, in the order the chapter tells them."""


def run_authorization_story(story: str, revision: str = LATEST, seed: int = 0) -> AuthRun:
    """Run one story in a fresh simulation (``revision``: 2025-11-25 or 2026-07-28)."""
    try:
        chosen = STORIES[story]
    except KeyError:
        raise KeyError(f"no story {story!r}; the stories are: {', '.join(STORIES)}") from None
    if revision not in ERAS:
        raise ValueError(f"the authorization stories run in {ERAS}, not {revision!r}")
    sim = Simulation(seed)
    box: list[AuthRun] = []

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            world = build(sim, tg, revision, **chosen.options)
            run = AuthRun(story, revision, sim.recorder, world)
            box.append(run)
            try:
                await chosen.play(world, run)
            finally:
                if world.client is not None:
                    await world.client.close()
                tg.cancel_scope.cancel()

    sim.run(main)
    return box[0]


def story_trace(story: str, revision: str = LATEST, seed: int = 0) -> Recorder:
    """The recorder of one story's run: what the trace player re-runs when a learner forks it."""
    return run_authorization_story(story, revision, seed).recorder


def confused_deputy(config: str = "vulnerable", seed: int = 0, variant: str = "main") -> LabResult:
    """The confused-deputy security lab (an MCP proxy with one static client id at a third-party
    authorization server), run through the lab table by its name."""
    from mcp_sim.scenarios.security import run_lab

    return run_lab("confused-deputy", config, seed, variant)  # type: ignore[arg-type]


__all__ = ["ERAS", "HOST_METADATA", "ISSUER", "PRM_URL", "REDIRECT", "RESOURCE", "STORIES", "UPSTREAM", "AuthRun", "AuthStory",
           "Deployment", "Exchange", "build", "confused_deputy", "run_authorization_story", "story_trace"]
