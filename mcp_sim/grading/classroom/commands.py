"""``mcp-sim class …`` (the instructor's) and ``mcp-sim submit`` (the learner's) commands.

Commands print: stdout is their output. Each returns an exit code (0 ok, 1 failed, 2 usage or setup).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from mcp_sim.grading.exercises import UnknownExercise, get_exercise
from mcp_sim.grading.progress import project_root

CONFIG = Path(__file__).with_name("jupyterhub_config.py")


def _out(text: str) -> None:
    sys.stdout.write(text + "\n")


def class_command(args: list[str]) -> int:
    """``mcp-sim class release DIR`` · ``serve`` · ``regrade [--db URL]`` · ``hub-config``."""
    parser = argparse.ArgumentParser(prog="mcp-sim class", description="Run the course for a class.")
    sub = parser.add_subparsers(dest="action", required=True)
    rel = sub.add_parser("release", help="write the learners' copy of the course (no solutions, no tests) to DIR")
    rel.add_argument("dir", type=Path)
    sub.add_parser("serve", help="run the grading service (JupyterHub starts it: see hub-config)")
    again = sub.add_parser("regrade", help="grade every stored submission again, in the sandbox (after a grader change)")
    again.add_argument("--db", default="", help="the database URL (default: $MCP_SIM_GRADES_DB)")
    sub.add_parser("hub-config", help="print a jupyterhub_config.py for a class on this machine")
    try:
        ns = parser.parse_args(args)
    except SystemExit as exc:
        return 0 if exc.code == 0 else 2
    if ns.action == "release":
        from mcp_sim.grading.classroom.release import release

        try:
            files = release(project_root(), ns.dir)
        except FileExistsError as exc:
            _out(f"mcp-sim class release: {exc}")
            return 2
        _out(f"{len(files)} files written to {ns.dir} (withheld: reference solutions, tests, benchmarks, CI).")
        return 0
    if ns.action == "regrade":
        import os

        from mcp_sim.grading.classroom.grader import grade_source
        from mcp_sim.grading.classroom.store import Store

        store = Store(ns.db or os.environ.get("MCP_SIM_GRADES_DB", "sqlite:///mcp-sim-grades.sqlite"))
        count = store.requeue_all()
        while (job := store.claim()) is not None:
            number, exercise, source = job
            store.finish(number, grade_source(exercise, source))
        _out(f"{count} submissions graded again.")
        return 0
    if ns.action == "serve":
        from mcp_sim.grading.classroom.service import main

        main()
        return 0
    _out(CONFIG.read_text(encoding="utf-8"))
    return 0


def submit_command(args: list[str]) -> int:
    """``mcp-sim submit EXERCISE [--file FILE] [--json]``: send your file to the class's grader."""
    parser = argparse.ArgumentParser(prog="mcp-sim submit",
                                     description="Submit an exercise to your class's grading service (on JupyterHub).")
    parser.add_argument("exercise")
    parser.add_argument("--file", help="the file to submit (default: the exercise's starter.py)")
    parser.add_argument("--json", action="store_true", help="print the service's answer as JSON")
    try:
        ns = parser.parse_args(args)
        get_exercise(ns.exercise)
    except SystemExit as exc:
        return 0 if exc.code == 0 else 2
    except UnknownExercise as exc:
        _out(f"mcp-sim submit: {exc}")
        return 2
    from mcp_sim.grading.classroom.client import NotInAClass, submit

    try:
        state = submit(ns.exercise, file=ns.file)
    except (NotInAClass, RuntimeError, OSError) as exc:
        _out(f"mcp-sim submit: {exc}")
        return 2
    if ns.json:
        _out(json.dumps(state, indent=2, sort_keys=True))
    else:
        result = state.get("result") or {}
        _out(f"submission #{state.get('id')}: {state.get('status')}, "
             f"{state.get('checks_passed')}/{state.get('checks_total')} checks passed"
             + ("" if not result.get("load_error") else f"\n{result['load_error']}"))
    return 0 if state.get("passed") else 1
