"""Chapter 10's exercises: the learner writes a security lab's fix, and the grader runs the lab with it.

Plausible wrong answers — a fix narrower than the lesson (one field, one phrase, a prefix match, a
subject-only binding …) or one that blocks everything — are rejected on every one of the 20 seeds by
the check that names the mistake. The direct cases' expectations come from the labs' own fixed
defences, and every lab case is one of the lab's attacks.

(``tests/test_exercises.py`` grades every registered exercise's starter, reference, cheats and a
hard-coded answer; the wrong answers below are counted there too.)
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from test_exercises import assert_wrong_answer_rejected

from mcp_sim.grading import EXERCISES
from mcp_sim.grading.exercises import (
    ex10_authorize_call,
    ex10_origin_check,
    ex10_review_everything,
    ex10_sandbox_policy,
    ex10_token_audience,
)
from mcp_sim.scenarios.security import LABS

ONE_PHRASE_REVIEW = '''
def review(server, tool):
    # blocks the one phrase seen in the lab, wherever it is
    import json
    return "<IMPORTANT>" not in json.dumps(tool)


def fingerprint(tool):
    import hashlib, json
    return hashlib.sha256(json.dumps(tool, sort_keys=True).encode()).hexdigest()
'''

PREFIX_ORIGIN = '''
def origin_allowed(origin, port):
    return origin.startswith("http://localhost") or origin.startswith("http://127.0.0.1")
'''

HOST_ONLY_ORIGIN = '''
from urllib.parse import urlparse


def origin_allowed(origin, port):
    return urlparse(origin).hostname in ("localhost", "127.0.0.1")
'''

SUBSTRING_ORIGIN = '''
def origin_allowed(origin, port):
    return "localhost" in origin or "127.0.0.1" in origin
'''

EVERYTHING_READABLE = '''
from urllib.parse import urlparse


def sandbox_policy(needs, roots):
    paths = [urlparse(uri).path for uri in roots]
    return {"readable": ["*"], "writable": paths, "environment": list(needs["environment"]),
            "egress": list(needs["egress"])}
'''

# (exercise, name, edits-or-source, the check that must fail)
WRONG: list[tuple[str, str, Any, str]] = [
    # --- ex10_review_everything ---
    ("ex10_review_everything", "only the description is reviewed",
     [("strings({k: v for k, v in tool.items() if k != \"_meta\"})", "strings({\"description\": tool.get(\"description\")})")],
     "Every string the model reads is reviewed"),
    ("ex10_review_everything", "invisible characters are not revealed",
     [("        visible = as_the_model_reads(text)\n", "        visible = text\n")],
     "Every string the model reads is reviewed"),
    ("ex10_review_everything", "the output schema and annotations are skipped",
     [('strings({k: v for k, v in tool.items() if k != "_meta"})',
       'strings({k: v for k, v in tool.items() if k in ("name", "title", "description", "inputSchema")})')],
     "Fields no attack has used yet"),
    ("ex10_review_everything", "one phrase blocked", ONE_PHRASE_REVIEW, "Fields no attack has used yet"),
    ("ex10_review_everything", "every definition refused",
     [("            return False  # it talks about another tool\n    return True",
       "            return False  # it talks about another tool\n    return False")],
     "Honest definitions still reach the model"),
    ("ex10_review_everything", "approval pinned to the name",
     [("text = json.dumps({k: tool.get(k) for k in READ_BY_THE_MODEL}, sort_keys=True, separators=(\",\", \":\"))",
       "text = str(tool[\"name\"])")],
     "A changed definition is reviewed again"),
    ("ex10_review_everything", "the fingerprint covers the description only",
     [("text = json.dumps({k: tool.get(k) for k in READ_BY_THE_MODEL}, sort_keys=True, separators=(\",\", \":\"))",
       "text = json.dumps([tool.get(\"name\"), tool.get(\"description\")])")],
     "A changed definition is reviewed again"),
    ("ex10_review_everything", "the fingerprint depends on key order",
     [("for k in READ_BY_THE_MODEL}, sort_keys=True, separators", "for k in READ_BY_THE_MODEL}, separators")],
     "The fingerprint changes exactly when the definition does"),
    # --- ex10_authorize_call ---
    ("ex10_authorize_call", "no scope check",
     [('    if not set(operation.get("scopes", [])) <= set(caller.get("scopes", [])):\n        return "scope"\n', "")],
     "Identity, scope, tenant, ownership — in that order"),
    ("ex10_authorize_call", "subject-only binding: the tenant is never compared",
     [('    if target.get("tenant") is not None and caller.get("tenant") != target["tenant"]:\n        return "tenant"\n',
       "")],
     "Identity, scope, tenant, ownership — in that order"),
    ("ex10_authorize_call", "the tenant is enough: no ownership check",
     [('    if target.get("owner") is not None and caller["subject"] != target["owner"]:\n        return "ownership"\n',
       "")],
     "Identity, scope, tenant, ownership — in that order"),
    ("ex10_authorize_call", "ownership checked before the tenant",
     [('    if target.get("tenant") is not None and caller.get("tenant") != target["tenant"]:\n        return "tenant"\n'
       '    if target.get("owner") is not None and caller["subject"] != target["owner"]:\n        return "ownership"\n',
       '    if target.get("owner") is not None and caller["subject"] != target["owner"]:\n        return "ownership"\n'
       '    if target.get("tenant") is not None and caller.get("tenant") != target["tenant"]:\n        return "tenant"\n')],
     "Identity, scope, tenant, ownership — in that order"),
    ("ex10_authorize_call", "a handle's client is ignored",
     [('    if target.get("client_id") is not None and caller.get("client_id") != target["client_id"]:\n'
       '        return "ownership"  # a handle', '    if False:\n        return "ownership"  # a handle')],
     "Subject, tenant and client of a handle"),
    ("ex10_authorize_call", "the client compared on every object",
     [('if target.get("client_id") is not None and caller.get("client_id") != target["client_id"]:',
       'if caller.get("client_id") != target.get("client_id"):')],
     "The rightful caller is still served"),
    ("ex10_authorize_call", "everyone refused",
     [("        return \"ownership\"  # a handle issued to one client is not another client's, even the same user's\n"
       "    return None", "        return \"ownership\"\n    return \"ownership\"")],
     "The rightful caller is still served"),
    # --- ex10_replay_guard ---
    ("ex10_replay_guard", "the MAC is never checked",
     [("    if not dot or not hmac.compare_digest(mac, _mac(key, body)):\n"
       "        raise ValueError(\"the seal does not match: the state was edited or not made here\")\n", "")],
     "An edited requestState is refused"),
    ("ex10_replay_guard", "the MAC covers the state only",
     [("return f\"{_b64(body)}.{_mac(key, body)}\"",
       "return f\"{_b64(body)}.{_mac(key, json.dumps(state, sort_keys=True).encode())}\""),
      ("if not dot or not hmac.compare_digest(mac, _mac(key, body)):",
       "if not dot or not hmac.compare_digest(mac, _mac(key, json.dumps(json.loads(body)[\"state\"], "
       "sort_keys=True).encode())):")],
     "Nothing in the envelope can be changed without the key"),
    ("ex10_replay_guard", "the caller is not checked",
     [("    if envelope.get(\"sub\") != caller:\n        raise ValueError(\"issued to another caller\")\n", "")],
     "Bound to the caller, the request and an expiry"),
    ("ex10_replay_guard", "the expiry is ignored",
     [("    if now >= envelope.get(\"exp\", 0):", "    if False:")],
     "Bound to the caller, the request and an expiry"),
    ("ex10_replay_guard", "one payment per flow (the state's nonce)",
     [("return f\"{call['subject']}|pay|{invoice}\"", "return call[\"nonce\"]")], "A repeated payment pays once"),
    ("ex10_replay_guard", "one payment per request id",
     [("return f\"{call['subject']}|pay|{invoice}\"", "return call[\"request_id\"]")], "A repeated payment pays once"),
    ("ex10_replay_guard", "the payer left out of the key",
     [("return f\"{call['subject']}|pay|{invoice}\"", "return f\"pay|{invoice}\"")],
     "The key names the business operation"),
    ("ex10_replay_guard", "the client in the key",
     [("return f\"{call['subject']}|pay|{invoice}\"", "return f\"{call['subject']}|{call['client_id']}|pay|{invoice}\"")],
     "The key names the business operation"),
    # --- ex10_origin_check ---
    ("ex10_origin_check", "prefix match", PREFIX_ORIGIN, "Only exact origins of the server's own pages"),
    ("ex10_origin_check", "host only, any port or scheme", HOST_ONLY_ORIGIN,
     "Only exact origins of the server's own pages"),
    ("ex10_origin_check", "substring match", SUBSTRING_ORIGIN, "A rebinding page cannot reach the local server"),
    ("ex10_origin_check", "null allowed",
     [("return origin in {", "return origin == \"null\" or origin in {")], "null is never allowed"),
    ("ex10_origin_check", "every origin refused",
     [("return origin in {f\"http://localhost:{port}\", f\"http://127.0.0.1:{port}\"}", "return False")],
     "The user's own local page still works"),
    ("ex10_origin_check", "127.0.0.1 forgotten",
     [("return origin in {f\"http://localhost:{port}\", f\"http://127.0.0.1:{port}\"}",
       "return origin == f\"http://localhost:{port}\"")],
     "The user's own local page still works"),
    # --- ex10_token_audience ---
    ("ex10_token_audience", "no audience check",
     [("    if token.get(\"aud\") != resource:", "    if False:")],
     "A token replayed from another server is refused"),
    ("ex10_token_audience", "prefix match on the audience",
     [("if token.get(\"aud\") != resource:", "if not token[\"aud\"].startswith(resource):")],
     "The audience is exactly this server"),
    ("ex10_token_audience", "the host compared, not the URI",
     [("if token.get(\"aud\") != resource:", "if token[\"aud\"].split(\"/\")[2] != resource.split(\"/\")[2]:")],
     "The audience is exactly this server"),
    ("ex10_token_audience", "trailing slashes ignored",
     [("if token.get(\"aud\") != resource:", "if token[\"aud\"].rstrip(\"/\") != resource.rstrip(\"/\"):")],
     "The audience is exactly this server"),
    ("ex10_token_audience", "a missing scope answered 401",
     [("        return 403\n", "        return 401\n")], "Scopes are whole strings; a missing one is 403"),
    ("ex10_token_audience", "scopes matched by prefix",
     [("if not set(required_scopes) <= set(token[\"scopes\"]):",
       "if not all(any(s.startswith(r) for s in token[\"scopes\"]) for r in required_scopes):")],
     "Scopes are whole strings; a missing one is 403"),
    ("ex10_token_audience", "expiry ignored",
     [("    if now_ms >= token[\"exp_ms\"]:\n        return 401\n", "")],
     "Expired tokens are refused, valid ones served"),
    # --- ex10_sandbox_policy ---
    ("ex10_sandbox_policy", "everything readable", EVERYTHING_READABLE, "Exactly the declared needs"),
    ("ex10_sandbox_policy", "roots kept as URIs",
     [("root_paths = [urlparse(uri).path for uri in roots]", "root_paths = list(roots)")],
     "Roots become a boundary only when enforced"),
    ("ex10_sandbox_policy", "the parent of each needed directory",
     [("\"readable\": [*needs.get(\"directories\", []), *root_paths]",
       "\"readable\": [*(d.rsplit(\"/\", 1)[0] for d in needs.get(\"directories\", [])), *root_paths]")],
     "Exactly the declared needs"),
    ("ex10_sandbox_policy", "every variable passed on",
     [("\"environment\": list(needs.get(\"environment\", [])),", "\"environment\": [\"*\"],")],
     "Exactly the declared needs"),
    ("ex10_sandbox_policy", "egress anywhere",
     [("\"egress\": list(needs.get(\"egress\", []))}", "\"egress\": [\"*\"]}")], "Exactly the declared needs"),
    ("ex10_sandbox_policy", "only the file system sandboxed",
     [("\"environment\": list(needs.get(\"environment\", [])),\n            \"egress\": list(needs.get(\"egress\", []))}",
       "\"environment\": [\"*\"],\n            \"egress\": [\"*\"]}")],
     "One server cannot reach another's secrets"),
    ("ex10_sandbox_policy", "the root's parent folder granted",
     [("root_paths = [urlparse(uri).path for uri in roots]",
       "root_paths = [urlparse(uri).path.rsplit(\"/\", 1)[0] for uri in roots]")],
     "Inside the roots, and nowhere else"),
    ("ex10_sandbox_policy", "write wherever it reads",
     [("\"writable\": root_paths,", "\"writable\": [*needs.get(\"directories\", []), *root_paths],")],
     "Exactly the declared needs"),
]


@pytest.mark.parametrize(("exercise_id", "name", "edits", "failing_check"), WRONG,
                         ids=[f"{w[0]}:{w[1]}" for w in WRONG])
def test_plausible_wrong_answer_is_rejected_on_20_seeds(tmp_path: Path, exercise_id: str, name: str, edits: Any,
                                                        failing_check: str) -> None:
    assert_wrong_answer_rejected(tmp_path, exercise_id, name, edits, failing_check)


def test_every_chapter_10_exercise_runs_every_attack_of_its_labs() -> None:
    """Each lab check walks the main attack and every variant of its lab, as the lab declares them."""
    for exercise in (e for e in EXERCISES.values() if e.chapter == "10"):
        for check in exercise.checks:
            labs = {k.partition(": ")[0] for k in check.kinds if ": " in k and k.partition(": ")[0] in LABS}
            for lab in labs:
                assert {k for k in check.kinds if k.startswith(lab + ": ")} == \
                    {f"{lab}: {v}" for v in ("main", *LABS[lab].variants)}, (exercise.id, check.name)


def test_the_labs_fixed_reviewer_agrees_with_the_direct_cases() -> None:
    """The honest definitions pass the labs' own reviewer and every poisoned one is refused by it."""
    reviewer = ex10_review_everything._REVIEWER
    rng = random.Random(7)
    for _ in range(20):
        assert reviewer("weather", ex10_review_everything._honest(rng))
        for where in ("output schema", "annotations title", "a default value",
                      "invisible characters in the output schema"):
            assert not reviewer("weather", ex10_review_everything._poisoned(rng, where))


def test_direct_expectations_cover_both_answers() -> None:
    rng = random.Random(3)
    answers: set[str | None] = set()
    for kind in ex10_authorize_call.BALANCE_DENIED + ex10_authorize_call.ALLOWED[:2]:
        auth, target = ex10_authorize_call._balance_case(rng, kind)
        answers.add(ex10_authorize_call.expected(auth, ex10_authorize_call.BALANCE, target))
    assert answers == {None, "identity", "scope", "tenant", "ownership"}
    statuses = {ex10_token_audience._case(rng, k)[4] for k in ex10_token_audience.AUDIENCE_KINDS +
                ex10_token_audience.SCOPE_KINDS + ex10_token_audience.VALID_KINDS}
    assert statuses == {200, 401, 403}
    origins = {ex10_origin_check._origin(rng, k, 4000) in {"http://localhost:4000", "http://127.0.0.1:4000"}
               for k in ex10_origin_check.FOREIGN_KINDS + ex10_origin_check.OWN_KINDS}
    assert origins == {True, False}
    probes = set()
    for kind in ex10_sandbox_policy.NEEDS_KINDS + ex10_sandbox_policy.ROOTS_KINDS:
        needs, roots, probe, argument = ex10_sandbox_policy._case(rng, kind)
        policy = ex10_sandbox_policy._FOR_ROOTS(roots) if roots else ex10_sandbox_policy._FOR_NEEDS(
            ex10_sandbox_policy.Needs(tuple(needs["directories"]), tuple(needs["environment"]), tuple(needs["egress"])))
        probes.add(ex10_sandbox_policy._allows(policy, probe, argument))
    assert probes == {True, False}
