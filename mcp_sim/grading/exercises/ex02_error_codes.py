"""Exercise ex02_error_codes (chapter 02): which error code does this message deserve?

``choose_error_code(line, server)`` receives one line a server read from its transport and a
description of the server (its revision, methods, tools, resources, supported versions). It returns
the JSON-RPC error code the server must answer with, or ``None`` when no error response is due — a
valid request, a failing tool (that is a result with ``isError: true``), or a notification (never
answered). Each case contains exactly one fault of a fixed kind (every kind is tried on every seed;
the seed picks names, ids and spacing), generated here together with the code it deserves, so the
expectation never depends on the project's own codec.

A ``tools/call`` missing a required argument has two compliant answers from 2025-11-25 on (``-32602``
or ``None``: an ``isError`` result, which the tools page recommends); 2025-06-18 expects ``-32602``.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from typing import Any

from mcp_sim.grading.differential import Mismatch, exhaustive
from mcp_sim.grading.model import Check, CheckContext, CheckFailed, Exercise, Hint
from mcp_sim.wire.jsonrpc import InvalidMessage, decode

R_PARSE = "jsonrpc.standard-error-codes"
R_INVALID = "jsonrpc.request-id-not-null"
R_METHOD = "jsonrpc.standard-error-codes"
R_PARAMS = "meta.missing-field-invalid-params"
R_RESOURCE = "resources.not-found-legacy"
R_MODERN = "versioning.unsupported-version-error"
R_INTERNAL = "jsonrpc.standard-error-codes"
R_NO_ERROR = "tools.execution-error-is-result"
R_ARGUMENT = "tools.missing-argument-either-answer"
R_ID = "jsonrpc.request-id-string-or-integer"
R_CAPABILITY = "meta.server-uses-only-declared-capabilities"

LEGACY = ("2025-06-18", "2025-11-25")
MODERN = "2026-07-28"
_TOOLS = ("get_weather", "send_email", "create_issue", "search", "book_room", "convert", "delete_file")
_ARGS = ("city", "to", "title", "query", "room", "amount", "path")
_NEEDS = ("elicitation", "sampling", "roots")


def make_server(rng: Any, revision: str | None = None) -> dict[str, Any]:
    revision = revision or rng.choice((*LEGACY, MODERN))
    tools = {}
    for name in rng.sample(_TOOLS, rng.randint(2, 4)):
        tools[name] = {"required": rng.sample(_ARGS, rng.randint(0, 2)),
                       "needs": rng.choice(_NEEDS) if revision == MODERN and rng.random() < 0.4 else None}
    methods = ["tools/list", "tools/call", "resources/list", "resources/read", "prompts/list"]
    methods += ["server/discover"] if revision == MODERN else ["initialize", "ping"]
    rng.shuffle(methods)
    supported = [MODERN] if revision == MODERN else [revision]
    if revision == MODERN and rng.random() < 0.5:
        supported.append(rng.choice(("2027-03-01", "2027-09-15")))
    return {
        "revision": revision,
        "methods": methods,
        "tools": tools,
        "failing_tools": [rng.choice(list(tools))] if rng.random() < 0.5 else [],
        "broken_methods": [],
        "resources": [f"file:///{w}/{rng.randint(1, 99)}.txt" for w in rng.sample(("docs", "logs", "data"), 2)],
        "supported_versions": supported,
    }


def _meta(server: dict[str, Any], caps: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"io.modelcontextprotocol/protocolVersion": server["supported_versions"][0],
            "io.modelcontextprotocol/clientCapabilities": caps if caps is not None else {},
            "io.modelcontextprotocol/clientInfo": {"name": "course-client", "version": "1.0"}}


def _id(rng: Any) -> int | str:
    return rng.randint(1, 500) if rng.random() < 0.6 else f"req-{rng.randint(1, 500)}"


def _request(rng: Any, server: dict[str, Any], method: str, params: dict[str, Any] | None = None,
             caps: dict[str, Any] | None = None) -> dict[str, Any]:
    p = dict(params or {})
    if server["revision"] == MODERN:
        p["_meta"] = _meta(server, caps)
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": _id(rng), "method": method}
    if p:
        msg["params"] = p
    return msg


def _good_call(rng: Any, server: dict[str, Any], exclude_failing: bool = True) -> dict[str, Any]:
    names = [n for n in server["tools"] if not (exclude_failing and n in server["failing_tools"])] or \
        list(server["tools"])
    name = rng.choice(names)
    tool = server["tools"][name]
    caps: dict[str, Any] = {tool["needs"]: {}} if tool["needs"] else {}
    if rng.random() < 0.5:
        caps["experimental"] = {}
    return _request(rng, server, "tools/call", {"name": name, "arguments": {a: "x" for a in tool["required"]}},
                    caps)


def _line(obj: Any, rng: Any) -> str:
    return json.dumps(obj, separators=(",", ":") if rng.random() < 0.5 else (", ", ": "), ensure_ascii=False)


Case = tuple[str, dict[str, Any], int | None, str]
"""(line, server, expected code, what the case is)"""


PARSE_KINDS = ("cut off", "single quotes", "trailing comma", "not JSON", "unquoted key", "empty line")


def case_parse(rng: Any, kind: str) -> Case:
    server = make_server(rng)
    good = _line(_request(rng, server, "tools/list"), rng)
    broken = {
        "cut off": good[: rng.randint(1, len(good) - 1)],
        "single quotes": good.replace('"', "'"),
        "trailing comma": good[:-1] + ",}",
        "not JSON": rng.choice(("tools/list please", "<request/>", "id=1 method=ping")),
        "unquoted key": good.replace('"jsonrpc"', "jsonrpc", 1),
        "empty line": rng.choice(("", " ", "\t")),
    }[kind]
    return broken, server, -32700, f"text that is not JSON ({kind})"


INVALID_KINDS = ("batch", "version", "version as a number", "null id", "float id", "bool id", "method type",
                 "no method", "empty method", "params array", "params a string", "params null", "scalar")


def case_invalid(rng: Any, kind: str) -> Case:
    server = make_server(rng, rng.choice(LEGACY) if kind.startswith(("params ", "empty", "version ")) else None)
    req = _request(rng, server, "tools/list")
    bad: Any
    if kind == "batch":
        bad = [req, _request(rng, server, "prompts/list")]
    elif kind == "version":
        bad = {**req, "jsonrpc": rng.choice(("1.0", 2.0, "2"))}
    elif kind == "version as a number":  # 2.0 is not the string "2.0"
        bad = {**req, "jsonrpc": 2.0}
    elif kind == "null id":
        bad = {**req, "id": None}
    elif kind == "float id":
        bad = {**req, "id": rng.randint(1, 50) + 0.5}
    elif kind == "bool id":
        bad = {**req, "id": True}
    elif kind == "method type":
        bad = {**req, "method": rng.choice((42, ["tools/list"], None))}
    elif kind == "no method":
        bad = {k: v for k, v in req.items() if k != "method"}
    elif kind == "empty method":
        bad = {**req, "method": ""}
    elif kind == "params array":
        bad = {**req, "params": ["x", 1]}
    elif kind in ("params a string", "params null"):  # params, when present, is an object
        bad = {**req, "params": "x" if kind == "params a string" else None}
    else:
        bad = rng.choice((42, "tools/list", None))
    return _line(bad, rng), server, -32600, f"valid JSON but not a valid request ({kind})"


METHOD_KINDS = ("legacy server", "modern server", "other era's method")


def case_method(rng: Any, kind: str) -> Case:
    server = make_server(rng, rng.choice(LEGACY) if kind != "modern server" else MODERN)
    if kind == "other era's method":
        method = "server/discover"
    else:
        absent = [m for m in ("prompts/get", "tools/run", "completion/complete", "logging/setLevel",
                              "resources/subscribe", "sampling/createMessage", "tasks/list")
                  if m not in server["methods"]]
        method = rng.choice(absent)
    return _line(_request(rng, server, method), rng), server, -32601, f"the server has no method {method}"


PARAMS_KINDS = ("unknown tool", "no name", "no _meta", "_meta without protocolVersion",
                "_meta without clientCapabilities")
"""Each missing _meta key is a kind of its own (not a draw of the seed)."""


def case_params(rng: Any, kind: str) -> Case:
    server = make_server(rng, MODERN if "_meta" in kind else None)
    if kind == "unknown tool":
        name = rng.choice([t for t in _TOOLS if t not in server["tools"]])
        req = _request(rng, server, "tools/call", {"name": name, "arguments": {}})
    elif kind == "no name":
        req = _request(rng, server, "tools/call", {"arguments": {}})
    else:
        req = _request(rng, server, rng.choice(("tools/list", "resources/list")))
        drop = "all" if kind == "no _meta" else f"io.modelcontextprotocol/{kind.split()[-1]}"
        if drop == "all":
            req["params"].pop("_meta")
            if not req["params"]:
                req.pop("params")
        else:
            req["params"]["_meta"].pop(drop)
    return _line(req, rng), server, -32602, kind


ARGUMENT_KINDS = (*LEGACY, MODERN, "2025-06-18, the second of two required")
"""Each revision, and a tool with two required arguments of which the second is missing (every
required argument counts, not only the first)."""
ACCEPTED_FOR_MISSING_ARGUMENT: dict[str, tuple[int | None, ...]] = {
    "2025-06-18": (-32602,), "2025-11-25": (-32602, None), MODERN: (-32602, None)}
"""Every compliant answer to a tools/call missing a required argument, per revision."""


def case_argument(rng: Any, kind: str) -> tuple[str, dict[str, Any]]:
    """A ``tools/call`` of a known tool without one of its required arguments, on a ``kind`` server."""
    revision, _, second = kind.partition(", ")
    server = make_server(rng, revision)
    if not any(t["required"] for t in server["tools"].values()):
        first = next(iter(server["tools"]))
        server["tools"][first]["required"] = [rng.choice(_ARGS)]
    name = rng.choice([n for n, t in server["tools"].items() if t["required"]])
    tool = server["tools"][name]
    if second:
        tool["required"] = rng.sample(_ARGS, 2)
    args = {a: "x" for a in (tool["required"][:-1] if second else tool["required"][1:])}
    caps: dict[str, Any] = {tool["needs"]: {}} if tool["needs"] else {}
    return _line(_request(rng, server, "tools/call", {"name": name, "arguments": args}, caps), rng), server


def check_argument(ctx: CheckContext, kind: str) -> None:
    line, server = case_argument(ctx.rng, kind)
    got = ctx.function("choose_error_code")(line, json.loads(json.dumps(server)))
    accepted = ACCEPTED_FOR_MISSING_ARGUMENT[kind.partition(", ")[0]]
    if not any(got == a and type(got) is type(a) for a in accepted):
        want = ("-32602, or None for the isError result the tools page recommends in this revision"
                if None in accepted else "-32602: the 2025-06-18 tools page lists invalid arguments among "
                                         "protocol errors")
        raise CheckFailed(f"Your function returned {got!r} for a tools/call that lacks a required argument.",
                          R_ARGUMENT, case=f"line:   {line!r}\nserver: {json.dumps(server)}", expected=want)


RESOURCE_KINDS = (*LEGACY, MODERN)


def case_resource(rng: Any, kind: str) -> Case:
    server = make_server(rng, kind)
    uri = f"file:///secret/{rng.randint(1, 999)}.txt"
    code = -32602 if server["revision"] == MODERN else -32002
    return (_line(_request(rng, server, "resources/read", {"uri": uri}), rng), server, code,
            f"resources/read of an unknown URI in {server['revision']}")


MODERN_KINDS = ("older version", "future version", "elicitation not declared", "sampling not declared",
                "roots not declared", "no capability declared")
"""Each capability a tool may need is a kind of its own, declared beside other capabilities, and once
with none declared at all (not a draw of the seed)."""


def case_modern(rng: Any, kind: str) -> Case:
    server = make_server(rng, MODERN)
    if kind.endswith("version"):
        req = _good_call(rng, server)
        req["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = (
            rng.choice(("2025-11-25", "2025-06-18")) if kind == "older version" else rng.choice(("2030-01-01",
                                                                                                 "2029-06-30")))
        return _line(req, rng), server, -32022, f"a protocolVersion the server does not support ({kind})"
    name = rng.choice(list(server["tools"]))
    need = kind.split()[0] if kind.split()[0] in _NEEDS else rng.choice(_NEEDS)
    server["tools"][name]["needs"] = need
    if name in server["failing_tools"]:
        server["failing_tools"] = []
    req = _request(rng, server, "tools/call",
                   {"name": name, "arguments": {a: "x" for a in server["tools"][name]["required"]}},
                   {} if kind == "no capability declared" else
                   rng.choice(({"experimental": {}}, {n: {} for n in _NEEDS if n != need})))
    return _line(req, rng), server, -32021, f"the tool needs the client capability {need!r}, not declared"


INTERNAL_KINDS = ("tools/list", "resources/list", "prompts/list", "tools/call")


def case_internal(rng: Any, kind: str) -> Case:
    server = make_server(rng)
    method = kind
    server["broken_methods"] = [method]
    request = _good_call(rng, server) if method == "tools/call" else _request(rng, server, method)
    return _line(request, rng), server, -32603, f"the server's {method} handler crashes"


NO_ERROR_KINDS = ("call", "call in 2026-07-28", "call needing a capability the request declares", "failing tool",
                  "failing tool in 2026-07-28", "read", "read in 2026-07-28", "list", "list in 2026-07-28",
                  "notification", "another supported version", "id 0", "a negative id", "an empty string id")
"""Each era is a kind of its own (not a draw of the seed), so every seed tries a modern call, a modern
read and a modern call whose needed capability is declared."""


def case_no_error(rng: Any, kind: str) -> Case:
    modern = kind.endswith("2026-07-28") or kind in ("another supported version",
                                                      "call needing a capability the request declares")
    server = make_server(rng, MODERN if modern else rng.choice(LEGACY))
    kind = kind.removesuffix(" in 2026-07-28")
    if kind == "call needing a capability the request declares":
        name = rng.choice(list(server["tools"]))
        server["tools"][name]["needs"] = rng.choice(_NEEDS)
        server["failing_tools"] = [n for n in server["failing_tools"] if n != name]
        msg = _good_call(rng, {**server, "tools": {name: server["tools"][name]}})
    elif kind == "another supported version":
        server["supported_versions"] = [MODERN, rng.choice(("2027-03-01", "2027-09-15"))]
        msg = _good_call(rng, server)
        msg["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = server["supported_versions"][1]
    elif kind == "failing tool":
        name = rng.choice(list(server["tools"]))
        server["failing_tools"] = [name]
        tool = server["tools"][name]
        msg = _request(rng, server, "tools/call", {"name": name, "arguments": {a: "y" for a in tool["required"]}},
                       {tool["needs"]: {}} if tool["needs"] else {})
    elif kind in ("id 0", "a negative id", "an empty string id"):  # ids are strings or integers, any of them
        msg = {**_request(rng, server, "tools/list"), "id": {"id 0": 0, "a negative id": -rng.randint(1, 99),
                                                             "an empty string id": ""}[kind]}
    elif kind == "call":
        msg = _good_call(rng, server)
    elif kind == "read":
        msg = _request(rng, server, "resources/read", {"uri": rng.choice(server["resources"])})
    elif kind == "list":
        msg = _request(rng, server, rng.choice(("tools/list", "prompts/list")))
    else:
        msg = {"jsonrpc": "2.0", "method": rng.choice(("notifications/unknown_thing", "notifications/cancelled",
                                                       "notifications/whatever"))}
        if rng.random() < 0.5:
            msg["params"] = {"requestId": _id(rng)}
    return _line(msg, rng), server, None, f"a message that needs no error response ({kind})"


RULE_OF_CODE: dict[int | None, str] = {-32700: R_PARSE, -32600: R_INVALID, -32601: R_METHOD, -32602: R_PARAMS,
                                      -32002: R_RESOURCE, -32022: R_MODERN, -32021: R_CAPABILITY, -32603: R_INTERNAL,
                                      None: R_NO_ERROR}
"""The rule that says which code a case deserves: the rule a wrong answer broke."""


def _make_check(factory: Callable[[Any, str], Case]) -> Callable[[CheckContext, str], None]:
    def run(ctx: CheckContext, kind: str) -> None:
        line, server, expected, what = factory(ctx.rng, kind)
        got = ctx.function("choose_error_code")(line, json.loads(json.dumps(server)))
        if got != expected or type(got) is not type(expected):
            want = "None (no error response)" if expected is None else str(expected)
            rule = R_RESOURCE if what.startswith("resources/read") else RULE_OF_CODE[expected]
            if expected is None and got in (-32022, -32021):  # refused for a version or capability it has
                rule = RULE_OF_CODE[got]
            if what.startswith("valid JSON but not a valid request") or (expected is None and got == -32600):
                rule = _invalid_request_rule(line, expected)  # which member makes it invalid, or was refused
            raise CheckFailed(f"Your function returned {got!r}.", rule,
                              case=f"line:   {line!r}\nserver: {json.dumps(server)}", expected=f"{want} — {what}")
    return run


# --- generated: every envelope, against the simulator's own JSON-RPC decoder --------------------------------

_ABSENT = object()
ENVELOPE_AXES: dict[str, tuple[Any, ...]] = {
    "jsonrpc": ("2.0", _ABSENT, "1.0", 2.0),
    "method": ("tools/list", _ABSENT, "", 7, None),
    "id": (_ABSENT, 1, 0, -5, "a", "", None, 1.5, True, [1], {}),
    "params": (_ABSENT, {}, [], "x", None),
}
"""Every value of every member of a request the README names; the generated check tries all their
combinations (1,100 messages) on every seed."""
RAW_LINES = ("", " ", "{", "null", "[]", "123", '"tools/list"', '[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]',
             '{"jsonrpc":"2.0","id":1,"method":"tools/list",}', "{'jsonrpc':'2.0'}")


def envelopes() -> list[str]:
    """Every combination of :data:`ENVELOPE_AXES` as a JSON line, then the :data:`RAW_LINES`."""
    out = []
    for values in itertools.product(*ENVELOPE_AXES.values()):
        msg = {k: v for k, v in zip(ENVELOPE_AXES, values, strict=True) if v is not _ABSENT}
        out.append(json.dumps(msg, separators=(",", ":")))
    return out + list(RAW_LINES)


def simulator_envelope(line: str) -> tuple[int | None, bool]:
    """(the code the simulator's decoder answers ``line`` with, or None; whether the answer is free).

    A valid request here is ``tools/list`` on a legacy server that has it: no error is due. A malformed
    *notification* (no id, params not an object) is free: JSON-RPC calls it an Invalid Request, and the
    simulator, like MCP for every notification, does not answer it — -32600 and None both pass."""
    decoded = decode(line)
    if isinstance(decoded, InvalidMessage):
        return decoded.reply.error.code, not decoded.is_answerable
    return None, False


def _invalid_request_rule(line: str, code: int | None) -> str:
    """The rule behind an Invalid Request the answer got wrong: the id's when the id is what decides
    (null, or of another type — or a valid id refused), JSON-RPC's codes for the other members."""
    try:
        msg = json.loads(line)
    except ValueError:
        return R_PARSE
    if code is None:  # a valid request refused: a request without params has only its id to blame
        return R_ID if isinstance(msg, dict) and "params" not in msg else R_PARSE
    others_valid = (isinstance(msg, dict) and msg.get("jsonrpc") == "2.0" and isinstance(msg.get("method"), str)
                    and bool(msg.get("method")) and isinstance(msg.get("params", {}), dict))
    if not others_valid or "id" not in msg:
        return R_PARSE
    return R_INVALID if msg["id"] is None else R_ID


def check_generated_envelopes(ctx: CheckContext, kind: str) -> None:
    server = make_server(ctx.rng, ctx.rng.choice(LEGACY))
    if "tools/list" not in server["methods"]:
        server["methods"].append("tools/list")
    server["broken_methods"] = []

    def compare(line: str, got: Any, want: tuple[int | None, bool]) -> Mismatch | None:
        code, free = want
        if (got == code and type(got) is type(code)) or (free and got in (None, -32600)):
            return None
        rule = RULE_OF_CODE.get(code, R_INVALID)
        if code == -32600 or (code is None and got == -32600):
            rule = _invalid_request_rule(line, code)
        return Mismatch(f"Your function returned {got!r}.", rule,
                        expected=f"{code!r}" + (" (or None: a notification)" if free else ""))

    exhaustive(ctx, envelopes(), learner=lambda line: ctx.function("choose_error_code")(
                   line, json.loads(json.dumps(server))),
               oracle=simulator_envelope, compare=compare,
               describe=lambda line: f"line {line!r} to a {server['revision']} server that has tools/list")


EXERCISE = Exercise(
    id="ex02_error_codes",
    title="Pick the right error code",
    chapter="02",
    summary="Decide which JSON-RPC/MCP error a server answers to a malformed or unserviceable message.",
    rules=(R_PARSE, R_INVALID, R_METHOD, R_PARAMS, R_ARGUMENT, R_RESOURCE, R_MODERN, R_INTERNAL, R_NO_ERROR),
    functions=("choose_error_code",),
    checks=(
        Check("Unreadable text → -32700", R_PARSE, _make_check(case_parse), PARSE_KINDS,
              hint="Ask first whether the text can be read as JSON at all; until it can, nothing else is known."),
        Check("JSON that is not a request → -32600", R_INVALID, _make_check(case_invalid), INVALID_KINDS,
              hint="Compare each member of the object with the Request object's definition: its type, not "
                   "only its presence (a boolean is not an integer here)."),
        Check("Unknown method → -32601", R_METHOD, _make_check(case_method), METHOD_KINDS,
              hint="Compare the method with the methods this server lists, not with every method MCP defines."),
        Check("Bad parameters → -32602", R_PARAMS, _make_check(case_params), PARAMS_KINDS,
              hint="Look inside params: the tool name, and on 2026-07-28 the _meta keys."),
        Check("A missing tool argument: -32602, or from 2025-11-25 an isError result", R_ARGUMENT, check_argument,
              ARGUMENT_KINDS, hint="The tool exists but its arguments are incomplete: compare the server's "
                                   "revision with 2025-11-25, where the tools page moved input validation "
                                   "errors to tool execution errors."),
        Check("Resource not found depends on the revision", R_RESOURCE, _make_check(case_resource),
              RESOURCE_KINDS, hint="Same situation, two codes: compare the server's revision with 2026-07-28."),
        Check("2026-07-28 negotiation errors: -32022 and -32021", R_MODERN, _make_check(case_modern),
              MODERN_KINDS, hint="Every modern request carries its version and capabilities in params._meta; "
                                 "compare them with what the server supports and what the tool needs."),
        Check("A crash in the server → -32603", R_INTERNAL, _make_check(case_internal), INTERNAL_KINDS,
              hint="Look at which of the server's handlers are listed as broken."),
        Check("No error response when none is due", R_NO_ERROR, _make_check(case_no_error), NO_ERROR_KINDS,
              hint="Some messages need no error at all: a valid request (in any version the server supports), "
                   "a tool whose own work fails, and every notification."),
        Check("Every envelope: the error code of the simulator's decoder", R_INVALID, check_generated_envelopes,
              ("every jsonrpc × method × id × params, and raw lines",), seeds=1,
              hint="Read the line in order: JSON at all, then an object with jsonrpc 2.0, a method, params as an "
                   "object, an id that is a string or an integer."),
    ),
    hints=(
        Hint("Work from the outside in, as a server does: can the text be parsed? Is it a request at all? Does "
             "the method exist? Are the params right? Only then run the handler.", R_PARSE),
        Hint("A message without an id is a notification: whatever is wrong with it (once it is valid JSON-RPC), "
             "the server must not answer it.", R_NO_ERROR),
        Hint("Two codes changed between revisions: 'resource not found' is -32002 up to 2025-11-25 and -32602 "
             "in 2026-07-28; and 2026-07-28 added -32020/-32021/-32022 for per-request negotiation.", R_RESOURCE),
        Hint("A tool whose own work fails is still a successful JSON-RPC exchange: the result says isError: true. "
             "-32603 is for the server failing to handle the request at all.", R_INTERNAL),
    ),
    forbidden=("mcp_sim.wire.jsonrpc.decode", "mcp_sim.wire.jsonrpc.parse_object", "mcp_sim.protocol.lifecycle",
               "mcp_sim.roles", "mcp_sim.transports"),
)
