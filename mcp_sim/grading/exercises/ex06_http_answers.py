"""Exercise ex06_http_answers (chapter 06): what a 2026-07-28 Streamable HTTP endpoint answers.

The learner is the HTTP front door of a modern, sessionless MCP server: given one HTTP request —
method, headers, body — ``answer`` returns the status and the JSON-RPC error code (if any) the server
must give. The requests are real: a simulated 2026-07-28 client's POSTs, recorded while it talked to
the weather server (:mod:`mcp_sim.scenarios`), then altered as each case kind says (a header dropped
or changed, a GET, a notification, a cut body …). The expected answer is never typed here: the grader
replays the request against the simulator's own endpoint
(:class:`~mcp_sim.transports.http_server.SimulatedHttpServer`, 2026-07-28 only) and reads its answer.
Every seed tries every kind; the seed picks the recorded scenario, the request and the spelling.
"""

from __future__ import annotations

import copy
import functools
import json
from dataclasses import dataclass
from typing import Any

import anyio
from hypothesis import strategies as st

import mcp_sim.scenarios.weather as weather
from mcp_sim.grading.differential import Mismatch, differential
from mcp_sim.grading.model import Check, CheckContext, CheckFailed, Exercise, Hint
from mcp_sim.roles.server import Server
from mcp_sim.roles.server_session import serve
from mcp_sim.scenarios import run_scenario
from mcp_sim.sim.world import Simulation
from mcp_sim.transports.http import Headers, HttpRequest
from mcp_sim.transports.http_server import SimulatedHttpServer
from mcp_sim.wire.jsonrpc import encode

MODERN = "2026-07-28"

R_SERVED = "http.modern.method-and-name-headers"
R_CASE = "http.modern.header-names-case-insensitive"
R_HEADERS = "http.modern.header-mismatch-400"
R_VERSION = "http.modern.protocol-version-header"
R_MISSING_VERSION = "http.modern.missing-version-header"
R_NOTIFY = "http.modern.no-client-notifications"
R_POST_ONLY = "http.modern.legacy-traffic"
R_PARSE = "jsonrpc.standard-error-codes"
R_UNSUPPORTED = "http.modern.unsupported-version-400"
R_UNKNOWN_METHOD = "http.modern.unknown-method-404"
R_NULL_ID = "jsonrpc.request-id-not-null"
R_ID_TYPE = "jsonrpc.request-id-string-or-integer"
R_BATCH = "jsonrpc.batches-only-2025-03-26"
R_META = "meta.missing-field-invalid-params"
R_INITIALIZE = "versioning.modern-only-refusal-names-versions"
_KIND_RULE = {
    **{kind: R_CASE for kind in ("header names in lower case", "header names in upper case",
                                 "header names in title case", "header names in mixed case")},
    "initialize": R_INITIALIZE, "a session id from an old client": R_POST_ONLY,
    "MCP-Protocol-Version missing": R_MISSING_VERSION, "MCP-Protocol-Version differs from _meta": R_VERSION,
    "notification": R_NOTIFY, "a notification named like a request": R_NOTIFY, "GET": R_POST_ONLY,
    "DELETE": R_POST_ONLY, "unreadable JSON": R_PARSE,
    "a version the server does not support": R_UNSUPPORTED, "a method the server does not have": R_UNKNOWN_METHOD,
}

_SCENARIOS = ("prompts-and-completion", "resources-tour")
_UNKNOWN = ("ping", "logging/setLevel", "resources/subscribe", "roots/list")
_LATER = ("2026-11-30", "2027-03-01", "2027-07-28")


@functools.lru_cache(maxsize=16)
def recorded_requests(seed: int) -> tuple[dict[str, Any], ...]:
    """The POSTs a simulated 2026-07-28 client sent in one scenario: ``{"headers", "body"}`` each.
    (Remembered: a grade asks for the same few recordings many times. Read them, never change them.)"""
    scenario = _SCENARIOS[seed % len(_SCENARIOS)]
    out = []
    for event in run_scenario(scenario, revision=MODERN, transport="http", seed=seed):
        http = event.framing.get("http")
        if http is not None and event.kind == "request" and event.raw and http["request"]["method"] == "POST":
            out.append({"headers": dict(http["request"]["headers"]), "body": event.raw})
    return tuple(out)


@functools.lru_cache(maxsize=1)
def _weather_definitions() -> Server:
    """The weather server, built once per process only to lend its definitions (building the tools'
    argument models costs more than a whole replay). Never served, never changed."""
    return weather.build()


def weather_server() -> Server:
    """A fresh weather server — its own sessions, counters and task store — offering the weather
    server's tools, prompts, resources and templates (read-only definitions, shared)."""
    template = _weather_definitions()
    server = Server(template.name, template.version, title=template.title, instructions=template.instructions)
    for tool in template.tools.values():
        server.add_tool(tool)
    for prompt in template.prompts.values():
        server.add_prompt(prompt)
    for resource in template.resources.values():
        server.add_resource(resource)
    for resource_template in template.templates.values():
        server.add_resource_template(resource_template)
    return server


def replay(method: str, headers: dict[str, str], body: str) -> dict[str, Any]:
    """Send one HTTP request to a fresh simulated 2026-07-28 weather endpoint: its status and error code."""
    return dict(_replay(method, tuple(headers.items()), body))


@functools.lru_cache(maxsize=1024)
def _replay(method: str, header_items: tuple[tuple[str, str], ...], body: str) -> tuple[tuple[str, Any], ...]:
    headers = dict(header_items)
    sim = Simulation(0)
    answer: dict[str, Any] = {}

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            program = weather_server()  # one server program behind the endpoint, as in a real deployment
            server = SimulatedHttpServer(sim, tg, "weather", lambda s: serve(program, s), versions=(MODERN,))
            stream = server.connect()
            with anyio.move_on_after(60):  # a subscriptions/listen stream stays open: its head is the answer
                response = await stream.http(HttpRequest(method, "/mcp", Headers(headers), body))
                payload = response.json() if response.body else None
                error = payload.get("error") if isinstance(payload, dict) else None
                answer.update(status=response.status, error=error.get("code") if isinstance(error, dict) else None)
            if not answer:
                answer.update(status=200, error=None)  # the stream opened (200, text/event-stream) and stayed open
            await stream.aclose()
            await server.aclose()

    sim.run(main)
    return tuple(sorted(answer.items()))


def _rename(headers: dict[str, str], spell: Any) -> dict[str, str]:
    return {spell(name): value for name, value in headers.items()}


def _without(headers: dict[str, str], name: str) -> dict[str, str]:
    return {k: v for k, v in headers.items() if k.lower() != name.lower()}


PARAMS: dict[str, dict[str, Any]] = {  # one valid request of every method the weather server has
    "server/discover": {}, "tools/list": {}, "tools/call": {"name": "get_forecast", "arguments": {"city": "Oslo"}},
    "resources/list": {}, "resources/templates/list": {}, "resources/read": {"uri": "weather://stations"},
    "prompts/list": {}, "prompts/get": {"name": "plan_trip", "arguments": {"destination": "Porto", "days": "2"}},
    "completion/complete": {"ref": {"type": "ref/prompt", "name": "plan_trip"},
                            "argument": {"name": "destination", "value": "Po"}},
    "subscriptions/listen": {"notifications": {"toolsListChanged": True}},
}
NAMED_BY = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


def synthetic(method: str, like: dict[str, Any]) -> tuple[dict[str, str], str]:
    """A request of ``method`` with the ``_meta`` and headers the recorded request ``like`` has."""
    message = json.loads(like["body"])
    message["method"], meta = method, message["params"]["_meta"]
    message["params"] = {**copy.deepcopy(PARAMS[method]), "_meta": meta}
    headers = {**_without(like["headers"], "Mcp-Name"), "Mcp-Method": method}
    if method in NAMED_BY:
        headers["Mcp-Name"] = message["params"][NAMED_BY[method]]
    return headers, encode(message)


def check_every_method(ctx: CheckContext, kind: str) -> None:
    """Each method the server has, with matching headers, is served — as the simulated server does."""
    requests = recorded_requests(ctx.rng.randrange(8))
    like = next(r for r in requests if json.loads(r["body"]).get("method") == "server/discover")
    for method in PARAMS:
        headers, body = synthetic(method, like)
        truth = replay("POST", headers, body)
        got = ctx.function("answer")("POST", copy.deepcopy(headers), body)
        mine = {"status": got.get("status"), "error": got.get("error")} if isinstance(got, dict) else got
        if mine != truth:
            raise CheckFailed(f"A {method} request whose headers repeat its body:\n  headers {headers}\n  body "
                              f"{body[:220]!r}\nanswer() said {mine}: the server has this method.", R_SERVED,
                              case=method, expected=str(truth))


def make_case(ctx: CheckContext, kind: str, unknown: str = "") -> tuple[str, dict[str, str], str]:
    """The HTTP request for ``kind``: a recorded POST, changed as the kind says."""
    rng = ctx.rng
    requests = recorded_requests(rng.randrange(8))
    named = [r for r in requests if "Mcp-Name" in r["headers"]]
    plain = [r for r in requests if "Mcp-Name" not in r["headers"] and json.loads(r["body"]).get("id") is not None]
    pick = copy.deepcopy(rng.choice(plain))
    headers, body = pick["headers"], pick["body"]
    target = kind.rpartition("(")[2].rstrip(")") if kind.endswith(")") else ""
    if target in PARAMS:  # a kind about one named method: that method, on every seed
        headers, body = synthetic(target, plain[0])
    elif "Name" in kind or kind == "named request":
        pick = copy.deepcopy(rng.choice(named))
        headers, body = pick["headers"], pick["body"]
    message = json.loads(body)
    if kind in _SPELLINGS:
        headers = _rename(headers, _SPELLINGS[kind])
    elif kind == "a session id from an old client":
        headers["Mcp-Session-Id"] = ctx.rng.choice(("a1b2c3d4e5f6", "session-7", "0f9e8d7c6b5a"))
    elif kind == "MCP-Protocol-Version missing":
        headers = _without(headers, "MCP-Protocol-Version")
    elif kind == "MCP-Protocol-Version differs from _meta":
        headers["MCP-Protocol-Version"] = rng.choice(("2025-11-25", "2025-06-18"))
    elif kind == "Mcp-Method differs from method":
        headers["Mcp-Method"] = rng.choice([m for m in ("tools/list", "prompts/list", "resources/list",
                                                        "server/discover") if m != message["method"]])
    elif kind == "Mcp-Method missing":
        headers = _without(headers, "Mcp-Method")
    elif kind == "Mcp-Method in another case":  # header names ignore case; their values do not
        headers["Mcp-Method"] = message["method"].upper()
    elif kind.startswith("Mcp-Name differs from the name"):
        headers["Mcp-Name"] = rng.choice(("get_forecast", "weather://stations", "summarise", "plan_trip_v2"))
        if headers["Mcp-Name"] == (message["params"].get("name") or message["params"].get("uri")):
            headers["Mcp-Name"] += "-other"
    elif kind.startswith("Mcp-Name missing"):
        headers = _without(headers, "Mcp-Name")
    elif kind == "notification":
        message = {"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": message["id"], "reason": "the user gave up",
                              "_meta": message["params"]["_meta"]}}
        headers["Mcp-Method"] = "notifications/cancelled"
        body = encode(message)
    elif kind == "a notification named like a request":  # no id: nothing is answered, whatever the method
        message.pop("id")
        body = encode(message)
    elif kind in ("GET", "DELETE"):
        headers = {"Accept": "text/event-stream", "MCP-Protocol-Version": MODERN}
        return kind, headers, ""
    elif kind == "unreadable JSON":
        body = body[:rng.randint(5, len(body) - 5)]
    elif kind == "a version the server does not support":
        later = rng.choice(_LATER)
        message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = later
        headers["MCP-Protocol-Version"] = later
        body = encode(message)
    elif kind in ("a method the server does not have", "an unsupported version and an unknown method", "initialize"):
        method = "initialize" if kind == "initialize" else unknown or rng.choice(_UNKNOWN)
        message["method"] = method
        headers["Mcp-Method"] = method
        if kind == "an unsupported version and an unknown method":
            later = rng.choice(_LATER)
            message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = later
            headers["MCP-Protocol-Version"] = later
        body = encode(message)
    elif kind == "id null":
        body = json.dumps({**message, "id": None})
    elif kind == "an id that is a boolean":
        body = json.dumps({**message, "id": True})
    elif kind == "a JSON array body":
        body = json.dumps([message])
    elif kind == "params that are not an object":
        body = json.dumps({**message, "params": [message["params"]]})
    elif kind == "_meta that is not an object":
        message["params"]["_meta"] = [message["params"]["_meta"]]
        body = json.dumps(message)
    elif kind == "_meta without a protocol version":
        del message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"]
        body = json.dumps(message)
    return "POST", headers, body


def check_answer(ctx: CheckContext, kind: str) -> None:
    if kind == "a method the server does not have":  # every method the README names, on every seed
        for unknown in _UNKNOWN:
            _answer_one(ctx, kind, make_case(ctx, kind, unknown))
    else:
        _answer_one(ctx, kind, make_case(ctx, kind))


def _answer_one(ctx: CheckContext, kind: str, case: tuple[str, dict[str, str], str]) -> None:
    method, headers, body = case
    truth = replay(method, headers, body)
    got, after = ctx.call_and_inspect("answer", [method, copy.deepcopy(headers), body])
    if after[1] != headers:
        raise CheckFailed("answer() changed the headers it was given; read them, do not edit them.", R_SERVED)
    if not isinstance(got, dict) or not isinstance(got.get("status"), int):
        raise CheckFailed(f'answer() must return {{"status": <int>, "error": <JSON-RPC code or None>}}; got {got!r}.')
    mine = {"status": got["status"], "error": got.get("error")}
    if kind.startswith(("notification", "a notification")) and (mine["status"] == 202 or 400 <= mine["status"] < 500):
        return  # 2026-07-28 defines no client notification over HTTP: accepting it (202) or refusing it complies
    if kind in _BODY_KINDS and mine != truth:
        request = f"{method} /mcp\n  headers {headers}\n  body {body[:220]!r}"
        raise CheckFailed(f"The request\n  {request}\nanswer() said {mine}, which is not what the simulated "
                          f"2026-07-28 server answers.", _BODY_KINDS[kind], case=kind, expected=str(truth))
    if kind == "initialize" and mine == {"status": 404, "error": -32601}:
        return  # initialize is no method of 2026-07-28: "not found" complies too (the code is the server's choice)
    if mine != truth:
        request = f"{method} /mcp\n  headers {headers}\n  body {body[:220]!r}"
        rule = _KIND_RULE.get(kind, R_HEADERS if kind in _MISMATCH else R_SERVED)
        raise CheckFailed(f"The request\n  {request}\nanswer() said {mine}, which is not what the simulated "
                          f"2026-07-28 server answers.", rule, case=kind, expected=str(truth))


def _mixed_case(name: str) -> str:
    return "".join(c.upper() if i % 2 else c.lower() for i, c in enumerate(name))


_SPELLINGS = {"header names in lower case": str.lower, "header names in upper case": str.upper,
              "header names in title case": str.title, "header names in mixed case": _mixed_case}
_BODY_KINDS = {"id null": R_NULL_ID, "an id that is a boolean": R_ID_TYPE, "a JSON array body": R_BATCH, "_meta without a protocol version": R_META,
               "params that are not an object": R_PARSE, "_meta that is not an object": R_META,
               "an unsupported version and an unknown method": R_UNSUPPORTED}
_NAMED_KINDS = tuple(f"named request ({m})" for m in NAMED_BY)
_SERVED = ("plain request", *_NAMED_KINDS, *_SPELLINGS, "a session id from an old client")
_MISMATCH = ("MCP-Protocol-Version missing", "MCP-Protocol-Version differs from _meta", "Mcp-Method differs from method",
             "Mcp-Method missing", "Mcp-Method in another case", *(f"Mcp-Name differs from the name ({m})" for m in NAMED_BY),
             *(f"Mcp-Name missing ({m})" for m in NAMED_BY))

# --- generated: every axis the README names, combined, against the simulated endpoint ------------------

@dataclass(frozen=True)
class Variation:
    """One request the generated check sends: a recorded POST and how it is changed (the first choice of
    every axis is "unchanged", so shrinking ends on the fewest changes)."""

    scenario: int
    pick: int
    http: str
    body: str
    rid: str
    version: str
    method: str
    version_header: str
    method_header: str
    name_header: str
    spelling: str
    session: bool

    def __str__(self) -> str:
        changes = [f"{name} {value}" for name, value in (
            ("HTTP method", self.http), ("body", self.body), ("id", self.rid), ("_meta version", self.version),
            ("method", self.method), ("MCP-Protocol-Version header", self.version_header),
            ("Mcp-Method header", self.method_header), ("Mcp-Name header", self.name_header),
            ("header names", self.spelling)) if value not in ("POST", "the message", "kept", "matching")]
        if self.session:
            changes.append("an Mcp-Session-Id header added")
        return f"recorded request {self.scenario}.{self.pick} with " + (", ".join(changes) or "no change")


_AXES = st.builds(
    Variation, st.integers(0, 1), st.integers(0, 40), st.sampled_from(("POST", "GET", "DELETE", "PUT")),
    st.sampled_from(("the message", "cut", "a JSON array", "a number", "a response", "params a list")),
    st.sampled_from(("kept", "null", "a string", "absent (a notification)", "true")),
    st.sampled_from(("kept", "absent", "a later one", "2025-11-25", "no _meta at all", "_meta a list")),
    st.sampled_from(("kept", "unknown", "initialize")),
    st.sampled_from(("matching", "absent", "different")), st.sampled_from(("matching", "absent", "different")),
    st.sampled_from(("matching", "absent", "different")),
    st.sampled_from(("kept", "lower case", "upper case", "title case", "mixed case")), st.booleans())

_SPELL = {"kept": str, "lower case": str.lower, "upper case": str.upper, "title case": str.title,
          "mixed case": _mixed_case}


def build(case: Variation) -> tuple[str, dict[str, str], str]:
    """The HTTP request a :class:`Variation` describes."""
    requests = recorded_requests(case.scenario)
    pick = requests[case.pick % len(requests)]
    message = json.loads(pick["body"])
    headers = {k: v for k, v in pick["headers"].items() if k.lower() not in ("mcp-name", "mcp-method")}
    if case.method != "kept":
        message["method"] = "initialize" if case.method == "initialize" else _UNKNOWN[case.pick % len(_UNKNOWN)]
    rid = {"kept": message.get("id"), "null": None, "a string": f"r-{case.pick}", "true": True}
    if case.rid == "absent (a notification)":
        message.pop("id", None)
    elif "id" in message or case.rid != "kept":
        message["id"] = rid[case.rid]
    params = message.setdefault("params", {})
    meta = params.get("_meta", {})
    if case.version == "no _meta at all":
        params.pop("_meta", None)
    elif case.version == "_meta a list":
        params["_meta"] = [meta]
    elif case.version == "absent":
        meta.pop("io.modelcontextprotocol/protocolVersion", None)
    elif case.version != "kept":
        meta["io.modelcontextprotocol/protocolVersion"] = _LATER[0] if case.version == "a later one" else case.version
    version = meta.get("io.modelcontextprotocol/protocolVersion", MODERN) if isinstance(params.get("_meta"), dict) \
        else MODERN
    named = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}.get(message["method"])
    wanted = {"MCP-Protocol-Version": (case.version_header, version, "2025-06-18" if version != "2025-06-18"
                                       else MODERN),
              "Mcp-Method": (case.method_header, message["method"], "tools/list" if message["method"] != "tools/list"
                             else "prompts/list")}
    if named is not None or case.name_header == "different":
        value = params.get(named) if named else None
        wanted["Mcp-Name"] = (case.name_header, value, f"{value}-other")
    headers.pop("MCP-Protocol-Version", None)
    for name, (how, same, other) in wanted.items():
        if how == "matching" and isinstance(same, str):
            headers[name] = same
        elif how == "different":
            headers[name] = other
    if case.session:
        headers["Mcp-Session-Id"] = f"session-{case.pick}"
    headers = _rename(headers, _SPELL[case.spelling])
    body = encode(message) if "id" not in message or message["id"] is not None else json.dumps(message)
    if case.body == "cut":
        body = body[:len(body) // 2]
    elif case.body == "a JSON array":
        body = json.dumps([message])
    elif case.body == "a number":
        body = str(case.pick)
    elif case.body == "a response":
        body = json.dumps({"jsonrpc": "2.0", "id": case.pick, "result": {}})
    elif case.body == "params a list":
        body = json.dumps({**message, "params": [params]})
    return case.http, headers, (body if case.http == "POST" else "")


_RULE_OF_CODE = {-32700: R_PARSE, -32600: R_NULL_ID, -32020: R_HEADERS, -32022: R_UNSUPPORTED,
                 -32601: R_UNKNOWN_METHOD, -32602: R_META}


def _rule_of(case: Variation, truth: dict[str, Any]) -> str:
    if truth["status"] == 405:
        return R_POST_ONLY
    if truth["status"] == 202:
        return R_NOTIFY
    if truth["error"] == -32600 and case.body == "a JSON array":
        return R_BATCH
    if truth["error"] == -32600 and case.body != "the message":
        return R_PARSE  # not a request object at all
    if truth["error"] == -32602 and case.method == "initialize":
        return R_INITIALIZE
    if truth["error"] is None:
        return R_CASE if case.spelling != "kept" else R_SERVED
    return _RULE_OF_CODE.get(truth["error"], R_SERVED)


def acceptable(case_is_initialize: bool, mine: dict[str, Any], truth: dict[str, Any]) -> bool:
    """Is ``mine`` an answer that complies where the simulated server answered ``truth``?"""
    if mine == truth:
        return True
    if truth == {"status": 202, "error": None} and 400 <= mine["status"] < 500:
        return True  # a refused notification complies too
    return case_is_initialize and mine == {"status": 404, "error": -32601}


def check_generated(ctx: CheckContext, kind: str) -> None:
    def learner(case: Variation) -> Any:
        method, headers, body = build(case)
        got = ctx.function("answer")(method, copy.deepcopy(headers), body)
        if not isinstance(got, dict) or not isinstance(got.get("status"), int):
            raise CheckFailed(f'answer() must return {{"status": <int>, "error": <JSON-RPC code or None>}}; got '
                              f"{got!r:.200}.")
        return {"status": got["status"], "error": got.get("error")}

    def compare(case: Variation, mine: Any, truth: Any) -> Mismatch | None:
        if acceptable(case.method == "initialize", mine, truth):
            return None
        method, headers, body = build(case)
        return Mismatch(f"The request\n  {method} /mcp\n  headers {headers}\n  body {body[:220]!r}\nanswer() said "
                        f"{mine}, which is not what the simulated 2026-07-28 server answers.", _rule_of(case, truth),
                        expected=str(truth))

    differential(ctx, _AXES, learner=learner, oracle=lambda case: replay(*build(case)), compare=compare,
                 describe=str, examples=30)


EXERCISE = Exercise(
    id="ex06_http_answers",
    title="What a 2026-07-28 Streamable HTTP endpoint answers",
    chapter="06",
    summary="Answer HTTP requests as a sessionless 2026-07-28 server does: 200 when the headers repeat the body, "
            "400/-32020 when they do not, 202 (or a refusal) for a notification, 405 for GET and DELETE, 400/-32700 "
            "for bad JSON, "
            "and the status that follows the JSON-RPC error.",
    rules=(R_SERVED, R_CASE, R_HEADERS, R_VERSION, R_MISSING_VERSION, R_NOTIFY, R_POST_ONLY, R_PARSE, R_UNSUPPORTED,
           R_UNKNOWN_METHOD, R_NULL_ID, R_ID_TYPE, R_BATCH, R_META, R_INITIALIZE),
    functions=("answer",),
    checks=(
        Check("A POST whose headers repeat its body is served", R_SERVED, check_answer, _SERVED, seeds=1,
              hint="Compare header names without case, and ignore headers the modern era does not use."),
        Check("Every method the server has is served", R_SERVED, check_every_method, ("every method",), seeds=1,
              hint="The server offers server/discover, tools, resources, prompts, completion and subscriptions/listen."),
        Check("A missing or different routing header is 400 with -32020", R_HEADERS, check_answer, _MISMATCH, seeds=1,
              hint="Check MCP-Protocol-Version against _meta, Mcp-Method against method, Mcp-Name against "
                   "params.name / params.uri — before anything else looks at the request."),
        Check("A notification is accepted with 202 (or refused)", R_NOTIFY, check_answer,
              ("notification", "a notification named like a request"),
              hint="A message without an id gets no JSON-RPC answer; HTTP still says whether it was accepted. "
                   "This revision defines no client notification over HTTP, so a refusal complies too."),
        Check("GET and DELETE are 405", R_POST_ONLY, check_answer, ("GET", "DELETE"),
              hint="A modern endpoint has no stream to open and no session to end."),
        Check("A body that is not JSON is 400 with -32700", R_PARSE, check_answer, ("unreadable JSON",),
              hint="Parse the body first; if that fails there is no method to compare the headers with."),
        Check("The status follows the JSON-RPC error", R_UNKNOWN_METHOD, check_answer,
              ("a version the server does not support", "a method the server does not have",
               "an unsupported version and an unknown method", "initialize"),
              hint="-32022 (unsupported version) is a 400 and comes before the method; -32601 (no such method) "
                   "is a 404."),
        Check("A body that is no MCP request is refused before anything else", R_NULL_ID, check_answer,
              ("id null", "an id that is a boolean", "a JSON array body", "params that are not an object", "_meta without a protocol version",
               "_meta that is not an object"),
              hint="An id is a string or an integer, never null; a JSON array is a batch, which 2026-07-28 has "
                   "not; a request without its _meta version is malformed (-32602)."),
        Check("Any request answers like the simulated server", R_SERVED, check_generated, ("generated",),
              hint="Work in the server's order: HTTP method, body, message shape, routing headers, version, "
                   "method, _meta."),
    ),
    hints=(
        Hint("Work in the order the server does: method (405), body (400/-32700), routing headers (400/-32020), "
             "then the request itself.", R_HEADERS),
        Hint("HTTP header names are case-insensitive: build a dict keyed by name.lower() first.", R_CASE),
        Hint("The server here supports only 2026-07-28 and offers server/discover, tools, resources, prompts and "
             "completion; a method outside that (ping, logging/setLevel, resources/subscribe …) is -32601.",
             R_UNKNOWN_METHOD),
    ),
    forbidden=("mcp_sim.transports", "mcp_sim.bridge", "mcp_sim.roles"),
)
