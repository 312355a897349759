"""The nemesis over Streamable HTTP, and the checks of what the server answered (chapter 12).

Over stdio the nemesis writes lines; over HTTP it posts bodies (:meth:`~.http_link.HttpProbeLink.post_raw`,
with the session's own headers, so that only the body is wrong), on the workload's session:

* ``delay`` — a pause, then a request whose body comes in two chunks with the same pause between;
* ``duplicate`` — one request posted twice at once, same id; ``reuse`` — a second request with the
  id of one still in flight;
* ``malformed`` — a body that is not JSON, one that is not UTF-8, one with ``"jsonrpc": "1.0"``, and
  a batch (a JSON array: a valid body in 2025-03-26 only);
* ``oversized`` — a request of a mebibyte;
* ``hangup`` — a ``tools/call`` on a connection of its own, closed a moment after the body is sent
  (in 2026-07-28 that *is* the cancellation; in the legacy era it is not, and the call runs on).

After each action the workload's survival probe must be answered. ``restart`` has no HTTP form: the
server behind a URL is not the checker's process.

Every frame is marked ``expect:http:<what>``, and every answer names its POST
(``framing["http"]["post_seq"]``), so :func:`check_http_nemesis` holds each POST to what the pages
allow, accepting every compliant answer:

* an unreadable body: a 4xx (with or without a JSON-RPC error), or a JSON-RPC error in a 200; the
  code, when there is one, is -32700 (or -32600) for JSON that does not parse, -32600 for an invalid
  request — ``jsonrpc.standard-error-codes``; a 5xx is ``check.http-client-fault-4xx``; silence or a
  result is ``check.malformed-frame-answered``;
* a batch outside 2025-03-26: refused the same way; a result or an accepting 2xx breaks
  ``jsonrpc.batches-only-2025-03-26`` (a batch answer is reported by the framing check); in
  2025-03-26 a batch is valid and is not judged here;
* a request sent slowly, and the first of two copies: a response carrying its id within the
  deadline (``check.request-answered``), or (a copy, an oversized body) a 4xx refusal;
* a copy posted while its id is in flight: any answer but a 5xx, or none (the client broke the id
  rule first: ``jsonrpc.legacy.request-id-unused-in-session``, ``jsonrpc.request-id-not-in-flight``);
* the server still listening afterwards: ``check.http-server-keeps-serving``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

import anyio

import mcp_sim.bridge.check.nemesis as nemesis
from mcp_sim.bridge.check.checkers import LinkRun, _finding, client_of, server_of
from mcp_sim.bridge.check.findings import Category, Finding
from mcp_sim.bridge.check.http_link import DOWN_MARK, REFUSED_MARK, HttpProbeLink
from mcp_sim.bridge.check.link import frame
from mcp_sim.bridge.check.session import EraSession
from mcp_sim.bridge.check.workloads import example_arguments
from mcp_sim.trace.event import TraceEvent

HANGUP_SETTLE: Final = 1.0
"""Seconds between a hang-up and the survival probe: long enough for a call in flight to end, so a
server that dies when it finds its client gone has died by then."""

COPY_WAIT: Final = 1.5
"""Seconds the checker waits for the answer to a copy whose id is in flight before it hangs up: the
client broke the id rule, so a server may drop the copy (the simulator's legacy session does) and
leave its POST unanswered."""

PARSE_CODES: Final = (-32700, -32600)
INVALID_CODES: Final = (-32600,)
BATCH_CODES: Final = (-32600, -32700)
"""The pages name no code for a refused batch; a JSON-RPC error about the message itself is enough."""


# --- the actions -----------------------------------------------------------------------------------

def _link(session: EraSession) -> HttpProbeLink:
    assert isinstance(session.link, HttpProbeLink)
    return session.link


def _alive(session: EraSession, rid: int) -> dict[str, Any]:
    """The cheapest request the era has, with id ``rid``: ``ping`` (legacy), ``server/discover`` (modern)."""
    method = "ping" if session.era == "legacy" else "server/discover"
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": session.params()}


async def delay(session: EraSession, variant: int) -> None:
    link, pause = _link(session), nemesis.pause_of(variant)
    await anyio.sleep(pause)
    message = _alive(session, link.new_id())
    await link.post_raw(frame(message).encode(), "nemesis:delay", f"delay:{round(pause * 1000)}ms",
                        "expect:http:delayed", like=message, cut=8 + 9 * variant, pause=pause)


async def _both(link: HttpProbeLink, first: dict[str, Any], second: dict[str, Any], action: str) -> None:
    """Post ``first`` and, while it is in flight, ``second`` (which has the same id)."""
    async with anyio.create_task_group() as group:
        group.start_soon(lambda: link.post_raw(frame(first).encode(), f"nemesis:{action}", "expect:http:request",
                                               like=first))
        await anyio.sleep(0.005)  # the first is on its way: the copy goes while it is in flight
        group.start_soon(lambda: link.post_raw(frame(second).encode(), f"nemesis:{action}", "duplicate",
                                               "expect:http:copy", like=second, hang_up_after=COPY_WAIT))


async def duplicate(session: EraSession, variant: int) -> None:
    link = _link(session)
    message = _alive(session, link.new_id())
    await _both(link, message, message, "duplicate")


async def reuse(session: EraSession, variant: int) -> None:
    link = _link(session)
    rid = link.new_id()
    second = _alive(session, rid)
    first = {**second, "method": "tools/list"} if session.offers("tools") else second
    await _both(link, first, second, "reuse")


async def malformed(session: EraSession, variant: int) -> None:
    link = _link(session)
    like = _alive(session, link.new_id())
    bad_json = nemesis._BAD_JSON[variant % len(nemesis._BAD_JSON)]
    bad_utf8 = nemesis._BAD_UTF8[variant % len(nemesis._BAD_UTF8)]
    await link.post_raw(bad_json, "nemesis:malformed", "expect:http:parse-error", like=like)
    await link.post_raw(bad_utf8, "nemesis:malformed", "expect:http:parse-error", "utf8", like=like)
    listing = {"jsonrpc": "2.0", "id": link.new_id(), "method": "tools/list", "params": session.params()}
    await link.post_raw(frame({**listing, "jsonrpc": "1.0"}).encode(), "nemesis:malformed",
                        "expect:http:invalid-request", like=listing)
    item = _alive(session, link.new_id())
    await link.post_raw(frame([item]).encode(), "nemesis:malformed", "expect:http:batch", like=item)


async def oversized(session: EraSession, variant: int, size: int = nemesis.OVERSIZED_BYTES) -> None:
    link = _link(session)
    message = _alive(session, link.new_id())
    message["params"] = {**message["params"], "_meta": {**message["params"].get("_meta", {}),
                                                        "dev.mcp-sim.check/padding": "x" * size}}
    await link.post_raw(frame(message).encode(), "nemesis:oversized", "expect:http:oversized", like=message)


async def hangup(session: EraSession, variant: int) -> None:
    """A ``tools/call`` hung up a moment after its body is sent, then a pause before the survival probe."""
    link = _link(session)
    if not session.tools and session.offers("tools"):
        listed = await session.call("tools/list", {})
        tools = ((listed or {}).get("result") or {}).get("tools")
        session.tools = [t for t in tools if isinstance(t, dict)] if isinstance(tools, list) else []
    tool = session.tools[0] if session.tools else {}
    message = {"jsonrpc": "2.0", "id": link.new_id(), "method": "tools/call",
               "params": session.params({"name": tool.get("name", "mcp-sim-check-no-such-tool"),
                                         "arguments": example_arguments(tool.get("inputSchema"))})}
    await link.post_raw(frame(message).encode(), "nemesis:hangup", "expect:http:hangup", like=message,
                        hang_up_after=nemesis.pause_of(variant) / 2)
    await anyio.sleep(HANGUP_SETTLE)


ACTIONS_RUN: dict[str, nemesis.Action] = {"delay": delay, "duplicate": duplicate, "reuse": reuse,
                                          "malformed": malformed, "oversized": oversized, "hangup": hangup}
"""The actions over HTTP, all on the workload's own session (there is no ``restart``)."""


# --- the checks ------------------------------------------------------------------------------------

@dataclass
class Answer:
    """What came back for one POST: its status, its JSON-RPC messages, or how it failed."""

    events: list[TraceEvent] = field(default_factory=list)

    @property
    def status(self) -> int | None:
        for e in self.events:
            status = ((e.framing.get("http") or {}).get("response") or {}).get("status")
            if isinstance(status, int):
                return status
        return None

    @property
    def failed(self) -> str | None:
        return next((str((e.framing.get("http") or {}).get("failed")) for e in self.events
                     if (e.framing.get("http") or {}).get("failed")), None)

    @property
    def hung_up(self) -> bool:
        return any((e.framing.get("http") or {}).get("hung_up") for e in self.events)

    def messages(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for e in self.events:
            items = e.message if isinstance(e.message, list) else [e.message]
            out += [m for m in items if isinstance(m, dict)]
        return out

    @property
    def batch(self) -> bool:
        return any(e.kind == "batch" for e in self.events)

    def codes(self) -> list[Any]:
        return [m["error"].get("code") for m in self.messages() if isinstance(m.get("error"), dict)]

    def results(self) -> list[dict[str, Any]]:
        return [m for m in self.messages() if "result" in m]

    def response_to(self, request_id: Any) -> TraceEvent | None:
        """The first event with a response (result or error) carrying ``request_id``."""
        for e in self.events:
            items = e.message if isinstance(e.message, list) else [e.message]
            if any(isinstance(m, dict) and ("result" in m or "error" in m) and m.get("id") == request_id
                   and type(m.get("id")) is type(request_id) for m in items):
                return e
        return None

    def shown(self) -> str:
        if self.status is None:
            return f"no HTTP answer ({self.failed or 'nothing came back'})"
        codes = self.codes()
        return f"HTTP {self.status}" + (f" with {codes[0]}" if codes else "")


Judge = Callable[[LinkRun, TraceEvent, Answer, float], list[Finding]]


def _rid(e: TraceEvent) -> Any:
    return e.message.get("id") if isinstance(e.message, dict) else None


def _refused(run: LinkRun, e: TraceEvent, a: Answer, what: str, wanted: tuple[int, ...],
             rule_for_accepting: str, category: Category) -> list[Finding]:
    """An unreadable or invalid body: refused with a 4xx or a JSON-RPC error of the ``wanted`` codes."""
    status = a.status
    if status is None:
        return [_finding(run, "check.malformed-frame-answered", "robustness", f"{what} got {a.shown()}", e.seq)]
    answer_seq = a.events[0].seq
    if status >= 500:
        return [_finding(run, "check.http-client-fault-4xx", "errors",
                         f"{what} got {a.shown()}: a server error, not a 4xx refusal", e.seq, response_seq=answer_seq)]
    if a.batch:
        return []  # a batch answer outside 2025-03-26: the framing check reports it
    if a.results():
        return [_finding(run, rule_for_accepting, category,
                         f"{what} was answered with a result, as if it were valid", e.seq, response_seq=answer_seq)]
    codes = a.codes()
    if codes and "utf8" not in e.marks and any(code not in wanted for code in codes):
        return [_finding(run, "jsonrpc.standard-error-codes", "errors",
                         f"{what} got {a.shown()}, not {' or '.join(map(str, wanted))}", e.seq,
                         response_seq=answer_seq)]
    if 200 <= status < 300 and not codes:
        return [_finding(run, rule_for_accepting, category,
                         f"{what} was accepted with HTTP {status} and no error", e.seq, response_seq=answer_seq)]
    return []


def parse_error(run: LinkRun, e: TraceEvent, a: Answer, deadline_ms: float) -> list[Finding]:
    what = "a body that is not UTF-8" if "utf8" in e.marks else "a body that is not JSON"
    return _refused(run, e, a, what, PARSE_CODES, "check.malformed-frame-answered", "robustness")


def invalid_request(run: LinkRun, e: TraceEvent, a: Answer, deadline_ms: float) -> list[Finding]:
    return _refused(run, e, a, 'a request with "jsonrpc": "1.0"', INVALID_CODES,
                    "check.malformed-frame-answered", "robustness")


def batch(run: LinkRun, e: TraceEvent, a: Answer, deadline_ms: float) -> list[Finding]:
    if run.revision == "2025-03-26":
        return []  # a batch is a valid body in this revision
    return _refused(run, e, a, f"a batch (a JSON array) in {run.revision}", BATCH_CODES,
                    "jsonrpc.batches-only-2025-03-26", "framing")


def _answered_in_time(run: LinkRun, e: TraceEvent, a: Answer, deadline_ms: float, what: str) -> list[Finding]:
    response = a.response_to(_rid(e))
    if response is None:
        return []
    late = (response.t_ms or 0) - (e.t_ms or 0)
    if late > deadline_ms:
        return [_finding(run, "check.request-answered", "timing",
                         f"{what} was answered after {late / 1000:.1f} s, beyond the deadline", e.seq,
                         response_seq=response.seq)]
    return []


def delayed(run: LinkRun, e: TraceEvent, a: Answer, deadline_ms: float) -> list[Finding]:
    pause = next((m.split(":", 1)[1] for m in e.marks if m.startswith("delay:")), "a pause")
    what = f"a request whose body came in two pieces {pause} apart"
    if a.response_to(_rid(e)) is not None:
        return _answered_in_time(run, e, a, deadline_ms, what)
    if any(code in PARSE_CODES for code in a.codes()):
        return [_finding(run, "check.request-answered", "framing",
                         f"{what} got {a.shown()} and no response of its own: the server read the body before "
                         "it had all of it", e.seq, response_seq=a.events[0].seq)]
    return [_finding(run, "check.request-answered", "timing", f"{what} got {a.shown()}, no response with its id",
                     e.seq)]


def request(run: LinkRun, e: TraceEvent, a: Answer, deadline_ms: float) -> list[Finding]:
    what = "a request of a mebibyte" if "expect:http:oversized" in e.marks else \
        f"{e.method} (id {_rid(e)!r}, posted twice)"
    if a.response_to(_rid(e)) is not None:
        return _answered_in_time(run, e, a, deadline_ms, what)
    status = a.status
    if status is None or 200 <= status < 300:
        return [_finding(run, "check.request-answered", "timing" if status is None else "jsonrpc",
                         f"{what} got {a.shown()}, no response with its id", e.seq)]
    if status >= 500:
        return [_finding(run, "check.http-client-fault-4xx", "errors",
                         f"{what} got {a.shown()}: a server error, not a 4xx refusal", e.seq,
                         response_seq=a.events[0].seq)]
    return []  # refused with a 4xx (413 for the size, 400 or 409 for the id): compliant


def copy(run: LinkRun, e: TraceEvent, a: Answer, deadline_ms: float) -> list[Finding]:
    what = f"a second {e.method} posted with id {_rid(e)!r} while the first was in flight"
    if a.status is not None and a.status >= 500:
        return [_finding(run, "check.http-client-fault-4xx", "errors",
                         f"{what} got {a.shown()}: a server error, not a 4xx refusal", e.seq,
                         response_seq=a.events[0].seq)]
    return []


JUDGES: Final[dict[str, Judge]] = {
    "expect:http:parse-error": parse_error, "expect:http:invalid-request": invalid_request,
    "expect:http:batch": batch, "expect:http:delayed": delayed, "expect:http:request": request,
    "expect:http:oversized": request, "expect:http:copy": copy,
}


def _stopped_serving(run: LinkRun) -> list[Finding]:
    """The first sign that nobody listens any more (a refused connection, or a survival probe that
    could not be delivered), with the nemesis frames sent before it as the suspects."""
    probes = {_key(e.request_id): e for e in run.events
              if e.sender == client_of(run.name) and "probe:alive" in e.marks}
    for e in run.events:
        if e.sender != server_of(run.name) or REFUSED_MARK not in e.marks:
            continue
        refused_id = ((e.framing.get("http") or {}).get("refused") or {}).get("id")
        status = ((e.framing.get("http") or {}).get("refused") or {}).get("status")
        probe = probes.get(_key(refused_id)) if refused_id is not None and status is None else None
        if DOWN_MARK not in e.marks and probe is None:
            continue
        suspects = [f.seq for f in run.events if f.seq < e.seq and f.sender == client_of(run.name)
                    and any(m.startswith("nemesis:") for m in f.marks)]
        after = f", after the nemesis's frames {suspects[-4:]}" if suspects else ""
        return [_finding(run, "check.http-server-keeps-serving", "robustness",
                         f"the server stopped answering ({e.text}){after}", suspects[-1] if suspects else e.seq,
                         refused_seq=e.seq, suspects=suspects[-4:])]
    return []


def _key(request_id: Any) -> str:
    return f"{type(request_id).__name__}:{request_id!r}"


def check_http_nemesis(run: LinkRun, *, deadline_ms: float) -> list[Finding]:
    """Each ``expect:http:*`` frame of the nemesis against the answer(s) to its POST, and whether the
    server kept serving. (Links without HTTP frames yield nothing.)"""
    answers: dict[int, Answer] = {}
    for e in run.events:
        post = (e.framing.get("http") or {}).get("post_seq") if e.sender == server_of(run.name) else None
        if isinstance(post, int):
            answers.setdefault(post, Answer()).events.append(e)
    out = []
    for e in run.events:
        if e.sender != client_of(run.name) or e.transport != "http":
            continue
        judge = next((JUDGES[m] for m in e.marks if m in JUDGES), None)
        if judge is not None:
            out += judge(run, e, answers.get(e.seq, Answer()), deadline_ms)
    if any(e.transport == "http" for e in run.events):
        out += _stopped_serving(run)
    return out
