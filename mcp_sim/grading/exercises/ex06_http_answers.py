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
from typing import Any

import anyio

import mcp_sim.scenarios.weather as weather
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
_KIND_RULE = {
    "header names in another case": R_CASE, "a session id from an old client": R_POST_ONLY,
    "MCP-Protocol-Version missing": R_MISSING_VERSION, "MCP-Protocol-Version differs from _meta": R_VERSION,
    "notification": R_NOTIFY, "GET": R_POST_ONLY, "DELETE": R_POST_ONLY, "unreadable JSON": R_PARSE,
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
    sim = Simulation(0)
    answer: dict[str, Any] = {}

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            program = weather_server()  # one server program behind the endpoint, as in a real deployment
            server = SimulatedHttpServer(sim, tg, "weather", lambda s: serve(program, s), versions=(MODERN,))
            stream = server.connect()
            response = await stream.http(HttpRequest(method, "/mcp", Headers(headers), body))
            payload = response.json() if response.body else None
            error = payload.get("error") if isinstance(payload, dict) else None
            answer.update(status=response.status, error=error.get("code") if isinstance(error, dict) else None)
            await stream.aclose()
            await server.aclose()

    sim.run(main)
    return answer


def _rename(headers: dict[str, str], spell: Any) -> dict[str, str]:
    return {spell(name): value for name, value in headers.items()}


def _without(headers: dict[str, str], name: str) -> dict[str, str]:
    return {k: v for k, v in headers.items() if k.lower() != name.lower()}


def make_case(ctx: CheckContext, kind: str) -> tuple[str, dict[str, str], str]:
    """The HTTP request for ``kind``: a recorded POST, changed as the kind says."""
    rng = ctx.rng
    requests = recorded_requests(rng.randrange(8))
    named = [r for r in requests if "Mcp-Name" in r["headers"]]
    plain = [r for r in requests if "Mcp-Name" not in r["headers"] and json.loads(r["body"]).get("id") is not None]
    pick = copy.deepcopy(rng.choice(named if "Name" in kind or kind == "named request" else plain))
    headers, body = pick["headers"], pick["body"]
    message = json.loads(body)
    if kind == "header names in another case":
        headers = _rename(headers, rng.choice((str.lower, str.upper, str.title)))
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
    elif kind == "Mcp-Name differs from the name":
        headers["Mcp-Name"] = rng.choice(("get_forecast", "weather://stations", "summarise", "plan_trip_v2"))
        if headers["Mcp-Name"] == (message["params"].get("name") or message["params"].get("uri")):
            headers["Mcp-Name"] += "-other"
    elif kind == "Mcp-Name missing":
        headers = _without(headers, "Mcp-Name")
    elif kind == "notification":
        message = {"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": message["id"], "reason": "the user gave up",
                              "_meta": message["params"]["_meta"]}}
        headers["Mcp-Method"] = "notifications/cancelled"
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
    elif kind == "a method the server does not have":
        method = rng.choice(_UNKNOWN)
        message["method"] = method
        headers["Mcp-Method"] = method
        body = encode(message)
    return "POST", headers, body


def check_answer(ctx: CheckContext, kind: str) -> None:
    method, headers, body = make_case(ctx, kind)
    truth = replay(method, headers, body)
    got, after = ctx.call_and_inspect("answer", [method, copy.deepcopy(headers), body])
    if after[1] != headers:
        raise CheckFailed("answer() changed the headers it was given; read them, do not edit them.", R_SERVED)
    if not isinstance(got, dict) or not isinstance(got.get("status"), int):
        raise CheckFailed(f'answer() must return {{"status": <int>, "error": <JSON-RPC code or None>}}; got {got!r}.')
    mine = {"status": got["status"], "error": got.get("error")}
    if kind == "notification" and (mine["status"] == 202 or 400 <= mine["status"] < 500):
        return  # 2026-07-28 defines no client notification over HTTP: accepting it (202) or refusing it complies
    if mine != truth:
        request = f"{method} /mcp\n  headers {headers}\n  body {body[:220]!r}"
        rule = _KIND_RULE.get(kind, R_HEADERS if kind in _MISMATCH else R_SERVED)
        raise CheckFailed(f"The request\n  {request}\nanswer() said {mine}, which is not what the simulated "
                          f"2026-07-28 server answers.", rule, case=kind, expected=str(truth))


_SERVED = ("plain request", "named request", "header names in another case", "a session id from an old client")
_MISMATCH = ("MCP-Protocol-Version missing", "MCP-Protocol-Version differs from _meta", "Mcp-Method differs from method",
             "Mcp-Method missing", "Mcp-Name differs from the name", "Mcp-Name missing")

EXERCISE = Exercise(
    id="ex06_http_answers",
    title="What a 2026-07-28 Streamable HTTP endpoint answers",
    chapter="06",
    summary="Answer HTTP requests as a sessionless 2026-07-28 server does: 200 when the headers repeat the body, "
            "400/-32020 when they do not, 202 (or a refusal) for a notification, 405 for GET and DELETE, 400/-32700 "
            "for bad JSON, "
            "and the status that follows the JSON-RPC error.",
    rules=(R_SERVED, R_CASE, R_HEADERS, R_VERSION, R_MISSING_VERSION, R_NOTIFY, R_POST_ONLY, R_PARSE, R_UNSUPPORTED,
           R_UNKNOWN_METHOD),
    functions=("answer",),
    checks=(
        Check("A POST whose headers repeat its body is served", R_SERVED, check_answer, _SERVED, seeds=1,
              hint="Compare header names without case, and ignore headers the modern era does not use."),
        Check("A missing or different routing header is 400 with -32020", R_HEADERS, check_answer, _MISMATCH, seeds=1,
              hint="Check MCP-Protocol-Version against _meta, Mcp-Method against method, Mcp-Name against "
                   "params.name / params.uri — before anything else looks at the request."),
        Check("A notification is accepted with 202 (or refused)", R_NOTIFY, check_answer, ("notification",),
              hint="A message without an id gets no JSON-RPC answer; HTTP still says whether it was accepted. "
                   "This revision defines no client notification over HTTP, so a refusal complies too."),
        Check("GET and DELETE are 405", R_POST_ONLY, check_answer, ("GET", "DELETE"),
              hint="A modern endpoint has no stream to open and no session to end."),
        Check("A body that is not JSON is 400 with -32700", R_PARSE, check_answer, ("unreadable JSON",),
              hint="Parse the body first; if that fails there is no method to compare the headers with."),
        Check("The status follows the JSON-RPC error", R_UNKNOWN_METHOD, check_answer,
              ("a version the server does not support", "a method the server does not have"),
              hint="-32022 (unsupported version) is a 400; -32601 (no such method) is a 404."),
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
