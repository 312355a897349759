"""Every security lab: the attack succeeds against ``vulnerable`` and fails against ``fixed``,
over several seeds (names, amounts and paths come from the seeded generator), and its trace marks
the attack's messages."""

from __future__ import annotations

import pytest

from mcp_sim.scenarios.security import LABS, run_lab

SEEDS = (0, 1, 7, 23)
EXPECTED = {
    "separate-connections", "host-approval-not-authorization", "annotations-trusted", "list-cache-shared",
    "requeststate-tampering", "requeststate-replay", "stdio-stdout-contamination", "tool-poisoning", "rug-pull",
    "tool-shadowing", "token-passthrough", "confused-deputy", "capabilities-cached", "sampling-unbounded",
    "roots-not-sandbox", "elicitation-as-approval", "dns-rebinding", "state-handle-hijacking",
}


def test_registry_has_every_lab() -> None:
    assert set(LABS) == EXPECTED


# What the attacker obtained or caused, read from the evidence: a non-empty value means "it worked".
OBTAINED = {
    "separate-connections": lambda e: e["stolen"],
    "host-approval-not-authorization": lambda e: e["attacker_got"],
    "annotations-trusted": lambda e: e["notes_before"] - e["notes_after"],
    "list-cache-shared": lambda e: e["leaked"],
    "requeststate-tampering": lambda e: [p for p in e["payments"] if p["amount"] != e["confirmed"]["amount"]],
    "requeststate-replay": lambda e: e["payments"][1:],
    "stdio-stdout-contamination": lambda e: e["client_got"] == e["forged"] or e["invalid_frames"],
    "tool-poisoning": lambda e: e["received_by_attacker"],
    "rug-pull": lambda e: e["received_by_attacker"],
    "tool-shadowing": lambda e: e["stolen"],
    "token-passthrough": lambda e: e["obtained"],
    "confused-deputy": lambda e: e["repos_obtained"],
    "capabilities-cached": lambda e: e["sampled_after_switch_off"],
    "sampling-unbounded": lambda e: e["tokens"] > e["limit"],
    "roots-not-sandbox": lambda e: e["key_taken"],
    "elicitation-as-approval": lambda e: e["transfers"],
    "dns-rebinding": lambda e: e["stolen"],
    "state-handle-hijacking": lambda e: e["stolen"],
}


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
    assert "succeeded" in vulnerable.explanation and "failed" in fixed.explanation
    assert LABS[lab].facts.boundary in fixed.explanation


@pytest.mark.parametrize("lab", ["requeststate-tampering", "separate-connections", "host-approval-not-authorization"])
def test_runs_are_deterministic_and_seeds_vary_the_attack(lab: str) -> None:
    a, b, c = run_lab(lab, "vulnerable", 5), run_lab(lab, "vulnerable", 5), run_lab(lab, "vulnerable", 6)
    assert a.evidence == b.evidence and a.explanation == b.explanation
    assert [e.to_json() for e in a.trace.events] == [e.to_json() for e in b.trace.events]
    assert a.evidence != c.evidence


def test_unknown_lab_names_the_labs() -> None:
    with pytest.raises(KeyError, match="separate-connections"):
        run_lab("no-such-lab")
