"""Hints that escalate: a failure shows the rule and the case, never the answer; hints come one at a
time when asked for (the CLI's ``--hints N``, the panel's "Show next hint"); the answer is the last
hint; a learner's exception is shown once however many checks it broke."""

from __future__ import annotations

import random
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from mcp_sim.grading import grade
from mcp_sim.grading.commands import grade_command
from mcp_sim.grading.model import Check, CheckContext, CheckFailed, Exercise, Hint, cite_rule
from mcp_sim.grading.result import RAISED, CheckResult, GradeResult, render_html
from mcp_sim.grading.runner import run_check
from mcp_sim.protocol import rulebook

EX = "ex02_error_codes"
# Right about parse errors and invalid requests, wrong (-32600) about everything else.
WRONG = '''import json


def choose_error_code(line, server):
    try:
        json.loads(line)
    except ValueError:
        return -32700
    return -32600
'''
# Two different exceptions: one for lines that are not JSON, another for everything else.
TWO_ERRORS = '''import json


def choose_error_code(line, server):
    try:
        json.loads(line)
    except ValueError:
        raise RuntimeError("cannot parse") from None
    raise KeyError("no such key")
'''


@pytest.fixture(autouse=True)
def _progress_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_SIM_PROGRESS", str(tmp_path / "progress.json"))


def _graded(tmp_path: Path, source: str) -> GradeResult:
    path = tmp_path / "learner.py"
    path.write_text(source, encoding="utf-8")
    return grade(EX, file=path, record=False)


@pytest.fixture(scope="module")
def wrong(tmp_path_factory: pytest.TempPathFactory) -> GradeResult:
    path = tmp_path_factory.mktemp("wrong") / "learner.py"
    path.write_text(WRONG, encoding="utf-8")
    return grade(EX, file=path, record=False)


def test_the_first_failure_shows_the_rule_and_the_case_never_the_answer(wrong: GradeResult) -> None:
    first = wrong.first_failure
    assert first is not None and first.status == "failed"
    assert first.case and first.expected and first.rule
    assert first.expected not in first.explanation and "Expected" not in first.explanation
    for shown in (wrong.to_text(), render_html(wrong).split("Show next hint")[0]):
        assert "Rule broken:" in shown
        assert "Case (seed" in shown or "<b>Case</b> <small>(seed" in shown
        assert "Your function returned -32600." in shown
        assert first.expected not in shown.replace("&#x27;", "'").replace("&quot;", '"')
        assert "Hint 1 of" not in shown
    text = wrong.to_text()
    assert first.case.splitlines()[0] in text
    assert f"{len(wrong.hint_steps)} hints, none shown" in text and "the answer" in text


def test_hints_escalate_and_only_the_last_gives_the_answer(wrong: GradeResult) -> None:
    steps = wrong.hint_steps
    first = wrong.first_failure
    assert first is not None and len(steps) >= 3
    assert steps[0].endswith(first.hint)  # the failing check's own hint first: what to compare
    assert all(first.expected not in s for s in steps[:-1])
    assert first.expected in steps[-1] and "The answer" in steps[-1]
    assert [wrong.hint(n) for n in range(1, len(steps) + 1)] == list(steps)
    two = wrong.to_text(hints=2)
    assert "Hint 1 of" in two and "Hint 2 of" in two and "Hint 3 of" not in two
    assert "--hints 3" in two and first.expected not in two
    everything = wrong.to_text(hints=len(steps))
    assert f"Hint {len(steps)} of {len(steps)}: The answer" in everything and "Next hint" not in everything


def test_the_cli_shows_no_hint_unless_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "exercises"
    (folder / "solutions").mkdir(parents=True)
    (folder / EX).mkdir()
    (folder / EX / "starter.py").write_text(WRONG, encoding="utf-8")
    monkeypatch.setenv("MCP_SIM_EXERCISES", str(folder))
    assert grade_command([EX]) == 1
    out = capsys.readouterr().out
    assert "Hint 1 of" not in out and "hints, none shown" in out and "Rule broken:" in out
    assert grade_command([EX, "--hints", "1"]) == 1
    out = capsys.readouterr().out
    assert "Hint 1 of" in out and "Hint 2 of" not in out
    assert grade_command([EX, "--hints", "99"]) == 1
    out = capsys.readouterr().out
    assert "The answer for the case of" in out


def test_grade_help_names_the_hints_option(capsys: pytest.CaptureFixture[str]) -> None:
    assert grade_command(["--help"]) == 0
    out = capsys.readouterr().out
    assert "--hints N" in out and "default 0" in out


def test_each_exception_is_shown_once(tmp_path: Path) -> None:
    starter = grade(EX, record=False)  # raises NotImplementedError in every check
    # the fixed checks report the exception as an error; a generated check, as the input it met it on
    assert len(starter.checks) > 2 and all(c.status == "error" or c.explanation.startswith(RAISED)
                                           for c in starter.checks)
    assert starter.to_text().count("Traceback") == 1
    assert render_html(starter).count("Traceback") == 1
    assert starter.to_text().count("The same problem as") == len(starter.checks) - 1
    two = _graded(tmp_path, TWO_ERRORS)
    repeated = two.repeats()
    distinct = {c.explanation for i, c in enumerate(two.checks) if not c.passed and i not in repeated}
    assert len(distinct) == 2
    assert two.to_text().count("Traceback") == 2
    assert render_html(two).count("Traceback") == 2
    text = two.to_text()
    assert text.count("raised RuntimeError") == 1 and text.count("raised KeyError") == 1


def test_the_panel_reveals_one_hint_per_click_and_each_traceback_once(wrong: GradeResult) -> None:
    from mcp_sim.widgets.grader_panel import GraderPanel

    panel = GraderPanel(wrong)
    steps = wrong.hint_steps
    first = wrong.first_failure
    assert first is not None
    rows = "".join(getattr(w, "value", "") for w in panel.children)
    assert "Rule broken:" in rows and "Case" in rows and "Hint 1 of" not in rows
    assert panel.hint_button.description == "Show next hint" and panel.hint_box.children == ()
    for n in range(1, len(steps) + 1):
        panel.hint_button.click()
        shown = [w.value for w in panel.hint_box.children]
        assert len(shown) == n and f"Hint {n} of {len(steps)}" in shown[-1]
        answer_shown = any(first.expected.replace("—", "") in s.replace("—", "") for s in shown)
        assert answer_shown == (n == len(steps))
    assert panel.hint_button.disabled and panel.show_next_hint() is None

    starter = GraderPanel(grade(EX, record=False))
    html = "".join(getattr(w, "value", "") for w in starter.children)
    assert html.count("Traceback") == 1 and "The same problem as" in html


def test_a_passed_result_offers_no_hints() -> None:
    result = grade(EX, reference=True)
    assert result.passed and result.hint_steps == () and "hints" not in result.to_text(hints=5)


def _result(rule: str, **check: Any) -> GradeResult:
    failed = CheckResult("a check", "failed", "Your function returned 1.", rule, 1, 7, "", "compare the ids",
                         "some kind", **check)
    return GradeResult(exercise="exX", title="t", chapter="02", file="f.py", rules=(rule,), checks=(failed,),
                       hints=("a general hint",))


def test_a_rulebook_id_is_cited_and_a_rule_text_shown_as_it_is() -> None:
    rule = rulebook.all_rules()[0]
    cited = _result(rule.id, case="the input", expected="2")
    assert rule.cite() in cited.to_text() and rule.cite() in render_html(cited).replace("&#x27;", "'")
    assert cite_rule(rule.id) == rule.cite()
    plain = _result("MCP: ids are strings or integers.", case="the input", expected="2")
    assert "Rule broken: MCP: ids are strings or integers." in plain.to_text()
    assert cite_rule("no rule with this id, just words") == "no rule with this id, just words"
    assert str(Hint("look at the id", rule.id)) == f"look at the id (Rule: {rule.cite()})"
    assert plain.hint_steps == ("For “a check”: compare the ids", "a general hint",
                                "The answer for the case of “a check” (seed 7, kind 'some kind'): 2")
    without = _result("r")
    assert without.hint_steps == ("For “a check”: compare the ids", "a general hint")
    assert not without.last_hint_gives_answer and "the answer" not in without.to_text()


def test_a_failure_reports_the_smallest_case_of_its_kind() -> None:
    """After the first failing case the same kind is tried on the check's other seeds, and the shortest
    case is reported with its own seed and answer."""
    lengths: dict[int, int] = {}

    def run(ctx: CheckContext, kind: str) -> None:
        n = random.Random(ctx.seed).randint(1, 40)
        lengths[ctx.seed] = n
        raise CheckFailed("wrong", case="x" * n, expected=f"answer {n}")

    check = Check("c", "a rule", run, ("only",), seeds=5)
    exercise = Exercise("exT", "t", "02", ("a rule",), ("f",), (check,), ())
    learner: Any = SimpleNamespace(printed=[])
    result = run_check(exercise, 0, learner)
    assert len(lengths) == 5
    shortest = min(lengths.values())
    assert result.case == "x" * shortest and result.expected == f"answer {shortest}"
    assert result.seed == min((s for s in lengths if lengths[s] == shortest), key=list(lengths).index)
    assert result.cases == 1  # the verdict came from the first case; the others only looked for a smaller one

