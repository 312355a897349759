"""What ``mcp-sim check`` reports: findings, each tied to a rule of the rulebook, and the report.

A finding is one broken rule seen in one place of the recorded run. It names the rule by its
rulebook id, carries the rule's strength (folded to ``MUST``/``SHOULD``/``MAY``: a ``MUST NOT`` is
broken at ``MUST`` strength), a category that says which part of the protocol it is about, the
revision the session spoke, a message for a person, and evidence: the ``seq`` of the trace event
where it shows (the HTML page links there).

The report passes exactly when no ``MUST`` finding is left; ``SHOULD`` and ``MAY`` findings are
advice, and the exit status of ``mcp-sim check`` ignores them.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict

from mcp_sim.protocol import rulebook

Category = Literal["framing", "jsonrpc", "lifecycle", "version", "capabilities", "errors", "schema",
                   "cancellation", "robustness", "timing"]
CATEGORIES: Final[tuple[str, ...]] = ("framing", "jsonrpc", "lifecycle", "version", "capabilities", "errors",
                                      "schema", "cancellation", "robustness", "timing")
FindingStrength = Literal["MUST", "SHOULD", "MAY"]


def folded_strength(rule_id: str) -> FindingStrength:
    """The strength a broken rule is reported at: ``MUST NOT`` → ``MUST``, ``SHOULD NOT`` → ``SHOULD``."""
    strength = rulebook.get(rule_id).strength
    return "MUST" if strength.startswith("MUST") else "SHOULD" if strength.startswith("SHOULD") else "MAY"


class Finding(BaseModel):
    """One rule seen broken at one place of the run."""

    model_config = ConfigDict(frozen=True)

    rule: str
    strength: FindingStrength
    category: Category
    era: str
    """The revision the session spoke (``2025-11-25``, ``2026-07-28`` …)."""
    message: str
    evidence: dict[str, Any]
    """At least ``seq``: the trace event that shows it (``response_seq`` when a response is involved)."""

    @classmethod
    def of(cls, rule: str, category: Category, era: str, message: str, seq: int | None,
           **evidence: Any) -> Finding:
        """A finding of ``rule`` at its rulebook strength (an unknown id fails here, not in a report)."""
        return cls(rule=rule, strength=folded_strength(rule), category=category, era=era, message=message,
                   evidence={"seq": seq, **evidence})


class EraSummary(BaseModel):
    """How one era went: the revision spoken, whether it passed, its findings counted by strength."""

    revision: str | None
    passed: bool
    findings: dict[str, int]
    requests: int
    skipped: str | None = None
    """Why this era was not checked (the server does not speak it), or ``None``."""


class CheckReport(BaseModel):
    """The JSON report: ``{"passed": bool, "eras": {...}, "findings": [...]}`` and the run's facts."""

    passed: bool
    eras: dict[str, EraSummary]
    findings: list[Finding]
    seed: int
    nemesis: list[str]
    schedule: list[str]
    """The nemesis actions in the order they ran: the same seed gives the same schedule."""
    target: str

    @classmethod
    def build(cls, findings: list[Finding], eras: dict[str, EraSummary], *, seed: int, nemesis: list[str],
              schedule: list[str], target: str) -> CheckReport:
        ordered = sorted(findings, key=lambda f: (f.evidence.get("seq") or 0, f.rule, f.message))
        return cls(passed=not any(f.strength == "MUST" for f in ordered), eras=eras, findings=ordered,
                   seed=seed, nemesis=nemesis, schedule=schedule, target=target)

    @property
    def exit_code(self) -> int:
        """``1`` exactly when a MUST is broken, else ``0``."""
        return 0 if self.passed else 1

    def by_rule(self) -> list[tuple[str, str, str, int]]:
        """(rule, strength, era, count) rows for the summary table, most serious first."""
        counts = Counter((f.rule, f.strength, f.era) for f in self.findings)
        order = {"MUST": 0, "SHOULD": 1, "MAY": 2}
        return sorted(((r, s, e, n) for (r, s, e), n in counts.items()), key=lambda row: (order[row[1]], row))


def count_by_strength(findings: list[Finding]) -> dict[str, int]:
    """``{"MUST": n, "SHOULD": n, "MAY": n}``."""
    counts = Counter(f.strength for f in findings)
    return {s: counts.get(s, 0) for s in ("MUST", "SHOULD", "MAY")}
