"""The grading process: ``python -m mcp_sim.grading.worker`` runs one exercise's checks.

The notebook or terminal that asked for a grade starts this module as a **separate Python process**
(:mod:`mcp_sim.grading.runner`), so a learner's infinite loop or crash can never take the Jupyter
kernel down with it. The request arrives as one JSON object on stdin; results go, one JSON object per
line, to the file named in the request — not to stdout, which belongs to whatever the learner prints.
Writing each check's result as soon as it is known means that even if the parent has to kill this
process, the checks that did finish are still reported.

:func:`grade_module` and :func:`grade_file` are also usable in-process (the tests use them).
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from mcp_sim.grading.learner_code import (
    CheckTimeout,
    capture_output,
    describe_exception,
    forbidden_uses,
    learner_frames,
    load_module,
    time_limit,
)
from mcp_sim.grading.model import CheckContext, CheckFailed, Exercise, check_seeds
from mcp_sim.grading.result import CheckResult, GradeResult

DEFAULT_CASE_TIME_LIMIT = 2.0
"""Seconds one seeded case may run before it is interrupted."""

Emit = Callable[[dict[str, Any]], None]


def _timeout_message(exc: BaseException, seconds: float, path: Path, display: str) -> str:
    frames = learner_frames(exc.__traceback__, path.resolve())
    where = ""
    if frames:
        f = frames[-1]
        where = (f"\nYour code was running line {f.lineno} of {display} (in {f.name}()):\n    "
                 f"{(f.line or '').strip()}")
    return (f"Stopped after {seconds:g} s: your code did not return. Is there a loop that never ends, "
            f"or a wait for a message that never comes?{where}")


def run_check(exercise: Exercise, index: int, module: ModuleType, path: Path, display: str, *,
              base_seed: int = 0, case_time_limit: float = DEFAULT_CASE_TIME_LIMIT) -> CheckResult:
    """Run check number ``index`` on each of its seeds; stop at the first failing case."""
    check = exercise.checks[index]
    seeds = check_seeds(exercise.id, check.name, check.seeds, base_seed)
    printed: list[str] = []
    for seed in seeds:
        ctx = CheckContext(module, random.Random(seed), seed)
        status = "passed"
        explanation = ""
        with capture_output() as out:
            try:
                with time_limit(case_time_limit):
                    check.run(ctx)
            except CheckFailed as exc:
                status, explanation = "failed", str(exc)
            except CheckTimeout as exc:
                status, explanation = "timeout", _timeout_message(exc, case_time_limit, path, display)
            except SystemExit as exc:
                status = "error"
                explanation = describe_exception(exc, path, display).replace(
                    "Your code raised SystemExit", "Your code called sys.exit()/exit()", 1)
            except Exception as exc:
                if learner_frames(exc.__traceback__, path.resolve()):
                    status, explanation = "error", describe_exception(exc, path, display)
                else:
                    status = "failed"
                    explanation = (f"The grader could not use what your code returned "
                                   f"({type(exc).__name__}: {exc}). Check the return type described in "
                                   f"the starter's docstring.")
        if out.getvalue():
            printed.append(out.getvalue())
        if status != "passed":
            return CheckResult(check.name, status, explanation, check.rule, len(seeds), seed,  # type: ignore[arg-type]
                               "".join(printed)[-4000:], check.hint)
    return CheckResult(check.name, "passed", f"Correct on all {len(seeds)} seeded cases.", check.rule,
                       len(seeds), None, "".join(printed)[-4000:], "")


def result_header(exercise: Exercise, display: str, reference: bool) -> dict[str, Any]:
    """The fields of a :class:`GradeResult` that come from the exercise itself."""
    return {"exercise": exercise.id, "title": exercise.title, "chapter": exercise.chapter, "file": display,
            "rules": list(exercise.rules), "hints": [str(h) for h in exercise.hints], "reference": reference}


def grade_module(exercise: Exercise, module: ModuleType, path: Path, display: str, *, base_seed: int = 0,
                 case_time_limit: float = DEFAULT_CASE_TIME_LIMIT, reference: bool = False,
                 emit: Emit | None = None) -> GradeResult:
    """Run every check of ``exercise`` against an already loaded ``module``."""
    results = []
    for i in range(len(exercise.checks)):
        r = run_check(exercise, i, module, path, display, base_seed=base_seed, case_time_limit=case_time_limit)
        if emit:
            emit({"check": r.__dict__})
        results.append(r)
    return GradeResult.from_dict({**result_header(exercise, display, reference), "checks": [r.__dict__ for r in results]})


def grade_file(exercise: Exercise, path: Path, display: str, *, base_seed: int = 0,
               case_time_limit: float = DEFAULT_CASE_TIME_LIMIT, reference: bool = False,
               emit: Emit | None = None) -> GradeResult:
    """Read, vet and load the learner's file, then run the checks. Never raises for learner mistakes."""
    head = result_header(exercise, display, reference)

    def not_run(reason: str) -> GradeResult:
        checks = [CheckResult(c.name, "failed", f"Not run: {reason}", c.rule, 0, None, "", "").__dict__
                  for c in exercise.checks]
        return GradeResult.from_dict({**head, "checks": checks, "load_error": reason})

    try:
        source = path.read_text(encoding="utf-8")
    except OSError as exc:
        return not_run(f"cannot read {display}: {exc.strerror or exc}")
    uses = forbidden_uses(source, exercise.forbidden)
    if uses:
        listed = "; ".join(str(u) for u in uses)
        return not_run(f"{display} uses {listed}. This exercise asks you to write that logic yourself, and "
                       f"the module you used already contains the answer. Remove it and try again.")
    with capture_output() as out:
        try:
            with time_limit(max(case_time_limit, 5.0)):
                module = load_module(path, f"learner_{exercise.id}")
        except CheckTimeout as exc:
            return not_run(_timeout_message(exc, max(case_time_limit, 5.0), path, display)
                           .replace("your code did not return", "loading your file did not finish"))
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                raise
            result = not_run(describe_exception(exc, path, display))
            return GradeResult.from_dict({**result.to_dict(), "load_output": out.getvalue()})
    load_output = out.getvalue()
    result = grade_module(exercise, module, path, display, base_seed=base_seed, case_time_limit=case_time_limit,
                          reference=reference, emit=emit)
    return GradeResult.from_dict({**result.to_dict(), "load_output": load_output})


def main() -> int:
    """Entry point of the grading process; see the module docstring for the protocol."""
    from mcp_sim.grading.exercises import get_exercise

    sys.dont_write_bytecode = True  # never create __pycache__ beside the learner's file
    request = json.loads(sys.stdin.read())
    exercise = get_exercise(request["exercise"])
    path = Path(request["file"])
    display = request.get("display", path.name)
    out_path = Path(request["result_file"])
    sys.path.append(str(path.parent))

    with out_path.open("w", encoding="utf-8") as sink:
        def emit(event: dict[str, Any]) -> None:
            sink.write(json.dumps(event) + "\n")
            sink.flush()

        result = grade_file(exercise, path, display, base_seed=int(request.get("base_seed", 0)),
                            case_time_limit=float(request.get("case_time_limit", DEFAULT_CASE_TIME_LIMIT)),
                            reference=bool(request.get("reference", False)), emit=emit)
        emit({"result": result.to_dict()})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
