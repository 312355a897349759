"""The mistake-class tables of the ``test_generalize_*`` files together cover every exercise.

Each file checks its own table (three wrong answers per class, each rejected on 20 seeds by the check
naming the right rule); this file checks that no exercise is left out of every table, and that
:func:`wrong_classes.check_table` itself refuses a thin or invented table.
"""

from __future__ import annotations

import importlib

import pytest
from wrong_classes import CLASSES, check_table

from mcp_sim.grading import EXERCISES

TABLE_FILES = ("test_generalize_ch01_04", "test_generalize_ch05_06", "test_generalize_ch07_09",
               "test_generalize_ch10_12", "test_generalize_ch12")


def test_every_exercise_has_a_mistake_class_table() -> None:
    covered: dict[str, str] = {}
    for name in TABLE_FILES:
        table = importlib.import_module(name).MISTAKE_CLASSES
        for exercise_id in table:
            assert exercise_id not in covered, f"{exercise_id} in both {covered[exercise_id]} and {name}"
            covered[exercise_id] = name
    missing = sorted(exercise_id for exercise_id in EXERCISES if exercise_id not in covered)
    assert not missing, f"no mistake-class table for {missing}"


KNOWN = {"ex": ["a", "b", "c", "d"]}


def test_a_full_table_passes() -> None:
    check_table({"ex": {"axes": ["a", "b", "c"], "boundaries": ["b", "c", "d"], "one-input": ["a", "c", "d"],
                        "seed": "the exercise draws nothing from the seed at all"}}, KNOWN)


@pytest.mark.parametrize("table,words", [
    ({"ex": {"axes": ["a", "b"], "boundaries": ["a", "b", "c"], "one-input": ["a", "b", "c"], "seed": ["a", "b", "c"]}},
     "2 wrong answers"),
    ({"ex": {"axes": ["a", "a", "a"], "boundaries": ["a", "b", "c"], "one-input": ["a", "b", "c"],
             "seed": ["a", "b", "c"]}}, "1 wrong answers"),
    ({"ex": {"axes": ["a", "b", "z"], "boundaries": ["a", "b", "c"], "one-input": ["a", "b", "c"],
             "seed": ["a", "b", "c"]}}, "not wrong answers"),
    ({"ex": {"axes": ["a", "b", "c"], "boundaries": ["a", "b", "c"], "one-input": ["a", "b", "c"]}}, "missing"),
    ({"ex": {"axes": ["a", "b", "c"], "boundaries": ["a", "b", "c"], "one-input": ["a", "b", "c"], "seed": "n/a"}},
     "in a sentence"),
    ({"ex": dict.fromkeys(CLASSES, "this class does not apply to it")}, "no class applies"),
])
def test_a_thin_or_invented_table_fails(table: dict, words: str) -> None:
    with pytest.raises(AssertionError, match=words):
        check_table(table, KNOWN)
