"""The mix-up lab: a client of several authorization servers redeems an honest server's code at the
attacker's.

* ``as-mix-up`` — the user's client knows two authorization servers: the honest one behind the user's
  files, and the attacker's (named by another MCP Server the user added). The attacker's server answers
  the client's authorization request by sending the browser on to the honest server with the client's
  own parameters; the user consents there as usual, and the code comes back to the client — which
  believes it is the attacker's server's answer and posts it, with the PKCE verifier, to the attacker's
  token endpoint. The fix (RFC 9207): the response's ``iss`` must be exactly the server the request went
  to, and each *issuer* gets its own redirect URI (two issuers on one host get two), so a response from
  another server is recognised even where ``iss`` is missing.

The honest server is realistic where the lesson depends on it: it keeps a sign-in session per browser,
shows a consent page per client (naming where the code goes), and accepts dynamic registration only for
loopback redirect URIs (a web client is pre-registered or names itself with a metadata document on its
own host). So the attacker can neither register the client's own redirect URI there nor get a client of
its own approved silently; what it obtains follows from that world and from the client's check.

The honest server is :class:`~mcp_sim.security.oauth.OAuthAuthorizationServer`; the attacker's is a
small site written here; the client (:class:`ManyServerClient`) is written here too, because the lesson
is exactly the bookkeeping a client of several servers must do. Every exchange crosses the simulated
web; the user's browser follows the real redirects.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urlencode, urlsplit

from mcp_sim.scenarios.security.oauth_world import Browser, LoggingSite, files_seen, private_files, redeem
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
from mcp_sim.security.oauth_front import FrontChannel, document_on_own_host, native_only_registration
from mcp_sim.security.oauth_web import SimulatedWeb
from mcp_sim.security.tokens import AuthorizationServer
from mcp_sim.transports.http import Headers, HttpRequest, HttpResponse

__all__ = ["LABS", "IssuerCheck", "ManyServerClient", "MixUpServer", "PathRouter", "Request", "check_issuer",
           "ignore_issuer", "one_redirect", "redirect_per_issuer", "redirect_per_server"]


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
    """A redirect URI per *host*: narrower than it looks, since two issuers on one host (tenants of one
    identity platform) share it."""
    return f"{CLIENT_SITE}/callback/{urlsplit(issuer).netloc}"


def redirect_per_issuer(issuer: str) -> str:
    """A redirect URI of its own for each issuer: the path carries a digest of the exact issuer string,
    so ``https://login.example`` and ``https://login.example/tenants/x`` get two."""
    return f"{CLIENT_SITE}/callback/{hashlib.sha256(issuer.encode()).hexdigest()[:16]}"


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
class PathRouter:
    """One host serving several sites under path prefixes — a shared identity platform where each tenant
    is its own issuer (``https://login.example/tenants/<name>``). The longest matching prefix wins, and
    the site sees the path without it."""

    participant: str
    mounts: list[tuple[str, Any]] = field(default_factory=list)

    def serve(self, request: HttpRequest) -> HttpResponse:
        for prefix, site in sorted(self.mounts, key=lambda m: -len(m[0])):
            if request.path == prefix or request.path.startswith(prefix + "/") or request.path.startswith(prefix + "?") \
                    or not prefix:
                inner = HttpRequest(request.method, request.path[len(prefix):] or "/", request.headers, request.body)
                return site.serve(inner)  # type: ignore[no-any-return]
        return HttpResponse(404)


@dataclass
class MixUpServer:
    """The attacker's authorization server. Its metadata looks ordinary; its ``/authorize`` sends the
    browser on to the honest server with the client's own parameters (the client's id and redirect URI
    *there*, which are public), and its ``/token`` keeps what the client posts. Two tricks come first
    when the variant asks for them: a client of its own at the honest server registered with the redirect
    URI the client uses for *this* server (``try_register``), or a client of its own there whose code
    comes straight to the attacker's site (``own_client``: refused, the browser is sent on to the
    ordinary forward)."""

    issuer: str
    honest: str
    honest_client: Callable[[], tuple[str, str]]
    """The client's id and redirect URI at the honest server."""
    honest_resource: str
    web: SimulatedWeb
    sends_iss: bool = True
    own_client: tuple[str, str, LoggingSite] | None = None
    """(client id, redirect URI, the site it lands on) of the attacker's own client at the honest server."""
    own_verifier: str = ""
    try_register: bool = False
    desk_redirects: list[str] = field(default_factory=list)
    """The redirect URIs the client registered here (public: it sent them)."""
    planted: str | None = None
    """A client id the attacker registered at the honest server with the client's redirect URI for here."""
    posted: list[dict[str, str]] = field(default_factory=list)

    @property
    def participant(self) -> str:
        parts = urlsplit(self.issuer)
        return f"authorization server ({parts.netloc}{parts.path})"

    def serve(self, request: HttpRequest) -> HttpResponse:
        path, _, query = request.path.partition("?")
        if path == AS_METADATA_PATH:
            return json_response(200, {
                "issuer": self.issuer, "authorization_endpoint": f"{self.issuer}/authorize",
                "token_endpoint": f"{self.issuer}/token", "registration_endpoint": f"{self.issuer}/register",
                "code_challenge_methods_supported": ["S256"], "response_types_supported": ["code"],
                "authorization_response_iss_parameter_supported": self.sends_iss})
        if path == "/register":
            self.desk_redirects += json.loads(request.body or "{}").get("redirect_uris") or []
            if self.try_register and self.desk_redirects:  # the client's redirect URI for *this* server, there
                answer = self.web.send_now("attacker", "POST", f"{self.honest}/register",
                                           headers={"Content-Type": "application/json"},
                                           body=json.dumps({"client_name": "Desk", "redirect_uris": self.desk_redirects}))
                self.planted = str(answer.json()["client_id"]) if answer.status == 201 else None
            return json_response(201, {"client_id": "client_desk"})
        if path == "/authorize":
            asked = read_form(query)
            client_id, redirect_uri = self.honest_client()
            if self.planted is not None:
                client_id, redirect_uri = self.planted, self.desk_redirects[0]
            onward = {**asked, "client_id": client_id, "redirect_uri": redirect_uri, "resource": self.honest_resource}
            forward = f"{self.honest}/authorize?{urlencode(onward)}"
            if self.own_client is not None:
                own_id, own_redirect, landing = self.own_client
                landing.next_hops.append(forward)
                forward = f"{self.honest}/authorize?" + urlencode({
                    **onward, "client_id": own_id, "redirect_uri": own_redirect,
                    "code_challenge": s256(self.own_verifier)})
            return HttpResponse(302, Headers({"Location": forward}))
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
    controls=("its own authorization server (its issuer may even be a tenant path on the honest server's own "
              "host): its metadata, where its authorization endpoint redirects, everything posted to its token "
              "endpoint, and whatever the honest server lets anyone do — register a client, publish a metadata "
              "document on its own host"),
    goal="an authorization code from the honest authorization server plus the PKCE verifier that redeems it",
    mistake=("the client took any response with the right state as the answer of the server it had asked, "
             "so a code issued by the honest server went, with its PKCE verifier, to the attacker's token "
             "endpoint"),
    boundary=("the client's check of which authorization server answered (iss, RFC 9207, and a redirect URI "
              "per issuer)"),
    fix=("the client registers a redirect URI of its own for each issuer (the exact issuer string, so two "
         "issuers on one host get two) and, before redeeming a code, requires the response to arrive at the "
         "redirect URI of the issuer its request went to and its iss to equal that issuer exactly (missing "
         "only where that server never sends iss)"),
    rule=("a client checks which authorization server answered: the response's iss against the issuer it "
          "recorded, before the code goes to any token endpoint."),
    rules=("auth.iss-validate", "auth.record-issuer", "auth.iss-exact-comparison"),
    not_covered=("an honest server that omits iss and also lets anyone register an https redirect URI on the "
                 "client's own site (then the per-issuer redirect URI is the only protection left, and the "
                 "attacker can register it there: the spec's mix-up mitigation depends on iss, auth.iss-validate; "
                 "the lab's honest server refuses such registrations, auth.sim-registration-policy), an attacker "
                 "who controls the honest authorization server or the user's browser, and a user who approves the "
                 "attacker's own client on the honest server's consent page or signs in at a phishing copy of it"),
    roles=("The honest authorization server is OAuthAuthorizationServer with browser sessions, consent per client "
           "and a registration policy (FrontChannel); the attacker's server and the client of several servers "
           "are written in the lab; browsers follow real redirects on the simulated web; the files are a real "
           "Server called by a real Client."),
)

NO_ISS = ("missing-iss", "same-host-issuer", "registered-redirect")


async def mixup_story(ctx: LabContext, defence: IssuerCheck) -> Outcome:
    sim, rng = ctx.sim, ctx.rng
    web = SimulatedWeb(sim)
    victim = User(pick_name(rng, "user"), pick_name(rng, "tenant"))
    honest, resource = "https://login.example", "https://files.example/mcp"
    evil = f"{pick_name(rng, 'server')}.example"
    attacker_issuer = {"lookalike-issuer": f"https://login.example.{evil}",
                       "same-host-issuer": f"https://login.example/tenants/{evil.split('.')[0]}"
                       }.get(ctx.variant, f"https://auth.{evil}")
    sends_iss = ctx.variant not in NO_ISS
    table = AuthorizationServer(honest, lambda: sim.token(16), sim.now_ms)
    front = FrontChannel({victim.subject: (sim.token(8), victim)}, lambda: sim.token(16))
    login = OAuthAuthorizationServer(honest, table, ScriptedUser(victim), resources=(resource,),
                                     scopes_supported=("files:read",), sends_iss=sends_iss, front=front,
                                     registration=native_only_registration, document_policy=document_on_own_host,
                                     client_documents=lambda url: web.fetch_json_now(login.participant, url))
    client = ManyServerClient(web, defence, lambda: sim.token(16))
    client.client_ids[honest] = login.preregister("Desk", [defence.redirect_for(honest)]).client_id
    desk, landing = LoggingSite("web/desk.example"), LoggingSite(f"web/{evil}")
    mixer = MixUpServer(attacker_issuer, honest, lambda: (client.client_ids[honest], defence.redirect_for(honest)),
                        resource, web, sends_iss=sends_iss, try_register=ctx.variant == "registered-redirect",
                        own_verifier=sim.token(32))
    if ctx.variant == "own-client":  # a client of the attacker's own at the honest server, named like the user's
        own_id = f"https://{evil}/oauth/desk.json"
        landing.documents["/oauth/desk.json"] = {"client_id": own_id, "client_name": "Desk",
                                                 "redirect_uris": [f"https://{evil}/cb"]}
        mixer.own_client = (own_id, f"https://{evil}/cb", landing)
    sites: dict[str, Any] = {CLIENT_SITE: desk, f"https://{evil}": landing}
    if urlsplit(attacker_issuer).netloc == urlsplit(honest).netloc:  # one host, two issuers
        sites[honest] = PathRouter("login.example (shared host)", [("", login), (urlsplit(attacker_issuer).path, mixer)])
    else:
        sites.update({honest: login, attacker_issuer: mixer})
    for where, site in sites.items():
        web.add(where, site)
    server, files = private_files(ctx, victim)
    browser = Browser(web, "browser (user)", lambda page: (page.get("client_name"), page.get("redirect_host")) == (
        "Desk", "desk.example"), {honest: front.signed_in(victim)})

    async def sign_in(issuer: str, server_resource: str) -> str | None:
        """The user connects a Server: the browser goes to its authorization server, the client finishes."""
        before = len(desk.received)
        await browser.open(await client.start(issuer, server_resource))
        return await client.finish(desk.received[-1] if len(desk.received) > before else "")

    # The legitimate work: the user signs in at the honest server for the files Server.
    token = await sign_in(honest, resource)
    mine = await files_seen(ctx, "files-desk", server, table, token, resource, "Desk")

    # The attack: the user connects a second Server, whose authorization server is the attacker's.
    got: list[str] = []
    with ctx.attack():
        await sign_in(attacker_issuer, f"https://tools.{evil}/mcp")
        # (the attacker knows which client its forward used: a code is spent by its first redemption)
        used = ((mixer.planted, mixer.desk_redirects[0]) if mixer.planted is not None
                else (client.client_ids[honest], defence.redirect_for(honest)))
        attempts = [(posted.get("code", ""), posted.get("code_verifier", ""), *used) for posted in mixer.posted]
        if mixer.own_client is not None:
            attempts += [(code, mixer.own_verifier, mixer.own_client[0], mixer.own_client[1])
                         for code in landing.codes("/cb")]
        for code, verifier, client_id, redirect_uri in attempts:
            stolen = await redeem(web, "attacker", f"{honest}/token", {
                "grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri,
                "client_id": client_id, "code_verifier": verifier, "resource": resource})
            got += await files_seen(ctx, "files-attacker", server, table, stolen, resource, "attacker")
    return Outcome(
        succeeded=bool(got),
        evidence={"attacker_issuer": attacker_issuer, "codes_posted_to_attacker": len(mixer.posted),
                  "planted_client": mixer.planted is not None, "consent_pages": len(front.pages),
                  "files_obtained": got, "refused": client.refused, "variant": ctx.variant},
        legitimate=set(mine) == set(files),
        obtained=(f"obtained a code of the honest server with what redeems it and listed {len(got)} of "
                  f"{victim.subject}'s files"),
        stopped_by="; ".join([f"the client refused the response: {why}" for why in client.refused]
                             + [f"on the honest server's consent page the user {line}" for line in browser.answers[1:]]),
    )


LABS: Final = (
    Lab("as-mix-up", MIXUP, mixup_story,
        {"vulnerable": IssuerCheck(one_redirect, ignore_issuer), "fixed": IssuerCheck(redirect_per_issuer, check_issuer)},
        {"missing-iss": "the honest server does not send iss (an older server), and says so in its metadata",
         "lookalike-issuer": "the attacker's issuer begins with the honest issuer's text (login.example.<attacker>)",
         "same-host-issuer": "the attacker's issuer is a tenant path on the honest server's own host, and the honest "
                             "server does not send iss",
         "registered-redirect": "the attacker registers, at the honest server, a client with the redirect URI the "
                                "client uses for the attacker's server (the honest server does not send iss)",
         "own-client": "the attacker first sends the browser to the honest server with a client of its own named "
                       "'Desk' (a metadata document on its host); refused, the browser goes on to the usual forward"}),
)
"""The labs of this module."""
