"""Chapter 12's capstone: plausible wrong answers are rejected on every seed, by the check that names
their mistake, with the broken rule named (the server's mistakes are found over the real wire by the
official SDK's client; the policy's inside the simulator's Host).

(``tests/test_exercises.py`` already grades every registered exercise's starter, reference, cheats
and a hard-coded answer; the wrong answers below are counted there too. ``tests/test_capstone.py``
holds the capstone's other tests.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_exercises import _edit, assert_wrong_answer_rejected

from mcp_sim.grading import get_exercise
from mcp_sim.grading.exercises import ex12_capstone as capstone
from mcp_sim.grading.runner import grade_seeds, reference_path

SERVER = "Your server, driven by the official SDK over stdio in both eras"
REVIEW = "Review: poisoned and changed definitions never reach the model"
CONFIRM = "Confirmation: what runs, what asks the user, what is refused"
READ = "What the model may read"

_NEGATIVE = 'raise ValueError(f"cents must be a positive whole number, not {cents}")'

# (exercise, name, edits-or-source, the check that must fail)
WRONG: list[tuple[str, str, Any, str]] = [
    # --- (a) the server, over the real wire ---
    ("ex12_capstone", "a bad amount answered with a JSON-RPC error",
     [("from mcp_sim.roles.server import Server", "from mcp_sim.protocol.errors import McpError\n"
                                                  "from mcp_sim.roles.server import Server"),
      (_NEGATIVE, 'raise McpError(-32602, f"cents must be positive, not {cents}")')], SERVER),
    ("ex12_capstone", "the adding tool unannotated (so destructive by default)",
     [('@server.tool(annotations={"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False,\n'
       '                              "openWorldHint": False})', "@server.tool()")], SERVER),
    ("ex12_capstone", "the destructive tool claims destructiveHint false",
     [('@server.tool(annotations={"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True,',
       '@server.tool(annotations={"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True,')],
     SERVER),
    ("ex12_capstone", "a print() in a tool",
     [('        """List your expenses (id, description, amount in cents)."""\n',
       '        """List your expenses (id, description, amount in cents)."""\n'
       '        print("list_expenses called")\n')], SERVER),
    ("ex12_capstone", "delete without the per-caller check",
     [('if not any(e["id"] == expense_id for e in mine(ctx)):', "if expense_id not in book:")], SERVER),
    ("ex12_capstone", "everyone's expenses listed",
     [("return json.dumps([public(e) for e in mine(ctx)])", "return json.dumps([public(e) for e in book.values()])")],
     SERVER),
    ("ex12_capstone", "not found hard-coded as -32002",
     [("from mcp_sim.roles.server import Server", "from mcp_sim.protocol.errors import McpError\n"
                                                  "from mcp_sim.roles.server import Server"),
      ("raise KeyError(expense_id)  # not found", 'raise McpError(-32002, "Resource not found")  # not found')],
     SERVER),
    ("ex12_capstone", "a hand-built result with a misspelt field",
     [("        return json.dumps([public(e) for e in mine(ctx)])",
       '        return {"content": [{"type": "text", "words": json.dumps([public(e) for e in mine(ctx)])}]}')], SERVER),
    # --- (b) the Host policy, inside the Host ---
    ("ex12_capstone", "a policy that lets everything run",
     [('def decide(server: str, tool: dict[str, Any], trusted: bool) -> str:\n',
       'def decide(server: str, tool: dict[str, Any], trusted: bool) -> str:\n    return "run"\n')], CONFIRM),
    ("ex12_capstone", "a policy that refuses everything",
     [('def decide(server: str, tool: dict[str, Any], trusted: bool) -> str:\n',
       'def decide(server: str, tool: dict[str, Any], trusted: bool) -> str:\n    return "refuse"\n')], CONFIRM),
    ("ex12_capstone", "readOnlyHint believed from any server",
     [("if trusted and annotations.get(\"readOnlyHint\") is True:", "if annotations.get(\"readOnlyHint\") is True:")],
     CONFIRM),
    ("ex12_capstone", "a review that approves everything",
     [("    for text in _strings(tool):\n", "    for text in []:\n")], REVIEW),
    ("ex12_capstone", "a review that rejects everything",
     [("            return False  # text aimed at the model, not at a reader\n    return True",
       "            return False  # text aimed at the model, not at a reader\n    return False")], REVIEW),
    ("ex12_capstone", "a review that reads only the description",
     [("    for text in _strings(tool):\n", "    for text in _strings(tool.get(\"description\")):\n")], REVIEW),
    ("ex12_capstone", "roots compared as plain prefixes",
     [('path == base or path.startswith(base.rstrip("/") + "/")', "path.startswith(base)")], READ),
    ("ex12_capstone", "'..' and escapes not resolved",
     [("path = posixpath.normpath(unquote(parts.path))", "path = parts.path")], READ),
]

RULES: dict[str, str] = {
    "a bad amount answered with a JSON-RPC error": capstone.R_TOOL_ERRORS,
    "the adding tool unannotated (so destructive by default)": capstone.R_ANNOTATIONS,
    "the destructive tool claims destructiveHint false": capstone.R_ANNOTATIONS,
    "a print() in a tool": capstone.R_STDOUT,
    "delete without the per-caller check": capstone.R_AUTHZ,
    "everyone's expenses listed": capstone.R_AUTHZ,
    "not found hard-coded as -32002": capstone.R_RESOURCES,
    "a hand-built result with a misspelt field": capstone.R_SCHEMA,
    "a policy that lets everything run": capstone.R_CONFIRM,
    "a policy that refuses everything": capstone.R_WORKLOAD,
    "readOnlyHint believed from any server": capstone.R_CONFIRM,
    "a review that approves everything": capstone.R_REVIEW,
    "a review that rejects everything": capstone.R_WORKLOAD,
    "a review that reads only the description": capstone.R_REVIEW,
    "roots compared as plain prefixes": capstone.R_READ,
    "'..' and escapes not resolved": capstone.R_READ,
}


@pytest.mark.slow
@pytest.mark.parametrize(("exercise_id", "name", "edits", "failing_check"), WRONG, ids=[w[1] for w in WRONG])
def test_plausible_wrong_answer_is_rejected_on_20_seeds_with_its_rule(tmp_path: Path, exercise_id: str, name: str,
                                                                      edits: Any, failing_check: str) -> None:
    """Like ``assert_wrong_answer_rejected``, and the failure names the rule the answer broke."""
    assert_wrong_answer_rejected(tmp_path, exercise_id, name, edits, failing_check, RULES[name])


# --- the capstone's grading runs mcp-sim check ---------------------------------------------------------

CHECK = "Your server under mcp-sim check (both eras, a nemesis)"

_UNKNOWN_ID = ('            raise ValueError(f"you have no expense {expense_id}")  # the same answer for someone else\'s',
               '            if expense_id not in book:\n'
               '                print(f"delete_expense: no expense {expense_id} in the book")  # debugging\n'
               '            raise ValueError(f"you have no expense {expense_id}")  # the same answer for someone else\'s')


@pytest.mark.slow
def test_a_protocol_defect_only_mcp_sim_check_sees_fails_its_check_with_the_rule(tmp_path: Path) -> None:
    """A debugging print() on a path the SDK's script never takes (deleting an id nobody has, which the
    checker's example arguments do) passes the SDK's sessions and fails ``mcp-sim check``: the failure
    names stdio.stdout-only-messages and shows the line that reached stdout. The reference passes it."""
    path = tmp_path / "ex12_capstone_wrong.py"
    path.write_text(_edit(reference_path("ex12_capstone").read_text(encoding="utf-8"), _UNKNOWN_ID), encoding="utf-8")
    result = grade_seeds(get_exercise("ex12_capstone"), path, path.name, [0], only=[SERVER, CHECK])[0]
    checks = {c.name: c for c in result.checks}
    assert checks[SERVER].status == "passed", result
    assert checks[CHECK].status == "failed", result
    assert checks[CHECK].rule == "stdio.stdout-only-messages", result
    assert "mcp-sim check" in checks[CHECK].explanation
    assert "delete_expense: no expense check in the book" in checks[CHECK].explanation  # the evidence
    reference = grade_seeds(get_exercise("ex12_capstone"), reference_path("ex12_capstone"), None, [0], only=[CHECK],
                            reference=True)[0]
    assert next(c for c in reference.checks if c.name == CHECK).status == "passed", reference


def _finding(rule: str, seq: int) -> Any:
    from mcp_sim.bridge.check.findings import Finding

    return Finding.of(rule, "framing", "2025-11-25", f"{rule} seen", seq, link="expenses-legacy")


def test_only_broken_musts_fail_and_the_first_one_is_named_with_its_frame() -> None:
    """A finding of a should is advice (a note); the first broken must in the trace's order is the
    failure's rule, and its frame is quoted; the other rules are named after it."""
    from mcp_sim.bridge.check.findings import CheckReport, EraSummary
    from mcp_sim.trace.event import TraceEvent
    from mcp_sim.trace.events import Trace

    era = EraSummary(revision="2025-11-25", passed=False, findings={}, requests=1)
    trace = Trace([TraceEvent(seq=5, t_ms=1.0, link="expenses-legacy", sender="server/x", receiver="client/x",
                              kind="invalid", message=None, raw="hello from a print()")])
    advice_only = CheckReport.build([_finding("stdio.modern.exit-on-eof", 9)], {"legacy": era}, seed=3,
                                    nemesis=["delay"], schedule=[], target="x")
    assert capstone.explain_findings(advice_only, trace) is None
    assert [n.split(":")[0] for n in capstone.advice(advice_only)] == ["mcp-sim check advises (should, 2025-11-25)"]
    both = CheckReport.build([_finding("stdio.modern.exit-on-eof", 1), _finding("jsonrpc.messages-follow-jsonrpc", 7),
                              _finding("stdio.stdout-only-messages", 5)], {"legacy": era}, seed=3, nemesis=["delay"],
                             schedule=[], target="x")
    failed = capstone.explain_findings(both, trace)
    assert failed is not None
    text, rule = failed
    assert rule == "stdio.stdout-only-messages"
    assert "hello from a print()" in text and "#5" in text and "jsonrpc.messages-follow-jsonrpc" in text
    assert "seed 3" in text and capstone.advice(both)[0].endswith("stdio.modern.exit-on-eof")
