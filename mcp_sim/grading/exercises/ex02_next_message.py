"""Exercise ex02_next_message (chapter 02): write the next JSON-RPC message of a paused session.

Each case pauses a legacy (2025-06-18 / 2025-11-25) session at a point of a fixed kind —
mid-handshake, with a request pending (last, or followed by a notification), with the server asking
the client something — and tells the learner which side they play; the seed picks names, ids and the
traffic before the pause. ``next_message(role, transcript, world)`` must return the one message that side sends
next. The message is checked for JSON-RPC validity (with the project's codec), for its kind
(request, notification, response, error) and for its ids: a response echoes the id of the request it
answers, and a new request uses an id its sender has not used before. Optional members the schema
allows (``_meta`` on params and results) may be present: only what the case asks for is compared.
"""

from __future__ import annotations

import copy
import json
from types import SimpleNamespace
from typing import Any

from mcp_sim.grading.differential import Mismatch, exhaustive, show
from mcp_sim.grading.model import Check, CheckContext, CheckFailed, Exercise, Hint
from mcp_sim.roles.server_session import ServerSession
from mcp_sim.wire.jsonrpc import (
    InvalidMessage,
    JSONRPCErrorResponse,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResultResponse,
    parse_object,
)

RULE_RESPONSE_ID = "jsonrpc.response-echoes-id"
RULE_NEW_ID = "jsonrpc.legacy.request-id-unused-in-session"
RULE_NOTIFICATION = "jsonrpc.notification-not-answered"
RULE_INITIALIZE = "lifecycle.server-echoes-supported-version"
RULE_METHOD_NOT_FOUND = "jsonrpc.standard-error-codes"
RULE_CAPABILITIES = "lifecycle.server-answers-capabilities"

_VERSIONS = ("2025-06-18", "2025-11-25")
_NAMES = ("weather", "files", "tracker", "notes", "maps", "calc")
_TOOL_WORDS = ("get_forecast", "read_file", "create_issue", "search_notes", "route", "add", "convert",
               "list_events", "summarize", "translate")
_UNKNOWN_METHODS = ("tools/run", "resources/lst", "prompt/get", "tools/execute", "files/read", "admin/reset")


class _Ids:
    """A sender's ids: integers counting up from a random start, or strings with a random prefix."""

    def __init__(self, rng: Any, prefix_pool: tuple[str, ...], start: int | None = None) -> None:
        self.style = rng.choice(("int", "str"))
        self.next = rng.randint(0, 3) if start is None else start
        self.prefix = rng.choice(prefix_pool)

    def __call__(self) -> str | int:
        value = self.next
        self.next += 1
        return value if self.style == "int" else f"{self.prefix}{value}"


def make_world(rng: Any) -> dict[str, Any]:
    name = rng.choice(_NAMES)
    tools = []
    for tool in rng.sample(_TOOL_WORDS, rng.randint(1, 3)):
        tools.append({"name": tool, "description": f"{tool.replace('_', ' ')} ({name})",
                      "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}})
    caps: dict[str, Any] = {"tools": {"listChanged": rng.choice((True, False))}}
    if rng.random() < 0.5:
        caps["resources"] = {}
    return {
        "server_info": {"name": f"{name}-server", "version": f"{rng.randint(0, 3)}.{rng.randint(0, 9)}.0"},
        "server_capabilities": caps,
        "tools": tools,
        "call": {"name": rng.choice(tools)["name"], "arguments": {"q": rng.choice(("Paris", "todo", "42", "λ"))}},
    }


def _msg(frm: str, message: dict[str, Any]) -> dict[str, Any]:
    return {"from": frm, "message": message}


def handshake(rng: Any, world: dict[str, Any], cid: _Ids, *, complete: bool = True,
              version: str | None = None) -> list[dict[str, Any]]:
    """The initialize exchange (and, with ``complete``, the initialized notification)."""
    version = version or rng.choice(_VERSIONS)
    init_id = cid()
    caps = rng.choice(({}, {"roots": {"listChanged": True}}, {"sampling": {}}, {"elicitation": {}}))
    t = [_msg("client", {"jsonrpc": "2.0", "id": init_id, "method": "initialize",
                         "params": {"protocolVersion": version, "capabilities": caps,
                                    "clientInfo": {"name": "course-client", "version": "1.0"}}}),
         _msg("server", {"jsonrpc": "2.0", "id": init_id,
                         "result": {"protocolVersion": version, "capabilities": world["server_capabilities"],
                                    "serverInfo": world["server_info"]}})]
    if complete:
        t.append(_msg("client", {"jsonrpc": "2.0", "method": "notifications/initialized"}))
    return t


def some_traffic(rng: Any, world: dict[str, Any], cid: _Ids, sid: _Ids) -> list[dict[str, Any]]:
    """Zero to three finished exchanges in the operating phase."""
    t: list[dict[str, Any]] = []
    for _ in range(rng.randint(0, 3)):
        kind = rng.choice(("tools/list", "ping", "server ping", "log"))
        if kind == "tools/list":
            i = cid()
            t += [_msg("client", {"jsonrpc": "2.0", "id": i, "method": "tools/list"}),
                  _msg("server", {"jsonrpc": "2.0", "id": i, "result": {"tools": world["tools"]}})]
        elif kind == "ping":
            i = cid()
            t += [_msg("client", {"jsonrpc": "2.0", "id": i, "method": "ping"}),
                  _msg("server", {"jsonrpc": "2.0", "id": i, "result": {}})]
        elif kind == "server ping":
            i = sid()
            t += [_msg("server", {"jsonrpc": "2.0", "id": i, "method": "ping"}),
                  _msg("client", {"jsonrpc": "2.0", "id": i, "result": {}})]
        else:
            t.append(_msg("server", {"jsonrpc": "2.0", "method": "notifications/message",
                                     "params": {"level": "info", "data": "working"}}))
    return t


def _ask(ctx: CheckContext, role: str, transcript: list[dict[str, Any]], world: dict[str, Any]) -> dict[str, Any]:
    msg = ctx.function("next_message")(role, copy.deepcopy(transcript), copy.deepcopy(world))
    if not isinstance(msg, dict):
        raise CheckFailed(f"next_message() returned {type(msg).__name__}; it should return one JSON-RPC message "
                          f"as a dict.")
    try:
        json.dumps(msg)
    except (TypeError, ValueError) as exc:
        raise CheckFailed(f"The message is not JSON-serialisable ({exc}); use only dicts, lists, strings, "
                          f"numbers, booleans and None.") from None
    return msg


def _as(msg: dict[str, Any], want: type, what: str) -> Any:
    parsed = parse_object(msg)
    if isinstance(parsed, InvalidMessage):
        raise CheckFailed(f"Your message {json.dumps(msg)} is not valid JSON-RPC: {parsed.reason}.")
    if not isinstance(parsed, want):
        kinds = {JSONRPCRequest: "a request", JSONRPCNotification: "a notification",
                 JSONRPCResultResponse: "a result response", JSONRPCErrorResponse: "an error response"}
        raise CheckFailed(f"The next message should be {what}, but yours is {kinds[type(parsed)]}: "
                          f"{json.dumps(msg)}")
    return parsed


def _without_meta(obj: dict[str, Any], where: str) -> dict[str, Any]:
    """``obj`` without its optional ``_meta`` (which the schema allows on params and results), after
    checking that ``_meta``, when present, is an object as the schema requires."""
    if "_meta" in obj and not isinstance(obj["_meta"], dict):
        raise CheckFailed(f"Your {where} has _meta = {json.dumps(obj['_meta'])}; _meta is always a JSON object.")
    return {k: v for k, v in obj.items() if k != "_meta"}


def _last_line(transcript: list[dict[str, Any]]) -> str:
    last = transcript[-1]
    return f"{last['from']} sent {json.dumps(last['message'])}"


def check_answer_initialize(ctx: CheckContext, kind: str) -> None:
    rng = ctx.rng
    world = make_world(rng)
    transcript = handshake(rng, world, _Ids(rng, ("init-", "c")), version=kind)[:1]
    request = transcript[0]["message"]
    msg = _ask(ctx, "server", transcript, world)
    resp = _as(msg, JSONRPCResultResponse, f"the result response to initialize (id {request['id']!r})")
    case = f"initialize request {json.dumps(request)}; world {json.dumps(world)}"
    ctx.expect(resp.id == request["id"] and type(resp.id) is type(request["id"]),
               f"Your response to initialize carries the id {resp.id!r}, not the request's (same value and type).",
               case=case, expected=f"id {request['id']!r}")
    result = resp.result
    want_v = request["params"]["protocolVersion"]
    ctx.expect(result.get("protocolVersion") == want_v,
               f"The client asked for a version this server supports, and your result.protocolVersion is "
               f"{result.get('protocolVersion')!r}.", case=case, expected=f"protocolVersion {want_v!r}")
    ctx.expect(result.get("capabilities") == world["server_capabilities"],
               f"Your result.capabilities {result.get('capabilities')!r} are not this server's (the world lists "
               f"them).", RULE_CAPABILITIES, case=case, expected=f"capabilities {world['server_capabilities']!r}")
    ctx.expect(result.get("serverInfo") == world["server_info"],
               f"Your result.serverInfo {result.get('serverInfo')!r} is not this server's (the world lists it).",
               RULE_CAPABILITIES, case=case, expected=f"serverInfo {world['server_info']!r}")


def check_initialized(ctx: CheckContext, kind: str) -> None:
    rng = ctx.rng
    world = make_world(rng)
    transcript = handshake(rng, world, _Ids(rng, ("init-", "c")), complete=False)
    if kind == "after a server log":  # the server may log before it is told the client is ready
        transcript.append(_msg("server", {"jsonrpc": "2.0", "method": "notifications/message",
                                          "params": {"level": "debug", "data": "server ready"}}))
    msg = _ask(ctx, "client", transcript, world)
    if "id" in msg:
        raise CheckFailed(f"notifications/initialized is a notification: it must not have an id (yours has "
                          f"id {msg['id']!r}), and nobody answers it.")
    note = _as(msg, JSONRPCNotification, "the notifications/initialized notification")
    ctx.expect(note.method == "notifications/initialized",
               f"The initialize response has arrived ({_last_line(transcript[:2])}); the client must now send "
               f"notifications/initialized, not {note.method!r}.")


def _pending_setup(ctx: CheckContext, method_pool: tuple[str, ...], kind: str
                   ) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any]]:
    rng = ctx.rng
    world = make_world(rng)
    if kind.startswith("tools/list") and len(world["tools"]) < 2:  # the whole list, not one of its tools
        world["tools"].append({"name": "echo", "description": "echo (tools)", "inputSchema": {"type": "object"}})
    cid, sid = _Ids(rng, ("req-", "c")), _Ids(rng, ("srv-", "s"))
    transcript = handshake(rng, world, cid) + some_traffic(rng, world, cid, sid)
    if "after an error" in kind:  # an error response answers its request as a result does
        i = cid()
        transcript += [_msg("client", {"jsonrpc": "2.0", "id": i, "method": rng.choice(_UNKNOWN_METHODS)}),
                       _msg("server", {"jsonrpc": "2.0", "id": i,
                                       "error": {"code": -32601, "message": "Method not found"}})]
    method = kind.split()[0] if kind.split()[0] in method_pool else rng.choice(method_pool)
    request: dict[str, Any] = {"jsonrpc": "2.0", "id": cid(), "method": method}
    if kind.endswith("id 0"):  # 0 is an id like any other, not a missing one
        cid.style = "str"
        for m in transcript:
            if "id" in m["message"] and (m["from"] == "client") == ("method" in m["message"]):
                m["message"]["id"] = f"c{m['message']['id']}"  # the client's requests and their answers
        request["id"] = 0
    if method.startswith(("tools/run", "tools/execute", "files", "prompt")):
        request["params"] = {"name": rng.choice(world["tools"])["name"]}
    transcript.append(_msg("client", request))
    if kind.endswith("then a notification"):  # the last message is not what you answer
        transcript.append(_msg("client", {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}))
    return transcript, world, request


def check_answer_pending(ctx: CheckContext, kind: str) -> None:
    transcript, world, request = _pending_setup(ctx, ("tools/list", "ping"), kind)
    msg = _ask(ctx, "server", transcript, world)
    resp = _as(msg, JSONRPCResultResponse, f"the result response to the pending {request['method']} request "
                                           f"(id {request['id']!r})")
    ctx.expect(resp.id == request["id"] and type(resp.id) is type(request["id"]),
               f"The request still waiting for an answer is {json.dumps(request)}; the response must carry its "
               f"id {request['id']!r}, got {resp.id!r}. (The last line of the transcript is not always the "
               f"request: notifications are never answered.)")
    want = {"tools": world["tools"]} if request["method"] == "tools/list" else {}
    ctx.expect(_without_meta(resp.result, "result") == want, f"Your result of {request['method']}, {json.dumps(resp.result)}, is not what "
                                    f"this server holds (the world above lists it).",
               case=json.dumps(request), expected=json.dumps(want))


def check_method_not_found(ctx: CheckContext, kind: str) -> None:
    transcript, world, request = _pending_setup(ctx, _UNKNOWN_METHODS, kind)
    msg = _ask(ctx, "server", transcript, world)
    if "error" in msg and "id" not in msg:
        raise CheckFailed(f"Your error response {json.dumps(msg)} has no id: it answers the pending request, so it "
                          f"carries that request's id.", RULE_RESPONSE_ID, case=json.dumps(request))
    resp = _as(msg, JSONRPCErrorResponse, f"an error response: this server has no method {request['method']!r}")
    ctx.expect(resp.id == request["id"] and type(resp.id) is type(request["id"]),
               f"The error response must carry the failed request's id, got {resp.id!r}.", RULE_RESPONSE_ID,
               case=json.dumps(request), expected=f"id {request['id']!r}")
    ctx.expect(resp.error.code == -32601,
               f"{request['method']!r} is not a method this server implements, so the code is -32601 (Method not "
               f"found), not {resp.error.code}.")


SHARED_ID = "the ping's id is also the client's"
SERVER_REQUEST_KINDS = ("int ids", "str ids", "ping then a log", "ping id 0", SHARED_ID)
"""Each a kind of its own on every seed: the server's ping with either id type, not the last message,
with the id 0, and with the id of a request of the client's (each side numbers its own)."""


def check_answer_server_request(ctx: CheckContext, kind: str) -> None:
    rng = ctx.rng
    world = make_world(rng)
    # Both sides count from the same start: ids are unique per sender, so they may coincide.
    start = rng.randint(0, 3)
    cid = _Ids(rng, ("c",), start)
    sid = _Ids(rng, ("s",), 100 if kind == SHARED_ID else start)
    cid.style = sid.style = kind.split()[0] if kind.split()[0] in ("int", "str") else "int"
    transcript = handshake(rng, world, cid) + some_traffic(rng, world, cid, sid)
    ping = {"jsonrpc": "2.0", "id": sid(), "method": "ping"}
    if kind == "ping id 0":  # 0 is an id like any other, not a missing one
        ping["id"] = 0 if all(m["message"].get("id") != 0 for m in transcript if m["from"] == "server") else -1
    if kind == SHARED_ID:  # the client's own request with that id does not answer the server's
        ping["id"] = next(m["message"]["id"] for m in reversed(transcript) if m["from"] == "client" and
                          "id" in m["message"] and "method" in m["message"])
    transcript.append(_msg("server", ping))
    if kind.endswith("then a log"):  # the last message is not what you answer
        transcript.append(_msg("server", {"jsonrpc": "2.0", "method": "notifications/message",
                                          "params": {"level": "info", "data": "waiting"}}))
    msg = _ask(ctx, "client", transcript, world)
    resp = _as(msg, JSONRPCResultResponse, f"the client's response to the server's ping (id {ping['id']!r})")
    ctx.expect(resp.id == ping["id"] and type(resp.id) is type(ping["id"]),
               f"The server's ping has id {ping['id']!r}; the client's response must echo that id, got "
               f"{resp.id!r}. Each side numbers its own requests, so the server's ids can look like the "
               f"client's — answer the id you received.")
    ctx.expect(_without_meta(resp.result, "result") == {}, f"A ping is answered with an empty result {{}}; got {json.dumps(resp.result)}.")


def _client_ids(transcript: list[dict[str, Any]]) -> set[Any]:
    return {json.dumps(m["message"]["id"]) for m in transcript
            if m["from"] == "client" and "method" in m["message"] and "id" in m["message"]}


def check_new_request(ctx: CheckContext, kind: str) -> None:
    rng = ctx.rng
    world = make_world(rng)
    cid, sid = _Ids(rng, ("req-", "c")), _Ids(rng, ("srv-", "s"))
    cid.style = kind.split()[0]
    if kind == "int from 2":  # n ids from 2 up: "the number of ids + 1" is one of them
        cid.next = 2
    transcript = handshake(rng, world, cid) + some_traffic(rng, world, cid, sid)
    if kind.endswith("late answer"):  # an old request answered late: ids need not be the last one seen
        i = cid()
        transcript += [_msg("client", {"jsonrpc": "2.0", "id": i, "method": "tools/list"}),
                       _msg("client", {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}),
                       _msg("server", {"jsonrpc": "2.0", "id": i, "result": {"tools": world["tools"]}})]
    msg = _ask(ctx, "client", transcript, world)
    req = _as(msg, JSONRPCRequest, f"a new tools/call request for {world['call']['name']!r}")
    used = _client_ids(transcript)
    ctx.expect(json.dumps(req.id) not in used,
               f"The id {req.id!r} was already used by the client in this session (used: "
               f"{', '.join(sorted(used))}); a new request needs an id the client has never used.")
    ctx.expect(req.method == "tools/call", f"Calling a tool is the request 'tools/call', not {req.method!r}.")
    want = {"name": world["call"]["name"], "arguments": world["call"]["arguments"]}
    ctx.expect(_without_meta(req.params or {}, "params") == want, f"Your tools/call params {json.dumps(req.params)} are not the call the host wants "
                                   f"made (name and arguments exactly as given; an optional _meta may be added).",
               expected=json.dumps(want))


# --- generated: any ids the client used, against the simulator server's own reuse check ------------------

USED_IDS: tuple[tuple[Any, ...], ...] = (
    (1,), (0,), ("1",), (1, 2), (2, 3), (2, 3, 4), (3, 5, 4), (5, 1), (12, 2, 3), (-1, 0), (1, "1"), ("", 0),
    ("req-1", 1), ("call-1", "call-2"), ("0", "1", "2"), (7, "c1", 8, 9))
"""The ids of the client's earlier requests, the handshake's first: integers (0 and negatives too) and
strings, some of which look like those integers ("1" is not 1), in orders where "one more than the
last", "the count plus one" or "the first string" is already taken. Every seed tries them all."""


def transcript_with_ids(ids: list[Any], world: dict[str, Any]) -> list[dict[str, Any]]:
    """A finished handshake (the first id) and one answered request per further id."""
    first, *rest = ids
    t = [_msg("client", {"jsonrpc": "2.0", "id": first, "method": "initialize",
                         "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                                    "clientInfo": {"name": "course-client", "version": "1.0"}}}),
         _msg("server", {"jsonrpc": "2.0", "id": first, "result": {
             "protocolVersion": "2025-11-25", "capabilities": world["server_capabilities"],
             "serverInfo": world["server_info"]}}),
         _msg("client", {"jsonrpc": "2.0", "method": "notifications/initialized"})]
    for n, rid in enumerate(rest):
        method = ("tools/list", "ping")[n % 2]
        t += [_msg("client", {"jsonrpc": "2.0", "id": rid, "method": method}),
              _msg("server", {"jsonrpc": "2.0", "id": rid, "result": {"tools": world["tools"]} if n % 2 == 0
                              else {}})]
    return t


def simulator_accepts_id(ids: list[Any], new_id: Any) -> bool:
    """Whether the simulator's server session (``ServerSession._use_of_id``) takes ``new_id`` as new
    after the requests with ``ids``: its reuse check is the oracle."""
    session = SimpleNamespace(_seen={})
    for rid in ids:
        ServerSession._use_of_id(session, JSONRPCRequest(rid, "tools/list"))  # type: ignore[arg-type]
    return bool(ServerSession._use_of_id(session, JSONRPCRequest(new_id, "tools/call",  # type: ignore[arg-type]
                                                                  {"name": "x"})) == "new")


def check_generated_ids(ctx: CheckContext, kind: str) -> None:
    world = make_world(ctx.rng)

    def learner(ids: list[Any]) -> Any:
        msg = _ask(ctx, "client", transcript_with_ids(ids, world), world)
        return _as(msg, JSONRPCRequest, f"a new tools/call request for {world['call']['name']!r}").id

    def compare(ids: list[Any], got: Any, want: None) -> Mismatch | None:
        if simulator_accepts_id(ids, got):
            return None
        return Mismatch(f"Your new request has the id {got!r}, which the simulator's server takes for a reused one.",
                        RULE_NEW_ID, expected="any string or integer not among the ids used so far")

    exhaustive(ctx, [list(ids) for ids in USED_IDS], learner=learner, oracle=lambda ids: None, compare=compare,
               describe=lambda ids: f"the client's earlier request ids: {show(ids)}")


EXERCISE = Exercise(
    id="ex02_next_message",
    title="Continue the conversation: the next JSON-RPC message",
    chapter="02",
    summary="Read a paused session transcript and write the next message as client or server.",
    rules=(RULE_RESPONSE_ID, RULE_NEW_ID, RULE_NOTIFICATION, RULE_INITIALIZE, RULE_METHOD_NOT_FOUND),
    functions=("next_message",),
    checks=(
        Check("Server: answer initialize", RULE_INITIALIZE, check_answer_initialize, _VERSIONS,
              hint="Compare your result with what the initialize request asked for and what the world says "
                   "about this server."),
        Check("Client: send notifications/initialized", RULE_NOTIFICATION, check_initialized,
              ("right after the response", "after a server log"),
              hint="Compare a notification with a request: which member does a notification never have?"),
        Check("Server: answer the pending request with its id", RULE_RESPONSE_ID, check_answer_pending,
              ("tools/list last", "ping last", "tools/list then a notification", "ping then a notification",
               "ping after an error response", "tools/list with id 0"),
              hint="Find the client request that has no response yet; it is not always the last message."),
        Check("Server: an unknown method gets -32601", RULE_METHOD_NOT_FOUND, check_method_not_found,
              ("unknown method last", "unknown method then a notification"),
              hint="An error response answers a request like a result does; compare its id with the request's."),
        Check("Client: answer the server's request", RULE_RESPONSE_ID, check_answer_server_request,
              SERVER_REQUEST_KINDS,
              hint="The server can send requests too (ping). Which id does the answer to it carry?"),
        Check("Client: a new request gets a fresh id", RULE_NEW_ID, check_new_request,
              ("int in order", "str in order", "int late answer", "str late answer", "int from 2"),
              hint="Compare your id with every id the client has used for its requests, not only the last one."),
        Check("Any ids used before: the new id is one the simulator's server takes as new", RULE_NEW_ID,
              check_generated_ids, ("generated",), seeds=1,
              hint="Compare your id with every id the client used, as JSON values: 1 and \"1\" are different ids."),
    ),
    hints=(
        Hint("Start by sorting the transcript into requests (method + id), notifications (method, no id) and "
             "responses (id + result or error). Only requests are answered.", RULE_NOTIFICATION),
        Hint("A response copies the id of the request it answers — value and type: 7 and \"7\" are different "
             "ids. A request is pending when no message from the other side has a result/error with its id.",
             RULE_RESPONSE_ID),
        Hint("Ids are chosen by the side that sends the request, so a server request and a client request can "
             "share an id. When you match responses to requests, match within one direction.", RULE_NEW_ID),
        Hint("What the client does next depends on what is outstanding: a server request waiting for an "
             "answer comes first; then the step of the handshake that is still missing; only then the tool call "
             "the world asks for.", RULE_INITIALIZE),
    ),
)
