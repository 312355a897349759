"""Grading that generalizes, chapters 01–04 (issue #30).

* valid designs pass: for every exercise at least two correct answers written differently from the
  reference (another structure, another id or token format, another order) are accepted;
* new plausible wrong answers — written from each README, for the mistake classes the issue names
  (an axis that never varied, a boundary never probed, only one input per rule) — are rejected on
  20 seeds by the check that names the right rule;
* one truth: the reference agrees with the simulator (the oracle) on the generated inputs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_exercises import SEEDS, _edit, assert_wrong_answer_rejected

from mcp_sim.grading import get_exercise
from mcp_sim.grading.runner import grade_seeds, reference_path

CHAPTERS_01_04 = ("ex01_topology", "ex02_error_codes", "ex02_next_message", "ex03_era_detection",
                  "ex03_modern_meta", "ex03_version_negotiation", "ex04_mrtr_loop", "ex04_seal_state")
ALTERNATIVE_SEEDS = SEEDS[:3]

# --- correct alternatives ------------------------------------------------------------------------------

TOPOLOGY_COMPREHENSION = '''
def _client(server):
    where = {"transport": "stdio", "command": list(server["command"])} if server["runs"] == "local" else \\
        {"transport": "streamable-http", "url": server["url"]}
    return {"server": server["name"], "id": "c-" + server["name"], "label": server["name"].upper(), **where}


def build_topology(host, servers):
    return {"clients": [_client(s) for s in reversed(servers)], "host": host}
'''

TOPOLOGY_CLASS = '''
import hashlib


class Topology:
    def __init__(self, host):
        self.host, self.clients = host, []

    def connect(self, server):
        digest = hashlib.sha256(server["name"].encode()).hexdigest()[:12]
        client = {"id": digest, "server": server["name"], "timeout": 30}
        if server["runs"] == "remote":
            client.update(transport="streamable-http", url=server["url"])
        else:
            client.update(transport="stdio", command=[*server["command"]])
        self.clients.append(client)

    def as_data(self):
        return {"host": self.host, "clients": self.clients}


def build_topology(host, servers):
    topology = Topology(host)
    for server in servers:
        topology.connect(server)
    return topology.as_data()
'''

VERSIONS_SORTED = '''
def choose_version(requested, supported):
    return requested if requested in set(supported) else sorted(supported)[-1]


def client_accepts(chosen, client_supported):
    return any(v == chosen for v in client_supported)


def handshake(client_supported, server_supported):
    offer = sorted(client_supported, reverse=True)[0]
    answer = offer if offer in server_supported else sorted(server_supported)[-1]
    return answer if answer in client_supported else None
'''

VERSIONS_OLDEST_COUNTER = '''
def choose_version(requested, supported):
    if requested not in supported:
        return min(supported)          # any supported version is a valid counter-offer
    return requested


def client_accepts(chosen, client_supported):
    return chosen in frozenset(client_supported)


def handshake(client_supported, server_supported):
    chosen = choose_version(max(client_supported), server_supported)
    if not client_accepts(chosen, client_supported):
        return None
    return chosen
'''

ERA_FULL_MEMBERS = '''
MODERN = (-32020, -32021, -32022)


def _is_discover_result(result):
    return (isinstance(result, dict) and isinstance(result.get("supportedVersions"), list)
            and "capabilities" in result)


def detect_era(reply):
    if not isinstance(reply, dict):
        return "legacy"
    if _is_discover_result(reply.get("result")):
        return "modern"
    error = reply.get("error")
    code = error.get("code") if isinstance(error, dict) else None
    return "modern" if code in MODERN else "legacy"


def detect_era_http(status, body):
    if status == 200 and body is not None and _is_discover_result(body.get("result")):
        return "modern"
    if status in (200, 400) and body is not None and isinstance(body.get("error"), dict):
        return "modern" if body["error"].get("code") in MODERN else "legacy"
    return "legacy"
'''

ERA_MATCH = '''
def detect_era(reply):
    match reply:
        case {"result": {"supportedVersions": _}}:
            return "modern"
        case {"error": {"code": -32020 | -32021 | -32022}}:
            return "modern"
        case _:
            return "legacy"


def detect_era_http(status, body):
    match status:
        case 200 | 400 if body is not None:
            return detect_era(body)
        case _:
            return "legacy"
'''

META_DEEPCOPY = '''
import copy

PV = "io.modelcontextprotocol/protocolVersion"
CC = "io.modelcontextprotocol/clientCapabilities"
CI = "io.modelcontextprotocol/clientInfo"


def build_request(request_id, method, params, version, capabilities, client_info):
    out = copy.deepcopy(params)
    out.setdefault("_meta", {})
    out["_meta"][PV], out["_meta"][CC], out["_meta"][CI] = version, capabilities, client_info
    return {"params": out, "method": method, "id": request_id, "jsonrpc": "2.0"}


def choose_retry_version(error, client_supported):
    if error.get("code") != -32022:
        return None
    theirs = set((error.get("data") or {}).get("supported") or [])
    shared = sorted(set(client_supported) & theirs)
    return shared[-1] if shared else None


def call_with_retry(send, new_id, method, params, client_supported, capabilities, client_info):
    version = sorted(client_supported)[-1]
    for attempt in range(2):
        response = send(build_request(new_id(), method, params, version, capabilities, client_info))
        error = response.get("error") or {}
        if error.get("code") != -32022:
            return response
        version = choose_retry_version(error, client_supported)
        if version is None:
            return None
    return None
'''

MRTR_RECURSIVE = '''
def _ask(send, new_id, method, params):
    return send({"method": method, "params": params, "id": new_id(), "jsonrpc": "2.0"})


def call_with_input(send, new_id, method, params, handlers, _response=None):
    response = _response or _ask(send, new_id, method, params)
    result = response.get("result")
    if not isinstance(result, dict) or result.get("resultType") != "input_required":
        return response
    answers = {}
    for key in sorted(result.get("inputRequests") or {}, reverse=True):
        request = result["inputRequests"][key]
        answers[key] = handlers[request["method"]](request.get("params", {}))
    retry = {**params}
    if answers:
        retry["inputResponses"] = answers
    if "requestState" in result:
        retry["requestState"] = result["requestState"]
    return call_with_input(send, new_id, method, params, handlers, _ask(send, new_id, method, retry))
'''

SEAL_PIPES = '''
import hashlib
import hmac
import json


def _digest(arguments):
    return hashlib.blake2b(json.dumps(arguments, sort_keys=True).encode(), digest_size=32).hexdigest()


def _tag(key, body):
    return hmac.new(key, body.encode(), hashlib.sha512).hexdigest()


def seal_state(key, state, caller, arguments, now, ttl):
    body = json.dumps([state, caller, _digest(arguments), repr(float(now + ttl))]).encode().hex()
    return body + "|" + _tag(key, body)


def open_state(key, token, caller, arguments, now):
    if not isinstance(token, str) or token.count("|") != 1:
        raise ValueError("not a token")
    body, tag = token.split("|")
    if not hmac.compare_digest(_tag(key, body), tag):
        raise ValueError("bad tag")
    state, who, digest, expires = json.loads(bytes.fromhex(body))
    if who != caller or digest != _digest(arguments) or not now < float(expires):
        raise ValueError("not for this call")
    return state
'''

SEAL_ENVELOPE = '''
import base64
import binascii
import hashlib
import hmac
import json


def _canon(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def seal_state(key, state, caller, arguments, now, ttl):
    claims = {"s": state, "sub": caller, "req": hashlib.sha256(_canon(arguments).encode()).hexdigest(),
              "exp": now + ttl}
    mac = hmac.new(key, _canon(claims).encode(), hashlib.sha256).hexdigest()
    return base64.b64encode(_canon({"claims": claims, "mac": mac}).encode()).decode()


def open_state(key, token, caller, arguments, now):
    try:
        envelope = json.loads(base64.b64decode(token, validate=True))
        claims, mac = envelope["claims"], envelope["mac"]
        expected = hmac.new(key, _canon(claims).encode(), hashlib.sha256).hexdigest()
    except (ValueError, KeyError, TypeError, binascii.Error) as exc:
        raise ValueError("malformed") from exc
    if not isinstance(mac, str) or not hmac.compare_digest(expected, mac):
        raise ValueError("forged")
    if claims["sub"] != caller:
        raise ValueError("other caller")
    if claims["req"] != hashlib.sha256(_canon(arguments).encode()).hexdigest():
        raise ValueError("other arguments")
    if now >= claims["exp"]:
        raise ValueError("expired")
    return claims["s"]
'''

# (exercise, name, edits of the reference or a whole file)
ALTERNATIVES: list[tuple[str, str, Any]] = [
    ("ex01_topology", "comprehension, reversed order, own ids and extra keys", TOPOLOGY_COMPREHENSION),
    ("ex01_topology", "a builder class with digest ids", TOPOLOGY_CLASS),
    ("ex02_error_codes", "-32602 for a missing argument in every revision",
     [('return -32602 if server["revision"] == "2025-06-18" else None', "return -32602")]),
    ("ex02_error_codes", "the id checked before the notification test, by type name",
     [('    if "id" not in msg:\n        return None  # a notification is never answered\n'
       '    if not _valid_id(msg["id"]):\n        return -32600\n',
       '    if "id" in msg and type(msg["id"]).__name__ not in ("int", "str"):\n        return -32600\n'
       '    if "id" not in msg:\n        return None\n')]),
    ("ex02_next_message", "string ids and results with _meta",
     [("new_id = 1\n    while _key(new_id) in used:\n        new_id += 1",
       'new_id = f"call-{len(used) + 1}"\n    while _key(new_id) in used:\n        new_id += "x"'),
      ('return {"jsonrpc": "2.0", "id": request_id, "result": result}',
       'return {"result": {**result, "_meta": {}}, "id": request_id, "jsonrpc": "2.0"}')]),
    ("ex02_next_message", "the largest integer id plus one, other error text",
     [("new_id = 1\n    while _key(new_id) in used:\n        new_id += 1",
       "numbers = [json.loads(k) for k in used if isinstance(json.loads(k), int)]\n"
       "    new_id = max(numbers, default=0) + 1\n    while _key(new_id) in used:\n        new_id += 1"),
      ('f"Method not found: {method}"', '"no such method"')]),
    ("ex03_era_detection", "every required member of a DiscoverResult checked", ERA_FULL_MEMBERS),
    ("ex03_era_detection", "structural pattern matching", ERA_MATCH),
    ("ex03_modern_meta", "deep copy, sets, a loop of two attempts", META_DEEPCOPY),
    ("ex03_modern_meta", "_meta built by unpacking, caller keys first",
     [('meta = dict(params.get("_meta", {}))\n    meta.update({PV: version, CC: capabilities, CI: client_info})',
       'meta = {**params.get("_meta", {}), PV: version, CC: capabilities, CI: client_info}')]),
    ("ex03_version_negotiation", "sorting instead of max, one-go handshake", VERSIONS_SORTED),
    ("ex03_version_negotiation", "the oldest supported version as counter-offer", VERSIONS_OLDEST_COUNTER),
    ("ex04_mrtr_loop", "recursive, handlers in reverse key order", MRTR_RECURSIVE),
    ("ex04_mrtr_loop", "params copied by unpacking, an empty inputResponses allowed",
     [("retry_params = dict(params)", "retry_params = {**params}"),
      ("        if requests:\n            retry_params", "        if True:\n            retry_params")]),
    ("ex04_seal_state", "hex body, pipe-separated, HMAC-SHA512, blake2b digest", SEAL_PIPES),
    ("ex04_seal_state", "a base64 JSON envelope with the MAC inside", SEAL_ENVELOPE),
]


@pytest.mark.parametrize(("exercise_id", "name", "source"), ALTERNATIVES, ids=[f"{a[0]}:{a[1]}" for a in ALTERNATIVES])
def test_a_correct_alternative_passes(tmp_path: Path, exercise_id: str, name: str, source: Any) -> None:
    text = source if isinstance(source, str) else _edit(reference_path(exercise_id).read_text(encoding="utf-8"),
                                                         *source)
    path = tmp_path / f"{exercise_id}_alternative.py"
    path.write_text(text, encoding="utf-8")
    for result in grade_seeds(get_exercise(exercise_id), path, path.name, ALTERNATIVE_SEEDS):
        assert result.passed, f"{name}:\n{result}"


def test_every_exercise_has_two_alternatives() -> None:
    for exercise_id in CHAPTERS_01_04:
        assert sum(a[0] == exercise_id for a in ALTERNATIVES) >= 2, exercise_id


# --- new plausible wrong answers ------------------------------------------------------------------------

ERA_HTTP_STATUS_RANGE = '''
def detect_era(reply):
    if reply is None:
        return "legacy"
    result = reply.get("result")
    if isinstance(result, dict) and "supportedVersions" in result:
        return "modern"
    error = reply.get("error")
    return "modern" if isinstance(error, dict) and error.get("code") in (-32020, -32021, -32022) else "legacy"


def detect_era_http(status, body):
    # any 2xx/4xx with a modern-looking body
    return detect_era(body) if 200 <= status < 500 and body is not None else "legacy"
'''

ERA_CODE_RANGE = '''
def detect_era(reply):
    if reply is None:
        return "legacy"
    result = reply.get("result")
    if isinstance(result, dict) and "supportedVersions" in result:
        return "modern"
    error = reply.get("error")
    # "the modern codes are server errors": the whole -32000…-32099 range catches legacy ones too
    return "modern" if isinstance(error, dict) and -32099 <= error.get("code", 0) <= -32000 else "legacy"


def detect_era_http(status, body):
    return detect_era(body) if status in (200, 400) and body is not None else "legacy"
'''

SEAL_NO_EXPIRY_IN_MAC = '''
import base64, hashlib, hmac, json


def _digest(arguments):
    return hashlib.sha256(json.dumps(arguments, sort_keys=True).encode()).hexdigest()


def seal_state(key, state, caller, arguments, now, ttl):
    body = base64.urlsafe_b64encode(json.dumps({"state": state, "caller": caller, "args": _digest(arguments)}).encode()).decode()
    tag = hmac.new(key, body.encode(), hashlib.sha256).hexdigest()
    return f"{body}|{now + ttl!r}|{tag}"        # the expiry sits outside what the MAC covers


def open_state(key, token, caller, arguments, now):
    try:
        body, expires, tag = token.split("|")
        if not hmac.compare_digest(hmac.new(key, body.encode(), hashlib.sha256).hexdigest(), tag):
            raise ValueError("forged")
        data = json.loads(base64.urlsafe_b64decode(body))
        expires = float(expires)
    except (ValueError, TypeError) as exc:
        raise ValueError("bad token") from exc
    if data["caller"] != caller or data["args"] != _digest(arguments) or now >= expires:
        raise ValueError("rejected")
    return data["state"]
'''

# (exercise, name, edits-or-source, the check that must fail)
NEW_WRONG: list[tuple[str, str, Any, str]] = [
    # ex01: the command kept as data, one id per client, the clients as a list
    ("ex01_topology", "the command joined into one string",
     [('client["command"] = list(server["command"])', 'client["command"] = " ".join(server["command"])')],
     "Local servers are reached over stdio"),
    ("ex01_topology", "the URL's query left out",
     [('client["url"] = server["url"]', 'client["url"] = server["url"].split("?")[0]')],
     "Every arrangement of up to four servers: the simulator's topology"),
    ("ex01_topology", "no server gets a placeholder client",
     [("    clients = []\n", '    clients = [] if servers else [{"id": "client-0", "server": None}]\n')],
     "Every arrangement of up to four servers: the simulator's topology"),
    ("ex01_topology", "ids from the position, capped at two",
     [('f"client-{number}"', 'f"client-{min(number, 2)}"')], "One client per server, owned by the host"),
    ("ex01_topology", "the clients keyed by server name",
     [('return {"host": host, "clients": clients}', 'return {"host": host, "clients": {c["server"]: c for c in clients}}')],
     "One client per server, owned by the host"),
    # ex02_next_message: every member of the answer, every id, the error's id
    ("ex02_next_message", "initialize answered without serverInfo",
     [('"capabilities": world["server_capabilities"],\n                                           "serverInfo": world["server_info"]}',
       '"capabilities": world["server_capabilities"]}')],
     "Server: answer initialize"),
    ("ex02_next_message", "the client's capabilities echoed as the server's",
     [('"capabilities": world["server_capabilities"],', '"capabilities": request["params"].get("capabilities", {}),')],
     "Server: answer initialize"),
    ("ex02_next_message", "ping answered like tools/list",
     [('        if method == "ping":\n            return _result(request["id"], {})',
       '        if method == "ping":\n            return _result(request["id"], {"tools": world["tools"]})')],
     "Server: answer the pending request with its id"),
    ("ex02_next_message", "the error response without the request's id",
     [('return {"jsonrpc": "2.0", "id": request["id"],\n                "error"', 'return {"jsonrpc": "2.0",\n                "error"')],
     "Server: an unknown method gets -32601"),
    ("ex02_next_message", "the new id counted from the number of requests",
     [("new_id = 1\n    while _key(new_id) in used:\n        new_id += 1", "new_id = len(used) + 1")],
     "Client: a new request gets a fresh id"),
    ("ex02_next_message", "one more than the last integer id",
     [("new_id = 1\n    while _key(new_id) in used:\n        new_id += 1",
       "ints = [m[\"message\"][\"id\"] for m in transcript if m[\"from\"] == \"client\" and "
       "isinstance(m[\"message\"].get(\"id\"), int)]\n    new_id = ints[-1] + 1 if ints else 1")],
     "Any ids used before: the new id is one the simulator's server takes as new"),
    # ex02_error_codes: a declared capability, the era of a call, a boundary of the id types
    ("ex02_error_codes", "declared capabilities never read",
     [("caps = meta[CC]", "caps = {}")], "No error response when none is due"),
    ("ex02_error_codes", "a needed capability read from the server instead of the request",
     [('if modern and tool["needs"] and tool["needs"] not in caps:',
       'if modern and tool["needs"] and tool["needs"] not in server.get("capabilities", {}):')],
     "No error response when none is due"),
    ("ex02_error_codes", "an empty capability object read as not declared",
     [('if modern and tool["needs"] and tool["needs"] not in caps:',
       'if modern and tool["needs"] and not caps.get(tool["needs"]):')],
     "No error response when none is due"),
    ("ex02_error_codes", "an empty string id refused",
     [("return isinstance(value, str) or", 'return (isinstance(value, str) and value != "") or')],
     "Every envelope: the error code of the simulator's decoder"),
    ("ex02_error_codes", "params null read as no params",
     [('if "params" in msg and not isinstance(msg["params"], dict):',
       'if msg.get("params") is not None and not isinstance(msg["params"], dict):')],
     "Every envelope: the error code of the simulator's decoder"),
    ("ex02_error_codes", "jsonrpc compared as a number",
     [('msg.get("jsonrpc") != "2.0"', 'str(msg.get("jsonrpc")) != "2.0"')],
     "Every envelope: the error code of the simulator's decoder"),
    # ex03_era_detection: every status, every neighbouring code
    ("ex03_era_detection", "any 2xx-4xx status with a modern body", ERA_HTTP_STATUS_RANGE,
     "HTTP: read the status and the body together"),
    ("ex03_era_detection", "a range of codes instead of the three", ERA_CODE_RANGE,
     "Everything else — other errors, odd results, timeouts — means legacy"),
    ("ex03_era_detection", "a bare 400 read as modern",
     [("if status in (200, 400) and body is not None:\n        return detect_era(body)",
       'if status == 400:\n        return "modern" if body is None else detect_era(body)\n'
       "    if status == 200 and body is not None:\n        return detect_era(body)")],
     "HTTP: read the status and the body together"),
    ("ex03_era_detection", "-32022 needs its data to count",
     [('if isinstance(error, dict) and error.get("code") in MODERN_ONLY_CODES:',
       'if isinstance(error, dict) and error.get("code") in MODERN_ONLY_CODES and "data" in error:')],
     "Every reply shape is classified like the simulator's"),
    # ex03_modern_meta: stale per-request keys, an error that is not -32022
    ("ex03_modern_meta", "the caller's stale protocolVersion wins",
     [('meta = dict(params.get("_meta", {}))\n    meta.update({PV: version, CC: capabilities, CI: client_info})',
       'meta = {PV: version, CC: capabilities, CI: client_info, **params.get("_meta", {})}')],
     "Any params and _meta: the request is the simulator's"),
    ("ex03_modern_meta", "the oldest shared version when the lists have three in common",
     [("return max(common) if common else None", "return (min(common) if len(common) > 2 else max(common)) "
                                                  "if common else None")],
     "Any two version lists: the retry version is the simulator's"),
    ("ex03_modern_meta", "-32602 with data.supported also retried",
     [("if error.get(\"code\") != UNSUPPORTED_PROTOCOL_VERSION:\n        return None\n    server_supported",
       "if error.get(\"code\") not in (UNSUPPORTED_PROTOCOL_VERSION, -32602):\n        return None\n    server_supported")],
     "Any two version lists: the retry version is the simulator's"),
    ("ex03_modern_meta", "an empty caller _meta dropped",
     [('return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**params, "_meta": meta}}',
       'return {"jsonrpc": "2.0", "id": request_id, "method": method, '
       '"params": {**{k: v for k, v in params.items() if v != {}}, "_meta": meta}}')],
     "Any params and _meta: the request is the simulator's"),
    # ex03_version_negotiation: every pair of sets
    ("ex03_version_negotiation", "the newest supported version not newer than the request",
     [("return max(supported)", "return max(v for v in supported if v <= requested)")],
     "Otherwise the server counter-offers a version it supports"),
    ("ex03_version_negotiation", "the handshake accepts when the server's latest is shared",
     [("return chosen if client_accepts(chosen, client_supported) else None",
       "return chosen if client_accepts(max(server_supported), client_supported) else None")],
     "Any two version sets: the handshake ends like the simulator's"),
    ("ex03_version_negotiation", "the handshake checks the answer against the server's list",
     [("return chosen if client_accepts(chosen, client_supported) else None",
       "return chosen if chosen in server_supported else None")],
     "Any two version sets: the handshake ends like the simulator's"),
    # ex04_mrtr_loop: rounds, state, params
    ("ex04_mrtr_loop", "requestState carried over from an earlier round",
     [("    while True:", "    last_state = None\n    while True:"),
      ('        if "requestState" in result:\n            retry_params["requestState"] = result["requestState"]',
       '        if "requestState" in result:\n            last_state = result["requestState"]\n'
       '        if last_state is not None:\n            retry_params["requestState"] = last_state')],
     "requestState is echoed exactly, never invented"),
    ("ex04_mrtr_loop", "the retry's params built from the last retry",
     [("retry_params = dict(params)  # original params, fresh each round",
       "retry_params = dict(params)\n        params = retry_params")],
     "Second and third rounds work like the first"),
    ("ex04_mrtr_loop", "an empty requestState taken for none",
     [('if "requestState" in result:\n            retry_params["requestState"]',
       'if result.get("requestState"):\n            retry_params["requestState"]')],
     "requestState is echoed exactly, never invented"),
    ("ex04_mrtr_loop", "the answers of every round so far sent again",
     [("    while True:", "    answered = {}\n    while True:"),
      ('            retry_params["inputResponses"] = {\n',
       '            answered.update({\n'),
      ("for key, request in requests.items()\n            }",
       "for key, request in requests.items()\n            })\n            retry_params[\"inputResponses\"] = dict(answered)")],
     "Second and third rounds work like the first"),
    ("ex04_mrtr_loop", "_meta dropped from the retry",
     [("retry_params = dict(params)", 'retry_params = {k: v for k, v in params.items() if k != "_meta"}')],
     "The retry keeps the original params"),
    # ex04_seal_state: every axis of the generated check
    ("ex04_seal_state", "the caller compared without case",
     [('if body["caller"] != caller:', 'if body["caller"].lower() != caller.lower():')],
     "Bound to the caller"),
    ("ex04_seal_state", "the caller compared as a prefix",
     [('if body["caller"] != caller:', 'if not caller.startswith(body["caller"]):')],
     "Any state, caller, arguments and time: accepted or refused like the simulator's"),
    ("ex04_seal_state", "argument values compared as text",
     [('canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)',
       "canonical = json.dumps({k: str(v) for k, v in arguments.items()}, sort_keys=True)")],
     "Bound to the arguments (key order does not matter)"),
    ("ex04_seal_state", "the presented arguments checked as a subset of the sealed ones",
     [('return hashlib.sha256(canonical.encode("utf-8")).hexdigest()', "return canonical"),
      ('    if body["args"] != _digest(arguments):',
       '    if any(json.loads(body["args"]).get(k) != v for k, v in arguments.items()):')],
     "Bound to the arguments (key order does not matter)"),
    ("ex04_seal_state", "the expiry outside the MAC", SEAL_NO_EXPIRY_IN_MAC, "Forged and tampered tokens are rejected"),
]


@pytest.mark.parametrize(("exercise_id", "name", "edits", "failing_check"), NEW_WRONG,
                         ids=[f"{w[0]}:{w[1]}" for w in NEW_WRONG])
def test_a_new_wrong_answer_is_rejected_on_20_seeds(tmp_path: Path, exercise_id: str, name: str, edits: Any,
                                                    failing_check: str) -> None:
    assert_wrong_answer_rejected(tmp_path, exercise_id, name, edits, failing_check)


def test_every_exercise_has_three_new_wrong_answers() -> None:
    for exercise_id in CHAPTERS_01_04:
        assert sum(w[0] == exercise_id for w in NEW_WRONG) >= 3, exercise_id


# --- one truth -----------------------------------------------------------------------------------------

GENERATED = {
    "ex02_next_message": ["Any ids used before: the new id is one the simulator's server takes as new"],
    "ex02_error_codes": ["Every envelope: the error code of the simulator's decoder"],
    "ex04_mrtr_loop": ["Any script of rounds: every request is the simulator client's"],
    "ex01_topology": ["Every arrangement of up to four servers: the simulator's topology"],
    "ex03_era_detection": ["Every reply shape is classified like the simulator's",
                           "Every status and body are classified like the simulator's"],
    "ex03_version_negotiation": ["Any requested version and supported set: the server answers like the simulator's",
                                 "Any two version sets: the handshake ends like the simulator's"],
    "ex03_modern_meta": ["Any params and _meta: the request is the simulator's",
                         "Any two version lists: the retry version is the simulator's"],
    "ex04_seal_state": ["Any state, caller, arguments and time: accepted or refused like the simulator's"],
}


@pytest.mark.parametrize("exercise_id", sorted(GENERATED))
def test_the_reference_agrees_with_the_simulator_on_the_generated_inputs(exercise_id: str) -> None:
    exercise = get_exercise(exercise_id)
    names = GENERATED[exercise_id]
    assert set(names) <= {c.name for c in exercise.checks}
    for result in grade_seeds(exercise, reference_path(exercise_id), None, SEEDS[:10], reference=True, only=names):
        for check in result.checks:
            if check.name in names:
                assert check.passed, f"the reference and the simulator disagree:\n{result}"
