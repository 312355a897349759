"""Exercise ex06_legacy_sessions (chapter 06): legacy Streamable HTTP sessions, both sides.

2025-03-26 … 2025-11-25 Streamable HTTP may have sessions: the server may hand out ``Mcp-Session-Id`` on
its ``initialize`` answer, the client sends it on every later request, ``DELETE`` ends it, a missing id
is ``400`` (for a server that requires sessions) and an unknown or ended one ``404`` — after which the
client starts a new session. What the spec leaves open (``initialize`` with an id, the status of a
``DELETE`` that works) the simulated server decides, and the rules say so. The
learner writes the server's verdict (``server_status``) and the client's two decisions
(``client_headers``: does this request carry the session id? ``after_404``: what to send next).

Nothing here is a table typed by hand. The server's answers come from replaying each request against
the simulator's own legacy endpoint (:class:`~mcp_sim.transports.http_server.SimulatedHttpServer`)
after a real ``initialize`` made one session live and a ``DELETE`` ended another; the client's
decisions come from the trace of the simulator's own client, whose session the server expires in the
middle of its work. Every seed tries every kind; the seed picks the revision, the requests and the ids.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Callable
from typing import Any

import anyio
from hypothesis import strategies as st

from mcp_sim.grading.differential import Mismatch, differential
from mcp_sim.grading.exercises.ex06_http_answers import weather_server
from mcp_sim.grading.model import Check, CheckContext, CheckFailed, Exercise, Hint
from mcp_sim.roles.client import Client
from mcp_sim.roles.server_session import serve
from mcp_sim.sim.world import Simulation
from mcp_sim.transports.http import Headers, HttpRequest
from mcp_sim.transports.http_server import SimulatedHttpServer

R_MAY = "http.legacy.session-id-may"
R_CARRY = "http.legacy.session-id-carry"
R_400 = "http.legacy.missing-session-400"
R_404_SERVER = "http.legacy.ended-session-404"
R_INIT_400 = "http.legacy.initialize-with-session-400"
R_DELETE = "http.legacy.delete-200"
R_ACCEPTED = "http.legacy.accepted-202"
R_404 = "http.legacy.404-starts-over"
_KIND_RULE = {  # the rule each server case is about: the spec's, or this simulator's where the spec is silent
    "initialize without a session id": R_MAY, "initialize carrying an ended session id": R_INIT_400, "request in the live session": R_CARRY,
    "notification in the live session": R_ACCEPTED, "session id header in lower case": R_CARRY,
    "session id header in upper case": R_CARRY,
    "DELETE of the live session": R_DELETE, "initialize carrying a session id": R_INIT_400,
    "request without a session id": R_400, "request with an ended session id": R_404_SERVER,
    "request with an id never issued": R_404_SERVER, "DELETE without a session id": R_400,
    "DELETE of an ended session": R_404_SERVER, "a response in the live session": R_ACCEPTED,
    "request with the live id in another case": R_404_SERVER,
}

_REVISIONS = ("2025-06-18", "2025-11-25")
SESSION = "Mcp-Session-Id"
_LATER_CALLS: dict[str, Callable[[Client], Any]] = {
    "tools/list": lambda c: c.list_tools(),
    "prompts/list": lambda c: c.list_prompts(),
    "resources/list": lambda c: c.list_resources(),
    "tools/call": lambda c: c.call_tool("get_forecast", {"city": "Oslo"}),
}


def _weather_server(sim: Simulation, tg: Any, revision: str) -> SimulatedHttpServer:
    program = weather_server()  # one server program behind the endpoint; each session is served by it
    return SimulatedHttpServer(sim, tg, "weather", lambda s: serve(program, s), versions=(revision,))


@functools.lru_cache(maxsize=256)
def client_trace(seed: int, revision: str, first: str, second: str) -> tuple[dict[str, Any], ...]:
    """The simulator's legacy client at work: ``first``, then the server expires the session, then
    ``second`` (which meets a 404). Every POST it sent: method, session id header, HTTP status.
    (Remembered: a grade asks for the same few sessions many times. Read it, never change it.)"""
    sim = Simulation(seed)

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            server = _weather_server(sim, tg, revision)
            stream = server.connect("weather", open_get_stream=False)
            client = Client(era="legacy", versions=(revision,), sim=sim)
            await client.connect(stream, tg)
            await _LATER_CALLS[first](client)
            server.expire_session(next(iter(server.sessions)))
            await _LATER_CALLS[second](client)
            await client.close()
            await stream.aclose()
            await server.aclose()

    sim.run(main)
    posts: list[dict[str, Any]] = []
    for event in sim.recorder:
        http = event.framing.get("http")
        if http is None or http["request"]["method"] != "POST":
            continue
        if event.sender.startswith("client") and event.raw:
            posts.append({"method": event.method, "session": Headers(http["request"]["headers"]).get(SESSION),
                          "status": None, "raw": event.raw})
        elif "response" in http and posts and posts[-1]["status"] is None:
            posts[-1]["status"] = http["response"]["status"]
    return tuple(posts)


def replay(revision: str, build: Callable[[str, str, dict[str, Any]], tuple[str, dict[str, str], str]],
           bodies: dict[str, Any], seed: int = 0) -> tuple[int, str, tuple[str, dict[str, str], str]]:
    """On a fresh legacy endpoint: open one session with initialize, open and DELETE another, then
    send the request ``build(live_id, ended_id, bodies)`` makes. Its status, the live id and the
    request as sent."""
    sim = Simulation(seed)
    out: dict[str, Any] = {}

    async def open_session(stream: Any) -> str:
        head = dict(bodies["initialize headers"])
        response = await stream.http(HttpRequest("POST", "/mcp", Headers(head), bodies["initialize"]))
        return str(response.headers[SESSION])

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            server = _weather_server(sim, tg, revision)
            stream = server.connect("weather", open_get_stream=False)
            live = await open_session(stream)
            ended = await open_session(stream)
            await stream.http(HttpRequest("DELETE", "/mcp", Headers({**bodies["headers"], SESSION: ended})))
            request = build(live, ended, bodies)
            response = await stream.http(HttpRequest(request[0], "/mcp", Headers(request[1]), request[2]))
            out.update(status=response.status, live=live, request=request)
            await stream.aclose()
            await server.aclose()

    sim.run(main)
    return out["status"], out["live"], out["request"]


def _bodies(ctx: CheckContext, revision: str | None = None) -> tuple[str, dict[str, Any], tuple[dict[str, Any], ...]]:
    revision = revision or ctx.rng.choice(_REVISIONS)
    first, second = ctx.rng.sample(sorted(_LATER_CALLS), 2)
    return bodies_of(ctx.rng.randrange(4), revision, first, second)


def bodies_of(seed: int, revision: str, first: str, second: str
              ) -> tuple[str, dict[str, Any], tuple[dict[str, Any], ...]]:
    """The requests a case replays, taken from the simulator's own client at work (see :func:`client_trace`)."""
    posts = client_trace(seed, revision, first, second)
    init = next(p for p in posts if p["method"] == "initialize")
    initialized = next(p for p in posts if p["method"] == "notifications/initialized")
    request = next(p for p in posts if p["method"] == first)
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    if revision != "2025-03-26":
        headers["MCP-Protocol-Version"] = revision
    bodies = {"initialize": init["raw"], "initialized": initialized["raw"], "request": request["raw"],
              "headers": headers, "initialize headers": {k: v for k, v in headers.items() if k != "MCP-Protocol-Version"}}
    return revision, bodies, posts


def _case(kind: str, rng: Any) -> Callable[[str, str, dict[str, Any]], tuple[str, dict[str, str], str]]:
    def build(live: str, ended: str, bodies: dict[str, Any]) -> tuple[str, dict[str, str], str]:
        head = dict(bodies["headers"])
        never = "".join(rng.choice("0123456789abcdef") for _ in range(32))
        body = bodies["request"]
        if kind == "initialize without a session id":
            return "POST", dict(bodies["initialize headers"]), bodies["initialize"]
        if kind == "initialize carrying a session id":
            return "POST", {**bodies["initialize headers"], SESSION: live}, bodies["initialize"]
        if kind == "initialize carrying an ended session id":
            return "POST", {**bodies["initialize headers"], SESSION: ended}, bodies["initialize"]
        if kind == "notification in the live session":
            return "POST", {**head, SESSION: live}, bodies["initialized"]
        if kind == "a response in the live session":  # the client answering a request of the server's
            return "POST", {**head, SESSION: live}, json.dumps({"jsonrpc": "2.0", "id": 0, "result": {}})
        if kind == "request with the live id in another case":  # the header's name ignores case, its value not
            return "POST", {**head, SESSION: live.upper()}, body
        if kind == "session id header in lower case":
            return "POST", {**head, SESSION.lower(): live}, body
        if kind == "session id header in upper case":
            return "POST", {**head, SESSION.upper(): live}, body
        session = {"request in the live session": live, "request without a session id": None,
                   "request with an ended session id": ended, "request with an id never issued": never,
                   "DELETE of the live session": live, "DELETE without a session id": None,
                   "DELETE of an ended session": ended}[kind]
        if session is not None:
            head[SESSION] = session
        return ("DELETE" if kind.startswith("DELETE") else "POST"), head, ("" if kind.startswith("DELETE") else body)
    return build


def check_server(ctx: CheckContext, kind: str) -> None:
    kind, _, revision = kind.rpartition(" in ")
    revision, bodies, _ = _bodies(ctx, revision)
    status, live, (method, headers, body) = replay(revision, _case(kind, ctx.rng), bodies, ctx.rng.randrange(1 << 30))
    other = "".join(ctx.rng.choice("0123456789abcdef") for _ in range(32))  # another client's live session
    got = ctx.function("server_status")(method, copy.deepcopy(headers), body, [other, live])
    if got != status:
        raise CheckFailed(f"A {revision} server whose live session is {live} receives\n  {method} /mcp  headers "
                          f"{headers}\n  body {body[:160]!r}\nserver_status() said {got!r}, which is not what the "
                          f"simulated server answers.", _KIND_RULE[kind], case=kind, expected=str(status))


def check_client_headers(ctx: CheckContext, kind: str) -> None:
    revision, _, posts = _bodies(ctx)
    fn = ctx.function("client_headers")
    expired = next(i for i, p in enumerate(posts) if p["status"] == 404)
    window = range(0, expired) if kind == "the first session" else range(expired, len(posts))
    for index in window:
        post = posts[index]
        # What the client holds when it sends this: for initialize, whatever it held before (an old
        # session's id after a 404); for anything else, the id of its current session.
        held = post["session"] if post["method"] != "initialize" else (posts[index - 1]["session"] if index else None)
        got = fn(post["method"], held)
        if not isinstance(got, dict):
            raise CheckFailed(f"client_headers() must return a dict of headers; got {got!r}.", R_CARRY)
        mine = Headers(got).get(SESSION)
        if mine != post["session"]:
            want = f"{SESSION}: {post['session']}" if post["session"] else f"no {SESSION}"
            rule = R_404 if post["method"] == "initialize" and held else R_CARRY
            raise CheckFailed(f"{revision}: the client sends {post['method']} holding the session id {held!r}, "
                              f"and client_headers() gave {got!r}: not the session header it needs.", rule,
                              case=f"{post['method']} holding {held!r}", expected=want)


def check_after_404(ctx: CheckContext, kind: str) -> None:
    if kind.startswith("a 404 on "):  # the request that meets the 404 is the kind's, never the seed's
        second = kind.removeprefix("a 404 on ")
        first = next(m for m in sorted(_LATER_CALLS) if m != second)
        revision, _, posts = bodies_of(ctx.rng.randrange(4), ctx.rng.choice(_REVISIONS), first, second)
    else:
        revision, _, posts = _bodies(ctx)
    expired = next(i for i, p in enumerate(posts) if p["status"] == 404)
    failed = posts[expired]["method"]
    if kind == "a 200 needs nothing":
        ok = next(p for p in posts if p["status"] == 200 and p["method"] != "initialize")
        got = ctx.function("after_404")(ok["method"], 200)
        if got != []:
            raise CheckFailed(f"{ok['method']} was answered 200: the session is fine and nothing needs sending; "
                              f"after_404() said {got!r}.", R_404)
        return
    want = [p["method"] for p in posts[expired + 1:expired + 4]]
    got = ctx.function("after_404")(failed, 404)
    if got != want:
        raise CheckFailed(f"{revision}: {failed} was answered 404 (the server no longer knows the session), and "
                          f"after_404() said {got!r}: that does not start a new session and ask again.", R_404,
                          case=f"{failed} answered 404", expected=repr(want))


def _in_each(*kinds: str) -> tuple[str, ...]:
    return tuple(f"{kind} in {revision}" for kind in kinds for revision in _REVISIONS)


_SERVER_OK = _in_each("initialize without a session id", "request in the live session",
                      "notification in the live session", "a response in the live session", "session id header in lower case",
                      "session id header in upper case", "DELETE of the live session")
_SERVER_BAD = _in_each("initialize carrying a session id", "initialize carrying an ended session id", "request without a session id",
                       "request with an ended session id", "request with an id never issued",
                       "request with the live id in another case",
                       "DELETE without a session id", "DELETE of an ended session")

# --- generated: every axis of a request at once, against the simulator's own legacy endpoint --------------

_SPELL: dict[str, Callable[[str], str]] = {"Mcp-Session-Id": str, "lower case": str.lower, "upper case": str.upper, "mixed case": str.swapcase}
_REQUESTS = st.tuples(st.sampled_from(_REVISIONS), st.sampled_from(("POST", "DELETE")),
                      st.sampled_from(("a request", "initialize", "a notification")),
                      st.sampled_from(("the live one", "none", "an ended one", "one never issued")),
                      st.sampled_from(tuple(_SPELL)), st.booleans())


def _generated_build(t: tuple[Any, ...]) -> Callable[[str, str, dict[str, Any]], tuple[str, dict[str, str], str]]:
    _, method, message, session, spelling, extra_header = t

    def build(live: str, ended: str, bodies: dict[str, Any]) -> tuple[str, dict[str, str], str]:
        body = {"a request": bodies["request"], "initialize": bodies["initialize"],
                "a notification": bodies["initialized"]}[message] if method == "POST" else ""
        head = dict(bodies["initialize headers"] if message == "initialize" and method == "POST"
                    else bodies["headers"])
        held = {"the live one": live, "none": None, "an ended one": ended, "one never issued": "f" * 32}[session]
        if held is not None:
            head[_SPELL[spelling](SESSION)] = held
        if extra_header:
            head["X-Trace"] = "abc"
        return method, head, body
    return build


@functools.lru_cache(maxsize=256)
def _generated_truth(t: tuple[Any, ...]) -> tuple[int, str, tuple[str, tuple[tuple[str, str], ...], str]]:
    revision = t[0]
    _, bodies, _ = bodies_of(0, revision, "tools/list", "tools/call")
    status, live, (method, headers, body) = replay(revision, _generated_build(t), bodies)
    return status, live, (method, tuple(headers.items()), body)


def check_generated(ctx: CheckContext, kind: str) -> None:
    def learner(t: tuple[Any, ...]) -> Any:
        _, live, (method, headers, body) = _generated_truth(t)
        return ctx.function("server_status")(method, dict(headers), body, [live])

    def compare(t: tuple[Any, ...], got: Any, want: int) -> Mismatch | None:
        if got == want:
            return None
        _, live, (method, headers, body) = _generated_truth(t)
        _, _, message, session, _, _ = t
        rule = (R_INIT_400 if message == "initialize" and session != "none" else R_MAY if message == "initialize"
                else R_400 if session == "none" else R_404_SERVER if session != "the live one"
                else R_DELETE if method == "DELETE" else R_ACCEPTED if message == "a notification" else R_CARRY)
        return Mismatch(f"A {t[0]} server whose live session is {live} receives\n  {method} /mcp  headers "
                        f"{dict(headers)}\n  body {body[:160]!r}\nserver_status() said {got!r}, which is not what "
                        f"the simulated server answers.", rule, expected=str(want))

    differential(ctx, _REQUESTS.map(lambda t: t if t[1] == "POST" else (t[0], t[1], "a request", *t[3:])),
                 learner=learner, oracle=lambda t: _generated_truth(t)[0], compare=compare,
                 describe=lambda t: f"{t[1]}{f' of {t[2]}' if t[1] == 'POST' else ''} in {t[0]}, session id: "
                                    f"{t[3]}, header spelt {t[4]!r}"
                                    f"{', another header too' if t[5] else ''}", examples=25)


EXERCISE = Exercise(
    id="ex06_legacy_sessions",
    title="Legacy Streamable HTTP sessions, from both sides",
    chapter="06",
    summary="Sessions as 2025-03-26 … 2025-11-25 Streamable HTTP has them: which requests carry Mcp-Session-Id, "
            "what 400 and 404 mean, DELETE, and how a client recovers from a 404.",
    rules=(R_MAY, R_CARRY, R_400, R_404_SERVER, R_INIT_400, R_DELETE, R_ACCEPTED, R_404),
    functions=("server_status", "client_headers", "after_404"),
    checks=(
        Check("A live session's requests are served; DELETE ends it", R_CARRY, check_server, _SERVER_OK, seeds=1,
              hint="Look the id up among the live sessions; header names ignore case."),
        Check("No session id is 400; an unknown one is 404", R_400, check_server, _SERVER_BAD, seeds=1,
              hint="initialize must come without an id; everything else needs one, and it must be live."),
        Check("Any request is answered like the simulated server", R_400, check_generated, ("generated",),
              hint="initialize first (no id allowed), then: no id 400, an id not live 404, else 200 or 202."),
        Check("Every request after initialize carries the session id", R_CARRY, check_client_headers,
              ("the first session", "after a 404"),
              hint="initialize asks for a session, so it cannot carry one — not even an old one."),
        Check("On 404 the client starts a new session", R_404, check_after_404,
              (*(f"a 404 on {method}" for method in _LATER_CALLS), "a 200 needs nothing"),
              hint="The old session is gone for good: initialize, initialized, then the request again."),
    ),
    hints=(
        Hint("Server: initialize → the simulated server wants no Mcp-Session-Id on it (400 if it has one). Any other "
             "request → no id is 400, an id not in the live list is 404.", R_400),
        Hint("Client: every request except initialize carries the id the initialize answer gave.", R_CARRY),
        Hint("After a 404 forget the session id; the new initialize answer brings a new one.", R_404),
    ),
    forbidden=("mcp_sim.transports", "mcp_sim.bridge", "mcp_sim.roles"),
)
