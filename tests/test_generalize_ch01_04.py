"""Grading that generalizes, chapters 01–04 (issue #30).

* valid designs pass: for every exercise at least two correct answers written differently from the
  reference (another structure, another id or token format, another order) are accepted;
* new plausible wrong answers — written from each README, for the mistake classes the issue names
  (an axis that never varied, a boundary never probed, only one input per rule, a mistake a seed's
  draw used to hide) — are rejected on 20 seeds by the check that names the right rule, and that
  failure names the rule by its id; :data:`MISTAKE_CLASSES` sorts them, three or more per class
  (``tests/wrong_classes.py``);
* one truth: the reference agrees with the simulator (the oracle) on the generated inputs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import wrong_classes
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

EVERY_ARRANGEMENT = "Every arrangement of up to four servers: the simulator's topology"
EVERY_ENVELOPE = "Every envelope: the error code of the simulator's decoder"
NOT_A_REQUEST = "JSON that is not a request → -32600"
NEGOTIATION_ERRORS = "2026-07-28 negotiation errors: -32022 and -32021"
EVERY_REPLY = "Every reply shape is classified like the simulator's"
EVERY_STATUS = "Every status and body are classified like the simulator's"
ANY_PARAMS = "Any params and _meta: the request is the simulator's"
ANY_VERSION_LISTS = "Any two version lists: the retry version is the simulator's"
ANY_REQUESTED = "Any requested version and supported set: the server answers like the simulator's"
ANY_VERSION_SETS = "Any two version sets: the handshake ends like the simulator's"
ANY_TOKEN = "Any state, caller, arguments and time: accepted or refused like the simulator's"
BOUND_ARGS = "Bound to the arguments (key order does not matter)"
EXPIRES = "Expires after ttl seconds"
FORGED = "Forged and tampered tokens are rejected"
# the rules those checks name (rulebook ids)
ONE_CLIENT, STDIO, HTTP = ("host.one-client-per-server", "host.stdio-is-a-local-subprocess",
                           "host.http-is-an-independent-endpoint")
ECHO_ID, UNUSED_ID = "jsonrpc.response-echoes-id", "jsonrpc.legacy.request-id-unused-in-session"
CODES, DECLARED_CAPS = "jsonrpc.standard-error-codes", "meta.server-uses-only-declared-capabilities"
FALLBACK, HTTP_400 = "versioning.fallback-not-keyed-to-one-code", "http.modern.era-from-400-body"
HTTP_OTHER = "versioning.sim-http-other-statuses-legacy"
RETRIES = "versioning.client-retries-with-common-version"
DISCONNECTS = "lifecycle.client-disconnects-on-unsupported"
ECHOES_VERSION = "lifecycle.server-echoes-supported-version"
OFFERS = "lifecycle.client-offers-a-version-it-supports"
ECHOES_STATE, FULFILS = "mrtr.client-echoes-state", "mrtr.client-fulfils-input-requests"
BOUND, INTEGRITY = "mrtr.state-bound", "mrtr.state-integrity"

# (exercise, name, edits-or-source, the check that must fail, the rule that check names)
NEW_WRONG: list[tuple[str, str, Any, str, str]] = [
    # ex01: the command kept as data, one id per client, the clients as a list
    ("ex01_topology", "the command joined into one string",
     [('client["command"] = list(server["command"])', 'client["command"] = " ".join(server["command"])')],
     "Local servers are reached over stdio", STDIO),
    ("ex01_topology", "the URL's query left out",
     [('client["url"] = server["url"]', 'client["url"] = server["url"].split("?")[0]')], EVERY_ARRANGEMENT, HTTP),
    ("ex01_topology", "no server gets a placeholder client",
     [("    clients = []\n", '    clients = [] if servers else [{"id": "client-0", "server": None}]\n')],
     EVERY_ARRANGEMENT, ONE_CLIENT),
    ("ex01_topology", "ids from the position, capped at two",
     [('f"client-{number}"', 'f"client-{min(number, 2)}"')], "One client per server, owned by the host", ONE_CLIENT),
    ("ex01_topology", "the clients keyed by server name",
     [('return {"host": host, "clients": clients}', 'return {"host": host, "clients": {c["server"]: c for c in clients}}')],
     "One client per server, owned by the host", ONE_CLIENT),
    ("ex01_topology", "http upgraded to https",
     [('client["url"] = server["url"]', 'client["url"] = server["url"].replace("http://", "https://")')],
     EVERY_ARRANGEMENT, HTTP),
    ("ex01_topology", "the URL rebuilt from scheme, host and path",
     [("from typing import Any\n", "from typing import Any\nfrom urllib.parse import urlsplit\n"),
      ('client["url"] = server["url"]',
       'u = urlsplit(server["url"])\n            client["url"] = f"{u.scheme}://{u.hostname}{u.path}"')],
     EVERY_ARRANGEMENT, HTTP),
    ("ex01_topology", "a one-word command kept as a string",
     [('client["command"] = list(server["command"])',
       'client["command"] = server["command"][0] if len(server["command"]) == 1 else list(server["command"])')],
     EVERY_ARRANGEMENT, STDIO),
    ("ex01_topology", "no server raises",
     [("    clients = []\n", '    if not servers:\n        raise ValueError("no servers")\n    clients = []\n')],
     EVERY_ARRANGEMENT, ONE_CLIENT),
    ("ex01_topology", "no server gives clients None",
     [('return {"host": host, "clients": clients}', 'return {"host": host, "clients": clients or None}')],
     EVERY_ARRANGEMENT, ONE_CLIENT),
    ("ex01_topology", "remote told by an https URL",
     [('if server["runs"] == "local":', 'if not server.get("url", "").startswith("https://"):'),
      ('client["command"] = list(server["command"])', 'client["command"] = list(server.get("command", []))')],
     EVERY_ARRANGEMENT, HTTP),
    ("ex01_topology", "local told by the program name",
     [('if server["runs"] == "local":', 'if server.get("command", [""])[0] in ("python", "npx", "uvx", "node"):'),
      ('client["url"] = server["url"]', 'client["url"] = server.get("url")')], EVERY_ARRANGEMENT, STDIO),
    ("ex01_topology", "every client stdio once any server is local",
     [("    for number, server in enumerate(servers, start=1):",
       '    any_local = any(s["runs"] == "local" for s in servers)\n'
       "    for number, server in enumerate(servers, start=1):"),
      ('client["transport"] = "streamable-http"', 'client["transport"] = "stdio" if any_local else "streamable-http"')],
     "Remote servers are reached over Streamable HTTP", HTTP),
    ("ex01_topology", "npx's -y dropped",
     [('client["command"] = list(server["command"])', 'client["command"] = [c for c in server["command"] if c != "-y"]')],
     EVERY_ARRANGEMENT, STDIO),
    ("ex01_topology", "long options dropped from the command",
     [('client["command"] = list(server["command"])',
       'client["command"] = [c for c in server["command"] if not c.startswith("--")]')], EVERY_ARRANGEMENT, STDIO),
    ("ex01_topology", "numbers in the command read as integers",
     [('client["command"] = list(server["command"])',
       'client["command"] = [int(c) if c.isdigit() else c for c in server["command"]]')], EVERY_ARRANGEMENT, STDIO),
    # ex02_next_message: every member of the answer, every id, the error's id
    ("ex02_next_message", "initialize answered without serverInfo",
     [('"capabilities": world["server_capabilities"],\n                                           "serverInfo": world["server_info"]}',
       '"capabilities": world["server_capabilities"]}')],
     "Server: answer initialize", "lifecycle.server-answers-capabilities"),
    ("ex02_next_message", "the client's capabilities echoed as the server's",
     [('"capabilities": world["server_capabilities"],', '"capabilities": request["params"].get("capabilities", {}),')],
     "Server: answer initialize", "lifecycle.server-answers-capabilities"),
    ("ex02_next_message", "ping answered like tools/list",
     [('        if method == "ping":\n            return _result(request["id"], {})',
       '        if method == "ping":\n            return _result(request["id"], {"tools": world["tools"]})')],
     "Server: answer the pending request with its id", ECHO_ID),
    ("ex02_next_message", "the error response without the request's id",
     [('return {"jsonrpc": "2.0", "id": request["id"],\n                "error"', 'return {"jsonrpc": "2.0",\n                "error"')],
     "Server: an unknown method gets -32601", ECHO_ID),
    ("ex02_next_message", "the new id counted from the number of requests",
     [("new_id = 1\n    while _key(new_id) in used:\n        new_id += 1", "new_id = len(used) + 1")],
     "Client: a new request gets a fresh id", UNUSED_ID),
    ("ex02_next_message", "one more than the last integer id",
     [("new_id = 1\n    while _key(new_id) in used:\n        new_id += 1",
       "ints = [m[\"message\"][\"id\"] for m in transcript if m[\"from\"] == \"client\" and "
       "isinstance(m[\"message\"].get(\"id\"), int)]\n    new_id = ints[-1] + 1 if ints else 1")],
     "Any ids used before: the new id is one the simulator's server takes as new", UNUSED_ID),
    ("ex02_next_message", "an error response not counted as an answer",
     [('if m["from"] != requester and "method" not in m["message"] and "id" in m["message"]}',
       'if m["from"] != requester and "result" in m["message"]}')],
     "Server: answer the pending request with its id", ECHO_ID),
    ("ex02_next_message", "the protocolVersion from the latest revision",
     [('"protocolVersion": request["params"]["protocolVersion"]', '"protocolVersion": "2025-11-25"')],
     "Server: answer initialize", "lifecycle.server-echoes-supported-version"),
    ("ex02_next_message", "a request with id 0 taken for a notification",
     [('if m["from"] == requester and "method" in msg and "id" in msg and _key(msg["id"]) not in answered:',
       'if m["from"] == requester and "method" in msg and msg.get("id") and _key(msg["id"]) not in answered:')],
     "Server: answer the pending request with its id", ECHO_ID),
    ("ex02_next_message", "the pending request found from the last message",
     [('        request = _pending(transcript, "client")',
       '        last = transcript[-1]\n'
       '        request = last["message"] if last["from"] == "client" and "id" in last["message"] else None')],
     "Server: answer the pending request with its id", ECHO_ID),
    ("ex02_next_message", "initialized sent only right after the response",
     [('    if "notifications/initialized" not in methods:',
       '    if "notifications/initialized" not in methods and "result" in transcript[-1]["message"]:')],
     "Client: send notifications/initialized", "jsonrpc.notification-not-answered"),
    ("ex02_next_message", "the server's ping answered only when it is the last message",
     [('    request = _pending(transcript, "server")\n    if request is not None:',
       '    request = _pending(transcript, "server")\n    if request is not None and transcript[-1]["message"] is request:')],
     "Client: answer the server's request", ECHO_ID),
    ("ex02_next_message", "an answered request told by any message with its id",
     [('    answered = {_key(m["message"]["id"]) for m in transcript\n'
       '                if m["from"] != requester and "method" not in m["message"] and "id" in m["message"]}',
       '    answered = {_key(m["message"]["id"]) for m in transcript\n'
       '                if m["from"] != requester and "id" in m["message"]}')],
     "Client: answer the server's request", ECHO_ID),
    ("ex02_next_message", "tools/list answered with the tool to call only",
     [('return _result(request["id"], {"tools": world["tools"]})',
       'return _result(request["id"], {"tools": [t for t in world["tools"] if t["name"] == world["call"]["name"]]})')],
     "Server: answer the pending request with its id", ECHO_ID),
    # ex02_error_codes: a declared capability, the era of a call, a boundary of the id types
    ("ex02_error_codes", "declared capabilities never read",
     [("caps = meta[CC]", "caps = {}")], "No error response when none is due", DECLARED_CAPS),
    ("ex02_error_codes", "a needed capability read from the server instead of the request",
     [('if modern and tool["needs"] and tool["needs"] not in caps:',
       'if modern and tool["needs"] and tool["needs"] not in server.get("capabilities", {}):')],
     "No error response when none is due", DECLARED_CAPS),
    ("ex02_error_codes", "an empty capability object read as not declared",
     [('if modern and tool["needs"] and tool["needs"] not in caps:',
       'if modern and tool["needs"] and not caps.get(tool["needs"]):')],
     "No error response when none is due", DECLARED_CAPS),
    ("ex02_error_codes", "an empty string id refused",
     [("return isinstance(value, str) or", 'return (isinstance(value, str) and value != "") or')],
     "No error response when none is due", "jsonrpc.request-id-string-or-integer"),
    ("ex02_error_codes", "params null read as no params",
     [('if "params" in msg and not isinstance(msg["params"], dict):',
       'if msg.get("params") is not None and not isinstance(msg["params"], dict):')],
     NOT_A_REQUEST, CODES),
    ("ex02_error_codes", "jsonrpc compared as a number",
     [('msg.get("jsonrpc") != "2.0"', 'str(msg.get("jsonrpc")) != "2.0"')], NOT_A_REQUEST, CODES),
    ("ex02_error_codes", "a crash counted only for list methods",
     [('if method in server["broken_methods"]:', 'if method in server["broken_methods"] and method.endswith("/list"):')],
     "A crash in the server → -32603", CODES),
    ("ex02_error_codes", "the version checked against the first supported one",
     [('if meta[PV] not in server["supported_versions"]:', 'if meta[PV] != server["supported_versions"][0]:')],
     "No error response when none is due", "versioning.unsupported-version-error"),
    ("ex02_error_codes", "id null read as a notification",
     [('    if "id" not in msg:\n        return None', '    if msg.get("id") is None:\n        return None')],
     "JSON that is not a request → -32600", "jsonrpc.request-id-not-null"),
    ("ex02_error_codes", "a blank line skipped",
     [("    try:\n        msg = json.loads(line)", "    if not line.strip():\n        return None\n    try:\n"
                                                  "        msg = json.loads(line)")],
     "Unreadable text → -32700", CODES),
    ("ex02_error_codes", "a negative id refused",
     [("(isinstance(value, int) and not isinstance(value, bool))",
       "(isinstance(value, int) and not isinstance(value, bool) and value >= 0)")],
     "No error response when none is due", "jsonrpc.request-id-string-or-integer"),
    ("ex02_error_codes", "an empty method name allowed",
     [("if not isinstance(method, str) or not method:", "if not isinstance(method, str):")], NOT_A_REQUEST, CODES),
    ("ex02_error_codes", "only the first required argument looked for",
     [('any(arg not in params.get("arguments", {}) for arg in tool["required"])',
       'tool["required"] and tool["required"][0] not in params.get("arguments", {})')],
     "A missing tool argument: -32602, or from 2025-11-25 an isError result", "tools.missing-argument-either-answer"),
    ("ex02_error_codes", "params refused only when an array",
     [('if "params" in msg and not isinstance(msg["params"], dict):', 'if isinstance(msg.get("params"), list):')],
     NOT_A_REQUEST, CODES),
    ("ex02_error_codes", "the id checked only for null",
     [('if not _valid_id(msg["id"]):', 'if msg["id"] is None:')], "JSON that is not a request → -32600",
     "jsonrpc.request-id-string-or-integer"),
    ("ex02_error_codes", "a notification let through before its envelope is checked",
     [("    # 2. Shape", '    if isinstance(msg, dict) and "id" not in msg:\n        return None\n    # 2. Shape')],
     EVERY_ENVELOPE, CODES),
    ("ex02_error_codes", "a missing _meta field told by the protocolVersion alone",
     [("if not isinstance(meta, dict) or PV not in meta or CC not in meta:", "if not isinstance(meta, dict) or PV not in meta:"),
      ("caps = meta[CC]", "caps = meta.get(CC, {})")],
     "Bad parameters → -32602", "meta.missing-field-invalid-params"),
    ("ex02_error_codes", "a missing _meta field told by the capabilities alone",
     [("if not isinstance(meta, dict) or PV not in meta or CC not in meta:", "if not isinstance(meta, dict) or CC not in meta:"),
      ("if meta[PV] not in", "if meta.get(PV) not in")],
     "Bad parameters → -32602", "meta.missing-field-invalid-params"),
    ("ex02_error_codes", "-32021 only for elicitation",
     [('if modern and tool["needs"] and tool["needs"] not in caps:',
       'if modern and tool["needs"] == "elicitation" and "elicitation" not in caps:')],
     NEGOTIATION_ERRORS, DECLARED_CAPS),
    ("ex02_error_codes", "-32021 only when no capability is declared at all",
     [('if modern and tool["needs"] and tool["needs"] not in caps:', 'if modern and tool["needs"] and not caps:')],
     NEGOTIATION_ERRORS, DECLARED_CAPS),
    # ex03_era_detection: every status, every neighbouring code
    ("ex03_era_detection", "any 2xx-4xx status with a modern body", ERA_HTTP_STATUS_RANGE,
     "HTTP: read the status and the body together", HTTP_OTHER),
    ("ex03_era_detection", "a range of codes instead of the three", ERA_CODE_RANGE,
     "Everything else — other errors, odd results, timeouts — means legacy", FALLBACK),
    ("ex03_era_detection", "a bare 400 read as modern",
     [("if status in (200, 400) and body is not None:\n        return detect_era(body)",
       'if status == 400:\n        return "modern" if body is None else detect_era(body)\n'
       "    if status == 200 and body is not None:\n        return detect_era(body)")],
     "HTTP: read the status and the body together", HTTP_400),
    ("ex03_era_detection", "-32022 needs its data to count",
     [('if isinstance(error, dict) and error.get("code") in MODERN_ONLY_CODES:',
       'if isinstance(error, dict) and error.get("code") in MODERN_ONLY_CODES and "data" in error:')],
     EVERY_REPLY, "versioning.unsupported-version-error"),
    ("ex03_era_detection", "a blacklist of the statuses the README names",
     [("    if status in (200, 400) and body is not None:\n        return detect_era(body)\n    return \"legacy\"",
       "    if status in (404, 405, 500) or body is None:\n        return \"legacy\"\n    return detect_era(body)")],
     EVERY_STATUS, HTTP_OTHER),
    ("ex03_era_detection", "a DiscoverResult told by its capabilities",
     [('if isinstance(result, dict) and "supportedVersions" in result:',
       'if isinstance(result, dict) and "capabilities" in result:')], EVERY_REPLY, FALLBACK),
    ("ex03_era_detection", "the -3202x block read as modern",
     [('if isinstance(error, dict) and error.get("code") in MODERN_ONLY_CODES:',
       'if isinstance(error, dict) and str(error.get("code", "")).startswith("-3202"):')],
     "Everything else — other errors, odd results, timeouts — means legacy", FALLBACK),
    ("ex03_era_detection", "modern codes from -32019 to -32023",
     [('if isinstance(error, dict) and error.get("code") in MODERN_ONLY_CODES:',
       'if isinstance(error, dict) and -32023 <= error.get("code", 0) <= -32019:')],
     "Everything else — other errors, odd results, timeouts — means legacy", FALLBACK),
    ("ex03_era_detection", "modern only on -32022",
     [('error.get("code") in MODERN_ONLY_CODES', 'error.get("code") == -32022')],
     "A modern-only error means modern", "versioning.unsupported-version-error"),
    ("ex03_era_detection", "HTTP read from the status alone",
     [("    if status in (200, 400) and body is not None:\n        return detect_era(body)",
       '    if status in (200, 400):\n        return "modern"')],
     "HTTP: read the status and the body together", HTTP_400),
    ("ex03_era_detection", "HTTP read from the body alone",
     [("    if status in (200, 400) and body is not None:", "    if body is not None:")],
     "HTTP: read the status and the body together", HTTP_OTHER),
    ("ex03_era_detection", "a modern error needs its data",
     [('if isinstance(error, dict) and error.get("code") in MODERN_ONLY_CODES:',
       'if isinstance(error, dict) and error.get("code") in MODERN_ONLY_CODES and error.get("data"):')],
     EVERY_REPLY, "versioning.unsupported-version-error"),
    ("ex03_era_detection", "on 400 only -32022 counts",
     [("    if status in (200, 400) and body is not None:\n        return detect_era(body)",
       "    if status == 400 and body is not None:\n"
       "        return \"modern\" if (body.get(\"error\") or {}).get(\"code\") == -32022 else \"legacy\"\n"
       "    if status == 200 and body is not None:\n        return detect_era(body)")],
     EVERY_STATUS, HTTP_400),
    ("ex03_era_detection", "a DiscoverResult read as modern under any status",
     [("    if status in (200, 400) and body is not None:\n        return detect_era(body)",
       "    if body is not None and isinstance(body.get(\"result\"), dict) and \"supportedVersions\" in body[\"result\"]:\n"
       "        return \"modern\"\n    if status in (200, 400) and body is not None:\n        return detect_era(body)")],
     EVERY_STATUS, HTTP_OTHER),
    ("ex03_era_detection", "a ttlMs of 0 read as no DiscoverResult",
     [('if isinstance(result, dict) and "supportedVersions" in result:',
       'if isinstance(result, dict) and "supportedVersions" in result and result.get("ttlMs"):')],
     EVERY_REPLY, "versioning.stdio-dual-era-probe"),
    # ex03_modern_meta: stale per-request keys, an error that is not -32022
    ("ex03_modern_meta", "the caller's stale protocolVersion wins",
     [('meta = dict(params.get("_meta", {}))\n    meta.update({PV: version, CC: capabilities, CI: client_info})',
       'meta = {PV: version, CC: capabilities, CI: client_info, **params.get("_meta", {})}')],
     ANY_PARAMS, "meta.required-fields"),
    ("ex03_modern_meta", "the oldest shared version when the lists have three in common",
     [("return max(common) if common else None", "return (min(common) if len(common) > 2 else max(common)) "
                                                  "if common else None")],
     ANY_VERSION_LISTS, RETRIES),
    ("ex03_modern_meta", "-32602 with data.supported also retried",
     [("if error.get(\"code\") != UNSUPPORTED_PROTOCOL_VERSION:\n        return None\n    server_supported",
       "if error.get(\"code\") not in (UNSUPPORTED_PROTOCOL_VERSION, -32602):\n        return None\n    server_supported")],
     ANY_VERSION_LISTS, RETRIES),
    ("ex03_modern_meta", "an empty caller _meta dropped",
     [('return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**params, "_meta": meta}}',
       'return {"jsonrpc": "2.0", "id": request_id, "method": method, '
       '"params": {**{k: v for k, v in params.items() if v != {}}, "_meta": meta}}')],
     ANY_PARAMS, "meta.other-keys-kept"),
    ("ex03_modern_meta", "the server's newest version for the retry",
     [("return max(common) if common else None", "return max(server_supported) if common else None")],
     "Retry version: newest one both sides speak, else None", RETRIES),
    ("ex03_modern_meta", "the newest shared version compared by year",
     [("return max(common) if common else None", "return max(common, key=lambda v: v[:4]) if common else None")],
     ANY_VERSION_LISTS, RETRIES),
    ("ex03_modern_meta", "no shared version when only one is shared",
     [("return max(common) if common else None", "return max(common) if len(common) > 1 else None")],
     "Retry version: newest one both sides speak, else None", RETRIES),
    ("ex03_modern_meta", "a missing data.supported read as a crash",
     [('server_supported = (error.get("data") or {}).get("supported", [])',
       'server_supported = error["data"]["supported"]')], ANY_VERSION_LISTS, RETRIES),
    ("ex03_modern_meta", "-32022 told by data.supported",
     [("    if error.get(\"code\") != UNSUPPORTED_PROTOCOL_VERSION:\n        return None\n    server_supported",
       "    if \"supported\" not in (error.get(\"data\") or {}):\n        return None\n    server_supported")],
     "Retry version: newest one both sides speak, else None", RETRIES),
    ("ex03_modern_meta", "stale capabilities and client info kept",
     [("meta.update({PV: version, CC: capabilities, CI: client_info})",
       "meta[PV] = version\n    meta.setdefault(CC, capabilities)\n    meta.setdefault(CI, client_info)")],
     ANY_PARAMS, "meta.required-fields"),
    ("ex03_modern_meta", "a retry after any error",
     [('    if not isinstance(error, dict) or error.get("code") != UNSUPPORTED_PROTOCOL_VERSION:\n        return response',
       '    if not isinstance(error, dict):\n        return response')],
     "No retry when none is needed or none is possible", RETRIES),
    ("ex03_modern_meta", "the first listed shared version taken as the newest",
     [("return max(common) if common else None", "return common[-1] if common else None")],
     ANY_VERSION_LISTS, RETRIES),
    ("ex03_modern_meta", "the first try with the first listed version",
     [("max(client_supported), capabilities, client_info))", "client_supported[0], capabilities, client_info))")],
     "No retry when none is needed or none is possible", RETRIES),
    ("ex03_modern_meta", "an empty capabilities object left out",
     [("meta.update({PV: version, CC: capabilities, CI: client_info})",
       "meta.update({PV: version, CI: client_info})\n    if capabilities:\n        meta[CC] = capabilities")],
     ANY_PARAMS, "meta.required-fields"),
    # ex03_version_negotiation: every pair of sets
    ("ex03_version_negotiation", "the newest supported version not newer than the request",
     [("return max(supported)", "return max(v for v in supported if v <= requested)")],
     "Otherwise the server counter-offers a version it supports", "lifecycle.server-counter-offers"),
    ("ex03_version_negotiation", "the handshake accepts when the server's latest is shared",
     [("return chosen if client_accepts(chosen, client_supported) else None",
       "return chosen if client_accepts(max(server_supported), client_supported) else None")],
     ANY_VERSION_SETS, OFFERS),
    ("ex03_version_negotiation", "the handshake checks the answer against the server's list",
     [("return chosen if client_accepts(chosen, client_supported) else None",
       "return chosen if chosen in server_supported else None")],
     ANY_VERSION_SETS, DISCONNECTS),
    ("ex03_version_negotiation", "the client accepts any version within its range",
     [("return chosen in client_supported", "return min(client_supported) <= chosen <= max(client_supported)")],
     ANY_VERSION_SETS, DISCONNECTS),
    ("ex03_version_negotiation", "a requested version no newer than the server's latest echoed",
     [("    if requested in supported:\n        return requested", "    if requested <= max(supported):\n        return requested")],
     "Otherwise the server counter-offers a version it supports", "lifecycle.server-counter-offers"),
    ("ex03_version_negotiation", "a requested version matched by its year",
     [("    if requested in supported:\n        return requested",
       "    if requested[:4] in {v[:4] for v in supported}:\n        return requested")],
     ANY_REQUESTED, "lifecycle.server-counter-offers"),
    ("ex03_version_negotiation", "the handshake ends on the server's answer",
     [("return chosen if client_accepts(chosen, client_supported) else None", "return chosen")],
     "The whole handshake: agree or disconnect", DISCONNECTS),
    ("ex03_version_negotiation", "the client accepts only its latest",
     [("return chosen in client_supported", "return chosen == max(client_supported)")],
     "The client accepts only versions it speaks", DISCONNECTS),
    ("ex03_version_negotiation", "the client accepts an older version only when it is its oldest",
     [("return chosen in client_supported", "return chosen in (max(client_supported), min(client_supported))")],
     ANY_VERSION_SETS, DISCONNECTS),
    ("ex03_version_negotiation", "the client offers its first listed version",
     [("offered = max(client_supported)", "offered = client_supported[0]")], ANY_VERSION_SETS, OFFERS),
    ("ex03_version_negotiation", "the client offers its last listed version",
     [("offered = max(client_supported)", "offered = client_supported[-1]")], ANY_VERSION_SETS, OFFERS),
    ("ex03_version_negotiation", "a supported version looked up by bisection",
     [("from __future__ import annotations\n", "from __future__ import annotations\n\nimport bisect\n"),
      ("    if requested in supported:\n        return requested",
       "    i = bisect.bisect_left(supported, requested)\n    if i < len(supported) and supported[i] == requested:\n"
       "        return requested")],
     ANY_REQUESTED, ECHOES_VERSION),
    # ex04_mrtr_loop: rounds, state, params
    ("ex04_mrtr_loop", "requestState carried over from an earlier round",
     [("    while True:", "    last_state = None\n    while True:"),
      ('        if "requestState" in result:\n            retry_params["requestState"] = result["requestState"]',
       '        if "requestState" in result:\n            last_state = result["requestState"]\n'
       '        if last_state is not None:\n            retry_params["requestState"] = last_state')],
     "requestState is echoed exactly, never invented", "mrtr.not-for-other-requests"),
    ("ex04_mrtr_loop", "the retry's params built from the last retry",
     [("retry_params = dict(params)  # original params, fresh each round",
       "retry_params = dict(params)\n        params = retry_params")],
     "Second and third rounds work like the first", "mrtr.not-for-other-requests"),
    ("ex04_mrtr_loop", "an empty requestState taken for none",
     [('if "requestState" in result:\n            retry_params["requestState"]',
       'if result.get("requestState"):\n            retry_params["requestState"]')],
     "requestState is echoed exactly, never invented", ECHOES_STATE),
    ("ex04_mrtr_loop", "the answers of every round so far sent again",
     [("    while True:", "    answered = {}\n    while True:"),
      ('            retry_params["inputResponses"] = {\n',
       '            answered.update({\n'),
      ("for key, request in requests.items()\n            }",
       "for key, request in requests.items()\n            })\n            retry_params[\"inputResponses\"] = dict(answered)")],
     "Second and third rounds work like the first", "mrtr.not-for-other-requests"),
    ("ex04_mrtr_loop", "_meta dropped from the retry",
     [("retry_params = dict(params)", 'retry_params = {k: v for k, v in params.items() if k != "_meta"}')],
     "The retry keeps the original params", "mrtr.not-for-other-requests"),
    ("ex04_mrtr_loop", "the retry always sent as tools/call",
     [('response = send({"jsonrpc": "2.0", "id": new_id(), "method": method, "params": retry_params})',
       'response = send({"jsonrpc": "2.0", "id": new_id(), "method": "tools/call", "params": retry_params})')],
     "The retry keeps the original params", "mrtr.retry-new-id"),
    ("ex04_mrtr_loop", "a round without inputRequests taken as the end",
     [('        requests = result.get("inputRequests") or {}\n',
       '        requests = result.get("inputRequests") or {}\n        if not requests:\n            return response\n')],
     "Second and third rounds work like the first", "mrtr.server-may-ask-again"),
    ("ex04_mrtr_loop", "no resultType read as input_required",
     [('result.get("resultType", "complete") != "input_required"', 'result.get("resultType") == "complete"')],
     "A complete result (or an error) ends the call at once", "jsonrpc.absent-result-type-is-complete"),
    ("ex04_mrtr_loop", "requestState null sent when there is none",
     [('        if "requestState" in result:\n            retry_params["requestState"] = result["requestState"]',
       '        retry_params["requestState"] = result.get("requestState")')],
     "requestState is echoed exactly, never invented", ECHOES_STATE),
    ("ex04_mrtr_loop", "roots/list called without params",
     [('handlers[request["method"]](request.get("params", {}))', 'handlers[request["method"]](request["params"])')],
     "Every inputRequest is fulfilled through its handler, once", FULFILS),
    ("ex04_mrtr_loop", "only the first inputRequest fulfilled",
     [("for key, request in requests.items()\n", "for key, request in list(requests.items())[:1]\n")],
     "Every inputRequest is fulfilled through its handler, once", FULFILS),
    ("ex04_mrtr_loop", "input_required told by inputRequests",
     [('if not isinstance(result, dict) or result.get("resultType", "complete") != "input_required":',
       'if not isinstance(result, dict) or "inputRequests" not in result:')],
     "Second and third rounds work like the first", "mrtr.server-may-ask-again"),
    ("ex04_mrtr_loop", "the state echoed only with inputResponses",
     [('        if "requestState" in result:\n            retry_params["requestState"]',
       '        if "requestState" in result and requests:\n            retry_params["requestState"]')],
     "Second and third rounds work like the first", ECHOES_STATE),
    ("ex04_mrtr_loop", "sampling answered by the elicitation handler",
     [('handlers[request["method"]](request.get("params", {}))',
       'handlers["elicitation/create" if request["method"] != "roots/list" else "roots/list"]'
       '(request.get("params", {}))')],
     "Every inputRequest is fulfilled through its handler, once", FULFILS),
    ("ex04_mrtr_loop", "resources/read retried with a name",
     [("retry_params = dict(params)  # original",
       'retry_params = dict(params) if method != "resources/read" else '
       '{"name": params.get("uri"), "_meta": params.get("_meta")}  # original')],
     "The retry keeps the original params", "mrtr.not-for-other-requests"),
    ("ex04_mrtr_loop", "the requestState stripped",
     [('retry_params["requestState"] = result["requestState"]  # echoed',
       'retry_params["requestState"] = result["requestState"].strip()  # echoed')],
     "requestState is echoed exactly, never invented", ECHOES_STATE),
    # ex04_seal_state: every axis of the generated check
    ("ex04_seal_state", "the caller compared without case",
     [('if body["caller"] != caller:', 'if body["caller"].lower() != caller.lower():')], "Bound to the caller", BOUND),
    ("ex04_seal_state", "the caller compared as a prefix",
     [('if body["caller"] != caller:', 'if not caller.startswith(body["caller"]):')], ANY_TOKEN, BOUND),
    ("ex04_seal_state", "argument values compared as text",
     [('canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)',
       "canonical = json.dumps({k: str(v) for k, v in arguments.items()}, sort_keys=True)")], BOUND_ARGS, BOUND),
    ("ex04_seal_state", "the presented arguments checked as a subset of the sealed ones",
     [('return hashlib.sha256(canonical.encode("utf-8")).hexdigest()', "return canonical"),
      ('    if body["args"] != _digest(arguments):',
       '    if any(json.loads(body["args"]).get(k) != v for k, v in arguments.items()):')], BOUND_ARGS, BOUND),
    ("ex04_seal_state", "the expiry outside the MAC", SEAL_NO_EXPIRY_IN_MAC, FORGED, INTEGRITY),
    ("ex04_seal_state", "the arguments digested by their values only",
     [('canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)',
       'canonical = json.dumps([arguments[k] for k in sorted(arguments)], separators=(",", ":"), ensure_ascii=False)')],
     BOUND_ARGS, BOUND),
    ("ex04_seal_state", "the arguments digested by their keys only",
     [('canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)',
       'canonical = ",".join(sorted(arguments))')], BOUND_ARGS, BOUND),
    ("ex04_seal_state", "a token accepted at its expiry",
     [('if now >= body["exp"]:', 'if now > body["exp"]:')], EXPIRES, BOUND),
    ("ex04_seal_state", "a minute of grace after the expiry",
     [('if now >= body["exp"]:', 'if now >= body["exp"] + 60:')], EXPIRES, BOUND),
    ("ex04_seal_state", "the expiry in whole seconds", [('"exp": now + ttl}', '"exp": int(now + ttl)}')], EXPIRES, BOUND),
    ("ex04_seal_state", "an empty state refused",
     [('    state: dict[str, Any] = body["state"]',
       '    state: dict[str, Any] = body["state"]\n    if not state:\n        raise ValueError("no state")')],
     "A fresh token opens to the same state", INTEGRITY),
    ("ex04_seal_state", "caller or arguments: one match is enough",
     [('    if body["caller"] != caller:\n        raise ValueError("requestState belongs to another caller")\n'
       '    if body["args"] != _digest(arguments):',
       '    if body["caller"] != caller and body["args"] != _digest(arguments):')], "Bound to the caller", BOUND),
    ("ex04_seal_state", "the caller outside the MAC",
     [('    body = {"state": state, "caller": caller, "args": _digest(arguments), "exp": now + ttl}\n'
       '    payload = _b64(json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))\n'
       '    return f"{payload}.{_b64(_mac(key, payload))}"',
       '    body = {"state": state, "args": _digest(arguments), "exp": now + ttl}\n'
       '    payload = _b64(json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))\n'
       '    return f"{payload}.{_b64(_mac(key, payload))}.{_b64(caller.encode())}"'),
      ('        payload, mac = token.split(".")', '        payload, mac, who = token.split(".")'),
      ('    if body["caller"] != caller:', '    if _unb64(who).decode() != caller:')], FORGED, INTEGRITY),
    ("ex04_seal_state", "the payload encoded as Latin-1",
     [('payload = _b64(json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))',
       'payload = _b64(json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("latin-1"))'),
      ('body = json.loads(_unb64(payload).decode("utf-8"))', 'body = json.loads(_unb64(payload).decode("latin-1"))')],
     "A fresh token opens to the same state", INTEGRITY),
    ("ex04_seal_state", "nested argument values left out of the digest",
     [('canonical = json.dumps(arguments, sort_keys=True',
       'canonical = json.dumps({k: v for k, v in arguments.items() if not isinstance(v, (dict, list))}, sort_keys=True')],
     BOUND_ARGS, BOUND),
    ("ex04_seal_state", "the ttl capped at five minutes",
     [('"exp": now + ttl}', '"exp": now + min(ttl, 300)}')], EXPIRES, BOUND),
]

MISTAKE_CLASSES: dict[str, dict[str, list[str] | str]] = {
    "ex01_topology": {
        "axes": ["the URL's query left out", "http upgraded to https", "the URL rebuilt from scheme, host and path",
                 "ids from the position, capped at two"],
        "boundaries": ["no server gets a placeholder client", "no server raises", "no server gives clients None",
                       "a one-word command kept as a string"],
        "one-input": ["remote told by an https URL", "local told by the program name",
                      "every client stdio once any server is local"],
        "seed": ["npx's -y dropped", "long options dropped from the command", "numbers in the command read as integers"],
    },
    "ex02_error_codes": {
        "axes": ["declared capabilities never read", "a needed capability read from the server instead of the request",
                 "a crash counted only for list methods", "the version checked against the first supported one"],
        "boundaries": ["an empty string id refused", "params null read as no params",
                       "an empty capability object read as not declared", "id null read as a notification",
                       "a blank line skipped", "a negative id refused", "an empty method name allowed"],
        "one-input": ["only the first required argument looked for", "params refused only when an array",
                      "the id checked only for null", "a notification let through before its envelope is checked"],
        "seed": ["a missing _meta field told by the protocolVersion alone",
                 "a missing _meta field told by the capabilities alone", "-32021 only for elicitation",
                 "-32021 only when no capability is declared at all"],
    },
    "ex02_next_message": {
        "axes": ["ping answered like tools/list", "the client's capabilities echoed as the server's",
                 "an error response not counted as an answer", "the protocolVersion from the latest revision"],
        "boundaries": ["a request with id 0 taken for a notification", "the new id counted from the number of requests",
                       "one more than the last integer id", "the error response without the request's id"],
        "one-input": ["the pending request found from the last message", "initialized sent only right after the response",
                      "the server's ping answered only when it is the last message",
                      "initialize answered without serverInfo"],
        "seed": ["a request with id 0 taken for a notification", "an answered request told by any message with its id",
                 "tools/list answered with the tool to call only"],
    },
    "ex03_era_detection": {
        "axes": ["any 2xx-4xx status with a modern body", "a range of codes instead of the three",
                 "a blacklist of the statuses the README names", "a DiscoverResult told by its capabilities"],
        "boundaries": ["a bare 400 read as modern", "the -3202x block read as modern", "modern codes from -32019 to -32023"],
        "one-input": ["modern only on -32022", "HTTP read from the status alone", "HTTP read from the body alone",
                      "-32022 needs its data to count", "a modern error needs its data"],
        "seed": ["on 400 only -32022 counts", "a DiscoverResult read as modern under any status",
                 "a ttlMs of 0 read as no DiscoverResult"],
    },
    "ex03_modern_meta": {
        "axes": ["the caller's stale protocolVersion wins", "-32602 with data.supported also retried",
                 "the server's newest version for the retry", "the newest shared version compared by year"],
        "boundaries": ["an empty caller _meta dropped", "no shared version when only one is shared",
                       "the oldest shared version when the lists have three in common",
                       "a missing data.supported read as a crash"],
        "one-input": ["-32022 told by data.supported", "stale capabilities and client info kept", "a retry after any error"],
        "seed": ["the first listed shared version taken as the newest", "the first try with the first listed version",
                 "an empty capabilities object left out"],
    },
    "ex03_version_negotiation": {
        "axes": ["the handshake accepts when the server's latest is shared",
                 "the handshake checks the answer against the server's list",
                 "the newest supported version not newer than the request"],
        "boundaries": ["the client accepts any version within its range",
                       "a requested version no newer than the server's latest echoed",
                       "a requested version matched by its year"],
        "one-input": ["the handshake ends on the server's answer", "the client accepts only its latest",
                      "the client accepts an older version only when it is its oldest"],
        "seed": ["the client offers its first listed version", "the client offers its last listed version",
                 "a supported version looked up by bisection"],
    },
    "ex04_mrtr_loop": {
        "axes": ["requestState carried over from an earlier round", "the retry's params built from the last retry",
                 "the answers of every round so far sent again", "_meta dropped from the retry",
                 "the retry always sent as tools/call"],
        "boundaries": ["an empty requestState taken for none", "a round without inputRequests taken as the end",
                       "no resultType read as input_required", "requestState null sent when there is none",
                       "roots/list called without params"],
        "one-input": ["only the first inputRequest fulfilled", "input_required told by inputRequests",
                      "the state echoed only with inputResponses"],
        "seed": ["sampling answered by the elicitation handler", "resources/read retried with a name",
                 "the requestState stripped"],
    },
    "ex04_seal_state": {
        "axes": ["the caller compared without case", "the caller compared as a prefix", "argument values compared as text",
                 "the presented arguments checked as a subset of the sealed ones",
                 "the arguments digested by their values only"],
        "boundaries": ["a token accepted at its expiry", "a minute of grace after the expiry", "the expiry in whole seconds",
                       "an empty state refused"],
        "one-input": ["caller or arguments: one match is enough", "the caller outside the MAC",
                      "the expiry outside the MAC", "the arguments digested by their keys only"],
        "seed": ["the ttl capped at five minutes", "nested argument values left out of the digest",
                 "the payload encoded as Latin-1"],
    },
}
"""Each exercise's wrong answers by the mistake class of issue #30 (``tests/wrong_classes.py``): an axis
the fixed cases left still, a boundary never probed, one input per rule, a mistake a seed's draw hid
(now a kind of its own, or a generated case, on every seed)."""


@pytest.mark.parametrize(("exercise_id", "name", "edits", "failing_check", "rule"), NEW_WRONG,
                         ids=[f"{w[0]}:{w[1]}" for w in NEW_WRONG])
def test_a_new_wrong_answer_is_rejected_on_20_seeds(tmp_path: Path, exercise_id: str, name: str, edits: Any,
                                                    failing_check: str, rule: str) -> None:
    assert_wrong_answer_rejected(tmp_path, exercise_id, name, edits, failing_check, rule)


def test_every_exercise_has_three_new_wrong_answers() -> None:
    for exercise_id in CHAPTERS_01_04:
        assert sum(w[0] == exercise_id for w in NEW_WRONG) >= 3, exercise_id


def test_every_mistake_class_has_three_wrong_answers() -> None:
    known: dict[str, list[str]] = {}
    for exercise_id, name, _edits, _check, _rule in NEW_WRONG:
        known.setdefault(exercise_id, []).append(name)
    assert set(MISTAKE_CLASSES) == set(CHAPTERS_01_04)
    assert len({w[1] for w in NEW_WRONG}) == len(NEW_WRONG), "two wrong answers share a name"
    wrong_classes.check_table(MISTAKE_CLASSES, known)


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
