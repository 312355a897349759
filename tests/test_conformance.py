"""The official MCP conformance suite against ``mcp-sim serve conformance`` over real HTTP.

``@modelcontextprotocol/conformance`` (npm) is a real MCP client written by the spec's maintainers: each
of its *server scenarios* connects to a server, exercises one behaviour and records checks (including
that every message on the wire is valid against the revision's schema). Here it runs against the
ready-made fixture server (:mod:`mcp_sim.scenarios.conformance`), once per revision, with the server
pinned to that revision (``--revision``), so each run proves that revision's wire:

- 2025-03-26 and 2025-06-18: every scenario the suite applies to that revision (``--spec-version``);
- 2025-11-25 and 2026-07-28: the suite's frozen requirement set of that revision (``--requirements``),
  the scenarios a server must pass to conform. The suite also runs what it does not score
  (extensions, pending scenarios) and says so; those are shown in the summary, never asserted.

The suite and the Node it needs (22 or later) are pinned in ``.ci/conformance/`` and installed from the
npm registry by ``.ci/conformance.sh`` (``.ci/run`` does it). Without them the tests skip with the
reason, except in CI (``CI=true``), where a missing suite fails: a conformance run that silently did
not happen would read as a pass. The last tests drive the fixture server in-process (no Node needed),
so its answers in both eras are checked everywhere.
"""

from __future__ import annotations

import base64
import json
import os
import re
import select
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_server_support import MODERN, RawClient, meta, run_with

from mcp_sim.scenarios.conformance import build

ROOT = Path(__file__).resolve().parent.parent
PINS = ROOT / ".ci" / "conformance" / "package.json"
MODULES = ROOT / ".ci" / "conformance" / "node_modules"
NODE = MODULES / "node" / "bin" / "node"
SUITE_PACKAGE = MODULES / "@modelcontextprotocol" / "conformance"
SUITE = SUITE_PACKAGE / "dist" / "index.js"

RUNS: dict[str, list[str]] = {
    # revision the server is pinned to -> how the suite selects its scenarios
    "2025-03-26": ["--spec-version", "2025-03-26"],
    "2025-06-18": ["--spec-version", "2025-06-18"],
    "2025-11-25": ["--requirements", "2025-11-25"],
    "2026-07-28": ["--requirements", "2026-07-28"],
}
SERVER_START_S = 30
SUITE_RUN_S = 300

def missing_suite() -> str | None:
    """Why the pinned suite cannot run here, or ``None`` when it can."""
    pinned = json.loads(PINS.read_text())["dependencies"]["@modelcontextprotocol/conformance"]
    if not NODE.exists() or not SUITE.exists():
        return "the MCP conformance suite is not installed"
    installed = json.loads((SUITE_PACKAGE / "package.json").read_text())["version"]
    if installed != pinned:
        return f"the installed conformance suite is {installed}, not the pinned {pinned}"
    try:
        version = subprocess.run([str(NODE), "-p", "process.versions.node"], capture_output=True, text=True,
                                 timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"the installed Node cannot run: {exc}"
    if not version.split(".")[0].isdigit() or int(version.split(".")[0]) < 22:
        return f"the conformance suite needs Node 22 or later, found {version or 'none'}"
    return None


def require_suite() -> None:
    reason = missing_suite()
    if reason is None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}: .ci/run installs it with .ci/conformance.sh from the npm registry; did that step "
                    "fail (is the registry reachable)?")
    pytest.skip(f"{reason}; install it with .ci/conformance.sh (Node 22 and the suite, from the npm registry)")


@contextmanager
def conformance_server(revision: str, log: Path) -> Iterator[str]:
    """``mcp-sim serve conformance`` on a free loopback port, pinned to ``revision``; yields its URL.
    Its stderr (the log) goes to the file ``log``, so no pipe can fill up and stall it."""
    argv = [sys.executable, "-m", "mcp_sim.cli", "serve", "conformance", "--transport", "http",
            "--port", "0", "--revision", revision]
    with log.open("w") as stderr:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=stderr, text=True, cwd=ROOT)
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], SERVER_START_S)
        line = proc.stdout.readline() if ready else ""
        if "http://127.0.0.1:" not in line:
            proc.kill()
            proc.wait(10)
            raise AssertionError(f"mcp-sim serve did not start: {line!r} {log.read_text()[-2000:]}")
        yield line.split()[-1]
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)


@dataclass
class SuiteRun:
    """What one run of the suite found: per scenario, its checks' outcomes."""

    exit_code: int
    output: str
    checks: dict[str, list[dict[str, object]]] = field(default_factory=dict)
    not_scored: dict[str, str] = field(default_factory=dict)
    """Scenarios the suite ran but does not count for this revision, with its reason."""

    def failures(self, scenario: str, status: str = "FAILURE") -> list[str]:
        return [f"{c.get('id')}: {c.get('errorMessage') or c.get('status')}" for c in self.checks[scenario]
                if c.get("status") == status]

    def summary(self, revision: str) -> str:
        def mark(name: str) -> str:
            return ("✗" if self.failures(name) else "✓") + "\u00a0" + name  # no line break inside

        scored = [mark(n) for n in self.checks if n not in self.not_scored]
        lines = [f"conformance {revision}: {sum(1 for s in scored if s[0] == '✓')}/{len(scored)} scenarios pass"]
        lines += _wrap(scored, "  ")
        for name in self.checks:
            if name not in self.not_scored:
                lines += [f"  warning (a SHOULD) in {name}: {w}" for w in self.failures(name, "WARNING")]
        if self.not_scored:
            extra = [f"{mark(n)}\u00a0({why})" for n, why in self.not_scored.items()]
            lines.append(f"  not scored for {revision} (run, not asserted):")
            lines += _wrap(extra, "    ")
        return "\n".join(lines)


def _wrap(items: list[str], indent: str) -> list[str]:
    return textwrap.wrap("  ".join(items), 108, initial_indent=indent, subsequent_indent=indent,
                         break_on_hyphens=False, break_long_words=False)


SCENARIO_DIR = re.compile(r"^server-(?P<name>.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$")
NOT_SCORED = re.compile(r"^\s+[✓✗] (?P<name>\S+) \((?P<why>[^)]+)\)$")


def run_suite(url: str, selection: list[str], results: Path) -> SuiteRun:
    """Run the suite's server scenarios against ``url`` and read its results folder."""
    proc = subprocess.run([str(NODE), str(SUITE), "server", "--url", url, *selection, "-o", str(results)],
                          capture_output=True, text=True, timeout=SUITE_RUN_S, cwd=results)
    run = SuiteRun(proc.returncode, proc.stdout + proc.stderr)
    for checks in sorted(results.glob("*/checks.json")):
        match = SCENARIO_DIR.match(checks.parent.name)
        assert match, f"unexpected results folder {checks.parent.name}"
        run.checks[match["name"]] = json.loads(checks.read_text())
    in_not_scored = False
    for line in proc.stdout.splitlines():
        in_not_scored = in_not_scored or line.startswith("Not scored for")
        match = NOT_SCORED.match(line) if in_not_scored else None
        if match:
            run.not_scored[match["name"]] = match["why"]
    return run


@pytest.mark.slow
@pytest.mark.parametrize("revision", list(RUNS))
def test_official_server_scenarios_pass(revision: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    require_suite()
    results = tmp_path / "results"
    results.mkdir()
    with conformance_server(revision, tmp_path / "server.log") as url:
        run = run_suite(url, RUNS[revision], results)
    with capsys.disabled():
        sys.stdout.write("\n" + run.summary(revision) + "\n")
    assert run.checks, f"the suite ran no scenario:\n{run.output[-3000:]}"
    # The suite does not score extensions, but the course teaches the tasks extension: its scenarios must pass.
    asserted = [name for name in run.checks
                if name not in run.not_scored or (name.startswith("tasks-") and run.not_scored[name] == "extension")]
    failed = {name: run.failures(name) for name in asserted if run.failures(name)}
    assert not failed, f"{revision}: failing scenarios {json.dumps(failed, indent=1)}"
    warned = {name: run.failures(name, "WARNING") for name in asserted if run.failures(name, "WARNING")}
    assert not warned, f"{revision}: a SHOULD the server misses {json.dumps(warned, indent=1)}"
    assert run.exit_code == 0, f"the suite exited with {run.exit_code}:\n{run.output[-3000:]}"


# --- the fixture server itself, in-process (no Node) ------------------------------------------------

ANSWERS = {"name": "Ada", "color": "teal", "ok": True, "value": "v"}


def accept(_request: dict[str, object]) -> dict[str, object]:
    return {"action": "accept", "content": ANSWERS}


def sampled(_request: dict[str, object]) -> dict[str, object]:
    return {"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "scripted"}


def text(response: dict[str, object]) -> str:
    result = response["result"]
    assert isinstance(result, dict), response
    return str(result["content"][0]["text"])


def test_fixture_server_asks_by_request_in_a_legacy_session() -> None:
    async def body(c: RawClient) -> dict[str, str]:
        c.auto_answer = {"elicitation/create": accept, "sampling/createMessage": sampled,
                         "roots/list": lambda _r: {"roots": [{"uri": "file:///a"}, {"uri": "file:///b"}]}}
        await c.initialize("2025-11-25", {"elicitation": {}, "sampling": {}, "roots": {}})
        names = ("test_input_required_result_multi_round", "test_input_required_result_multiple_inputs",
                 "test_elicitation_sep1034_defaults")
        out = {name: text(await c.request("tools/call", {"name": name, "arguments": {}})) for name in names}
        read = await c.request("resources/read", {"uri": "test://template/123/data"})
        out["template"] = read["result"]["contents"][0]["text"]
        return out

    out = run_with(build, body, revision="2025-11-25")
    assert out["test_input_required_result_multi_round"] == "Multi-round complete for Ada who likes teal"
    assert out["test_input_required_result_multiple_inputs"] == "Name: Ada; Greeting: Paris; Roots: 2"
    assert out["test_elicitation_sep1034_defaults"].startswith('Elicitation completed: action=accept, content={"name"')
    assert json.loads(out["template"]) == {"id": "123", "templateTest": True, "data": "Data for ID: 123"}


def test_fixture_server_answers_input_required_and_seals_its_state_in_2026() -> None:
    everything = {"elicitation": {}, "sampling": {}, "roots": {}}

    async def call(c: RawClient, name: str, caps: dict[str, object], **extra: object) -> dict[str, object]:
        return await c.request("tools/call", {"name": name, "arguments": {}, "_meta": meta(caps), **extra})

    async def body(c: RawClient) -> dict[str, object]:
        name = "test_input_required_result_multi_round"
        first = (await call(c, name, everything))["result"]
        second = (await call(c, name, everything, requestState=first["requestState"],
                             inputResponses={"step1": accept({})}))["result"]
        third = await call(c, name, everything, requestState=second["requestState"],
                           inputResponses={"step2": accept({})})
        # A state the client wrote itself (what an unsealed server would accept) must be refused.
        forged_state = {"answers": {"confirm": accept({})}, "asked": ["confirm"]}
        forged = base64.urlsafe_b64encode(json.dumps(forged_state).encode()).decode().rstrip("=")
        tampered = await call(c, "test_input_required_result_tampered_state", everything, requestState=forged,
                              inputResponses={"confirm": accept({})})
        only_sampling = (await call(c, "test_input_required_result_capabilities", {"sampling": {}}))["result"]
        undeclared = await call(c, "test_missing_capability", {})
        return {"rounds": (sorted(first["inputRequests"]), sorted(second["inputRequests"]), text(third)),
                "tampered": tampered["error"]["code"], "asked": sorted(only_sampling["inputRequests"]),
                "undeclared": undeclared["error"]}

    out = run_with(build, body, revision=MODERN)
    assert out["rounds"] == (["step1"], ["step2"], "Multi-round complete for Ada who likes teal")
    assert out["tampered"] == -32602
    assert out["asked"] == ["sample_input"]
    assert out["undeclared"]["code"] == -32021
    assert out["undeclared"]["data"]["requiredCapabilities"] == {"sampling": {}}
