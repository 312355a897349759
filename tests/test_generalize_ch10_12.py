"""Chapters 10–12 graded over the whole input space each exercise names (issue "Grading that generalizes").

For each exercise of chapters 10, 11 and 12:

* **valid designs pass** — at least two correct answers written differently from the reference (another
  comparison, another parser, another order of the checks the README leaves free) pass on several seeds;
* **wrong answers are rejected by the right rule** — plausible mistakes from each class of the issue
  (a boundary never probed, an axis that never varied, one input per rule, two faults at once …) fail
  on every one of 20 seeds, in the check named, and the failure cites the rule that was actually broken;
* **one truth** — the reference answers like the simulator's own implementation (the oracle) on the
  inputs the generated checks draw;
* **every variation on every seed** — the case kinds of each check are fixed lists, so the variations
  the seed used to draw inside a kind are now kinds of their own.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from test_exercises import SEEDS, _edit

from mcp_sim.grading import get_exercise
from mcp_sim.grading.exercises import ex10_token_audience
from mcp_sim.grading.runner import grade_seeds, reference_path

ALT_SEEDS = [0, 1, 7]


def _source(exercise_id: str, edits: Any) -> str:
    if isinstance(edits, str):
        return edits
    return _edit(reference_path(exercise_id).read_text(encoding="utf-8"), *edits)


def _grade(tmp_path: Path, exercise_id: str, source: str, seeds: list[int], only: tuple[str, ...] = ()) -> list[Any]:
    path = tmp_path / f"{exercise_id}_answer.py"
    path.write_text(source, encoding="utf-8")
    return grade_seeds(get_exercise(exercise_id), path, path.name, seeds, only=list(only))


# --- ex10_token_audience ---------------------------------------------------------------------------

AUDIENCE_ALT_EARLY_SCOPES = '''
def check_token(token, resource, required_scopes, now_ms):
    expired = not now_ms < token["exp_ms"]
    foreign = "aud" not in token or token["aud"] != resource
    if expired or foreign:
        return 401
    held = token["scopes"]
    return 200 if all(s in held for s in required_scopes) else 403
'''

AUDIENCE_ALT_AUD_FIRST = '''
def check_token(token, resource, required_scopes, now_ms):
    for ok in (token.get("aud", None) == resource, token["exp_ms"] > now_ms):
        if not ok:
            return 401
    missing = set(required_scopes).difference(token["scopes"])
    return 403 if missing else 200
'''

# (exercise, name, source, checks that must pass — all when empty)
ALTERNATIVES: list[tuple[str, str, str]] = [
    ("ex10_token_audience", "flags first, all() over the scopes", AUDIENCE_ALT_EARLY_SCOPES),
    ("ex10_token_audience", "audience before expiry, a set difference", AUDIENCE_ALT_AUD_FIRST),
]

# (exercise, name, edits-or-source, the check that must fail, the rule its failure names)
WRONG: list[tuple[str, str, Any, str, str]] = [
    ("ex10_token_audience", "now == exp still served",
     [("if now_ms >= token[\"exp_ms\"]:", "if now_ms > token[\"exp_ms\"]:")],
     "Expired tokens are refused, valid ones served", "auth.invalid-token-401"),
    ("ex10_token_audience", "the audience's prefix accepted",
     [("if token.get(\"aud\") != resource:", "if not resource.startswith(token.get(\"aud\", \"\") or \"-\"):")],
     "The audience is exactly this server", "auth.server-validates-audience"),
    ("ex10_token_audience", "a token without aud accepted",
     [("if token.get(\"aud\") != resource:", "if token.get(\"aud\", resource) != resource:")],
     "The audience is exactly this server", "auth.server-validates-audience"),
    ("ex10_token_audience", "audiences compared ignoring case",
     [("if token.get(\"aud\") != resource:", "if str(token.get(\"aud\")).lower() != resource.lower():")],
     "The audience is exactly this server", "auth.server-validates-audience"),
    ("ex10_token_audience", "a substring of the scope accepted",
     [("if not set(required_scopes) <= set(token[\"scopes\"]):",
       "if not all(any(s in r for s in token[\"scopes\"]) for r in required_scopes):")],
     "Scopes are whole strings; a missing one is 403", "auth.insufficient-scope-403"),
    ("ex10_token_audience", "wildcard scopes granted",
     [("if not set(required_scopes) <= set(token[\"scopes\"]):",
       "if not ('*' in token['scopes'] or set(required_scopes) <= {s.replace(':*', ':read') for s in token['scopes']} "
       "| set(token['scopes'])):")],
     "Scopes are whole strings; a missing one is 403", "auth.insufficient-scope-403"),
    ("ex10_token_audience", "any one required scope suffices",
     [("if not set(required_scopes) <= set(token[\"scopes\"]):",
       "if required_scopes and not set(required_scopes) & set(token[\"scopes\"]):")],
     "Scopes are whole strings; a missing one is 403", "auth.insufficient-scope-403"),
    ("ex10_token_audience", "scopes checked before the audience (403 before 401)",
     [("    if token.get(\"aud\") != resource:", "    if not set(required_scopes) <= set(token[\"scopes\"]):\n"
       "        return 403\n    if token.get(\"aud\") != resource:")],
     "Two faults at once: 401 comes before 403", "auth.server-validates-audience"),
    ("ex10_token_audience", "scopes checked before the expiry",
     [("    if now_ms >= token[\"exp_ms\"]:", "    if not set(required_scopes) <= set(token[\"scopes\"]):\n"
       "        return 403\n    if now_ms >= token[\"exp_ms\"]:")],
     "Two faults at once: 401 comes before 403", "auth.invalid-token-401"),
    ("ex10_token_audience", "scopes as an ordered list",
     [("if not set(required_scopes) <= set(token[\"scopes\"]):",
       "if list(required_scopes) != [s for s in token[\"scopes\"] if s in required_scopes]:")],
     "Expired tokens are refused, valid ones served", "auth.insufficient-scope-403"),
    ("ex10_token_audience", "the audience's prefix accepted (generated)",
     [("if token.get(\"aud\") != resource:", "if not resource.startswith(token.get(\"aud\", \"\") or \"-\"):")],
     "Any token, resource and time answers like the fixed validation", "auth.server-validates-audience"),
    ("ex10_token_audience", "now == exp still served (generated)",
     [("if now_ms >= token[\"exp_ms\"]:", "if now_ms > token[\"exp_ms\"]:")],
     "Any token, resource and time answers like the fixed validation", "auth.invalid-token-401"),
]


@pytest.mark.parametrize(("exercise_id", "name", "source"), ALTERNATIVES, ids=[f"{a[0]}:{a[1]}" for a in ALTERNATIVES])
def test_a_valid_alternative_design_passes(tmp_path: Path, exercise_id: str, name: str, source: str) -> None:
    for result in _grade(tmp_path, exercise_id, source, ALT_SEEDS):
        assert result.passed, f"{name}:\n{result}"


@pytest.mark.parametrize(("exercise_id", "name", "edits", "failing_check", "rule"), WRONG,
                         ids=[f"{w[0]}:{w[1]}" for w in WRONG])
def test_a_wrong_answer_is_rejected_by_the_right_rule(tmp_path: Path, exercise_id: str, name: str, edits: Any,
                                                      failing_check: str, rule: str) -> None:
    ex = get_exercise(exercise_id)
    assert failing_check in {c.name for c in ex.checks}, f"unknown check {failing_check!r}"
    for result in _grade(tmp_path, exercise_id, _source(exercise_id, edits), SEEDS, (failing_check,)):
        assert not result.load_error, f"{name} does not load:\n{result.load_error}"
        check = next(c for c in result.checks if c.name == failing_check)
        assert check.status == "failed", f"{name} was not rejected by {failing_check!r} on a seed:\n{result}"
        assert check.rule == rule, f"{name}: the failure names {check.rule!r}, not {rule!r}:\n{result}"
        assert check.explanation and check.kind


# --- one truth: the reference answers like the oracle on the generated inputs ------------------------

@functools.cache
def _reference(exercise_id: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"reference_{exercise_id}", reference_path(exercise_id))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TRUTH_SETTINGS = settings(max_examples=150, database=None, deadline=None, derandomize=True)


@TRUTH_SETTINGS
@given(case=ex10_token_audience._token_cases())
def test_token_audience_reference_is_the_oracle(case: Any) -> None:
    claims, resource, required, now = case
    ref = _reference("ex10_token_audience")
    assert ref.check_token(dict(claims), resource, list(required), now) == ex10_token_audience._oracle(*case)[0]


def test_token_audience_corners_are_the_reference_too() -> None:
    ref = _reference("ex10_token_audience")
    statuses = set()
    for case in ex10_token_audience._corners():
        want = ex10_token_audience._oracle(*case)[0]
        assert ref.check_token(dict(case[0]), case[1], list(case[2]), case[3]) == want, case
        statuses.add(want)
    assert statuses == {200, 401, 403}
