"""Grading that generalizes (issue #30), the cross-cutting part.

* the mutation benchmark's mutator (``benchmarks/mutation.py``) makes mutants of every operator it
  names, the same ids twice, and a mutant a grader must reject is rejected;
* every mistake class on every seed, proven by listing: the (check, kind) pairs a reference's grade
  runs are the same on every seed and are the declared ``Check.kinds``;
* the first failure never states the expected value: it comes only with the last hint.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from mcp_sim.grading import EXERCISES, get_exercise
from mcp_sim.grading.model import Check, CheckContext, Exercise, check_seeds
from mcp_sim.grading.runner import grade_seeds, reference_path

ROOT = Path(__file__).resolve().parent.parent


def _mutation() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mutation_benchmark", ROOT / "benchmarks" / "mutation.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


mutation = _mutation()


# --- the mutator ---------------------------------------------------------------------------------------

SAMPLE = '''"""A docstring is never mutated."""


def pick(items: list[int], limit: int, flag: bool = True) -> list[int] | None:
    """Nor is this one."""
    out = {"a": 1, "b": 2}
    if limit < 3 and not flag:
        return None
    total = limit + 1
    out["c"] = total
    return items[1:limit] if flag else [x for x in items if x in out.values()]
'''


def test_the_mutator_makes_every_operator_and_never_touches_docstrings_or_annotations() -> None:
    made = mutation.mutants(SAMPLE)
    operators = {m.operator for m in made}
    assert operators == {"cmp", "bool", "not", "num", "true", "str", "ret", "if", "slice", "arith", "stmt", "key"}
    diffs = "\n".join(m.diff for m in made)
    assert "docstring" not in diffs and "Nor is this" not in diffs
    assert "list[int] | None  →" not in diffs and "list[int] & None" not in diffs  # annotations are not code
    assert "limit < 3  →  limit <= 3" in diffs and "limit < 3  →  limit > 3" in diffs
    assert "return items[1:limit] if flag else" in diffs and "→  return None" in diffs
    for m in made:  # every mutant is a different, compilable program
        compile(m.source, m.id, "exec")
        assert m.source != SAMPLE
    assert len({m.source for m in made}) == len(made)


def test_the_mutator_is_deterministic_and_its_ids_are_unique() -> None:
    source = reference_path("ex02_error_codes").read_text(encoding="utf-8")
    first = mutation.mutants(source)
    second = mutation.mutants(source)
    assert first and [m.id for m in first] == [m.id for m in second]
    assert [m.source for m in first] == [m.source for m in second]
    assert len({m.id for m in first}) == len(first)
    assert len({m.key for m in first}) == len(first)  # the line-independent part is unique too


def test_a_mutant_the_grader_must_reject_is_killed_on_every_seed() -> None:
    """Forcing the local branch in ex01_topology gives every remote server a stdio client."""
    report = mutation.run_exercise("ex01_topology", [0, 1], only=[
        m.id for m in mutation.mutants(reference_path("ex01_topology").read_text(encoding="utf-8"))
        if m.operator == "if" and m.diff.endswith("if True:")])
    assert report.mutants == 1
    result = report.results[0]
    assert result.status == "killed"
    assert len(result.killed_by) == 2 and all(result.killed_by)


def test_recorded_equivalent_mutants_still_exist_and_give_reasons() -> None:
    """Every ``benchmarks/mutants/<id>.toml`` names an exercise, and each id a mutant of its reference."""
    for path in sorted((ROOT / "benchmarks" / "mutants").glob("*.toml")):
        exercise_id = path.stem
        assert exercise_id in EXERCISES, f"{path.name} names no exercise"
        known = mutation.equivalents(exercise_id)
        keys = {m.key for m in mutation.mutants(reference_path(exercise_id).read_text(encoding="utf-8"))}
        for mid, reason in known.items():
            assert reason.strip(), f"{path.name}: {mid} has no reason"
            assert mid.split(":", 2)[-1] in keys, f"{path.name}: {mid} is no longer a mutant of the reference"


# --- every mistake class on every seed, proven by listing --------------------------------------------

LISTING_SEEDS = [0, 1]


def _recording(exercise: Exercise) -> tuple[Exercise, list[tuple[str, str, int]]]:
    """``exercise`` with each check's run wrapped to log (check, kind, case seed) as it runs."""
    log: list[tuple[str, str, int]] = []

    def wrap(check: Check) -> Check:
        def run(ctx: CheckContext, kind: str) -> None:
            log.append((check.name, kind, ctx.seed))
            check.run(ctx, kind)
        return dataclasses.replace(check, run=run)

    return dataclasses.replace(exercise, checks=tuple(wrap(c) for c in exercise.checks)), log


@pytest.mark.parametrize("exercise_id", list(EXERCISES))
def test_every_seed_runs_every_declared_case_kind(exercise_id: str) -> None:
    """The reference's grade on several base seeds runs exactly the (check, kind) pairs the exercise
    declares, each kind on each of the check's seeds, in the declared order — the same on every seed."""
    exercise = get_exercise(exercise_id)
    declared = [(c.name, k) for c in exercise.checks for k in c.kinds]
    for c in exercise.checks:
        assert len(set(c.kinds)) == len(c.kinds), f"{c.name!r} declares a kind twice"
    recording, log = _recording(exercise)
    results = grade_seeds(recording, reference_path(exercise_id), None, LISTING_SEEDS, reference=True)
    assert all(r.passed for r in results), results[0]
    per_base: dict[int, list[tuple[str, str]]] = {}
    owner = {(c.name, s): base for base in LISTING_SEEDS for c in exercise.checks
             for s in check_seeds(exercise.id, c.name, c.seeds, base)}
    for name, kind, seed in log:
        per_base.setdefault(owner[(name, seed)], []).append((name, kind))
    assert sorted(per_base) == LISTING_SEEDS
    expected = [(c.name, k) for c in exercise.checks for _ in range(c.seeds) for k in c.kinds]
    for base in LISTING_SEEDS:
        assert per_base[base] == expected, f"base seed {base} ran another list of cases"
        assert set(per_base[base]) == set(declared)


def test_list_cases_prints_every_check_and_kind() -> None:
    from mcp_sim.grading.commands import case_list

    for exercise_id in ("ex01_topology", "ex04_seal_state"):
        text = case_list(exercise_id)
        for c in get_exercise(exercise_id).checks:
            assert c.name in text and c.rule in text
            assert all(f"    - {k}\n" in text + "\n" for k in c.kinds)


# --- feedback that teaches without telling ---------------------------------------------------------------

LEAK_EXERCISES = ("ex02_error_codes", "ex03_era_detection", "ex03_modern_meta", "ex03_version_negotiation")
LEAK_STRIDE = 7
"""Every 7th mutant of each of these exercises' references: a spread of wrong answers, graded fast."""


@pytest.mark.parametrize("exercise_id", LEAK_EXERCISES)
def test_the_first_failure_never_states_the_expected_value(tmp_path: Path, exercise_id: str) -> None:
    """For wrong answers (mutants of the reference), what is shown with a failure — its explanation and
    its case, in the text and the HTML forms — never contains the expected value; the expected value is
    the last hint step, and only that step."""
    exercise = get_exercise(exercise_id)
    made = mutation.mutants(reference_path(exercise_id).read_text(encoding="utf-8"))[::LEAK_STRIDE]
    with_expected = 0
    for m in made:
        path = tmp_path / f"{exercise_id}.py"
        path.write_text(m.source, encoding="utf-8")
        result = grade_seeds(exercise, path, path.name, [0], stop_at_first_failure=True)[0]
        first = result.first_failure
        if result.load_error or first is None or not first.expected:
            continue
        with_expected += 1
        shown = f"{first.explanation}\n{first.case}"
        assert first.expected not in shown, f"{m.id} ({m.diff}): the failure states the answer"
        assert first.expected not in result.to_text(hints=0), f"{m.id}: the text form states the answer"
        shown_html = result._repr_html_().split("<details>")[0]  # the hint steps are folded away after it
        assert first.expected not in shown_html.replace("&#x27;", "'").replace("&quot;", '"'), m.id
        steps = result.hint_steps
        assert steps[-1].endswith(first.expected) and all(first.expected not in s for s in steps[:-1]), m.id
    assert with_expected >= 2, f"too few failures of {exercise_id} carry an expected value to test"
