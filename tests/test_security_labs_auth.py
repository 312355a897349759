"""The authorization labs run on the simulated authorization server and web: narrower fixes lose to a
variant that the real fix defeats; every OAuth step is a recorded HTTP exchange with tokens redacted;
runs are deterministic; and the OAuth client calls its URL guard before each URL it learned."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlsplit

import pytest

from mcp_sim.protocol.revisions import LATEST
from mcp_sim.scenarios.security import LABS, mixup_lab, run_lab, ssrf_labs
from mcp_sim.scenarios.security import authorization_labs as auth_labs
from mcp_sim.security.oauth import exact_redirect_match
from mcp_sim.security.oauth_client import OAuthFailed
from mcp_sim.security.url_safety import Resolver, check_url
from tests.test_oauth_flow import ISSUER, PRM_URL, World, authorized_call, play

AUTH_LABS = ("confused-deputy", "redirect-uri-manipulation", "as-mix-up", "ssrf-metadata-discovery")
SECRET = re.compile(r"\b(at|rt)_[0-9a-f]{8,}")


def _narrow(lab: str, defence: Any, variant: str, seed: int = 3) -> tuple[bool, bool]:
    """(narrow defence beaten by the main attack?, narrow defence beaten by ``variant``?)"""
    return (LABS[lab].run_with(defence, "fixed", seed).succeeded,
            LABS[lab].run_with(defence, "fixed", seed, variant).succeeded)


# --- narrow fixes lose -------------------------------------------------------------------------------

def test_a_blocklist_of_address_texts_misses_other_spellings_and_names() -> None:
    def blocklist(url: str, resolve: Resolver) -> None:
        host = urlsplit(url).hostname or ""
        if host in ("169.254.169.254", "127.0.0.1", "localhost") or host.startswith(("10.", "192.168.")):
            raise OAuthFailed(f"{host} is blocked", "blocklist")

    narrow = ssrf_labs.UrlChecks(blocklist)
    assert _narrow("ssrf-metadata-discovery", narrow, "encoded-address") == (False, True)
    assert _narrow("ssrf-metadata-discovery", narrow, "dns-name") == (False, True)
    assert _narrow("ssrf-metadata-discovery", narrow, "token-endpoint") == (False, False)


def test_checking_addresses_without_resolving_names_misses_a_name_for_a_private_address() -> None:
    def literals_only(url: str, resolve: Resolver) -> None:
        check_url(url, lambda host: ["93.184.215.14"])  # every name taken as public

    narrow = ssrf_labs.UrlChecks(literals_only)
    assert _narrow("ssrf-metadata-discovery", narrow, "dns-name") == (False, True)
    for variant in ("encoded-address", "redirect", "authorization-servers"):
        assert not LABS["ssrf-metadata-discovery"].run_with(narrow, "fixed", 3, variant).succeeded


def test_comparing_only_the_host_misses_a_page_on_the_clients_own_host() -> None:
    def same_host(asked: str, registered: Any) -> bool:
        return any(urlsplit(asked)[:2] == urlsplit(uri)[:2] and urlsplit(asked).hostname == urlsplit(uri).hostname
                   for uri in registered)

    narrow = auth_labs.RedirectMatching(same_host)
    assert _narrow("redirect-uri-manipulation", narrow, "same-host-page") == (False, True)
    assert _narrow("redirect-uri-manipulation", narrow, "lookalike-host") == (False, False)


def test_proxy_consent_by_client_id_alone_misses_another_redirect_uri() -> None:
    def per_client_id(client: Any, redirect_uri: str) -> tuple[str, ...]:
        return (client.client_id,)

    narrow = auth_labs.ProxyRules(per_client_id, auth_labs.any_redirect, bind_state=False)
    assert _narrow("confused-deputy", narrow, "approved-client-other-redirect") == (False, True)


def test_proxy_consent_without_session_bound_state_misses_the_attackers_own_consent() -> None:
    narrow = auth_labs.ProxyRules(auth_labs.consent_per_client_and_redirect, exact_redirect_match, bind_state=False)
    assert _narrow("confused-deputy", narrow, "approved-client-other-redirect") == (False, False)
    assert _narrow("confused-deputy", narrow, "consented-by-attacker") == (False, True)


def test_checking_iss_only_when_present_misses_a_server_without_iss() -> None:
    def when_present(request: mixup_lab.Request, arrived_at: str, response: dict[str, str]) -> str | None:
        iss = response.get("iss")
        return f"iss {iss}" if iss is not None and iss != request.issuer else None

    narrow = mixup_lab.IssuerCheck(mixup_lab.one_redirect, when_present)
    assert _narrow("as-mix-up", narrow, "missing-iss") == (False, True)


def test_comparing_issuers_as_prefixes_misses_a_lookalike_issuer() -> None:
    def prefix(request: mixup_lab.Request, arrived_at: str, response: dict[str, str]) -> str | None:
        iss = response.get("iss", "")
        return None if request.issuer.startswith(iss) and iss else f"iss {iss}"

    narrow = mixup_lab.IssuerCheck(mixup_lab.redirect_per_server, prefix)
    assert _narrow("as-mix-up", narrow, "lookalike-issuer") == (False, True)


# --- real exchanges, redacted, deterministic ---------------------------------------------------------

@pytest.mark.parametrize("lab", AUTH_LABS)
def test_the_oauth_steps_are_recorded_http_exchanges_without_tokens(lab: str) -> None:
    for config in ("vulnerable", "fixed"):
        result = run_lab(lab, config, 5)  # type: ignore[arg-type]
        oauth = [e for e in result.trace.events if "oauth" in e.marks]
        assert oauth and all(e.kind == "transport" and e.framing and "http" in e.framing for e in oauth)
        # (under ``fixed`` the SSRF guard may stop the attack before its first exchange)
        assert any("oauth" in e.marks for e in result.attack_events()) or config == "fixed"
        leaked = [e.text for e in oauth if SECRET.search(json.dumps(e.to_json()))]
        assert not leaked, leaked
        assert result.facts.layer == "authorization"


@pytest.mark.parametrize("lab", AUTH_LABS)
def test_runs_are_deterministic_and_seeds_vary(lab: str) -> None:
    a, b, c = run_lab(lab, "vulnerable", 4), run_lab(lab, "vulnerable", 4), run_lab(lab, "vulnerable", 9)
    assert a.evidence == b.evidence and a.explanation == b.explanation
    assert [e.to_json() for e in a.trace.events] == [e.to_json() for e in b.trace.events]
    assert [e.to_json() for e in a.trace.events] != [e.to_json() for e in c.trace.events]


def test_the_deputy_lab_no_longer_lives_with_the_client_feature_labs() -> None:
    from mcp_sim.scenarios.security import client_features

    assert "confused-deputy" not in {lab.name for lab in client_features.LABS}
    assert LABS["confused-deputy"].story is auth_labs.deputy_story


def test_the_fixed_proxy_asks_its_own_consent_once_per_client_and_redirect() -> None:
    result = run_lab("confused-deputy", "fixed", 2)
    pages = [e for e in result.trace.events if e.text and e.text.startswith("POST https://proxy.example/consent")]
    assert len(pages) == 2  # the IDE (approved) and the attacker's client (declined)
    assert "declined 'Repo Stats'" in result.explanation


# --- the OAuth client's url_guard -------------------------------------------------------------------

def test_oauth_client_guards_every_url_it_learned() -> None:
    seen: list[str] = []

    async def story(world: World) -> str:
        world.oauth = world.new_oauth(url_guard=seen.append)
        return await authorized_call(world)

    _, text = play(LATEST, story)
    assert text == "buy milk"
    assert seen == [PRM_URL, f"{ISSUER}/.well-known/oauth-authorization-server", f"{ISSUER}/register",
                    f"{ISSUER}/authorize", f"{ISSUER}/token"]


def test_a_refusing_guard_stops_the_flow_before_the_request_leaves() -> None:
    def guard(url: str) -> None:
        if url.endswith("/register"):
            raise OAuthFailed(f"refused {url}", "no registration here")

    async def story(world: World) -> Any:
        world.oauth = world.new_oauth(url_guard=guard)
        try:
            return await authorized_call(world)
        except OAuthFailed as failed:
            return failed

    world, failed = play(LATEST, story)
    assert isinstance(failed, OAuthFailed) and failed.rule == "no registration here"
    assert not any(q.path.startswith("/register") for q, _ in world.web.exchanges)


def test_token_passthrough_s_challenge_points_where_its_metadata_is_served() -> None:
    # RFC 9728 §3.1: for the resource https://issues.example/mcp the metadata lives at
    # https://issues.example/.well-known/oauth-protected-resource/mcp, and a client that follows the
    # 401's resource_metadata gets the document there (not a 404).
    import anyio

    from mcp_sim.roles.server import Server
    from mcp_sim.scenarios.security import tenants
    from mcp_sim.sim.world import Simulation
    from mcp_sim.transports import Headers, HttpRequest

    sim = Simulation(3)
    seen: dict[str, Any] = {}

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            http = tenants.issues_endpoint(sim, tg, Server("issues", version="1.0.0"), lambda token: None,
                                           "https://login.example")
            stream = http.connect("learner")
            refused = await stream.http(HttpRequest("POST", "/mcp", Headers({
                "Accept": "application/json, text/event-stream", "Content-Type": "application/json",
                "MCP-Protocol-Version": LATEST}), '{"jsonrpc":"2.0","id":1,"method":"server/discover"}'))
            seen["challenge"] = refused.status, refused.headers.get("WWW-Authenticate") or ""
            url = re.search(r'resource_metadata="([^"]+)"', seen["challenge"][1])
            assert url is not None, seen["challenge"]
            seen["url"] = url.group(1)
            answer = await stream.http(HttpRequest("GET", urlsplit(url.group(1)).path, Headers({})))
            seen["metadata"] = answer.status, answer.body
            await http.aclose()
            tg.cancel_scope.cancel()

    sim.run(main)
    assert seen["challenge"][0] == 401
    assert seen["url"] == "https://issues.example/.well-known/oauth-protected-resource/mcp" == tenants.ISSUES_METADATA_URL
    status, body = seen["metadata"]
    assert status == 200, f"following resource_metadata gave {status}"
    document = json.loads(body)
    assert document["resource"] == "https://issues.example/mcp"
    assert document["authorization_servers"] == ["https://login.example"]
