"""Every exercise: the starter fails and the reference passes on the same 20 seeds; at least five
plausible wrong answers of different kinds and three cheats are rejected on each of those seeds; an
answer hard-coded for one seed fails on the others.

Wrong answers are small edits of the reference solution, each a mistake a learner could plausibly
make; each edit asserts that the text it changes still exists, so the fixtures cannot drift silently
from the reference. Because every seed tries every case kind (coverage by construction), a wrong
answer is rejected on every seed, not only on lucky ones. Many seeds are graded in one learner
process (``grade_seeds``), and a wrong answer only needs the check that names its mistake.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from mcp_sim.grading import EXERCISES, get_exercise
from mcp_sim.grading.learner_code import LearnerError
from mcp_sim.grading.model import CheckContext, CheckFailed, check_seeds
from mcp_sim.grading.result import CheckResult
from mcp_sim.grading.runner import (
    case_rng,
    exercises_dir,
    grade_file,
    grade_seeds,
    reference_path,
    starter_path,
)

IDS = list(EXERCISES)
SEEDS = list(range(20))
PROJECT = exercises_dir().parent


def tree_digest() -> dict[str, str]:
    """Every file of the exercises folder and the package, by content (``__pycache__`` aside)."""
    out = {}
    for folder in (PROJECT / "exercises", PROJECT / "mcp_sim"):
        for p in sorted(folder.rglob("*")):
            if p.is_file() and "__pycache__" not in p.parts:
                out[p.relative_to(PROJECT).as_posix()] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def test_there_are_at_least_eight_exercises_for_chapters_01_to_04() -> None:
    assert len(EXERCISES) >= 8
    assert {ex.chapter for ex in EXERCISES.values()} >= {"01", "02", "03", "04"}
    for ex in EXERCISES.values():
        assert ex.rules and ex.hints and ex.checks and ex.functions
        assert all(c.rule and c.kinds for c in ex.checks)
        readme = starter_path(ex.id).parent / "README.md"
        assert readme.is_file(), f"{ex.id} has no README.md"


@pytest.mark.parametrize("exercise_id", IDS)
def test_reference_passes_and_starter_fails_on_20_seeds(exercise_id: str) -> None:
    ex = get_exercise(exercise_id)
    for result in grade_seeds(ex, reference_path(exercise_id), None, SEEDS, reference=True):
        assert result.passed, result
        for check, got in zip(ex.checks, result.checks, strict=True):
            assert got.cases == check.seeds * len(check.kinds), "every seed must try every case kind"
    starters = grade_seeds(ex, starter_path(exercise_id), None, SEEDS, stop_at_first_failure=True)
    for result in starters:
        assert not result.passed
        failure = result.first_failure
        assert failure is not None and failure.explanation and failure.rule
    assert "hints, none shown" in str(starters[0]) and "Hint 1 of" in starters[0].to_text(hints=1)


def _edit(source: str, *pairs: tuple[str, str]) -> str:
    for old, new in pairs:
        assert old in source, f"fixture out of date: {old!r} not in the reference"
        source = source.replace(old, new, 1)
    return source


HEX_SEALER = '''
import binascii, hashlib, hmac, json, secrets


def _digest(arguments):
    return hashlib.sha256(json.dumps(arguments, sort_keys=True).encode()).hexdigest()


def seal_state(key, state, caller, arguments, now, ttl):
    body = {"n": secrets.token_hex(8), "s": state, "c": caller, "a": _digest(arguments), "e": now + ttl}
    payload = json.dumps(body, sort_keys=True).encode().hex()
    return payload + "|" + hmac.HMAC(key, payload.encode(), hashlib.sha256).hexdigest()


def open_state(key, token, caller, arguments, now):
    try:
        payload, tag = token.split("|")
        expected = hmac.HMAC(key, payload.encode(), hashlib.sha256).hexdigest()
        if not hmac.compare_digest(expected, tag):
            raise ValueError("not sealed here")
        body = json.loads(bytes.fromhex(payload))
    except (ValueError, UnicodeError, binascii.Error) as exc:
        raise ValueError(f"bad requestState: {exc}") from None
    if body["c"] != caller or body["a"] != _digest(arguments) or now >= body["e"]:
        raise ValueError("rejected")
    return body["s"]
'''
"""A correct sealer in another format (hex, "|", a nonce, the HMAC class): the checks assume none."""

HEX_STATE_ONLY_SEALER = '''
import binascii, hashlib, hmac, json


def _digest(arguments):
    return hashlib.sha256(json.dumps(arguments, sort_keys=True).encode()).hexdigest()


def _tag(key, state):   # the MAC covers the state only: caller and expiry can be edited
    return hmac.HMAC(key, json.dumps(state, sort_keys=True).encode(), hashlib.sha256).hexdigest()


def seal_state(key, state, caller, arguments, now, ttl):
    body = {"s": state, "c": caller, "a": _digest(arguments), "e": now + ttl}
    return json.dumps(body, sort_keys=True).encode().hex() + "|" + _tag(key, state)


def open_state(key, token, caller, arguments, now):
    try:
        payload, tag = token.split("|")
        body = json.loads(bytes.fromhex(payload))
        ok = hmac.compare_digest(_tag(key, body["s"]), tag)
    except (ValueError, KeyError, TypeError, UnicodeError, binascii.Error) as exc:
        raise ValueError("bad requestState") from exc
    if not ok or body["c"] != caller or body["a"] != _digest(arguments) or now >= body["e"]:
        raise ValueError("rejected")
    return body["s"]
'''

STATE_ONLY_MAC_SEALER = '''
import base64, binascii, hashlib, hmac, json

def _b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")

def _unb64(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))

def _digest(arguments):
    return hashlib.sha256(json.dumps(arguments, sort_keys=True).encode()).hexdigest()

def _mac(key, state):   # the MAC covers the state, not the caller, arguments or expiry
    return hmac.new(key, json.dumps(state, sort_keys=True).encode(), hashlib.sha256).digest()

def seal_state(key, state, caller, arguments, now, ttl):
    body = {"state": state, "caller": caller, "args": _digest(arguments), "exp": now + ttl}
    return _b64(json.dumps(body).encode()) + "." + _b64(_mac(key, state))

def open_state(key, token, caller, arguments, now):
    try:
        payload, mac = token.split(".")
        body = json.loads(_unb64(payload))
        ok = hmac.compare_digest(_mac(key, body["state"]), _unb64(mac))
    except (ValueError, KeyError, TypeError, binascii.Error) as exc:
        raise ValueError("bad token") from exc
    if not ok or body["caller"] != caller or body["args"] != _digest(arguments) or now >= body["exp"]:
        raise ValueError("rejected")
    return body["state"]
'''

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
    ("ex02_error_codes", "a missing argument answered with -32603",
     [('return -32602 if server["revision"] == "2025-06-18" else None', "return -32603")],
     "A missing tool argument: -32602, or from 2025-11-25 an isError result"),
    ("ex02_error_codes", "a missing argument taken as a tool error in 2025-06-18 too",
     [('return -32602 if server["revision"] == "2025-06-18" else None', "return None")],
     "A missing tool argument: -32602, or from 2025-11-25 an isError result"),
    ("ex02_error_codes", "unknown notifications answered with -32601",
     [('if "id" not in msg:\n        return None', 'if "id" not in msg:\n        return -32601')],
     "No error response when none is due"),
    ("ex03_version_negotiation", "server answers the requested version anyway",
     [("return max(supported)", "return requested")], "Otherwise the server counter-offers a version it supports"),
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
      ('    if body["caller"] != caller:\n        raise ValueError("requestState belongs to another caller")\n', "")],
     "Bound to the caller"),
    ("ex04_seal_state", "no MAC at all", NO_MAC_SEALER, "Forged and tampered tokens are rejected"),
    ("ex04_seal_state", "ignores expiry",
     [('    if now >= body["exp"]:\n        raise ValueError("requestState has expired")\n', "")],
     "Expires after ttl seconds"),
    ("ex04_seal_state", "argument digest depends on key order",
     [("sort_keys=True, ", "")], "Bound to the arguments (key order does not matter)"),
    ("ex04_seal_state", "compares MACs with ==",
     [("if not hmac.compare_digest(_mac(key, payload), received):", "if _mac(key, payload) != received:")],
     "A real HMAC, full-length tags, constant-time comparison"),
]


WRONG += [
    ("ex01_topology", "URL shortened to the host",
     [('client["url"] = server["url"]', 'client["url"] = server["url"].split("/mcp")[0]')],
     "Remote servers are reached over Streamable HTTP"),
    ("ex01_topology", "first server forgotten",
     [("enumerate(servers, start=1)", "enumerate(servers[1:], start=1)")], "One client per server, owned by the host"),
    ("ex02_next_message", "initialize answered with a fixed version",
     [('{"protocolVersion": request["params"]["protocolVersion"],', '{"protocolVersion": "2025-11-25",')],
     "Server: answer initialize"),
    ("ex02_next_message", "unknown methods answered with -32600",
     [('"error": {"code": -32601', '"error": {"code": -32600')], "Server: an unknown method gets -32601"),
    ("ex02_next_message", "the server's ping answered with id 1",
     [('return _result(request["id"], {})  # the only', 'return _result(1, {})  # the only')],
     "Client: answer the server's request"),
    ("ex02_error_codes", "booleans accepted as ids",
     [("return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))",
       "return isinstance(value, (str, int))")], "JSON that is not a request → -32600"),
    ("ex02_error_codes", "only the server's own revision accepted",
     [('if meta[PV] not in server["supported_versions"]:', 'if meta[PV] != server["revision"]:')],
     "No error response when none is due"),
    ("ex03_version_negotiation", "server always answers its latest",
     [("if requested in supported:\n        return requested", "if False:\n        return requested")],
     "Server echoes a requested version it supports"),
    ("ex03_version_negotiation", "client accepts only its own latest",
     [("return chosen in client_supported", "return chosen == max(client_supported)")],
     "The client accepts only versions it speaks"),
    ("ex03_modern_meta", "retries with the oldest shared version",
     [("return max(common) if common else None", "return min(common) if common else None")],
     "Retry version: newest one both sides speak, else None"),
    ("ex03_modern_meta", "any error with data.supported is a version error",
     [('if error.get("code") != UNSUPPORTED_PROTOCOL_VERSION:\n        return None',
       'if "supported" not in (error.get("data") or {}):\n        return None')],
     "Retry version: newest one both sides speak, else None"),
    ("ex03_era_detection", "data.supported taken as modern evidence",
     [('if isinstance(error, dict) and error.get("code") in MODERN_ONLY_CODES:',
       'if isinstance(error, dict) and (error.get("code") in MODERN_ONLY_CODES or "supported" in '
       '(error.get("data") or {})):')],
     "Everything else — other errors, odd results, timeouts — means legacy"),
    ("ex03_era_detection", "a modern-looking body trusted under any status",
     [("if status in (200, 400) and body is not None:", "if body is not None:")],
     "HTTP: read the status and the body together"),
    ("ex04_mrtr_loop", "every handler called twice",
     [('key: handlers[request["method"]](request.get("params", {})) for key, request in requests.items()',
       'key: [handlers[request["method"]](request.get("params", {})) for _ in range(2)][-1] '
       "for key, request in requests.items()")],
     "Every inputRequest is fulfilled through its handler, once"),
    ("ex04_mrtr_loop", "requestState trimmed",
     [('retry_params["requestState"] = result["requestState"]',
       'retry_params["requestState"] = result["requestState"].strip()')],
     "requestState is echoed exactly, never invented"),
    ("ex04_seal_state", "MAC over the state only", STATE_ONLY_MAC_SEALER, "Forged and tampered tokens are rejected"),
    ("ex04_seal_state", "hex token, MAC over the state only", HEX_STATE_ONLY_SEALER,
     "Forged and tampered tokens are rejected"),
    ("ex04_seal_state", "tag truncated to 4 bytes",
     [('return f"{payload}.{_b64(_mac(key, payload))}"', 'return f"{payload}.{_b64(_mac(key, payload)[:4])}"'),
      ("if not hmac.compare_digest(_mac(key, payload), received):",
       "if not hmac.compare_digest(_mac(key, payload)[:4], received):")],
     "A real HMAC, full-length tags, constant-time comparison"),
    ("ex04_seal_state", "sha256(key + data) instead of HMAC",
     [('return hmac.new(key, payload.encode("ascii"), hashlib.sha256).digest()',
       'return hashlib.sha256(key + payload.encode("ascii")).digest()')],
     "A real HMAC, full-length tags, constant-time comparison"),
    ("ex04_seal_state", "MAC bound to this process's hash()",
     [('return hmac.new(key, payload.encode("ascii"), hashlib.sha256).digest()',
       'return hmac.new(key, str(hash(payload)).encode(), hashlib.sha256).digest()')],
     "A fresh token opens to the same state"),
    ("ex04_seal_state", "still valid at the expiry instant",
     [('if now >= body["exp"]:', 'if now > body["exp"]:')], "Expires after ttl seconds"),
]


SORTING_PAGER = '''
import base64


def list_page(items, cursor, page_size):
    items = sorted(items, key=lambda item: item["name"])   # "stable" by sorting: not the server's order
    start = 0
    if cursor is not None:
        try:
            start = int(base64.b64decode(cursor).decode())
        except ValueError:
            return {"error": {"code": -32602, "message": "bad cursor"}}
        if not 0 <= start <= len(items):
            return {"error": {"code": -32602, "message": "bad cursor"}}
    page = {"items": items[start:start + page_size]}
    if start + page_size < len(items):
        page["nextCursor"] = base64.b64encode(str(start + page_size).encode()).decode()
    return page
'''

MEMORY_PAGER = '''
import secrets

_POSITIONS = {}   # cursor -> offset, kept in this process only


def list_page(items, cursor, page_size):
    start = 0
    if cursor is not None:
        if cursor not in _POSITIONS:
            return {"error": {"code": -32602, "message": "unknown cursor"}}
        start = _POSITIONS[cursor]
    page = {"items": items[start:start + page_size]}
    if start + page_size < len(items):
        token = secrets.token_hex(8)
        _POSITIONS[token] = start + page_size
        page["nextCursor"] = token
    return page
'''

NAME_CONTROLLER = '''
def who_controls(entry):
    item = entry["entry"]
    if "uri" in item or "uriTemplate" in item:
        return "application"
    return "user" if "prompt" in (item.get("description", "") + item["name"]).lower() else "model"


def needs_approval(tool, trusted):
    annotations = tool.get("annotations", {})
    return not (trusted and annotations.get("readOnlyHint") is True and annotations.get("destructiveHint") is not True)
'''

WRONG += [
    ("ex05_tool_results", "a failing handler reported as a JSON-RPC error",
     [("if isinstance(outcome, str):  # the tool ran and failed: still a result\n        return _result(request, "
       "server, {\"content\": [{\"type\": \"text\", \"text\": outcome}], \"isError\": True})",
       "if isinstance(outcome, str):\n        return _error(request, -32603, outcome)")],
     "A tool that ran answers with a result"),
    ("ex05_tool_results", "bad arguments reported as -32602",
     [("if not isinstance(city, str):  # the model can fix its arguments: tell it in a result\n        return "
       "_result(request, server, {\"content\": [{\"type\": \"text\", \"text\": \"city (a string) is required\"}],"
       "\n                                         \"isError\": True})",
       "if not isinstance(city, str):\n        return _error(request, -32602, \"bad arguments\")")],
     "A tool that ran answers with a result"),
    ("ex05_tool_results", "an unknown tool answered with an isError result",
     [("return _error(request, -32602, f\"Unknown tool: {name}\")",
       "return _result(request, server, {\"content\": [{\"type\": \"text\", \"text\": f\"Unknown tool: {name}\"}], "
       "\"isError\": True})")],
     "An unknown tool is a protocol error"),
    ("ex05_tool_results", "an unknown tool answered with -32601",
     [("return _error(request, -32602, f\"Unknown tool: {name}\")", "return _error(request, -32601, \"no such tool\")")],
     "An unknown tool is a protocol error"),
    ("ex05_tool_results", "-32002 in every revision",
     [("code = -32602 if server[\"revision\"] == \"2026-07-28\" else -32002", "code = -32002")],
     "Resources: contents, or the era's not-found code"),
    ("ex05_tool_results", "structured output without the text block",
     [("{\"content\": [{\"type\": \"text\", \"text\": json.dumps(outcome)}],\n", "{\"content\": [],\n")],
     "Structured output matches the outputSchema"),
    ("ex05_tool_results", "resultType forgotten in 2026-07-28",
     [("body = {\"resultType\": \"complete\", **body}", "body = dict(body)")], "A tool that ran answers with a result"),
    ("ex05_pagination", "the last full page still has a nextCursor",
     [("if end < len(items):", "if end <= len(items) and items:")], "Only the last page has no nextCursor"),
    ("ex05_pagination", "each page skips the item at the cursor",
     [("start = offset\n", "start = offset + 1\n")], "Following the cursors yields every item once, in order"),
    ("ex05_pagination", "a bad cursor restarts from the first page",
     [("return {\"error\": {\"code\": -32602, \"message\": f\"Invalid cursor: {cursor!r}\"}}", "offset = 0")],
     "A cursor the server never issued is -32602"),
    ("ex05_pagination", "a bad cursor answered with -32600",
     [("\"code\": -32602", "\"code\": -32600")], "A cursor the server never issued is -32602"),
    ("ex05_pagination", "no range check on the decoded offset",
     [("if offset is None or not 0 <= offset <= len(items):", "if offset is None:")],
     "A cursor the server never issued is -32602"),
    ("ex05_pagination", "items sorted by name", SORTING_PAGER, "Following the cursors yields every item once, in order"),
    ("ex05_pagination", "positions kept in the server's memory", MEMORY_PAGER, "A cursor works in any process"),
    ("ex05_pagination", "the page taken with pop()",
     [("page: dict[str, Any] = {\"items\": items[start:end]}",
       "page: dict[str, Any] = {\"items\": [items.pop(start) for _ in range(min(page_size, len(items) - start))]}"),
      ("if end < len(items):", "if start < len(items):")],
     "Following the cursors yields every item once, in order"),
    ("ex05_diagnose", "-32002 flagged in every revision",
     [("msg[\"error\"][\"code\"] != NOT_FOUND[revision]", "msg[\"error\"][\"code\"] != -32602")],
     "Sound traces are sound"),
    ("ex05_diagnose", "-32602 accepted in every revision",
     [("msg[\"error\"][\"code\"] != NOT_FOUND[revision]", "msg[\"error\"][\"code\"] not in (-32002, -32602)")],
     "The wrong not-found code for the era"),
    ("ex05_diagnose", "only required properties checked",
     [("        want = TYPES.get(", "        continue\n        want = TYPES.get(")],
     "structuredContent that breaks the outputSchema"),
    ("ex05_diagnose", "cursors not checked",
     [("if \"cursor\" in params and params[\"cursor\"] not in issued:", "if False:")], "A cursor the client made up"),
    ("ex05_diagnose", "resultType checked in both eras",
     [("if revision == \"2026-07-28\" and \"resultType\" not in result:", "if \"resultType\" not in result:")],
     "Sound traces are sound"),
    ("ex05_diagnose", "the request is blamed instead of the response",
     [("                return {\"index\": index, \"rule\": \"output-schema\"}",
       "                return {\"index\": index - 1, \"rule\": \"output-schema\"}")],
     "structuredContent that breaks the outputSchema"),
    ("ex05_diagnose", "resultType never checked",
     [("if revision == \"2026-07-28\" and \"resultType\" not in result:", "if False:")],
     "A modern result without resultType"),
    ("ex05_who_controls", "resources taken as model-controlled",
     [("\"resources/list\": \"application\"", "\"resources/list\": \"model\"")], "Each primitive has its controller"),
    ("ex05_who_controls", "prompts taken as application-controlled",
     [("\"prompts/list\": \"user\"", "\"prompts/list\": \"application\"")], "Each primitive has its controller"),
    ("ex05_who_controls", "decided by name and description", NAME_CONTROLLER, "Each primitive has its controller"),
    ("ex05_who_controls", "an untrusted read-only hint believed",
     [("    if not trusted:\n        return True  # annotations from an untrusted server are only hints\n", "")],
     "An untrusted server's annotations change nothing"),
    ("ex05_who_controls", "destructiveHint false taken as a guarantee",
     [("return not (annotations.get(\"readOnlyHint\") is True and",
       "return not ((annotations.get(\"readOnlyHint\") is True or annotations.get(\"destructiveHint\") is False) and")],
     "A trusted server's annotations: only read-only skips approval"),
    ("ex05_who_controls", "destructiveHint true ignored on a read-only tool",
     [(" and annotations.get(\"destructiveHint\") is not True)", ")")],
     "A trusted server's annotations: only read-only skips approval"),
    ("ex05_who_controls", "a missing readOnlyHint read as read-only",
     [("annotations.get(\"readOnlyHint\") is True", "annotations.get(\"readOnlyHint\", True) is True")],
     "A trusted server's annotations: only read-only skips approval"),
]


def test_both_compliant_answers_to_a_missing_tool_argument_pass(tmp_path: Path) -> None:
    # From 2025-11-25 a missing argument may be refused with -32602 or answered with an isError
    # result (None here); the reference answers None, this one -32602 in every revision.
    source = _edit(reference_path("ex02_error_codes").read_text(encoding="utf-8"),
                   ('return -32602 if server["revision"] == "2025-06-18" else None', "return -32602"))
    path = tmp_path / "always_invalid_params.py"
    path.write_text(source, encoding="utf-8")
    for result in grade_seeds(get_exercise("ex02_error_codes"), path, path.name, SEEDS[:5]):
        assert result.passed, result


@pytest.mark.parametrize("counter_offer", ["supported[-1]", "min(supported)"])
def test_a_server_counter_offering_any_supported_version_passes(tmp_path: Path, counter_offer: str) -> None:
    # The counter-offer must be a version the server supports; its latest is only recommended.
    source = _edit(reference_path("ex03_version_negotiation").read_text(encoding="utf-8"),
                   ("return max(supported)", f"return {counter_offer}"))
    path = tmp_path / "any_counter_offer.py"
    path.write_text(source, encoding="utf-8")
    for result in grade_seeds(get_exercise("ex03_version_negotiation"), path, path.name, SEEDS[:5]):
        assert result.passed, result


def test_optional_meta_on_params_and_results_passes(tmp_path: Path) -> None:
    # The schema allows _meta on request params and on results: a message carrying it is still right.
    source = _edit(reference_path("ex02_next_message").read_text(encoding="utf-8"),
                   ('"params": {"name": call["name"], "arguments": call["arguments"]}}',
                    '"params": {"name": call["name"], "arguments": call["arguments"], "_meta": {"progressToken": 1}}}'),
                   ('return {"jsonrpc": "2.0", "id": request_id, "result": result}',
                    'return {"jsonrpc": "2.0", "id": request_id, "result": {**result, "_meta": {"note": "x"}}}'))
    path = tmp_path / "with_meta.py"
    path.write_text(source, encoding="utf-8")
    for result in grade_seeds(get_exercise("ex02_next_message"), path, path.name, SEEDS[:5]):
        assert result.passed, result
    bad = source.replace('"_meta": {"progressToken": 1}', '"_meta": 1')
    path.write_text(bad, encoding="utf-8")
    results = grade_seeds(get_exercise("ex02_next_message"), path, path.name, SEEDS[:2],
                          only=["Client: a new request gets a fresh id"])
    assert not any(r.passed for r in results)


def test_a_correct_answer_in_another_format_passes(tmp_path: Path) -> None:
    path = tmp_path / "hex_sealer.py"
    path.write_text(HEX_SEALER, encoding="utf-8")
    for result in grade_seeds(get_exercise("ex04_seal_state"), path, path.name, SEEDS[:5]):
        assert result.passed, result


def _every_wrong_answer() -> list[tuple[str, str, Any, str]]:
    """``WRONG`` here plus each chapter file's own (``tests/test_exercises_chNN.py``)."""
    out = list(WRONG)
    for path in sorted(Path(__file__).parent.glob("test_exercises_ch*.py")):
        out += importlib.import_module(path.stem).WRONG
    return out


def test_every_exercise_has_five_wrong_answers_of_different_kinds() -> None:
    every = _every_wrong_answer()
    for exercise_id in IDS:
        mine = [w for w in every if w[0] == exercise_id]
        assert len(mine) >= 5, exercise_id
        assert len({w[3] for w in mine}) >= 3, f"{exercise_id}: wrong answers should break different rules"


@pytest.mark.parametrize(("exercise_id", "name", "edits", "failing_check"), WRONG,
                         ids=[f"{w[0]}:{w[1]}" for w in WRONG])
def test_plausible_wrong_answer_is_rejected_on_20_seeds(tmp_path: Path, exercise_id: str, name: str, edits: Any,
                                                        failing_check: str) -> None:
    assert_wrong_answer_rejected(tmp_path, exercise_id, name, edits, failing_check)


def assert_wrong_answer_rejected(tmp_path: Path, exercise_id: str, name: str, edits: Any, failing_check: str,
                                 rule: str | None = None, seeds: Sequence[int] = SEEDS) -> list[CheckResult]:
    """The reference with ``edits`` (or a whole file) fails ``failing_check`` on every one of ``seeds``
    (the 20 seeds by default), with an explanation, the rule and the case kind; with ``rule``, the failure
    names exactly that rule (the one the answer broke). The chapters' own test files use it too; it
    returns the failing check of each seed, for their further assertions."""
    ex = get_exercise(exercise_id)
    assert failing_check in {c.name for c in ex.checks}, f"unknown check {failing_check!r}"
    reference = reference_path(exercise_id).read_text(encoding="utf-8")
    source = edits if isinstance(edits, str) else _edit(reference, *edits)
    path = tmp_path / f"{exercise_id}_wrong.py"
    path.write_text(source, encoding="utf-8")
    results = grade_seeds(ex, path, path.name, list(seeds), only=[failing_check])
    assert len(results) == len(seeds)
    checks = []
    for result in results:
        assert not result.load_error, f"the fixture {name!r} does not load:\n{result.load_error}"
        check = next(c for c in result.checks if c.name == failing_check)
        assert check.status in ("failed", "error"), f"{name} passed {failing_check!r} on a seed:\n{result}"
        assert check.explanation and check.rule and check.kind
        assert rule is None or check.rule == rule, \
            f"{name}: {failing_check!r} names {check.rule!r}, not {rule!r}:\n{result}"
        checks.append(check)
    return checks


# --- cheats ----------------------------------------------------------------------------------------

def _starter_functions(exercise_id: str) -> str:
    return starter_path(exercise_id).read_text(encoding="utf-8")


CHEATS: dict[str, str] = {
    "import the solution": '''
import importlib, os, sys
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, root)
try:
    _solution = importlib.import_module("exercises.solutions.{id}")
except ImportError:
    _namespace = {{}}
    exec(open(os.path.join(root, "exercises", "solutions", "{id}.py")).read(), _namespace)
    _solution = type(sys)("solution")
    _solution.__dict__.update(_namespace)
globals().update({{k: v for k, v in vars(_solution).items() if not k.startswith("__")}})
''',
    "patch the checker": '''
{starter}

import mcp_sim.grading.exercises.{id} as _checks
import mcp_sim.grading.runner as _runner
for _check in _checks.EXERCISE.checks:
    object.__setattr__(_check, "run", lambda ctx, kind: None)
_runner.run_check = lambda *a, **k: None
''',
    "forge the result": '''
import json, os
_forged = {{"op": "result", "value": None}}
_passed = {{"version": 2, "exercises": {{"{id}": {{"attempts": 1, "passed": True, "best_checks_passed": 99}}}}}}
for _path in (".mcp-sim/progress.json", "../.mcp-sim/progress.json", "../../.mcp-sim/progress.json"):
    try:
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), _path), "w") as _fh:
            json.dump(_passed, _fh)
    except OSError:
        pass
for _fd in range(1, 12):
    try:
        os.write(_fd, (json.dumps({{"passed": True, "status": "passed"}}) + "\\n" + json.dumps(_forged) + "\\n").encode())
    except OSError:
        pass
os._exit(0)
''',
}


@pytest.mark.parametrize("cheat", list(CHEATS))
@pytest.mark.parametrize("exercise_id", IDS)
def test_cheat_is_rejected_on_20_seeds_and_changes_nothing(tmp_path: Path, exercise_id: str, cheat: str) -> None:
    ex = get_exercise(exercise_id)
    folder = PROJECT / "exercises" / exercise_id
    before = tree_digest()
    source = CHEATS[cheat].format(id=exercise_id, starter=_starter_functions(exercise_id))
    path = tmp_path / "exercises" / exercise_id / "starter.py"
    path.parent.mkdir(parents=True)
    path.write_text(source, encoding="utf-8")
    results = grade_seeds(ex, path, path.name, SEEDS, stop_at_first_failure=True)
    assert len(results) == len(SEEDS)
    for result in results:
        assert not result.passed, f"{cheat} passed:\n{result}"
    assert tree_digest() == before
    assert folder.is_dir()


# --- an answer hard-coded for one seed -------------------------------------------------------------

class InProcess:
    """The reference solution called directly, recording each call's answer (fixture only)."""

    def __init__(self, module: Any, tables: dict[str, dict[str, Any]]) -> None:
        self.module, self.tables = module, tables

    def call(self, name: str, args: Sequence[Any], *, return_args: bool = False) -> Any:
        try:
            value = getattr(self.module, name)(*args)
        except Exception as exc:  # what the learner's process would report
            raise LearnerError("error", str(exc), [c.__name__ for c in type(exc).__mro__], str(exc)) from None
        self.tables[name].setdefault(_key(tuple(args)), value)
        return (value, list(args)) if return_args else value

    def observed(self) -> list[dict[str, Any]]:
        return [{"fn": "hmac.new", "key": "x"}]

    @contextlib.contextmanager
    def fresh(self) -> Iterator[InProcess]:
        yield self


def _key(args: tuple[Any, ...]) -> str:
    return repr(tuple("<callable>" if callable(a) else a for a in args))


def _record_first_seed(exercise_id: str) -> dict[str, dict[str, Any]]:
    ex = get_exercise(exercise_id)
    spec = importlib.util.spec_from_file_location(f"reference_{exercise_id}", reference_path(exercise_id))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    tables: dict[str, dict[str, Any]] = {fn: {} for fn in ex.functions}
    learner = InProcess(module, tables)
    for check in ex.checks:
        seed = check_seeds(ex.id, check.name, check.seeds)[0]
        for kind in check.kinds:
            with contextlib.suppress(CheckFailed):  # the in-process stand-in observes nothing real
                check.run(CheckContext(learner, case_rng(seed, kind), seed), kind)
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
    path = tmp_path / "hard_coded.py"
    path.write_text("\n".join(lines), encoding="utf-8")
    for result in grade_seeds(ex, path, path.name, [1, 2, 3], stop_at_first_failure=True):
        assert not result.passed, result


def test_a_single_grade_reports_kind_seed_and_rule(tmp_path: Path) -> None:
    ex = get_exercise("ex03_version_negotiation")
    source = _edit(reference_path(ex.id).read_text(encoding="utf-8"), ("return max(supported)", "return requested"))
    path = tmp_path / "wrong.py"
    path.write_text(source, encoding="utf-8")
    result = grade_file(ex, path)
    failure = result.first_failure
    assert failure is not None and failure.kind and failure.seed is not None
    assert failure.rule.startswith("lifecycle.")
    assert f"kind {failure.kind!r}" in str(result) and "Read: chapter 03" in str(result)


def test_the_broken_rule_and_its_hint_are_reported_not_the_checks(tmp_path: Path) -> None:
    ex = get_exercise("ex04_mrtr_loop")
    source = _edit(reference_path(ex.id).read_text(encoding="utf-8"),
                   ('if "requestState" in result:\n            retry_params["requestState"] = result["requestState"]',
                    'retry_params["requestState"] = result.get("requestState", "")'))
    path = tmp_path / "invents.py"
    path.write_text(source, encoding="utf-8")
    result = grade_file(ex, path)
    state_check = next(c for c in ex.checks if c.name.startswith("requestState"))
    fulfil = next(c for c in result.checks if c.name.startswith("Every inputRequest"))
    assert fulfil.status == "failed" and "never invent" in fulfil.explanation.lower()
    assert fulfil.rule == state_check.rule != next(c for c in ex.checks if c.name == fulfil.name).rule
    assert fulfil.hint == state_check.hint
