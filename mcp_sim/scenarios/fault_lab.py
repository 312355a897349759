"""The fault lab: one link, seeded faults, a few concurrent calls through the real Client (course
chapter 06, transports).

Like Maelstrom's nemesis, the lab lets the connection open cleanly, then turns the faults on and runs a
small workload through the real :class:`~mcp_sim.roles.client.Client`: ``calls`` concurrent
``tools/call``s to a two-tool ``desk`` server. ``lookup`` only reads, so the caller (playing the host)
asks again after a timeout — a *new* request with a *new* id — and lets the client retry it after a
server restart (``retry_after_crash``). ``book`` changes the world, so this host never sends it twice:
a lost ``book`` ends as a timeout or as an unknown outcome. Which calls to repeat is the host's policy,
not the spec's (rule ``host.retry-only-what-is-safe``: the stdio page lets a client retry whatever was
lost, and ``idempotentHint`` is an untrusted hint). A request copied by the link is dropped by the
server session, so it does not run twice — this simulator's choice (rule
``faults.duplicate-request-not-rerun``).

Everything runs on the simulation's virtual clock and every fault is drawn from its seeded generator,
so :func:`run_fault_experiment` returns the same trace for the same :class:`Experiment`. Two views of
the result, both read by tests:

* :attr:`LabRun.calls` — each call's one outcome, as its caller saw it (a result, an error, a timeout,
  an unknown outcome, a lost connection), and the request ids that carried it;
* :func:`request_endings` — each ``tools/call`` request's ending, read from the trace alone: answered,
  timed out (the trace has the timeout and, after it, the cancellation), retried after a crash,
  outcome unknown, or lost when the link broke. A request with none of these would be a bug the
  learner could not see; :meth:`LabRun.summary` says so if it ever happens.

The widget :mod:`mcp_sim.widgets.fault_lab` only binds controls to :func:`run_fault_experiment`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Final, Literal

import anyio
from anyio.abc import TaskGroup

from mcp_sim.capabilities.context import Context
from mcp_sim.protocol.errors import McpError
from mcp_sim.roles.client import Client, OutcomeUnknown, RequestTimeout
from mcp_sim.roles.server import Server
from mcp_sim.roles.server_session import serve
from mcp_sim.sim.world import Simulation
from mcp_sim.trace.event import TraceEvent
from mcp_sim.trace.recorder import Recorder
from mcp_sim.transports import open_link
from mcp_sim.transports.base import MessageStream, TransportClosed
from mcp_sim.transports.faults import Faults, LinkFaults, Wire, faulty_memory_link
from mcp_sim.transports.http import HttpStatusError

__all__ = [
    "FAULT_KINDS",
    "CallOutcome",
    "Experiment",
    "FaultKind",
    "LabRun",
    "desk_server",
    "request_endings",
    "run_fault_experiment",
]

Unit = Literal["none", "seconds", "probability", "frame"]


@dataclass(frozen=True)
class FaultKind:
    """One kind of misbehaviour: what it does, what its amount means, and the faults it becomes."""

    name: str
    what: str
    unit: Unit
    default: float
    build: Callable[[float], LinkFaults]


def _both(make: Callable[[float], Faults]) -> Callable[[float], LinkFaults]:
    return lambda amount: LinkFaults(to_server=make(amount), to_client=make(amount))


FAULT_KINDS: Final[Mapping[str, FaultKind]] = MappingProxyType({k.name: k for k in (
    FaultKind("none", "no faults: the baseline every other run is compared with", "none", 0,
              lambda _amount: LinkFaults()),
    FaultKind("latency", "every message takes this long, in each direction", "seconds", 0.8,
              _both(lambda a: Faults(latency=a))),
    FaultKind("drop", "each message is lost with this probability", "probability", 0.3,
              _both(lambda a: Faults(drop=a))),
    FaultKind("duplicate", "each message arrives twice with this probability", "probability", 0.5,
              _both(lambda a: Faults(duplicate=a))),
    FaultKind("reorder", "each message is held back 0.3 s with this probability, so later ones overtake it",
              "probability", 0.5, _both(lambda a: Faults(reorder=a, reorder_hold=0.3))),
    FaultKind("corrupt", "each message has one character broken with this probability", "probability", 0.3,
              _both(lambda a: Faults(corrupt=a))),
    FaultKind("crash", "the server dies as the Nth message after the opening reaches it", "frame", 2,
              lambda n: LinkFaults(to_server=Faults(crash_at=int(n)))),
    FaultKind("cut", "the Nth SSE event after the opening is lost and its stream cut (HTTP only)", "frame", 1,
              lambda n: LinkFaults(to_client=Faults(cut_sse_at=int(n)))),
)})
"""Every fault the lab can inject, by name."""

CITIES: Final = ("Oslo", "Lima", "Pune", "Accra", "Quito", "Hanoi", "Perth", "Turin")


@dataclass(frozen=True)
class Experiment:
    """One run of the lab: which fault, how much, on which transport and revision, with which seed."""

    fault: str = "drop"
    amount: float | None = None
    """Seconds, a probability or a message number (see :attr:`FaultKind.unit`); ``None``: the default."""
    transport: Literal["memory", "stdio", "http"] = "stdio"
    revision: str = "2026-07-28"
    seed: int = 0
    calls: int = 4
    timeout: float = 2.0
    """Seconds (virtual) the caller waits for each request."""
    retries: int = 1
    """How many times the caller asks again for a ``lookup`` that timed out (each time with a new id)."""

    def __post_init__(self) -> None:
        if self.fault not in FAULT_KINDS:
            raise ValueError(f"unknown fault {self.fault!r}; known: {', '.join(FAULT_KINDS)}")
        if not 1 <= self.calls <= len(CITIES):
            raise ValueError(f"calls must be between 1 and {len(CITIES)}")

    @property
    def kind(self) -> FaultKind:
        return FAULT_KINDS[self.fault]

    @property
    def faults(self) -> LinkFaults:
        amount = self.kind.default if self.amount is None else self.amount
        return self.kind.build(amount)

    def describe(self) -> str:
        amount = self.kind.default if self.amount is None else self.amount
        what = {"none": "", "seconds": f" {amount:g} s", "probability": f" p={amount:g}",
                "frame": f" at #{int(amount)}"}[self.kind.unit]
        return (f"{self.fault}{what} on {self.transport}, {self.revision}, seed {self.seed}, "
                f"{self.calls} calls, timeout {self.timeout:g} s")


@dataclass(frozen=True)
class CallOutcome:
    """How one call ended for its caller, and the requests (ids) that carried it."""

    call: str
    tool: str
    outcome: str
    """``result``, ``error`` (a JSON-RPC error), ``http-error`` (refused at the HTTP level), ``timeout``,
    ``outcome-unknown`` or ``connection-lost``."""
    detail: str
    request_ids: tuple[Any, ...] = ()


@dataclass
class LabRun:
    """What one experiment produced: each call's outcome, and the trace."""

    experiment: Experiment
    calls: list[CallOutcome]
    recorder: Recorder
    opening_failed: str | None = None
    endings: dict[Any, str] = field(default_factory=dict)

    @property
    def events(self) -> list[TraceEvent]:
        return list(self.recorder.events)

    def highlights(self) -> list[TraceEvent]:
        """The events where something went wrong or was repaired: marked frames, timeouts, unreadable
        frames, stderr lines, cancellations, resumption requests, restarts and retries."""
        routine = {"priming", "session", "spawn", "shutdown"}
        return [e for e in self.recorder.events
                if (set(e.marks) - routine and e.marks != ("exit",)) or e.kind in ("timeout", "invalid", "log")
                or e.method == "notifications/cancelled" or "Last-Event-ID" in (e.text or "")]

    def counts(self) -> Counter[str]:
        """How often each repair happened in the trace."""
        events = self.recorder.events
        return Counter({
            "cancelled": sum(1 for e in events if e.method == "notifications/cancelled" and e.kind == "notification"),
            "cancelled on HTTP (the stream closes)": len({e.request_id for e in events if e.kind == "transport"
                                                          and "cancelled" in e.marks}),
            "retried with a new id": sum(1 for c in self.calls for _ in c.request_ids[1:]),
            "restarts": sum(1 for e in events if "restart" in e.marks),
            "resumed with Last-Event-ID": sum(1 for e in events if "Last-Event-ID" in (e.text or "")),
            "duplicates ignored": sum(1 for e in events if "ignored" in e.marks and "duplicate" in e.marks),
            "unreadable frames": sum(1 for e in events if e.kind == "invalid"),
        })

    def unended(self) -> list[Any]:
        """Request ids whose ending the trace does not show (always empty, or the simulator is wrong)."""
        return [rid for rid, ending in self.endings.items() if ending == "no visible ending"]

    def summary(self) -> str:
        """One line: how the calls and their requests ended, and whether every request ended visibly."""
        if self.opening_failed is not None:
            return f"The connection did not open: {self.opening_failed}"
        by_outcome = Counter(c.outcome for c in self.calls)
        by_ending = Counter(self.endings.values())
        calls = ", ".join(f"{n} {k}" for k, n in sorted(by_outcome.items()))
        requests = ", ".join(f"{n} {k}" for k, n in sorted(by_ending.items()))
        repairs = ", ".join(f"{k}: {n}" for k, n in self.counts().items() if n)
        missing = self.unended()
        verdict = ("every request ended in a response or a visible timeout, crash or cut"
                   if not missing else f"NO visible ending for request(s) {missing}")
        return (f"{len(self.calls)} calls ({calls}); {len(self.endings)} tools/call requests ({requests})"
                f"{'; ' + repairs if repairs else ''} — {verdict}.")


def desk_server() -> Server:
    """The lab's server: ``lookup`` reads (safe to repeat), ``book`` changes the world (not)."""
    desk = Server("desk", version="1.0.0")

    @desk.tool(annotations={"readOnlyHint": True, "idempotentHint": True})
    async def lookup(ctx: Context, city: str) -> str:
        """Today's weather in a city (reads only)."""
        await ctx.sleep(0.3)
        return f"{city}: {12 + len(city)} °C"

    @desk.tool(annotations={"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False})
    async def book(ctx: Context, city: str) -> str:
        """Book a desk in a city (each call books another one)."""
        await ctx.sleep(0.3)
        return f"booked a desk in {city}"

    return desk


# --- running ------------------------------------------------------------------------------------

def _arm(wire: Wire, faults: Faults | None) -> None:
    """Turn the faults on for one direction, counting message numbers from now (after the opening)."""
    if faults is None:
        return
    def later(numbers: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(wire.frames + n for n in numbers)

    wire.faults = replace(
        faults, drop_at=later(faults.drop_at), duplicate_at=later(faults.duplicate_at),
        corrupt_at=later(faults.corrupt_at),
        crash_at=None if faults.crash_at is None else wire.frames + faults.crash_at,
        disconnect_at=None if faults.disconnect_at is None else wire.frames + faults.disconnect_at,
        cut_sse_at=None if faults.cut_sse_at is None else wire.sse_events + faults.cut_sse_at)


def _wires(stream: Any, memory_server_end: Any) -> tuple[Wire, Wire]:
    """The link's two directions (to the server, to the client), whatever the transport."""
    if memory_server_end is not None:
        return stream.wire, memory_server_end.wire
    holder = getattr(stream, "process", stream)  # stdio: the process's pipes; HTTP: the client end
    return holder.to_server, holder.to_client


async def _open(sim: Simulation, tg: TaskGroup, experiment: Experiment, server: Server) -> tuple[Any, Any]:
    """The link, opened with quiet wires (faults armed later). Memory is built here so both of its
    wires are at hand; a crash fault cancels the server's task, as a dead process would end."""
    quiet = LinkFaults(to_server=Faults(), to_client=Faults())
    if experiment.transport != "memory":
        stream: MessageStream = await open_link(sim, tg, "desk", lambda s: serve(server, s),  # type: ignore[call-overload]
                                                transport=experiment.transport, revision=experiment.revision,
                                                faults=quiet)
        return stream, None
    scope = anyio.CancelScope()
    client_end, server_end = faulty_memory_link(sim, "desk", quiet, on_crash=scope.cancel)
    client_end.revision = server_end.revision = experiment.revision

    async def run_server() -> None:
        with scope:
            await serve(server, server_end)
        await server_end.aclose()

    tg.start_soon(run_server, name="server desk")
    return client_end, server_end


def outcome_of(exc: BaseException) -> str:
    """The kind of outcome a call ended with, from the exception its caller caught."""
    if isinstance(exc, OutcomeUnknown):
        return "outcome-unknown"
    if isinstance(exc, RequestTimeout):
        return "timeout"
    if isinstance(exc, McpError):
        return "error"
    if isinstance(exc, HttpStatusError):
        return "http-error"
    if isinstance(exc, TransportClosed):
        return "connection-lost"
    raise exc


def run_fault_experiment(experiment: Experiment | None = None, **options: Any) -> LabRun:
    """Run one experiment (an :class:`Experiment`, or its fields as keywords) in a fresh simulation."""
    experiment = experiment or Experiment(**options)
    sim = Simulation(experiment.seed)
    server = desk_server()
    results: dict[int, tuple[str, str]] = {}
    ids_seen: dict[int, list[Any]] = {}
    run = LabRun(experiment, [], sim.recorder)

    async def one(client: Client, i: int) -> None:
        tool = "lookup" if i % 2 == 0 else "book"
        attempts = 1 + (experiment.retries if tool == "lookup" else 0)
        for attempt in range(attempts):
            try:
                result = await client.call_tool(tool, {"city": CITIES[i]}, timeout=experiment.timeout)
                text = str((result.get("content") or [{}])[0].get("text"))
                results[i] = ("error" if result.get("isError") else "result", text)
                return
            except Exception as exc:  # every failure is an outcome; its kind is what the lab shows
                results[i] = (outcome_of(exc), f"{type(exc).__name__}: {exc}")
                if getattr(exc, "request_id", None) is not None:
                    ids_seen.setdefault(i, []).append(exc.request_id)  # type: ignore[attr-defined]
                if not isinstance(exc, RequestTimeout) or attempt + 1 == attempts:
                    return

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            stream, memory_server_end = await _open(sim, tg, experiment, server)
            client = Client("app", era="legacy" if experiment.revision < "2026" else "modern",
                            retry_after_crash=("lookup",))
            await client.connect(stream, tg)
            for wire, faults in zip(_wires(stream, memory_server_end),
                                    (experiment.faults.to_server, experiment.faults.to_client), strict=True):
                _arm(wire, faults)
            async with anyio.create_task_group() as calls:
                for i in range(experiment.calls):
                    calls.start_soon(one, client, i)
            with anyio.move_on_after(30):
                await client.close()
            tg.cancel_scope.cancel()

    sim.run(main)
    trace = sim.recorder.events
    for i in range(experiment.calls):
        tool = "lookup" if i % 2 == 0 else "book"
        outcome, detail = results.get(i, ("no outcome", ""))
        on_trace = [e.request_id for e in trace if e.kind == "request" and e.method == "tools/call"
                    and ((e.message or {}).get("params") or {}).get("arguments") == {"city": CITIES[i]}]
        ids = tuple(sorted(set(on_trace + ids_seen.get(i, []))))
        run.calls.append(CallOutcome(f"{tool} {CITIES[i]}", tool, outcome, detail, ids))
    run.endings = request_endings(trace)
    return run


def request_endings(trace: Any) -> dict[Any, str]:
    """Each ``tools/call`` request id the client sent, with its ending as the trace shows it.

    In order of precedence: ``timed out`` (a timeout event for the id: any later answer was late and
    ignored), ``retried with a new id`` / ``outcome unknown`` (the client's note after a crash),
    ``answered`` (a response or error for the id that was delivered intact), ``refused: session gone
    (404)`` (legacy HTTP after the server forgot the session), ``lost when the link broke`` (a crash, disconnect, cut or loss after the request); otherwise ``no visible ending``."""
    events = list(getattr(trace, "events", trace))
    sent: dict[Any, int] = {}
    for e in events:
        if e.kind == "request" and e.method == "tools/call" and e.sender.startswith("client/"):
            sent.setdefault(e.request_id, e.seq)
        elif e.method == "tools/call" and e.kind in ("timeout", "app") and e.request_id is not None:
            sent.setdefault(e.request_id, 0)  # sent, but broken on the wire: only the client's note names it
    endings = {}
    for rid, seq in sent.items():
        later = [e for e in events if e.seq > seq]
        mine = [e for e in later if e.request_id == rid]
        if any(e.kind == "timeout" for e in mine):
            endings[rid] = "timed out"
        elif any(e.kind == "app" and "retry" in e.marks for e in mine):
            endings[rid] = "retried with a new id"
        elif any("outcome-unknown" in e.marks for e in mine):
            endings[rid] = "outcome unknown"
        elif any(e.kind in ("response", "error") and e.sender.startswith("server/")
                 and not {"dropped", "corrupted", "cut"} & set(e.marks) for e in mine):
            endings[rid] = "answered"
        elif any("session-expired" in e.marks for e in later):
            endings[rid] = "refused: session gone (404)"
        elif any(e.kind == "transport" and {"crash", "disconnect", "cut", "lost", "exit"} & set(e.marks)
                 and e.request_id in (None, rid) for e in later) or any("crash" in e.marks for e in events
                                                                         if e.seq == seq):
            endings[rid] = "lost when the link broke"
        else:
            endings[rid] = "no visible ending"
    return endings
