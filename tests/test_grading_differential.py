"""``differential``: the smallest input that tells the learner's answer from the oracle's, named with the
rule of the comparison that told them apart; agreement on every generated input passes."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import strategies as st

from mcp_sim.grading.differential import Mismatch, differential
from mcp_sim.grading.model import CheckContext, CheckFailed


def compare(_case: int, got: Any, want: Any) -> Mismatch | None:
    return None if got == want else Mismatch(f"answered {got!r}", "pagination.invalid-cursor-32602")


def context(seed: int) -> CheckContext:
    return CheckContext(learner=None, rng=random.Random(seed), seed=seed)  # type: ignore[arg-type]


def test_the_smallest_differing_input_is_named() -> None:
    with pytest.raises(CheckFailed) as failed:
        differential(context(0), st.integers(0, 1000), learner=lambda n: n if n < 37 else -n, oracle=lambda n: n,
                     compare=compare)
    assert failed.value.rule == "pagination.invalid-cursor-32602"
    assert failed.value.case == "37" and "answered -37" in str(failed.value)


def test_agreement_passes() -> None:
    differential(context(1), st.integers(0, 1000), learner=lambda n: n, oracle=lambda n: n, compare=compare)
