"""Labs about who receives an authorization code: OAuth flows run on the simulated authorization server.

* ``confused-deputy`` — an MCP proxy with one static client id at a third-party authorization server
  forwards any client's request, and the user's remembered consent there sends the code to the
  attacker;
* ``redirect-uri-manipulation`` — an authorization server that compares redirect URIs loosely sends a
  code for a real client to an address the attacker picked.

(``as-mix-up`` lives in :mod:`mcp_sim.scenarios.security.mixup_lab` and reuses this module's helpers.)

What these labs share — the user's :class:`Browser`, a :class:`LoggingSite` and the MCP Server whose
data the attacker is after — lives in :mod:`mcp_sim.scenarios.security.oauth_world` (and is
re-exported here). Every OAuth step is a real exchange on the simulated web, recorded in the trace with
tokens redacted; the third party and the authorization servers are
:class:`~mcp_sim.security.oauth.OAuthAuthorizationServer`, the third party with browser sessions and
its own consent per client (:class:`~mcp_sim.security.oauth_front.FrontChannel`), so whose code it
issues follows from which browser arrives, signed in as whom.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urlencode, urlsplit

from mcp_sim.scenarios.security.oauth_world import (
    Browser,
    LoggingSite,
    files_seen,
    origin,
    private_files,
    redeem,
)
from mcp_sim.security.identity import User, pick_distinct, pick_name
from mcp_sim.security.lab import Lab, LabContext, LabFacts, Outcome
from mcp_sim.security.oauth import (
    FORM,
    OAuthAuthorizationServer,
    RedirectMatch,
    RegisteredClient,
    ScriptedUser,
    form_body,
    json_response,
    loopback_any_port_match,
    protected_resource_metadata,
    read_form,
    s256,
)
from mcp_sim.security.oauth_client import OAuthClient, OAuthFailed
from mcp_sim.security.oauth_front import (
    FrontChannel,
    document_on_own_host,
    native_only_registration,
    redirect_host,
)
from mcp_sim.security.oauth_web import DocumentSite, SimulatedWeb
from mcp_sim.security.tokens import AuthorizationServer
from mcp_sim.transports.http import Headers, HttpRequest, HttpResponse

__all__ = ["LABS", "Browser", "LoggingSite", "McpProxy", "ProxyRules", "RedirectMatching", "files_seen", "origin",
           "origin_prefix_match", "private_files", "redeem"]



# --------------------------------------------------------------------------------------------------

def origin_prefix_match(asked: str, registered: Any) -> bool:
    """The mistake: any ``redirect_uri`` that *begins with* a registered URI's origin is accepted —
    meant to allow "any page of the client's site", it also accepts ``https://app.example@evil.example/``,
    ``https://app.example.evil.example/`` and pages on the client's host that someone else writes."""
    return any(asked.startswith(origin(uri)) for uri in registered)


@dataclass(frozen=True)
class RedirectMatching:
    """How the authorization server compares a request's ``redirect_uri`` with the registered ones."""

    match: RedirectMatch


REDIRECT = LabFacts(
    layer="authorization",
    summary="An authorization server that matches redirect URIs loosely sends a code to the attacker.",
    title="Redirect URI manipulation",
    attacker="someone who knows a public client's client_id and gets the user to open a link",
    controls=("an authorization link for the real client: its redirect_uri, PKCE challenge and state, and a web "
              "server (or a user page on the client's own host) where the browser lands"),
    goal="an authorization code for the user's account, and the user's private files with the token it buys",
    mistake=("the authorization server accepted any redirect_uri beginning with the registered origin, so a URL "
             "that passes that comparison but leads elsewhere received the code; the attacker had chosen the "
             "PKCE challenge, so PKCE did not help"),
    boundary="exact redirect URI matching at the authorization server",
    fix=("the authorization server compares the redirect_uri with the registered ones character for character "
         "(only the port of a loopback IP literal is free, as RFC 8252 requires for native apps) and, on a "
         "mismatch, shows an error instead of redirecting anywhere"),
    rule=("an authorization server compares redirect URIs exactly with the registered ones; PKCE does not help "
          "when the attacker started the flow."),
    rules=("auth.exact-redirect-match", "auth.sim-loopback-any-port"),
    not_covered=("an open redirect or a page the attacker controls at the exact registered URI itself, a "
                 "program on the user's own machine listening on another loopback port (the port is free by "
                 "design: see the localhost-redirect-impersonation lab and auth.cimd-warn-localhost), and a "
                 "user who signs in at a phishing copy of the authorization server"),
    roles=("The authorization server is OAuthAuthorizationServer (its redirect_match is the defence), the "
           "client's own flow is OAuthClient, the user's browser follows the redirects on the simulated web, "
           "and the files are a real Server called by a real Client."),
)


async def redirect_story(ctx: LabContext, defence: RedirectMatching) -> Outcome:
    sim, rng = ctx.sim, ctx.rng
    web = SimulatedWeb(sim)
    victim = User(pick_name(rng, "user"), pick_name(rng, "tenant"))
    page_owner = pick_name(rng, "user").split(".")[0]
    app_host, evil_host = (f"{name}.example" for name in pick_distinct(rng, "server", 2))
    issuer, resource = "https://login.example", "https://files.example/mcp"
    table = AuthorizationServer(issuer, lambda: sim.token(16), sim.now_ms)
    login = OAuthAuthorizationServer(issuer, table, ScriptedUser(victim), resources=(resource,),
                                     scopes_supported=("files:read",), redirect_match=defence.match)
    app = login.preregister("Files app", [f"https://{app_host}/callback"])
    app_site, evil_site = LoggingSite(f"web/{app_host}"), LoggingSite(f"web/{evil_host}")
    prm_url = "https://files.example/.well-known/oauth-protected-resource/mcp"
    prm = DocumentSite("server/files", {"/.well-known/oauth-protected-resource/mcp":
                                        protected_resource_metadata(resource, [issuer], ["files:read"])})
    sites: dict[str, Any] = {issuer: login, f"https://{app_host}": app_site, f"https://{evil_host}": evil_site,
                             f"https://{app_host}.{evil_host}": evil_site, "https://files.example": prm}
    for where, site in sites.items():
        web.add(where, site)
    server, files = private_files(ctx, victim)

    # The legitimate work: the Files app signs the user in with its registered redirect URI.
    oauth = OAuthClient(web, f"client/{app_host}", resource, "Files app", f"https://{app_host}/callback",
                        lambda: sim.token(16), sim.now_ms, preregistered={issuer: app.client_id})
    token = await oauth.authorize({"resource_metadata": prm_url}, "files:read")
    mine = await files_seen(ctx, "files-app", server, table, token, resource, "Files app")
    # ... and a native app, registered as http://127.0.0.1/callback, listens on whatever port the operating
    # system gave it this time (RFC 8252 section 7.3: the port of a loopback literal is free).
    native = login.preregister("Files desktop", ["http://127.0.0.1/callback"])
    port = rng.randint(49152, 65535)
    desktop = OAuthClient(web, "client/desktop", resource, "Files desktop", f"http://127.0.0.1:{port}/callback",
                          lambda: sim.token(16), sim.now_ms, preregistered={issuer: native.client_id})
    try:
        desktop_token: str | None = await desktop.authorize({"resource_metadata": prm_url}, "files:read")
    except OAuthFailed:  # a comparison that ignores RFC 8252 refuses the native app: the legitimate work fails
        desktop_token = None
    mine_native = await files_seen(ctx, "files-desktop", server, table, desktop_token, resource, "Files desktop")

    # The attack: an authorization link for the Files app, with a redirect URI of the attacker's choice
    # and the attacker's own PKCE challenge.
    landing, read_at = {"main": (f"https://{app_host}@{evil_host}/callback", evil_site),
                        "lookalike-host": (f"https://{app_host}.{evil_host}/callback", evil_site),
                        "same-host-page": (f"https://{app_host}/u/{page_owner}/", app_site)}[ctx.variant]
    verifier = sim.token(32)
    query = {"response_type": "code", "client_id": app.client_id, "redirect_uri": landing,
             "code_challenge": s256(verifier), "code_challenge_method": "S256", "resource": resource,
             "scope": "files:read", "state": sim.token(8)}
    link = f"{issuer}/authorize?{urlencode(query)}"
    got: list[str] = []
    with ctx.attack():
        ctx.note("attacker", "user", f"sends a link: {link}", attack=True)
        refused = await Browser(web, "browser (victim)").open(link)
        codes = read_at.codes(urlsplit(landing).path or "/")
        for code in codes:
            stolen = await redeem(web, "attacker", f"{issuer}/token", {
                "grant_type": "authorization_code", "code": code, "redirect_uri": landing,
                "client_id": app.client_id, "code_verifier": verifier, "resource": resource})
            got += await files_seen(ctx, "files-attacker", server, table, stolen, resource, "attacker")
    return Outcome(
        succeeded=bool(got),
        evidence={"redirect_uri": landing, "registered": list(app.redirect_uris), "codes_captured": len(codes),
                  "files_obtained": got, "variant": ctx.variant},
        legitimate=set(mine) == set(files) == set(mine_native),
        obtained=f"received a code at {landing}, redeemed it with its own PKCE verifier and listed {len(got)} "
                 f"of {victim.subject}'s files",
        stopped_by=f"the authorization server answered {refused.status}: {refused.body}",
    )



# --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ProxyRules:
    """What an MCP proxy checks before it forwards a client's authorization request to the third-party
    authorization server: ``consent_key(client, redirect_uri)`` — what the user's consent is recorded
    for (``None``: no consent asked); ``redirect_match`` — the redirect comparison; ``bind_state`` —
    whether the callback must arrive in the browser session that started the request."""

    consent_key: Callable[[RegisteredClient, str], tuple[str, ...] | None]
    redirect_match: RedirectMatch
    bind_state: bool


def no_proxy_consent(client: RegisteredClient, redirect_uri: str) -> tuple[str, ...] | None:
    """The mistake: the third party's consent (given to the proxy's one client id) is taken as enough."""
    return None


def consent_per_client_and_redirect(client: RegisteredClient, redirect_uri: str) -> tuple[str, ...] | None:
    """The fix: the user approves each client *and* where it redirects, once per browser session."""
    return (client.client_id, redirect_uri)


def any_redirect(asked: str, registered: Any) -> bool:
    """The mistake: the proxy leaves redirect checks to the third party (which only sees the proxy's)."""
    return True


@dataclass
class _Pending:
    """An authorization request the proxy forwarded upstream and waits to hear back about."""

    session: str
    client: RegisteredClient
    redirect_uri: str
    state: str | None
    challenge: str
    verifier: str


@dataclass
class McpProxy:
    """An MCP proxy server in front of a third-party API. To its own MCP clients it is an authorization
    server (dynamic registration, ``/authorize``, ``/token``); to the third party it is ONE client with a
    static ``client_id`` and the callback ``{issuer}/callback``. ``identify`` tells whose account an
    upstream token is for (the third party's "who am I" call)."""

    issuer: str
    rules: ProxyRules
    web: SimulatedWeb
    upstream: str
    static_client: str
    upstream_resource: str
    identify: Callable[[str], User]
    tokens: AuthorizationServer
    resource: str
    clients: dict[str, RegisteredClient] = field(default_factory=dict)
    consents: set[tuple[str, ...]] = field(default_factory=set)
    """(browser session, *consent key) the users approved on the proxy's consent screen."""
    tickets: dict[str, tuple[str, dict[str, str]]] = field(default_factory=dict)
    pending: dict[str, _Pending] = field(default_factory=dict)
    codes: dict[str, tuple[_Pending, User]] = field(default_factory=dict)

    @property
    def participant(self) -> str:
        return f"MCP proxy ({urlsplit(self.issuer).netloc})"

    def _draw(self) -> str:
        return self.tokens.rng_token()

    def serve(self, request: HttpRequest) -> HttpResponse:
        path, _, query = request.path.partition("?")
        cookie = (request.headers.get("Cookie") or "").partition("__Host-session=")[2]
        session = cookie or self._draw()[:16]
        if request.method == "POST" and path == "/register":
            asked = json.loads(request.body or "{}")
            client = RegisteredClient(f"client_{self._draw()[:12]}", str(asked.get("client_name", "")),
                                      tuple(asked.get("redirect_uris") or ()), how="dynamic")
            self.clients[client.client_id] = client
            return json_response(201, {"client_id": client.client_id, "redirect_uris": list(client.redirect_uris)})
        if request.method == "POST" and path == "/token":
            return self._token(read_form(request.body))
        if request.method == "GET" and path == "/authorize":
            response = self._authorize(read_form(query), session)
        elif request.method == "POST" and path == "/consent":
            response = self._consent(read_form(request.body), session)
        elif request.method == "GET" and path == "/callback":
            response = self._callback(read_form(query), session)
        else:
            return HttpResponse(404)
        if not cookie:
            response.headers["Set-Cookie"] = f"__Host-session={session}; Secure; HttpOnly; SameSite=Lax; Path=/"
        return response

    def _authorize(self, q: dict[str, str], session: str) -> HttpResponse:
        client = self.clients.get(q.get("client_id", ""))
        if client is None:
            return error_page("unknown client_id")
        redirect_uri = q.get("redirect_uri", "")
        if not self.rules.redirect_match(redirect_uri, client.redirect_uris):
            return error_page(f"redirect_uri {redirect_uri!r} is not registered for {client.client_name!r}")
        key = self.rules.consent_key(client, redirect_uri)
        if key is not None and (session, *key) not in self.consents:
            ticket = self._draw()
            self.tickets[ticket] = (session, q)
            return json_response(200, {"consent": {"client_name": client.client_name, "client_id": client.client_id,
                                                   "redirect_uri": redirect_uri, "form": "/consent",
                                                   "ticket": ticket}})
        return self._forward(q, client, session)

    def _consent(self, f: dict[str, str], session: str) -> HttpResponse:
        owner, q = self.tickets.pop(f.get("ticket", ""), ("", {}))
        client = self.clients.get(q.get("client_id", ""))
        if owner != session or client is None:
            return error_page("this consent form was not shown to this browser")
        if f.get("approve") != "yes":
            return redirect_to(q["redirect_uri"], error="access_denied", state=q.get("state"))
        key = self.rules.consent_key(client, q["redirect_uri"]) or ()
        self.consents.add((session, *key))
        return self._forward(q, client, session)

    def _forward(self, q: dict[str, str], client: RegisteredClient, session: str) -> HttpResponse:
        """Remember the client's request under a new ``state`` and send the browser to the third party."""
        state, verifier = self._draw()[:16], self._draw() + self._draw()
        self.pending[state] = _Pending(session, client, q.get("redirect_uri", ""), q.get("state"),
                                       q.get("code_challenge", ""), verifier)
        upstream = {"response_type": "code", "client_id": self.static_client, "redirect_uri": f"{self.issuer}/callback",
                    "code_challenge": s256(verifier), "code_challenge_method": "S256",
                    "resource": self.upstream_resource, "scope": "repo:read", "state": state}
        return HttpResponse(302, Headers({"Location": f"{self.upstream}/authorize?{urlencode(upstream)}"}))

    def _callback(self, q: dict[str, str], session: str) -> HttpResponse:
        pending = self.pending.pop(q.get("state", ""), None)
        if pending is None:
            return error_page("unknown or used state")
        if self.rules.bind_state and pending.session != session:
            return error_page("this state was issued to another browser session")
        if "code" not in q:
            return redirect_to(pending.redirect_uri, error=q.get("error", "access_denied"), state=pending.state)
        answer = self.web.send_now(self.participant, "POST", f"{self.upstream}/token", headers={"Content-Type": FORM},
                                   body=form_body({"grant_type": "authorization_code", "code": q["code"],
                                                   "redirect_uri": f"{self.issuer}/callback",
                                                   "client_id": self.static_client, "code_verifier": pending.verifier,
                                                   "resource": self.upstream_resource}))
        if answer.status != 200:
            return error_page("the third party refused the code")
        code = f"code_{self._draw()}"
        self.codes[code] = (pending, self.identify(str(answer.json()["access_token"])))
        return redirect_to(pending.redirect_uri, code=code, state=pending.state, iss=self.issuer)

    def _token(self, f: dict[str, str]) -> HttpResponse:
        pending, user = self.codes.pop(f.get("code", ""), (None, None))
        if pending is None or user is None or f.get("client_id") != pending.client.client_id \
                or f.get("redirect_uri") != pending.redirect_uri or s256(f.get("code_verifier", "")) != pending.challenge:
            return json_response(400, {"error": "invalid_grant"})
        token = self.tokens.issue(user, client_id=pending.client.client_id, audience=self.resource, scopes=("repo:read",))
        return json_response(200, {"access_token": token.value, "token_type": "Bearer", "expires_in": 3600})


def error_page(text: str) -> HttpResponse:
    """What a browser shows instead of redirecting: never send a code, or anything, to an unchecked address."""
    return json_response(400, {"error": "invalid_request", "error_description": text})


def redirect_to(uri: str, **fields: str | None) -> HttpResponse:
    query = urlencode({k: v for k, v in fields.items() if v is not None})
    return HttpResponse(302, Headers({"Location": f"{uri}?{query}"}))


DEPUTY = LabFacts(
    layer="authorization",
    summary="An MCP proxy with one static client id lets an attacker ride the user's consent upstream.",
    title="Confused deputy (MCP proxy without per-client consent)",
    attacker="an attacker who registered their own client at an MCP proxy server",
    controls=("their client's registration (its name and redirect URI), the authorization links they get the user "
              "to open, their own browser and their own account at the third party, and a client of their own "
              "there"),
    goal="a proxy token for the user's account at the third party, and the user's private repositories through it",
    mistake=("the proxy is one client (one static client id) at the third-party authorization server, where the "
             "user had consented once; it forwarded any client's request without asking the user, so the third "
             "party's remembered consent let the flow through the user's signed-in browser and the proxy sent "
             "the code to the attacker's redirect URI"),
    boundary="the MCP proxy's own per-client consent, exact redirect URI matching and session-bound state",
    fix=("the proxy shows its own consent screen, naming the client and where it redirects, for each client and "
         "redirect URI the user has not approved in this browser, compares redirect URIs exactly (the loopback "
         "port free), and accepts the third party's callback only in the browser session whose request it "
         "forwarded"),
    rule=("an MCP proxy with one static client id upstream asks the user's consent per client, matches "
          "redirect URIs exactly and sets its state only after consent."),
    rules=("auth.proxy-consent-per-client", "security.bp.proxy-redirect-exact",
           "security.bp.proxy-state-after-consent"),
    not_covered=("a user who approves the attacker's client on the proxy's consent screen (the screen shows the "
                 "client's name, which the attacker chooses, and the redirect host, which it cannot fake), a "
                 "program on the user's machine listening on the approved client's loopback redirect, and flaws "
                 "of the third-party authorization server itself. The third party is modelled with browser "
                 "sessions and its own consent per client (a simulator choice, auth.sim-registration-policy): "
                 "a third party that issues codes for its user to any browser, or consents silently to any "
                 "client, is outside what the proxy can fix"),
    roles=("The third party is OAuthAuthorizationServer with browser sessions and consent pages (FrontChannel); "
           "the proxy is written in the lab as a sans-IO site on the simulated web (its upstream code exchange "
           "is a recorded HTTP exchange); each person has their own browser, signed in as themselves; the "
           "repositories are a real Server called by a real Client with the proxy's token."),
)


async def deputy_story(ctx: LabContext, defence: ProxyRules) -> Outcome:
    sim, rng = ctx.sim, ctx.rng
    web = SimulatedWeb(sim)
    victim, mallory = (User(name, pick_name(rng, "tenant")) for name in pick_distinct(rng, "user", 2))
    upstream, api, proxy_url = "https://code-host.example", "https://api.code-host.example", "https://proxy.example"
    third_table = AuthorizationServer(upstream, lambda: sim.token(16), sim.now_ms)
    front = FrontChannel({victim.subject: (sim.token(8), victim), mallory.subject: (sim.token(8), mallory)},
                         lambda: sim.token(16))
    third = OAuthAuthorizationServer(upstream, third_table, ScriptedUser(victim), resources=(api,), front=front,
                                     registration=native_only_registration, document_policy=document_on_own_host,
                                     client_documents=lambda url: web.fetch_json_now(third.participant, url))
    static = third.preregister("MCP proxy", [f"{proxy_url}/callback"])
    front.approved.add((victim.subject, static.client_id, f"{proxy_url}/callback"))  # the user consented once

    def identify(token: str) -> User:
        issued = third_table.introspect(token)
        assert issued is not None
        return User(issued.subject, issued.tenant or "")

    proxy = McpProxy(proxy_url, defence, web, upstream, static.client_id, api, identify,
                     AuthorizationServer(proxy_url, lambda: sim.token(16), sim.now_ms), f"{proxy_url}/mcp")
    ide_redirect = f"http://127.0.0.1:{rng.randint(30000, 40000)}/callback"
    evil_host = f"{pick_name(rng, 'server')}.example"
    ide_site, evil_site = LoggingSite("victim's IDE (loopback)"), LoggingSite(f"web/{evil_host}")
    sites: dict[str, Any] = {upstream: third, proxy_url: proxy, origin(ide_redirect): ide_site,
                             f"https://{evil_host}": evil_site}
    for where, site in sites.items():
        web.add(where, site)
    server, repos = private_files(ctx, victim, "proxy")

    async def register(sender: str, name: str, redirect: str) -> str:
        answer = await web.fetch(sender, "POST", f"{proxy_url}/register", headers={"Content-Type": "application/json"},
                                 body=json.dumps({"client_name": name, "redirect_uris": [redirect]}))
        return str(answer.json()["client_id"])

    def link(client_id: str, redirect: str, verifier: str, at: str = proxy_url, **extra: str) -> str:
        return f"{at}/authorize?" + urlencode({
            "response_type": "code", "client_id": client_id, "redirect_uri": redirect, "code_challenge": s256(verifier),
            "code_challenge_method": "S256", "state": sim.token(8), **extra})

    async def tokens_from(site: LoggingSite, sender: str, client_id: str, redirect: str, verifier: str,
                          token_endpoint: str = f"{proxy_url}/token", **extra: str) -> list[str]:
        found = [await redeem(web, sender, token_endpoint, {
            "grant_type": "authorization_code", "code": code, "redirect_uri": redirect, "client_id": client_id,
            "code_verifier": verifier, **extra}) for code in site.codes(urlsplit(redirect).path)]
        return [token for token in found if token]

    # The user's browser is signed in at the third party; the user approves what they recognise by name
    # and by where it redirects: their IDE (on this computer) and the proxy itself.
    expected = {("Victim's IDE", "127.0.0.1"), ("MCP proxy", "proxy.example")}
    browser = Browser(web, "browser (victim)", lambda page: (page.get("client_name"), redirect_host(
        str(page.get("redirect_uri")))) in expected, {upstream: front.signed_in(victim)})

    # The legitimate work: the user's IDE registers at the proxy and the user signs in through it.
    ide = await register("victim's IDE", "Victim's IDE", ide_redirect)
    ide_verifier = sim.token(32)
    await browser.open(link(ide, ide_redirect, ide_verifier))
    ide_tokens = await tokens_from(ide_site, "victim's IDE", ide, ide_redirect, ide_verifier)
    mine = await files_seen(ctx, "proxy-ide", server, proxy.tokens, ide_tokens[-1] if ide_tokens else None, proxy.resource,
                            "Victim's IDE")

    # The attack: a client of the attacker's, a link for the user to open, and the code at the attacker's site.
    evil_redirect, verifier = f"https://{evil_host}/callback", sim.token(32)
    got: list[str] = []
    with ctx.attack():
        name = "Victim's IDE" if ctx.variant == "lookalike-name" else "Repo Stats"
        client = await register("attacker", name, evil_redirect)
        client = ide if ctx.variant == "approved-client-other-redirect" else client
        bait = link(client, evil_redirect, verifier)
        if ctx.variant == "consented-by-attacker":  # the attacker goes through the proxy's screen themselves
            own = await Browser(web, "browser (attacker)", lambda page: True).open(bait, stop_at=upstream)
            bait = own.headers.get("Location") or bait
        if ctx.variant == "own-browser-all-the-way":  # ... and on to the third party, signed in as itself
            # (signed in at the third party as itself: no browser holds another person's session)
            await Browser(web, "browser (attacker)", lambda page: True, {upstream: front.signed_in(mallory)}).open(bait)
            bait = link(client, evil_redirect, verifier)  # then, with nothing of the victim's, the user's turn
        direct_verifier = sim.token(32)
        if ctx.variant == "direct-to-third-party":  # a client of its own at the third party, tried first
            evil_site.documents["/oauth/client.json"] = {
                "client_id": f"https://{evil_host}/oauth/client.json", "client_name": "Repo Stats",
                "redirect_uris": [f"https://{evil_host}/upstream"], "token_endpoint_auth_method": "none"}
            evil_site.next_hops.append(bait)  # a refusal lands here, and the browser goes on to the proxy link
            bait = link(f"https://{evil_host}/oauth/client.json", f"https://{evil_host}/upstream", direct_verifier,
                        at=upstream, resource=api)
        ctx.note("attacker", "user", f"sends a link: {bait}", attack=True)
        seen = await browser.open(bait)
        stolen = await tokens_from(evil_site, "attacker", client, evil_redirect, verifier)
        for token in stolen:
            got += await files_seen(ctx, "proxy-attacker", server, proxy.tokens, token, proxy.resource, "Repo Stats")
        for token in await tokens_from(evil_site, "attacker", f"https://{evil_host}/oauth/client.json",
                                       f"https://{evil_host}/upstream", direct_verifier, f"{upstream}/token",
                                       resource=api):
            got += await files_seen(ctx, "api-attacker", server, third_table, token, api, "Repo Stats")
    return Outcome(
        succeeded=bool(got),
        evidence={"victim": victim.subject, "attacker_client": client, "redirect": evil_redirect,
                  "tokens_issued": len(stolen), "repos_obtained": got,
                  "third_party_tokens_for": sorted({t.subject for t in third_table.issued.values()}),
                  "proxy_tokens_for": sorted({t.subject for t in proxy.tokens.issued.values()}),
                  "consents": len(proxy.consents), "variant": ctx.variant},
        legitimate=set(mine) == set(repos),
        obtained=f"obtained a token for {victim.subject} without their consent and listed {len(got)} private "
                 "repositories",
        stopped_by="; ".join([f"on a consent screen the user {line}" for line in browser.answers[1:]]
                             + [f"the user's browser ended at {seen.status}: {seen.body}"]),
    )


LABS: Final = (
    Lab("confused-deputy", DEPUTY, deputy_story,
        {"vulnerable": ProxyRules(no_proxy_consent, any_redirect, bind_state=False),
         "fixed": ProxyRules(consent_per_client_and_redirect, loopback_any_port_match, bind_state=True)},
        {"approved-client-other-redirect": "the attacker uses the user's approved client id with its own redirect URI",
         "consented-by-attacker": "the attacker approves its client on the proxy's screen in its own browser and "
                                  "sends the user the third party's link, with the proxy's state for that request",
         "lookalike-name": "the attacker's client is registered under the name of the user's own IDE",
         "own-browser-all-the-way": "the attacker first runs the whole flow in its own browser, through the proxy "
                                    "and the third party (signed in as itself), then sends the user the link",
         "direct-to-third-party": "the attacker first sends the user to the third party with a client of its own "
                                  "there (a metadata document on its host); refused, the browser goes on to the "
                                  "proxy link"}),
    Lab("redirect-uri-manipulation", REDIRECT, redirect_story,
        {"vulnerable": RedirectMatching(origin_prefix_match), "fixed": RedirectMatching(loopback_any_port_match)},
        {"lookalike-host": "the redirect URI's host starts with the client's host name and ends in the attacker's",
         "same-host-page": "the redirect URI is a user page on the client's own host that the attacker writes"}),
)
"""The labs of this module (the proxy and mix-up labs come from their own modules)."""
