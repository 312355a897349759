"""Every mistake class of issue "Grading that generalizes", three wrong answers each, per exercise.

The issue sorted the wrong answers an independent tester got past the graders into classes. Four of
them are classes of *wrong answers* (the others are about the references and about correct
alternatives, which have tests of their own):

``axes``
    an axis the fixed cases left still: two callers that differ only by tenant, a re-list that
    removes an item, a second task that is not the newest, scopes in another order …
``boundaries``
    a boundary never probed: a cursor at exactly the end, a deadline at exactly ``now``, ``"id":
    null``, header names in another case, ``now == exp``, a prefix of the audience …
``one-input``
    only one input per rule: an answer that looks for one of several signs of the same mistake,
    checks in the wrong order when two faults come at once, ``any()`` of several required items …
``seed``
    coverage that depended on the seed: a mistake the seed's draw used to hide (a revision, which
    capability, where the mistake sits), now a kind of its own tried on every seed.

Each ``test_generalize_*`` file keeps a table, exercise → class → the names of at least three of its
wrong answers (each rejected on 20 seeds by the check that names the right rule), or a sentence
saying why the class does not apply to that exercise. :func:`check_table` holds a table to that.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

CLASSES = ("axes", "boundaries", "one-input", "seed")
"""The wrong-answer classes of the issue, in its order."""

MIN_PER_CLASS = 3


def check_table(table: Mapping[str, Mapping[str, Iterable[str] | str]],
                known: Mapping[str, Iterable[str]]) -> None:
    """Every exercise of ``table`` names each class; a class holds ≥ 3 distinct wrong answers of that
    exercise that exist in ``known`` (exercise → wrong-answer names), or a reason it does not apply."""
    problems: list[str] = []
    for exercise_id, classes in table.items():
        names = set(known.get(exercise_id, ()))
        missing = [c for c in CLASSES if c not in classes]
        extra = [c for c in classes if c not in CLASSES]
        if missing or extra:
            problems.append(f"{exercise_id}: classes missing {missing}, unknown {extra}")
            continue
        for cls in CLASSES:
            entry = classes[cls]
            if isinstance(entry, str):
                if len(entry.split()) < 5:
                    problems.append(f"{exercise_id}/{cls}: say in a sentence why it does not apply")
                continue
            listed = list(entry)
            if len(set(listed)) < MIN_PER_CLASS:
                problems.append(f"{exercise_id}/{cls}: {len(set(listed))} wrong answers, "
                                f"{MIN_PER_CLASS} needed")
            unknown = [n for n in listed if n not in names]
            if unknown:
                problems.append(f"{exercise_id}/{cls}: not wrong answers of the exercise: {unknown}")
        if all(isinstance(classes[c], str) for c in CLASSES):
            problems.append(f"{exercise_id}: no class applies at all")
    assert not problems, "\n".join(problems)
