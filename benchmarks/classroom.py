"""A class's grading load: N simulated learners × every exercise, through the grading service.

Each learner submits every exercise once — half of them the reference solution, half the starter as
shipped (which fails), so both the full path and the early-failure path are measured — over the
service's HTTP API (the same routes ``mcp-sim submit`` uses, identity by a stand-in for the Hub), and
the service's worker pool grades each submission in the OS sandbox (``--isolation os``). The run is
repeated with 1 worker and with one per core, which shows how the figure grows with cores.

Target: a class of 200 graded in under an hour on 2 cores (``projected_minutes_for_200``), linear in
cores (``speedup``).

Run: ``python benchmarks/classroom.py [--learners N] [--exercises ID,...]`` (prints one JSON object).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

from starlette.testclient import TestClient

from mcp_sim.grading import EXERCISES
from mcp_sim.grading.classroom.service import Settings, create_app
from mcp_sim.grading.classroom.store import Store
from mcp_sim.grading.runner import reference_path, starter_path


class Learners:
    """Identity stand-in: token ``t-<name>`` is learner ``<name>``."""

    def user_for_token(self, token: str) -> str | None:
        return token[2:] if token.startswith("t-") else None

    def login_redirect(self, state: str, challenge: str) -> str:
        return "/"

    def token_for_code(self, code: str, verifier: str) -> str:
        return code

    def pkce(self) -> tuple[str, str]:
        return "v", "c"


def run(learners: int, exercises: list[str], workers: int) -> dict[str, Any]:
    """Grade ``learners`` × ``exercises`` with ``workers`` workers; the figures."""
    with tempfile.TemporaryDirectory(prefix="mcp-sim-class-bench-") as tmp:
        store = Store(f"sqlite:///{Path(tmp) / 'grades.sqlite'}")
        app = create_app(Settings(workers=workers, poll_seconds=0.05), Learners(), store)
        with TestClient(app) as client:
            start = time.perf_counter()
            for n in range(learners):
                for i, exercise in enumerate(exercises):
                    path = reference_path(exercise) if (n + i) % 2 == 0 else starter_path(exercise)
                    reply = client.post("/api/submissions", headers={"Authorization": f"token t-learner{n}"},
                                        json={"exercise": exercise, "source": path.read_text(encoding="utf-8")})
                    assert reply.status_code == 202, reply.text
            while store.pending():
                time.sleep(0.1)
            elapsed = time.perf_counter() - start
        book = store.gradebook()
    graded = len(book)
    assert graded == learners * len(exercises), f"{graded} graded of {learners * len(exercises)}"
    per_learner = elapsed / learners
    return {"workers": workers, "learners": learners, "exercises": len(exercises), "seconds": round(elapsed, 1),
            "seconds_per_learner": round(per_learner, 2),
            "learners_per_minute_per_core": round(60 / per_learner / workers, 3),
            "passed": sum(r["passed"] for r in book)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=2)
    parser.add_argument("--exercises", default="", help="comma-separated ids (default: every exercise)")
    ns = parser.parse_args()
    exercises = [e for e in ns.exercises.split(",") if e] or list(EXERCISES)
    cores = os.cpu_count() or 1
    run(1, exercises[:1], 1)  # warm-up: the first sandbox start pays for cold caches
    one = run(ns.learners, exercises, 1)
    many = run(ns.learners, exercises, cores)
    per_learner_on_2 = many["seconds_per_learner"] * cores / 2
    report = {"machine": {"python": platform.python_version(), "cores": cores},
              "one_worker": one, "one_worker_per_core": many,
              "speedup": round(one["seconds"] / many["seconds"], 2),
              "projected_minutes_for_200_on_2_cores": round(200 * per_learner_on_2 / 60, 1),
              "target": "200 learners x every exercise in under 60 minutes on 2 cores, linear in cores"}
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
