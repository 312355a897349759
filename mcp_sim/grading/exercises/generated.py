"""What the generated checks of chapters 10–12 share: the corners of the input space first, then Hypothesis.

A differential check (:func:`mcp_sim.grading.differential.differential`) draws its inputs at random from
the check's seed, so a boundary that only one input in fifty reaches — ``now == exp`` with everything
else valid, an audience one character short — is met on some seeds and missed on others. Coverage must
not depend on the seed: :func:`corners_then_generated` first walks a fixed list of **corner** inputs
(every value of every axis the README names, each with the other axes at their plain valid value, and
the pairs of faults whose order matters), on every seed, in order from the plainest; only then do the
generated inputs follow, to find what nobody listed. A corner that shows a difference is reported as it
is — it is already the smallest input of its kind.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from hypothesis import strategies as st

from mcp_sim.grading.differential import EXAMPLES, Mismatch, differential
from mcp_sim.grading.learner_code import LearnerError
from mcp_sim.grading.model import CheckContext, CheckFailed

T = TypeVar("T")


def corners_then_generated(ctx: CheckContext, corners: Iterable[T], inputs: st.SearchStrategy[T], *,
                           learner: Callable[[T], Any], oracle: Callable[[T], Any],
                           compare: Callable[[T, Any, Any], Mismatch | None], describe: Callable[[T], str] = repr,
                           examples: int = EXAMPLES, raises_rule: str = "") -> None:
    """Compare ``learner`` with ``oracle`` on every corner, then on generated inputs (see
    :func:`~mcp_sim.grading.differential.differential`); the first difference is a :class:`CheckFailed`."""
    for case in corners:
        want = oracle(case)
        text = describe(case)
        try:
            got = learner(case)
        except LearnerError as exc:
            if exc.status == "timeout":
                raise
            raise CheckFailed(f"Your function raised an exception: {exc.description}\nThe input: {text}",
                              raises_rule, case=text) from None
        mismatch = compare(case, got, want)
        if mismatch is not None:
            raise CheckFailed(f"{mismatch.explanation}\nThe smallest input found that shows it: {text}", mismatch.rule,
                              case=text, expected=mismatch.expected)
    differential(ctx, inputs, learner=learner, oracle=oracle, compare=compare, describe=describe,
                 examples=examples, raises_rule=raises_rule)
