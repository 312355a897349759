"""The class's grading service without a Hub: its store, its routes, its workers, the release and the CLI.

Identity is a stand-in (tokens map to names) so each rule of access is tested directly; the real
Hub is in tests/test_classroom_hub.py. Grading is the real grader in the OS sandbox where the test says
so, else a stand-in that records what it was asked.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from mcp_sim.grading.classroom.grader import BadSubmission, grade_source, validate
from mcp_sim.grading.classroom.release import WITHHELD, release, withheld
from mcp_sim.grading.classroom.service import Settings, create_app
from mcp_sim.grading.classroom.store import Store
from mcp_sim.grading.isolation import IsolationUnavailable, check_available
from mcp_sim.grading.runner import reference_path

ROOT = Path(__file__).resolve().parents[1]


class Tokens:
    """Identity by a fixed table of tokens; PKCE and OAuth codes are simple echoes."""

    def __init__(self, table: dict[str, str]) -> None:
        self.table = table

    def user_for_token(self, token: str) -> str | None:
        return self.table.get(token)

    def login_redirect(self, state: str, challenge: str) -> str:
        return f"https://hub.example/hub/api/oauth2/authorize?state={state}&code_challenge={challenge}"

    def token_for_code(self, code: str, verifier: str) -> str:
        return code if verifier == "verifier" else "nobody"

    def pkce(self) -> tuple[str, str]:
        return "verifier", "challenge"


def _app(tmp_path: Path, grade: Any = None, workers: int = 1) -> tuple[TestClient, Store]:
    store = Store(f"sqlite:///{tmp_path / 'grades.sqlite'}")
    settings = Settings(prefix="/services/g/", instructors=frozenset({"teacher"}), workers=workers, poll_seconds=0.01)
    identity = Tokens({"t-ada": "ada", "t-bob": "bob", "t-teacher": "teacher"})
    fake = grade or (lambda ex, src: {"exercise": ex, "passed": "good" in src,
                                      "checks": [{"status": "passed" if "good" in src else "failed",
                                                  "expected": "the answer"}]})
    return TestClient(create_app(settings, identity, store, fake)), store


def _as(user: str) -> dict[str, str]:
    return {"Authorization": f"token t-{user}"}


def _wait_graded(client: TestClient, number: int, user: str) -> dict[str, Any]:
    for _ in range(500):
        state: dict[str, Any] = client.get(f"/services/g/api/submissions/{number}", headers=_as(user)).json()
        if state["status"] in ("graded", "error"):
            return state
        time.sleep(0.02)
    raise AssertionError("not graded")


def test_learners_see_only_their_own_and_instructors_the_gradebook(tmp_path: Path) -> None:
    client, _ = _app(tmp_path)
    with client:
        ada = client.post("/services/g/api/submissions", headers=_as("ada"),
                          json={"exercise": "ex05_pagination", "source": "good", "user": "bob"}).json()["id"]
        bob = client.post("/services/g/api/submissions", headers=_as("bob"),
                          json={"exercise": "ex05_pagination", "source": "bad"}).json()["id"]
        assert _wait_graded(client, ada, "ada")["passed"] is True
        state = _wait_graded(client, bob, "bob")
        assert state["passed"] is False and state["user"] == "bob"
        assert all("expected" not in c for c in state["result"]["checks"])
        assert client.get(f"/services/g/api/submissions/{bob}", headers=_as("ada")).status_code == 404
        assert client.get("/services/g/api/submissions/nonsense", headers=_as("ada")).status_code == 404
        assert [s["user"] for s in client.get("/services/g/api/submissions", headers=_as("ada")).json()] == ["ada"]
        assert client.get("/services/g/api/gradebook", headers=_as("ada")).status_code == 403
        assert client.get("/services/g/api/submissions", headers={"Authorization": "token forged"}).status_code == 403
        book = client.get("/services/g/api/gradebook", headers=_as("teacher")).json()
        assert [(r["user"], r["passed"], r["attempts"]) for r in book] == [("ada", True, 1), ("bob", False, 1)]
        csv = client.get("/services/g/gradebook.csv", headers=_as("teacher"))
        assert csv.headers["content-type"].startswith("text/csv") and csv.text.count("\n") == 3
        assert "Gradebook" in client.get("/services/g/gradebook", headers=_as("teacher")).text
        assert "Gradebook" not in client.get("/services/g/", headers=_as("ada")).text


def test_bad_submissions_are_refused_with_the_reason(tmp_path: Path) -> None:
    client, store = _app(tmp_path)
    with client:
        for body, why in (({"exercise": "ex99_nope", "source": "x"}, "ex99_nope"),
                          ({"exercise": "ex05_pagination", "source": 3}, "source"),
                          ({"exercise": "ex05_pagination", "source": "x" * 300_000}, "larger")):
            reply = client.post("/services/g/api/submissions", headers=_as("ada"), json=body)
            assert reply.status_code == 400 and why in reply.json()["error"]
        assert client.post("/services/g/api/submissions", headers=_as("ada"), content=b"not json").status_code == 400
    assert list(store.rows()) == []
    with pytest.raises(BadSubmission):
        validate(None, "x")


def test_a_browser_goes_through_oauth_with_pkce_and_gets_a_session(tmp_path: Path) -> None:
    client, _ = _app(tmp_path)
    with client:
        first = client.get("/services/g/", follow_redirects=False)
        assert first.status_code == 302 and "code_challenge=challenge" in first.headers["location"]
        state = first.headers["location"].split("state=")[1].split("&")[0]
        assert client.get("/services/g/oauth_callback?state=wrong&code=t-ada",
                          follow_redirects=False).status_code == 400
        back = client.get(f"/services/g/oauth_callback?state={state}&code=t-ada", follow_redirects=False)
        assert back.status_code == 302
        assert "mcp-sim grader — ada" in client.get("/services/g/").text  # the session cookie identifies ada
        again = client.get(f"/services/g/oauth_callback?state={state}&code=t-ada", follow_redirects=False)
        assert again.status_code == 400  # a state is used once
        assert client.get("/services/g/api/submissions").status_code == 200


def test_a_grader_failure_is_recorded_and_unfinished_work_is_requeued(tmp_path: Path) -> None:
    def broken(exercise: str, source: str) -> dict[str, Any]:
        raise RuntimeError("the sandbox is gone")

    client, store = _app(tmp_path, broken)
    with client:
        number = client.post("/services/g/api/submissions", headers=_as("ada"),
                             json={"exercise": "ex05_pagination", "source": "good"}).json()["id"]
        state = _wait_graded(client, number, "ada")
        assert state["status"] == "error" and "the sandbox is gone" in state["result"]["problem"]
    other = store.submit("bob", "ex05_pagination", "x")
    assert store.claim() == (other, "ex05_pagination", "x") and store.claim() is None
    assert store.requeue_unfinished() == 1 and store.claim() is not None


def test_two_workers_share_the_queue_without_grading_anything_twice(tmp_path: Path) -> None:
    seen: list[str] = []

    def slow(exercise: str, source: str) -> dict[str, Any]:
        time.sleep(0.05)
        seen.append(source)
        return {"exercise": exercise, "passed": True, "checks": []}

    client, store = _app(tmp_path, slow, workers=2)
    with client:
        numbers = [client.post("/services/g/api/submissions", headers=_as("ada"),
                               json={"exercise": "ex05_pagination", "source": f"s{i}"}).json()["id"] for i in range(8)]
        for n in numbers:
            _wait_graded(client, n, "ada")
    assert sorted(seen) == sorted(f"s{i}" for i in range(8)) and store.pending() == 0


def test_the_service_grades_in_the_os_sandbox(tmp_path: Path) -> None:
    try:
        check_available()
    except IsolationUnavailable as exc:
        pytest.skip(str(exc))
    good = grade_source("ex05_pagination", reference_path("ex05_pagination").read_text(encoding="utf-8"))
    assert good["passed"] and good["file"] == "exercises/ex05_pagination/starter.py"
    steal = f"def list_page(items, cursor, page_size):\n    return open({str(reference_path('ex05_pagination'))!r}).read()\n"
    assert not grade_source("ex05_pagination", steal)["passed"]


def test_regrade_grades_every_stored_submission_again_in_the_sandbox(tmp_path: Path) -> None:
    from mcp_sim.cli import main

    try:
        check_available()
    except IsolationUnavailable as exc:
        pytest.skip(str(exc))
    url = f"sqlite:///{tmp_path / 'grades.sqlite'}"
    store = Store(url)
    number = store.submit("ada", "ex05_pagination", reference_path("ex05_pagination").read_text(encoding="utf-8"))
    assert store.claim() is not None
    store.finish(number, {"passed": False, "checks": [{"status": "failed"}]})  # a verdict of an older grader
    assert main(["class", "regrade", "--db", url]) == 0
    row = store.get(number)
    assert row is not None and row.status == "graded" and row.passed is True


def test_the_release_withholds_solutions_tests_and_benchmarks(tmp_path: Path) -> None:
    target = tmp_path / "class"
    files = release(ROOT, target)
    names = {f.as_posix() for f in files}
    assert "exercises/ex05_pagination/starter.py" in names and "pyproject.toml" in names
    assert "mcp_sim/grading/classroom/jupyterhub_config.py" in names
    assert not any(withheld(f) for f in files)
    assert not (target / "exercises" / "solutions").exists() and not (target / "tests").exists()
    assert {"exercises/solutions", "tests", "benchmarks"} <= set(WITHHELD)
    with pytest.raises(FileExistsError):
        release(ROOT, target)
    # the learners' copy still grades its own starters (there is just no reference to grade)
    done = subprocess.run([sys.executable, "-c", "import sys; from mcp_sim.cli import main; sys.exit(main())",
                           "grade", "ex05_pagination"], cwd=target, capture_output=True, text=True, timeout=300,
                          env={"MCP_SIM_EXERCISES": str(target / "exercises"), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 1 and "ex05_pagination" in done.stdout, done.stdout + done.stderr


def test_submit_outside_a_class_says_what_to_do(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp_sim.cli import main

    monkeypatch.delenv("MCP_SIM_CLASS_URL", raising=False)
    monkeypatch.delenv("JUPYTERHUB_API_TOKEN", raising=False)
    assert main(["submit", "ex05_pagination"]) == 2
    assert main(["submit", "ex99_nope"]) == 2


def test_hub_config_is_printed(capsys: pytest.CaptureFixture[str]) -> None:
    from mcp_sim.cli import main

    assert main(["class", "hub-config"]) == 0
    out = capsys.readouterr().out
    assert "c.JupyterHub.services" in out and "access:services!service=mcp-sim-grader" in out
