"""Chapter 06 exercises: plausible wrong answers are rejected on 20 seeds, each by the check that names its
mistake; a correct answer written differently passes.

The starter-fails / reference-passes test, the cheats and the answer hard-coded for one seed run for every
registered exercise in ``test_exercises``; this file adds the chapter's own wrong answers (``WRONG``, read
there too by the "five wrong answers of different kinds" test).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_exercises import SEEDS, assert_wrong_answer_rejected

from mcp_sim.grading import get_exercise
from mcp_sim.grading.runner import grade_seeds, reference_path


def _reference(exercise_id: str) -> str:
    return reference_path(exercise_id).read_text(encoding="utf-8")


def _everywhere(exercise_id: str, old: str, new: str) -> str:
    """The reference with every ``old`` replaced (the fixture fails if ``old`` is gone)."""
    source = _reference(exercise_id)
    assert old in source, f"fixture out of date: {old!r} not in the reference"
    return source.replace(old, new)


# --- ex06_stdio_framer ---------------------------------------------------------------------------

DECODES_EACH_READ = '''
def feed(pending, chunk):
    text = pending.decode("utf-8") + chunk.decode("utf-8", errors="replace")   # each read decoded alone
    *finished, rest = text.split("\\n")
    return [line for line in finished if line.strip()], rest.encode("utf-8")
'''

SPLITLINES = '''
def feed(pending, chunk):
    data = pending + chunk
    end = data.rfind(b"\\n") + 1
    text, rest = data[:end].decode("utf-8"), data[end:]
    return [line for line in text.splitlines() if line.strip()], rest   # splitlines: more than \\n
'''

BYTES_SPLITLINES = '''
def feed(pending, chunk):
    lines = (pending + chunk).splitlines()
    rest = lines.pop() if lines else b""   # the last piece is taken as unfinished, even when it is not
    return [line.decode("utf-8") for line in lines if line.strip()], rest
'''

EAGER = '''
import json

def feed(pending, chunk):
    *finished, rest = (pending + chunk).split(b"\\n")
    frames = [line.decode("utf-8") for line in finished if line.strip()]
    try:
        json.loads(rest)            # "it parses, so it is complete"
        frames.append(rest.decode("utf-8"))
        rest = b""
    except ValueError:
        pass
    return frames, rest
'''

# --- ex06_http_answers ---------------------------------------------------------------------------

EXACT_HEADER_NAMES = '''
import json

NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
METHODS = {"server/discover", "tools/list", "tools/call", "resources/list", "resources/templates/list",
           "resources/read", "prompts/list", "prompts/get", "completion/complete"}

def answer(method, headers, body):
    if method != "POST":
        return {"status": 405, "error": None}
    try:
        message = json.loads(body)
    except ValueError:
        return {"status": 400, "error": -32700}
    params = message.get("params") or {}
    version = headers.get("MCP-Protocol-Version")          # the names as the spec spells them
    if version is None or version != params.get("_meta", {}).get("io.modelcontextprotocol/protocolVersion"):
        return {"status": 400, "error": -32020}
    if headers.get("Mcp-Method") != message["method"]:
        return {"status": 400, "error": -32020}
    if message["method"] in NAMED and headers.get("Mcp-Name") != params.get(NAMED[message["method"]]):
        return {"status": 400, "error": -32020}
    if "id" not in message:
        return {"status": 202, "error": None}
    if version != "2026-07-28":
        return {"status": 400, "error": -32022}
    if message["method"] not in METHODS:
        return {"status": 404, "error": -32601}
    return {"status": 200, "error": None}
'''

# --- ex06_diagnose_stdout ------------------------------------------------------------------------

BLAMES_THE_REPLY = '''
import json

def diagnose(lines):
    for index, line in enumerate(lines):     # look for the parse error the reader reported
        try:
            value = json.loads(line["text"])
        except ValueError:
            continue
        if isinstance(value, dict) and isinstance(value.get("error"), dict) and value["error"].get("code") in (-32700, -32600):
            return {"index": index, "writer": "server" if line["stream"] == "stdin" else "client"}
    return None
'''

LAST_BAD_LINE = '''
import json

def diagnose(lines):
    found = None
    for index, line in enumerate(lines):
        if line["stream"] == "stderr":
            continue
        try:
            value = json.loads(line["text"])
            ok = isinstance(value, dict) and value.get("jsonrpc") == "2.0"
        except ValueError:
            ok = False
        if not ok:
            found = {"index": index, "writer": "server" if line["stream"] == "stdout" else "client"}  # keeps the last
    return found
'''

STDOUT_INDEX = '''
import json

def diagnose(lines):
    stdout = [line for line in lines if line["stream"] != "stderr"]   # index among protocol lines only
    for index, line in enumerate(stdout):
        try:
            value = json.loads(line["text"])
            ok = isinstance(value, dict) and value.get("jsonrpc") == "2.0"
        except ValueError:
            ok = False
        if not ok:
            return {"index": index, "writer": "server" if line["stream"] == "stdout" else "client"}
    return None
'''

# (exercise, name, edits-or-source, the check that must fail)
WRONG: list[tuple[str, str, Any, str]] = [
    ("ex06_stdio_framer", "each read split on its own",
     [("data = pending + chunk", "data = chunk")], "Every message comes out once, whole, when its newline arrives"),
    ("ex06_stdio_framer", "the unfinished tail thrown away",
     [("return frames, rest", "return frames, b\"\"")], "An unfinished message waits, unchanged, for its newline"),
    ("ex06_stdio_framer", "each read decoded before joining", DECODES_EACH_READ,
     "Multibyte characters survive a cut between reads"),
    ("ex06_stdio_framer", "str.splitlines() splits at U+2028", SPLITLINES,
     "Only \\n ends a message; blank lines are skipped"),
    ("ex06_stdio_framer", "blank lines handed out",
     [("if text.strip():", "if True:")], "Only \\n ends a message; blank lines are skipped"),
    ("ex06_stdio_framer", "bytes.splitlines() keeps the last complete line", BYTES_SPLITLINES,
     "Every message comes out once, whole, when its newline arrives"),
    ("ex06_stdio_framer", "a message that parses is handed out before its newline", EAGER,
     "An unfinished message waits, unchanged, for its newline"),

    ("ex06_http_answers", "header names compared with their case", EXACT_HEADER_NAMES,
     "A POST whose headers repeat its body is served"),
    ("ex06_http_answers", "a missing version header taken as an old client",
     [("if version is None or (META_VERSION in meta and version != meta[META_VERSION]):",
       "if version is not None and META_VERSION in meta and version != meta[META_VERSION]:")],
     "A missing or different routing header is 400 with -32020"),
    ("ex06_http_answers", "Mcp-Name never checked",
     [("if member is not None and head.get(\"mcp-name\") != params.get(member):", "if False:")],
     "A missing or different routing header is 400 with -32020"),
    ("ex06_http_answers", "a header mismatch answered with -32600",
     _everywhere("ex06_http_answers", "\"error\": -32020", "\"error\": -32600"),
     "A missing or different routing header is 400 with -32020"),
    ("ex06_http_answers", "an accepted notification answered 200",  # refusing one (a 4xx) complies too
     [("return {\"status\": 202, \"error\": None}", "return {\"status\": 200, \"error\": None}")],
     "A notification is accepted with 202 (or refused)"),
    ("ex06_http_answers", "GET and DELETE answered 400",
     [("return {\"status\": 405, \"error\": None}", "return {\"status\": 400, \"error\": -32600}")],
     "GET and DELETE are 405"),
    ("ex06_http_answers", "bad JSON answered with -32600",
     [("return {\"status\": 400, \"error\": -32700}", "return {\"status\": 400, \"error\": -32600}")],
     "A body that is not JSON is 400 with -32700"),
    ("ex06_http_answers", "an unknown method answered 400",
     [("return {\"status\": 404, \"error\": -32601}", "return {\"status\": 400, \"error\": -32601}")],
     "The status follows the JSON-RPC error"),
    ("ex06_http_answers", "a session id from an old client refused",
     [("    version = head.get(\"mcp-protocol-version\")\n",
       "    version = head.get(\"mcp-protocol-version\")\n    if \"mcp-session-id\" in head:\n"
       "        return {\"status\": 400, \"error\": -32600}\n")],
     "A POST whose headers repeat its body is served"),

    ("ex06_legacy_sessions", "an unknown session answered 400",
     [("return 404  # never issued", "return 400  # never issued")], "No session id is 400; an unknown one is 404"),
    ("ex06_legacy_sessions", "a missing session id answered 404",
     [("return 400  # every other request", "return 404  # every other request")],
     "No session id is 400; an unknown one is 404"),
    ("ex06_legacy_sessions", "initialize accepted with a session id",
     [("return 400 if session is not None else 200", "return 200")], "No session id is 400; an unknown one is 404"),
    ("ex06_legacy_sessions", "notifications answered 200",
     [("return 200 if \"id\" in message and \"method\" in message else 202", "return 200")],
     "A live session's requests are served; DELETE ends it"),
    ("ex06_legacy_sessions", "the session header looked up with its case",
     [("if name.lower() == SESSION", "if name == \"Mcp-Session-Id\"")],
     "A live session's requests are served; DELETE ends it"),
    ("ex06_legacy_sessions", "the dead session's id sent on the new initialize",
     [("if method == \"initialize\" or session_id is None:", "if session_id is None:")],
     "Every request after initialize carries the session id"),
    ("ex06_legacy_sessions", "after a 404 the request is just sent again",
     [("return [\"initialize\", \"notifications/initialized\", method]", "return [method]")],
     "On 404 the client starts a new session"),
    ("ex06_legacy_sessions", "after a 404 initialize without initialized",
     [("return [\"initialize\", \"notifications/initialized\", method]", "return [\"initialize\", method]")],
     "On 404 the client starts a new session"),

    ("ex06_drops_duplicates", "every response delivered, duplicates too",
     [("if state[\"waiting\"].pop(repr(event[\"id\"]), None) is not None:",
       "if state[\"waiting\"].pop(repr(event[\"id\"]), None) is not None or True:")],
     "Each answer reaches the caller once"),
    ("ex06_drops_duplicates", "a late answer still delivered",
     [("del state[\"waiting\"][key]  # from now on its answer is late: ignored",
       "state.setdefault(\"late\", {})[key] = state[\"waiting\"].pop(key)"),
      ("if state[\"waiting\"].pop(repr(event[\"id\"]), None) is not None:",
       "if (state[\"waiting\"].pop(repr(event[\"id\"]), None) or state.get(\"late\", {}).pop(repr(event[\"id\"]), "
       "None)) is not None:")],
     "A late answer to a cancelled request is ignored"),
    ("ex06_drops_duplicates", "notifications/cancelled on 2026-07-28 HTTP too",
     [("\"close\" if modern_http else \"cancel\"", "\"cancel\"")],
     "A request past its deadline is cancelled, the transport's way"),
    ("ex06_drops_duplicates", "a timed-out request forgotten without cancelling",
     [("            actions.append({\"do\": \"close\" if modern_http else \"cancel\", \"id\": request_id})\n", "")],
     "A request past its deadline is cancelled, the transport's way"),
    ("ex06_drops_duplicates", "cancelled again on every tick",
     [("del state[\"waiting\"][key]  # from now on its answer is late: ignored", "pass")],
     "A request past its deadline is cancelled, the transport's way"),
    ("ex06_drops_duplicates", "a retry reuses the old id",
     [("request_id = state[\"next_id\"]\n",
       "request_id = event[\"id\"] if event[\"type\"] == \"retry\" else state[\"next_id\"]\n")],
     "A retry is a new request with a new id"),
    ("ex06_drops_duplicates", "ids counted from the waiting requests",
     [("request_id = state[\"next_id\"]\n", "request_id = len(state[\"waiting\"]) + 1\n")],
     "A retry is a new request with a new id"),

    ("ex06_diagnose_stdout", "any JSON taken for a message",
     [("    if not isinstance(value, dict) or value.get(\"jsonrpc\") != \"2.0\":\n"
       "        return False  # valid JSON is not enough: a log object is not a message\n", "    return True\n")],
     "A line on stdout that is not a message is the server's fault"),
    ("ex06_diagnose_stdout", "stderr lines judged too",
     [("if line[\"stream\"] in WRITERS and not is_message(line[\"text\"]):", "if not is_message(line[\"text\"]):"),
      ("\"writer\": WRITERS[line[\"stream\"]]", "\"writer\": WRITERS.get(line[\"stream\"], \"server\")")],
     "stderr is for logs: sound sessions are sound"),
    ("ex06_diagnose_stdout", "the server always blamed",
     [("\"writer\": WRITERS[line[\"stream\"]]", "\"writer\": \"server\"")],
     "A line on stdin that is not a message is the client's fault"),
    ("ex06_diagnose_stdout", "only stdout examined",
     [("if line[\"stream\"] in WRITERS and", "if line[\"stream\"] == \"stdout\" and")],
     "A line on stdin that is not a message is the client's fault"),
    ("ex06_diagnose_stdout", "the parse-error reply blamed", BLAMES_THE_REPLY,
     "A line on stdout that is not a message is the server's fault"),
    ("ex06_diagnose_stdout", "the last bad line named", LAST_BAD_LINE,
     "A line on stdout that is not a message is the server's fault"),
    ("ex06_diagnose_stdout", "lines counted without stderr", STDOUT_INDEX,
     "A line on stdout that is not a message is the server's fault"),
]


def test_each_chapter_06_exercise_has_five_wrong_answers_breaking_different_rules() -> None:
    for exercise_id in ("ex06_stdio_framer", "ex06_http_answers", "ex06_legacy_sessions", "ex06_drops_duplicates",
                        "ex06_diagnose_stdout"):
        assert get_exercise(exercise_id).chapter == "06"
        mine = [w for w in WRONG if w[0] == exercise_id]
        assert len(mine) >= 5, exercise_id
        assert len({w[3] for w in mine}) >= 3, f"{exercise_id}: wrong answers should break different rules"


@pytest.mark.parametrize(("exercise_id", "name", "edits", "failing_check"), WRONG,
                         ids=[f"{w[0]}:{w[1]}" for w in WRONG])
def test_plausible_wrong_answer_is_rejected_on_20_seeds(tmp_path: Path, exercise_id: str, name: str, edits: Any,
                                                        failing_check: str) -> None:
    assert_wrong_answer_rejected(tmp_path, exercise_id, name, edits, failing_check)


ANOTHER_FRAMER = '''
def feed(pending, chunk):
    frames = []
    buffer = bytearray(pending)
    for byte in chunk:                      # byte by byte, a different shape of the same rule
        if byte == 10:
            line = bytes(buffer).decode("utf-8").rstrip("\\r")
            if line.strip():
                frames.append(line)
            buffer.clear()
        else:
            buffer.append(byte)
    return frames, bytes(buffer)
'''


def test_a_correct_framer_written_differently_passes(tmp_path: Path) -> None:
    path = tmp_path / "framer.py"
    path.write_text(ANOTHER_FRAMER, encoding="utf-8")
    for result in grade_seeds(get_exercise("ex06_stdio_framer"), path, path.name, SEEDS[:3]):
        assert result.passed, result


# --- the simulated sessions the chapter's exercises read ------------------------------------------

@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
def test_pitfall_sessions_are_repeatable_valid_and_broken_where_they_say(revision: str) -> None:
    from mcp_sim.grading.exercises.ex06_diagnose_stdout import culprit
    from mcp_sim.protocol.schema import schema_errors
    from mcp_sim.scenarios.stdio_pitfalls import PITFALLS, notes_session, pitfall_session
    from mcp_sim.wire.jsonrpc import InvalidMessage, decode, json_value

    for pitfall in PITFALLS:
        lines = pitfall_session(pitfall, 5, revision)
        assert lines == pitfall_session.__wrapped__(pitfall, 5, revision), "the same seed gives the same lines"
        found = culprit(lines)
        assert (found is None) == (pitfall == "logs on stderr"), pitfall
        if found is not None:
            assert found["writer"] == ("client" if pitfall == "client note on stdin" else "server")
        assert lines[0].stream == "stderr"  # the server announces itself where logs belong
    healthy = notes_session(5, revision)
    assert culprit(healthy) is None
    text = "".join(line.text for line in healthy)
    assert any(ch in text for ch in ("\u2028", "\u2029", "\x85")), "a line separator inside a JSON string"
    assert any(ord(ch) > 0x7F for ch in text), "characters that need more than one UTF-8 byte"
    for line in [*healthy, *pitfall_session("client note on stdin", 5, revision)]:
        message = decode(line.text) if line.stream != "stderr" else None
        if message is not None and not isinstance(message, InvalidMessage):
            assert schema_errors(json_value(message), revision) == [], line.text


def test_the_framer_cuts_fall_where_their_kind_says() -> None:
    from mcp_sim.grading.exercises.ex06_stdio_framer import _chunks, _stream
    from mcp_sim.grading.model import CheckContext
    from mcp_sim.grading.runner import case_rng

    for seed in range(5):
        for kind, inside in (("a character split across reads", True), ("one message per read", False)):
            ctx = CheckContext(None, case_rng(seed, kind), seed)  # type: ignore[arg-type]
            reads, messages, tail = _chunks(ctx, kind, _stream(ctx))
            cut_inside = any(0x80 <= nxt[0] < 0xC0 for nxt in reads[1:] if nxt)
            assert cut_inside == inside, (seed, kind)
            assert b"".join(reads).count(b"\n") >= len(messages) and not tail


# --- answers borrowed from the simulator where the exercise forbids it ----------------------------

BORROWED: dict[str, str] = {
    "ex06_stdio_framer": '''
from mcp_sim.transports.stdio import Pipe   # the simulator's own pipe reader

def feed(pending, chunk):
    *finished, rest = (pending + chunk).split(b"\\n")
    return [line.decode("utf-8") for line in finished if line.strip()], rest
''',
    "ex06_http_answers": '''
import json
from mcp_sim.transports.http import Headers, check_modern_headers
from mcp_sim.wire.jsonrpc import decode

def answer(method, headers, body):
    if method != "POST":
        return {"status": 405, "error": None}
    message = decode(body)
    mismatch = check_modern_headers(Headers(headers), message)
    return {"status": 400, "error": mismatch.code} if mismatch else {"status": 200, "error": None}
''',
    "ex06_legacy_sessions": '''
from mcp_sim.transports.http import MCP_SESSION_ID

def server_status(method, headers, body, live_sessions):
    return 200

def client_headers(method, session_id):
    return {} if method == "initialize" or session_id is None else {MCP_SESSION_ID: session_id}

def after_404(method, status):
    return ["initialize", "notifications/initialized", method] if status == 404 else []
''',
    "ex06_drops_duplicates": '''
from mcp_sim.roles.client import Client   # the simulator's client keeps this bookkeeping

def on_event(state, event, link):
    return [], state
''',
    "ex06_diagnose_stdout": '''
from mcp_sim.wire.jsonrpc import InvalidMessage, decode   # the simulator's own decoder

def diagnose(lines):
    for index, line in enumerate(lines):
        if line["stream"] != "stderr" and isinstance(decode(line["text"]), InvalidMessage):
            return {"index": index, "writer": "server" if line["stream"] == "stdout" else "client"}
    return None
''',
}


@pytest.mark.parametrize("exercise_id", list(BORROWED))
def test_an_answer_borrowed_from_a_forbidden_module_is_refused(tmp_path: Path, exercise_id: str) -> None:
    ex = get_exercise(exercise_id)
    path = tmp_path / "starter.py"
    path.write_text(BORROWED[exercise_id], encoding="utf-8")
    for result in grade_seeds(ex, path, path.name, SEEDS[:3], stop_at_first_failure=True):
        assert not result.passed
        assert result.load_error and "this exercise forbids" in result.load_error, result
