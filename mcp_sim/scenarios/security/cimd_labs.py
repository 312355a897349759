"""Labs about clients that name themselves with a Client ID Metadata Document (CIMD).

With CIMD the ``client_id`` *is* an https URL, and the authorization server fetches the client's
name and redirect URIs from it. The document proves who controls a domain — nothing more. Two labs:

* ``localhost-redirect-impersonation`` — a native app's document lists a loopback redirect URI. Any
  program on the same computer can present that app's ``client_id``, listen on a loopback port of its
  own (RFC 8252 lets the port vary, rule ``auth.sim-loopback-any-port``) and receive the code when the
  user approves a consent page that shows the real app's name. The spec asks the server to show the
  redirect host and warn about loopback-only clients (``auth.cimd-show-redirect-host``,
  ``auth.cimd-warn-localhost``) — both leave the decision to the user — and allows an attestation
  (``auth.cimd-attestation``). The fix here is one: the document names a key, and the token endpoint
  redeems a code for that client only with a proof made with that key, which another program on the
  machine does not hold.
* ``cimd-trust-policy`` — a protected authorization server accepts metadata documents from anywhere,
  so a look-alike document on the attacker's domain, named like the company's own app, gets the
  user's consent. The fix is a domain-based trust policy (``auth.cimd-trust-policies``): the
  ``client_id`` URL, parsed, must be under a trusted origin *and path*, compared as parts, not text.

Signatures are simulated (:class:`SimKeys`): a signature can only be made with the private key and is
checked against the public key the document names; the world keeps the pairs, so "unforgeable" holds
by construction, as it does for a real signature scheme.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urlencode, urlsplit, urlunsplit

from mcp_sim.scenarios.security.oauth_world import (
    Browser,
    LoggingSite,
    files_seen,
    last_refusal,
    private_files,
    redeem,
)
from mcp_sim.security.identity import User, pick_name
from mcp_sim.security.lab import Lab, LabContext, LabFacts, Outcome
from mcp_sim.security.oauth import (
    OAuthAuthorizationServer,
    RedirectMatch,
    ScriptedUser,
    loopback_any_port_match,
    s256,
)
from mcp_sim.security.oauth_front import FrontChannel, document_on_own_host
from mcp_sim.security.oauth_web import SimulatedWeb
from mcp_sim.security.tokens import AuthorizationServer

__all__ = ["LABS", "LoopbackTrust", "SimKeys", "TrustPolicy", "any_https_client", "key_attestation", "no_attestation",
           "trusted_prefixes"]


@dataclass
class SimKeys:
    """Simulated public-key signatures: :meth:`pair` makes a key pair, :meth:`sign` needs the private
    key, :meth:`verify` needs only the public one."""

    draw: Callable[[], str]
    _pairs: dict[str, str] = field(default_factory=dict)

    def pair(self) -> tuple[str, str]:
        private = self.draw()
        public = "pk_" + hashlib.sha256(f"public|{private}".encode()).hexdigest()[:24]
        self._pairs[public] = private
        return private, public

    @staticmethod
    def sign(private: str, message: str) -> str:
        return hashlib.sha256(f"{private}|{message}".encode()).hexdigest()

    def verify(self, public: str, message: str, signature: str) -> bool:
        private = self._pairs.get(public)
        return private is not None and self.sign(private, message) == signature


def fetch_document(web: SimulatedWeb, participant: str) -> Callable[[str], dict[str, Any] | None]:
    """How the authorization server fetches a metadata document: to the URL's *host* (a ``user@``
    part is not where a request goes)."""
    def fetch(url: str) -> dict[str, Any] | None:
        parts = urlsplit(url)
        netloc = parts.hostname or ""
        netloc += f":{parts.port}" if parts.port else ""
        return web.fetch_json_now(participant, urlunsplit(("https", netloc, parts.path, parts.query, "")))
    return fetch


def assertion_message(form: dict[str, str]) -> str:
    """What a client signs at the token endpoint: its id and the code it redeems (no replay elsewhere)."""
    return f"{form.get('client_id', '')}|{form.get('code', '')}"


Attest = Callable[[dict[str, Any], dict[str, str], SimKeys], str | None]


def no_attestation(document: dict[str, Any], form: dict[str, str], keys: SimKeys) -> str | None:
    """The mistake: a public client is whoever presents its client_id (and a PKCE verifier of its own)."""
    return None


def key_attestation(document: dict[str, Any], form: dict[str, str], keys: SimKeys) -> str | None:
    """The fix: a client whose document names a key redeems a code only with a signature by that key."""
    key = document.get("attestation_key")
    if not isinstance(key, str):
        return None
    if not keys.verify(key, assertion_message(form), form.get("client_assertion", "")):
        return f"no proof made with the key {key} that {document.get('client_id')} names"
    return None


@dataclass(frozen=True)
class LoopbackTrust:
    """How the authorization server trusts a metadata-document client with loopback redirect URIs:
    its redirect comparison and its check of the client at the token endpoint."""

    redirect_match: RedirectMatch
    attest: Attest


LOCALHOST = LabFacts(
    layer="authorization",
    summary="Another program presents a native app's client id and gets its code on a loopback port.",
    title="Localhost redirect URI impersonation (Client ID Metadata Documents)",
    attacker="a malicious program on the user's computer (another app the user installed), without access to "
             "the other apps' own storage",
    controls=("a loopback port of its own (or the real app's, while the app is closed), the user's browser "
              "(it can open an authorization link) and the native app's public client_id URL"),
    goal="an access token for the user's files, issued to what the user believes is their code editor",
    mistake=("the authorization server trusted whoever presented the editor's client_id: the metadata document "
             "proves who owns editor.example, not which program listens on 127.0.0.1, and the consent page showed "
             "the editor's name"),
    boundary="an attestation at the token endpoint: a key the metadata document names and only the real app holds",
    fix=("the editor's document names a public key; the token endpoint redeems a code for that client id only "
         "with a signature over the client id and the code made with the matching private key, which the "
         "other program cannot read"),
    rule=("a metadata document proves a domain, not the program on a loopback port: show the redirect host, warn "
          "about loopback-only clients, and trust them only with an attestation."),
    rules=("auth.cimd-show-redirect-host", "auth.cimd-warn-localhost", "auth.cimd-attestation",
           "auth.sim-loopback-any-port"),
    not_covered=("a program that can read the real app's key (the same user account without OS isolation of "
                 "app storage, or malware with administrator rights), a user who signs in to the attacker's own "
                 "app, and apps whose documents name no key: for those the spec's controls are the consent page's "
                 "redirect host and its loopback warning (auth.cimd-show-redirect-host, auth.cimd-warn-localhost), "
                 "which inform the user and stop nothing by themselves"),
    roles=("The authorization server is OAuthAuthorizationServer with browser sessions and consent pages; the "
           "editor's metadata document, its local callback and the attacker's program are sites on the "
           "simulated web; the files are a real Server called by a real Client."),
)


async def localhost_story(ctx: LabContext, defence: LoopbackTrust) -> Outcome:
    sim, rng = ctx.sim, ctx.rng
    web = SimulatedWeb(sim)
    victim = User(pick_name(rng, "user"), pick_name(rng, "tenant"))
    issuer, resource = "https://login.example", "https://files.example/mcp"
    editor_id = "https://editor.example/oauth/client.json"
    port, other = rng.randint(30000, 39999), rng.randint(40000, 49999)
    keys = SimKeys(lambda: sim.token(16))
    private, public = keys.pair()
    hosts = ["127.0.0.1", "[::1]"] if ctx.variant == "ipv6-literal" else ["127.0.0.1"]
    document = {"client_id": editor_id, "client_name": "Code Editor", "token_endpoint_auth_method": "none",
                "redirect_uris": [f"http://{host}:{port}/callback" for host in hosts], "attestation_key": public}
    table = AuthorizationServer(issuer, lambda: sim.token(16), sim.now_ms)
    front = FrontChannel({victim.subject: (sim.token(8), victim)}, lambda: sim.token(16))
    login = OAuthAuthorizationServer(issuer, table, ScriptedUser(victim), resources=(resource,),
                                     scopes_supported=("files:read",), dynamic_registration=False, front=front,
                                     redirect_match=defence.redirect_match, document_policy=document_on_own_host)
    fetch = login.client_documents = fetch_document(web, login.participant)
    login.token_auth = lambda client, form: defence.attest(fetch(client.client_id) or {}, form, keys)
    editor = LoggingSite(f"Code Editor (127.0.0.1:{port})")
    sites: dict[str, Any] = {issuer: login, "https://editor.example": LoggingSite("web/editor.example", documents={
        "/oauth/client.json": document}), f"http://127.0.0.1:{port}": editor}
    for where, site in sites.items():
        web.add(where, site)
    server, files = private_files(ctx, victim)
    # The user uses Code Editor: on a consent page with that name they approve (the warning notwithstanding).
    browser = Browser(web, "browser (user)", lambda page: page.get("client_name") == "Code Editor",
                      {issuer: front.signed_in(victim)})

    def link(redirect: str, verifier: str) -> str:
        return f"{issuer}/authorize?" + urlencode({
            "response_type": "code", "client_id": editor_id, "redirect_uri": redirect, "scope": "files:read",
            "code_challenge": s256(verifier), "code_challenge_method": "S256", "resource": resource,
            "state": sim.token(8)})

    async def redeem_at(site: LoggingSite, sender: str, redirect: str, verifier: str, key: str) -> list[str]:
        tokens = []
        for code in site.codes("/callback"):
            fields = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect,
                      "client_id": editor_id, "code_verifier": verifier, "resource": resource}
            tokens.append(await redeem(web, sender, f"{issuer}/token", {
                **fields, "client_assertion": keys.sign(key, assertion_message(fields))}))
        return [t for t in tokens if t]

    # The legitimate work: the editor signs the user in on its own port and proves its key.
    verifier = sim.token(32)
    await browser.open(link(f"http://127.0.0.1:{port}/callback", verifier))
    ours = await redeem_at(editor, "Code Editor", f"http://127.0.0.1:{port}/callback", verifier, private)
    mine = await files_seen(ctx, "files-editor", server, table, ours[-1] if ours else None, resource, "Code Editor")

    # The attack: the other program listens on a loopback port and opens the editor's authorization link.
    host = "[::1]" if ctx.variant == "ipv6-literal" else "127.0.0.1"
    listen = port if ctx.variant in ("same-port", "remembered-consent") else other
    pages_before = len(front.pages)
    if ctx.variant != "remembered-consent":  # (otherwise the user approved this very redirect URI before)
        front.approved.clear()
    evil_redirect = f"http://{host}:{listen}/callback"
    program = LoggingSite(f"attacker's program ({host}:{listen})")
    got: list[str] = []
    with ctx.attack():
        web.add(f"http://{host}:{listen}", program)  # on the editor's own port: the editor is closed now
        evil_verifier = sim.token(32)
        await browser.open(link(evil_redirect, evil_verifier))
        stolen = await redeem_at(program, "attacker's program", evil_redirect, evil_verifier, sim.token(16))
        for token in stolen:
            got += await files_seen(ctx, "files-attacker", server, table, token, resource, "attacker")
    return Outcome(
        succeeded=bool(got),
        evidence={"redirect_uri": evil_redirect, "codes_received": len(program.codes("/callback")),
                  "consent_pages_during_attack": len(front.pages) - pages_before, "tokens": len(stolen),
                  "files_obtained": got, "variant": ctx.variant},
        legitimate=set(mine) == set(files),
        obtained=(f"received the code at {evil_redirect} as 'Code Editor', redeemed it and listed {len(got)} of "
                  f"{victim.subject}'s files"),
        stopped_by=(f"the program received {len(program.codes('/callback'))} code(s); the token endpoint answered: "
                    + (last_refusal(web, "/token") or "nothing")),
    )


# --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class TrustPolicy:
    """Which metadata-document client ids a protected authorization server accepts:
    ``accepts(client_id)`` → why it is refused (``None``: accepted)."""

    accepts: Callable[[str], str | None]


def any_https_client(client_id: str) -> str | None:
    """An open server's policy: any https client id with a path (fine for an open server, not for a
    company's protected one)."""
    return None


def trusted_prefixes(*prefixes: str) -> Callable[[str], str | None]:
    """An allowlist of trusted ``https://host/path/`` prefixes, compared as parsed parts: the scheme, the
    exact host (no ``user@``, no port), and the path by whole segments."""
    allowed = [urlsplit(p) for p in prefixes]

    def accepts(client_id: str) -> str | None:
        parts = urlsplit(client_id)
        try:
            port = parts.port
        except ValueError:
            port = -1
        for trusted in allowed:
            base = trusted.path.rstrip("/") + "/"
            if (parts.scheme == "https" and parts.hostname == trusted.hostname and parts.username is None
                    and port is None and parts.path.startswith(base)):
                return None
        return f"{client_id} is not under a trusted client prefix"

    return accepts


TRUST = LabFacts(
    layer="authorization",
    summary="A protected authorization server accepts any metadata document, so a look-alike app gets consent.",
    title="CIMD trust policies",
    attacker="someone outside the company who publishes a metadata document and gets an employee to open a link",
    controls=("a metadata document on a domain of its own (or in its own user folder on the app vendor's site) "
              "naming itself like the company's app, its redirect URI there, and the authorization link"),
    goal="an access token for the employee's files at the company's protected server",
    mistake=("the company's authorization server accepted any https client id, as an open server may, so the "
             "look-alike document was fetched, its name shown, and the user approved what looked like their app"),
    boundary="the authorization server's domain-based trust policy for metadata-document client ids",
    fix=("the server accepts only client ids under the trusted prefix https://files.example/oauth/, comparing "
         "scheme, exact host (no user@, no port) and whole path segments, and refuses the rest before any "
         "consent page"),
    rule="a protected server decides which metadata-document client ids it trusts, by parsed domain and path.",
    rules=("auth.cimd-trust-policies", "auth.cimd-show-redirect-host", "auth.cimd-as-validates"),
    not_covered=("a trusted vendor's own document or site when compromised, an open server (which may accept any "
                 "https client id by design: its users' consent is then the only control, with the hostnames "
                 "shown, auth.cimd-show-redirect-host), and reputation or domain-age checks, which this lab does "
                 "not model"),
    roles=("The authorization server is OAuthAuthorizationServer with browser sessions, consent pages and the "
           "policy as its document_policy; metadata documents are served by sites on the simulated web; the "
           "files are a real Server called by a real Client."),
)


async def trust_story(ctx: LabContext, defence: TrustPolicy) -> Outcome:
    sim, rng = ctx.sim, ctx.rng
    web = SimulatedWeb(sim)
    victim = User(pick_name(rng, "user"), pick_name(rng, "tenant"))
    evil, someone = f"{pick_name(rng, 'server')}.example", pick_name(rng, "user").split(".")[0]
    issuer, resource = "https://login.corp.example", "https://files.corp.example/mcp"
    desktop_id, port = "https://files.example/oauth/desktop.json", rng.randint(30000, 39999)
    evil_id, evil_redirect = {
        "userinfo": (f"https://files.example@{evil}/oauth/desktop.json", f"https://{evil}/cb"),
        "lookalike-suffix": (f"https://get{evil.split('.')[0]}files.example/oauth/desktop.json",
                             f"https://get{evil.split('.')[0]}files.example/cb"),
        "user-pages": (f"https://files.example/~{someone}/desktop.json", f"https://files.example/~{someone}/cb"),
    }.get(ctx.variant, (f"https://{evil}/oauth/desktop.json", f"https://{evil}/cb"))

    def policy(client_id: str, document: dict[str, Any]) -> str | None:
        """The defence's trust policy, then the world's rule that a document speaks for its own host."""
        reasons = [defence.accepts(client_id), document_on_own_host(client_id, document)]
        return next((reason for reason in reasons if reason is not None), None)

    table = AuthorizationServer(issuer, lambda: sim.token(16), sim.now_ms)
    front = FrontChannel({victim.subject: (sim.token(8), victim)}, lambda: sim.token(16))
    login = OAuthAuthorizationServer(issuer, table, ScriptedUser(victim), resources=(resource,),
                                     scopes_supported=("files:read",), dynamic_registration=False, front=front,
                                     document_policy=policy, redirect_match=loopback_any_port_match)
    login.client_documents = fetch_document(web, login.participant)
    vendor = LoggingSite("web/files.example", documents={"/oauth/desktop.json": {
        "client_id": desktop_id, "client_name": "Files Desktop", "redirect_uris": ["http://127.0.0.1/callback"]}})
    evil_host = urlsplit(evil_id).hostname or ""
    evil_site = vendor if evil_host == "files.example" else LoggingSite(f"web/{evil_host}")
    evil_site.documents[urlsplit(evil_id).path] = {"client_id": evil_id, "client_name": "Files Desktop",
                                                  "redirect_uris": [evil_redirect]}
    desktop = LoggingSite(f"Files Desktop (127.0.0.1:{port})")
    sites: dict[str, Any] = {issuer: login, "https://files.example": vendor, f"https://{evil_host}": evil_site,
                             f"http://127.0.0.1:{port}": desktop}
    for where, site in sites.items():
        web.add(where, site)
    server, files = private_files(ctx, victim)
    browser = Browser(web, "browser (employee)", lambda page: page.get("client_name") == "Files Desktop",
                      {issuer: front.signed_in(victim)})

    def link(client_id: str, redirect: str, verifier: str) -> str:
        return f"{issuer}/authorize?" + urlencode({
            "response_type": "code", "client_id": client_id, "redirect_uri": redirect, "scope": "files:read",
            "code_challenge": s256(verifier), "code_challenge_method": "S256", "resource": resource,
            "state": sim.token(8)})

    async def tokens(site: LoggingSite, sender: str, under: str, client_id: str, redirect: str,
                     verifier: str) -> list[str]:
        found = [await redeem(web, sender, f"{issuer}/token", {
            "grant_type": "authorization_code", "code": code, "redirect_uri": redirect, "client_id": client_id,
            "code_verifier": verifier, "resource": resource}) for code in site.codes(under)]
        return [t for t in found if t]

    # The legitimate work: the company's own app, Files Desktop, signs the employee in.
    verifier = sim.token(32)
    await browser.open(link(desktop_id, f"http://127.0.0.1:{port}/callback", verifier))
    ours = await tokens(desktop, "Files Desktop", "/callback", desktop_id, f"http://127.0.0.1:{port}/callback", verifier)
    mine = await files_seen(ctx, "files-desktop", server, table, ours[-1] if ours else None, resource, "Files Desktop")

    # The attack: a link with the look-alike document's client id.
    got: list[str] = []
    with ctx.attack():
        evil_verifier = sim.token(32)
        bait = link(evil_id, evil_redirect, evil_verifier)
        ctx.note("attacker", "employee", f"sends a link: {bait}", attack=True)
        seen = await browser.open(bait)
        for token in await tokens(evil_site, "attacker", urlsplit(evil_redirect).path, evil_id, evil_redirect,
                                  evil_verifier):
            got += await files_seen(ctx, "files-attacker", server, table, token, resource, "attacker")
    return Outcome(
        succeeded=bool(got),
        evidence={"client_id": evil_id, "consent_pages": [p["client_id"] for p in front.pages], "files_obtained": got,
                  "variant": ctx.variant},
        legitimate=set(mine) == set(files),
        obtained=f"got the employee's consent for {evil_id} as 'Files Desktop' and listed {len(got)} of their files",
        stopped_by=f"the authorization server answered {seen.status}: {seen.body}",
    )


LABS: Final = (
    Lab("localhost-redirect-impersonation", LOCALHOST, localhost_story,
        {"vulnerable": LoopbackTrust(loopback_any_port_match, no_attestation),
         "fixed": LoopbackTrust(loopback_any_port_match, key_attestation)},
        {"same-port": "the program listens on the editor's own port while the editor is closed",
         "ipv6-literal": "the editor's document also lists [::1]; the program listens there on another port",
         "remembered-consent": "the program uses the exact redirect URI the user approved before: no consent page "
                               "at all"}),
    Lab("cimd-trust-policy", TRUST, trust_story,
        {"vulnerable": TrustPolicy(any_https_client), "fixed": TrustPolicy(trusted_prefixes("https://files.example/oauth/"))},
        {"userinfo": "the client id is https://files.example@<attacker>/…: its text begins with the trusted origin",
         "lookalike-suffix": "the client id's host ends in files.example but is the attacker's domain",
         "user-pages": "the document sits in the attacker's user folder on the trusted vendor's own host"}),
)
"""The labs of this module."""
