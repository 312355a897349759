"""Grading from a notebook or a terminal: ``grade("ex02_error_codes")``.

:func:`grade` finds the learner's file (``exercises/<id>/starter.py``, the file the learner edits) or,
with ``reference=True``, the reference solution (``exercises/solutions/<id>.py``), and runs the checks
in a **separate Python process** (``python -m mcp_sim.grading.worker``) with a hard time limit. If the
learner's code loops forever even after the per-case interruption, the process is killed and the
result says so; the notebook kernel is never at risk.

Where the exercises are: the folder named by ``MCP_SIM_EXERCISES``, else ``exercises/`` in the project
root (the folder that holds the ``mcp_sim`` package), else ``exercises/`` in the current folder or its
parent.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from mcp_sim.grading.exercises import get_exercise
from mcp_sim.grading.model import Exercise
from mcp_sim.grading.progress import ProgressStore
from mcp_sim.grading.result import CheckResult, GradeResult
from mcp_sim.grading.worker import DEFAULT_CASE_TIME_LIMIT, result_header

DEFAULT_TIME_LIMIT = 30.0
"""Seconds the whole grading process may take before it is killed."""

_PACKAGE_PARENT = Path(__file__).resolve().parents[2]


class ExercisesNotFound(FileNotFoundError):
    """The exercises folder is not where we looked."""


def exercises_dir() -> Path:
    """The folder holding ``<id>/starter.py`` and ``solutions/<id>.py``."""
    env = os.environ.get("MCP_SIM_EXERCISES")
    if env:
        if not Path(env).is_dir():
            raise ExercisesNotFound(f"MCP_SIM_EXERCISES names {env}, which is not a folder")
        return Path(env)
    # a checkout (the package's parent), else the current folder or its parent (a notebook in notebooks/)
    for folder in (_PACKAGE_PARENT / "exercises", Path.cwd() / "exercises", Path.cwd().parent / "exercises"):
        if (folder / "solutions").is_dir():
            return folder
    raise ExercisesNotFound("no exercises folder found beside the mcp_sim package or in the current folder; set "
                            "MCP_SIM_EXERCISES to the folder that holds the exercises")


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


def _worker_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONIOENCODING"] = "utf-8"
    parts = [str(_PACKAGE_PARENT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    env["PYTHONPATH"] = os.pathsep.join(parts)
    return env


def _read_events(path: Path) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    checks: list[dict[str, Any]] = []
    final = None
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return checks, None
    for line in text.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if "check" in event:
            checks.append(event["check"])
        elif "result" in event:
            final = event["result"]
    return checks, final


def run_in_subprocess(exercise: Exercise, path: Path, *, reference: bool = False, seed: int = 0,
                      case_time_limit: float = DEFAULT_CASE_TIME_LIMIT,
                      time_limit: float = DEFAULT_TIME_LIMIT) -> GradeResult:
    """Grade ``path`` against ``exercise`` in a fresh Python process; never raises for learner bugs."""
    display = display_name(path)
    with tempfile.TemporaryDirectory(prefix="mcp-sim-grade-") as tmp:
        result_file = Path(tmp) / "result.jsonl"
        request = {"exercise": exercise.id, "file": str(path.resolve()), "display": display,
                   "result_file": str(result_file), "base_seed": seed, "case_time_limit": case_time_limit,
                   "reference": reference}
        problem = ""
        stdout = stderr = ""
        try:
            proc = subprocess.run([sys.executable, "-m", "mcp_sim.grading.worker"], input=json.dumps(request),
                                  capture_output=True, text=True, encoding="utf-8", errors="replace",
                                  timeout=time_limit, env=_worker_env())
            stdout, stderr = proc.stdout, proc.stderr
            if proc.returncode != 0:
                problem = (f"The grading process stopped unexpectedly (exit code {proc.returncode}).\n"
                           + stderr.strip()[-2000:])
        except subprocess.TimeoutExpired as exc:
            stdout = exc.stdout.decode("utf-8", "replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
            problem = (f"Grading stopped after the time limit of {time_limit:g} s and the grading process was "
                       f"ended. Your code kept running even after being interrupted — is there a loop that "
                       f"never ends, perhaps inside a `try` that catches every exception (bare `except:` or "
                       f"`except BaseException:`)?")
        checks, final = _read_events(result_file)
    if final is not None and not problem:
        result = GradeResult.from_dict(final)
    else:
        data = result_header(exercise, display, reference)
        done = {c["name"] for c in checks}
        rest = [CheckResult(c.name, "failed", "Not run: grading stopped before this check.", c.rule).__dict__
                for c in exercise.checks if c.name not in done]
        result = GradeResult.from_dict({**data, "checks": checks + rest,
                                        "problem": problem or "The grading process gave no result."})
    if stdout.strip():
        # Output written around Python's sys.stdout (os.write, C extensions) reaches the process's pipe.
        extra = (result.load_output + "\n" if result.load_output else "") + stdout.strip()[-4000:]
        result = GradeResult.from_dict({**result.to_dict(), "load_output": extra})
    return result


def grade(exercise_id: str, *, file: str | Path | None = None, reference: bool = False, seed: int = 0,
          record: bool = True, case_time_limit: float = DEFAULT_CASE_TIME_LIMIT,
          time_limit: float = DEFAULT_TIME_LIMIT, progress: ProgressStore | None = None) -> GradeResult:
    """Grade one exercise and return its :class:`GradeResult` (shown as a panel in Jupyter).

    ``file`` grades another file instead of the starter; ``reference=True`` grades the reference
    solution; ``seed`` picks another set of seeded cases (each failure names the seed it used).
    The learner's attempts are recorded in the progress file unless ``record=False`` (reference runs
    are never recorded)."""
    exercise = get_exercise(exercise_id)
    if file is not None:
        path = Path(file)
    else:
        path = reference_path(exercise_id) if reference else starter_path(exercise_id)
    result = run_in_subprocess(exercise, path, reference=reference, seed=seed, case_time_limit=case_time_limit,
                               time_limit=time_limit)
    if record and not reference:
        (progress or ProgressStore.default()).record(result)
    return result
