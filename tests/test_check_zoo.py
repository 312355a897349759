"""``mcp-sim check`` against the check zoo (``tests/check_zoo/server.py``): a correct dual-era stdio
server and its one-defect variants, all plain Python with no mcp_sim inside.

Each defect must be reported under the rule it breaks, in the right category and at the rule's
strength, and the exit status must be 1 exactly when that strength is MUST. The correct twin must
report nothing at all, in both eras, under the whole default nemesis. Each variant runs only the era
and the nemesis actions where its defect shows, to keep the file fast; every case still spawns real
processes (marked ``slow``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest

from mcp_sim.bridge.check import CATEGORIES, CheckOptions, CheckReport, check_trace, eras_of_links, run_check
from mcp_sim.bridge.check.nemesis import schedule
from mcp_sim.bridge.check.workloads import WORKLOADS
from mcp_sim.cli import main as cli_main
from mcp_sim.protocol import rulebook
from mcp_sim.trace.jsonl import load_jsonl, to_jsonl

ZOO = Path(__file__).parent / "check_zoo" / "server.py"
sys.path.insert(0, str(ZOO.parent))
from server import DEFECTS  # noqa: E402  (the zoo's own list of defects)

pytestmark = pytest.mark.slow

# defect -> (era, nemesis actions, rule, category, strength)
EXPECTED: dict[str, tuple[str, tuple[str, ...], str, str, str]] = {
    "stdout-print": ("legacy", (), "stdio.stdout-only-messages", "framing", "MUST"),
    "not-jsonrpc": ("modern", (), "jsonrpc.messages-follow-jsonrpc", "jsonrpc", "MUST"),
    "bad-utf8": ("legacy", (), "transport.utf-8", "framing", "MUST"),
    "batch-answer": ("legacy", ("malformed",), "jsonrpc.batches-only-2025-03-26", "framing", "MUST"),
    "wrong-id": ("modern", (), "jsonrpc.response-echoes-id", "jsonrpc", "MUST"),
    "answers-notification": ("legacy", (), "jsonrpc.notification-not-answered", "jsonrpc", "MUST"),
    "double-answer": ("modern", (), "check.request-answered", "jsonrpc", "MUST"),
    "silent-unknown-method": ("legacy", (), "check.request-answered", "timing", "MUST"),
    "crash-on-bad-json": ("modern", ("malformed",), "realwire.stdio-server-serves-the-session", "robustness", "MUST"),
    "crash-on-cancel": ("legacy", (), "realwire.stdio-server-serves-the-session", "cancellation", "MUST"),
    "echo-any-version": ("legacy", (), "lifecycle.server-counter-offers", "version", "MUST"),
    "no-32022": ("modern", (), "versioning.unsupported-version-error", "version", "MUST"),
    "meta-not-required": ("modern", (), "meta.missing-field-invalid-params", "lifecycle", "MUST"),
    "undeclared-prompts": ("modern", (), "prompts.capability-declared", "capabilities", "MUST"),
    "declared-not-served": ("legacy", (), "check.declared-capability-served", "capabilities", "SHOULD"),
    "not-found-32002-modern": ("modern", (), "resources.not-found-modern", "errors", "MUST"),
    "unknown-method-32603": ("legacy", (), "jsonrpc.standard-error-codes", "errors", "MUST"),
    "no-validation": ("modern", (), "tools.servers-validate-inputs", "errors", "MUST"),
    "tool-without-schema": ("legacy", (), "check.schema-valid", "schema", "MUST"),
    "modern-request": ("modern", (), "stdio.modern.server-sends-no-requests", "lifecycle", "MUST"),
    "ping-error": ("legacy", (), "check.ping-answered", "lifecycle", "MUST"),
    "no-exit-on-eof": ("modern", (), "stdio.modern.exit-on-eof", "lifecycle", "SHOULD"),
    "silent-malformed": ("modern", ("malformed",), "check.malformed-frame-answered", "robustness", "SHOULD"),
    "unknown-tool-result": ("legacy", (), "tools.unknown-tool-protocol-error", "errors", "SHOULD"),
    "cursor-ignored": ("modern", (), "pagination.invalid-cursor-32602", "errors", "SHOULD"),
    "prompt-error-code": ("legacy", (), "check.prompts-standard-errors", "errors", "SHOULD"),
    "chunk-reader": ("modern", ("delay",), "stdio.newline-delimited", "framing", "MUST"),
    "undeclared-elicitation": ("modern", (), "mrtr.only-declared-input", "capabilities", "MUST"),
    "subscribe-refused": ("legacy", (), "check.declared-capability-served", "capabilities", "SHOULD"),
}


def zoo_command(defect: str | None = None) -> list[str]:
    return [sys.executable, str(ZOO), *(("--defect", defect) if defect else ())]


def check(command: list[str], options: CheckOptions) -> CheckReport:
    report, _trace = anyio.run(run_check, command, options)
    return report


def test_a_legacy_server_asking_for_undeclared_elicitation_is_reported() -> None:
    report = check(zoo_command("undeclared-elicitation"), CheckOptions(eras=("legacy",), nemesis=(), deadline=2.0))
    assert ("elicitation.legacy.declare-capability", "capabilities", "MUST") in {
        (f.rule, f.category, f.strength) for f in report.findings}


def test_the_zoo_has_at_least_15_defects_across_every_category() -> None:
    assert set(EXPECTED) == set(DEFECTS)
    assert len(EXPECTED) >= 15
    assert {category for *_, category, _strength in EXPECTED.values()} == set(CATEGORIES)
    for _era, _nemesis, rule, _category, strength in EXPECTED.values():
        assert rulebook.get(rule).strength.startswith(strength)


@pytest.mark.parametrize("defect", sorted(EXPECTED))
def test_each_defect_is_reported_with_its_rule_category_and_strength(defect: str) -> None:
    era, nemesis, rule, category, strength = EXPECTED[defect]
    report = check(zoo_command(defect), CheckOptions(eras=(era,), nemesis=nemesis, deadline=2.0, grace=1.0))  # type: ignore[arg-type]
    seen = {(f.rule, f.category, f.strength) for f in report.findings}
    assert (rule, category, strength) in seen, f"{defect}: found {sorted(seen)}"
    assert all(f.era for f in report.findings) and all("seq" in f.evidence for f in report.findings)
    assert report.exit_code == (1 if strength == "MUST" else 0)
    assert report.passed == (strength != "MUST")


def test_the_correct_twin_reports_nothing_in_both_eras_under_the_whole_nemesis(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    page = tmp_path / "report.html"
    trace = tmp_path / "run.jsonl"
    code = cli_main(["check", "--quiet", "--seed", "3", "--json", str(out), "--html", str(page),
                     "--trace", str(trace), "--", *zoo_command()])
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["findings"] == [], report["findings"]
    assert code == 0 and report["passed"] is True
    assert set(report["eras"]) == {"legacy", "modern"}
    assert report["eras"]["legacy"]["revision"] == "2025-11-25"
    assert report["eras"]["modern"]["revision"] == "2026-07-28"
    assert all(era["requests"] > 20 for era in report["eras"].values())
    text = page.read_text(encoding="utf-8")
    assert "Passed" in text and "<svg" in text
    assert trace.read_text(encoding="utf-8").count("\n") > 50


def test_a_saved_trace_checked_again_gives_the_same_findings(tmp_path: Path) -> None:
    # the checkers read only the trace: what they found live, they find again in the saved file
    report, trace = anyio.run(run_check, zoo_command("cursor-ignored"),
                              CheckOptions(nemesis=("malformed", "duplicate"), deadline=2.0))
    path = tmp_path / "run.jsonl"
    to_jsonl(trace, path)
    saved = load_jsonl(path)
    links = eras_of_links(saved)
    assert set(links.values()) == {"legacy", "modern"}
    again = check_trace(saved, links, deadline=2.0)
    assert report.findings and sorted(again, key=repr) == sorted(report.findings, key=repr)


def test_the_command_exits_1_on_a_broken_must_and_links_each_finding_in_the_page(tmp_path: Path) -> None:
    out, page = tmp_path / "r.json", tmp_path / "r.html"
    code = cli_main(["check", "--quiet", "--era", "modern", "--nemesis", "none", "--deadline", "2",
                     "--json", str(out), "--html", str(page), "--", *zoo_command("no-32022")])
    report = json.loads(out.read_text(encoding="utf-8"))
    assert code == 1 and report["passed"] is False
    finding = next(f for f in report["findings"] if f["rule"] == "versioning.unsupported-version-error")
    seq = finding["evidence"]["seq"]
    text = page.read_text(encoding="utf-8")
    assert f"href='#d{seq}'" in text and f'id="d{seq}"' in text and f"id='e{seq}'" in text


def test_a_should_finding_alone_exits_0(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    code = cli_main(["check", "--quiet", "--era", "legacy", "--nemesis", "none", "--json", str(out), "--",
                     *zoo_command("unknown-tool-result")])
    report = json.loads(out.read_text(encoding="utf-8"))
    assert code == 0 and report["passed"] is True
    assert {f["strength"] for f in report["findings"]} == {"SHOULD"}


def test_the_same_seed_gives_the_same_schedule_and_another_seed_another() -> None:
    steps = [name for name, _ in WORKLOADS["full"]]
    actions = ("duplicate", "reuse", "malformed", "oversized")
    first = schedule(actions, steps, seed=11, era="legacy")
    assert first == schedule(actions, steps, seed=11, era="legacy")
    others = {tuple(schedule(actions, steps, seed=s, era="legacy")) for s in range(12, 20)}
    assert any(plan != tuple(first) for plan in others)


def test_bad_usage_or_a_server_that_cannot_start_exits_2(tmp_path: Path) -> None:
    assert cli_main(["check", "--nemesis", "earthquake", "--", *zoo_command()]) == 2
    assert cli_main(["check"]) == 2
    assert cli_main(["check", "--quiet", "--", str(tmp_path / "no-such-server")]) == 2
