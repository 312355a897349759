"""Chapter 09's exercises: plausible wrong answers are rejected on every seed, by the check that names
their mistake; the cases are built from the simulator and agree with the Host's own policy code.

(``tests/test_exercises.py`` already grades every registered exercise's starter, reference, cheats
and a hard-coded answer; the wrong answers below are counted there too.)
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from test_exercises import assert_wrong_answer_rejected

from mcp_sim.grading.exercises import ex09_host_policy, ex09_next_step, ex09_who_decides

# (exercise, name, edits-or-source, the check that must fail)
WRONG: list[tuple[str, str, Any, str]] = [
    # --- ex09_who_decides ---
    ("ex09_who_decides", "a denial blamed on the Host that asked",
     [('return _verdict("roles", "user", row)', 'return _verdict("roles", "host", row)')],
     "Decided in the roles layer: the user or the Host's policy"),
    ("ex09_who_decides", "the question row instead of the user's answer",
     [('return _verdict("roles", "user", row)', 'return {"layer": "roles", "decided_by": "user", '
                                               '"seq": row["seq"] - 1}')],
     "Decided in the roles layer: the user or the Host's policy"),
    ("ex09_who_decides", "a hidden tool blamed on the model that could not find it",
     [('return _verdict("roles", "host", offers[0])  # the model',
       'return _verdict("roles", "model", offers[0])  # the model')],
     "Decided in the roles layer: the user or the Host's policy"),
    ("ex09_who_decides", "a hidden tool pinned on the model's answer",
     [('return _verdict("roles", "host", offers[0])  # the model',
       'return _verdict("roles", "host", [r for r in rows if r["from"] == "model"][0])  # the model')],
     "Decided in the roles layer: the user or the Host's policy"),
    ("ex09_who_decides", "a failing tool put in the transports layer",
     [('        if row["kind"] == "response" and row.get("method") == "tools/call" \\\n'
       '                and message.get("result", {}).get("isError") is True:\n'
       '            return _verdict("capabilities", "server", row)',
       '        if row["kind"] == "response" and row.get("method") == "tools/call" \\\n'
       '                and message.get("result", {}).get("isError") is True:\n'
       '            return _verdict("transports", "server", row)')],
     "Decided by the server: the tool or the lifecycle"),
    ("ex09_who_decides", "a version mismatch put on the wire",
     [('return _verdict("capabilities", "server", row)  # no shared version',
       'return _verdict("transports", "client", row)  # no shared version')],
     "Decided by the server: the tool or the lifecycle"),
    ("ex09_who_decides", "a version mismatch pinned on the request, not the refusal",
     [('if row["kind"] == "error" and row.get("method") in ("initialize", "server/discover"):',
       'if row["kind"] == "request" and row.get("method") in ("initialize", "server/discover") '
       'and any(r["kind"] == "error" for r in rows):')],
     "Decided by the server: the tool or the lifecycle"),
    ("ex09_who_decides", "a lost request blamed on the silent server",
     [('return _verdict("transports", "client", row)  # lost',
       'return _verdict("capabilities", "server", row)  # lost')],
     "Decided on the wire: a lost frame and the client's timeout"),
    ("ex09_who_decides", "a lost request pinned on the timeout row",
     [('return _verdict("transports", "client", row)  # lost',
       'return _verdict("transports", "client", next(r for r in rows if "timeout" in r.get("marks", ())))  # lost')],
     "Decided on the wire: a lost frame and the client's timeout"),
    ("ex09_who_decides", "every call blamed on someone",
     [("    return None\n", "    return _verdict(\"roles\", \"host\", rows[-1])\n")],
     "A call that succeeded has no culprit"),
    # --- ex09_host_policy ---
    ("ex09_host_policy", "allow wins over deny",
     [("    if _matches(qualified, policy.get(\"deny\", [])):\n        return False\n", ""),
      ("    return _matches(qualified, policy.get(\"allow\", [\"*\"]))",
       "    if _matches(qualified, policy.get(\"allow\", [\"*\"])):\n        return True\n"
       "    return not _matches(qualified, policy.get(\"deny\", []))")],
     "The tool filter: globs, deny over allow, servers, read-only"),
    ("ex09_host_policy", "globs matched against the bare tool name",
     [("    qualified = f\"{server}__{tool['name']}\"\n    servers", "    qualified = tool[\"name\"]\n    servers")],
     "The tool filter: globs, deny over allow, servers, read-only"),
    ("ex09_host_policy", "the server list ignored",
     [("    if servers is not None and server not in servers:\n        return False\n", "")],
     "The tool filter: globs, deny over allow, servers, read-only"),
    ("ex09_host_policy", "read_only believes an untrusted server",
     [("not (trusted and annotations.get(\"readOnlyHint\") is True)", "annotations.get(\"readOnlyHint\") is not True")],
     "The tool filter: globs, deny over allow, servers, read-only"),
    ("ex09_host_policy", "an untrusted server's annotations believed",
     [("    believed = sent if trusted else {}", "    believed = sent")],
     "Approval in each mode, with and without trust"),
    ("ex09_host_policy", "a missing destructiveHint read as not destructive",
     [("believed.get(\"destructiveHint\", True) is not False", "believed.get(\"destructiveHint\") is True")],
     "Approval in each mode, with and without trust"),
    ("ex09_host_policy", "a read-only hint wins over destructiveHint true",
     [("    destructive = sent.get(\"destructiveHint\") is True or (\n", "    destructive = (\n")],
     "Approval in each mode, with and without trust"),
    ("ex09_host_policy", "always_confirm matched only on the qualified name",
     [("_matches(qualified, confirm) or _matches(tool[\"name\"], confirm)", "_matches(qualified, confirm)")],
     "High-risk tools are always confirmed"),
    ("ex09_host_policy", "always_confirm ignored",
     [("_matches(qualified, confirm) or _matches(tool[\"name\"], confirm) or destructive", "destructive")],
     "High-risk tools are always confirmed"),
    # --- ex09_next_step ---
    ("ex09_next_step", "hidden tools offered anyway",
     [("        if name in situation[\"hidden\"]:\n            continue", "        pass")],
     "Offer: the visible tools in the model API's format"),
    ("ex09_next_step", "the MCP tool passed through unconverted",
     [("            out.append({\"name\": name, \"description\": description, \"input_schema\": schema})",
       "            out.append({\"name\": name, \"description\": description, \"inputSchema\": schema})")],
     "Offer: the visible tools in the model API's format"),
    ("ex09_next_step", "OpenAI arguments sent as an object",
     [("\"arguments\": json.dumps(call[\"arguments\"], sort_keys=True)}}]}", "\"arguments\": call[\"arguments\"]}}]}")],
     "Propose: the model's call as the API's assistant message"),
    ("ex09_next_step", "tools/call with the Host's qualified name",
     [("params: dict[str, Any] = {\"name\": tool[\"name\"]", "params: dict[str, Any] = {\"name\": call[\"name\"]")],
     "Call: tools/call for the right server, in each era"),
    ("ex09_next_step", "no _meta in 2026-07-28",
     [("    if situation[\"revision\"] >= \"2026-07-28\":", "    if False:")],
     "Call: tools/call for the right server, in each era"),
    ("ex09_next_step", "_meta sent in 2025-11-25 too",
     [("    if situation[\"revision\"] >= \"2026-07-28\":", "    if True:")],
     "Call: tools/call for the right server, in each era"),
    ("ex09_next_step", "a failed result never marked as an error",
     [("\"is_error\": bool(result.get(\"isError\"))", "\"is_error\": False")],
     "Reply: the result handed back to the model"),
    ("ex09_next_step", "the OpenAI reply sent as the user",
     [("return {\"role\": \"tool\", \"tool_call_id\": situation[\"call_id\"], \"content\": text}",
       "return {\"role\": \"user\", \"content\": text}")],
     "Reply: the result handed back to the model"),
    ("ex09_next_step", "the whole result JSON handed to the model",
     [("        text = \"\\n\".join(texts)", "        text = json.dumps(result)")],
     "Reply: the result handed back to the model"),
]


@pytest.mark.parametrize(("exercise_id", "name", "edits", "failing_check"), WRONG,
                         ids=[f"{w[0]}:{w[1]}" for w in WRONG])
def test_plausible_wrong_answer_is_rejected_on_20_seeds(tmp_path: Path, exercise_id: str, name: str, edits: Any,
                                                        failing_check: str) -> None:
    assert_wrong_answer_rejected(tmp_path, exercise_id, name, edits, failing_check)


def test_policy_cases_cover_both_answers() -> None:
    """Each approval kind's expected answer comes from the Host's own policy code, and the kinds between
    them include both verdicts for every mode (so an answer that always says yes fails)."""
    rng = random.Random(4)
    for mode in ex09_host_policy.MODES:
        seen = {ex09_host_policy.expected(*case)[1] for k in ex09_host_policy.APPROVAL_KINDS
                if k.startswith(mode + ":") for case in ex09_host_policy._approval_cases(rng, k)}
        assert seen == {True, False} or mode == "always", mode
    seen = {ex09_host_policy.expected(*case)[0] for k in ex09_host_policy.FILTER_KINDS
            for case in ex09_host_policy._filter_cases(rng, k)}
    assert seen == {True, False}


@pytest.mark.parametrize("kind", [c for check in ex09_who_decides.EXERCISE.checks for c in check.kinds
                                  if c != "generated"])
def test_who_decides_cases_differ_from_seed_to_seed(kind: str) -> None:
    first, answer = ex09_who_decides.build_case(random.Random(1), kind)
    second, again = ex09_who_decides.build_case(random.Random(2), kind)
    assert first != second
    assert (answer is None) == (again is None) == kind.startswith("answered")


@pytest.mark.parametrize("kind", [c for check in ex09_next_step.EXERCISE.checks for c in check.kinds
                                  if c != "generated"])
def test_next_step_answers_come_from_the_simulator(kind: str) -> None:
    step, situation, want = ex09_next_step.build_case(random.Random(3), kind)
    assert step in kind and want
    if step == "call":
        assert ("_meta" in want["params"]) == kind.endswith("2026-07-28")
        assert "__" not in want["params"]["name"]
        assert want["params"]["arguments"] == situation["tool_call"]["arguments"]
