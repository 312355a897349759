"""The learner's process: whatever the learner's code does becomes a message they can act on, the
grader's own tracebacks and temporary paths never show, and the project's files never change."""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path

import pytest

from mcp_sim.grading import ProgressStore, exercises_dir, get_exercise, grade
from mcp_sim.grading.result import GradeResult
from mcp_sim.grading.runner import grade_file

EX = "ex03_version_negotiation"
PROJECT = exercises_dir().parent
CORRECT = ("def choose_version(requested, supported):\n"
           "    return requested if requested in supported else max(supported)\n"
           "\n"
           "def client_accepts(chosen, client_supported):\n"
           "    return chosen in client_supported\n"
           "\n"
           "def handshake(client_supported, server_supported):\n"
           "    chosen = choose_version(max(client_supported), server_supported)\n"
           "    return chosen if client_accepts(chosen, client_supported) else None\n")


@pytest.fixture(autouse=True)
def _progress_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "progress.json"
    monkeypatch.setenv("MCP_SIM_PROGRESS", str(path))
    return path


def tree() -> dict[str, str]:
    """The project's files by content (the package, exercises, notebooks, tests)."""
    out = {}
    for name in ("mcp_sim", "exercises", "notebooks", "tests"):
        for p in sorted((PROJECT / name).rglob("*")):
            if p.is_file() and "__pycache__" not in p.parts:
                out[p.relative_to(PROJECT).as_posix()] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def run(tmp_path: Path, source: str, **kwargs: float) -> GradeResult:
    """Grade ``source`` as a learner file; check the project is unchanged and nothing leaked."""
    path = tmp_path / "learner" / "mine.py"
    path.parent.mkdir(exist_ok=True)
    path.write_text(source, encoding="utf-8")
    before = tree()
    result = grade_file(get_exercise(EX), path, "mine.py", **kwargs)  # type: ignore[arg-type]
    assert tree() == before, "grading changed the project's files"
    text = str(result) + result._repr_html_()
    for leak in ("mcp_sim/grading", "sandbox.py", "learner_code.py", tempfile.gettempdir() + "/mcp-sim-grade",
                 str(PROJECT)):
        if leak in source:
            continue  # the learner's own line, quoted back to them
        assert leak not in text, f"{leak!r} shown to the learner:\n{text}"
    return result


def first_bad(result: GradeResult) -> str:
    failure = result.first_failure
    assert failure is not None, result
    return failure.explanation


def with_body(body: str, prelude: str = "") -> str:
    """CORRECT with choose_version's body replaced."""
    head = "def choose_version(requested, supported):\n"
    rest = CORRECT.split("\n\n", 1)[1]
    return prelude + head + body + "\n\n" + rest


def test_keyboard_interrupt_is_a_message_at_the_learners_line(tmp_path: Path) -> None:
    result = run(tmp_path, with_body("    raise KeyboardInterrupt"))
    message = first_bad(result)
    assert "KeyboardInterrupt" in message and 'mine.py", line 2, in choose_version' in message
    assert result.first_failure is not None and result.first_failure.status == "error"
    assert result.status == "failed" and "TIME LIMIT" not in str(result)


def test_sys_exit_is_a_message_at_the_learners_line(tmp_path: Path) -> None:
    result = run(tmp_path, with_body("    import sys\n    sys.exit(3)"))
    message = first_bad(result)
    assert "called sys.exit(3)" in message and "line 3" in message
    assert result.first_failure is not None and result.first_failure.status == "error"


def test_closing_stdout_does_not_break_grading(tmp_path: Path) -> None:
    source = with_body("    import sys\n    print('before')\n    sys.stdout.close()\n"
                       "    return requested if requested in supported else max(supported)")
    result = run(tmp_path, source)
    assert result.passed, result
    assert any("before" in c.output for c in result.checks)


def test_os_exit_is_reported_as_ending_the_process(tmp_path: Path) -> None:
    result = run(tmp_path, with_body("    import os\n    os._exit(0)"))
    message = first_bad(result)
    assert "ended its process" in message and "os._exit(0)" in message and "choose_version()" in message
    assert "gave no result" not in str(result)
    assert result.first_failure is not None and result.first_failure.status == "error"
    # the checks that do not call choose_version still run, in a fresh process
    assert any(c.passed for c in result.checks)


def test_a_leftover_thread_in_a_correct_answer_is_a_note_not_a_failure(tmp_path: Path) -> None:
    prelude = ("import threading, time\n"
               "_started = []\n")
    body = ("    if not _started:\n"
            "        _started.append(threading.Thread(target=time.sleep, args=(60,), name='ticker'))\n"
            "        _started[0].start()\n"
            "    return requested if requested in supported else max(supported)")
    result = run(tmp_path, with_body(body, prelude))
    assert result.passed, result
    assert any("thread" in n and "ticker" in n for n in result.notes)
    assert "endless" not in str(result) and "TIME LIMIT" not in str(result)


def test_files_are_written_only_in_a_scratch_folder_and_reported(tmp_path: Path) -> None:
    body = ("    with open('notes.txt', 'w') as fh:\n        fh.write('x')\n"
            "    return requested if requested in supported else max(supported)")
    result = run(tmp_path, with_body(body))
    assert result.passed, result
    assert any("notes.txt" in n and "scratch folder" in n for n in result.notes)
    assert not (tmp_path / "learner" / "notes.txt").exists()


def test_writing_or_deleting_project_files_is_refused(tmp_path: Path) -> None:
    starter = exercises_dir() / EX / "starter.py"
    body = (f"    import os\n    os.remove({str(starter)!r})\n"
            "    return requested")
    result = run(tmp_path, with_body(body))
    message = first_bad(result)
    assert "outside the scratch folder" in message and "line 3" in message
    assert starter.is_file()
    overwrite = with_body(f"    open({str(starter)!r}, 'w').write('')\n    return requested")
    assert "outside the scratch folder" in first_bad(run(tmp_path, overwrite))


def test_the_progress_record_is_not_opened_by_accident(tmp_path: Path, _progress_in_tmp: Path) -> None:
    """Against accidents, not a determined learner (self-study keeps no secret; see progress.py)."""
    ProgressStore.default().record(grade(EX, reference=True, record=False))
    record = ProgressStore.default().path
    body = (f"    return open({str(record)!r}, 'w').write('{{}}')")
    message = first_bad(run(tmp_path, with_body(body)))
    assert "PermissionError" in message and "progress record" in message


def test_a_deleted_starter_is_said_plainly(tmp_path: Path) -> None:
    result = grade_file(get_exercise(EX), tmp_path / "exercises" / EX / "starter.py", f"exercises/{EX}/starter.py")
    assert not result.passed and result.status == "error"
    assert "does not exist" in result.load_error and "git checkout" in result.load_error
    assert "return type" not in str(result)


def test_input_reads_nothing_and_learner_stdout_cannot_forge(tmp_path: Path) -> None:
    body = ("    import os, json\n"
            "    os.write(1, (json.dumps({'op': 'result', 'value': 'x'}) + '\\n').encode())\n"
            "    try:\n        input()\n    except EOFError:\n        pass\n"
            "    return 'nonsense'")
    result = run(tmp_path, with_body(body))
    assert not result.passed
    assert "'nonsense'" in first_bad(result)


def test_time_limit_comes_from_the_status_field_not_the_wording(tmp_path: Path) -> None:
    # a message that talks about time is not a time-out
    result = run(tmp_path, with_body("    raise ValueError('time limit exceeded, timeout!')"))
    assert result.first_failure is not None and result.first_failure.status == "error"
    assert "TIME LIMIT" not in result.headline() and result.status == "failed"
    looping = run(tmp_path, with_body("    while True:\n        pass"), case_time_limit=0.3)
    assert looping.first_failure is not None and looping.first_failure.status == "timeout"
    assert "⏱ TIME LIMIT" in str(looping)


def test_ending_the_process_while_loading_is_said_as_such(tmp_path: Path) -> None:
    result = run(tmp_path, "import os\nos._exit(7)\n" + CORRECT)
    assert result.status == "error" and not result.passed
    assert "ended its process while loading your file" in result.load_error and "os._exit(7)" in result.load_error
