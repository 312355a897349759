"""The mix-up lab: a client of several authorization servers redeems an honest server's code at the
attacker's.

* ``as-mix-up`` — the user's client knows two authorization servers: the honest one behind the user's
  files, and the attacker's (named by another MCP Server the user added). The attacker's server answers
  the client's authorization request by sending the browser on to the honest server with the client's
  own parameters; the user consents there as usual, and the code comes back to the client — which
  believes it is the attacker's server's answer and posts it, with the PKCE verifier, to the attacker's
  token endpoint. The fix (RFC 9207): the response's ``iss`` must be exactly the server the request went
  to, and each server gets its own redirect URI, so a response from another server is recognised even
  where ``iss`` is missing.

The honest server is :class:`~mcp_sim.security.oauth.OAuthAuthorizationServer`; the attacker's is a
small site written here; the client (:class:`ManyServerClient`) is written here too, because the lesson
is exactly the bookkeeping a client of several servers must do. Every exchange crosses the simulated
web; the user's browser follows the real redirects.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urlencode, urlsplit

from mcp_sim.scenarios.security.authorization_labs import (
    Browser,
    LoggingSite,
    files_seen,
    private_files,
    redeem,
)
from mcp_sim.security.identity import User, pick_name
from mcp_sim.security.lab import Lab, LabContext, LabFacts, Outcome
from mcp_sim.security.oauth import (
    AS_METADATA_PATH,
    OAuthAuthorizationServer,
    ScriptedUser,
    json_response,
    read_form,
    s256,
)
from mcp_sim.security.oauth_web import SimulatedWeb
from mcp_sim.security.tokens import AuthorizationServer
from mcp_sim.transports.http import Headers, HttpRequest, HttpResponse

__all__ = ["LABS", "IssuerCheck", "ManyServerClient", "Request", "check_issuer", "ignore_issuer"]


@dataclass
class Request:
    """What the client remembers about the authorization request in flight: which server it went to."""

    issuer: str
    token_endpoint: str
    sends_iss: bool
    client_id: str
    redirect_uri: str
    state: str
    verifier: str
    resource: str


@dataclass(frozen=True)
class IssuerCheck:
    """How the client ties an authorization response to the server its request went to:
    ``redirect_for(issuer)`` is the redirect URI it registers there; ``accepts(request, arrived_at,
    response)`` returns why it refuses a response (``None``: it accepts)."""

    redirect_for: Callable[[str], str]
    accepts: Callable[[Request, str, dict[str, str]], str | None]


CLIENT_SITE = "https://desk.example"


def one_redirect(issuer: str) -> str:
    """The mistake's half: one redirect URI for every authorization server."""
    return f"{CLIENT_SITE}/callback"


def redirect_per_server(issuer: str) -> str:
    """A redirect URI of its own for each authorization server."""
    return f"{CLIENT_SITE}/callback/{urlsplit(issuer).netloc}"


def ignore_issuer(request: Request, arrived_at: str, response: dict[str, str]) -> str | None:
    """The mistake: a response with the right ``state`` is taken as the answer of the server the
    request went to."""
    return None


def check_issuer(request: Request, arrived_at: str, response: dict[str, str]) -> str | None:
    """The fix: the response must arrive at that server's own redirect URI, and its ``iss`` must be
    exactly that server's issuer — and may be missing only if that server does not send ``iss``."""
    iss = response.get("iss")
    if iss is not None and iss != request.issuer:
        return f"the response's iss is {iss}, but the request went to {request.issuer}"
    if iss is None and request.sends_iss:
        return f"the response has no iss although {request.issuer} sends one"
    if arrived_at != request.redirect_uri:
        return f"the response arrived at {arrived_at}, not at the redirect URI of {request.issuer}"
    return None


@dataclass
class ManyServerClient:
    """A Host's OAuth client that knows several authorization servers. It starts one authorization
    request at a time (``start``), and finishes it when the browser brings the response back to its
    web site (``finish``)."""

    web: SimulatedWeb
    check: IssuerCheck
    draw: Callable[[], str]
    client_ids: dict[str, str] = field(default_factory=dict)
    in_flight: Request | None = None
    refused: list[str] = field(default_factory=list)
    participant: str = "client (desk.example)"

    async def start(self, issuer: str, resource: str) -> str:
        """Read the server's metadata, register there if needed, remember the request; the URL to open."""
        meta = (await self.web.fetch(self.participant, "GET", f"{issuer}{AS_METADATA_PATH}")).json()
        redirect_uri = self.check.redirect_for(issuer)
        if issuer not in self.client_ids:
            answer = await self.web.fetch(self.participant, "POST", str(meta["registration_endpoint"]),
                                          headers={"Content-Type": "application/json"},
                                          body=json.dumps({"client_name": "Desk", "redirect_uris": [redirect_uri]}))
            self.client_ids[issuer] = str(answer.json()["client_id"])
        request = Request(issuer, str(meta["token_endpoint"]),
                          bool(meta.get("authorization_response_iss_parameter_supported")), self.client_ids[issuer],
                          redirect_uri, self.draw()[:16], self.draw() + self.draw(), resource)
        self.in_flight = request
        return f"{meta['authorization_endpoint']}?" + urlencode({
            "response_type": "code", "client_id": request.client_id, "redirect_uri": redirect_uri,
            "code_challenge": s256(request.verifier), "code_challenge_method": "S256", "resource": resource,
            "state": request.state, "scope": "files:read"})

    async def finish(self, arrived: str) -> str | None:
        """The browser arrived at ``arrived`` (a path of the client's site with the response in its
        query): check it against the request in flight and redeem the code; the access token."""
        request, self.in_flight = self.in_flight, None
        path, _, query = arrived.partition("?")
        response = read_form(query)
        if request is None or response.get("state") != request.state or "code" not in response:
            self.refused.append("no matching request (state)")
            return None
        reason = self.check.accepts(request, f"{CLIENT_SITE}{path}", response)
        if reason is not None:
            self.refused.append(reason)
            return None
        return await redeem(self.web, self.participant, request.token_endpoint, {
            "grant_type": "authorization_code", "code": response["code"], "redirect_uri": request.redirect_uri,
            "client_id": request.client_id, "code_verifier": request.verifier, "resource": request.resource})


@dataclass
class MixUpServer:
    """The attacker's authorization server. Its metadata looks ordinary; its ``/authorize`` sends the
    browser on to the honest server with the client's own parameters (the client's id and redirect URI
    *there*, which are public), and its ``/token`` keeps what the client posts."""

    issuer: str
    honest: str
    honest_client: Callable[[], tuple[str, str]]
    """The client's id and redirect URI at the honest server."""
    honest_resource: str
    sends_iss: bool = True
    posted: list[dict[str, str]] = field(default_factory=list)

    @property
    def participant(self) -> str:
        return f"authorization server ({urlsplit(self.issuer).netloc})"

    def serve(self, request: HttpRequest) -> HttpResponse:
        path, _, query = request.path.partition("?")
        if path == AS_METADATA_PATH:
            return json_response(200, {
                "issuer": self.issuer, "authorization_endpoint": f"{self.issuer}/authorize",
                "token_endpoint": f"{self.issuer}/token", "registration_endpoint": f"{self.issuer}/register",
                "code_challenge_methods_supported": ["S256"], "response_types_supported": ["code"],
                "authorization_response_iss_parameter_supported": self.sends_iss})
        if path == "/register":
            return json_response(201, {"client_id": "client_desk"})
        if path == "/authorize":
            asked = read_form(query)
            client_id, redirect_uri = self.honest_client()
            onward = {**asked, "client_id": client_id, "redirect_uri": redirect_uri, "resource": self.honest_resource}
            return HttpResponse(302, Headers({"Location": f"{self.honest}/authorize?{urlencode(onward)}"}))
        if path == "/token":
            self.posted.append(read_form(request.body))
            return json_response(400, {"error": "temporarily_unavailable"})
        return HttpResponse(404)


MIXUP = LabFacts(
    layer="authorization",
    summary="A client of two authorization servers hands the honest one's code to the attacker's.",
    title="Authorization server mix-up",
    attacker="the operator of an authorization server that the user's client also uses (named by a Server the "
             "user added)",
    controls=("its own authorization server: its metadata, where its authorization endpoint redirects, and "
              "everything posted to its token endpoint"),
    goal="an authorization code from the honest authorization server plus the PKCE verifier that redeems it",
    mistake=("the client took any response with the right state as the answer of the server it had asked, "
             "so a code issued by the honest server went, with its PKCE verifier, to the attacker's token "
             "endpoint"),
    boundary="the client's check of which authorization server answered (iss, RFC 9207, and per-server redirect URIs)",
    fix=("the client registers a redirect URI of its own at each authorization server and, before redeeming "
         "a code, requires the response to arrive at the redirect URI of the server its request went to and "
         "its iss to equal that server's issuer exactly (missing only where that server never sends iss)"),
    rule=("a client checks which authorization server answered: the response's iss against the issuer it "
          "recorded, before the code goes to any token endpoint."),
    rules=("auth.iss-validate",),
    not_covered=("an attacker who controls the honest authorization server or the user's browser, and a user "
                 "who signs in at a phishing copy of the honest server"),
    roles=("The honest authorization server is OAuthAuthorizationServer; the attacker's server and the client "
           "of several servers are written in the lab; browsers follow real redirects on the simulated web; the "
           "files are a real Server called by a real Client."),
)


async def mixup_story(ctx: LabContext, defence: IssuerCheck) -> Outcome:
    sim, rng = ctx.sim, ctx.rng
    web = SimulatedWeb(sim)
    victim = User(pick_name(rng, "user"), pick_name(rng, "tenant"))
    honest, resource = "https://login.example", "https://files.example/mcp"
    evil = f"{pick_name(rng, 'server')}.example"
    attacker_issuer = {"lookalike-issuer": f"https://login.example.{evil}"}.get(ctx.variant, f"https://auth.{evil}")
    table = AuthorizationServer(honest, lambda: sim.token(16), sim.now_ms)
    login = OAuthAuthorizationServer(honest, table, ScriptedUser(victim), resources=(resource,),
                                     scopes_supported=("files:read",), sends_iss=ctx.variant != "missing-iss")
    client = ManyServerClient(web, defence, lambda: sim.token(16))
    desk = LoggingSite("web/desk.example")
    mixer = MixUpServer(attacker_issuer, honest, lambda: (client.client_ids[honest], defence.redirect_for(honest)),
                        resource, sends_iss=ctx.variant != "missing-iss")
    sites: dict[str, Any] = {honest: login, attacker_issuer: mixer, CLIENT_SITE: desk}
    for where, site in sites.items():
        web.add(where, site)
    server, files = private_files(ctx, victim)
    browser = Browser(web, "browser (user)")

    # The legitimate work: the user signs in at the honest server for the files Server.
    await browser.open(await client.start(honest, resource))
    token = await client.finish(desk.received[-1])
    mine = await files_seen(ctx, "files-desk", server, table, token, resource, "Desk")

    # The attack: the user connects a second Server, whose authorization server is the attacker's.
    got: list[str] = []
    with ctx.attack():
        await browser.open(await client.start(attacker_issuer, f"https://tools.{evil}/mcp"))
        await client.finish(desk.received[-1])
        for posted in mixer.posted:
            stolen = await redeem(web, "attacker", f"{honest}/token", {
                "grant_type": "authorization_code", "code": posted.get("code", ""),
                "redirect_uri": defence.redirect_for(honest), "client_id": client.client_ids[honest],
                "code_verifier": posted.get("code_verifier", ""), "resource": resource})
            got += await files_seen(ctx, "files-attacker", server, table, stolen, resource, "attacker")
    return Outcome(
        succeeded=bool(got),
        evidence={"attacker_issuer": attacker_issuer, "codes_posted_to_attacker": len(mixer.posted),
                  "files_obtained": got, "refused": client.refused, "variant": ctx.variant},
        legitimate=set(mine) == set(files),
        obtained=(f"received the honest server's code and PKCE verifier at its token endpoint, redeemed them and "
                  f"listed {len(got)} of {victim.subject}'s files"),
        stopped_by="the client refused the response: " + "; ".join(client.refused),
    )


LABS: Final = (
    Lab("as-mix-up", MIXUP, mixup_story,
        {"vulnerable": IssuerCheck(one_redirect, ignore_issuer), "fixed": IssuerCheck(redirect_per_server, check_issuer)},
        {"missing-iss": "the honest server does not send iss (an older server), and says so in its metadata",
         "lookalike-issuer": "the attacker's issuer begins with the honest issuer's text (login.example.<attacker>)"}),
)
"""The labs of this module."""
