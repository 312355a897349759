"""Every exercise: the starter fails with a hint, the reference passes, plausible wrong solutions fail
on the check that names their mistake, and an answer hard-coded for one seed fails on the others.

Wrong solutions are written as small edits of the reference solution, each a mistake a learner could
plausibly make; each edit asserts that the text it changes still exists, so the fixtures cannot drift
silently from the reference.
"""

from __future__ import annotations

import copy
import random
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from mcp_sim.grading import EXERCISES, get_exercise
from mcp_sim.grading.learner_code import load_module
from mcp_sim.grading.model import CheckContext, CheckFailed, check_seeds
from mcp_sim.grading.runner import reference_path, run_in_subprocess, starter_path
from mcp_sim.grading.worker import grade_file

IDS = list(EXERCISES)


def test_there_are_at_least_eight_exercises_for_chapters_01_to_04() -> None:
    assert len(EXERCISES) >= 8
    assert {ex.chapter for ex in EXERCISES.values()} >= {"01", "02", "03", "04"}
    for ex in EXERCISES.values():
        assert ex.rules and ex.hints and ex.checks and ex.functions
        assert all(c.rule for c in ex.checks)
        readme = starter_path(ex.id).parent / "README.md"
        assert readme.is_file(), f"{ex.id} has no README.md"


@pytest.mark.parametrize("exercise_id", IDS)
def test_starter_fails_with_a_hint(exercise_id: str) -> None:
    result = run_in_subprocess(get_exercise(exercise_id), starter_path(exercise_id))
    assert not result.passed, result
    assert result.hints and result.hint(1)
    failure = result.first_failure
    assert failure is not None and failure.explanation and failure.rule
    assert "Hint 1 of" in str(result)


@pytest.mark.parametrize("exercise_id", IDS)
def test_reference_passes(exercise_id: str) -> None:
    result = run_in_subprocess(get_exercise(exercise_id), reference_path(exercise_id), reference=True)
    assert result.passed, result


@pytest.mark.parametrize("exercise_id", IDS)
def test_reference_passes_on_other_seeds(exercise_id: str) -> None:
    ex = get_exercise(exercise_id)
    path = reference_path(exercise_id)
    for base in (1, 2, 3, 17):
        result = grade_file(ex, path, path.name, base_seed=base, reference=True)
        assert result.passed, result


def _edit(source: str, *pairs: tuple[str, str]) -> str:
    for old, new in pairs:
        assert old in source, f"fixture out of date: {old!r} not in the reference"
        source = source.replace(old, new, 1)
    return source


NO_MAC_SEALER = '''
import base64, json, hashlib, hmac

def seal_state(key, state, caller, arguments, now, ttl):
    body = {"state": state, "caller": caller, "exp": now + ttl,
            "args": hashlib.sha256(json.dumps(arguments, sort_keys=True).encode()).hexdigest()}
    return base64.urlsafe_b64encode(json.dumps(body).encode()).decode()   # no MAC: anyone can edit it

def open_state(key, token, caller, arguments, now):
    try:
        body = json.loads(base64.urlsafe_b64decode(token.encode()))
        if not isinstance(body, dict):
            raise ValueError("not a token")
        ok = hmac.compare_digest(body["caller"], caller)
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError("bad token") from exc
    if not ok or body["exp"] <= now:
        raise ValueError("rejected")
    if body["args"] != hashlib.sha256(json.dumps(arguments, sort_keys=True).encode()).hexdigest():
        raise ValueError("rejected")
    return body["state"]
'''

SINGLE_CODE_DETECTOR = '''
def detect_era(reply):
    # keys on one code: -32601 means legacy, everything else modern
    if reply is not None and reply.get("error", {}).get("code") == -32601:
        return "legacy"
    return "modern"

def detect_era_http(status, body):
    return detect_era(body) if status in (200, 400) and body is not None else "legacy"
'''

RESULT_ONLY_DETECTOR = '''
def detect_era(reply):
    result = (reply or {}).get("result")
    return "modern" if isinstance(result, dict) and "supportedVersions" in result else "legacy"

def detect_era_http(status, body):
    return detect_era(body) if status in (200, 400) and body is not None else "legacy"
'''

# (exercise, name, edits-or-source, the check that must fail)
WRONG: list[tuple[str, str, Any, str]] = [
    ("ex01_topology", "everything over stdio",
     [('if server["runs"] == "local":', "if True:")], "Remote servers are reached over Streamable HTTP"),
    ("ex01_topology", "transports swapped",
     [('if server["runs"] == "local":', 'if server["runs"] == "remote":'),
      ('client["command"] = list(server["command"])', 'client["url"] = server["url"]'),
      ('client["url"] = server["url"]\n        clients', 'client["command"] = list(server["command"])\n        clients')],
     "Local servers are reached over stdio"),
    ("ex01_topology", "all clients share one id",
     [('f"client-{number}"', '"client"')], "One client per server, owned by the host"),
    ("ex02_next_message", "answers the last message, not the pending request",
     [('request = _pending(transcript, "client")', 'request = transcript[-1]["message"]')],
     "Server: answer the pending request with its id"),
    ("ex02_next_message", "initialized sent as a request",
     [('return {"jsonrpc": "2.0", "method": "notifications/initialized"}',
       'return {"jsonrpc": "2.0", "id": 0, "method": "notifications/initialized"}')],
     "Client: send notifications/initialized"),
    ("ex02_next_message", "reuses an id the client already used",
     [("new_id = 1\n    while _key(new_id) in used:\n        new_id += 1", "new_id = json.loads(sorted(used)[-1])")],
     "Client: a new request gets a fresh id"),
    ("ex02_error_codes", "-32002 in every revision",
     [("return -32602 if modern else -32002", "return -32002")], "Resource not found depends on the revision"),
    ("ex02_error_codes", "parse errors reported as invalid requests",
     [("return -32700", "return -32600")], "Unreadable text → -32700"),
    ("ex02_error_codes", "failing tools reported as internal errors",
     [("return None  # even a failing tool", 'return -32603 if params.get("name") in server["failing_tools"] else None  #')],
     "No error response when none is due"),
    ("ex02_error_codes", "unknown notifications answered with -32601",
     [('if "id" not in msg:\n        return None', 'if "id" not in msg:\n        return -32601')],
     "No error response when none is due"),
    ("ex03_version_negotiation", "server answers the last element",
     [("return max(supported)", "return supported[-1]")], "Otherwise the server answers its latest version"),
    ("ex03_version_negotiation", "client accepts anything",
     [("return chosen in client_supported", "return True")], "The client accepts only versions it speaks"),
    ("ex03_version_negotiation", "client offers its first version",
     [("offered = max(client_supported)", "offered = client_supported[0]")],
     "The whole handshake: agree or disconnect"),
    ("ex03_modern_meta", "retry reuses the id",
     [("response = send(build_request(new_id(),", "rid = new_id()\n    response = send(build_request(rid,"),
      ("return send(build_request(new_id(),", "return send(build_request(rid,")],
     "After -32022, retry once with a new id"),
    ("ex03_modern_meta", "retries with the server's newest version",
     [("common = [v for v in client_supported if v in server_supported]", "common = list(server_supported)")],
     "Retry version: newest one both sides speak, else None"),
    ("ex03_modern_meta", "drops the caller's _meta keys",
     [('meta = dict(params.get("_meta", {}))', "meta = {}")],
     "Every request carries version, capabilities and client info in _meta"),
    ("ex03_modern_meta", "mutates the caller's params",
     [('return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**params, "_meta": meta}}',
       'params["_meta"] = meta\n    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}')],
     "The caller's params and _meta survive, unmodified"),
    ("ex03_era_detection", "keys on -32601 only", SINGLE_CODE_DETECTOR,
     "Everything else — other errors, odd results, timeouts — means legacy"),
    ("ex03_era_detection", "only a result means modern", RESULT_ONLY_DETECTOR, "A modern-only error means modern"),
    ("ex03_era_detection", "HTTP status only",
     [("if status in (200, 400) and body is not None:\n        return detect_era(body)",
       'if status == 200:\n        return "modern"')],
     "HTTP: read the status and the body together"),
    ("ex04_mrtr_loop", "retry reuses the id",
     [('response = send({"jsonrpc": "2.0", "id": new_id(), "method": method, "params": params})',
       'rid = new_id()\n    response = send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})'),
      ('send({"jsonrpc": "2.0", "id": new_id(), "method": method, "params": retry_params})',
       'send({"jsonrpc": "2.0", "id": rid, "method": method, "params": retry_params})')],
     "Every retry has a new id"),
    ("ex04_mrtr_loop", "invents a requestState",
     [('if "requestState" in result:\n            retry_params["requestState"] = result["requestState"]',
       'retry_params["requestState"] = result.get("requestState", "")')],
     "requestState is echoed exactly, never invented"),
    ("ex04_mrtr_loop", "handles one round only",
     [("    while True:", "    for _round in range(1):")], "Second and third rounds work like the first"),
    ("ex04_mrtr_loop", "retry forgets the original arguments",
     [("retry_params = dict(params)", 'retry_params = {"_meta": params["_meta"]}')],
     "The retry keeps the original params"),
    ("ex04_seal_state", "sealer ignores the caller",
     [('"caller": caller, ', ""),
      ('if body["caller"] != caller:\n        raise ValueError("requestState belongs to another caller")\n', "")],
     "Bound to the caller"),
    ("ex04_seal_state", "no MAC at all", NO_MAC_SEALER, "Forged and tampered tokens are rejected"),
    ("ex04_seal_state", "ignores expiry",
     [('if now >= body["exp"]:\n        raise ValueError("requestState has expired")\n', "")],
     "Expires after ttl seconds"),
    ("ex04_seal_state", "argument digest depends on key order",
     [("sort_keys=True, ", "")], "Bound to the arguments (key order does not matter)"),
    ("ex04_seal_state", "compares MACs with ==",
     [("if not hmac.compare_digest(_mac(key, payload), received):", "if _mac(key, payload) != received:")],
     "MACs are compared in constant time"),
]


def test_every_exercise_has_at_least_two_wrong_solutions() -> None:
    for exercise_id in IDS:
        assert sum(1 for w in WRONG if w[0] == exercise_id) >= 2, exercise_id


@pytest.mark.parametrize(("exercise_id", "name", "edits", "failing_check"), WRONG,
                         ids=[f"{w[0]}:{w[1]}" for w in WRONG])
def test_plausible_wrong_solution_fails(tmp_path: Path, exercise_id: str, name: str, edits: Any,
                                        failing_check: str) -> None:
    ex = get_exercise(exercise_id)
    reference = reference_path(exercise_id).read_text(encoding="utf-8")
    source = edits if isinstance(edits, str) else _edit(reference, *edits)
    path = tmp_path / f"{exercise_id}_wrong.py"
    path.write_text(source, encoding="utf-8")
    result = grade_file(ex, path, path.name)
    assert not result.passed, f"{name}: {result}"
    by_name = {c.name: c for c in result.checks}
    assert failing_check in by_name, f"unknown check {failing_check!r}"
    assert not by_name[failing_check].passed, f"{name} should fail {failing_check!r}:\n{result}"
    assert by_name[failing_check].explanation


# --- an answer hard-coded for one seed ------------------------------------------------------------

def _key(args: tuple[Any, ...]) -> str:
    return repr(tuple("<callable>" if callable(a) else a for a in args))


def _record_first_seed(exercise_id: str) -> dict[str, dict[str, Any]]:
    """Run each check's first seed against the reference and record every call's answer."""
    ex = get_exercise(exercise_id)
    reference = load_module(reference_path(exercise_id), f"reference_{exercise_id}")
    tables: dict[str, dict[str, Any]] = {fn: {} for fn in ex.functions}
    recorder = ModuleType("recorder")
    for fn in ex.functions:
        real = getattr(reference, fn)

        def wrapper(*args: Any, _real: Any = real, _fn: str = fn) -> Any:
            value = _real(*args)
            tables[_fn].setdefault(_key(args), copy.deepcopy(value))
            return value

        setattr(recorder, fn, wrapper)
    recorder.__file__ = str(reference_path(exercise_id))
    for check in ex.checks:
        seed = check_seeds(ex.id, check.name, check.seeds)[0]
        try:
            check.run(CheckContext(recorder, random.Random(seed), seed))
        except CheckFailed as exc:  # pragma: no cover - the reference passes
            raise AssertionError(exc) from exc
    return tables


@pytest.mark.parametrize("exercise_id", IDS)
def test_answer_hard_coded_for_one_seed_fails_on_others(tmp_path: Path, exercise_id: str) -> None:
    ex = get_exercise(exercise_id)
    tables = _record_first_seed(exercise_id)
    lines = ["import copy", "", "def _key(args):",
             "    return repr(tuple('<callable>' if callable(a) else a for a in args))", ""]
    for fn, table in tables.items():
        first = next(iter(table.values()), None)
        lines += [f"_{fn.upper()} = {table!r}", "",
                  f"def {fn}(*args):",
                  f"    return copy.deepcopy(_{fn.upper()}.get(_key(args), {first!r}))", ""]
    lines.append("# hmac.compare_digest  (so the constant-time check is not what fails)")
    path = tmp_path / "hard_coded.py"
    path.write_text("\n".join(lines), encoding="utf-8")
    result = grade_file(ex, path, path.name)
    assert not result.passed, result
    # where the first seed could be answered from the table, the failure comes from another seed
    first_seeds = {c.name: check_seeds(ex.id, c.name, c.seeds)[0] for c in ex.checks}
    assert any(c.seed is not None and c.seed != first_seeds[c.name] for c in result.checks) or \
        all(not c.passed for c in result.checks), result
