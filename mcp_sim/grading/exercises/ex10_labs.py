"""What chapter 10's exercises share: a security lab run with the learner's defence plugged in.

In these exercises the learner writes the *fix* of a security lab (:mod:`mcp_sim.scenarios.security`).
The lab itself runs here, in the grader's process, where the learner's code cannot reach it: its
story receives a defence value built around the learner's functions, and every decision the defence
takes is a call across the process boundary (:class:`Asker`), with JSON data only. The verdict is read
from the lab's outcome — did the attacker obtain anything, did the user's own work still succeed —
and the expectation is the lab's own ``fixed`` defence run on the same seed and variant
(:func:`expect_lab_holds`), never a second copy of the rule.

A learner's function that raises or times out inside a lab run must not pass for a refusal (a server
turns a failing handler into an error result, which looks like "denied"): :class:`Asker` keeps the
first failure and raises it again when the run is over.
"""

from __future__ import annotations

from typing import Any

from mcp_sim.grading.learner_code import LearnerError
from mcp_sim.grading.model import CheckContext, CheckFailed
from mcp_sim.scenarios.security import LABS
from mcp_sim.security.lab import LabResult


class Asker:
    """Calls the learner's functions from inside a lab run and remembers the first failure."""

    def __init__(self, ctx: CheckContext) -> None:
        self.ctx = ctx
        self.failure: Exception | None = None

    def call(self, name: str, *args: Any) -> Any:
        """The learner's ``name(*args)``; raises :class:`LearnerError` or :class:`CheckFailed` (also kept)."""
        try:
            return self.ctx.learner.call(name, args)
        except (LearnerError, CheckFailed) as exc:
            if self.failure is None:
                self.failure = exc
            raise

    def ask(self, name: str, *args: Any, fallback: Any) -> Any:
        """The learner's ``name(*args)``, or ``fallback`` when it failed (the failure is raised later)."""
        try:
            return self.call(name, *args)
        except (LearnerError, CheckFailed):
            return fallback

    def wrong(self, explanation: str, rule: str = "") -> None:
        """Note an answer of the wrong shape seen inside the run (reported when the run is over)."""
        if self.failure is None:
            self.failure = CheckFailed(explanation, rule)

    def raise_failure(self) -> None:
        if self.failure is not None:
            raise self.failure


def lab_seed(ctx: CheckContext) -> int:
    """The lab's seed for this case: drawn from the case's generator, so names, amounts and paths
    differ from case to case and from seed to seed."""
    return int(ctx.rng.randrange(1_000_000))


def variant_text(lab: str, variant: str) -> str:
    """How a variant is described to the learner."""
    if variant == "main":
        return f"the main attack of the {lab!r} lab"
    return f"the {lab!r} lab's variant {variant!r} ({LABS[lab].variants[variant]})"


def run_learner_lab(asker: Asker, lab: str, variant: str, seed: int, defence: Any, rule: str) -> LabResult:
    """Run ``lab`` with ``defence`` (built around the learner's functions); raise the learner's failure,
    if any, once the run is over. A run that cannot finish with the learner's answers in it (an answer
    the lab's world cannot use) is a failed case naming ``rule``, never a crash of the grader."""
    try:
        result = LABS[lab].run_with(defence, "fixed", seed, variant)
    except (CheckFailed, LearnerError):
        raise
    except Exception as exc:  # the lab's world choked on an answer: report it as the learner's failure
        asker.raise_failure()
        raise CheckFailed(f"In {variant_text(lab, variant)} (lab seed {seed}) the lab could not finish with your "
                          f"code in it: {type(exc).__name__}: {exc}", rule) from None
    asker.raise_failure()
    return result


def expect_lab_holds(result: LabResult, rule: str, *, your: str) -> None:
    """Compare a run with the learner's defence against the lab's own ``fixed`` defence on the same seed
    and variant: the attack must fail where the fix makes it fail, and the legitimate work must still
    succeed where the fix lets it. ``your`` names the learner's part ("your review")."""
    if not result.succeeded and result.legitimate:
        return  # the best outcome there is: nothing to compare
    lab = LABS[result.lab]
    expected = lab.run("fixed", result.seed, result.variant)
    where = f"In {variant_text(result.lab, result.variant)} (lab seed {result.seed})"
    if result.succeeded and not expected.succeeded:
        raise CheckFailed(f"{where} the attack still worked with {your}: the attacker {result.obtained}. "
                          f"The lab's attacker: {lab.facts.attacker}, who controls {lab.facts.controls}.", rule)
    if expected.legitimate and not result.legitimate:
        raise CheckFailed(f"{where} the attack failed, but so did the user's own legitimate work: {your} also "
                          f"refused what it must allow. Blocking everything is not a fix. (The attack was "
                          f"stopped because {result.stopped_by}.)", rule)


def lab_kinds(*labs: str) -> tuple[str, ...]:
    """One case kind per attack of each lab: ``"lab: variant"`` for the main attack and every variant."""
    return tuple(f"{lab}: {variant}" for lab in labs for variant in ("main", *LABS[lab].variants))


def split_kind(kind: str) -> tuple[str, str]:
    """``("tool-poisoning", "title")`` from ``"tool-poisoning: title"``."""
    lab, _, variant = kind.partition(": ")
    return lab, variant


def checked(value: Any, kind: type | tuple[type, ...], function: str, what: str, asker: Asker) -> bool:
    """Whether ``value`` has the type the exercise asks for; otherwise note a wrong-shape failure."""
    if isinstance(value, kind) and not (isinstance(value, bool) and kind is int):
        return True
    asker.wrong(f"{function}() must return {what}; it returned {value!r}.")
    return False

