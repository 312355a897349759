"""What an exercise is: declarative data plus check functions (course exercises, chapters 01–04).

The idea comes from *Learn Git Branching*: a level is data (start state, goal, hints, solution) and a
checker compares what the learner built with the goal. Here an :class:`Exercise` names

* the spec rules it teaches, the functions the learner writes, and escalating :class:`Hint` s that
  cite those rules (a hint explains the rule; it never shows the check's code);
* a tuple of :class:`Check` s. A check receives a :class:`CheckContext` holding a handle on the
  learner's process and a ``random.Random`` seeded for this run, builds its inputs, calls the
  learner's functions and raises :class:`CheckFailed` with an explanation in MCP's words — and the rule
  that was broken — when the answer is wrong.

**Coverage by construction**: a check does not draw *what kind* of case to try. It walks a fixed list
of case kinds (:data:`Check.kinds`), one per rule or mistake it is about, on every seed; the seed only
picks surface values (names, ids, amounts, versions). So every seed tries every kind, and a wrong
answer that fails on one seed fails on all of them. Every failure names its seed and case kind.
"""

from __future__ import annotations

import contextlib
import hashlib
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from mcp_sim.protocol import rulebook

SEEDS_PER_CHECK: Final = 2
"""How many seeded cases each check tries by default."""


class CheckFailed(Exception):
    """Raised by a check when the learner's answer is wrong; the message is the explanation.

    The three parts of a failure are kept apart because they are shown at different times:

    * ``explanation`` — what was wrong, in words ("your function answered a notification"); shown at
      once. It names what the learner's code did, never the right answer;
    * ``case`` — the input that failed (the smallest the check found), shown at once with the rule,
      so the learner can reproduce it;
    * ``expected`` — the right answer for that case, shown only with the last hint: seeing the answer
      first teaches copying it, not the rule.

    ``rule`` is the rule the answer broke when it is not the check's own (one check can catch several
    mistakes, and the learner should read about the one they made): a rulebook id, or during the move
    to the rulebook the rule's words."""

    def __init__(self, explanation: str, rule: str = "", *, case: str = "", expected: str = "") -> None:
        super().__init__(explanation)
        self.rule = rule
        self.case = case
        self.expected = expected


def cite_rule(rule: str) -> str:
    """A rule as the learner reads it: a rulebook id becomes its citation (strength, words, source),
    any other text is shown as it is."""
    if rule and rulebook.exists(rule):
        return rulebook.get(rule).cite()
    return rule


@dataclass(frozen=True)
class Hint:
    """One step of help. ``rule`` names the spec rule the hint is about."""

    text: str
    rule: str = ""

    def __str__(self) -> str:
        return f"{self.text} (Rule: {cite_rule(self.rule)})" if self.rule else self.text


class Learner(Protocol):
    """The narrow interface a check has on the learner's code: call a function by name with JSON
    data (functions of the grader may be passed too; the learner's code calls them back)."""

    def call(self, name: str, args: Sequence[Any], *, return_args: bool = False) -> Any: ...

    def observed(self) -> list[dict[str, Any]]: ...

    def fresh(self) -> contextlib.AbstractContextManager[Learner]: ...


@dataclass(frozen=True)
class CheckContext:
    """What a check gets: the learner's process and a generator seeded for this one case."""

    learner: Learner
    rng: random.Random
    seed: int

    def function(self, name: str) -> Callable[..., Any]:
        """A stand-in for the learner's function ``name``: calling it runs the learner's code in the
        learner's process. A missing function is reported when it is called."""
        learner = self.learner

        def call(*args: Any) -> Any:
            return learner.call(name, args)

        return call

    def call_and_inspect(self, name: str, args: Sequence[Any]) -> tuple[Any, list[Any]]:
        """Call the learner's ``name(*args)`` and also get the arguments back as they were *after* the
        call, to see whether the learner's code changed its caller's data."""
        value, after = self.learner.call(name, args, return_args=True)
        return value, list(after)

    def observed(self) -> list[dict[str, Any]]:
        """Library calls the learner's last call made that the exercise observes (see ``observe``)."""
        return self.learner.observed()

    def fresh_process(self) -> contextlib.AbstractContextManager[Learner]:
        """A second learner process with nothing shared with the first (another hash seed, no module
        state): what a server restarted, or another replica, would be."""
        return self.learner.fresh()

    @staticmethod
    def expect(condition: bool, explanation: str, rule: str = "", *, case: str = "", expected: str = "") -> None:
        """Fail with ``explanation`` unless ``condition`` holds (the arguments of :class:`CheckFailed`)."""
        if not condition:
            raise CheckFailed(explanation, rule, case=case, expected=expected)


@dataclass(frozen=True)
class Check:
    """One property of a correct solution, tested on several seeded cases.

    ``rule`` is the spec rule the property comes from, ``hint`` a sentence shown when the check fails
    (it says what to compare, never the code). ``kinds`` are the case kinds the check tries on every
    seed, in order; ``run(ctx, kind)`` raises :class:`CheckFailed` for a wrong answer.
    """

    name: str
    rule: str
    run: Callable[[CheckContext, str], None]
    kinds: tuple[str, ...]
    hint: str = ""
    seeds: int = SEEDS_PER_CHECK


@dataclass(frozen=True)
class Exercise:
    """An exercise as data: what to implement, which rules it teaches, how it is checked.

    ``forbidden`` lists dotted names (modules or functions) the learner's file may not import because
    they already contain the answer — e.g. ``mcp_sim.protocol.lifecycle`` in the version-negotiation
    exercise. The learner's process refuses such an import when it happens (an import hook), so a
    comment or a docstring naming the module is harmless. ``observe`` names library functions whose
    calls the learner's process records for the checks (e.g. ``hmac.compare_digest``); ``needs`` is
    explained at its field.
    """

    id: str
    title: str
    chapter: str
    rules: tuple[str, ...]
    functions: tuple[str, ...]
    checks: tuple[Check, ...]
    hints: tuple[Hint, ...]
    summary: str = ""
    forbidden: tuple[str, ...] = field(default=())
    observe: tuple[str, ...] = field(default=())
    needs: tuple[str, ...] = field(default=())
    """Public modules a solution may import although their own imports reach a forbidden module (the
    capstone's ``Server`` needs ``mcp_sim.security.identity``). Under operating-system isolation every
    forbidden module is *absent* from the learner's view except what these need
    (:mod:`mcp_sim.grading.isolation`)."""

    @property
    def starter_name(self) -> str:
        return f"{self.id}/starter.py"

    @property
    def reference_name(self) -> str:
        return f"solutions/{self.id}.py"


def check_seeds(exercise_id: str, check_name: str, count: int = SEEDS_PER_CHECK, base: int = 0) -> list[int]:
    """The seeds a check runs on: derived from the exercise, the check and ``base``, so they are the
    same on every machine and every run, and a different ``base`` gives fresh cases."""
    out = []
    for i in range(count):
        digest = hashlib.sha256(f"{exercise_id}|{check_name}|{base}|{i}".encode()).digest()
        out.append(int.from_bytes(digest[:4], "big"))
    return out
