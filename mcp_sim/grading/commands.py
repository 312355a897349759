"""``mcp-sim grade`` and ``mcp-sim progress``: the grader from a terminal.

These two functions are the only places in the grading package that print to stdout: they are
commands, and stdout is their output. Each parses its own arguments with argparse and returns an exit
code (0 = everything graded passed, 1 = something failed, 2 = a usage error).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from mcp_sim.grading.exercises import EXERCISES, UnknownExercise, get_exercise
from mcp_sim.grading.isolation import ISOLATIONS, IsolationUnavailable
from mcp_sim.grading.progress import ProgressStore
from mcp_sim.grading.runner import ExercisesNotFound, grade


def _parser_grade() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="mcp-sim grade", description="Grade exercises (default: all of them).",
        epilog="Self-study grading checks your understanding, not your honesty: your code runs in a process of "
               "its own, as you, and could read anything you can, the reference solutions included. Nothing it "
               "records is proof of anything to anyone else. A class grades with --isolation os (or on its "
               "JupyterHub), where your code runs in an operating-system sandbox that holds only your files.")
    p.add_argument("exercises", nargs="*", metavar="EXERCISE", help="exercise ids, e.g. ex02_error_codes")
    p.add_argument("--json", metavar="FILE", help="also write the results as JSON to FILE")
    p.add_argument("--reference", action="store_true", help="grade the reference solutions (all must pass)")
    p.add_argument("--seed", type=int, default=0, help="another set of seeded cases (default 0)")
    p.add_argument("--hints", type=int, default=0, metavar="N",
                   help="show the first N hints of a failed exercise, one more each time you ask (default 0: "
                        "none; the last hint gives the answer for the case shown)")
    p.add_argument("--isolation", choices=ISOLATIONS, default="process",
                   help="process (default, self-study): your code in a process of its own; os: inside a Linux "
                        "sandbox (bubblewrap) that holds only your files and the public package, no network")
    p.add_argument("--list", action="store_true", help="list the exercises and exit")
    p.add_argument("--list-cases", action="store_true",
                   help="list each check of the exercises with the case kinds it tries on every seed, and exit")
    return p


def case_list(exercise_id: str) -> str:
    """Every check of ``exercise_id`` with the case kinds it tries — the same list on every seed (the
    seed changes surface values only), so this is every mistake class the grade covers."""
    ex = get_exercise(exercise_id)
    lines = [f"{ex.id} — {ex.title}: {len(ex.checks)} checks, "
             f"{sum(len(c.kinds) * c.seeds for c in ex.checks)} cases on every seed"]
    for c in ex.checks:
        lines.append(f"  {c.name}  [rule {c.rule}; {c.seeds} seeds × {len(c.kinds)} kinds]")
        lines.extend(f"    - {kind}" for kind in c.kinds)
    return "\n".join(lines)


def _write_json_atomically(path: Path, payload: object) -> None:
    folder = path.parent if str(path.parent) else Path(".")
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(payload, fh, indent=2, ensure_ascii=False)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _out(text: str) -> None:
    """The command's output (these functions are the command line, not library code)."""
    sys.stdout.write(text + "\n")


def grade_command(args: list[str]) -> int:
    """``mcp-sim grade [EXERCISE...] [--json FILE] [--reference] [--seed N] [--hints N] [--list]
    [--list-cases]``."""
    parser = _parser_grade()
    try:
        ns = parser.parse_args(args)
    except SystemExit as exc:  # argparse already printed the usage message
        return 0 if exc.code == 0 else 2
    if ns.list:
        for ex in EXERCISES.values():
            _out(f"{ex.id:<28} chapter {ex.chapter}  {ex.title}")
        return 0
    ids = ns.exercises or list(EXERCISES)
    try:
        for exercise_id in ids:
            get_exercise(exercise_id)
    except UnknownExercise as exc:
        _out(f"mcp-sim grade: {exc}")
        return 2
    if ns.list_cases:
        for exercise_id in ids:
            _out(case_list(exercise_id))
        return 0
    results = []
    try:
        for exercise_id in ids:
            result = grade(exercise_id, reference=ns.reference, seed=ns.seed, isolation=ns.isolation)
            results.append(result)
            _out(result.to_text(hints=ns.hints) if not result.passed else result.headline())
            _out("")
    except (ExercisesNotFound, IsolationUnavailable) as exc:
        _out(f"mcp-sim grade: {exc}")
        return 2
    passed = sum(r.passed for r in results)
    what = "reference solutions" if ns.reference else "exercises"
    _out(f"{passed}/{len(results)} {what} passed.")
    if ns.json:
        _write_json_atomically(Path(ns.json), {"reference": ns.reference, "seed": ns.seed,
                                               "passed": passed == len(results),
                                               "results": [r.to_dict() for r in results]})
    return 0 if passed == len(results) else 1


def progress_table(store: ProgressStore) -> str:
    """The progress file as a plain-text table, one row per exercise in course order."""
    progress = store.load()
    rows = [("exercise", "ch.", "status", "checks", "attempts", "title")]
    for ex in EXERCISES.values():
        p = progress.get(ex.id)
        if p is None or p.attempts == 0:
            status, checks, attempts = "not started", "–", "0"
        else:
            status = "✔ passed" if p.passed else f"✘ {p.last_status}"
            checks = f"{p.best_checks_passed}/{p.total_checks}"
            attempts = str(p.attempts)
        rows.append((ex.id, ex.chapter, status, checks, attempts, ex.title))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    lines = []
    for i, r in enumerate(rows):
        lines.append("  ".join(c.ljust(w) for c, w in zip(r[:-1], widths, strict=True)) + "  " + r[-1])
        if i == 0:
            lines.append("  ".join("-" * w for w in widths) + "  " + "-" * len(r[-1]))
    done = sum(1 for ex in EXERCISES if progress.get(ex) and progress[ex].passed)
    lines.append(f"\n{done}/{len(EXERCISES)} exercises passed. (Your own record of self-study grading: it "
                 f"checks understanding, not honesty, and proves nothing to anyone else.)")
    return "\n".join(lines)


def progress_command(args: list[str]) -> int:
    """``mcp-sim progress [--file FILE] [--json]``: show what has been passed so far."""
    parser = argparse.ArgumentParser(prog="mcp-sim progress", description="Show your progress through the exercises.")
    parser.add_argument("--file", metavar="FILE", help="progress file (default: $MCP_SIM_PROGRESS or the "
                                                       "project's .mcp-sim/progress.json)")
    parser.add_argument("--json", action="store_true", help="print the progress as JSON")
    try:
        ns = parser.parse_args(args)
    except SystemExit as exc:
        return 0 if exc.code == 0 else 2
    store = ProgressStore(Path(ns.file)) if ns.file else ProgressStore.default()
    if ns.json:
        from dataclasses import asdict

        _out(json.dumps({k: asdict(v) for k, v in store.load().items()}, indent=2, sort_keys=True))
        return 0
    _out(progress_table(store))
    return 0
