"""Grading speed: the time to grade one exercise and all of them, as ``mcp-sim grade`` does.

Each grade starts a learner process, loads the file and runs every check on every case kind. The
reference solutions are graded (every check runs to the end, the slowest path). Each exercise's figure
is the median of its runs; the figure for "one" is the median over the exercises, and the slowest is
named. Targets: one exercise in under 1 s, the capstone (``ex12_capstone``) in under 10 s.

Run: ``python benchmarks/grade.py [--repeat N]`` (prints one JSON object).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time

from mcp_sim.grading import EXERCISES, get_exercise, reference_path
from mcp_sim.grading.runner import grade_file


def time_one(exercise_id: str, failed: list[str]) -> float:
    """Seconds to grade the reference solution of ``exercise_id`` once (all checks should pass; one that
    does not is added to ``failed``, named in the report)."""
    start = time.perf_counter()
    result = grade_file(get_exercise(exercise_id), reference_path(exercise_id), reference=True)
    elapsed = time.perf_counter() - start
    if not result.passed and exercise_id not in failed:
        failed.append(exercise_id)
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per exercise; the median is kept (default 3)")
    parser.add_argument("exercises", nargs="*", metavar="EXERCISE", help="exercise ids (default: all)")
    ns = parser.parse_args(argv)
    ids = ns.exercises or list(EXERCISES)
    per_exercise = {}
    failed: list[str] = []
    for exercise_id in ids:
        runs = [time_one(exercise_id, failed) for _ in range(max(1, ns.repeat))]
        per_exercise[exercise_id] = round(statistics.median(runs), 3)
    start = time.perf_counter()
    for exercise_id in ids:
        time_one(exercise_id, failed)
    all_seconds = time.perf_counter() - start
    slowest = max(per_exercise, key=lambda k: per_exercise[k])
    report = {
        "benchmark": "grade",
        "python": platform.python_version(),
        "exercises": len(per_exercise),
        "one_exercise_median_s": round(statistics.median(per_exercise.values()), 3),
        "one_exercise_slowest_s": per_exercise[slowest],
        "slowest_exercise": slowest,
        "all_exercises_s": round(all_seconds, 3),
        "per_exercise_s": per_exercise,
        "target_one_exercise_s": 1.0,
        "capstone_s": per_exercise.get("ex12_capstone"),
        "target_capstone_s": 10.0,
        "over_target": sorted(k for k, v in per_exercise.items() if v > (10.0 if k == "ex12_capstone" else 1.0)),
        "references_not_passing": failed,
    }
    sys.stdout.write(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
