"""Grading from a notebook or a terminal: ``grade("ex02_error_codes")``.

:func:`grade` finds the learner's file (``exercises/<id>/starter.py``, the file the learner edits) or,
with ``reference=True``, the reference solution (``exercises/solutions/<id>.py``), loads it in a
**separate learner process** (:class:`~mcp_sim.grading.learner_code.LearnerProcess`) and runs the
checks **here**, calling the learner's functions across the process boundary. The verdict and the
progress record are made here too, where the learner's code cannot reach; the notebook kernel is never
at risk from a learner's endless loop or crash.

Each check walks its case kinds on each of its seeds (coverage by construction, see
:mod:`mcp_sim.grading.model`) and stops at the first failing case, reporting the rule that case broke
and the case — the smallest of that kind over the check's seeds — but not its answer, which waits for
the last hint (:attr:`~mcp_sim.grading.result.GradeResult.hint_steps`).

Where the exercises are: the folder named by ``MCP_SIM_EXERCISES``, else ``exercises/`` in the project
root (:func:`project_root`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import random
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from mcp_sim.grading.exercises import get_exercise
from mcp_sim.grading.isolation import Isolation, check_available
from mcp_sim.grading.learner_code import LearnerError, LearnerProcess, LoadFailed
from mcp_sim.grading.model import CheckContext, CheckFailed, Exercise, check_seeds
from mcp_sim.grading.progress import ProgressStore, project_root
from mcp_sim.grading.result import CheckResult, GradeResult

DEFAULT_CASE_TIME_LIMIT: Final = 2.0
"""Seconds one call of a learner's function may run before it is interrupted."""
DEFAULT_TIME_LIMIT: Final = 60.0
"""Seconds a whole grade may take; checks not started by then are reported as not run."""


class ExercisesNotFound(FileNotFoundError):
    """The exercises folder is not where we looked."""


def exercises_dir() -> Path:
    """The folder holding ``<id>/starter.py`` and ``solutions/<id>.py``."""
    env = os.environ.get("MCP_SIM_EXERCISES")
    if env:
        if not Path(env).is_dir():
            raise ExercisesNotFound(f"MCP_SIM_EXERCISES names {env}, which is not a folder")
        return Path(env)
    folder = project_root() / "exercises"
    if (folder / "solutions").is_dir() or any(folder.glob("*/starter.py")):  # a class release has no solutions
        return folder
    raise ExercisesNotFound("no exercises folder found in the project; set MCP_SIM_EXERCISES to the folder that "
                            "holds the exercises")


def starter_path(exercise_id: str) -> Path:
    """The learner's file for ``exercise_id``."""
    return exercises_dir() / get_exercise(exercise_id).starter_name


def reference_path(exercise_id: str) -> Path:
    """The reference solution for ``exercise_id``."""
    return exercises_dir() / get_exercise(exercise_id).reference_name


def display_name(path: Path) -> str:
    """How a file is named in messages: relative to the exercises folder's parent when possible, so
    no machine-specific path ends up in a report."""
    try:
        root = exercises_dir().parent
        return path.resolve().relative_to(root.resolve()).as_posix()
    except (ExercisesNotFound, ValueError):
        return path.name


def hidden_paths(reference: bool, progress: ProgressStore | None = None) -> tuple[Path, ...]:
    """What the learner's process may not open: the reference solutions (unless they are what is being
    graded) and the progress record."""
    store = progress or ProgressStore.default()
    out = list(store.private_paths())
    if not reference:
        with contextlib.suppress(ExercisesNotFound):
            out.append(exercises_dir() / "solutions")
    return tuple(out)


def case_rng(seed: int, kind: str) -> random.Random:
    """The generator for one case: the check's seed and the case kind, nothing else."""
    digest = hashlib.sha256(f"{seed}|{kind}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def run_check(exercise: Exercise, index: int, learner: LearnerProcess, *, base_seed: int = 0) -> CheckResult:
    """Run check number ``index``: every case kind on every seed; stop at the first failing case.

    A wrong answer (:class:`CheckFailed`) is then tried on the same kind with the check's other seeds,
    and the failure with the shortest case is reported: the same mistake on the smallest input the
    check has. An exception or a time limit in the learner's code is reported as it happened."""
    check = exercise.checks[index]
    seeds = check_seeds(exercise.id, check.name, check.seeds, base_seed)
    start = len(learner.printed)
    cases = 0
    for n, seed in enumerate(seeds):
        for kind in check.kinds:
            cases += 1
            try:
                check.run(CheckContext(learner, case_rng(seed, kind), seed), kind)
            except CheckFailed as exc:
                seed, exc = _smallest(check, learner, kind, seed, exc, seeds[n + 1:])
                rule = exc.rule or check.rule
                # the hint goes with the rule that was broken, which may be another check's
                hint = next((c.hint for c in exercise.checks if c.rule == rule and rule != check.rule), check.hint)
                return _failed(check, "failed", str(exc), rule, cases, seed, kind, learner, start, hint,
                               exc.case, exc.expected)
            except LearnerError as exc:
                status = "timeout" if exc.status == "timeout" else "error"
                return _failed(check, status, exc.description, check.rule, cases, seed, kind, learner, start,
                               check.hint)
    printed = "".join(learner.printed[start:])[-4000:]
    return CheckResult(check.name, "passed", f"Correct on all {cases} cases ({len(seeds)} seeds × "
                       f"{len(check.kinds)} kinds).", check.rule, cases, None, printed, "")


def _smallest(check: Any, learner: LearnerProcess, kind: str, seed: int, failure: CheckFailed,
              others: Sequence[int]) -> tuple[int, CheckFailed]:
    """The failing case of ``kind`` with the shortest case text, over ``seed`` and the ``others``
    (deterministic: the same seeds in the same order; ties keep the earlier seed). Only failures that
    describe their case compete, and only wrong answers: an exception on another seed is not smaller."""
    best = (seed, failure)
    if not failure.case:
        return best
    for other in others:
        try:
            check.run(CheckContext(learner, case_rng(other, kind), other), kind)
        except CheckFailed as exc:
            if exc.case and len(exc.case) < len(best[1].case):
                best = (other, exc)
        except LearnerError:
            continue
    return best


def _failed(check: Any, status: str, explanation: str, rule: str, cases: int, seed: int, kind: str,
            learner: LearnerProcess, start: int, hint: str, case: str = "", expected: str = "") -> CheckResult:
    printed = "".join(learner.printed[start:])[-4000:]
    return CheckResult(check.name, status, explanation, rule, cases, seed, printed,  # type: ignore[arg-type]
                       hint, kind, case, expected)


def result_header(exercise: Exercise, display: str, reference: bool) -> dict[str, Any]:
    """The fields of a :class:`GradeResult` that come from the exercise itself."""
    return {"exercise": exercise.id, "title": exercise.title, "chapter": exercise.chapter, "file": display,
            "rules": list(exercise.rules), "hints": [str(h) for h in exercise.hints], "reference": reference}


def _not_run(exercise: Exercise, head: dict[str, Any], reason: str, status: str, output: str = "") -> GradeResult:
    checks = [CheckResult(c.name, "failed", "Not run: your file could not be loaded.", c.rule).__dict__
              for c in exercise.checks]
    return GradeResult.from_dict({**head, "checks": checks, "load_error": reason, "load_output": output,
                                  "problem_status": status})


def grade_file(exercise: Exercise, path: Path, display: str | None = None, *, base_seed: int = 0,
               reference: bool = False, case_time_limit: float = DEFAULT_CASE_TIME_LIMIT,
               time_limit: float = DEFAULT_TIME_LIMIT, progress: ProgressStore | None = None,
               isolation: Isolation = "process") -> GradeResult:
    """Grade ``path`` against ``exercise`` (one set of seeds). Never raises for learner mistakes."""
    return grade_seeds(exercise, path, display, [base_seed], reference=reference, case_time_limit=case_time_limit,
                       time_limit=time_limit, progress=progress, isolation=isolation)[0]


def grade_seeds(exercise: Exercise, path: Path, display: str | None, base_seeds: Sequence[int], *,
                reference: bool = False, case_time_limit: float = DEFAULT_CASE_TIME_LIMIT,
                time_limit: float = DEFAULT_TIME_LIMIT, progress: ProgressStore | None = None,
                only: Sequence[str] = (), stop_at_first_failure: bool = False,
                isolation: Isolation = "process") -> list[GradeResult]:
    """Grade ``path`` once per base seed, loading it once: the fast path for many sets of cases.

    ``only`` runs just the checks named (the others are reported as not run); with
    ``stop_at_first_failure`` a base seed's remaining checks are skipped once one has failed — both
    for answering "is this file rejected?" quickly, never for a learner's verdict. ``isolation="os"`` runs
    the learner's process in an operating-system sandbox (:mod:`mcp_sim.grading.isolation`); it raises
    :class:`~mcp_sim.grading.isolation.IsolationUnavailable` where the machine cannot build one."""
    display = display or display_name(path)
    head = result_header(exercise, display, reference)
    if not path.is_file():
        reason = (f"{display} does not exist. Each exercise's file is exercises/<exercise>/starter.py; if you "
                  f"deleted it, restore it (e.g. `git checkout -- {display}`).")
        return [_not_run(exercise, head, reason, "error") for _ in base_seeds]
    results = []
    if isolation == "os":
        check_available()  # a clear error before anything starts
    with LearnerProcess(exercise, path, display, case_time_limit, hidden_paths(reference, progress),
                        isolation) as learner:
        try:
            learner.start()
        except LoadFailed as exc:
            return [_not_run(exercise, head, exc.message, exc.status, exc.output) for _ in base_seeds]
        for base in base_seeds:
            deadline = time.monotonic() + time_limit  # each set of cases is a whole grade of its own
            checks: list[dict[str, Any]] = []
            problem, problem_status = "", ""
            for i, check in enumerate(exercise.checks):
                if time.monotonic() > deadline:
                    problem = (f"Grading stopped after the time limit of {time_limit:g} s; the checks after that "
                               f"were not run.")
                    problem_status = "timeout"
                    checks += [CheckResult(c.name, "failed", "Not run: grading stopped before this check.",
                                           c.rule).__dict__ for c in exercise.checks[i:]]
                    break
                failed = any(c["status"] != "passed" for c in checks)
                if (only and check.name not in only) or (stop_at_first_failure and failed):
                    checks.append(CheckResult(check.name, "failed", "Not run.", check.rule).__dict__)
                    continue
                checks.append(run_check(exercise, i, learner, base_seed=base).__dict__)
            results.append({**head, "checks": checks, "problem": problem, "problem_status": problem_status,
                            "load_output": learner.load_output})
    notes = list(learner.notes)
    stray = f"\n(printed outside print():)\n{learner.stray}" if learner.stray.strip() else ""
    return [GradeResult.from_dict({**r, "notes": notes, "load_output": (r["load_output"] + stray).strip("\n")})
            for r in results]


def grade(exercise_id: str, *, file: str | Path | None = None, reference: bool = False, seed: int = 0,
          record: bool = True, case_time_limit: float = DEFAULT_CASE_TIME_LIMIT,
          time_limit: float = DEFAULT_TIME_LIMIT, progress: ProgressStore | None = None,
          isolation: Isolation = "process") -> GradeResult:
    """Grade one exercise and return its :class:`GradeResult` (shown as a panel in Jupyter).

    ``file`` grades another file instead of the starter; ``reference=True`` grades the reference
    solution; ``seed`` picks another set of seeded cases (each failure names the seed it used).
    The attempt is recorded in the project's progress file unless ``record=False`` (reference runs
    and other files are never recorded: progress is about the exercise's own file)."""
    exercise = get_exercise(exercise_id)
    if file is not None:
        path = Path(file)
    else:
        path = reference_path(exercise_id) if reference else starter_path(exercise_id)
    store = progress or ProgressStore.default()
    result = grade_file(exercise, path, base_seed=seed, reference=reference, case_time_limit=case_time_limit,
                        time_limit=time_limit, progress=store, isolation=isolation)
    if record and not reference and file is None:
        store.record(result)
    return result
