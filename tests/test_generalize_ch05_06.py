"""Chapters 05–06: the grading generalizes (issue "Grading that generalizes").

For each exercise of the two chapters: correct solutions written differently from the reference pass
on several seeds (what the README calls free is free); plausible wrong answers from each class the
issue names — an axis that never varied, a boundary, one input per rule, a variation that depended on
the seed — are rejected on 20 seeds by the check naming the right rule; and the reference equals the
simulator (the oracle) on the generated inputs, checked by grading it through the generated checks,
which compare with the oracle, on many seeds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_exercises import assert_wrong_answer_rejected

from mcp_sim.grading import get_exercise
from mcp_sim.grading.runner import grade_seeds, reference_path


def _reference(exercise_id: str) -> str:
    return reference_path(exercise_id).read_text(encoding="utf-8")


def _edit(exercise_id: str, old: str, new: str) -> str:
    source = _reference(exercise_id)
    assert old in source, f"fixture out of date: {old!r} not in the reference of {exercise_id}"
    return source.replace(old, new)


def _edits(exercise_id: str, *pairs: tuple[str, str]) -> str:
    """The reference with several edits, each of a text it must contain."""
    source = _reference(exercise_id)
    for old, new in pairs:
        assert old in source, f"fixture out of date: {old!r} not in the reference of {exercise_id}"
        source = source.replace(old, new)
    return source


def _passes(tmp_path: Path, exercise_id: str, source: str, seeds: list[int], only: tuple[str, ...] = ()) -> None:
    path = tmp_path / f"{exercise_id}_alternative.py"
    path.write_text(source, encoding="utf-8")
    for result in grade_seeds(get_exercise(exercise_id), path, path.name, seeds, only=only):
        assert not result.load_error, result.load_error
        failed = [c for c in result.checks if c.status != "passed"]
        assert not failed, f"{exercise_id}: a correct alternative failed:\n{result}"


# --- alternatives: correct, written differently -----------------------------------------------------------

PLAIN_JSON_PAGER = '''
import json


def list_page(items, cursor, page_size):
    start = 0
    if cursor is not None:
        try:
            body = json.loads(cursor)
        except ValueError:
            return {"error": {"code": -32602, "message": "not a cursor of mine"}}
        start = body.get("offset") if isinstance(body, dict) else None
        if type(start) is not int or start < 0 or start >= len(items) and start != len(items):
            return {"error": {"code": -32602, "message": "no such position"}}
    end = start + page_size
    out = {"items": list(items[start:end])}
    if end < len(items):
        out["nextCursor"] = json.dumps({"offset": end}, separators=(",", ":"))
    return out
'''

DECIMAL_PAGER_REFUSING_THE_END = '''
def list_page(items, cursor, page_size):
    if cursor is None:
        start = 0
    elif cursor.isdigit() and 0 < int(cursor) < len(items):   # the end is refused: that complies too
        start = int(cursor)
    else:
        return {"error": {"code": -32602, "message": "invalid cursor"}}
    page = items[start:start + page_size]
    more = start + len(page) < len(items)
    return {"items": page, **({"nextCursor": str(start + len(page))} if more else {})}
'''

HMAC_PAGER = '''
import base64, hashlib, hmac

_KEY = b"fixed server key shared by every replica"


def _sign(offset):
    tag = hmac.new(_KEY, str(offset).encode(), hashlib.sha256).hexdigest()[:16]
    return base64.b32encode(f"{offset}.{tag}".encode()).decode()


def list_page(items, cursor, page_size):
    start = 0
    if cursor is not None:
        try:
            offset, tag = base64.b32decode(cursor.encode()).decode().split(".")
            start = int(offset)
        except Exception:
            return {"error": {"code": -32602, "message": "bad cursor"}}
        if not hmac.compare_digest(_sign(start), cursor) or start > len(items):
            return {"error": {"code": -32602, "message": "bad cursor"}}
    end = min(start + page_size, len(items))
    result = {"items": items[start:end]}
    if end < len(items):
        result["nextCursor"] = _sign(end)
    return result
'''

HTTP_TABLE = '''
import json

ORDER_OF_CHECKS = "method, body, shape, headers, version, method name, _meta"
SUPPORTED = ("2026-07-28",)
KNOWN = ("server/discover", "tools/list", "tools/call", "resources/list", "resources/templates/list",
         "resources/read", "prompts/list", "prompts/get", "completion/complete", "subscriptions/listen")


def answer(method, headers, body):
    if method.upper() != "POST":
        return {"status": 405, "error": None}
    try:
        msg = json.loads(body)
    except json.JSONDecodeError:
        return {"status": 400, "error": -32700}
    if type(msg) is not dict or msg.get("jsonrpc") != "2.0" or type(msg.get("method")) is not str:
        return {"status": 400, "error": -32600}
    if "id" in msg and (msg["id"] is None or type(msg["id"]) not in (int, str)):
        return {"status": 400, "error": -32600}
    if type(msg.get("params", {})) is not dict:
        return {"status": 400, "error": -32600}
    h = {}
    for k, v in headers.items():
        h[k.casefold()] = v
    params = msg.get("params") if type(msg.get("params")) is dict else {}
    meta = params.get("_meta") if type(params.get("_meta")) is dict else {}
    v = meta.get("io.modelcontextprotocol/protocolVersion")
    hv = h.get("mcp-protocol-version")
    name_key = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}.get(msg["method"])
    bad_headers = (hv is None or (v is not None and hv != v) or h.get("mcp-method") != msg["method"]
                   or (name_key and h.get("mcp-name") != params.get(name_key)))
    if bad_headers:
        return {"status": 400, "error": -32020}
    if "id" not in msg:
        return {"status": 400, "error": None}   # refusing a client notification complies too
    if msg["method"] == "initialize":
        return {"status": 404, "error": -32601}  # the other accepted refusal
    if isinstance(v, str) and v not in SUPPORTED:
        return {"status": 400, "error": -32022}
    if msg["method"] not in KNOWN:
        return {"status": 404, "error": -32601}
    if v is None or "io.modelcontextprotocol/clientCapabilities" not in meta:
        return {"status": 400, "error": -32602}
    return {"status": 200, "error": None}
'''

TOOL_RESULTS_OTHER = '''
import json


def run_tool(server, name, city):
    if city not in server["tools"][name]["known"]:
        return f"no station in {city}"
    celsius = 10 + sum(map(ord, city)) % 20
    return {"city": city, "celsius": celsius} if name == "temperature" else {"text": f"{city}: sunny, {celsius} C"}


def answer(request, server):
    modern = server["revision"] == "2026-07-28"
    reply = {"jsonrpc": "2.0", "id": request["id"]}

    def ok(**body):
        reply["result"] = ({"resultType": "complete"} if modern else {}) | body
        return reply

    def fail(code):
        reply["error"] = {"code": code, "message": "refused"}
        return reply

    p = request.get("params") or {}
    if request["method"] == "resources/read":
        if p.get("uri") not in server["resources"]:
            return fail(-32602 if modern else -32002)
        extra = {"ttlMs": 0, "cacheScope": "private"} if modern else {}   # a lifetime of our own choosing
        return ok(contents=[{"text": server["resources"][p["uri"]], "mimeType": "text/plain", "uri": p["uri"]}],
                  **extra)
    if p.get("name") not in server["tools"]:
        return fail(-32602)
    args = p.get("arguments") or {}
    if not isinstance(args.get("city"), str):
        return ok(content=[{"type": "text", "text": "Please give a city."}], isError=True)
    out = run_tool(server, p["name"], args["city"])
    if isinstance(out, str):
        return ok(content=[{"type": "text", "text": "Tool failed: " + out}], isError=True)
    if server["tools"][p["name"]]["outputSchema"]:
        copy = json.dumps(out, sort_keys=True, separators=(",", ":"))   # the same JSON, other formatting
        return ok(content=[{"type": "text", "text": copy}], structuredContent=out, isError=False)
    return ok(content=[{"type": "text", "text": out["text"]}], isError=False)
'''


FRAMER_FIND_LOOP = '''
def feed(pending, chunk):
    buf = bytearray(pending)
    buf += chunk
    out = []
    while (i := buf.find(b"\\n")) >= 0:
        line = bytes(buf[:i])
        del buf[:i + 1]
        text = line.decode("utf-8").rstrip("\\r")   # CRLF's \\r dropped: free
        if text.strip():
            out.append(text)
    return out, bytes(buf)
'''

FRAMER_RPARTITION = '''
def feed(pending, chunk):
    done, newline, rest = (pending + chunk).rpartition(b"\\n")
    if not newline:
        return [], rest
    return [line.decode("utf-8") for line in done.split(b"\\n") if line.strip()], rest
'''

CONTROLS_BY_SHAPE = '''
def who_controls(entry):
    item = entry["entry"]   # the shape of the entry says which primitive it is, as its list does
    if "inputSchema" in item:
        return "model"
    if "uri" in item or "uriTemplate" in item:
        return "application"
    return "user"


def needs_approval(tool, trusted):
    hints = (tool.get("annotations") or {}) if trusted else {}
    read_only = hints.get("readOnlyHint", False) is True
    destructive = hints.get("destructiveHint", not read_only) is True
    return not read_only or destructive
'''

CONTROLS_BY_KEY = '''
OWNER = {"tools": "model", "resources": "application", "resourceTemplates": "application", "prompts": "user"}


def who_controls(entry):
    return OWNER[entry["key"]]


def needs_approval(tool, trusted):
    match (trusted, tool.get("annotations", {}).get("readOnlyHint"), tool.get("annotations", {}).get("destructiveHint")):
        case (True, True, None) | (True, True, False):
            return False
        case _:
            return True
'''

DIAGNOSE_RECURSIVE = '''
MODERN = "2026-07-28"
CHECKS = {"string": lambda v: isinstance(v, str), "object": lambda v: isinstance(v, dict),
          "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
          "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
          "boolean": lambda v: isinstance(v, bool), "array": lambda v: isinstance(v, list)}


def valid(value, schema):
    if not CHECKS.get(schema.get("type"), lambda v: True)(value):
        return False
    if isinstance(value, dict):
        if not set(schema.get("required", ())) <= set(value):
            return False
        return all(valid(value[k], sub) for k, sub in schema.get("properties", {}).items() if k in value)
    return True


def diagnose(trace):
    asked, schemas, cursors = {}, {}, []
    for i, entry in enumerate(trace["messages"]):
        m = entry["message"]
        if entry["from"] == "client":
            asked[m["id"]] = m
            cursor = m.get("params", {}).get("cursor")
            if cursor is not None and cursor not in cursors:
                return {"index": i, "rule": "invented-cursor"}
            continue
        request = asked[m["id"]]
        if "error" in m:
            expected = -32602 if trace["revision"] == MODERN else -32002
            if request["method"] == "resources/read" and m["error"]["code"] != expected:
                return {"index": i, "rule": "not-found-code"}
            continue
        if trace["revision"] == MODERN and "resultType" not in m["result"]:
            return {"index": i, "rule": "result-type"}
        for tool in m["result"].get("tools", []):
            if tool.get("outputSchema"):
                schemas[tool["name"]] = tool["outputSchema"]
        if "nextCursor" in m["result"]:
            cursors.append(m["result"]["nextCursor"])
        schema = schemas.get(request.get("params", {}).get("name")) if request["method"] == "tools/call" else None
        if schema is not None and not valid(m["result"].get("structuredContent"), schema):
            return {"index": i, "rule": "output-schema"}
    return None
'''

STDOUT_JUDGE = '''
import json

WHO = {"stdout": "server", "stdin": "client"}


def _shape_ok(value):
    if type(value) is not dict or value.get("jsonrpc") != "2.0":
        return False
    return isinstance(value.get("method"), str) or ("id" in value and ("result" in value or "error" in value))


def diagnose(lines):
    for i, line in enumerate(lines):
        who = WHO.get(line["stream"])
        if who is None:
            continue
        try:
            value = json.loads(line["text"])
        except json.JSONDecodeError:
            return {"writer": who, "index": i}
        if not _shape_ok(value):
            return {"writer": who, "index": i}
    return None
'''

STDOUT_GENERATOR = '''
import json


def _message(text):
    try:
        v = json.loads(text)
    except ValueError:
        return False
    return isinstance(v, dict) and v.get("jsonrpc") == "2.0" and (
        type(v.get("method")) is str or ("id" in v and any(k in v for k in ("result", "error"))))


def diagnose(lines):
    bad = ((i, l) for i, l in enumerate(lines) if l["stream"] != "stderr" and not _message(l["text"]))
    found = next(bad, None)
    if found is None:
        return None
    return {"index": found[0], "writer": "server" if found[1]["stream"] == "stdout" else "client"}
'''

SESSIONS_TABLE = '''
import json


def server_status(method, headers, body, live_sessions):
    session = {k.casefold(): v for k, v in headers.items()}.get("mcp-session-id")
    is_init = method == "POST" and json.loads(body).get("method") == "initialize"
    if is_init:
        return 200 if session is None else 400
    if session is None:
        return 400
    if session not in set(live_sessions):
        return 404
    if method == "DELETE":
        return 200
    message = json.loads(body)
    return 202 if "id" not in message or "method" not in message else 200


def client_headers(method, session_id):
    return {} if session_id is None or method == "initialize" else {"mcp-session-id": session_id}


def after_404(method, status):
    return ["initialize", "notifications/initialized", method] if status == 404 else []
'''

SESSIONS_CLASS = '''
import json


class _Request:
    def __init__(self, method, headers, body):
        self.method = method
        self.session = next((v for k, v in headers.items() if k.lower() == "mcp-session-id"), None)
        self.message = json.loads(body) if body else {}

    @property
    def opens_session(self):
        return self.method == "POST" and self.message.get("method") == "initialize"


def server_status(method, headers, body, live_sessions):
    r = _Request(method, headers, body)
    if r.opens_session:
        return 400 if r.session else 200
    if not r.session:
        return 400
    if r.session not in live_sessions:
        return 404
    if r.method == "POST" and not ("id" in r.message and "method" in r.message):
        return 202
    return 200


def client_headers(method, session_id):
    headers = {}
    if method != "initialize" and session_id:
        headers["Mcp-Session-Id"] = session_id
    return headers


def after_404(method, status):
    if status != 404:
        return []
    return ["initialize", "notifications/initialized"] + [method]
'''

BOOKKEEPING_DATACLASS = '''
import itertools


def on_event(state, event, link):
    if state is None:
        state = {"ids": 0, "pending": []}        # [[deadline, id], ...]
    now, out = event["at"], []
    how = "close" if (link["transport"], link["revision"]) == ("http", "2026-07-28") else "cancel"
    still = []
    for deadline, rid in sorted(state["pending"], key=lambda p: p[0]):
        if deadline <= now:
            out.append({"do": how, "id": rid})
        else:
            still.append([deadline, rid])
    state["pending"] = still
    if event["type"] in ("call", "retry"):
        state["ids"] += 1
        rid = f"req-{state['ids']}"              # string ids: free
        state["pending"].append([now + event["timeout"], rid])
        out.append({"do": "send", "id": rid})
    elif event["type"] == "response":
        match = [p for p in state["pending"] if p[1] == event["id"]]
        if match:
            state["pending"].remove(match[0])
            out.append({"do": "deliver", "id": event["id"]})
    return out, state
'''

BOOKKEEPING_LISTS = '''
def on_event(state, event, link):
    state = state or [1000, {}]                 # next id, {id: deadline}
    next_id, waiting = state
    acts = []
    for rid in [r for r, d in sorted(waiting.items(), key=lambda kv: kv[1]) if event["at"] >= d]:
        modern_http = link["transport"] == "http" and link["revision"] == "2026-07-28"
        acts.append({"do": "close" if modern_http else "cancel", "id": int(rid)})
        del waiting[rid]
    kind = event["type"]
    if kind == "response" and str(event["id"]) in waiting:
        del waiting[str(event["id"])]
        acts.append({"do": "deliver", "id": event["id"]})
    if kind in ("call", "retry"):
        waiting[str(next_id)] = event["at"] + event["timeout"]
        acts.append({"do": "send", "id": next_id})
        next_id += 7                            # any fresh id will do
    return acts, [next_id, waiting]
'''

HTTP_PIPELINE = '''
import json

V = "io.modelcontextprotocol/protocolVersion"
SERVED = {"server/discover", "tools/list", "tools/call", "resources/list", "resources/templates/list",
          "resources/read", "prompts/list", "prompts/get", "completion/complete", "subscriptions/listen"}


class Refused(Exception):
    def __init__(self, status, code=None):
        self.answer = {"status": status, "error": code}


def _parse(body):
    try:
        return json.loads(body)
    except ValueError:
        raise Refused(400, -32700) from None


def _request_shape(m):
    ok = isinstance(m, dict) and m.get("jsonrpc") == "2.0" and isinstance(m.get("method"), str)
    ok = ok and isinstance(m.get("params", {}), dict)
    if ok and "id" in m:
        ok = type(m["id"]) in (int, str)
    if not ok:
        raise Refused(400, -32600)


def _headers(m, h):
    params = m.get("params", {})
    meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
    pairs = [("mcp-protocol-version", meta.get(V, h.get("mcp-protocol-version"))), ("mcp-method", m["method"])]
    if m["method"] in ("tools/call", "prompts/get"):
        pairs.append(("mcp-name", params.get("name")))
    if m["method"] == "resources/read":
        pairs.append(("mcp-name", params.get("uri")))
    for name, want in pairs:
        if name not in h or h[name] != want:
            raise Refused(400, -32020)
    return meta


def answer(method, headers, body):
    try:
        if method != "POST":
            raise Refused(405)
        m = _parse(body)
        _request_shape(m)
        meta = _headers(m, {k.lower(): v for k, v in headers.items()})
        if "id" not in m:
            return {"status": 202, "error": None}
        if m["method"] == "initialize":
            raise Refused(400, -32602)
        if isinstance(meta.get(V), str) and meta[V] != "2026-07-28":
            raise Refused(400, -32022)
        if m["method"] not in SERVED:
            raise Refused(404, -32601)
        if V not in meta or "io.modelcontextprotocol/clientCapabilities" not in meta:
            raise Refused(400, -32602)
        return {"status": 200, "error": None}
    except Refused as refused:
        return refused.answer
'''

TOOL_RESULTS_DISPATCH = '''
import json


def run_tool(server, name, city):
    if city not in server["tools"][name]["known"]:
        return f"no station in {city}"
    celsius = 10 + sum(map(ord, city)) % 20
    return {"city": city, "celsius": celsius} if name == "temperature" else {"text": f"{city}: sunny, {celsius} C"}


def _wrap(request, server, result=None, error=None):
    out = {"id": request["id"], "jsonrpc": "2.0"}
    if error is not None:
        out["error"] = {"message": "request refused", "code": error}
    else:
        out["result"] = dict(result, resultType="complete") if server["revision"] >= "2026" else result
    return out


def _read(request, server):
    uri = request["params"]["uri"]
    if uri not in server["resources"]:
        return _wrap(request, server, error=-32602 if server["revision"] >= "2026" else -32002)
    result = {"contents": [{"uri": uri, "mimeType": "text/plain", "text": server["resources"][uri]}]}
    if server["revision"] >= "2026":
        result |= {"cacheScope": "public", "ttlMs": 5000}
    return _wrap(request, server, result)


def _call(request, server):
    params = request["params"]
    tool = server["tools"].get(params["name"])
    if tool is None:
        return _wrap(request, server, error=-32602)
    city = (params.get("arguments") or {}).get("city")
    if type(city) is not str:
        return _wrap(request, server, {"isError": True, "content": [{"type": "text", "text": "bad city"}]})
    value = run_tool(server, params["name"], city)
    if isinstance(value, str):
        return _wrap(request, server, {"isError": True, "content": [{"type": "text", "text": value}]})
    if tool["outputSchema"]:
        text = json.dumps(value, indent=2, ensure_ascii=False)   # pretty-printed: the same JSON
        return _wrap(request, server, {"structuredContent": value, "content": [{"type": "text", "text": text}]})
    return _wrap(request, server, {"content": [{"type": "text", "text": value["text"]}]})


def answer(request, server):
    return {"resources/read": _read, "tools/call": _call}[request["method"]](request, server)
'''

ALTERNATIVES: list[tuple[str, str, str]] = [
    ("ex06_http_answers", "a pipeline of checks that raise their refusal", HTTP_PIPELINE),
    ("ex05_tool_results", "a dispatch table, a pretty-printed text copy", TOOL_RESULTS_DISPATCH),
    ("ex06_drops_duplicates", "string ids and a list of deadlines", BOOKKEEPING_DATACLASS),
    ("ex06_drops_duplicates", "ids counted in sevens, a dict of deadlines", BOOKKEEPING_LISTS),
    ("ex06_legacy_sessions", "casefolded headers, a lower-case header sent", SESSIONS_TABLE),
    ("ex06_legacy_sessions", "a request class", SESSIONS_CLASS),
    ("ex06_diagnose_stdout", "a shape function and a writer table", STDOUT_JUDGE),
    ("ex06_diagnose_stdout", "a generator of bad lines", STDOUT_GENERATOR),
    ("ex05_diagnose", "a recursive schema check, cursors in a list", DIAGNOSE_RECURSIVE),
    ("ex05_diagnose", "the reference walked with an index of responses first",
     _edit("ex05_diagnose", "    for index, entry in enumerate(trace[\"messages\"]):\n        msg = entry[\"message\"]",
           "    for index in range(len(trace[\"messages\"])):\n        msg = trace[\"messages\"][index][\"message\"]")),
    ("ex05_who_controls", "the entry's shape decides; hints read with defaults", CONTROLS_BY_SHAPE),
    ("ex05_who_controls", "the result key decides; a match statement", CONTROLS_BY_KEY),
    ("ex06_stdio_framer", "a find loop on a bytearray that drops the CR", FRAMER_FIND_LOOP),
    ("ex06_stdio_framer", "rpartition, then split", FRAMER_RPARTITION),
    ("ex05_pagination", "a plain JSON cursor", PLAIN_JSON_PAGER),
    ("ex05_pagination", "a decimal cursor that refuses the end", DECIMAL_PAGER_REFUSING_THE_END),
    ("ex05_pagination", "an HMAC-signed cursor (opaque to the checks)", HMAC_PAGER),
    ("ex06_http_answers", "a table-driven front door that refuses notifications", HTTP_TABLE),
    ("ex05_tool_results", "sorted-key text copies, explicit isError false, a private zero ttl", TOOL_RESULTS_OTHER),
]


@pytest.mark.parametrize(("exercise_id", "name", "source"), ALTERNATIVES, ids=[f"{a[0]}:{a[1]}" for a in ALTERNATIVES])
def test_a_correct_alternative_passes(tmp_path: Path, exercise_id: str, name: str, source: str) -> None:
    _passes(tmp_path, exercise_id, source, [0, 7])


# --- wrong answers: each rejected on 20 seeds by the check naming its rule ---------------------------------

SEEDS20 = list(range(20))


def assert_rejected(tmp_path: Path, exercise_id: str, source: str, check: str, rule: str) -> None:
    """``source`` fails ``check`` on each of 20 seeds, and the failure names ``rule``."""
    assert_wrong_answer_rejected(tmp_path, exercise_id, check, source, check, rule, seeds=SEEDS20)


P = "ex05_pagination"
H = "ex06_http_answers"
T = "ex05_tool_results"

WRONG: list[tuple[str, str, Any, str, str]] = [
    # pagination: boundaries (negative, the end), odd offsets, a null nextCursor
    (P, "a plain JSON cursor without a lower bound",
     PLAIN_JSON_PAGER.replace("start < 0 or ", ""), "A cursor the server never issued is -32602",
     "pagination.invalid-cursor-32602"),
    (P, "a cursor at the end answered with a nextCursor",
     _edit(P, "    if end < len(items):", "    if end < len(items) or start == len(items):"),
     "A cursor at exactly the end gets an empty last page (or -32602)", "pagination.missing-cursor-ends"),
    (P, "nextCursor null on the last page",
     _edit(P, '        page["nextCursor"] = _encode(end)', '        page["nextCursor"] = _encode(end)\n    else:\n'
              '        page["nextCursor"] = None'),
     "Only the last page has no nextCursor", "pagination.missing-cursor-ends"),
    (P, "the start rounded down to an even position",
     _edit(P, "        start = offset\n", "        start = offset - offset % 2\n"),
     "Any list and page size pages like the simulator's", "pagination.stable-cursors"),
    (P, "a position past the end served as an empty page",
     _edit(P, "not 0 <= offset <= len(items)", "offset < 0"),
     "A cursor at any position answers like the simulator's", "pagination.invalid-cursor-32602"),
    # http answers: the truths the reference used to get wrong, a header spelling, a batch
    (H, "a null id served", _edit(H, "        return isinstance(rid, (str, int)) and not isinstance(rid, bool)",
                                  "        return rid is None or isinstance(rid, (str, int))"),
     "A body that is no MCP request is refused before anything else", "jsonrpc.request-id-not-null"),
    (H, "the method looked up before the version",
     _edit(H, '''    if isinstance(meta.get(META_VERSION), str) and meta[META_VERSION] != VERSION:
        return {"status": 400, "error": -32022}  # the version first: which methods exist depends on it
    if message["method"] not in METHODS:
        return {"status": 404, "error": -32601}''', '''    if message["method"] not in METHODS:
        return {"status": 404, "error": -32601}
    if isinstance(meta.get(META_VERSION), str) and meta[META_VERSION] != VERSION:
        return {"status": 400, "error": -32022}'''),
     "The status follows the JSON-RPC error", "http.modern.unsupported-version-400"),
    (H, "a batch answered by its first request",
     _edit(H, "    if not _is_message(message):", "    if isinstance(message, list) and message:\n"
              "        message = message[0]\n    if not _is_message(message):"),
     "A body that is no MCP request is refused before anything else", "jsonrpc.batches-only-2025-03-26"),
    (H, "header names known in two spellings only",
     _edit(H, "    head = {name.lower(): value for name, value in headers.items()}",
           "    spellings = ('MCP-Protocol-Version', 'Mcp-Method', 'Mcp-Name', 'Mcp-Session-Id')\n"
           "    head = {(name.lower() if name in spellings or name.islower() else name): value\n"
           "            for name, value in headers.items()}"),
     "A POST whose headers repeat its body is served", "http.modern.header-names-case-insensitive"),
    (H, "unknown methods known by a list of two",
     _edit(H, "    if message[\"method\"] not in METHODS:", "    if message[\"method\"] in (\"ping\", \"roots/list\"):"),
     "The status follows the JSON-RPC error", "http.modern.unknown-method-404"),
    (H, "a missing _meta version served", _edit(H, "    if any(key not in meta for key in REQUIRED_META):",
                                                 "    if False:"),
     "A body that is no MCP request is refused before anything else", "meta.missing-field-invalid-params"),
    # tool results: the cache fields, a text copy that is no JSON, a tool name without its case
    (T, "a 2026-07-28 read without its cache fields",
     _edit(T, "            body.update(ttlMs=30_000, cacheScope=\"public\")", "            pass"),
     "Resources: contents, or the era's not-found code", "caching.hints-required"),
    (T, "the text copy written with str()",
     _edit(T, '"text": json.dumps(outcome)}],\n', '"text": str(outcome)}],\n'),
     "Structured output matches the outputSchema", "tools.structured-content-text-copy"),
    (T, "tool names matched without their case",
     _edit(T, "    name = params[\"name\"]\n", "    name = params[\"name\"].lower()\n"),
     "An unknown tool is a protocol error", "tools.unknown-tool-protocol-error"),
    (T, "an extra argument refused",
     _edit(T, "    if not isinstance(city, str):", "    if not isinstance(city, str) or len(params[\"arguments\"]) > 1:"),
     "A tool that ran answers with a result", "tools.execution-error-is-result"),
]

GLOBAL_BUFFER_FRAMER = '''
_BUFFER = bytearray()   # the framer's own memory: the pending it is given is ignored


def feed(pending, chunk):
    _BUFFER.extend(chunk)
    *finished, rest = bytes(_BUFFER).split(b"\\n")
    _BUFFER[:] = rest
    return [line.decode("utf-8") for line in finished if line.strip()], rest
'''

F = "ex06_stdio_framer"
WRONG += [
    (F, "its own buffer instead of the pending it is given", GLOBAL_BUFFER_FRAMER,
     "An unfinished message waits, unchanged, for its newline", "stdio.newline-delimited"),
    (F, "an empty read taken as the end of the stream",
     _edit(F, "    data = pending + chunk", "    if not chunk:\n        return [], b\"\"\n    data = pending + chunk"),
     "An unfinished message waits, unchanged, for its newline", "stdio.newline-delimited"),
    (F, "a CR at the end of a read thrown away",
     _edit(F, "    return frames, rest  #", "    return frames, rest.rstrip(b\"\\r\")  #"),
     "Only \\n ends a message; blank lines are skipped", "stdio.newline-delimited"),
    (F, "only empty lines and a lone CR skipped",
     _edit(F, "        if text.strip():", "        if text not in (\"\", \"\\r\"):"),
     "Only \\n ends a message; blank lines are skipped", "stdio.newline-delimited"),
]

W = "ex05_who_controls"
_APPROVE = "Every annotation pattern is decided like the simulator's Host"
WRONG += [
    (W, "a trusted idempotentHint taken as safe",
     _edit(W, "    annotations = tool.get(\"annotations\", {})\n",
           "    annotations = tool.get(\"annotations\", {})\n    if annotations.get(\"idempotentHint\") is True:\n"
           "        return False\n"), _APPROVE, "host.unless-read-only"),
    (W, "a trusted openWorldHint false taken as safe",
     _edit(W, "    annotations = tool.get(\"annotations\", {})\n",
           "    annotations = tool.get(\"annotations\", {})\n    if annotations.get(\"openWorldHint\") is False:\n"
           "        return False\n"), _APPROVE, "host.unless-read-only"),
    (W, "empty annotations taken as nothing to fear",
     _edit(W, "    if not trusted:\n", "    if tool.get(\"annotations\") == {}:\n        return False\n    if not trusted:\n"),
     _APPROVE, "host.unless-read-only"),
    (W, "a description that names a prompt believed",
     _edit(W, "    return CONTROLLER[entry[\"list\"]]",
           "    if \"user picks\" in entry[\"entry\"].get(\"description\", \"\"):\n        return \"user\"\n"
           "    return CONTROLLER[entry[\"list\"]]"), "Each primitive has its controller", "host.controls-per-primitive"),
]

D = "ex05_diagnose"
WRONG += [
    (D, "a tools/call result with two text blocks flagged",
     _edit(D, "        if method == \"tools/call\" and params[\"name\"] in schemas:",
           "        if method == \"tools/call\" and len(result.get(\"content\", [])) != 1:\n"
           "            return {\"index\": index, \"rule\": \"output-schema\"}\n"
           "        if method == \"tools/call\" and params[\"name\"] in schemas:"),
     "Sound traces are sound", "tools.structured-content-conforms"),
    (D, "resultType looked for on tools/call results only",
     _edit(D, "if revision == \"2026-07-28\" and \"resultType\" not in result:",
           "if revision == \"2026-07-28\" and method == \"tools/call\" and \"resultType\" not in result:"),
     "A modern result without resultType", "jsonrpc.result-type-required"),
    (D, "an invented cursor recognised by its shape",
     _edit(D, "if \"cursor\" in params and params[\"cursor\"] not in issued:",
           "if \"cursor\" in params and not params[\"cursor\"].isalnum():"),
     "A cursor the client made up", "pagination.cursor-opaque"),
    (D, "error codes judged in a first pass",
     _edit(D, "    return None\n", "    return None\n\n\n_diagnose = diagnose\n\n\ndef diagnose(trace):\n"
              "    for index, entry in enumerate(trace[\"messages\"]):\n"
              "        error = entry[\"message\"].get(\"error\")\n"
              "        if error is not None and error[\"code\"] != NOT_FOUND[trace[\"revision\"]]:\n"
              "            return {\"index\": index, \"rule\": \"not-found-code\"}\n"
              "    return _diagnose(trace)\n"),
     "With two mistakes, the first one is named", "pagination.cursor-opaque"),
]

S = "ex06_diagnose_stdout"
_ANY = "Every kind of line that is no message is found"
WRONG += [
    (S, "any object with jsonrpc 2.0 taken for a message",
     _edit(S, "    if isinstance(value.get(\"method\"), str):", "    if True:"), _ANY, "stdio.stdout-only-messages"),
    (S, "the jsonrpc version never read",
     _edit(S, "if not isinstance(value, dict) or value.get(\"jsonrpc\") != \"2.0\":", "if not isinstance(value, dict):"),
     _ANY, "stdio.stdout-only-messages"),
    (S, "stdout scanned before stdin",
     _edit(S, "    for index, line in enumerate(lines):",
           "    order = sorted(range(len(lines)), key=lambda i: lines[i][\"stream\"] != \"stdout\")\n"
           "    for index, line in ((i, lines[i]) for i in order):"),
     "A line on stdin that is not a message is the client's fault", "stdio.stdin-only-messages"),
]

L = "ex06_legacy_sessions"
WRONG += [
    (L, "the session header known in two spellings",
     _edit(L, "    return next((value for name, value in headers.items() if name.lower() == SESSION), None)",
           "    return headers.get(\"Mcp-Session-Id\", headers.get(SESSION))"),
     "A live session's requests are served; DELETE ends it", "http.legacy.session-id-carry"),
    (L, "a DELETE without a session id answered 404",
     _edit(L, "    if session is None:\n        return 400",
           "    if session is None:\n        return 404 if method == \"DELETE\" else 400"),
     "No session id is 400; an unknown one is 404", "http.legacy.missing-session-400"),
    (L, "after a 404 the same request every time",
     _edit(L, "    return [\"initialize\", \"notifications/initialized\", method]",
           "    return [\"initialize\", \"notifications/initialized\", \"tools/list\"]"),
     "On 404 the client starts a new session", "http.legacy.404-starts-over"),
    (L, "initialize refused only with a live session id",
     _edit(L, "return 400 if session is not None else 200", "return 400 if session in live_sessions else 200"),
     "No session id is 400; an unknown one is 404", "http.legacy.initialize-with-session-400"),
]

ANSWER_FIRST = '''
def on_event(state, event, link):
    state = state or {"next_id": 1, "waiting": {}}
    actions = []
    now = event["at"]
    if event["type"] == "response" and state["waiting"].pop(repr(event["id"]), None) is not None:
        actions.append({"do": "deliver", "id": event["id"]})   # before looking at the deadlines
    modern_http = link["transport"] == "http" and link["revision"] >= "2026-07-28"
    for key, (request_id, deadline) in sorted(state["waiting"].items(), key=lambda item: item[1][1]):
        if now >= deadline:
            actions.append({"do": "close" if modern_http else "cancel", "id": request_id})
            del state["waiting"][key]
    if event["type"] in ("call", "retry"):
        request_id = state["next_id"]
        state["next_id"] += 1
        state["waiting"][repr(request_id)] = [request_id, now + event["timeout"]]
        actions.append({"do": "send", "id": request_id})
    return actions, state
'''

B = "ex06_drops_duplicates"
_DEADLINE = "A request past its deadline is cancelled, the transport's way"
WRONG += [
    (B, "a deadline passed only when the clock is beyond it", _edit(B, "        if now >= deadline:", "        if now > deadline:"),
     _DEADLINE, "lifecycle.timeouts"),
    (B, "every HTTP request cancelled by closing its stream",
     _edit(B, "modern_http = link[\"transport\"] == \"http\" and link[\"revision\"] >= \"2026-07-28\"",
           "modern_http = link[\"transport\"] == \"http\""),
     _DEADLINE, "lifecycle.timeouts"),
    (B, "the answer handled before the deadlines", ANSWER_FIRST,
     "A late answer to a cancelled request is ignored", "faults.ignore-late-response"),
]


# --- the mistake classes: three wrong answers per class (tests/wrong_classes.py) ----------------------------

_WALK = "Following the cursors yields every item once, in order"
_NEVER = "A cursor the server never issued is -32602"
WRONG += [
    (P, "items served sorted by name",
     _edit(P, '{"items": items[start:end]}', '{"items": sorted(items, key=lambda item: item["name"])[start:end]}'),
     _WALK, "pagination.stable-cursors"),
    (P, "a page size of three whatever is asked", _edit(P, "    end = start + page_size", "    end = start + 3"),
     _WALK, "pagination.stable-cursors"),
    (P, "items popped off the list to build the page",
     _edit(P, '{"items": items[start:end]}', '{"items": [items.pop(start) for _ in range(start, min(end, len(items)))]}'),
     _WALK, "pagination.stable-cursors"),
    (P, "an empty cursor taken as the first page", _edit(P, "    if cursor is not None:", "    if cursor:"),
     _NEVER, "pagination.invalid-cursor-32602"),
    (P, "a cursor refused only when it does not decode",
     _edit(P, "if offset is None or not 0 <= offset <= len(items):", "if offset is None:"),
     _NEVER, "pagination.invalid-cursor-32602"),
    (P, "a true offset taken for 1",
     _edit(P, "isinstance(offset, int) and not isinstance(offset, bool)", "isinstance(offset, int)"),
     _NEVER, "pagination.invalid-cursor-32602"),
    (P, "the offset read with int()",
     _edits(P, ('offset = body.get("offset") if isinstance(body, dict) else None',
                'offset = int(body["offset"]) if isinstance(body, dict) and "offset" in body else None'),
            ("except (ValueError, UnicodeError, binascii.Error):", "except (ValueError, TypeError, UnicodeError):")),
     _NEVER, "pagination.invalid-cursor-32602"),
    (P, "no nextCursor when one item remains", _edit(P, "    if end < len(items):", "    if end < len(items) - 1:"),
     _WALK, "pagination.stable-cursors"),
    (P, "pages of one served two at a time", _edit(P, "    end = start + page_size", "    end = start + max(page_size, 2)"),
     _WALK, "pagination.stable-cursors"),
    (P, "a nextCursor after an exactly full last page", _edit(P, "    if end < len(items):", "    if end <= len(items):"),
     "Only the last page has no nextCursor", "pagination.missing-cursor-ends"),
]


_RAN = "A tool that ran answers with a result"
_READ = "Resources: contents, or the era's not-found code"
_STRUCT = "Structured output matches the outputSchema"
_ANY_REQUEST = "Any request answers like the simulated server"
WRONG += [
    (T, "the city taken from whichever argument comes first",
     _edit(T, 'city = params.get("arguments", {}).get("city")',
           'city = next(iter(params.get("arguments", {}).values()), None)'), _RAN, "tools.execution-error-is-result"),
    (T, "the server's first resource served whatever the URI",
     _edit(T, '        uri = params["uri"]\n', '        uri = next(iter(server["resources"]))\n'), _READ,
     "resources.not-found-legacy"),
    (T, "cacheScope shared, as HTTP caches say",
     _edit(T, 'body.update(ttlMs=30_000, cacheScope="public")', 'body.update(ttlMs=30_000, cacheScope="shared")'),
     _READ, "caching.hints-required"),
    (T, "ttlMs in seconds, a float",
     _edit(T, 'body.update(ttlMs=30_000, cacheScope="public")', 'body.update(ttlMs=30.0, cacheScope="public")'),
     _READ, "caching.hints-required"),
    (T, "a null outputSchema taken as one",
     _edit(T, 'if server["tools"][name]["outputSchema"] is not None:', 'if "outputSchema" in server["tools"][name]:'),
     _RAN, "tools.execution-error-is-result"),
    (T, "an isError result with an empty text",
     _edit(T, '"text": "city (a string) is required"', '"text": ""'), _RAN, "tools.execution-error-is-result"),
    (T, "the text copy without structuredContent",
     _edit(T, '"text": json.dumps(outcome)}],\n                                         "structuredContent": outcome}',
           '"text": json.dumps(outcome)}]}'), _STRUCT, "tools.structured-content-conforms"),
    (T, "structuredContent without its text copy",
     _edit(T, '"text": json.dumps(outcome)}],\n                                         "structuredContent": outcome}',
           '"text": "see structuredContent"}],\n                                         "structuredContent": outcome}'),
     _STRUCT, "tools.structured-content-text-copy"),
    (T, "the arguments checked before the tool's name",
     _edits(T, ('    if name not in server["tools"]:  # nothing ran: a protocol error\n'
                '        return _error(request, -32602, f"Unknown tool: {name}")\n', ''),
            ('    outcome = run_tool(server, name, city)\n',
             '    if name not in server["tools"]:\n        return _error(request, -32602, f"Unknown tool: {name}")\n'
             '    outcome = run_tool(server, name, city)\n')),
     _ANY_REQUEST, "tools.unknown-tool-protocol-error"),
    (T, "resultType on tool results only",
     _edit(T, "        return _result(request, server, body)\n",
           '        return {"jsonrpc": "2.0", "id": request["id"], "result": body}\n'),
     _READ, "jsonrpc.result-type-required"),
    (T, "-32002 for a missing resource in both eras",
     _edit(T, 'code = -32602 if server["revision"] == "2026-07-28" else -32002', "code = -32002"),
     _READ, "resources.not-found-modern"),
    (T, "-32602 for a missing resource in both eras",
     _edit(T, 'code = -32602 if server["revision"] == "2026-07-28" else -32002', "code = -32602"),
     _READ, "resources.not-found-legacy"),
    (T, "cache fields on every read",
     _edit(T, '        if server["revision"] == "2026-07-28":  # a read result is cacheable',
           '        if True:  # a read result is cacheable'), _READ, "caching.hints-required"),
    (T, "resultType in both eras",
     _edit(T, '    if server["revision"] == "2026-07-28":  # every modern Result says which kind it is',
           '    if True:'), _RAN, "jsonrpc.result-type-required"),
]


_CONTROL = "Each primitive has its controller"
_TRUSTED = "A trusted server's annotations: only read-only skips approval"
_SAFE = 'return not (annotations.get("readOnlyHint") is True and annotations.get("destructiveHint") is not True)'
WRONG += [
    (W, "a read-only hint believed from any server",
     _edit(W, "    if not trusted:\n        return True", "    if False:\n        return True"),
     "An untrusted server's annotations change nothing", "host.annotations-untrusted"),
    (W, "an entry with arguments taken for the model's",
     _edit(W, '    return CONTROLLER[entry["list"]]',
           '    if "arguments" in entry["entry"]:\n        return "model"\n    return CONTROLLER[entry["list"]]'),
     _CONTROL, "host.controls-per-primitive"),
    (W, "an absent destructiveHint read as its schema default true",
     _edit(W, _SAFE, 'return not (annotations.get("readOnlyHint") is True and annotations.get("destructiveHint", True) '
                     'is not True)'), _TRUSTED, "host.unless-read-only"),
    (W, "a read-only tool skipped only with destructiveHint false",
     _edit(W, _SAFE, 'return not (annotations.get("readOnlyHint") is True and annotations.get("destructiveHint") '
                     'is False)'), _TRUSTED, "host.unless-read-only"),
    (W, "read-only only when it is the only hint",
     _edit(W, _SAFE, 'return annotations != {"readOnlyHint": True}'), _TRUSTED, "host.unless-read-only"),
    (W, "a read-only tool skipped even when it says destructive",
     _edit(W, _SAFE, 'return annotations.get("readOnlyHint") is not True'), _TRUSTED, "host.unless-read-only"),
    (W, "destructiveHint false taken as safe as read-only",
     _edit(W, _SAFE, 'return not (annotations.get("readOnlyHint") is True and annotations.get("destructiveHint") '
                     'is not True or annotations.get("destructiveHint") is False)'), _TRUSTED, "host.unless-read-only"),
    (W, "the first of two hints decides",
     _edit(W, _SAFE, 'for key, value in annotations.items():\n'
                     '        if key == "readOnlyHint":\n            return value is not True\n'
                     '        if key == "destructiveHint":\n            return value is not False\n'
                     '    return True'), "Every annotation pattern is decided like the simulator's Host",
     "host.unless-read-only"),
    (W, "resource templates taken for the model's (it fills them in)",
     _edit(W, '"resources/templates/list": "application"', '"resources/templates/list": "model"'),
     _CONTROL, "host.controls-per-primitive"),
    (W, "resources taken for the user's (the user attaches a file)",
     _edit(W, '"resources/list": "application"', '"resources/list": "user"'), _CONTROL, "host.controls-per-primitive"),
    (W, "prompts taken for the model's (they are sent to it)",
     _edit(W, '"prompts/list": "user"', '"prompts/list": "model"'), _CONTROL, "host.controls-per-primitive"),
]


_SCHEMA = "structuredContent that breaks the outputSchema"
_SCHEMAS = '            schemas.update({t["name"]: t["outputSchema"] for t in result["tools"] if "outputSchema" in t})'
_TYPE_TEST = "if name in value and (not isinstance(value[name], want) or isinstance(value[name], bool) != (want is bool)):"
_NOT_FOUND = 'NOT_FOUND = {"2025-11-25": -32002, "2026-07-28": -32602}'
WRONG += [
    (D, "schemas replaced by each page",
     _edit(D, _SCHEMAS, '            schemas = {t["name"]: t["outputSchema"] for t in result["tools"] if "outputSchema" in t}'),
     _SCHEMA, "tools.structured-content-conforms"),
    (D, "schemas read from the first page only",
     _edit(D, _SCHEMAS, '            if "cursor" not in params:\n    ' + _SCHEMAS), _SCHEMA,
     "tools.structured-content-conforms"),
    (D, "the index counted from 1",
     _edit(D, '    for index, entry in enumerate(trace["messages"]):', '    for index, entry in enumerate(trace["messages"], 1):'),
     "A cursor the client made up", "pagination.cursor-opaque"),
    (D, "a boolean taken for a number",
     _edit(D, _TYPE_TEST, "if name in value and not isinstance(value[name], want):"), _SCHEMA,
     "tools.structured-content-conforms"),
    (D, "an integer property that takes 2.5", _edit(D, '"integer": int,', '"integer": (int, float),'), _SCHEMA,
     "tools.structured-content-conforms"),
    (D, "no structuredContent taken as nothing to check",
     _edit(D, 'if not conforms(result.get("structuredContent"), schemas[params["name"]]):',
           'if "structuredContent" in result and not conforms(result["structuredContent"], schemas[params["name"]]):'),
     _SCHEMA, "tools.structured-content-conforms"),
    (D, "only the required properties checked", _edit(D, _TYPE_TEST, "if False:"), _SCHEMA,
     "tools.structured-content-conforms"),
    (D, "only the property types checked",
     _edit(D, '    if any(name not in value for name in schema.get("required", [])):', "    if False:"), _SCHEMA,
     "tools.structured-content-conforms"),
    (D, "-32602 expected in both eras", _edit(D, _NOT_FOUND, 'NOT_FOUND = {"2025-11-25": -32602, "2026-07-28": -32602}'),
     "The wrong not-found code for the era", "resources.not-found-legacy"),
    (D, "-32002 expected in both eras", _edit(D, _NOT_FOUND, 'NOT_FOUND = {"2025-11-25": -32002, "2026-07-28": -32002}'),
     "The wrong not-found code for the era", "resources.not-found-modern"),
    (D, "resultType required in both eras",
     _edit(D, 'if revision == "2026-07-28" and "resultType" not in result:', 'if "resultType" not in result:'),
     "Sound traces are sound", "jsonrpc.result-type-required"),
    (D, "nothing read after an error",
     _edit(D, '                return {"index": index, "rule": "not-found-code"}\n            continue',
           '                return {"index": index, "rule": "not-found-code"}\n            return None'),
     _SCHEMA, "tools.structured-content-conforms"),
]


_LOOP = '    for index, line in enumerate(lines):'
_JUDGED = '        if line["stream"] in WRITERS and not is_message(line["text"]):'
_FOUND = '            return {"index": index, "writer": WRITERS[line["stream"]]}'
_STDIN = "A line on stdin that is not a message is the client's fault"
_STDOUT = "A line on stdout that is not a message is the server's fault"
WRONG += [
    (S, "stdin never judged", _edit(S, _JUDGED, '        if line["stream"] == "stdout" and not is_message(line["text"]):'),
     _STDIN, "stdio.stdin-only-messages"),
    (S, "stdin taken for the server's pipe (it reads it)",
     _edit(S, 'WRITERS = {"stdout": "server", "stdin": "client"}', 'WRITERS = {"stdout": "server", "stdin": "server"}'),
     _STDIN, "stdio.stdin-only-messages"),
    (S, "stderr judged like the pipes",
     _edits(S, (_JUDGED, '        if not is_message(line["text"]):'),
            (_FOUND, '            return {"index": index, "writer": WRITERS.get(line["stream"], "server")}')),
     "stderr is for logs: sound sessions are sound", "stdio.stderr-for-logs"),
    (S, "the index counted among stdin and stdout lines only",
     _edits(S, (_LOOP, '    piped = [line for line in lines if line["stream"] in WRITERS]\n'
                       '    for index, line in enumerate(piped):')),
     _STDOUT, "stdio.stdout-only-messages"),
    (S, "the index counted from 1", _edit(S, _LOOP, '    for index, line in enumerate(lines, 1):'),
     _STDOUT, "stdio.stdout-only-messages"),
    (S, "a method that is not a string accepted",
     _edit(S, '    if isinstance(value.get("method"), str):', '    if "method" in value:'), _ANY,
     "stdio.stdout-only-messages"),
    (S, "only lines that are no JSON found",
     _edit(S, '    if not isinstance(value, dict) or value.get("jsonrpc") != "2.0":', "    return True\n    if False:"), _ANY,
     "stdio.stdout-only-messages"),
    (S, "a method or an id makes a message",
     _edit(S, '    return "id" in value and ("result" in value or "error" in value)', '    return "id" in value'), _ANY,
     "stdio.stdout-only-messages"),
    (S, "the last bad line named",
     _edit(S, _LOOP, '    for index, line in reversed(list(enumerate(lines))):'), _STDOUT, "stdio.stdout-only-messages"),
    (S, "the first line never judged",
     _edit(S, _LOOP, '    for index, line in list(enumerate(lines))[1:]:'), _STDOUT,
     "stdio.stdout-only-messages"),
    (S, "the last line never judged",
     _edit(S, _LOOP, '    for index, line in list(enumerate(lines))[:-1]:'), _STDIN, "stdio.stdin-only-messages"),
    (S, "a pretty-printed object joined back before judging",
     _edits(S, (_LOOP, '    held = ""\n    for index, line in enumerate(lines):'),
            (_JUDGED, '        if line["stream"] in WRITERS and line["text"].strip() in ("{", "[") and not held:\n'
                      '            held = line["text"]\n            continue\n'
                      '        if held and line["stream"] in WRITERS:\n'
                      '            held += line["text"]\n'
                      '            if line["text"].strip() in ("}", "]"):\n                held = ""\n            continue\n'
                      + _JUDGED)),
     _STDOUT, "stdio.stdout-only-messages"),
]


_MODERN_HTTP = 'modern_http = link["transport"] == "http" and link["revision"] >= "2026-07-28"'
_NEW_ID = '        request_id = state["next_id"]\n        state["next_id"] += 1\n'
_ANSWER = '        if state["waiting"].pop(repr(event["id"]), None) is not None:  # only an id still waiting'
_RETRY = "A retry is a new request with a new id"
_ONCE = "Each answer reaches the caller once"
WRONG += [
    (B, "a retry sent with the id it retries",
     _edit(B, _NEW_ID, '        request_id = event["id"] if event["type"] == "retry" else state["next_id"]\n'
                       '        state["next_id"] += 1\n'), _RETRY, "jsonrpc.legacy.request-id-unused-in-session"),
    (B, "ids counted per method",
     _edits(B, ('{"next_id": 1, "waiting": {}}', '{"next_id": {}, "waiting": {}}'),
            (_NEW_ID, '        request_id = state["next_id"].get(event["method"], 1)\n'
                      '        state["next_id"][event["method"]] = request_id + 1\n')),
     _ONCE, "jsonrpc.legacy.request-id-unused-in-session"),
    (B, "requests waiting by method",
     _edits(B, ('state["waiting"][repr(request_id)] = [request_id, now + event["timeout"]]',
                'state["waiting"][event["method"]] = [request_id, now + event["timeout"]]'),
            (_ANSWER, '        key = next((k for k, (rid, _) in state["waiting"].items() if rid == event["id"]), None)\n'
                      '        if key is not None and state["waiting"].pop(key):')),
     _ONCE, "faults.duplicate-response-ignored"),
    (B, "deadlines looked at on ticks only",
     _edit(B, "        if now >= deadline:", '        if now >= deadline and event["type"] == "tick":'),
     "A late answer to a cancelled request is ignored", "faults.ignore-late-response"),
    (B, "a tick of grace after the deadline",
     _edit(B, "        if now >= deadline:", "        if now >= deadline + 0.5:"), _DEADLINE, "lifecycle.timeouts"),
    (B, "a late answer let through: only answers already delivered are ignored",
     _edits(B, ('{"next_id": 1, "waiting": {}}', '{"next_id": 1, "waiting": {}, "sent": [], "delivered": []}'),
            ('        state["waiting"][repr(request_id)]', '        state["sent"].append(request_id)\n'
                                                        '        state["waiting"][repr(request_id)]'),
            (_ANSWER, '        state["waiting"].pop(repr(event["id"]), None)\n'
                      '        if event["id"] in state["sent"] and event["id"] not in state["delivered"]:\n'
                      '            state["delivered"].append(event["id"])')),
     "A late answer to a cancelled request is ignored", "faults.ignore-late-response"),
    (B, "a duplicate delivered again: only cancelled answers are ignored",
     _edits(B, ('{"next_id": 1, "waiting": {}}', '{"next_id": 1, "waiting": {}, "cancelled": []}'),
            ('            del state["waiting"][key]  # from now on', '            state["cancelled"].append(request_id)\n'
                                                                   '            del state["waiting"][key]  # from now on'),
            (_ANSWER, '        state["waiting"].pop(repr(event["id"]), None)\n'
                      '        if event["id"] < state["next_id"] and event["id"] not in state["cancelled"]:')),
     _ONCE, "faults.duplicate-response-ignored"),
    (B, "one expired request cancelled per event",
     _edit(B, '            del state["waiting"][key]  # from now on its answer is late: ignored',
           '            del state["waiting"][key]\n            break'),
     "Any fault plan is survived like the course's client", "lifecycle.timeouts"),
    (B, "the stream closed on every 2026-07-28 link",
     _edit(B, _MODERN_HTTP, 'modern_http = link["revision"] >= "2026-07-28"'), _DEADLINE, "cancel.modern-timeouts"),
    (B, "notifications/cancelled on every link",
     _edit(B, _MODERN_HTTP, "modern_http = False"), _DEADLINE, "cancel.modern-http-closes-stream"),
]


_NAMED = 'NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}'
_MISMATCH = "A missing or different routing header is 400 with -32020"
_VERSION_HEADER = "    if version is None or (META_VERSION in meta and version != meta[META_VERSION]):"
_SHAPE = "A body that is no MCP request is refused before anything else"
WRONG += [
    (H, "an Mcp-Session-Id header refused",
     _edit(H, "    if \"id\" not in message:\n", "    if \"mcp-session-id\" in head:\n"
              "        return {\"status\": 400, \"error\": -32600}\n    if \"id\" not in message:\n"),
     "A POST whose headers repeat its body is served", "http.modern.legacy-traffic"),
    (H, "the version header held to the one version served",
     _edit(H, _VERSION_HEADER, "    if version != VERSION or (META_VERSION in meta and version != meta[META_VERSION]):"),
     "The status follows the JSON-RPC error", "http.modern.unsupported-version-400"),
    (H, "only GET refused with 405", _edit(H, '    if method != "POST":', '    if method == "GET":'),
     "GET and DELETE are 405", "http.modern.legacy-traffic"),
    (H, "a boolean id accepted",
     _edit(H, "        return isinstance(rid, (str, int)) and not isinstance(rid, bool)",
           "        return isinstance(rid, (str, int))"), _SHAPE, "jsonrpc.request-id-string-or-integer"),
    (H, "the Mcp-Method value compared without its case",
     _edit(H, '    if head.get("mcp-method") != message["method"]:',
           '    if str(head.get("mcp-method")).lower() != message["method"].lower():'), _MISMATCH,
     "http.modern.header-mismatch-400"),
    (H, "Mcp-Method trusted without a look",
     _edit(H, '    if head.get("mcp-method") != message["method"]:', "    if False:"), _MISMATCH,
     "http.modern.header-mismatch-400"),
    (H, "params that are not an object accepted",
     _edits(H, ('    if "params" in message and not isinstance(message["params"], dict):', "    if False:"),
            ('    params = message.get("params", {})', '    params = message.get("params") if isinstance(message.get("params"), '
                                                      'dict) else {}')), _SHAPE, "jsonrpc.standard-error-codes"),
    (H, "a routing header checked only when it is there",
     _edits(H, ('    if head.get("mcp-method") != message["method"]:',
                '    if "mcp-method" in head and head["mcp-method"] != message["method"]:'),
            ('    if member is not None and head.get("mcp-name") != params.get(member):',
             '    if member is not None and "mcp-name" in head and head["mcp-name"] != params.get(member):')),
     _MISMATCH, "http.modern.header-mismatch-400"),
    (H, "Mcp-Name compared for tools/call only", _edit(H, _NAMED, 'NAMED = {"tools/call": "name"}'), _MISMATCH,
     "http.modern.header-mismatch-400"),
    (H, "the Mcp-Name of resources/read compared with params.name",
     _edit(H, _NAMED, 'NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "name"}'),
     "A POST whose headers repeat its body is served", "http.modern.method-and-name-headers"),
    (H, "completion/complete left out of the methods",
     _edit(H, '"completion/complete", "subscriptions/listen"}', '"subscriptions/listen"}'),
     "Every method the server has is served", "http.modern.method-and-name-headers"),
]


_LIVE = "A live session's requests are served; DELETE ends it"
_UNKNOWN = "No session id is 400; an unknown one is 404"
_SERVED_OR_202 = '    return 200 if "id" in message and "method" in message else 202'
WRONG += [
    (L, "a DELETE that works answered 204", _edit(L, '    if method == "DELETE":\n        return 200',
                                                 '    if method == "DELETE":\n        return 204'),
     _LIVE, "http.legacy.delete-200"),
    (L, "a response from the client answered 200", _edit(L, _SERVED_OR_202, '    return 200 if "id" in message else 202'),
     _LIVE, "http.legacy.accepted-202"),
    (L, "a notification answered 200", _edit(L, _SERVED_OR_202, '    return 200 if "method" in message else 202'),
     _LIVE, "http.legacy.accepted-202"),
    (L, "the dead session's id sent with the new initialize",
     _edit(L, '    if method == "initialize" or session_id is None:', "    if session_id is None:"),
     "Every request after initialize carries the session id", "http.legacy.404-starts-over"),
    (L, "a session id matched without its case",
     _edit(L, "    if session not in live_sessions:", "    if session.lower() not in [s.lower() for s in live_sessions]:"),
     _UNKNOWN, "http.legacy.ended-session-404"),
    (L, "an unknown session id served", _edit(L, "    if session not in live_sessions:\n        return 404",
                                              "    if False:\n        return 404"), _UNKNOWN, "http.legacy.ended-session-404"),
    (L, "the session looked up before initialize",
     _edits(L, ("    session = _session_id(headers)\n",
                "    session = _session_id(headers)\n    if session is not None and session not in live_sessions:\n"
                "        return 404\n")),
     _UNKNOWN, "http.legacy.initialize-with-session-400"),
    (L, "only the first live session known",
     _edit(L, "    if session not in live_sessions:", "    if session != live_sessions[0]:"),
     _LIVE, "http.legacy.session-id-carry"),
]


_JOIN = "    data = pending + chunk"
_SPLIT = '    *finished, rest = data.split(b"\\n")'
_BLANK = "        if text.strip():"
_WAITS = "An unfinished message waits, unchanged, for its newline"
_ONLY_LF = "Only \\n ends a message; blank lines are skipped"
_WHOLE = "Every message comes out once, whole, when its newline arrives"
WRONG += [
    (F, "the pending put after the chunk", _edit(F, _JOIN, "    data = chunk + pending"), _WHOLE, "stdio.newline-delimited"),
    (F, "lines split as text, with str.splitlines()",
     _edits(F, (_SPLIT, '    head, newline, rest = data.rpartition(b"\\n")\n'
                        '    finished = head.decode("utf-8").splitlines() if newline else []\n'
                        '    rest = rest if newline else data'),
            ('        text = line.decode("utf-8")', "        text = line")),
     _ONLY_LF, "stdio.newline-delimited"),
    (F, "a complete-looking message taken without its newline",
     _edit(F, "    return frames, rest  #",
           "    import json\n    try:\n        json.loads(rest)\n    except ValueError:\n        return frames, rest\n"
           "    return [*frames, rest.decode(\"utf-8\")], b\"\"  #"), _WAITS, "stdio.newline-delimited"),
    (F, "only empty lines skipped", _edit(F, _BLANK, "        if text:"), _ONLY_LF, "stdio.newline-delimited"),
    (F, "blank lines of spaces skipped, a tab kept", _edit(F, _BLANK, '        if text.strip(" \\r"):'), _ONLY_LF,
     "stdio.newline-delimited"),
    (F, "one message per read", _edit(F, _SPLIT, '    *finished, rest = data.split(b"\\n", 1)'), _WHOLE,
     "stdio.newline-delimited"),
    (F, "each read decoded on its own",
     _edits(F, (_JOIN, '    data = pending + chunk.decode("utf-8", "replace").encode("utf-8")')),
     "Multibyte characters survive a cut between reads", "transport.utf-8"),
    (F, "the pending kept as text between reads",
     _edit(F, "    return frames, rest  #", '    return frames, rest.decode("utf-8", "replace").encode("utf-8")  #'),
     "Multibyte characters survive a cut between reads", "transport.utf-8"),
    (F, "a CR taken as the end of a line",
     _edits(F, (_SPLIT, '    import re\n    *finished, rest = re.split(rb"\\r\\n|\\r|\\n", data)')), _ONLY_LF,
     "stdio.newline-delimited"),
]


WRONG += [
    (L, "after a 404 only a tools/list is sent again",
     _edit(L, '    return ["initialize", "notifications/initialized", method]',
           '    return ["initialize", "notifications/initialized", *([method] if method == "tools/list" else [])]'),
     "On 404 the client starts a new session", "http.legacy.404-starts-over"),
]


@pytest.mark.parametrize(("exercise_id", "name", "source", "check", "rule"), WRONG, ids=[f"{w[0]}:{w[1]}" for w in WRONG])
def test_a_plausible_wrong_answer_is_rejected_by_the_right_rule(tmp_path: Path, exercise_id: str, name: str,
                                                                source: str, check: str, rule: str) -> None:
    assert_rejected(tmp_path, exercise_id, source, check, rule)


# --- one truth: the reference equals the oracle on the generated inputs ------------------------------------

GENERATED = [
    ("ex05_pagination", "Any list and page size pages like the simulator's"),
    ("ex05_pagination", "A cursor at any position answers like the simulator's"),
    ("ex05_tool_results", "Any request answers like the simulated server"),
    ("ex05_diagnose", "Any trace is judged like the simulator"),
    ("ex05_who_controls", "Every annotation pattern is decided like the simulator's Host"),
    ("ex06_stdio_framer", "Any stream frames like the simulator's pipe"),
    ("ex06_http_answers", "Any request answers like the simulated server"),
    ("ex06_legacy_sessions", "Any request is answered like the simulated server"),
    ("ex06_drops_duplicates", "Any fault plan is survived like the course's client"),
    ("ex06_diagnose_stdout", "Any session is judged like the simulator's decoder"),
]


@pytest.mark.parametrize(("exercise_id", "check"), GENERATED, ids=[f"{g[0]}:{g[1]}" for g in GENERATED])
def test_the_reference_equals_the_oracle_on_generated_inputs(exercise_id: str, check: str) -> None:
    """Each generated check compares with the simulator's own implementation; the reference passes it on
    six seeds (each seed draws other inputs), so the reference and the oracle agree there."""
    ex = get_exercise(exercise_id)
    path = reference_path(exercise_id)
    for result in grade_seeds(ex, path, path.name, [0, 3, 5, 8, 13, 21], only=[check], reference=True):
        found = next(c for c in result.checks if c.name == check)
        assert found.status == "passed", f"the reference differs from the oracle:\n{result}"


def test_every_chapter_05_06_exercise_has_a_generated_check() -> None:
    named = {exercise_id for exercise_id, _ in GENERATED}
    for exercise_id in named:
        assert {c for _, c in GENERATED if _ == exercise_id} <= {c.name for c in get_exercise(exercise_id).checks}
    assert named == {"ex05_pagination", "ex05_tool_results", "ex05_diagnose", "ex05_who_controls", "ex06_stdio_framer",
                     "ex06_http_answers", "ex06_legacy_sessions", "ex06_drops_duplicates", "ex06_diagnose_stdout"}


def test_the_diagnose_traces_agree_with_the_simulators_reading() -> None:
    """ex05_diagnose builds each fixed trace with its answer; the simulator's own reading (first_broken) of
    the same trace finds the same first broken message, for every kind."""
    import random

    from mcp_sim.grading.exercises import ex05_diagnose as grader
    from mcp_sim.grading.model import CheckContext

    kinds = [k for c in get_exercise("ex05_diagnose").checks if c.run is grader._ask for k in c.kinds]
    assert len(kinds) > 40
    for kind in kinds:
        for seed in range(3):
            ctx = CheckContext(learner=None, rng=random.Random(seed), seed=seed)  # type: ignore[arg-type]
            _, _, trace, bad = grader._build(ctx, kind)
            found = grader.first_broken(trace)
            assert (found or {}).get("index") == bad, f"{kind}: built {bad}, read {found}"


def test_the_http_reference_and_the_simulated_server_agree_where_they_used_to_differ() -> None:
    """The five requests where the reference and the server disagreed: the same answer now (or, for
    initialize, one the grader accepts)."""
    import importlib.util
    import json

    from mcp_sim.grading.exercises.ex06_http_answers import (
        PARAMS,
        acceptable,
        recorded_requests,
        replay,
        synthetic,
    )

    spec = importlib.util.spec_from_file_location("reference", reference_path("ex06_http_answers"))
    assert spec is not None and spec.loader is not None
    reference = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reference)
    like = next(r for r in recorded_requests(0) if json.loads(r["body"])["method"] == "server/discover")
    headers, body = synthetic("tools/list", like)
    message = json.loads(body)
    meta = message["params"]["_meta"]
    no_version = {**message, "params": {"_meta": {k: v for k, v in meta.items() if "protocolVersion" not in k}}}
    later = {**message, "method": "ping", "params": {"_meta": {**meta, "io.modelcontextprotocol/protocolVersion":
                                                               "2027-01-01"}}}
    cases = [(headers, json.dumps({**message, "id": None})), (headers, json.dumps(no_version)),
             ({**headers, "Mcp-Method": "ping", "MCP-Protocol-Version": "2027-01-01"}, json.dumps(later)),
             ({**headers, "Mcp-Method": "initialize"}, json.dumps({**message, "method": "initialize"})),
             (headers, json.dumps([message]))]
    assert "tools/list" in PARAMS
    for head, text in cases:
        truth = replay("POST", head, text)
        mine = reference.answer("POST", dict(head), text)
        assert mine == truth or acceptable(json.loads(text).get("method") == "initialize"
                                           if isinstance(json.loads(text), dict) else False, mine, truth), text
    assert replay("POST", cases[2][0], cases[2][1]) == {"status": 400, "error": -32022}


# --- the mistake classes: each class of issue "Grading that generalizes", three wrong answers each ---------

MISTAKE_CLASSES: dict[str, dict[str, list[str] | str]] = {
    "ex05_pagination": {
        "axes": ["items served sorted by name", "a page size of three whatever is asked",
                 "items popped off the list to build the page", "the start rounded down to an even position"],
        "boundaries": ["a plain JSON cursor without a lower bound", "a cursor at the end answered with a nextCursor",
                       "nextCursor null on the last page", "an empty cursor taken as the first page"],
        "one-input": ["a position past the end served as an empty page", "a cursor refused only when it does not decode",
                      "a true offset taken for 1", "the offset read with int()"],
        "seed": ["no nextCursor when one item remains", "pages of one served two at a time",
                 "a nextCursor after an exactly full last page"],
    },
    "ex05_tool_results": {
        "axes": ["the city taken from whichever argument comes first", "the server's first resource served whatever the URI",
                 "tool names matched without their case", "an extra argument refused"],
        "boundaries": ["cacheScope shared, as HTTP caches say", "ttlMs in seconds, a float", "a null outputSchema taken as one",
                       "an isError result with an empty text", "the text copy written with str()"],
        "one-input": ["the text copy without structuredContent", "structuredContent without its text copy",
                      "the arguments checked before the tool's name", "resultType on tool results only"],
        "seed": ["-32002 for a missing resource in both eras", "-32602 for a missing resource in both eras",
                 "cache fields on every read", "resultType in both eras", "a 2026-07-28 read without its cache fields"],
    },
    "ex05_who_controls": {
        "axes": ["a trusted idempotentHint taken as safe", "a trusted openWorldHint false taken as safe",
                 "a read-only hint believed from any server", "a description that names a prompt believed",
                 "an entry with arguments taken for the model's"],
        "boundaries": ["empty annotations taken as nothing to fear",
                       "an absent destructiveHint read as its schema default true",
                       "a read-only tool skipped only with destructiveHint false", "read-only only when it is the only hint"],
        "one-input": ["a read-only tool skipped even when it says destructive",
                      "destructiveHint false taken as safe as read-only", "the first of two hints decides"],
        "seed": ["resource templates taken for the model's (it fills them in)",
                 "resources taken for the user's (the user attaches a file)",
                 "prompts taken for the model's (they are sent to it)"],
    },
    "ex05_diagnose": {
        "axes": ["schemas replaced by each page", "schemas read from the first page only",
                 "resultType looked for on tools/call results only"],
        "boundaries": ["the index counted from 1", "a boolean taken for a number", "an integer property that takes 2.5",
                       "no structuredContent taken as nothing to check", "a tools/call result with two text blocks flagged"],
        "one-input": ["an invented cursor recognised by its shape", "error codes judged in a first pass",
                      "only the required properties checked", "only the property types checked"],
        "seed": ["-32602 expected in both eras", "-32002 expected in both eras", "resultType required in both eras",
                 "nothing read after an error"],
    },
    "ex06_diagnose_stdout": {
        "axes": ["stdout scanned before stdin", "stdin never judged", "stdin taken for the server's pipe (it reads it)",
                 "stderr judged like the pipes"],
        "boundaries": ["the index counted among stdin and stdout lines only", "the index counted from 1",
                       "a method that is not a string accepted"],
        "one-input": ["any object with jsonrpc 2.0 taken for a message", "the jsonrpc version never read",
                      "only lines that are no JSON found", "a method or an id makes a message", "the last bad line named"],
        "seed": ["the first line never judged", "the last line never judged",
                 "a pretty-printed object joined back before judging"],
    },
    "ex06_drops_duplicates": {
        "axes": ["a retry sent with the id it retries", "ids counted per method", "requests waiting by method"],
        "boundaries": ["a deadline passed only when the clock is beyond it", "deadlines looked at on ticks only",
                       "a tick of grace after the deadline"],
        "one-input": ["the answer handled before the deadlines",
                      "a late answer let through: only answers already delivered are ignored",
                      "a duplicate delivered again: only cancelled answers are ignored",
                      "one expired request cancelled per event"],
        "seed": ["every HTTP request cancelled by closing its stream", "the stream closed on every 2026-07-28 link",
                 "notifications/cancelled on every link"],
    },
    "ex06_http_answers": {
        "axes": ["an Mcp-Session-Id header refused", "the version header held to the one version served",
                 "only GET refused with 405"],
        "boundaries": ["a null id served", "a batch answered by its first request", "header names known in two spellings only",
                       "a boolean id accepted", "the Mcp-Method value compared without its case"],
        "one-input": ["the method looked up before the version", "unknown methods known by a list of two",
                      "a missing _meta version served", "Mcp-Method trusted without a look",
                      "params that are not an object accepted", "a routing header checked only when it is there"],
        "seed": ["Mcp-Name compared for tools/call only", "the Mcp-Name of resources/read compared with params.name",
                 "completion/complete left out of the methods"],
    },
    "ex06_legacy_sessions": {
        "axes": ["initialize refused only with a live session id", "a DELETE that works answered 204",
                 "a response from the client answered 200"],
        "boundaries": ["the session header known in two spellings", "a DELETE without a session id answered 404",
                       "the dead session's id sent with the new initialize", "a session id matched without its case"],
        "one-input": ["a notification answered 200", "an unknown session id served", "the session looked up before initialize"],
        "seed": ["after a 404 the same request every time", "after a 404 only a tools/list is sent again",
                 "only the first live session known"],
    },
    "ex06_stdio_framer": {
        "axes": ["its own buffer instead of the pending it is given", "the pending put after the chunk",
                 "lines split as text, with str.splitlines()"],
        "boundaries": ["an empty read taken as the end of the stream", "a CR at the end of a read thrown away",
                       "a complete-looking message taken without its newline"],
        "one-input": ["only empty lines and a lone CR skipped", "only empty lines skipped",
                      "blank lines of spaces skipped, a tab kept", "one message per read"],
        "seed": ["each read decoded on its own", "the pending kept as text between reads", "a CR taken as the end of a line"],
    },
}
"""Exercise → mistake class → the wrong answers of :data:`WRONG` in that class (tests/wrong_classes.py). The
seed class holds mistakes the seed's draw used to hide — the era, the link, which primitive or method, where
the cut or the bad line falls — each now a kind of its own tried on every seed."""


def test_every_mistake_class_has_three_wrong_answers() -> None:
    from wrong_classes import check_table

    known: dict[str, list[str]] = {}
    for exercise_id, name, *_ in WRONG:
        known.setdefault(exercise_id, []).append(name)
    check_table(MISTAKE_CLASSES, known)
    assert set(MISTAKE_CLASSES) == {e for e, _ in GENERATED}
