"""Exercise ex05_diagnose (chapter 05): which message in this trace breaks which rule?

The learner reads a short trace of a Client and a Server — two pages of ``tools/list``, a
``tools/call``, a ``resources/read`` — and names the first message that breaks a rule, or says the
trace is sound (``diagnose``). Every seed tries every case kind: each mistake class in the era where
it can happen, and sound traces of both eras that contain decoys (a legacy -32002, a cursor echoed
correctly, structured content that does match); the seed picks ids, names, values and where the
mistake sits. The trace is built together with its answer.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from mcp_sim.grading.model import Check, CheckContext, CheckFailed, Exercise, Hint

R_SCHEMA = "tools.structured-content-conforms"
R_NOT_FOUND = "resources.not-found-modern"
R_NOT_FOUND_LEGACY = "resources.not-found-legacy"
R_CURSOR = "pagination.cursor-opaque"
R_RESULT_TYPE = "jsonrpc.result-type-required"
RULE_TAGS = {"output-schema": R_SCHEMA, "not-found-code": R_NOT_FOUND, "invented-cursor": R_CURSOR,
             "result-type": R_RESULT_TYPE}


def _rule_for(tag: str, revision: str) -> str:
    """The rule a tag names in ``revision`` (resource-not-found is a should up to 2025-11-25)."""
    if tag == "not-found-code" and revision != "2026-07-28":
        return R_NOT_FOUND_LEGACY
    return RULE_TAGS.get(tag, "")


_OUTPUT_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}, "celsius": {"type": "number"}},
                  "required": ["city", "celsius"]}


def _tool(name: str, schema: dict[str, Any] | None) -> dict[str, Any]:
    tool: dict[str, Any] = {"name": name, "description": f"The {name} tool.",
                            "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}},
                                            "required": ["city"]}}
    if schema is not None:
        tool["outputSchema"] = schema
    return tool


def build_trace(rng: Any, revision: str, mistake: str) -> tuple[dict[str, Any], int | None]:
    """A trace in ``revision`` with ``mistake`` in it (or none: ``""``), and the index of the bad message.
    ``mistake`` is a rule tag, for output-schema with how the content breaks it (``output-schema:type``)."""
    modern = revision == "2026-07-28"
    base = rng.randint(1, 50)
    ids = [base + i for i in range(4)]
    city = rng.choice(("Lisbon", "Oslo", "Quito", "Perth"))
    cursor = rng.choice(("eyJvIjoyfQ", "cGFnZS0y", "b2Zmc2V0OjI"))
    tool_name = rng.choice(("temperature", "reading", "measure"))
    names = rng.sample(["forecast", "alerts", "convert", "search"], 3)
    out: list[dict[str, Any]] = []

    def client(i: int, method: str, params: dict[str, Any]) -> None:
        if modern:
            params = {**params, "_meta": {"io.modelcontextprotocol/protocolVersion": revision}}
        out.append({"from": "client", "message": {"jsonrpc": "2.0", "id": ids[i], "method": method,
                                                  "params": params}})

    def result(i: int, body: dict[str, Any]) -> None:
        body = {"resultType": "complete", **body} if modern else body
        out.append({"from": "server", "message": {"jsonrpc": "2.0", "id": ids[i], "result": body}})

    cache = {"ttlMs": 60000, "cacheScope": "public"} if modern else {}
    client(0, "tools/list", {})
    result(0, {"tools": [_tool(names[0], None), _tool(names[1], None)], "nextCursor": cursor, **cache})
    sent = cursor if mistake != "invented-cursor" else rng.choice(("page=2", "2", cursor + "x", "offset:2"))
    client(1, "tools/list", {"cursor": sent})
    result(1, {"tools": [_tool(names[2], None), _tool(tool_name, _OUTPUT_SCHEMA)], **cache})
    structured: dict[str, Any] = {"city": city, "celsius": 12 + rng.randint(0, 15)}
    rule, _, variant = mistake.partition(":")
    if rule == "output-schema":
        if variant == "missing":
            del structured["celsius"]
        elif variant == "type":
            structured["celsius"] = str(structured["celsius"])
        else:
            structured["temp"] = structured.pop("celsius")
    calls = [("tools/call", {"name": tool_name, "arguments": {"city": city}},
              {"content": [{"type": "text", "text": json.dumps(structured)}], "structuredContent": structured}),
             ("resources/read", {"uri": f"notes://{rng.choice(('archive', 'old', 'x'))}"}, None)]
    rng.shuffle(calls)
    bad: int | None = None
    for i, (method, params, body) in enumerate(calls, start=2):
        client(i, method, params)
        if body is not None:
            if rule == "output-schema":
                bad = len(out)
            result(i, body)
        else:
            right, wrong = (-32602, -32002) if modern else (-32002, -32602)
            if mistake == "not-found-code":
                bad = len(out)
            code = wrong if mistake == "not-found-code" else right
            out.append({"from": "server", "message": {"jsonrpc": "2.0", "id": ids[i], "error": {
                "code": code, "message": "Resource not found", "data": {"uri": params["uri"]}}}})
    if mistake == "invented-cursor":
        bad = 2
    if mistake == "result-type":
        bad = rng.choice([i for i, m in enumerate(out) if "result" in m["message"]])
        out[bad]["message"]["result"].pop("resultType")
    return {"revision": revision, "messages": out}, bad


KINDS = {"output-schema:missing": ("2025-11-25", "2026-07-28"), "output-schema:type": ("2025-11-25", "2026-07-28"),
         "output-schema:renamed": ("2025-11-25",), "not-found-code": ("2025-11-25", "2026-07-28"),
         "invented-cursor": ("2025-11-25", "2026-07-28"), "result-type": ("2026-07-28",)}


def _ask(ctx: CheckContext, kind: str) -> None:
    mistake, revision = kind.rsplit(" in ", 1)
    mistake = "" if mistake == "sound trace" else mistake
    trace, bad = build_trace(ctx.rng, revision, mistake)
    got = ctx.function("diagnose")(copy.deepcopy(trace))
    listing = "\n".join(f"  [{i}] {m['from']}: {json.dumps(m['message'])}" for i, m in enumerate(trace["messages"]))
    if bad is None:
        if got is not None:
            raise CheckFailed(f"Trace ({revision}):\n{listing}\nEvery message here keeps the rules (a legacy "
                              f"-32002, an echoed cursor and matching structuredContent are all correct), so "
                              f"diagnose() should return None; it returned {got!r}.",
                              _rule_for(got.get("rule", "") if isinstance(got, dict) else "", revision))
        return
    tag = mistake.partition(":")[0]
    want = {"index": bad, "rule": tag}
    if got != want:
        raise CheckFailed(f"Trace ({revision}):\n{listing}\nOne message of this trace breaks a rule; "
                          f"diagnose() returned {got!r}, which is not it.", _rule_for(tag, revision),
                          case=f"the trace above ({revision})", expected=json.dumps(want))


def _kinds(*mistakes: str) -> tuple[str, ...]:
    return tuple(f"{m} in {era}" for m in mistakes for era in KINDS[m])


EXERCISE = Exercise(
    id="ex05_diagnose",
    title="Diagnose a trace: which message breaks which rule?",
    chapter="05",
    summary="Read a Client–Server trace of tools, pagination and resources and name the first message that "
            "breaks a rule, in either era.",
    rules=(R_SCHEMA, R_NOT_FOUND, R_NOT_FOUND_LEGACY, R_CURSOR, R_RESULT_TYPE),
    functions=("diagnose",),
    checks=(
        Check("Sound traces are sound", R_NOT_FOUND_LEGACY, _ask, ("sound trace in 2025-11-25", "sound trace in 2026-07-28"),
              hint="A code is only wrong for the revision it is sent in; look at the trace's revision first."),
        Check("structuredContent that breaks the outputSchema", R_SCHEMA, _ask, _kinds("output-schema:missing", "output-schema:type",
                                                                              "output-schema:renamed"),
              hint="Find the tool's outputSchema in the tools/list pages and validate the structuredContent "
                   "against it."),
        Check("The wrong not-found code for the era", R_NOT_FOUND, _ask, _kinds("not-found-code"),
              hint="Which code means 'resource not found' in this trace's revision?"),
        Check("A cursor the client made up", R_CURSOR, _ask, _kinds("invented-cursor"),
              hint="Compare each cursor a client sends with the nextCursor values it received."),
        Check("A modern result without resultType", R_RESULT_TYPE, _ask, _kinds("result-type"),
              hint="In 2026-07-28, which member must every result have?"),
    ),
    hints=(
        Hint("Walk the messages in order, remembering what you have seen: each request's method by id, the "
             "tools' outputSchemas, the cursors the server issued.", R_CURSOR),
        Hint("Responses carry no method: find it through the request with the same id. Then ask what that "
             "method's answer must look like in this revision.", R_NOT_FOUND),
        Hint("Return {\"index\": i, \"rule\": tag} with one of the tags \"output-schema\", \"not-found-code\", "
             "\"invented-cursor\", \"result-type\", or None for a sound trace.", R_SCHEMA),
    ),
)
