"""Classroom grading in an operating-system sandbox (``mcp-sim grade --isolation os``).

Each cheat route that beat the self-study grader's in-process guard — libc ``open`` through ``ctypes``,
a ``dir_fd``-relative open, emptying the guard through ``gc``, ``__import__`` with no globals, a
transitive import of a forbidden module, a test fixture's answer, forging the progress record — is
tried under ``--isolation os`` with the reference solutions, the tests and the progress record on
disk in the instructor's tree. Each must fail, and say it was blocked. A control shows the routes are
real: the same code reading a file that *is* in the learner's view succeeds, so only the file's
absence from the sandbox stops it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mcp_sim.grading import get_exercise
from mcp_sim.grading.isolation import IsolationUnavailable, check_available, hidden_parts
from mcp_sim.grading.progress import ProgressStore
from mcp_sim.grading.runner import grade_file, reference_path

EXERCISE = "ex05_pagination"
ROOT = Path(__file__).resolve().parents[1]


def _available() -> str:
    try:
        check_available()
    except IsolationUnavailable as exc:
        return str(exc)
    return ""


_WHY = _available()
pytestmark = pytest.mark.skipif(bool(_WHY) and not os.environ.get("CI"), reason=f"no OS sandbox here: {_WHY}")

# Every cheat defines list_page() in terms of a "steal" that returns the reference's source (or an
# object with list_page) and raises "blocked: ..." when it cannot.
_ANSWER_FROM_SOURCE = '''
def list_page(items, cursor, page_size):
    source = steal()
    namespace = {}
    exec(compile(source, "stolen", "exec"), namespace)
    return namespace["list_page"](items, cursor, page_size)
'''

CHEATS: dict[str, str] = {
    "ctypes libc open": '''
import ctypes
def steal():
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.open(TARGET.encode(), 0)
    if fd < 0:
        raise RuntimeError(f"blocked: libc open() failed, errno {ctypes.get_errno()}")
    buf = ctypes.create_string_buffer(1 << 20)
    n = libc.read(fd, buf, 1 << 20)
    libc.close(fd)
    return buf.raw[:n].decode()
''' + _ANSWER_FROM_SOURCE,
    "dir_fd relative open": '''
import os
def steal():
    here = os.open(".", os.O_RDONLY)
    try:
        fd = os.open(os.path.relpath(TARGET, os.getcwd()), os.O_RDONLY, dir_fd=here)
    except OSError as exc:
        raise RuntimeError(f"blocked: {exc}") from None
    with os.fdopen(fd) as fh:
        return fh.read()
''' + _ANSWER_FROM_SOURCE,
    "gc on the guard": '''
import gc
def steal():
    for obj in gc.get_objects():
        if type(obj).__name__ == "Guard":
            for value in vars(obj).values():
                if isinstance(value, (list, set, dict)):
                    value.clear()
    try:
        with open(TARGET) as fh:
            return fh.read()
    except OSError as exc:
        raise RuntimeError(f"blocked: {exc}") from None
''' + _ANSWER_FROM_SOURCE,
    "__import__ without globals": '''
import os, sys
def steal():
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(TARGET))))
    try:
        module = __import__("exercises.solutions." + os.path.basename(TARGET)[:-3], {}, {}, ["list_page"])
    except ImportError as exc:
        raise RuntimeError(f"blocked: {exc}") from None
    return open(module.__file__).read()
''' + _ANSWER_FROM_SOURCE,
    "test fixture": '''
import glob, os
def steal():
    tests = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(TARGET))), "tests")
    found = sorted(glob.glob(os.path.join(tests, "*.py")))
    if not found:
        raise RuntimeError(f"blocked: no test files at {tests}")
    return open(TARGET).read()
''' + _ANSWER_FROM_SOURCE,
}

TRANSITIVE = '''
import sys
try:
    import mcp_sim.scenarios.weather  # allowed; it imports mcp_sim.capabilities, which is forbidden
except ImportError as exc:
    _problem = f"blocked: {exc}"
else:
    _problem = ""

def list_page(items, cursor, page_size):
    module = sys.modules.get("mcp_sim.capabilities.pagination")
    paginate = getattr(module, "paginate", None)
    if paginate is None:
        raise RuntimeError(_problem or "blocked: mcp_sim.capabilities.pagination is empty here")
    try:
        page, after = paginate(items, cursor, page_size, "tools")
    except Exception as exc:
        return {"error": {"code": -32602, "message": str(exc)}}
    return {"items": page, **({"nextCursor": after} if after else {})}
'''

FORGE = '''
import json, os
def list_page(items, cursor, page_size):
    entry = {"attempts": 1, "best_checks_passed": 99, "passed": True}
    try:
        fd = os.open(PROGRESS, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    except OSError as exc:
        raise RuntimeError(f"blocked: {exc}") from None
    with os.fdopen(fd, "w") as fh:
        json.dump({"ex05_pagination": entry}, fh)
    raise RuntimeError("forged")
'''


def _write(tmp_path: Path, name: str, body: str, **constants: str) -> Path:
    folder = tmp_path / "learner"
    folder.mkdir(exist_ok=True)
    head = "".join(f"{k} = {v!r}\n" for k, v in constants.items())
    path = folder / "starter.py"
    path.write_text(head + textwrap.dedent(body), encoding="utf-8")
    return path


def _grade(path: Path, store: ProgressStore | None = None) -> str:
    result = grade_file(get_exercise(EXERCISE), path, "starter.py", isolation="os", progress=store)
    assert not result.passed, "a cheat passed under --isolation os:\n" + str(result)
    return json.dumps(result.to_dict())


@pytest.mark.parametrize("route", sorted(CHEATS))
def test_cheat_route_is_blocked_by_the_os_sandbox(tmp_path: Path, route: str) -> None:
    target = reference_path(EXERCISE)
    assert target.is_file(), "the reference must be on disk for this test to mean anything"
    report = _grade(_write(tmp_path, route, CHEATS[route], TARGET=str(target)))
    assert "blocked" in report, report[:2000]


@pytest.mark.parametrize("route", sorted(set(CHEATS) - {"__import__ without globals"}))
def test_the_same_route_reads_what_is_in_view(tmp_path: Path, route: str) -> None:
    """The control: a copy of the reference inside the learner's own folder (which the sandbox shows)
    is read by the same code, so the grade passes — only absence stops the cheat above. (An import
    of ``exercises.…`` is refused by the learner-side guard as well, so it has no such control.)"""
    if route == "test fixture":
        tree = tmp_path / "learner" / "tree"
        (tree / "exercises" / "solutions").mkdir(parents=True)
        (tree / "tests").mkdir()
        (tree / "tests" / "test_x.py").write_text("", encoding="utf-8")
        (tree / "exercises" / "__init__.py").write_text("", encoding="utf-8")
        (tree / "exercises" / "solutions" / "__init__.py").write_text("", encoding="utf-8")
        copy = tree / "exercises" / "solutions" / f"{EXERCISE}.py"
    else:
        copy = tmp_path / "learner" / "notes.py"
    copy.parent.mkdir(parents=True, exist_ok=True)
    copy.write_text(reference_path(EXERCISE).read_text(encoding="utf-8"), encoding="utf-8")
    path = _write(tmp_path, route, CHEATS[route], TARGET=str(copy))
    result = grade_file(get_exercise(EXERCISE), path, "starter.py", isolation="os")
    assert result.passed, str(result)


def test_a_transitive_import_cannot_reach_a_forbidden_module(tmp_path: Path) -> None:
    report = _grade(_write(tmp_path, "transitive", TRANSITIVE))
    assert "blocked" in report, report[:2000]


def test_progress_cannot_be_forged_from_the_sandbox(tmp_path: Path) -> None:
    store = ProgressStore(tmp_path / "instructor" / ".mcp-sim" / "progress.json")
    store.path.parent.mkdir(parents=True)
    store.path.write_text("{}", encoding="utf-8")
    report = _grade(_write(tmp_path, "forge", FORGE, PROGRESS=str(store.path)), store)
    assert "blocked" in report, report[:2000]
    assert store.path.read_text(encoding="utf-8") == "{}"


def test_every_reference_solution_passes_inside_the_sandbox() -> None:
    """What a correct learner writes passes under --isolation os as it does in self-study (the
    capstone's server runs in the sandbox too)."""
    done = subprocess.run([sys.executable, "-c", "import sys; from mcp_sim.cli import main; sys.exit(main())", "grade", "--reference", "--isolation", "os"],
                          capture_output=True, text=True, timeout=600, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]


def test_the_view_hides_the_checks_and_the_answer_modules_but_keeps_what_the_capstone_needs() -> None:
    package = ROOT / "mcp_sim"
    hidden = {p.relative_to(package).as_posix() for p in hidden_parts(package, ("mcp_sim.capabilities",))}
    assert "grading/runner.py" in hidden and "grading/exercises/ex05_pagination.py" in hidden
    assert "capabilities/pagination.py" in hidden and "grading/sandbox.py" not in hidden
    assert not any(h.startswith("protocol/") for h in hidden)
    capstone = get_exercise("ex12_capstone")
    kept = {p.relative_to(package).as_posix() for p in hidden_parts(package, capstone.forbidden, capstone.needs)}
    assert "security/identity.py" not in kept and "grading/launcher.py" not in kept
    assert "security/url_safety.py" in kept


def test_a_machine_without_a_sandbox_gets_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import mcp_sim.grading.isolation as isolation

    monkeypatch.setattr(isolation.sys, "platform", "darwin")
    with pytest.raises(IsolationUnavailable, match="Linux"):
        isolation.check_available()
