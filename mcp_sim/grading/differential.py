"""Differential checks: the learner's function against the simulator's own, over a generated input space.

A fixed case kind (see :mod:`mcp_sim.grading.model`) tries the mistakes its author thought of. A
*differential* check tries the mistakes nobody thought of: it generates many inputs over every axis the
exercise names — boundaries included — asks the simulator's own implementation (the **oracle**) for the
right answer to each, asks the learner's function too, and compares the two by *meaning* (JSON as JSON,
sets as sets, any cursor the README leaves free). When they differ it does not stop at the first
difference: it **shrinks** the input to the smallest one that still tells the two answers apart, which is
the case a learner can reason about, and reports it with the rule that case breaks.

Generation and shrinking are Hypothesis's (``hypothesis.find``): the strategy says what inputs look like,
the check's seeded generator drives it, so the same seed gives the same cases and the same smallest
failure on every machine. Nothing of Hypothesis's example database is used.

Where the input space is small and finite (a status code × a body shape, the subsets of four versions),
:func:`exhaustive` tries every input on every seed instead and reports the one with the shortest
description: nothing then depends on the seed but the surface values.

A differential check is an ordinary :class:`~mcp_sim.grading.model.Check` whose run function calls
:func:`differential`; it follows the readable fixed kinds in the exercise's list of checks::

    def check_generated(ctx, kind):
        differential(ctx, lists_and_page_sizes(),
                     learner=lambda case: ctx.learner.call("list_page", case.args()),
                     oracle=lambda case: pagination.page(case.items, case.cursor, case.size),
                     compare=same_page, describe=str)

``compare(case, got, want)`` returns ``None`` when ``got`` is an acceptable answer and otherwise a
:class:`Mismatch`: what is wrong in the learner's words, the rule it breaks, and the expected value —
which is kept for the last hint, never shown with the first failure.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final, TypeVar

from hypothesis import HealthCheck, Phase, find, settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample

from mcp_sim.grading.learner_code import LearnerError
from mcp_sim.grading.model import CheckContext, CheckFailed

T = TypeVar("T")

EXAMPLES: Final = 40
"""Generated inputs per differential check and seed (shrinking a failure adds more calls)."""

_SETTINGS: Final = settings(max_examples=EXAMPLES, database=None, deadline=None, derandomize=False,
                            suppress_health_check=list(HealthCheck), phases=(Phase.generate, Phase.shrink),
                            report_multiple_bugs=False)


@dataclass(frozen=True)
class Mismatch:
    """Why the learner's answer to one input is not acceptable."""

    explanation: str
    rule: str
    expected: str = ""


class _Stop(Exception):
    """The learner's code ran out of time: no shrinking, report it as it happened."""

    def __init__(self, error: LearnerError) -> None:
        super().__init__(error.description)
        self.error = error


@dataclass
class _Verdict:
    mismatch: Mismatch | None = None


def differential(ctx: CheckContext, inputs: st.SearchStrategy[T], *, learner: Callable[[T], Any],
                 oracle: Callable[[T], Any], compare: Callable[[T, Any, Any], Mismatch | None],
                 describe: Callable[[T], str] = repr, examples: int = EXAMPLES,
                 raises_rule: str = "") -> None:
    """Compare ``learner`` with ``oracle`` on inputs drawn from ``inputs``; raise :class:`CheckFailed`
    naming the smallest input on which they differ.

    ``learner(case)`` calls the learner's code (through ``ctx.learner``); an exception there is a
    difference too (reported under ``raises_rule``, or the rule the check names), a time limit is
    reported at once without shrinking. ``oracle(case)`` is the simulator's answer; it must not
    raise. ``examples`` bounds the generated inputs per seed."""
    verdicts: dict[str, _Verdict] = {}

    def differs(case: T) -> bool:
        want = oracle(case)
        try:
            got = learner(case)
        except LearnerError as exc:
            if exc.status == "timeout":
                raise _Stop(exc) from None
            verdicts[describe(case)] = _Verdict(Mismatch(f"Your function raised an exception: {exc.description}",
                                                         raises_rule))
            return True
        except CheckFailed as exc:  # not data, or a grader callback found the answer wrong
            verdicts[describe(case)] = _Verdict(Mismatch(str(exc), exc.rule, exc.expected))
            return True
        mismatch = compare(case, got, want)
        if mismatch is not None:
            verdicts[describe(case)] = _Verdict(mismatch)
        return mismatch is not None

    chosen = _SETTINGS if examples == EXAMPLES else settings(_SETTINGS, max_examples=examples)
    try:
        smallest = find(inputs, differs, settings=chosen, random=random.Random(ctx.seed))
    except NoSuchExample:
        return
    except _Stop as stop:
        raise stop.error from None
    text = describe(smallest)
    verdict = verdicts.get(text) or _Verdict()
    if verdict.mismatch is None:  # shrinking may end on an input seen before; ask once more
        differs(smallest)
        verdict = verdicts.get(text) or _Verdict(Mismatch("Your answer differs from the simulator's.", ""))
    mismatch = verdict.mismatch
    assert mismatch is not None
    raise CheckFailed(f"{mismatch.explanation}\nThe smallest input found that shows it: {text}", mismatch.rule,
                      case=text, expected=mismatch.expected)


def exhaustive(ctx: CheckContext, cases: Iterable[T], *, learner: Callable[[T], Any], oracle: Callable[[T], Any],
               compare: Callable[[T, Any, Any], Mismatch | None], describe: Callable[[T], str] = repr,
               raises_rule: str = "") -> None:
    """:func:`differential` for an input space small enough to try whole: every case in ``cases`` is
    asked on every seed (so no variation depends on the seed), and the failure reported is the one with
    the shortest description — the smallest input that tells the learner's answer from the oracle's.

    Use it where the axes are few and finite (a status code × a body shape, subsets of four versions):
    the seed still picks the surface values inside each case (ids, names), but never which cases run."""
    best: tuple[str, Mismatch] | None = None
    for case in cases:
        want = oracle(case)
        try:
            got = learner(case)
        except LearnerError as exc:
            if exc.status == "timeout":
                raise
            mismatch: Mismatch | None = Mismatch(f"Your function raised an exception: {exc.description}", raises_rule)
        except CheckFailed as exc:
            mismatch = Mismatch(str(exc), exc.rule, exc.expected)
        else:
            mismatch = compare(case, got, want)
        if mismatch is not None:
            text = describe(case)
            if best is None or len(text) < len(best[0]):
                best = (text, mismatch)
    if best is not None:
        text, mismatch = best
        raise CheckFailed(f"{mismatch.explanation}\nThe smallest input found that shows it: {text}", mismatch.rule,
                          case=text, expected=mismatch.expected)


# --- comparing by meaning ------------------------------------------------------------------------------

def canonical(value: Any) -> Any:
    """``value`` with every string that is a JSON object or array replaced by its parsed form, so two
    texts of one JSON document (other key order, other separators) compare equal."""
    if isinstance(value, str):
        text = value.strip()
        if text[:1] in "{[" and text[-1:] in "}]":
            try:
                return canonical(json.loads(text))
            except ValueError:
                return value
        return value
    if isinstance(value, dict):
        return {k: canonical(v) for k, v in value.items()}
    if isinstance(value, list):
        return [canonical(v) for v in value]
    return value


def same_json(got: Any, want: Any) -> bool:
    """Equal as JSON data: object key order does not matter, list order does, ``1`` is not ``True``."""
    return _strict(got) == _strict(want)


def _strict(value: Any) -> Any:
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, dict):
        return {k: _strict(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_strict(v) for v in value]
    return value


def show(value: Any, limit: int = 300) -> str:
    """A value as a learner reads it in a message: compact JSON, cut at ``limit`` characters."""
    try:
        text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[:limit - 1] + "…"
