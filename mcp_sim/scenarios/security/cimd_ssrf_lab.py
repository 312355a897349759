"""The lab ``cimd-ssrf``: an authorization server that fetches Client ID Metadata Documents is made to
request its own internal network.

With Client ID Metadata Documents the ``client_id`` of an authorization request *is* a URL, sent by a
client nobody knows yet, and the authorization server fetches it — from *its* place in the network,
behind the firewall, beside admin consoles that act on a plain ``GET`` because "only the inside can
reach them". The attacker needs no account and no victim: it opens one authorization link whose
``client_id`` names an internal address, and the server makes the request for it (rule
``auth.cimd-ssrf``; the Security Best Practices' "SSRF Against Authorization Servers").

The fix is the same URL guard a client uses for the URLs a server names
(:func:`mcp_sim.security.url_safety.check_url`): https only, no ``user@``, the host read as an address
the way the network reads it, names resolved and every address judged by where it is delivered,
private, loopback and link-local refused — and the check repeated on every redirect before it is
followed. The intranet here (:class:`Intranet`) is the authorization server's view of the network:
sites by address, names by DNS record.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urlencode, urljoin, urlsplit

from mcp_sim.scenarios.security.oauth_world import Browser, LoggingSite, files_seen, private_files, redeem
from mcp_sim.security.identity import User, pick_name
from mcp_sim.security.lab import Lab, LabContext, LabFacts, Outcome
from mcp_sim.security.oauth import OAuthAuthorizationServer, ScriptedUser, read_form, s256
from mcp_sim.security.oauth_client import OAuthFailed
from mcp_sim.security.oauth_front import FrontChannel, document_on_own_host
from mcp_sim.security.oauth_web import SimulatedWeb, Site, record_exchange
from mcp_sim.security.tokens import AuthorizationServer
from mcp_sim.security.url_safety import Resolver, check_url, parse_ip
from mcp_sim.transports.http import Headers, HttpRequest, HttpResponse

__all__ = ["LABS", "DocumentGuard", "Intranet", "fetch_anything"]

INTERNAL = "10.0.0.7"


@dataclass
class Intranet:
    """What the authorization server's own network reaches: sites by address and the DNS it uses."""

    dns: dict[str, list[str]] = field(default_factory=dict)
    sites: dict[str, Site] = field(default_factory=dict)
    refusals: list[str] = field(default_factory=list)

    def add(self, address: str, site: Site, *names: str) -> None:
        self.sites[address] = site
        for name in names:
            self.dns[name] = [address]

    def resolve(self, host: str) -> list[str]:
        return self.dns.get(host, [])

    def route(self, host: str) -> Site | None:
        """The site a request to ``host`` reaches: the host read as an address, or its first record."""
        address = parse_ip(host)
        found = str(address) if address is not None else (self.resolve(host) or [""])[0]
        return self.sites.get(found)


@dataclass
class AdminConsole:
    """An internal admin console that acts on ``GET`` — safe, its owners think, because only the
    inside network can reach it."""

    participant: str = f"admin console ({INTERNAL})"
    actions: list[str] = field(default_factory=list)

    def serve(self, request: HttpRequest) -> HttpResponse:
        path, _, query = request.path.partition("?")
        if path.startswith("/admin/grant"):
            asked = read_form(query)
            self.actions.append(f"granted {asked.get('role', '?')} to {asked.get('user', '?')}")
            return HttpResponse(200, Headers({"Content-Type": "application/json"}), json.dumps({"ok": True}))
        return HttpResponse(404)


@dataclass
class Redirector:
    """The attacker's public web server: its document URL answers with a redirect inward."""

    participant: str
    to: str

    def serve(self, request: HttpRequest) -> HttpResponse:
        return HttpResponse(302, Headers({"Location": self.to}))


def fetch_anything(url: str, resolve: Resolver) -> None:
    """The mistake: a client_id URL is fetched like a URL the operator configured."""


@dataclass(frozen=True)
class DocumentGuard:
    """What the authorization server checks before fetching a metadata document URL, and before
    following each redirect: ``check(url, resolve)`` raises :class:`OAuthFailed` to refuse."""

    check: Callable[[str, Resolver], None]


def document_fetcher(net: Intranet, guard: DocumentGuard, participant: str, ctx: LabContext
                     ) -> Callable[[str], dict[str, Any] | None]:
    """The authorization server's metadata-document fetch on its own network: the guard on the URL and
    on every redirect (at most three), each exchange recorded in the trace."""
    def fetch(url: str) -> dict[str, Any] | None:
        for _ in range(4):
            try:
                guard.check(url, net.resolve)
            except OAuthFailed as refused:
                net.refusals.append(refused.reason)
                return None
            parts = urlsplit(url)
            site = net.route(parts.hostname or "")
            origin = f"{parts.scheme}://{parts.netloc}"
            request = HttpRequest("GET", parts.path + (f"?{parts.query}" if parts.query else ""),
                                  Headers({"Accept": "application/json"}))
            receiver = site.participant if site is not None else f"web/{parts.netloc}"
            record_exchange(ctx.recorder, "oauth", participant, receiver, request, None, origin)
            response = site.serve(request) if site is not None else HttpResponse(404)
            record_exchange(ctx.recorder, "oauth", receiver, participant, request, response, origin)
            location = response.headers.get("Location")
            if response.status in (301, 302, 303, 307, 308) and location:
                url = urljoin(url, location)
                continue
            try:
                data = json.loads(response.body) if response.status == 200 and response.body else None
            except ValueError:
                return None
            return data if isinstance(data, dict) else None
        return None
    return fetch


CIMD_SSRF = LabFacts(
    layer="authorization",
    summary="A client_id URL makes the authorization server request its own internal network.",
    title="SSRF through Client ID Metadata Documents",
    attacker="anyone on the internet who can open the authorization server's authorization endpoint",
    controls=("the client_id of an authorization request (a URL the server will fetch), the redirects its own "
              "web server answers and the DNS records of its own domain"),
    goal="the authorization server's place in the network: an internal admin console that acts on a GET",
    mistake=("the authorization server fetched the client_id URL like one its operator had configured, so its "
             "request reached an internal console that trusts anything able to reach it"),
    boundary="a URL guard on the metadata-document fetch, repeated on every redirect",
    fix=("before fetching a client_id URL, and before following any redirect, the server requires https and no "
         "user@, reads the host as an address the way the network does (decimal, hex, mapped IPv6), resolves "
         "names, and refuses private, loopback and link-local destinations"),
    rule=("a client_id URL comes from an unknown client: an authorization server guards its fetch as it would any "
          "untrusted URL, on every redirect."),
    rules=("auth.cimd-ssrf", "security.bp.ssrf-block-private", "security.bp.ssrf-redirects"),
    not_covered=("DNS rebinding between the check and the fetch (connect to the checked address, or fetch through "
                 "an egress proxy that applies the same rules, a mitigation the best practices name beside "
                 "security.bp.ssrf-block-private), an "
                 "address translation the guard was not told about, a public service that forwards requests "
                 "inward, the fetch used against a public server (rate and size limits on documents are not "
                 "modelled), and what the server does with a document it did fetch: that is its trust policy "
                 "(auth.cimd-trust-policies)"),
    roles=("The authorization server is OAuthAuthorizationServer with a metadata-document fetcher written in the "
           "lab over its own intranet (sites by address, a DNS table); the guard is url_safety.check_url; the "
           "legitimate sign-in and the files are the simulator's own."),
)


async def cimd_ssrf_story(ctx: LabContext, defence: DocumentGuard) -> Outcome:
    sim, rng = ctx.sim, ctx.rng
    web = SimulatedWeb(sim)
    victim = User(pick_name(rng, "user"), pick_name(rng, "tenant"))
    intruder, evil = pick_name(rng, "user"), f"{pick_name(rng, 'server')}.example"
    issuer, resource = "https://login.example", "https://files.example/mcp"
    table = AuthorizationServer(issuer, lambda: sim.token(16), sim.now_ms)
    front = FrontChannel({victim.subject: (sim.token(8), victim)}, lambda: sim.token(16))
    login = OAuthAuthorizationServer(issuer, table, ScriptedUser(victim), resources=(resource,),
                                     scopes_supported=("files:read",), dynamic_registration=False, front=front,
                                     document_policy=document_on_own_host)
    console, net = AdminConsole(), Intranet()
    grant = f"/admin/grant?{urlencode({'user': intruder, 'role': 'owner'})}"
    notes_id, port = "https://notes.example/oauth/client.json", rng.randint(30000, 39999)
    net.add(INTERNAL, console, "admin.corp.internal", f"ops.{evil}")
    net.add("93.184.215.14", LoggingSite("web/notes.example", documents={"/oauth/client.json": {
        "client_id": notes_id, "client_name": "Notes", "redirect_uris": ["http://127.0.0.1/callback"]}}),
        "notes.example")
    net.add("198.51.100.7", Redirector(f"web/{evil}", f"https://{INTERNAL}{grant}"), evil)
    login.client_documents = document_fetcher(net, defence, login.participant, ctx)
    notes = LoggingSite(f"Notes (127.0.0.1:{port})")
    sites: dict[str, Any] = {issuer: login, f"http://127.0.0.1:{port}": notes}
    for where, site in sites.items():
        web.add(where, site)
    server, files = private_files(ctx, victim)

    def link(client_id: str, redirect: str, verifier: str) -> str:
        return f"{issuer}/authorize?" + urlencode({
            "response_type": "code", "client_id": client_id, "redirect_uri": redirect, "scope": "files:read",
            "code_challenge": s256(verifier), "code_challenge_method": "S256", "resource": resource,
            "state": sim.token(8)})

    # The legitimate work: the Notes app names itself with its metadata document and signs the user in.
    browser = Browser(web, "browser (user)", lambda page: page.get("client_name") == "Notes",
                      {issuer: front.signed_in(victim)})
    verifier, redirect = sim.token(32), f"http://127.0.0.1:{port}/callback"
    await browser.open(link(notes_id, redirect, verifier))
    tokens = [await redeem(web, "Notes", f"{issuer}/token", {
        "grant_type": "authorization_code", "code": code, "redirect_uri": redirect, "client_id": notes_id,
        "code_verifier": verifier, "resource": resource}) for code in notes.codes("/callback")]
    mine = await files_seen(ctx, "files-notes", server, table, tokens[-1] if tokens else None, resource, "Notes")

    # The attack: one authorization link, opened in the attacker's own browser, whose client_id is inward.
    client_id = {"dns-name": f"https://admin.corp.internal{grant}",
                 "encoded-address": f"https://{int(parse_ip(INTERNAL) or 0)}{grant}",
                 "redirect": f"https://{evil}/oauth/client.json",
                 "attacker-dns": f"https://ops.{evil}{grant}"}.get(ctx.variant, f"https://{INTERNAL}{grant}")
    with ctx.attack():
        seen = await Browser(web, "browser (attacker)").open(link(client_id, f"https://{evil}/cb", sim.token(32)))
    done = [action for action in console.actions if intruder in action]
    return Outcome(
        succeeded=bool(done),
        evidence={"client_id": client_id, "console_actions": done, "refusals": net.refusals, "variant": ctx.variant},
        legitimate=set(mine) == set(files),
        obtained=f"made the authorization server call its internal console, which {'; '.join(done)}",
        stopped_by="the authorization server refused to fetch the client_id URL: " + "; ".join(net.refusals)
                   + f" (the browser got {seen.status})",
    )


def _guarded(url: str, resolve: Resolver) -> None:
    check_url(url, resolve)


LABS: Final = (
    Lab("cimd-ssrf", CIMD_SSRF, cimd_ssrf_story,
        {"vulnerable": DocumentGuard(fetch_anything), "fixed": DocumentGuard(_guarded)},
        {"dns-name": "the client_id names the console by its internal DNS name",
         "encoded-address": "the client_id spells the console's address as one decimal number",
         "redirect": "the client_id is a public URL of the attacker's, which redirects inward",
         "attacker-dns": "the client_id is a name under the attacker's own domain whose record is the console's "
                         "address"}),
)
"""The labs of this module."""
