"""Grading speed: the time to grade one exercise and all of them, as ``mcp-sim grade`` does.

Each grade starts a learner process, loads the file and runs every check on every case kind. The
reference solutions are graded (every check runs to the end, the slowest path); the figure for "one"
is the median over the exercises, and the slowest is named. Target: one exercise in under 1 s.

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


def time_one(exercise_id: str) -> float:
    """Seconds to grade the reference solution of ``exercise_id`` once (all checks pass)."""
    start = time.perf_counter()
    result = grade_file(get_exercise(exercise_id), reference_path(exercise_id), reference=True)
    elapsed = time.perf_counter() - start
    if not result.passed:
        raise SystemExit(f"the reference solution of {exercise_id} did not pass:\n{result}")
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per exercise; the best is kept (default 3)")
    ns = parser.parse_args(argv)
    per_exercise = {}
    for exercise_id in EXERCISES:
        per_exercise[exercise_id] = round(min(time_one(exercise_id) for _ in range(max(1, ns.repeat))), 3)
    start = time.perf_counter()
    for exercise_id in EXERCISES:
        time_one(exercise_id)
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
    }
    sys.stdout.write(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
