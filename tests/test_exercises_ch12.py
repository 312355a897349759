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
from test_exercises import SEEDS, _edit

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
    ex = get_exercise(exercise_id)
    source = edits if isinstance(edits, str) else _edit(reference_path(exercise_id).read_text(encoding="utf-8"),
                                                        *edits)
    path = tmp_path / f"{exercise_id}_wrong.py"
    path.write_text(source, encoding="utf-8")
    for result in grade_seeds(ex, path, path.name, SEEDS, only=[failing_check]):
        assert not result.load_error, f"the fixture {name!r} does not load:\n{result.load_error}"
        check = next(c for c in result.checks if c.name == failing_check)
        assert check.status in ("failed", "error"), f"{name} passed {failing_check!r} on a seed:\n{result}"
        assert check.explanation and check.kind
        assert check.rule == RULES[name], f"{name}: the failure names another rule:\n{result}"
