"""Grading one submission on the instructor's side: the learner's source, in the OS sandbox.

The service never runs a learner's code in its own process and never trusts anything the learner's
machine says about a result: it receives the *source*, writes it into a fresh folder of its own, and
grades it with :func:`~mcp_sim.grading.runner.grade_file` under ``isolation="os"`` (see
:mod:`mcp_sim.grading.isolation`), where the reference solutions, the other learners' submissions and
the database are not in view. The verdict is made here, from the JSON the sandboxed process returned.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, Final

from mcp_sim.grading.exercises import UnknownExercise, get_exercise
from mcp_sim.grading.isolation import Isolation
from mcp_sim.grading.progress import ProgressStore
from mcp_sim.grading.runner import grade_file

MAX_SOURCE_BYTES: Final = 256 * 1024
"""A submission is one exercise's file; anything larger is refused before it is stored."""


class BadSubmission(ValueError):
    """A submission that cannot be graded (unknown exercise, not text, too large); the message says why."""


def validate(exercise: Any, source: Any) -> tuple[str, str]:
    """The exercise id and source of a submission, or :class:`BadSubmission`."""
    if not isinstance(exercise, str):
        raise BadSubmission("'exercise' must be an exercise id such as ex05_pagination")
    try:
        get_exercise(exercise)
    except UnknownExercise as exc:
        raise BadSubmission(str(exc)) from None
    if not isinstance(source, str):
        raise BadSubmission("'source' must be the text of your exercise file")
    if len(source.encode("utf-8")) > MAX_SOURCE_BYTES:
        raise BadSubmission(f"the file is larger than {MAX_SOURCE_BYTES // 1024} KiB")
    return exercise, source


def grade_source(exercise_id: str, source: str, *, isolation: Isolation = "os") -> dict[str, Any]:
    """Grade ``source`` as the learner's file for ``exercise_id``; the :class:`GradeResult` as a dict."""
    exercise = get_exercise(exercise_id)
    with tempfile.TemporaryDirectory(prefix="mcp-sim-submission-") as tmp:
        folder = Path(tmp) / exercise_id
        folder.mkdir()
        path = folder / "starter.py"
        path.write_text(source, encoding="utf-8")
        nowhere = ProgressStore(Path(tmp) / "progress.json")  # the service keeps no progress file
        result = grade_file(exercise, path, f"exercises/{exercise_id}/starter.py", progress=nowhere,
                            isolation=isolation)
    return result.to_dict()
