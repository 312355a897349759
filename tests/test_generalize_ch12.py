"""The capstone's wrong answers by mistake class (issue "Grading that generalizes"): three or more per
class, each rejected by the check that names the right rule.

The Host policy's wrong answers (``review_tool``, ``decide``, ``may_read``) run in the learner process
and are graded on 20 seeds. The server's run over the real wire, two real processes per seed (about
10 s), so they are graded on the seed the other capstone wrong answers use (``WIRE_SEEDS`` of
``tests/test_generalize_ch10_12.py``): what each breaks is on every seed's plan (a one-cent amount, a
blank description, a read in 2026-07-28, the second tool's hints), not drawn by it.

The table also names wrong answers kept in ``tests/test_exercises_ch12.py`` and
``tests/test_generalize_ch10_12.py`` (read, not changed, here).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import wrong_classes
from test_exercises import SEEDS, assert_wrong_answer_rejected
from test_exercises_ch12 import WRONG as CH12_WRONG
from test_generalize_ch10_12 import WIRE_SEEDS
from test_generalize_ch10_12 import WRONG as CH10_12_WRONG

from mcp_sim.grading.exercises import ex12_capstone as capstone

SERVER = "Your server, driven by the official SDK over stdio in both eras"
REVIEW = "Review: poisoned and changed definitions never reach the model"
CONFIRM = "Confirmation: what runs, what asks the user, what is refused"
READ = "What the model may read"

_ADD_HINTS = ('@server.tool(annotations={"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False,',
              '@server.tool(annotations={"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True,')

# (name, edits of the reference, the check that must fail, the rule it names, seeds)
WRONG: list[tuple[str, list[tuple[str, str]], str, str, list[int]]] = [
    # --- the server, over the real wire ---
    ("one cent refused",
     [("        if cents <= 0:", "        if cents <= 1:")], SERVER, capstone.R_TOOL_ERRORS, WIRE_SEEDS),
    ("a blank description accepted",
     [("        if not description.strip():", "        if not description:")], SERVER, capstone.R_TOOL_ERRORS,
     WIRE_SEEDS),
    ("a public cache scope (the server not per caller)",
     [('Server("expenses", version="1.0.0", per_caller=True)', 'Server("expenses", version="1.0.0")')], SERVER,
     capstone.R_CACHE, WIRE_SEEDS),
    ("add_expense claims idempotentHint true", [_ADD_HINTS], SERVER, capstone.R_ANNOTATIONS, WIRE_SEEDS),
    # --- the Host policy ---
    ("the destructive hint ignored beside readOnlyHint",
     [('    if annotations.get("destructiveHint") is True:\n        return "ask"  # believed from anyone: it can only '
       'make us more careful\n    if trusted and annotations.get("readOnlyHint") is True:\n        return "run"\n',
       '    if trusted and annotations.get("readOnlyHint") is True:\n        return "run"\n'
       '    if annotations.get("destructiveHint") is True:\n        return "ask"\n')],
     CONFIRM, capstone.R_CONFIRM, SEEDS),
    ("the whole disk as a root refused",
     [('path == base or path.startswith(base.rstrip("/") + "/")', 'path == base or path.startswith(base + "/")')],
     READ, capstone.R_WORKLOAD, SEEDS),
    ("zero-width characters not looked for",
     [('        if any(ord(c) >= 0xE0000 or c in "\\u200b\\u200c\\u200d\\u2060\\ufeff" for c in text):',
       '        if any(ord(c) >= 0xE0000 for c in text):')], REVIEW, capstone.R_REVIEW, SEEDS),
    ("a review that needs an order word and a file both",
     [("        if _ORDERS.search(text) or _PATH.search(text):", "        if _ORDERS.search(text) and _PATH.search(text):")],
     REVIEW, capstone.R_REVIEW, SEEDS),
]

MISTAKE_CLASSES: dict[str, dict[str, list[str] | str]] = {
    "ex12_capstone": {
        # an axis the fixed cases left still: who is trusted, a second root, a second hint, a third one
        "axes": ["readOnlyHint believed from any server", "only the first root",
                 "the destructive hint ignored beside readOnlyHint", "add_expense claims idempotentHint true"],
        # a boundary never probed: 0 and 1 cent, white space only, the root '/', a sibling's prefix
        "boundaries": ["a zero amount accepted", "one cent refused", "a blank description accepted",
                       "the whole disk as a root refused", "roots compared as plain prefixes"],
        # one sign of several: only the description, only tag characters, both signs at once, one case of %2e
        "one-input": ["a review that reads only the description", "zero-width characters not looked for",
                      "a review that needs an order word and a file both",
                      "only the lower-case encoded climb decoded"],
        # what a seed used to draw, now tried on every seed: the revision (a code, a cache scope), the owner
        "seed": ["not found hard-coded as -32002", "a public cache scope (the server not per caller)",
                 "the refusal names the expense's owner", "the file scheme compared in lower case only"],
    },
}


def _known() -> dict[str, list[str]]:
    names = [w[0] for w in WRONG] + [w[1] for w in CH12_WRONG if w[0] == "ex12_capstone"] + \
        [w[1] for w in CH10_12_WRONG if w[0] == "ex12_capstone"]
    return {"ex12_capstone": names}


def test_every_mistake_class_has_three_wrong_answers() -> None:
    wrong_classes.check_table(MISTAKE_CLASSES, _known())
    assert len({w[0] for w in WRONG}) == len(WRONG)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "edits", "check_name", "rule", "seeds"), WRONG, ids=[w[0] for w in WRONG])
def test_capstone_wrong_answer_is_rejected_with_its_rule(tmp_path: Path, name: str, edits: Any, check_name: str,
                                                         rule: str, seeds: list[int]) -> None:
    assert_wrong_answer_rejected(tmp_path, "ex12_capstone", name, edits, check_name, rule, seeds=seeds)
