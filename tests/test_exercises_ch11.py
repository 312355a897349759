"""Chapter 11's exercises: plausible wrong answers are rejected on every seed, by the check that names
their mistake; the expected answers agree with the simulator's own OAuth code.

(``tests/test_exercises.py`` already grades every registered exercise's starter, reference, cheats
and a hard-coded answer; the wrong answers below are counted there too.)
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from test_exercises import assert_wrong_answer_rejected

from mcp_sim.grading.exercises import ex11_discovery_urls, ex11_pkce, ex11_token_check
from mcp_sim.security.oauth_client import OAuthClient, OAuthFailed
from mcp_sim.security.oauth_web import SimulatedWeb
from mcp_sim.sim.world import Simulation

DISCOVERY = ex11_discovery_urls.EXERCISE.checks
HEADER, WELL_KNOWN, AS = (c.name for c in DISCOVERY[:3])
NONE, INVALID, SCOPE, OK = (c.name for c in ex11_token_check.EXERCISE.checks[:4])
CHALLENGE, AUTHORIZE, VERIFY = (c.name for c in ex11_pkce.EXERCISE.checks[:3])

# (exercise, name, edits-or-source, the check that must fail)
WRONG: list[tuple[str, str, Any, str]] = [
    # --- ex11_discovery_urls ---
    ("ex11_discovery_urls", "the header's resource_metadata ignored",
     [("    if named:\n        return [named]\n", "")], HEADER),
    ("ex11_discovery_urls", "the header's URL, then the well-known ones too",
     [("        return [named]\n", "        return [named, f\"{_split(server_url)[0]}{PRM}\"]\n")], HEADER),
    ("ex11_discovery_urls", "the root URI before the path-aware one",
     [('    return [f"{origin}{PRM}{path}", f"{origin}{PRM}"]', '    return [f"{origin}{PRM}", f"{origin}{PRM}{path}"]')],
     WELL_KNOWN),
    ("ex11_discovery_urls", "the well-known part appended after the path",
     [('    return [f"{origin}{PRM}{path}", f"{origin}{PRM}"]', '    return [f"{origin}{path}{PRM}", f"{origin}{PRM}"]')],
     WELL_KNOWN),
    ("ex11_discovery_urls", "a root endpoint's URI listed twice",
     [("    if not path:\n        return [f\"{origin}{PRM}\"]\n", "")], WELL_KNOWN),
    ("ex11_discovery_urls", "a trailing slash kept in the path",
     [('parts.path.rstrip("/")', "parts.path")], WELL_KNOWN),
    ("ex11_discovery_urls", "OpenID Connect before RFC 8414",
     [('        return [f"{origin}{OAUTH}", f"{origin}{OIDC}"]', '        return [f"{origin}{OIDC}", f"{origin}{OAUTH}"]')],
     AS),
    ("ex11_discovery_urls", "the path-appended OIDC form forgotten",
     [(', f"{origin}{path}{OIDC}"]', "]")], AS),
    ("ex11_discovery_urls", "the issuer's path put before the well-known part everywhere",
     [('    return [f"{origin}{OAUTH}{path}", f"{origin}{OIDC}{path}", f"{origin}{path}{OIDC}"]',
       '    return [f"{origin}{path}{OAUTH}", f"{origin}{path}{OIDC}"]')], AS),
    # --- ex11_token_check ---
    ("ex11_token_check", "no audience check (a passthrough-friendly Server)",
     [('    if token["audience"] != server["resource"]:\n'
       '        return {"status": 401, "www_authenticate": _challenge(server, "invalid_token")}\n', "")], INVALID),
    ("ex11_token_check", "the audience compared by prefix",
     [('token["audience"] != server["resource"]', 'not token["audience"].startswith(server["resource"])')], INVALID),
    ("ex11_token_check", "a token still valid at its expiry instant",
     [('server["now_ms"] >= token["expires_at_ms"]', 'server["now_ms"] > token["expires_at_ms"]')], INVALID),
    ("ex11_token_check", "a token refused a millisecond early",
     [('server["now_ms"] >= token["expires_at_ms"]', 'server["now_ms"] >= token["expires_at_ms"] - 1')], OK),
    ("ex11_token_check", "a missing scope answered 401",
     [('return {"status": 403,', 'return {"status": 401,')], SCOPE),
    ("ex11_token_check", "a 403 that does not say which scope",
     [('_challenge(server, "insufficient_scope", needed)', '_challenge(server, "insufficient_scope")')], SCOPE),
    ("ex11_token_check", "invalid_token when no token was sent",
     [('        return {"status": 401, "www_authenticate": _challenge(server)}',
       '        return {"status": 401, "www_authenticate": _challenge(server, "invalid_token")}')], NONE),
    ("ex11_token_check", "a challenge without resource_metadata",
     [("    params.append(f'resource_metadata=\"{server[\"resource_metadata\"]}\"')\n", ""),
      ('    return "Bearer " + ", ".join(params)', '    return "Bearer " + (", ".join(params) or \'realm="mcp"\')')],
     NONE),
    ("ex11_token_check", "any scheme read as a bearer token",
     [('    if scheme.lower() != "bearer" or not value:', '    if authorization is None:')], NONE),
    # --- ex11_pkce ---
    ("ex11_pkce", "a hex digest instead of base64url",
     [('base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")', "digest.hex()")], CHALLENGE),
    ("ex11_pkce", "the '=' padding kept",
     [('.decode("ascii").rstrip("=")', '.decode("ascii")')], CHALLENGE),
    ("ex11_pkce", "the standard base64 alphabet",
     [("base64.urlsafe_b64encode(digest)", "base64.b64encode(digest)")], CHALLENGE),
    ("ex11_pkce", "plain accepted",
     [('params.get("code_challenge_method") != "S256"', 'params.get("code_challenge_method") not in ("S256", "plain")')],
     AUTHORIZE),
    ("ex11_pkce", "a missing method taken as S256",
     [('params.get("code_challenge_method") != "S256"', 'params.get("code_challenge_method", "S256") != "S256"')],
     AUTHORIZE),
    ("ex11_pkce", "the method compared without case",
     [('params.get("code_challenge_method") != "S256"', '(params.get("code_challenge_method") or "").upper() != "S256"')],
     AUTHORIZE),
    ("ex11_pkce", "a method without a challenge let through",
     [('    if not params.get("code_challenge"):\n        return "invalid_request"\n', "")], AUTHORIZE),
    ("ex11_pkce", "the challenge itself accepted as proof",
     [("    return hmac.compare_digest(code_challenge(verifier), challenge)",
       "    return verifier == challenge or hmac.compare_digest(code_challenge(verifier), challenge)")], VERIFY),
    ("ex11_pkce", "the verifier trimmed before hashing",
     [("compare_digest(code_challenge(verifier), challenge)", "compare_digest(code_challenge(verifier.strip()), challenge)")],
     VERIFY),
    ("ex11_pkce", "the verifier compared without case",
     [("compare_digest(code_challenge(verifier), challenge)", "compare_digest(code_challenge(verifier.lower()), challenge)")],
     VERIFY),
]


@pytest.mark.parametrize(("exercise_id", "name", "edits", "failing_check"), WRONG,
                         ids=[f"{w[0]}:{w[1]}" for w in WRONG])
def test_plausible_wrong_answer_is_rejected_on_20_seeds(tmp_path: Path, exercise_id: str, name: str, edits: Any,
                                                        failing_check: str) -> None:
    assert_wrong_answer_rejected(tmp_path, exercise_id, name, edits, failing_check)


def _client_fetches(header_url: str | None, server_url: str) -> list[str]:
    """The URLs the simulator's OAuth client asks for Protected Resource Metadata (a web with no sites:
    every fetch is a 404, so it tries them all)."""
    sim = Simulation(0)
    web = SimulatedWeb(sim)
    client = OAuthClient(web, "client/x", server_url, "x", "http://localhost:1/cb", lambda: "0", sim.now_ms)

    async def main() -> None:
        with pytest.raises(OAuthFailed):
            await client._resource_metadata(header_url)

    sim.run(main)
    host = server_url.split("/")[2] if header_url is None else header_url.split("/")[2]
    return [f"https://{host}{q.path}" for q, _ in web.exchanges]


@pytest.mark.parametrize("kind", ex11_discovery_urls.HEADER_KINDS + ex11_discovery_urls.WELL_KNOWN_KINDS)
def test_prm_urls_agree_with_the_simulators_client(kind: str) -> None:
    header, server = ex11_discovery_urls._prm_case(random.Random(7), kind)
    want = ex11_discovery_urls.expected_prm_urls(header, server)
    named = want[0] if kind in ex11_discovery_urls.HEADER_KINDS else None
    # The client asks a root endpoint's one URI twice (path-aware and root coincide); the list has it once.
    assert list(dict.fromkeys(_client_fetches(named, server))) == want


@pytest.mark.parametrize("kind", ex11_token_check.NONE_KINDS + ex11_token_check.INVALID_KINDS
                         + ex11_token_check.SCOPE_KINDS + ex11_token_check.OK_KINDS)
def test_token_cases_get_the_status_their_check_expects(kind: str) -> None:
    for seed in range(5):
        status = ex11_token_check.expected_status(*ex11_token_check.build_case(random.Random(seed), kind))
        want = 403 if kind in ex11_token_check.SCOPE_KINDS else 200 if kind in ex11_token_check.OK_KINDS else 401
        assert status == want, (kind, seed)


def test_pkce_cases_cover_both_answers() -> None:
    rng = random.Random(3)
    errors = {k: ex11_pkce._Authority(rng).authorize(ex11_pkce._authorize_case(rng, k)).get("error")
              for k in ex11_pkce.AUTHORIZE_KINDS}
    assert errors == {k: None if k == "S256 with a challenge" else "invalid_request" for k in ex11_pkce.AUTHORIZE_KINDS}
    verdicts = {k: ex11_pkce._Authority(rng).redeem(*ex11_pkce._verify_case(rng, k)) for k in ex11_pkce.VERIFY_KINDS}
    assert verdicts == {k: k == "the right verifier" for k in ex11_pkce.VERIFY_KINDS}


def test_cases_differ_from_seed_to_seed() -> None:
    for kind in ex11_discovery_urls.AS_KINDS:
        issuers = {ex11_discovery_urls._as_case(random.Random(s), kind) for s in range(6)}
        assert len(issuers) > 1, kind
