"""Exercise ex06_drops_duplicates (chapter 06): a client's request bookkeeping on a faulty link.

Links lose messages, deliver them twice, deliver them late. A client stays correct anyway if it keeps
a little bookkeeping per request: a fresh id for every request (retries included), a deadline, one
answer handed to the caller at most, and — when the deadline passes first — a cancellation in the
transport's own way (``notifications/cancelled`` on stdio and on legacy HTTP; closing the response
stream on 2026-07-28 HTTP), after which a late answer is ignored. Never reusing an id is the
legacy era's rule; in 2026-07-28 (no sessions) an id only has to differ from those still awaiting an
answer, and the course's client keeps the stricter habit in both (rule ``faults.fresh-id-per-request``).

The learner writes that bookkeeping as one step function, ``on_event(state, event, link)``: the
grader feeds it the application's calls and retries, the clock's ticks and the responses that arrive,
and checks the actions it returns after every event. Arrivals are not made up here: every request the
learner sends and every response the server gives is put through the simulator's fault model
(:class:`~mcp_sim.transports.faults.Wire` with seeded :class:`~mcp_sim.transports.faults.Faults`),
which decides whether it is dropped, duplicated or delayed. Every seed tries every case kind; the seed
picks the methods, the timeouts, the latencies and, on the lossy link, the dice.
"""

from __future__ import annotations

import copy
import heapq
import math
import random
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from mcp_sim.grading.differential import differential
from mcp_sim.grading.model import Check, CheckContext, CheckFailed, Exercise, Hint
from mcp_sim.sim.world import Simulation
from mcp_sim.transports.faults import Faults, Latency, Wire
from mcp_sim.wire.jsonrpc import JSONRPCRequest, JSONRPCResultResponse, encode

R_ONCE = "faults.duplicate-response-ignored"
R_TIMEOUT = "lifecycle.timeouts"
R_TIMEOUT_MODERN = "cancel.modern-timeouts"
R_LATE = "faults.ignore-late-response"
R_RETRY = "faults.fresh-id-per-request"
R_ID_LEGACY = "jsonrpc.legacy.request-id-unused-in-session"
R_ID_MODERN = "jsonrpc.request-id-not-in-flight"


def _timeout_rule(link: dict[str, Any]) -> str:
    return R_TIMEOUT_MODERN if link.get("revision") == "2026-07-28" else R_TIMEOUT

METHODS = ("tools/call", "resources/read", "prompts/get", "tools/list", "completion/complete")
TICK = 0.5


@dataclass
class Run:
    """One case: the link, the application's calls, the wires' faults, and the grader's bookkeeping."""

    link: dict[str, str]
    calls: list[tuple[float, str, float]]  # (at, method, timeout)
    retries: list[tuple[float, int]]  # (at, call number)
    to_server: Wire
    to_client: Wire
    service: list[float]  # the server's working time for each request it receives, in order
    queue: list[tuple[float, int, dict[str, Any]]] = field(default_factory=list)
    seq: int = 0
    used: set[Any] = field(default_factory=set)
    pending: dict[Any, float] = field(default_factory=dict)
    delivered: set[Any] = field(default_factory=set)
    cancelled: set[Any] = field(default_factory=set)
    latest: dict[int, Any] = field(default_factory=dict)  # call number → the id of its latest attempt
    served: int = 0

    def retries_of(self, request_id: Any) -> int:
        """The call number whose latest attempt is ``request_id``."""
        return next(number for number, latest in self.latest.items() if latest == request_id)

    def push(self, at: float, event: dict[str, Any]) -> None:
        self.seq += 1
        heapq.heappush(self.queue, (round(at, 3), self.seq, event))

    def transmit(self, at: float, request_id: Any, method: str) -> None:
        """The learner sent a request: the fault model decides its fate and that of each answer."""
        frame = encode(JSONRPCRequest(request_id, method, {}))
        for shipment in self.to_server.plan(frame):
            if not shipment.delivered:
                continue
            work = self.service[self.served % len(self.service)]
            self.served += 1
            answered = at + shipment.delay + work
            for back in self.to_client.plan(encode(JSONRPCResultResponse(request_id, {}))):
                if back.delivered:
                    self.push(answered + back.delay, {"type": "response", "id": request_id})


def _wires(sim: Simulation, to_server: Faults | None, to_client: Faults | None) -> tuple[Wire, Wire]:
    return Wire(sim, to_server, label="client:to_server"), Wire(sim, to_client, label="client:to_client")


_LINKS = {"stdio legacy": {"transport": "stdio", "revision": "2025-11-25"},
          "stdio modern": {"transport": "stdio", "revision": "2026-07-28"},
          "http legacy": {"transport": "http", "revision": "2025-06-18"},
          "http modern": {"transport": "http", "revision": "2026-07-28"}}


def _after_the_cancel(deadline: float, rng: Any) -> float:
    """A time after the first tick at or after ``deadline`` (which cancels the request), before the next one:
    the retry then always happens, whatever the seed draws."""
    return math.ceil(round(deadline / TICK, 6)) * TICK + rng.uniform(0.05, 0.45)


def make_run(ctx: CheckContext, kind: str) -> Run:
    """The case ``kind``: which frames the fault model drops, duplicates or delays, and what the
    application asks for when."""
    rng = ctx.rng
    sim = Simulation(rng.randrange(1 << 30))
    timeout = rng.choice((1.0, 1.5, 2.0, 3.0))
    fast = Latency.uniform(0.01, 0.2)
    link = dict(_LINKS[rng.choice(sorted(_LINKS))])
    if " over " in kind:  # the link decides how a request is cancelled: never left to the seed
        kind, _, name = kind.partition(" over ")
        link = dict(_LINKS[name])
        kind = {"a dropped request": "a dropped request over " + name,
                "a dropped response": "a dropped response over " + name}.get(kind, kind)
    calls = [(round(rng.uniform(0, 0.5), 3), rng.choice(METHODS), timeout)]
    retries: list[tuple[float, int]] = []
    service = [round(rng.uniform(0.05, 0.3), 3)]
    to_server: Faults | None = Faults(latency=fast)
    to_client: Faults | None = Faults(latency=fast)
    if kind == "a response in time":
        pass
    elif kind == "several calls at once":
        calls += [(calls[0][0] + rng.choice((0.0, 0.05, 0.1)), rng.choice(METHODS), timeout) for _ in range(3)]
    elif kind == "a duplicated response":
        to_client = Faults(latency=fast, duplicate_at=(1,))
    elif kind == "a duplicated request":
        to_server = Faults(latency=fast, duplicate_at=(1,))
    elif kind.startswith("a dropped request"):
        to_server = Faults(latency=fast, drop_at=(1,))
        link = dict(_LINKS[kind.removeprefix("a dropped request over ")])
    elif kind.startswith("a dropped response"):
        to_client = Faults(latency=fast, drop_at=(1,))
        link = dict(_LINKS[kind.removeprefix("a dropped response over ")])
    elif kind == "a late response":
        service = [timeout + rng.uniform(0.3, 2.0)]
    elif kind == "an answer just after its deadline, between ticks":  # only the event itself can cancel first
        exact = Latency.uniform(0.01, 0.01)
        to_server, to_client = Faults(latency=exact), Faults(latency=exact)
        calls = [(TICK + 0.01, calls[0][1], timeout)]
        service = [timeout + 0.1]
    elif kind == "a deadline that falls on a tick":  # sent at a tick, a whole number of ticks to wait
        calls = [(TICK, calls[0][1], timeout)]
        service = [timeout + 1.0]
    elif kind == "a late duplicate":
        service = [timeout + rng.uniform(0.3, 1.0)]
        to_client = Faults(latency=fast, duplicate_at=(1,))
    elif kind == "retry after a dropped request":
        to_server = Faults(latency=fast, drop_at=(1,))
        retries = [(_after_the_cancel(calls[0][0] + timeout, rng), 0)]
    elif kind == "retry, then the old answer arrives":
        service = [timeout + 2.5, round(rng.uniform(0.05, 0.3), 3)]
        retries = [(_after_the_cancel(calls[0][0] + timeout, rng), 0)]
    elif kind == "a lossy link":
        to_server = Faults(latency=Latency.uniform(0.05, 1.5), drop=0.25, duplicate=0.25)
        to_client = Faults(latency=Latency.uniform(0.05, 1.5), drop=0.25, duplicate=0.25)
        calls = [(round(rng.uniform(0, 3), 3), rng.choice(METHODS), timeout) for _ in range(6)]
        retries = [(c[0] + timeout + 0.6, i) for i, c in enumerate(calls) if rng.random() < 0.5]
        service = [round(rng.uniform(0.05, 0.8), 3) for _ in range(5)]
    server_wire, client_wire = _wires(sim, to_server, to_client)
    run = Run(link, sorted(calls), retries, server_wire, client_wire, service)
    for number, (at, method, limit) in enumerate(run.calls):
        run.push(at, {"type": "call", "call": number, "method": method, "timeout": limit})
    for at, number in retries:
        run.push(at, {"type": "retry", "call": number})
    end = max([c[0] for c in run.calls] + [r[0] for r in retries]) + timeout + 4.0
    tick = 0.0
    while tick <= end:
        run.push(tick, {"type": "tick"})
        tick += TICK
    return run


def _key(value: Any) -> str:
    return repr(value)


def _expected(run: Run, at: float, event: dict[str, Any]) -> tuple[list[tuple[str, str]], int]:
    """What a correct client does now: the non-send actions, and how many sends (0 or 1)."""
    out = []
    cancel = "close" if run.link == _LINKS["http modern"] else "cancel"
    for request_id, deadline in sorted(run.pending.items(), key=lambda item: (item[1], _key(item[0]))):
        if at >= deadline:
            out.append((cancel, _key(request_id)))
            del run.pending[request_id]
            run.cancelled.add(request_id)
    if event["type"] == "response" and event["id"] in run.pending:
        out.append(("deliver", _key(event["id"])))
        del run.pending[event["id"]]
        run.delivered.add(event["id"])
    sends = 1 if event["type"] == "call" or (event["type"] == "retry" and event["id"] is not None) else 0
    return sorted(out), sends


def _fail_other(got: list[tuple[str, str]], want: list[tuple[str, str]], run: Run, at: float,
                event: dict[str, Any]) -> CheckFailed:
    extra = [a for a in got if a not in want]
    missing = [a for a in want if a not in got]
    where = f"At t={at:g} s, on the event {event} ({run.link['transport']}, {run.link['revision']})"
    ids = {_key(i): i for i in run.used}
    for do, key in extra:
        rid = ids.get(key, key)
        if do == "deliver" and rid in run.delivered:
            return CheckFailed(f"{where}, on_event() handed the answer to request {key} to the caller again; it was "
                               "delivered before.", R_ONCE)
        if do == "deliver" and rid in run.cancelled:
            return CheckFailed(f"{where}, on_event() delivered the answer to request {key}, which had already timed "
                               "out and been cancelled.", R_LATE)
        if do in ("cancel", "close"):
            if any(m[1] == key for m in missing):
                continue  # cancelled the wrong way: reported below
            if rid in run.cancelled:
                return CheckFailed(f"{where}, on_event() cancelled request {key} again; it was cancelled already.",
                                   _timeout_rule(run.link))
            return CheckFailed(f"{where}, on_event() cancelled request {key}, whose deadline has not come (or "
                               "which was answered).", _timeout_rule(run.link))
    for do, key in missing:
        if do in ("cancel", "close"):
            other = [a for a in extra if a[1] == key and a[0] in ("cancel", "close")]
            how = ("closing its response stream (2026-07-28 HTTP has no notifications/cancelled)" if do == "close"
                   else "sending notifications/cancelled")
            rule = "cancel.modern-http-closes-stream" if do == "close" else _timeout_rule(run.link)
            if other:
                return CheckFailed(f"{where}, request {key} passed its deadline and on_event() said "
                                   f"{other[0][0]!r}: not this transport's way to cancel.", rule,
                                   expected=f"cancel it by {how}")
            return CheckFailed(f"{where}, request {key} has passed its deadline with no answer, and on_event() "
                               f"returned {got}: it is neither cancelled nor given up.", rule,
                               expected=f"cancel it now by {how}")
        if do == "deliver":
            return CheckFailed(f"{where}, the first answer to the pending request {key} arrived, and on_event() "
                               f"returned {got}: the caller is still waiting for it.", R_ONCE,
                               expected=f"deliver {key}")
    return CheckFailed(f"{where}, on_event() returned {got}, which is not what the course's client does here.",
                       R_ONCE, expected=f"{want} (apart from sends)")


_ON_TWO_LINKS = ("several calls at once",)
"""Kinds whose ids the two eras judge by different rules: played on a legacy link, then on a modern one, so the
rule a reused id breaks is never left to the seed."""


def drive(ctx: CheckContext, kind: str) -> None:
    if kind in _ON_TWO_LINKS:
        for link in ("stdio legacy", "http modern"):
            play(ctx, make_run(ctx, f"{kind} over {link}"))
        return
    play(ctx, make_run(ctx, kind))


def play(ctx: CheckContext, run: Run) -> None:
    """Feed ``run``'s events to the learner's ``on_event`` one by one, checking the actions after each."""
    step = ctx.function("on_event")
    state: Any = None
    while run.queue:
        at, _, event = heapq.heappop(run.queue)
        event = dict(event, at=at)
        if event["type"] == "retry":
            old = run.latest.get(event.pop("call"))
            if old is None or old not in run.cancelled:
                continue  # nothing to retry: the first attempt was answered
            event.update(id=old, method=run.calls[run.retries_of(old)][1], timeout=run.calls[run.retries_of(old)][2])
        number = event.pop("call", None) if event["type"] == "call" else None
        want, sends = _expected(run, at, event)
        answer = step(state, copy.deepcopy(event), dict(run.link))
        if not isinstance(answer, (list, tuple)) or len(answer) != 2 or not isinstance(answer[0], (list, tuple)):
            raise CheckFailed(f"on_event() must return [actions, state]; got {answer!r:.200}.", R_ONCE)
        actions, state = answer
        if not all(isinstance(a, dict) and a.get("do") in ("send", "deliver", "cancel", "close") for a in actions):
            raise CheckFailed(f'Each action is {{"do": "send"|"deliver"|"cancel"|"close", "id": ...}}; got {actions!r:.200}.',
                              R_ONCE)
        got = sorted((a["do"], _key(a.get("id"))) for a in actions if a["do"] != "send")
        if got != want:
            raise _fail_other(got, want, run, at, event)
        new = [a.get("id") for a in actions if a["do"] == "send"]
        if len(new) != sends:
            asked = "a call" if event["type"] == "call" else "a retry" if event["type"] == "retry" else "no request"
            raise CheckFailed(f"At t={at:g} s the application asked for {asked}: that is {sends} request(s) to send; "
                              f"on_event() sent {len(new)}.", R_RETRY)
        for request_id in new:
            if isinstance(request_id, bool) or not isinstance(request_id, (int, str)) or request_id in run.used:
                used = "was used before" if request_id in run.used else "is not a string or integer"
                retry = " A retry is a new request: it needs a new id." if event["type"] == "retry" else ""
                in_flight = request_id in run.pending
                rule = (R_ID_LEGACY if run.link.get("revision") != "2026-07-28" else
                        R_ID_MODERN if in_flight else R_RETRY) if request_id in run.used else R_RETRY
                raise CheckFailed(f"At t={at:g} s on_event() sent a request with id {request_id!r}, which {used}."
                                  f"{retry}", rule)
            call = number if number is not None else run.retries_of(event["id"])
            run.used.add(request_id)
            run.latest[call] = request_id
            run.pending[request_id] = round(at + event["timeout"], 3)
            run.transmit(at, request_id, event["method"])


# --- generated: any link, any fault plan, any calls and retries, through the simulator's fault model --------

_PLANS = st.tuples(st.sampled_from(sorted(_LINKS)), st.integers(1, 4), st.sampled_from((0.0, 0.3)),
                   st.sampled_from((0.0, 0.3)), st.sampled_from((0.2, 1.5)), st.sampled_from((1.0, 1.5, 2.0)),
                   st.integers(0, 15), st.integers(0, 1 << 20))


def generated_run(t: tuple[Any, ...]) -> Run:
    """A case from a plan: the link, how many calls, the drop and duplicate rates, the slowest latency, the
    timeout, which calls are retried (a bit mask) and the fault model's seed."""
    link, count, drop, duplicate, slowest, timeout, retried, seed = t
    rng = random.Random(seed)  # surface values only: start times, methods, working times
    faults = Faults(latency=Latency.uniform(0.01, slowest), drop=drop, duplicate=duplicate)
    server_wire, client_wire = _wires(Simulation(seed), faults, faults)
    calls = sorted((round(rng.uniform(0, 2), 3), rng.choice(METHODS), timeout) for _ in range(count))
    retries = [(at + timeout + 0.6, i) for i, (at, _, _) in enumerate(calls) if retried >> i & 1]
    run = Run(dict(_LINKS[link]), calls, retries, server_wire, client_wire,
              [round(rng.uniform(0.05, 0.8), 3) for _ in range(4)])
    for number, (at, method, limit) in enumerate(run.calls):
        run.push(at, {"type": "call", "call": number, "method": method, "timeout": limit})
    for at, number in retries:
        run.push(at, {"type": "retry", "call": number})
    tick, end = 0.0, max([c[0] for c in calls] + [r[0] for r in retries]) + timeout + 4.0
    while tick <= end:
        run.push(tick, {"type": "tick"})
        tick += TICK
    return run


def check_generated(ctx: CheckContext, kind: str) -> None:
    def learner(t: tuple[Any, ...]) -> None:
        play(ctx, generated_run(t))  # a wrong action raises CheckFailed, with its rule

    differential(ctx, _PLANS, learner=learner, oracle=lambda t: None, compare=lambda t, got, want: None,
                 describe=lambda t: f"{t[1]} call(s) over {t[0]}, drop {t[2]}, duplicate {t[3]}, latency up to "
                                    f"{t[4]} s, timeout {t[5]} s, retried calls mask {t[6]}, fault seed {t[7]}",
                 examples=25, raises_rule=R_ONCE)


EXERCISE = Exercise(
    id="ex06_drops_duplicates",
    title="Request bookkeeping that survives drops, duplicates and late answers",
    chapter="06",
    summary="Drive a client's requests through a faulty link: fresh ids, one answer per request, cancel at the "
            "deadline in the transport's way, ignore late and duplicate answers, retry with a new id.",
    rules=(R_ONCE, R_TIMEOUT, R_TIMEOUT_MODERN, R_LATE, R_RETRY, R_ID_LEGACY, R_ID_MODERN),
    functions=("on_event",),
    checks=(
        Check("Each answer reaches the caller once", R_ONCE, drive,
              ("a response in time", "several calls at once", "a duplicated response", "a duplicated request"),
              hint="Remember which ids are still waiting; an answer for any other id is not for the caller."),
        Check("A request past its deadline is cancelled, the transport's way", R_TIMEOUT, drive,
              ("a dropped request over stdio legacy", "a dropped request over http modern",
               "a dropped response over stdio modern", "a dropped response over http legacy",
               "a deadline that falls on a tick over stdio legacy", "a deadline that falls on a tick over http modern"),
              hint="On every event first look for waiting requests whose deadline (sent + timeout) has come."),
        Check("A late answer to a cancelled request is ignored", R_LATE, drive,
              (*(f"a late response over {link}" for link in _LINKS), "a late duplicate",
               "an answer just after its deadline, between ticks"),
              hint="A cancelled id is no longer waiting: its answer, however welcome, goes nowhere."),
        Check("A retry is a new request with a new id", R_RETRY, drive,
              (*(f"retry after a dropped request over {link}" for link in _LINKS), "retry, then the old answer arrives",
               "a lossy link"),
              hint="Never reuse an id; keep a counter in your state."),
        Check("Any fault plan is survived like the course's client", R_ONCE, check_generated, ("generated",),
              hint="Per event: cancel what has expired, then send, deliver once, or ignore."),
    ),
    hints=(
        Hint("Keep in the state: the next id, and for each waiting request its deadline. Return the state every "
             "time.", R_RETRY),
        Hint("Order inside one event: first cancel what has expired (at >= deadline), then handle the event.",
             R_TIMEOUT),
        Hint("2026-07-28 over HTTP cancels by closing the response stream (\"close\"); stdio and legacy HTTP send "
             "notifications/cancelled (\"cancel\").", R_TIMEOUT),
    ),
    forbidden=("mcp_sim.roles", "mcp_sim.transports"),
)
