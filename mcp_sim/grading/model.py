"""What an exercise is: declarative data plus check functions (course exercises, chapters 01–04).

The idea comes from *Learn Git Branching*: a level is data (start state, goal, hints, solution) and a
checker compares what the learner built with the goal. Here an :class:`Exercise` names

* the spec rules it teaches, the functions the learner writes, and escalating :class:`Hint` s that
  cite those rules (a hint explains the rule; it never shows the check's code);
* a tuple of :class:`Check` s. A check receives a :class:`CheckContext` holding the learner's module
  and a ``random.Random`` seeded for this run, builds fresh inputs from it, calls the learner's
  functions and raises :class:`CheckFailed` with an explanation in MCP's words when the answer is
  wrong.

Every check runs on several seeds (:func:`check_seeds`), so an answer hard-coded for one set of inputs
fails on the others, and every failure names its seed so it can be reproduced.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Final

SEEDS_PER_CHECK: Final = 5
"""How many seeded cases each check tries by default."""


class CheckFailed(Exception):
    """Raised by a check when the learner's answer is wrong; the message is the explanation."""


@dataclass(frozen=True)
class Hint:
    """One step of help. ``rule`` names the spec rule the hint is about."""

    text: str
    rule: str = ""

    def __str__(self) -> str:
        return f"{self.text} (Rule: {self.rule})" if self.rule else self.text


@dataclass(frozen=True)
class CheckContext:
    """What a check gets: the learner's module and a generator seeded for this one case."""

    module: ModuleType
    rng: random.Random
    seed: int

    def function(self, name: str) -> Callable[..., Any]:
        """The learner's function ``name``, or a readable failure when it is missing."""
        fn = getattr(self.module, name, None)
        if fn is None:
            raise CheckFailed(f"Your file does not define a function named {name}(). Keep the name the "
                              f"starter file uses: the grader calls it by that name.")
        if not callable(fn):
            raise CheckFailed(f"{name} in your file is a {type(fn).__name__}, not a function.")
        return fn  # type: ignore[no-any-return]

    @staticmethod
    def expect(condition: bool, explanation: str) -> None:
        """Fail with ``explanation`` unless ``condition`` holds."""
        if not condition:
            raise CheckFailed(explanation)


@dataclass(frozen=True)
class Check:
    """One property of a correct solution, tested on several seeded cases.

    ``rule`` is the spec rule the property comes from (shown with every result), ``hint`` a sentence
    shown when the check fails. ``run`` raises :class:`CheckFailed` for a wrong answer.
    """

    name: str
    rule: str
    run: Callable[[CheckContext], None]
    hint: str = ""
    seeds: int = SEEDS_PER_CHECK


@dataclass(frozen=True)
class Exercise:
    """An exercise as data: what to implement, which rules it teaches, how it is checked.

    ``forbidden`` lists dotted names (modules or attributes) the learner's file may not use because
    they already contain the answer — e.g. ``mcp_sim.protocol.lifecycle`` in the version-negotiation
    exercise. The grader finds them by reading the file's imports, not by running it.
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
