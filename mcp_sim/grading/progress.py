"""The learner's progress across exercises, kept in a small local JSON file.

The file is ``.mcp-sim-progress.json`` in the current directory unless ``MCP_SIM_PROGRESS`` names
another. It records, per exercise, how many attempts were graded, the best number of checks passed,
and whether (and on which attempt) the exercise was first passed — no timestamps, no paths, nothing
that identifies the machine.

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

DEFAULT_PROGRESS_FILE: Final = ".mcp-sim-progress.json"
FORMAT_VERSION: Final = 1


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
        """The store named by ``MCP_SIM_PROGRESS``, else ``.mcp-sim-progress.json`` here."""
        return cls(Path(os.environ.get("MCP_SIM_PROGRESS") or DEFAULT_PROGRESS_FILE))

    def load(self) -> dict[str, ExerciseProgress]:
        """Everything recorded so far (an empty dict when there is no file or it is unreadable)."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        exercises = data.get("exercises", {}) if isinstance(data, dict) else {}
        out = {}
        for key, value in exercises.items():
            if isinstance(value, dict):
                known = {k: v for k, v in value.items() if k in ExerciseProgress.__dataclass_fields__}
                try:
                    out[key] = ExerciseProgress(**known)
                except TypeError:
                    continue
        return out

    def save(self, progress: dict[str, ExerciseProgress]) -> None:
        """Write ``progress`` atomically."""
        payload: dict[str, Any] = {"version": FORMAT_VERSION,
                                   "exercises": {k: asdict(v) for k, v in sorted(progress.items())}}
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
