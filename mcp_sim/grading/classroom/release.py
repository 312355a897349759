"""``mcp-sim class release DIR``: the learner's copy of the course, with nothing the grader keeps to itself.

The instructor's tree holds what learners must not have in a graded class: the reference solutions
(``exercises/solutions/``), the tests (their fixtures include correct answers), the benchmarks (the
mutation reports quote the references line by line), the CI folder and any grading state. The
release is every file the project tracks minus those, so a learner's server can be built from it
(or the release folder itself handed out); the class's grader keeps the full tree.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Final

WITHHELD: Final = ("exercises/solutions", "tests", "benchmarks", ".ci", ".mcp-sim", ".git", ".venv")
"""Folders of the instructor's tree that never reach the learner's copy."""


def _tracked(root: Path) -> Iterator[Path]:
    """The project's files: what git tracks, or (outside a checkout) every file but caches."""
    if (root / ".git").exists():
        done = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], capture_output=True, check=True)
        for name in sorted(n for n in done.stdout.decode("utf-8").split("\0") if n):
            yield Path(name)
        return
    for path in sorted(root.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and not any(p.endswith(".egg-info") for p in path.parts):
            yield path.relative_to(root)


def withheld(relative: Path) -> bool:
    """Whether ``relative`` (a path inside the project) stays with the instructor."""
    text = relative.as_posix()
    return any(text == w or text.startswith(w + "/") for w in WITHHELD)


def release(root: Path, target: Path) -> list[Path]:
    """Copy the learner's files of the project at ``root`` into ``target`` (which must not exist or be
    empty); the files copied, relative to ``target``."""
    if target.exists() and any(target.iterdir()):
        raise FileExistsError(f"{target} is not empty; release into a new folder")
    copied = []
    for relative in _tracked(root):
        if withheld(relative) or not (root / relative).is_file():
            continue
        destination = target / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / relative, destination)
        copied.append(relative)
    return copied
