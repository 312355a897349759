"""The capstone (``ex12_capstone``): the reference passes in both eras on several seeds, the starter
fails with a hint, a crashing or hanging server gets a readable message, a grade takes a few seconds,
and no process outlives a grade. (Wrong answers: ``tests/test_exercises_ch12.py``; starter, reference,
cheats and a hard-coded answer on 20 seeds: ``tests/test_exercises.py -k ex12``.)
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

import pytest

from mcp_sim.grading import get_exercise
from mcp_sim.grading.exercises import ex12_capstone as capstone
from mcp_sim.grading.exercises import ex12_policy as policy
from mcp_sim.grading.runner import grade_file, grade_seeds, reference_path, starter_path

EX = get_exercise("ex12_capstone")
SERVER = "Your server, driven by the official SDK over stdio in both eras"


def children() -> list[tuple[int, str]]:
    """This process's child processes (pid, state), zombies included, from /proc."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[1]) == os.getpid():
            out.append((int(entry.name), fields[0]))
    return out


def wrong(tmp_path: Path, old: str, new: str) -> Path:
    source = reference_path(EX.id).read_text(encoding="utf-8")
    assert old in source, f"fixture out of date: {old!r}"
    path = tmp_path / "ex12_capstone_wrong.py"
    path.write_text(source.replace(old, new, 1), encoding="utf-8")
    return path


@pytest.mark.slow
def test_reference_passes_in_both_eras_on_several_seeds() -> None:
    for result in grade_seeds(EX, reference_path(EX.id), None, [0, 1, 2, 3], reference=True):
        assert result.passed, result
        server = next(c for c in result.checks if c.name == SERVER)
        assert server.cases == len(capstone.ERAS) == 2
    assert [v for v in capstone.ERAS.values()] == ["2025-11-25", "2026-07-28"]


@pytest.mark.slow
def test_starter_fails_with_a_hint_and_a_readable_server_message() -> None:
    result = grade_file(EX, starter_path(EX.id))
    assert not result.passed
    assert "Hint 1 of" not in str(result)  # hints only when asked for
    assert "Hint 1 of" in result.to_text(hints=1)
    server = next(c for c in result.checks if c.name == SERVER)
    assert "did not start" in server.explanation and "build_server() is not written yet" in server.explanation
    assert "starter.py" in server.explanation and server.rule == capstone.R_PROCESS


@pytest.mark.slow
@pytest.mark.parametrize(("old", "new", "words"), [
    ("        del book[expense_id]", "        import os\n        os._exit(7)", "ended"),
    ("        del book[expense_id]", "        while True:\n            pass", "timed out"),
    ('    server = Server("expenses"', '    raise RuntimeError("no database")\n    server = Server("expenses"',
     "RuntimeError: no database"),
], ids=["exits mid-call", "hangs in a tool", "raises while building"])
def test_a_crashing_or_hanging_server_gets_a_readable_message_and_leaves_no_process(
        tmp_path: Path, old: str, new: str, words: str) -> None:
    before = children()
    start = time.monotonic()
    result = grade_seeds(EX, wrong(tmp_path, old, new), None, [0], only=[SERVER])[0]
    elapsed = time.monotonic() - start
    server = next(c for c in result.checks if c.name == SERVER)
    assert server.status == "failed" and server.rule == capstone.R_PROCESS
    assert words in server.explanation or ("session broke off" in server.explanation and words != "RuntimeError"), \
        server.explanation
    assert elapsed < 40, f"a broken server took {elapsed:.1f} s to grade"
    assert children() == before, "a process outlived the grade"


@pytest.mark.slow
def test_a_hint_left_at_its_default_passes(tmp_path: Path) -> None:
    # delete_expense without annotations means readOnlyHint false, destructiveHint true: the same claim.
    path = wrong(tmp_path, '@server.tool(annotations={"readOnlyHint": False, "destructiveHint": True, '
                           '"idempotentHint": True,\n                              "openWorldHint": False})',
                 "@server.tool()")
    for result in grade_seeds(EX, path, None, [0, 1], only=[SERVER]):
        server = next(c for c in result.checks if c.name == SERVER)
        assert server.status == "passed", server.explanation


@pytest.mark.slow
def test_a_whole_grade_takes_a_few_seconds_and_leaves_nothing_running() -> None:
    grade_file(EX, reference_path(EX.id), reference=True)  # imports and schema validators warmed up
    before = children()
    start = time.monotonic()
    result = grade_file(EX, reference_path(EX.id), reference=True, base_seed=7)
    elapsed = time.monotonic() - start
    assert result.passed, result
    assert elapsed < 15, f"a grade took {elapsed:.1f} s (two SDK sessions, mcp-sim check's three processes and the labs; " \
                          f"inflated under load)"
    assert children() == before


def test_the_policy_cases_have_both_verdicts_and_differ_by_seed() -> None:
    wants = {policy.read_case(random.Random(1), k)[1] for k in policy.READ_KINDS}
    assert wants == {True, False}
    first = [policy.read_case(random.Random(1), k)[0] for k in policy.READ_KINDS]
    second = [policy.read_case(random.Random(2), k)[0] for k in policy.READ_KINDS]
    assert all(a != b for a, b in zip(first, second, strict=True))
    assert policy.inside_roots("file:///data/a/ledger/x.csv", ["file:///data/a/ledger"])
    assert not policy.inside_roots("file:///data/a/ledger-old/x.csv", ["file:///data/a/ledger"])
    assert not policy.inside_roots("file:///data/a/ledger/%2e%2e/.netrc", ["file:///data/a/ledger"])


def test_plans_are_seeded_and_mix_callers() -> None:
    plan = capstone.make_plan(random.Random(5))
    assert plan == capstone.make_plan(random.Random(5)) != capstone.make_plan(random.Random(6))
    owners = {e["owner"] for e in plan.expenses}
    assert plan.caller in owners and len(owners) == 3
    assert {e["id"] for e in plan.expenses if e["owner"] == plan.caller} >= {plan.mine}
    assert plan.theirs not in {e["id"] for e in plan.expenses if e["owner"] == plan.caller}
    assert plan.bad_cents <= 0 < plan.new_cents


def test_a_decision_that_is_not_one_of_the_three_answers_is_named() -> None:
    seen = []

    def decide(server: str, tool: dict, trusted: bool) -> object:
        seen.append(server)
        return "yes"

    with pytest.raises(policy.BadAnswer, match="run"):
        policy.confirmation_case(decide, policy.CONFIRMATION_KINDS[0], 1)
    assert seen


@pytest.mark.parametrize("kind", policy.CONFIRMATION_KINDS)
def test_the_confirmation_world_runs_the_reference_decision(kind: str) -> None:
    """The reference's decide, run directly in the Host world: read-only runs unasked, the rest asks."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("reference_ex12", reference_path(EX.id))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    seen = policy.confirmation_case(module.decide, kind, 3)
    assert seen.ran
    assert seen.asked == (kind != "a trusted read-only tool runs unconfirmed")


@pytest.mark.slow
def test_a_server_hard_coded_for_one_seed_fails_on_the_others(tmp_path: Path) -> None:
    """A server that ignores its book and its caller and answers what seed 0's client expected gets seed 0's
    first listing right and fails every other seed there: the book, the caller and the arguments change with
    the seed."""
    from mcp_sim.grading.model import check_seeds
    from mcp_sim.grading.runner import case_rng

    kind = next(iter(capstone.ERAS))
    plan = capstone.make_plan(case_rng(check_seeds(EX.id, SERVER, 1, 0)[0], kind))
    listed = [{"id": e["id"], "description": e["description"], "cents": e["cents"]}
              for e in plan.expenses if e["owner"] == plan.caller]
    path = wrong(tmp_path, "        return json.dumps([public(e) for e in mine(ctx)])",
                 f"        return json.dumps({listed!r})")
    results = grade_seeds(EX, path, None, [0, 1, 2, 3], only=[SERVER])
    server = [next(c for c in r.checks if c.name == SERVER) for r in results]
    assert "does not show it" in server[0].explanation  # seed 0: the listing was right, adding was not
    for other in server[1:]:
        assert other.status == "failed" and other.kind == kind, other
        assert "should list" in other.explanation or "other callers" in other.explanation, other.explanation
        assert other.rule in (capstone.R_AUTHZ, capstone.R_TOOL_ERRORS)


def test_the_capstone_passes_from_a_bare_clone(tmp_path: Path) -> None:
    """What a new learner does: clone the project (nothing beside it, no MCP_SIM_SPEC_DIR), copy the
    reference into the starter and grade it; and ``grade --reference``. Both pass, with no traceback:
    the schemas the grader validates with ship in the package."""
    import shutil
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    if shutil.which("git") is None or not (root / ".git").exists():
        pytest.skip("needs git and a checkout to clone")
    clone = tmp_path / "alone" / "mcp-sim"
    subprocess.run(["git", "clone", "-q", str(root), str(clone)], check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("MCP_SIM_SPEC_DIR", "MCP_SIM_SPEC_PAGES")}
    env["PYTHONPATH"] = str(clone)  # the clone's package, not the one this suite was installed from
    where = subprocess.run([sys.executable, "-c", "import mcp_sim; print(mcp_sim.__file__)"], cwd=clone, env=env,
                           capture_output=True, text=True, check=True).stdout
    assert Path(where.strip()).is_relative_to(clone), "the clone's own package is the one graded with"
    shutil.copy(clone / "exercises" / "solutions" / f"{EX.id}.py", clone / "exercises" / EX.id / "starter.py")
    for args in ([EX.id], [EX.id, "--reference"]):
        proc = subprocess.run([sys.executable, "-m", "mcp_sim.cli", "grade", *args], cwd=clone, env=env,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        assert "Traceback" not in proc.stdout + proc.stderr
