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
import random
from typing import Any

from hypothesis import strategies as st

from mcp_sim.capabilities import tools
from mcp_sim.grading.differential import Mismatch, differential
from mcp_sim.grading.model import Check, CheckContext, CheckFailed, Exercise, Hint
from mcp_sim.protocol.revisions import get_revision

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


_OUTPUT_SCHEMA = {"type": "object", "properties": {
    "city": {"type": "string"}, "celsius": {"type": "number"}, "station": {"type": "integer"},
    "sunny": {"type": "boolean"}, "wind": {"type": "object"}, "alerts": {"type": "array"}},
    "required": ["city", "celsius"]}
_WRONG_TYPE = {  # one wrong value per property type: each type is checked on every seed
    "city": 7, "celsius": "14", "station": 2.5, "sunny": "yes", "wind": [12], "alerts": {"flood": True}}


def _tool(name: str, schema: dict[str, Any] | None) -> dict[str, Any]:
    tool: dict[str, Any] = {"name": name, "description": f"The {name} tool.",
                            "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}},
                                            "required": ["city"]}}
    if schema is not None:
        tool["outputSchema"] = schema
    return tool


def build_trace(rng: Any, revision: str, mistake: str, *, read_first: bool = False, where: int = 0,
                cursor_form: int = 0, also: str = "", schema_page: int = 1) -> tuple[dict[str, Any], int | None]:
    """A trace in ``revision`` with ``mistake`` in it (or none: ``""``), and the index of the first bad message.

    ``mistake`` is a rule tag, for output-schema with how the content breaks it (``output-schema:type``).
    What the seed does not choose: whether ``resources/read`` comes before ``tools/call`` (``read_first``),
    which result lacks ``resultType`` (``where``: 0 the first page, 1 the second, 2 the tools/call result),
    which invented cursor the client sends (``cursor_form``), which page lists the tool with the
    ``outputSchema`` (``schema_page``: 0 the first, 1 the second), and a second mistake ``also`` later in the trace."""
    modern = revision == "2026-07-28"
    base = rng.randint(1, 50)
    ids = [base + i for i in range(4)]
    city = rng.choice(("Lisbon", "Oslo", "Quito", "Perth"))
    cursor = rng.choice(("eyJvIjoyfQ", "cGFnZS0y", "b2Zmc2V0OjI"))
    tool_name = rng.choice(("temperature", "reading", "measure"))
    names = rng.sample(["forecast", "alerts", "convert", "search"], 3)
    mistakes = {m for m in (mistake, also) if m}
    tags = {m.partition(":")[0]: m.partition(":")[2] for m in mistakes}
    out: list[dict[str, Any]] = []
    bad: list[int] = []

    def client(i: int, method: str, params: dict[str, Any]) -> None:
        if modern:
            params = {**params, "_meta": {"io.modelcontextprotocol/protocolVersion": revision}}
        out.append({"from": "client", "message": {"jsonrpc": "2.0", "id": ids[i], "method": method,
                                                  "params": params}})

    results: list[int] = []

    def result(i: int, body: dict[str, Any]) -> None:
        body = {"resultType": "complete", **body} if modern else body
        results.append(len(out))
        out.append({"from": "server", "message": {"jsonrpc": "2.0", "id": ids[i], "result": body}})

    cache = {"ttlMs": 60000, "cacheScope": "public"} if modern else {}
    client(0, "tools/list", {})
    listed = [_tool(names[0], None), _tool(names[1], None), _tool(names[2], None)]
    listed.insert(1 if schema_page == 0 else 3, _tool(tool_name, _OUTPUT_SCHEMA))  # schemas come from every page
    pages = [listed[:2], listed[2:]]
    result(0, {"tools": pages[0], "nextCursor": cursor, **cache})
    invented = ("page=2", "2", cursor + "x", "offset:2", cursor.lower())[cursor_form]
    if "invented-cursor" in tags:
        bad.append(len(out))
    client(1, "tools/list", {"cursor": invented if "invented-cursor" in tags else cursor})
    result(1, {"tools": pages[1], **cache})
    structured: Any = {"city": city, "celsius": 12 + rng.randint(0, 15) + (0.5 if read_first else 0),
                       "station": rng.randint(100, 999), "sunny": rng.random() < 0.5, "wind": {"kmh": 12}, "alerts": []}
    variant = tags.get("output-schema")
    if variant == "missing":
        del structured["celsius"]
    elif variant == "type" or variant in _WRONG_TYPE:
        name = variant if variant in _WRONG_TYPE else "celsius"
        structured[name] = _WRONG_TYPE[name]
    elif variant == "renamed":
        structured["temp"] = structured.pop("celsius")
    elif variant == "a boolean for a number":
        structured["celsius"] = True
    elif variant == "not an object":
        structured = list(_OUTPUT_SCHEMA["required"])  # a list naming the properties is still no object
    content = [{"type": "text", "text": json.dumps(structured)}]
    answered = {"content": content, "structuredContent": structured}
    if variant == "no structuredContent":  # the text alone: a tool with an outputSchema must send both
        del answered["structuredContent"]
    if not mistakes:  # a decoy: a second text block is no mistake
        content.append({"type": "text", "text": f"Measured in {city}."})
    calls = [("tools/call", {"name": tool_name, "arguments": {"city": city}},
              answered),
             ("resources/read", {"uri": f"notes://{rng.choice(('archive', 'old', 'x'))}"}, None)]
    if read_first:
        calls.reverse()
    for i, (method, params, body) in enumerate(calls, start=2):
        client(i, method, params)
        if body is not None:
            if variant is not None:
                bad.append(len(out))
            result(i, body)
        else:
            right, wrong = (-32602, -32002) if modern else (-32002, -32602)
            if "not-found-code" in tags:
                bad.append(len(out))
            code = wrong if "not-found-code" in tags else right
            out.append({"from": "server", "message": {"jsonrpc": "2.0", "id": ids[i], "error": {
                "code": code, "message": "Resource not found", "data": {"uri": params["uri"]}}}})
    if "result-type" in tags:
        index = results[where]
        out[index]["message"]["result"].pop("resultType")
        bad.append(index)
    return {"revision": revision, "messages": out}, (min(bad) if bad else None)


_SCHEMA_VARIANTS = ("city", "station", "sunny", "wind", "alerts", "a boolean for a number", "not an object",
                    "no structuredContent")
KINDS = {"output-schema:missing": ("2025-11-25", "2026-07-28"), "output-schema:type": ("2025-11-25", "2026-07-28"),
         "output-schema:renamed": ("2025-11-25",),
         **{f"output-schema:{v}": ("2025-11-25",) for v in _SCHEMA_VARIANTS}, "not-found-code": ("2025-11-25", "2026-07-28"),
         "invented-cursor": ("2025-11-25", "2026-07-28"), "result-type": ("2026-07-28",)}
_ORDERS = {"call first": False, "read first": True}
_WHERE = {"on the first page": 0, "on the second page": 1, "on the tools/call result": 2}
_CURSORS = {"made up": 0, "a bare number": 1, "the issued one edited": 2, "an offset": 3, "in lower case": 4}
_TWO: dict[str, tuple[str, str, dict[str, Any]]] = {  # two mistakes: the first in the trace is the one to name
    "invented-cursor, then not-found-code": ("invented-cursor", "not-found-code", {}),
    "result-type, then output-schema:type": ("result-type", "output-schema:type", {"where": 1}),
    "not-found-code, then result-type": ("not-found-code", "result-type", {"where": 2, "read_first": True}),
}


def _build(ctx: CheckContext, kind: str) -> tuple[str, str, dict[str, Any], int | None]:
    """The kind's trace: ``<mistake>[, <variation>] in <revision>``."""
    what, revision = kind.rsplit(" in ", 1)
    mistake, _, variation = what.partition(" (")
    variation = variation.rstrip(")")
    opts: dict[str, Any] = {}
    also = ""
    if mistake in _TWO:
        mistake, also, opts = _TWO[mistake]
    elif variation in _ORDERS:
        opts["read_first"] = _ORDERS[variation]
    if mistake.partition(":")[2] in _SCHEMA_VARIANTS:  # these kinds list the schema's tool on the first page
        opts["schema_page"] = 0
    elif variation in _WHERE:
        opts["where"] = _WHERE[variation]
    elif variation in _CURSORS:
        opts["cursor_form"] = _CURSORS[variation]
    mistake = "" if mistake == "sound trace" else mistake
    trace, bad = build_trace(ctx.rng, revision, mistake, also=also, **opts)
    return mistake, revision, trace, bad


def _ask(ctx: CheckContext, kind: str) -> None:
    mistake, revision, trace, bad = _build(ctx, kind)
    got = ctx.function("diagnose")(copy.deepcopy(trace))
    listing = "\n".join(f"  [{i}] {m['from']}: {json.dumps(m['message'])}" for i, m in enumerate(trace["messages"]))
    if bad is None:
        if got is not None:
            raise CheckFailed(f"Trace ({revision}):\n{listing}\nEvery message here keeps the rules (a legacy "
                              f"-32002, an echoed cursor, a second text block and matching structuredContent are "
                              f"all correct), yet diagnose() reported {got!r}.",
                              _rule_for(got.get("rule", "") if isinstance(got, dict) else "", revision),
                              case=f"the sound trace above ({revision})", expected="None")
        return
    first = next(tag for tag in RULE_TAGS if _breaks_at(trace, bad, tag, mistake, kind))
    want = {"index": bad, "rule": first}
    if got != want:
        raise CheckFailed(f"Trace ({revision}):\n{listing}\nA message of this trace breaks a rule; "
                          f"diagnose() returned {got!r}, which does not name the first one.",
                          _rule_for(first, revision), case=f"the trace above ({revision})", expected=json.dumps(want))


def _breaks_at(trace: dict[str, Any], index: int, tag: str, mistake: str, kind: str) -> bool:
    """Whether the message at ``index`` is the one ``tag``'s mistake made (the first of two)."""
    names = [mistake.partition(":")[0]]
    what = kind.rsplit(" in ", 1)[0]
    if what in _TWO:
        names = [m.partition(":")[0] for m in _TWO[what][:2]]
    message = trace["messages"][index]["message"]
    made = {"invented-cursor": "method" in message, "not-found-code": "error" in message,
            "result-type": "result" in message and "resultType" not in message["result"],
            "output-schema": "result" in message and "content" in message["result"]}
    return tag in names and made[tag]


def _kinds(*mistakes: str, variations: tuple[str, ...] = ()) -> tuple[str, ...]:
    return tuple(f"{m}{f' ({v})' if v else ''} in {era}" for m in mistakes for era in KINDS[m.split(',')[0]]
                 for v in (variations or ("",)))


_SOUND = tuple(f"sound trace ({order}) in {era}" for era in ("2025-11-25", "2026-07-28") for order in _ORDERS)


# --- generated: any mistakes, anywhere, judged by the simulator's own facts ---------------------------------

_ONE = st.sampled_from(("", "invented-cursor", "not-found-code", "result-type",
                        *(f"output-schema:{v}" for v in ("missing", "type", "renamed", *_SCHEMA_VARIANTS))))
_TRACES = st.tuples(st.sampled_from(("2025-11-25", "2026-07-28")), _ONE, _ONE, st.booleans(), st.integers(0, 2),
                    st.integers(0, len(_CURSORS) - 1), st.integers(0, 1 << 16), st.integers(0, 1))


def _generated_trace(t: tuple[Any, ...]) -> dict[str, Any]:
    revision, first, second, read_first, where, cursor_form, seed, schema_page = t
    if revision != "2026-07-28":  # a legacy result has no resultType to forget
        first, second = (m if m != "result-type" else "" for m in (first, second))
    if first.partition(":")[0] == second.partition(":")[0]:
        second = ""
    trace, _ = build_trace(random.Random(seed), revision, first or second, also=second if first else "",
                           read_first=read_first, where=where, cursor_form=cursor_form, schema_page=schema_page)
    return trace


def first_broken(trace: dict[str, Any]) -> dict[str, Any] | None:
    """The simulator's reading of a trace: the revision table's not-found code and resultType rule, the
    tools layer's schema validation, and the cursors the server issued."""
    revision = get_revision(trace["revision"])
    asked: dict[Any, dict[str, Any]] = {}
    schemas: dict[str, dict[str, Any]] = {}
    issued: set[Any] = set()
    for index, entry in enumerate(trace["messages"]):
        message = entry["message"]
        if "method" in message:
            asked[message["id"]] = message
            cursor = message["params"].get("cursor")
            if cursor is not None and cursor not in issued:
                return {"index": index, "rule": "invented-cursor"}
            continue
        request = asked[message["id"]]
        if "error" in message:
            if request["method"] == "resources/read" and message["error"]["code"] != revision.resource_not_found_code:
                return {"index": index, "rule": "not-found-code"}
            continue
        result = message["result"]
        if revision.version == "2026-07-28" and "resultType" not in result:
            return {"index": index, "rule": "result-type"}
        for tool in result.get("tools", []):
            if "outputSchema" in tool:
                schemas[tool["name"]] = tool["outputSchema"]
        if "nextCursor" in result:
            issued.add(result["nextCursor"])
        schema = schemas.get(request["params"].get("name")) if request["method"] == "tools/call" else None
        if schema is not None and not tools.surely_valid(schema, result.get("structuredContent")):
            return {"index": index, "rule": "output-schema"}
    return None


def check_generated(ctx: CheckContext, kind: str) -> None:
    def compare(t: tuple[Any, ...], got: Any, want: dict[str, Any] | None) -> Mismatch | None:
        if got == want:
            return None
        trace = _generated_trace(t)
        listing = "\n".join(f"  [{i}] {m['from']}: {json.dumps(m['message'])}"
                             for i, m in enumerate(trace["messages"]))
        rule = _rule_for(want["rule"], trace["revision"]) if want else _rule_for(
            got.get("rule", "") if isinstance(got, dict) else "", trace["revision"])
        return Mismatch(f"Trace ({trace['revision']}):\n{listing}\ndiagnose() returned {got!r}, which is not the "
                        f"first message that breaks a rule (or None for a sound trace).", rule or R_SCHEMA,
                        expected=json.dumps(want))

    differential(ctx, _TRACES, learner=lambda t: ctx.function("diagnose")(_generated_trace(t)),
                 oracle=lambda t: first_broken(_generated_trace(t)), compare=compare,
                 describe=lambda t: f"a {t[0]} trace with {t[1] or 'no mistake'}"
                                    f"{f' and {t[2]}' if t[2] else ''} (calls {'read' if t[3] else 'call'} first, "
                                    f"resultType case {t[4]}, cursor form {t[5]}, seed {t[6]}, "
                                    f"the schema's tool on page {t[7] + 1})")


EXERCISE = Exercise(
    id="ex05_diagnose",
    title="Diagnose a trace: which message breaks which rule?",
    chapter="05",
    summary="Read a Client–Server trace of tools, pagination and resources and name the first message that "
            "breaks a rule, in either era.",
    rules=(R_SCHEMA, R_NOT_FOUND, R_NOT_FOUND_LEGACY, R_CURSOR, R_RESULT_TYPE),
    functions=("diagnose",),
    checks=(
        Check("Sound traces are sound", R_NOT_FOUND_LEGACY, _ask, _SOUND,
              hint="A code is only wrong for the revision it is sent in; look at the trace's revision first."),
        Check("structuredContent that breaks the outputSchema", R_SCHEMA, _ask,
              _kinds("output-schema:missing", "output-schema:type", "output-schema:renamed", variations=tuple(_ORDERS))
              + _kinds(*(f"output-schema:{v}" for v in _SCHEMA_VARIANTS)),
              hint="Find the tool's outputSchema in the tools/list pages and validate the structuredContent "
                   "against it."),
        Check("The wrong not-found code for the era", R_NOT_FOUND, _ask, _kinds("not-found-code", variations=tuple(_ORDERS)),
              hint="Which code means 'resource not found' in this trace's revision?"),
        Check("A cursor the client made up", R_CURSOR, _ask, _kinds("invented-cursor", variations=tuple(_CURSORS)),
              hint="Compare each cursor a client sends with the nextCursor values it received."),
        Check("A modern result without resultType", R_RESULT_TYPE, _ask, _kinds("result-type", variations=tuple(_WHERE)),
              hint="In 2026-07-28, which member must every result have?"),
        Check("Any trace is judged like the simulator", R_SCHEMA, check_generated, ("generated",),
              hint="Walk in order; remember methods by id, output schemas, issued cursors."),
        Check("With two mistakes, the first one is named", R_CURSOR, _ask,
              tuple(f"{two} in 2026-07-28" for two in _TWO),
              hint="Walk the trace in order and stop at the first message that breaks a rule."),
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
