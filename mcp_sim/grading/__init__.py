"""The grader: exercises as data, checks over fixed case kinds, learner code in its own process.

In a notebook::

    from mcp_sim.grading import grade
    grade("ex02_error_codes")          # a panel: each check PASSED/FAILED, why, the rule, hints

In a terminal: ``mcp-sim grade [EXERCISE...]`` and ``mcp-sim progress``.

Modules, one idea each:

* :mod:`~mcp_sim.grading.model` — what an exercise and a check are;
* :mod:`~mcp_sim.grading.exercises` — the course's exercises (checks, rules, hints);
* :mod:`~mcp_sim.grading.sandbox` — the learner's process: loads their file, answers calls, refuses
  forbidden imports and writes outside its scratch folder;
* :mod:`~mcp_sim.grading.learner_code` — the grader's handle on that process: calls across it, their
  line on errors, time limits, captured prints;
* :mod:`~mcp_sim.grading.launcher` — the capstone's learner process: the learner's server, under the
  same hooks, served as a real stdio MCP server for the official SDK's client (a check may start it);
* :mod:`~mcp_sim.grading.runner` — running the checks and making the verdict, in the grader's process;
* :mod:`~mcp_sim.grading.result` — results as text, HTML and widget;
* :mod:`~mcp_sim.grading.progress` — the project's progress file (tagged, written by the grader only);
* :mod:`~mcp_sim.grading.commands` — the ``mcp-sim grade`` / ``mcp-sim progress`` commands.
"""

from mcp_sim.grading.exercises import EXERCISES, get_exercise
from mcp_sim.grading.model import Check, CheckContext, CheckFailed, Exercise, Hint
from mcp_sim.grading.progress import ProgressStore
from mcp_sim.grading.result import CheckResult, GradeResult
from mcp_sim.grading.runner import exercises_dir, grade, reference_path, starter_path

__all__ = [
    "EXERCISES",
    "Check",
    "CheckContext",
    "CheckFailed",
    "CheckResult",
    "Exercise",
    "GradeResult",
    "Hint",
    "ProgressStore",
    "exercises_dir",
    "get_exercise",
    "grade",
    "reference_path",
    "starter_path",
]
