"""The grader itself: containment of learner code, results, progress, commands, the panel."""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from pathlib import Path

import pytest

from mcp_sim.grading import ProgressStore, exercises_dir, get_exercise, grade, starter_path
from mcp_sim.grading.commands import grade_command, progress_command
from mcp_sim.grading.result import GradeResult
from mcp_sim.grading.runner import display_name, grade_file, reference_path

EX = "ex03_version_negotiation"


@pytest.fixture(autouse=True)
def _progress_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "progress.json"
    monkeypatch.setenv("MCP_SIM_PROGRESS", str(path))
    return path


def _learner(tmp_path: Path, body: str, name: str = "learner.py") -> Path:
    """A learner file for ex03_version_negotiation whose choose_version has ``body``."""
    source = (
        "def choose_version(requested, supported):\n"
        f"{body}\n"
        "\n"
        "def client_accepts(chosen, client_supported):\n"
        "    return chosen in client_supported\n"
        "\n"
        "def handshake(client_supported, server_supported):\n"
        "    chosen = choose_version(max(client_supported), server_supported)\n"
        "    return chosen if client_accepts(chosen, client_supported) else None\n"
    )
    folder = tmp_path / "learner"
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(source, encoding="utf-8")
    return path


def _digest(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_an_exception_shows_the_learners_file_and_line(tmp_path: Path) -> None:
    path = _learner(tmp_path, "    if requested in supported:\n        return requested\n"
                              "    return supported[len(supported)]")
    result = grade(EX, file=path, record=False)
    assert not result.passed
    failure = next(c for c in result.checks if c.status == "error")
    assert "IndexError" in failure.explanation
    assert 'learner.py", line 4, in choose_version' in failure.explanation
    assert "return supported[len(supported)]" in failure.explanation
    assert "mcp_sim" not in failure.explanation  # the grader's own frames are filtered out
    # the checks that do not reach the bad line still pass
    assert any(c.passed for c in result.checks)


def test_a_syntax_error_names_the_line(tmp_path: Path) -> None:
    path = _learner(tmp_path, "    return requested +")
    result = grade(EX, file=path, record=False)
    assert not result.passed and result.status == "error"
    assert "line 2" in result.load_error and "could not read your file" in result.load_error


def test_not_implemented_says_which_function(tmp_path: Path) -> None:
    result = grade_file(get_exercise("ex02_error_codes"), starter_path("ex02_error_codes"))
    assert "choose_error_code() is not written yet" in result.checks[0].explanation
    assert "starter.py" in result.checks[0].explanation


def test_an_infinite_loop_is_stopped_with_a_readable_message(tmp_path: Path) -> None:
    path = _learner(tmp_path, "    while True:\n        pass")
    start = time.monotonic()
    result = grade(EX, file=path, record=False, case_time_limit=0.5, time_limit=20)
    elapsed = time.monotonic() - start
    assert elapsed < 15
    looping = next(c for c in result.checks if c.status == "timeout")
    assert "Stopped after 0.5 s" in looping.explanation
    assert "line 2" in looping.explanation and "while True" in looping.explanation
    assert result.status in ("failed", "timeout")


def test_a_loop_that_swallows_the_interruption_is_killed_by_the_hard_limit(tmp_path: Path) -> None:
    body = ("    while True:\n"
            "        try:\n"
            "            while True:\n"
            "                pass\n"
            "        except BaseException:\n"
            "            pass")
    path = _learner(tmp_path, body)
    start = time.monotonic()
    result = grade(EX, file=path, record=False, case_time_limit=0.3, time_limit=3)
    elapsed = time.monotonic() - start
    assert elapsed < 3 + 10
    killed = next(c for c in result.checks if c.status == "timeout")
    assert "kept running even after being interrupted" in killed.explanation
    assert "except BaseException" in killed.explanation
    assert not result.passed
    assert "TIME LIMIT" in str(result)


def test_prints_are_captured_and_shown(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    path = _learner(tmp_path, "    print('thinking about', requested)\n    return requested")
    path.write_text("print('loading my module')\n" + path.read_text(encoding="utf-8"), encoding="utf-8")
    result = grade(EX, file=path, record=False)
    assert "loading my module" in result.load_output
    assert any("thinking about" in c.output for c in result.checks)
    assert "thinking about" in str(result)
    out, _err = capfd.readouterr()
    assert "thinking about" not in out and "loading my module" not in out


def test_learner_files_are_never_modified(tmp_path: Path) -> None:
    path = _learner(tmp_path, "    return requested")
    folder = path.parent
    before = _digest(folder)
    grade(EX, file=path, record=False)
    assert _digest(folder) == before  # same files, same bytes: no __pycache__ either
    starters = exercises_dir()
    before_starters = _digest(starters)
    grade_file(get_exercise(EX), starter_path(EX))
    assert _digest(starters) == before_starters


def test_forbidden_imports_are_refused_when_made_not_when_mentioned(tmp_path: Path) -> None:
    path = _learner(tmp_path, "    return negotiate_version(requested, supported)")
    path.write_text("from mcp_sim.protocol.lifecycle import negotiate_version\n" + path.read_text(encoding="utf-8"),
                    encoding="utf-8")
    result = grade(EX, file=path, record=False)
    assert not result.passed and result.status == "error"
    assert "mcp_sim.protocol.lifecycle" in result.load_error and "line 1" in result.load_error
    # a comment or docstring naming the module is harmless: the rule is enforced at import time
    mention = _learner(tmp_path, '    """Not mcp_sim.protocol.lifecycle: my own."""\n'
                                 "    return requested if requested in supported else max(supported)", "mention.py")
    assert grade(EX, file=mention, record=False).passed
    # importlib is refused too
    sneaky = _learner(tmp_path, "    import importlib\n"
                                "    return importlib.import_module('mcp_sim.protocol.lifecycle')", "sneaky.py")
    result = grade(EX, file=sneaky, record=False)
    assert any("forbids mcp_sim.protocol.lifecycle" in c.explanation for c in result.checks)


def test_grading_is_deterministic() -> None:
    ex = get_exercise("ex02_error_codes")
    a = grade_file(ex, starter_path(ex.id)).to_dict()
    b = grade_file(ex, starter_path(ex.id)).to_dict()
    assert a == b


def test_result_round_trips_and_renders_words_not_only_colour() -> None:
    ex = get_exercise("ex01_topology")
    result = grade_file(ex, starter_path(ex.id))
    again = GradeResult.from_dict(json.loads(json.dumps(result.to_dict())))
    assert again == result
    html = result._repr_html_()
    assert "FAILED" in html and "✘" in html and "Rule broken:" in html and "Show next hint (1 of" in html
    assert "notebooks/01_roles.ipynb" in html
    text = str(result)
    assert "FAILED" in text and "Hint 1 of" not in text and "Hint 1 of" in result.to_text(hints=1)
    passed = grade_file(ex, reference_path(ex.id), reference=True)
    assert "PASSED" in passed._repr_html_() and "✔" in str(passed)
    bundle = result._repr_mimebundle_()
    assert "text/html" in bundle and "text/plain" in bundle


def test_grader_panel_reveals_hints_one_at_a_time() -> None:
    from mcp_sim.widgets.grader_panel import GraderPanel

    ex = get_exercise("ex01_topology")
    result = grade_file(ex, starter_path(ex.id))
    panel = GraderPanel(result)
    assert panel.hint_box.children == ()
    shown = [panel.show_next_hint() for _ in range(len(result.hint_steps))]
    assert shown == list(result.hint_steps)
    assert len(panel.hint_box.children) == len(result.hint_steps)
    assert panel.hint_button.disabled
    assert panel.show_next_hint() is None
    html = "".join(getattr(w, "value", "") for w in panel.children)
    assert "FAILED" in html and "✘" in html


def _project_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    copy = tmp_path / "exercises"
    shutil.copytree(exercises_dir(), copy)
    monkeypatch.setenv("MCP_SIM_EXERCISES", str(copy))
    return copy


def test_progress_file_round_trips_and_is_written_atomically(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             _progress_in_tmp: Path) -> None:
    store = ProgressStore.default()
    assert store.path == _progress_in_tmp
    assert store.load() == {}
    wrong = _learner(tmp_path, "    return requested").read_text(encoding="utf-8")
    exercises = _project_copy(tmp_path, monkeypatch)
    starter = exercises / EX / "starter.py"
    starter.write_text(wrong, encoding="utf-8")
    assert not grade(EX).passed
    starter.write_text(reference_path(EX).read_text(encoding="utf-8"), encoding="utf-8")
    assert grade(EX).passed
    grade(EX)
    progress = store.load()[EX]
    assert progress.attempts == 3 and progress.passed and progress.passed_on_attempt == 2
    assert progress.best_checks_passed == progress.total_checks == len(get_exercise(EX).checks)
    raw = json.loads(_progress_in_tmp.read_text(encoding="utf-8"))
    assert raw["version"] == 3 and EX in raw["exercises"] and "tag" not in raw["exercises"][EX]
    assert not any(p.suffix == ".key" for p in _progress_in_tmp.parent.iterdir())  # no key beside it
    assert [p.name for p in _progress_in_tmp.parent.iterdir() if p.name.startswith(".progress")] == []
    # reference runs and other files are not recorded as the learner's progress
    grade(EX, reference=True)
    grade(EX, file=reference_path(EX))
    assert store.load()[EX].attempts == 3


def test_self_study_progress_keeps_no_secret(tmp_path: Path, _progress_in_tmp: Path) -> None:
    """Nothing the learner's own process could read is a secret: no key file, no tag — so a hand edit
    is simply the record (self-study grading checks understanding, not honesty), and the command says so."""
    from mcp_sim.grading.commands import progress_table

    store = ProgressStore.default()
    store.record(grade(EX, file=_learner(tmp_path, "    return requested"), record=False))
    assert store.private_paths() == (_progress_in_tmp,)
    raw = json.loads(_progress_in_tmp.read_text(encoding="utf-8"))
    assert set(raw["exercises"][EX]) == {"attempts", "best_checks_passed", "total_checks", "passed",
                                         "passed_on_attempt", "last_status"}
    raw["exercises"][EX]["tag"] = "from an older version"  # read, and ignored
    _progress_in_tmp.write_text(json.dumps(raw), encoding="utf-8")
    assert store.load()[EX].attempts == 1 and not store.load()[EX].passed
    assert "not honesty" in progress_table(store)


def test_one_progress_file_per_project_whatever_the_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("MCP_SIM_PROGRESS")
    here = ProgressStore.default().path
    monkeypatch.chdir(exercises_dir().parent / "notebooks")
    assert ProgressStore.default().path == here
    monkeypatch.chdir(tmp_path)
    assert ProgressStore.default().path == here
    assert here.parent.parent == exercises_dir().parent


def test_a_corrupt_progress_file_is_treated_as_empty(_progress_in_tmp: Path) -> None:
    _progress_in_tmp.write_text("{not json", encoding="utf-8")
    assert ProgressStore.default().load() == {}


def test_grade_command_reference_returns_zero_and_writes_json(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "report.json"
    assert grade_command(["--reference", "--json", str(report)]) == 0
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["passed"] and len(data["results"]) >= 8
    assert all(r["passed"] for r in data["results"])
    # a home folder's path, not its name as a word ("/root" is also in "client/roots" of a rule's address)
    assert f"{Path.home()}/" not in report.read_text(encoding="utf-8") or Path.home() == Path("/")
    assert "reference solutions passed" in capsys.readouterr().out


def test_grade_command_failures_and_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert grade_command(["ex01_topology", "--hints", "3"]) == 1
    out = capsys.readouterr().out
    assert "Hint 3 of " in out and "Hint 4 of" not in out and "FAILED" in out
    assert grade_command(["no_such_exercise"]) == 2
    assert "no exercise called" in capsys.readouterr().out
    assert grade_command(["--bogus-flag"]) == 2
    assert grade_command(["--list"]) == 0
    assert "ex04_seal_state" in capsys.readouterr().out


def test_progress_command_shows_a_table(capsys: pytest.CaptureFixture[str]) -> None:
    ProgressStore.default().record(grade(EX, reference=True, record=False))
    assert progress_command([]) == 0
    out = capsys.readouterr().out
    assert "exercise" in out and "✔ passed" in out and "not started" in out
    assert progress_command(["--json"]) == 0
    assert json.loads(capsys.readouterr().out)[EX]["passed"] is True


def test_exercises_folder_can_be_moved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy = tmp_path / "my-exercises"
    shutil.copytree(exercises_dir(), copy)
    monkeypatch.setenv("MCP_SIM_EXERCISES", str(copy))
    assert starter_path(EX) == copy / EX / "starter.py"
    assert display_name(starter_path(EX)) == f"my-exercises/{EX}/starter.py"
    assert grade(EX, reference=True).passed
