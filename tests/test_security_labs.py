"""Every security lab: the attack succeeds against ``vulnerable`` and fails against ``fixed``, over
several seeds (names, amounts and paths come from the seeded generator), for the main attack and for
each variant a narrower fix would miss; the legitimate work in the same run still succeeds under
``fixed``; and the trace marks the attack's messages."""

from __future__ import annotations

import pytest

from mcp_sim.scenarios.security import LABS, run_lab

SEEDS = (0, 1, 7, 23)
EXPECTED = {
    "separate-connections", "host-approval-not-authorization", "annotations-trusted", "list-cache-shared",
    "requeststate-tampering", "requeststate-replay", "stdio-stdout-contamination", "tool-poisoning", "rug-pull",
    "name-collision", "tool-shadowing", "token-passthrough", "confused-deputy", "capabilities-cached",
    "sampling-unbounded", "roots-not-sandbox", "elicitation-as-approval", "dns-rebinding", "state-handle-hijacking",
    "local-server-compromise", "elicitation-phishing", "prompt-injection-results", "ssrf-metadata-discovery",
    "redirect-uri-manipulation", "as-mix-up", "session-hijacking",
    "sampling-injection", "sampling-context-leak", "behaviour-rug-pull", "elicitation-url-handling",
    "localhost-redirect-impersonation", "cimd-trust-policy", "cimd-ssrf", "authorization-url-validation",
    "scope-minimization",
}


def test_registry_has_every_lab() -> None:
    assert set(LABS) == EXPECTED


# What the attacker obtained or caused, read from the evidence: a non-empty value means "it worked".
OBTAINED = {
    "separate-connections": lambda e: e["stolen"],
    "host-approval-not-authorization": lambda e: e["attacker_got"],
    "annotations-trusted": lambda e: e["notes_before"] - e["notes_after"],
    "list-cache-shared": lambda e: e["leaked"],
    "requeststate-tampering": lambda e: [p for p in e["payments"]
                                        if (p["payee"], p["amount"]) != (e["confirmed"]["payee"],
                                                                         e["confirmed"]["amount"])],
    "requeststate-replay": lambda e: len({p["invoice"] for p in e["payments"]}) < len(e["payments"]),
    "stdio-stdout-contamination": lambda e: e["client_got"] == e["forged"] or e["invalid_frames"],
    "tool-poisoning": lambda e: e["received_by_attacker"],
    "rug-pull": lambda e: e["received_by_attacker"],
    "name-collision": lambda e: e["stolen"],
    "tool-shadowing": lambda e: e["copied_to_attacker"],
    "token-passthrough": lambda e: e["obtained"],
    "confused-deputy": lambda e: e["repos_obtained"],
    "capabilities-cached": lambda e: e["answered_after_switch_off"],
    "sampling-unbounded": lambda e: e["characters"] > 4 * e["limit"] or e["other_server_starved"],
    "roots-not-sandbox": lambda e: e["key_taken"],
    "elicitation-as-approval": lambda e: e["transfers"],
    "dns-rebinding": lambda e: e["stolen"],
    "state-handle-hijacking": lambda e: e["stolen"],
    "local-server-compromise": lambda e: e["received_by_collector"],
    "elicitation-phishing": lambda e: e["received_by_server"],
    "prompt-injection-results": lambda e: e["leaked"],
    "ssrf-metadata-discovery": lambda e: e["internal_requests"],
    "redirect-uri-manipulation": lambda e: e["files_obtained"],
    "as-mix-up": lambda e: e["files_obtained"],
    "session-hijacking": lambda e: e["stolen"] or e["injected"],
    "sampling-injection": lambda e: e["forwarded_to_attacker"],
    "sampling-context-leak": lambda e: e["leaked"],
    "behaviour-rug-pull": lambda e: e["leaked"],
    "elicitation-url-handling": lambda e: e["stolen"] or e["unasked_requests"],
    "localhost-redirect-impersonation": lambda e: e["files_obtained"],
    "cimd-trust-policy": lambda e: e["files_obtained"],
    "cimd-ssrf": lambda e: e["console_actions"],
    "authorization-url-validation": lambda e: e["tokens_leaked"] or e["ran"],
    "scope-minimization": lambda e: "files:admin" in e["leaked_token_scopes"] or "files:*" in e["leaked_token_scopes"],
}

# Variants the vulnerable configuration happens to resist too (the fixed one must still hold).
VULNERABLE_RESISTS = {("name-collision", "connected-first"), ("list-cache-shared", "other-tenant")}


def _cases() -> list[tuple[str, str]]:
    return [(lab, variant) for lab in sorted(EXPECTED) for variant in ("main", *LABS[lab].variants)]


def test_every_lab_has_at_least_two_variants() -> None:
    assert all(len(LABS[lab].variants) >= 2 for lab in EXPECTED), {lab: list(LABS[lab].variants) for lab in EXPECTED}


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("lab", sorted(EXPECTED))
def test_attack_succeeds_when_vulnerable_and_fails_when_fixed(lab: str, seed: int) -> None:
    vulnerable = run_lab(lab, "vulnerable", seed)
    assert vulnerable.succeeded, vulnerable.explanation
    assert OBTAINED[lab](vulnerable.evidence), vulnerable.evidence
    assert vulnerable.attack_events(), "the trace must mark the attack"
    fixed = run_lab(lab, "fixed", seed)
    assert not fixed.succeeded, fixed.explanation
    assert not OBTAINED[lab](fixed.evidence), fixed.evidence
    assert fixed.attack_events(), "the trace must mark the attempted attack"
    assert fixed.legitimate, f"the fix broke the legitimate work: {fixed.evidence}"
    assert "succeeded" in vulnerable.explanation and "failed" in fixed.explanation
    assert LABS[lab].facts.boundary in fixed.explanation


@pytest.mark.parametrize("seed", (2, 11))
@pytest.mark.parametrize(("lab", "variant"), [c for c in _cases() if c[1] != "main"])
def test_every_variant_is_defeated_by_the_fix(lab: str, variant: str, seed: int) -> None:
    fixed = run_lab(lab, "fixed", seed, variant)
    assert not fixed.succeeded and not OBTAINED[lab](fixed.evidence), fixed.evidence
    assert fixed.legitimate, fixed.evidence
    vulnerable = run_lab(lab, "vulnerable", seed, variant)
    if (lab, variant) not in VULNERABLE_RESISTS:
        assert vulnerable.succeeded and OBTAINED[lab](vulnerable.evidence), vulnerable.evidence


def test_every_lab_states_its_threat_model() -> None:
    for lab in LABS.values():
        facts = lab.facts
        for part in (facts.attacker, facts.controls, facts.boundary, facts.fix, facts.not_covered, facts.rule):
            assert len(part) > 20, (lab.name, part)
        result = run_lab(lab.name, "fixed", 0)
        assert facts.controls in result.explanation and facts.not_covered in result.explanation


def test_requeststate_lab_does_not_cast_a_network_attacker() -> None:
    facts = LABS["requeststate-tampering"].facts
    assert "on the path" not in facts.attacker and "network attacker" in facts.not_covered


def test_shadowing_is_not_stopped_by_namespacing_alone() -> None:
    """The vulnerable configuration of tool-shadowing already namespaces tools (the default Host)."""
    result = run_lab("tool-shadowing", "vulnerable", 3)
    assert result.succeeded
    assert not result.evidence["calls_to_attacker_server"]  # it never needed a call of its own


@pytest.mark.parametrize("lab", ["requeststate-tampering", "separate-connections", "host-approval-not-authorization"])
def test_runs_are_deterministic_and_seeds_vary_the_attack(lab: str) -> None:
    a, b, c = run_lab(lab, "vulnerable", 5), run_lab(lab, "vulnerable", 5), run_lab(lab, "vulnerable", 6)
    assert a.evidence == b.evidence and a.explanation == b.explanation
    assert [e.to_json() for e in a.trace.events] == [e.to_json() for e in b.trace.events]
    assert a.evidence != c.evidence


def test_unknown_lab_and_variant_are_named() -> None:
    with pytest.raises(KeyError, match="separate-connections"):
        run_lab("no-such-lab")
    with pytest.raises(KeyError, match="payee-only"):
        run_lab("requeststate-tampering", "fixed", 0, "no-such-variant")


def test_every_lab_names_its_layer_and_a_one_line_summary() -> None:
    from mcp_sim.security.lab import LAYERS

    for name, lab in LABS.items():
        assert lab.facts.layer in LAYERS, name
        assert lab.facts.summary.endswith(".") and "\n" not in lab.facts.summary, name
        assert len(lab.facts.summary) <= 100, (name, len(lab.facts.summary))
