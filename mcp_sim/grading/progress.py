"""The learner's progress across exercises: one small JSON file per project.

Where: ``.mcp-sim/progress.json`` in the project folder (:func:`project_root`), whatever folder the
grading starts from — a notebook in ``notebooks/`` and ``mcp-sim progress`` in the project folder see
the same file. ``MCP_SIM_PROGRESS`` names another file.

What: per exercise, how many attempts were graded, the best number of checks passed, and whether
(and on which attempt) the exercise was first passed — no timestamps, no paths.

Why it can be trusted: only the grader writes it, from results it computed itself in its own
process (:mod:`mcp_sim.grading.runner`). Each exercise's entry carries an HMAC-SHA256 tag made with a
key kept beside the file (``progress.key``, created on first use). The learner's code, while it is
graded, may open neither file (the learner's process refuses it, :mod:`mcp_sim.grading.sandbox`). An
entry edited by hand no longer matches its tag and is shown as "not verified", never as passed. This
keeps a course honest; it is not an exam lock — whoever owns the machine can read the key.

Writes are atomic: the new content goes to a temporary file in the same folder, which then replaces
the old one (``os.replace``), so an interrupted write never leaves half a file behind.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import tempfile
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Final

from mcp_sim.grading.result import GradeResult

PROGRESS_FOLDER: Final = ".mcp-sim"
PROGRESS_FILE: Final = "progress.json"
FORMAT_VERSION: Final = 2
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
    """What we remember about one exercise. ``verified`` is false for an entry whose tag does not
    match (edited outside the grader); such an entry never counts as passed."""

    attempts: int = 0
    best_checks_passed: int = 0
    total_checks: int = 0
    passed: bool = False
    passed_on_attempt: int | None = None
    last_status: str = "not started"
    verified: bool = True


def _canonical(exercise: str, entry: dict[str, Any]) -> bytes:
    fields = {k: v for k, v in entry.items() if k not in ("tag", "verified")}
    return json.dumps({"exercise": exercise, **fields}, sort_keys=True, separators=(",", ":")).encode()


@dataclass(frozen=True)
class ProgressStore:
    """Reads and writes the progress file at ``path`` (its key sits beside it)."""

    path: Path

    @classmethod
    def default(cls) -> ProgressStore:
        """The store named by ``MCP_SIM_PROGRESS``, else the project's ``.mcp-sim/progress.json``."""
        env = os.environ.get("MCP_SIM_PROGRESS")
        return cls(Path(env) if env else project_root() / PROGRESS_FOLDER / PROGRESS_FILE)

    @property
    def key_path(self) -> Path:
        return self.path.with_name(self.path.stem + ".key")

    def private_paths(self) -> tuple[Path, ...]:
        """What the learner's code may not open while it is graded."""
        return (self.path, self.key_path)

    def _key(self, create: bool) -> bytes | None:
        try:
            return self.key_path.read_bytes()
        except OSError:
            if not create:
                return None
        self.key_path.parent.mkdir(parents=True, exist_ok=True)
        key = secrets.token_bytes(32)
        fd = os.open(self.key_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(key)
        return key

    def _tag(self, key: bytes, exercise: str, entry: dict[str, Any]) -> str:
        return hmac.new(key, _canonical(exercise, entry), hashlib.sha256).hexdigest()

    def load(self) -> dict[str, ExerciseProgress]:
        """Everything recorded so far (empty when there is no file or it is unreadable)."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        exercises = data.get("exercises", {}) if isinstance(data, dict) else {}
        key = self._key(create=False)
        out = {}
        for name, value in exercises.items() if isinstance(exercises, dict) else ():
            if not isinstance(value, dict):
                continue
            known = {k: v for k, v in value.items() if k in ExerciseProgress.__dataclass_fields__ and k != "verified"}
            try:
                entry = ExerciseProgress(**known)
            except TypeError:
                continue
            tag = value.get("tag")
            good = key is not None and isinstance(tag, str) and hmac.compare_digest(
                tag, self._tag(key, name, asdict(entry)))
            if not good:
                entry = replace(entry, passed=False, passed_on_attempt=None, verified=False,
                                last_status="not verified (changed outside the grader)")
            out[name] = entry
        return out

    def save(self, progress: dict[str, ExerciseProgress]) -> None:
        """Write ``progress`` atomically, each entry with its tag."""
        key = self._key(create=True)
        assert key is not None
        entries = {}
        for name, value in sorted(progress.items()):
            entry = asdict(value)
            entry.pop("verified", None)
            entry["tag"] = self._tag(key, name, {**entry, "verified": True})
            entries[name] = entry
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
        if not old.verified:
            old = ExerciseProgress()
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
