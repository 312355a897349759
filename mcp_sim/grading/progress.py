"""The learner's progress across exercises: one small JSON file per project.

Where: ``.mcp-sim/progress.json`` in the project folder (:func:`project_root`), whatever folder the
grading starts from — a notebook in ``notebooks/`` and ``mcp-sim progress`` in the project folder see
the same file. ``MCP_SIM_PROGRESS`` names another file.

What: per exercise, how many attempts were graded, the best number of checks passed, and whether
(and on which attempt) the exercise was first passed — no timestamps, no paths.

What it is worth: it is **your own record**, written by the grader from results it computed in its
own process (:mod:`mcp_sim.grading.runner`). It is not proof of anything to anyone else, and it keeps
no secret: on your own machine your code runs as you and could read or write anything you can, so
a key beside the file (as earlier versions kept) would only pretend. Self-study grading checks your
understanding, not your honesty. A class that needs results it can trust grades submissions with
``--isolation os`` (:mod:`mcp_sim.grading.isolation`) on the instructor's side, where the learner's
code never sees the record at all. While a learner's code is graded, the learner-side guard still
refuses to write this file — against accidents, not against a determined learner.

Writes are atomic: the new content goes to a temporary file in the same folder, which then replaces
the old one (``os.replace``), so an interrupted write never leaves half a file behind.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final

from mcp_sim.grading.result import GradeResult

PROGRESS_FOLDER: Final = ".mcp-sim"
PROGRESS_FILE: Final = "progress.json"
FORMAT_VERSION: Final = 3
"""3: no tags (a version 2 file's tags are ignored when it is read)."""
_PACKAGE_PARENT = Path(__file__).resolve().parents[2]


def project_root(start: Path | None = None) -> Path:
    """The project folder: the one holding ``pyproject.toml`` and ``exercises/`` beside the
    ``mcp_sim`` package (a checkout), else the nearest such folder above ``start`` (default: the
    current folder), else ``start`` itself."""
    if (_PACKAGE_PARENT / "exercises").is_dir() and (_PACKAGE_PARENT / "pyproject.toml").is_file():
        return _PACKAGE_PARENT
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "exercises").is_dir() and (folder / "pyproject.toml").is_file():
            return folder
    return here


@dataclass(frozen=True)
class ExerciseProgress:
    """What we remember about one exercise."""

    attempts: int = 0
    best_checks_passed: int = 0
    total_checks: int = 0
    passed: bool = False
    passed_on_attempt: int | None = None
    last_status: str = "not started"


@dataclass(frozen=True)
class ProgressStore:
    """Reads and writes the progress file at ``path``."""

    path: Path

    @classmethod
    def default(cls) -> ProgressStore:
        """The store named by ``MCP_SIM_PROGRESS``, else the project's ``.mcp-sim/progress.json``."""
        env = os.environ.get("MCP_SIM_PROGRESS")
        return cls(Path(env) if env else project_root() / PROGRESS_FOLDER / PROGRESS_FILE)

    def private_paths(self) -> tuple[Path, ...]:
        """What the learner's code may not write while it is graded (against accidents)."""
        return (self.path,)

    def load(self) -> dict[str, ExerciseProgress]:
        """Everything recorded so far (empty when there is no file or it is unreadable)."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        exercises = data.get("exercises", {}) if isinstance(data, dict) else {}
        out = {}
        for name, value in exercises.items() if isinstance(exercises, dict) else ():
            if not isinstance(value, dict):
                continue
            known = {k: v for k, v in value.items() if k in ExerciseProgress.__dataclass_fields__}
            try:
                out[name] = ExerciseProgress(**known)
            except TypeError:
                continue
        return out

    def save(self, progress: dict[str, ExerciseProgress]) -> None:
        """Write ``progress`` atomically."""
        entries = {name: asdict(value) for name, value in sorted(progress.items())}
        payload: dict[str, Any] = {"version": FORMAT_VERSION, "exercises": entries}
        folder = self.path.parent if str(self.path.parent) else Path(".")
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(payload, fh, indent=2, sort_keys=True)
                fh.write("\n")
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def record(self, result: GradeResult) -> ExerciseProgress:
        """Add one graded attempt and return the exercise's updated progress."""
        progress = self.load()
        old = progress.get(result.exercise, ExerciseProgress())
        attempts = old.attempts + 1
        new = ExerciseProgress(
            attempts=attempts,
            best_checks_passed=max(old.best_checks_passed, result.passed_count),
            total_checks=len(result.checks),
            passed=old.passed or result.passed,
            passed_on_attempt=old.passed_on_attempt if old.passed else (attempts if result.passed else None),
            last_status=result.status,
        )
        progress[result.exercise] = new
        self.save(progress)
        return new
