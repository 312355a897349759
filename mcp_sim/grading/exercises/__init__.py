"""The course's exercises, one module per exercise, each defining ``EXERCISE``.

The registry is read-only: :data:`EXERCISES` maps an exercise id to its :class:`Exercise` in course
order. The learner's files live outside the package, in the project's ``exercises/`` folder; the
checks live here so they run the same whether the package is installed or used from a checkout.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from mcp_sim.grading.exercises import (
    ex01_topology,
    ex02_error_codes,
    ex02_next_message,
    ex03_era_detection,
    ex03_modern_meta,
    ex03_version_negotiation,
    ex04_mrtr_loop,
    ex04_seal_state,
    ex05_diagnose,
    ex05_pagination,
    ex05_tool_results,
    ex05_who_controls,
    ex06_diagnose_stdout,
    ex06_drops_duplicates,
    ex06_http_answers,
    ex06_legacy_sessions,
    ex06_stdio_framer,
    ex07_cache,
    ex07_list_changed,
    ex07_next_message,
    ex08_diagnose,
    ex08_next_message,
    ex08_task_polling,
    ex09_host_policy,
    ex09_next_step,
    ex09_who_decides,
    ex10_authorize_call,
    ex10_origin_check,
    ex10_replay_guard,
    ex10_review_everything,
    ex10_sandbox_policy,
    ex10_token_audience,
    ex11_discovery_urls,
    ex11_pkce,
    ex11_token_check,
    ex12_capstone,
)
from mcp_sim.grading.model import Exercise

EXERCISES: Final[Mapping[str, Exercise]] = MappingProxyType({
    m.EXERCISE.id: m.EXERCISE
    for m in (ex01_topology, ex02_next_message, ex02_error_codes, ex03_version_negotiation, ex03_modern_meta,
              ex03_era_detection, ex04_mrtr_loop, ex04_seal_state,
              ex05_tool_results, ex05_pagination, ex05_diagnose, ex05_who_controls,
              ex06_stdio_framer, ex06_http_answers, ex06_legacy_sessions, ex06_drops_duplicates,
              ex06_diagnose_stdout,
              ex07_list_changed, ex07_cache, ex07_next_message,
              ex08_task_polling, ex08_next_message, ex08_diagnose,
              ex09_who_decides, ex09_host_policy, ex09_next_step,
              ex10_review_everything, ex10_authorize_call, ex10_replay_guard,
              ex10_origin_check, ex10_token_audience, ex10_sandbox_policy,
              ex11_discovery_urls, ex11_token_check, ex11_pkce,
              ex12_capstone)
})
"""Every exercise, in course order."""


class UnknownExercise(KeyError):
    """No exercise has this id."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown exercise"


def get_exercise(exercise_id: str) -> Exercise:
    """The exercise called ``exercise_id``, or an error listing the ones that exist."""
    try:
        return EXERCISES[exercise_id]
    except KeyError:
        raise UnknownExercise(f"no exercise called {exercise_id!r}; the exercises are: "
                              f"{', '.join(EXERCISES)}") from None
