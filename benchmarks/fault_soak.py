"""Fault soak: every transport × era × fault kind × seed, each run twice, with many concurrent
``tools/call``s through the real Client (course chapter 06, transports and faults).

Each run checks the promises the simulator makes under faults:

* **one outcome per call** — a result, an error, a timeout, an HTTP refusal, a lost connection or an unknown outcome,
  exactly once;
* **the right caller** — a result carries the text computed from that call's own arguments;
* **no hang** — the simulation ends (the virtual loop raises on a stall);
* **no silent double execution** — a tool runs twice only after a retry the trace shows as the host's
  explicit policy (``retry_after_crash``);
* **same seed, same trace** — the JSON Lines export of a re-run is byte-identical.

Beyond plain calls (surface ``calls``) the soak covers four more surfaces, each with its own server
and client side (:data:`SURFACES`):

* ``tasks`` — task-augmented ``tools/call`` (2025-11-25 tasks, the 2026-07-28 tasks extension);
* ``mrtr`` — a tool that needs the user's answer (legacy: ``elicitation/create`` sent to the client;
  2026-07-28: Multi Round-Trip Requests); the tool's *effect* (after the answer) is what is counted;
* ``subscriptions`` — one subscriber (legacy ``resources/subscribe``, 2026-07-28
  ``subscriptions/listen``) while the server changes a resource four times: **no silent miss** — the
  subscriber hears of the last change (a notification, or a gap-closing re-read) or sees a signal
  (the subscription closed or lost, the connection gone). A change notification that the fault itself
  dropped or corrupted is counted apart (``lost_on_the_wire``): a notification has no answer, so
  nothing but a re-read can notice its loss;
* ``oauth`` — calls through the whole OAuth flow (first authorization, then a step-up for a tool that
  needs more scope), Streamable HTTP only.

Every surface also checks **bounded messages per call** (:data:`MAX_MESSAGES_PER_CALL`) and counts
executions server-side. Run ``python benchmarks/fault_soak.py [--seeds N] [--calls N] [--surfaces
...]``; it prints one JSON object (runs, problems per surface, wall time). ``tests/test_fault_soak.py``
runs the same soak, small.
"""

from __future__ import annotations

import argparse
import json
import time
import traceback
from collections import Counter
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from dataclasses import dataclass, field
from typing import Any

import anyio

from mcp_sim.capabilities.context import Context
from mcp_sim.roles.client import Client, ClientCallbacks
from mcp_sim.roles.client.connection import DEFAULT_TIMEOUT
from mcp_sim.roles.server import Server
from mcp_sim.roles.server_session import serve
from mcp_sim.scenarios.authorization_story import tool_name
from mcp_sim.scenarios.fault_lab import outcome_of as lab_outcome_of
from mcp_sim.security.identity import AuthInfo, User
from mcp_sim.security.lab import server_main
from mcp_sim.security.oauth import OAuthAuthorizationServer, ScriptedUser, protected_resource_metadata
from mcp_sim.security.oauth_client import OAuthClient, with_authorization
from mcp_sim.security.oauth_web import ResourceSite, SimulatedWeb
from mcp_sim.security.tokens import AuthorizationServer, TokenRejected
from mcp_sim.sim.world import Simulation
from mcp_sim.trace.jsonl import dumps_jsonl
from mcp_sim.transports import open_link
from mcp_sim.transports.faults import Faults, LinkFaults
from mcp_sim.transports.http_server import SimulatedHttpServer

MAX_MESSAGES_PER_CALL = 80
"""More JSON-RPC messages than this per call (or per subscription update) on one run is a storm."""

TRANSPORTS = ("memory", "stdio", "http")
REVISIONS = ("2025-11-25", "2026-07-28")
KINDS: dict[str, Callable[[], Faults]] = {
    "latency": lambda: Faults(latency=0.05),
    "drop": lambda: Faults(drop=0.15),
    "duplicate": lambda: Faults(duplicate=0.3),
    "reorder": lambda: Faults(reorder=0.3, reorder_hold=0.2),
    "corrupt": lambda: Faults(corrupt=0.1),
    "crash": lambda: Faults(crash_at=4),
    "disconnect": lambda: Faults(disconnect_at=4),
    "cut": lambda: Faults(cut_sse_at=3),
    "mix": lambda: Faults(latency=0.02, drop=0.05, duplicate=0.1, reorder=0.1, corrupt=0.05),
}
TRUSTED_TOOL = "lookup"
"""The tool the host lists in ``retry_after_crash``; ``work`` is not trusted to run twice."""


@dataclass
class Run:
    """What one run produced: each call's outcomes, each token's executions, the trace."""

    outcomes: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    executions: Counter[str] = field(default_factory=Counter)
    trace: str = ""
    policy_retries: int = 0
    connect_failed: str | None = None
    messages: int = 0
    """JSON-RPC messages on the trace (every copy counted)."""
    silent_misses: list[str] = field(default_factory=list)
    """Subscriptions: changes the subscriber never heard of, with no signal either."""
    lost_on_the_wire: int = 0
    """Subscriptions: change notifications the fault itself dropped, corrupted or cut."""
    asked: Counter[str] = field(default_factory=Counter)
    """How often the user was asked: per call (``mrtr``), or to authorize (``oauth``)."""
    max_asks: int = 1
    """How often the user may be asked each of those (the same question once; one sign-in and one step-up)."""
    wire_misses: list[str] = field(default_factory=list)
    """Subscriptions: misses on a run where the fault destroyed a change notification (reported apart)."""


def _server(executions: Counter[str]) -> Server:
    server = Server("soak", version="1.0.0")

    @server.tool()
    async def work(ctx: Context, token: str, seconds: float) -> str:
        """Work for a while (not safe to repeat)."""
        executions[token] += 1
        await ctx.sleep(seconds)
        return f"done {token}"

    @server.tool()
    async def lookup(ctx: Context, token: str, seconds: float) -> str:
        """Look something up (the host trusts it to be idempotent)."""
        executions[token] += 1
        await ctx.sleep(seconds)
        return f"done {token}"

    return server


def outcome_of(exc: BaseException) -> str:
    """The kind of outcome a call ended with, classified as the fault lab of chapter 06 does; an exception
    it does not know is ``"other"``, which the soak reports as a problem."""
    try:
        return lab_outcome_of(exc)
    except Exception:
        return "other"


def run_one(transport: str, revision: str, kind: str, seed: int, *, calls: int = 6) -> Run:
    """One simulated run: connect, ``calls`` concurrent ``tools/call``s, close."""
    run = Run()
    server = _server(run.executions)

    async def one(client: Client, i: int) -> None:
        token = f"t{i}"
        tool = TRUSTED_TOOL if i % 2 else "work"
        try:
            result = await client.call_tool(tool, {"token": token, "seconds": 0.5 + 0.1 * i}, timeout=10)
            content = result.get("content") or [{}]
            run.outcomes.setdefault(token, []).append(("result", str(content[0].get("text"))))
        except Exception as exc:  # every failure is an outcome; its kind is what the soak checks
            run.outcomes.setdefault(token, []).append((outcome_of(exc), f"{type(exc).__name__}: {exc}"[:160]))

    async def body(sim: Simulation, client: Client, run: Run) -> None:
        async with anyio.create_task_group() as calls_tg:
            for i in range(calls):
                calls_tg.start_soon(one, client, i)

    return _simulate(run, transport, revision, kind, seed, server, body, timeout=DEFAULT_TIMEOUT)


def _finish(run: Run, sim: Simulation) -> None:
    run.trace = dumps_jsonl(sim.recorder)
    run.policy_retries = sum(1 for e in sim.recorder if e.kind == "app" and "trusts it to be idempotent" in (e.text or ""))
    run.messages = sum(1 for e in sim.recorder if e.message is not None)


# --- the other surfaces ---------------------------------------------------------------------------

Body = Callable[[Simulation, Client, Run], Awaitable[None]]


def _simulate(run: Run, transport: str, revision: str, kind: str, seed: int, server: Server, body: Body, *,
              callbacks: ClientCallbacks | None = None, timeout: float = 10) -> Run:
    """Connect a Client to ``server`` over a faulty link, run ``body``, close; the trace goes in ``run``."""
    sim = Simulation(seed)
    faults = KINDS[kind]()

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            stream = await open_link(sim, tg, "soak", lambda s: serve(server, s),  # type: ignore[call-overload]
                                     transport=transport, revision=revision,
                                     faults=LinkFaults(to_server=faults, to_client=faults))
            client = Client("app", era="legacy" if revision < "2026" else "modern", timeout=timeout,
                            retry_after_crash=(TRUSTED_TOOL,), callbacks=callbacks)
            try:
                await client.connect(stream, tg)
            except Exception as exc:  # a fault during the opening: no call is made
                run.connect_failed = f"{type(exc).__name__}: {exc}"
                tg.cancel_scope.cancel()
                return
            await body(sim, client, run)
            with anyio.move_on_after(30):
                await client.close()
            tg.cancel_scope.cancel()

    sim.run(main)
    _finish(run, sim)
    return run


async def _outcome(run: Run, token: str, call: Callable[[], Awaitable[str]]) -> None:
    """Record the one outcome of one call: its text, or the kind of failure."""
    try:
        text = await call()
        run.outcomes.setdefault(token, []).append(("result", text))
    except Exception as exc:  # every failure is an outcome; its kind is what the soak checks
        run.outcomes.setdefault(token, []).append((outcome_of(exc), f"{type(exc).__name__}: {exc}"[:160]))


def _text(result: dict[str, Any]) -> str:
    return str((result.get("content") or [{}])[0].get("text"))


async def _concurrently(calls: int, one: Callable[[int], Coroutine[Any, Any, None]]) -> None:
    async with anyio.create_task_group() as tg:
        for i in range(calls):
            tg.start_soon(one, i)


def run_tasks(transport: str, revision: str, kind: str, seed: int, *, calls: int = 3) -> Run:
    """Task-augmented calls: each may run once, however its polls fare."""
    run = Run()
    server = Server("soak", version="1.0.0")

    @server.tool(task_support="optional")
    async def job(ctx: Context, token: str) -> str:
        """A long job, run as a task (not safe to repeat)."""
        run.executions[token] += 1
        await ctx.sleep(1.0)
        return f"done {token}"

    async def body(sim: Simulation, client: Client, run: Run) -> None:
        async def one(i: int) -> None:
            token = f"t{i}"
            await _outcome(run, token, lambda: _as_task(client, token))
        await _concurrently(calls, one)

    async def _as_task(client: Client, token: str) -> str:
        return _text(await client.call_tool_as_task("job", {"token": token}, task_timeout=20))

    return _simulate(run, transport, revision, kind, seed, server, body)


def run_mrtr(transport: str, revision: str, kind: str, seed: int, *, calls: int = 3) -> Run:
    """Calls that need the user's answer: legacy elicitation requests, 2026-07-28 Multi Round-Trip
    Requests. The tool's effect — after the answer — runs at most once, with the answer to its own
    question."""
    run = Run()
    server = Server("soak", version="1.0.0")
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}

    @server.tool()
    async def confirm(ctx: Context, token: str) -> str:
        """Ask the user, then act (the act is not safe to repeat)."""
        answer = await ctx.elicit(f"go {token}?", schema)
        run.executions[token] += 1
        said = (answer.get("content") or {}).get("a") if isinstance(answer, dict) else None
        return f"done {token}" if said == f"yes {token}" else f"wrong answer {said!r}"

    async def user(server_name: str, params: dict[str, Any]) -> dict[str, Any]:
        token = str(params.get("message", "")).removeprefix("go ").removesuffix("?")
        run.asked[token] += 1
        return {"action": "accept", "content": {"a": f"yes {token}"}}

    async def body(sim: Simulation, client: Client, run: Run) -> None:
        async def one(i: int) -> None:
            token = f"t{i}"
            await _outcome(run, token, lambda: _confirm(client, token))
        await _concurrently(calls, one)

    async def _confirm(client: Client, token: str) -> str:
        return _text(await client.call_tool("confirm", {"token": token}))

    return _simulate(run, transport, revision, kind, seed, server, body,
                     callbacks=ClientCallbacks(elicitation=user))


UPDATES = 4
"""How many times the subscriptions surface changes its resource."""
NOTE = "note://today"


def run_subscriptions(transport: str, revision: str, kind: str, seed: int, *, calls: int = 1) -> Run:
    """One subscriber while the resource changes :data:`UPDATES` times, a second apart: after the
    last change the subscriber has heard of it, or has a signal."""
    run = Run()
    server = Server("soak", version="1.0.0")
    version = {"n": 0}
    heard: list[float] = []

    @server.resource(NOTE)
    def today() -> str:
        return f"version {version['n']}"

    def on_notification(server_name: str, method: str, params: dict[str, Any]) -> None:
        if method == "notifications/resources/updated" and params.get("uri") == NOTE:
            heard.append(anyio.current_time())

    async def body(sim: Simulation, client: Client, run: Run) -> None:
        box: dict[str, Any] = {}

        async def subscribe() -> str:
            if client.era == "modern":
                box["sub"] = await client.listen({"resourceSubscriptions": [NOTE]})
            else:
                await client.subscribe_resource(NOTE)
            return "done t0"

        await _outcome(run, "t0", subscribe)
        last = 0.0
        for _ in range(UPDATES):
            await anyio.sleep(1.0)
            version["n"] += 1
            last = anyio.current_time()
            server.resource_updated(NOTE)
        await anyio.sleep(20.0)  # time for a re-listen and its re-read
        if run.outcomes["t0"][0][0] != "result":
            return  # the subscription never began: the caller knows
        if any(t >= last for t in heard) or _signalled(client, box.get("sub")):
            return
        run.silent_misses.append(f"the change at {last:g} s was never heard of, and nothing said so "
                                 f"(heard at {[round(t, 3) for t in heard]})")

    _simulate(run, transport, revision, kind, seed, server, body,
              callbacks=ClientCallbacks(on_notification=on_notification))
    run.lost_on_the_wire = sum(1 for e in map(json.loads, run.trace.splitlines()) if _destroyed_change(e))
    if run.silent_misses and run.lost_on_the_wire:
        # The fault destroyed a change notification itself: reported apart, as the wire's doing.
        run.wire_misses, run.silent_misses = run.silent_misses, []
    return run


def _destroyed_change(event: dict[str, Any]) -> bool:
    """A server→client frame the fault dropped, corrupted or cut that was (or, unreadable, may have
    been) a change notification."""
    if not str(event.get("from", "")).startswith("server") or not {"dropped", "corrupted", "cut"} & set(
            event.get("marks") or ()):
        return False
    message = event.get("message")
    return not isinstance(message, dict) or message.get("method") == "notifications/resources/updated"


def _signalled(client: Client, sub: Any) -> bool:
    """Did the subscriber get a signal it can act on: its subscription closed or lost, a failure in
    the client's subscription log (where the client keeps one), the connection gone?"""
    if not client.connected:
        return True
    if sub is not None and (sub.closed or getattr(sub, "lost", None)):
        return True
    log = list(getattr(client, "subscription_log", None) or ())
    # a loss the client then repaired ("restored", the gap closed by a re-read) is no signal: only a
    # subscription left failed or lost at the end tells the subscriber to act (a re-listen takes a new
    # request id, so the log's last word is what counts, not an entry per id)
    return bool(log) and getattr(log[-1], "kind", None) in ("failed", "lost")


RESOURCE = "https://notes.example/mcp"
ISSUER = "https://login.example"
PRM_URL = "https://notes.example/.well-known/oauth-protected-resource/mcp"



def run_oauth(transport: str, revision: str, kind: str, seed: int, *, calls: int = 4) -> Run:
    """Calls through MCP authorization over a faulty MCP link (the OAuth exchanges themselves travel
    on the simulated web, unfaulted): the first call runs the whole flow, later ones share the token,
    and the calls to ``write`` (scope ``notes:write``) step up, concurrently. Streamable HTTP only."""
    if transport != "http":
        raise ValueError("the oauth surface runs over Streamable HTTP only")
    run = Run()
    sim = Simulation(seed)
    faults = KINDS[kind]()
    webs: list[SimulatedWeb] = []
    server = Server("notes", version="1.0.0")

    @server.tool()
    async def read(ctx: Context, token: str) -> str:
        """Read (scope notes:read)."""
        run.executions[token] += 1
        await ctx.sleep(0.2)
        return f"done {token}"

    @server.tool()
    async def write(ctx: Context, token: str) -> str:
        """Write (scope notes:write; not safe to repeat)."""
        run.executions[token] += 1
        await ctx.sleep(0.2)
        return f"done {token}"

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            table = AuthorizationServer(ISSUER, lambda: sim.token(16), sim.now_ms)
            issuer = OAuthAuthorizationServer(ISSUER, table, ScriptedUser(User("ada", "acme")), resources=(RESOURCE,),
                                              scopes_supported=("notes:read", "notes:write"))

            def validate(value: str) -> AuthInfo | None:
                try:
                    return table.validate(value, audience=RESOURCE)
                except TokenRejected:
                    return None

            http = SimulatedHttpServer(
                sim, tg, "notes", server_main(server), versions=[revision], token_validator=validate,
                resource_metadata=PRM_URL, challenge_scope="notes:read",
                protected_resource=protected_resource_metadata(RESOURCE, [ISSUER], ["notes:read", "notes:write"]),
                scopes_for=lambda r: ("notes:write",) if tool_name(r) == "write" else ())
            web = SimulatedWeb(sim)
            webs.append(web)
            web.add(ISSUER, issuer)
            web.add("https://notes.example", ResourceSite(http))
            oauth = OAuthClient(web, "client/notes", RESOURCE, "notes-host", "http://127.0.0.1:8765/callback",
                                lambda: sim.token(16), sim.now_ms, revision=revision)
            state: dict[str, Any] = {}
            opening = anyio.Lock()

            async def call(name: str, token_argument: str, token: str | None) -> str:
                async with opening:
                    client = state.get("client")
                    if client is None or not client.connected:  # a failed opening spends the Client
                        client = Client("app", era="legacy" if revision < "2026" else "modern", timeout=10)
                        stream = http.connect("notes", revision=revision, token=token, open_get_stream=False,
                                              faults=LinkFaults(to_server=faults, to_client=faults))
                        await client.connect(stream, tg)
                        state["client"], state["stream"] = client, stream
                    else:
                        state["stream"].token = token
                return _text(await client.call_tool(name, {"token": token_argument}))

            async def one(i: int) -> None:
                token = f"t{i}"
                name = "write" if i % 2 == 0 and i > 0 else "read"
                await _outcome(run, token, lambda: with_authorization(oauth, lambda t: call(name, token, t)))

            await one(0)  # the whole flow once, then calls in flight together
            async with anyio.create_task_group() as calls_tg:
                for i in range(1, calls):
                    calls_tg.start_soon(one, i)
            if state.get("client") is not None:
                with anyio.move_on_after(30):
                    await state["client"].close()
            tg.cancel_scope.cancel()

    sim.run(main)
    _finish(run, sim)
    run.max_asks = 2  # the first sign-in, and one step-up however many calls needed it at once
    run.asked["authorization"] = sum(1 for request, _ in webs[0].exchanges if request.path.startswith("/authorize"))
    return run


SURFACES: dict[str, Callable[..., Run]] = {
    "calls": run_one,
    "tasks": run_tasks,
    "mrtr": run_mrtr,
    "subscriptions": run_subscriptions,
    "oauth": run_oauth,
}
"""Each surface's runner: ``runner(transport, revision, kind, seed, calls=...)``."""
SURFACE_TRANSPORTS = {"oauth": ("http",)}
"""Surfaces that run over fewer transports than :data:`TRANSPORTS`."""
SURFACE_CALLS = {"calls": 6, "tasks": 3, "mrtr": 3, "subscriptions": 1, "oauth": 4}


def problems_of(run: Run, calls: int) -> list[str]:
    """Every broken promise in one run (see the module docstring)."""
    if run.connect_failed is not None:
        return []
    problems = []
    repeats_of_trusted = 0
    for i in range(calls):
        token = f"t{i}"
        got = run.outcomes.get(token, [])
        if len(got) != 1:
            problems.append(f"{token}: {len(got)} outcomes {got}")
            continue
        kind, text = got[0]
        if kind == "result" and text != f"done {token}":
            problems.append(f"{token}: answer of another call: {text!r}")
        if kind == "other":
            problems.append(f"{token}: unexpected outcome {text}")
        if run.executions[token] > 1:
            if i % 2:
                repeats_of_trusted += run.executions[token] - 1
            else:
                problems.append(f"{token}: executed {run.executions[token]} times, outcome {got[0]}")
    if repeats_of_trusted > run.policy_retries:
        problems.append(f"{repeats_of_trusted} repeated executions of {TRUSTED_TOOL} but only "
                        f"{run.policy_retries} retries on the trace")
    if run.messages > MAX_MESSAGES_PER_CALL * max(calls, 1):
        problems.append(f"{run.messages} messages for {calls} calls: more than {MAX_MESSAGES_PER_CALL} a call")
    problems.extend(f"silent miss: {miss}" for miss in run.silent_misses)
    problems.extend(f"the user was asked {n} times for {what}" for what, n in sorted(run.asked.items())
                    if n > run.max_asks)
    return problems


def soak(seeds: Iterable[int], *, calls: int | None = None, surfaces: Iterable[str] = tuple(SURFACES),
         transports: Iterable[str] = TRANSPORTS, revisions: Iterable[str] = REVISIONS,
         kinds: Iterable[str] = tuple(KINDS)) -> dict[str, Any]:
    """Run every configuration of every surface for every seed, twice; return the figures (in all and
    per surface) and every problem found. ``calls`` overrides the number of calls of surface ``calls``."""
    seeds, transports, revisions, kinds = tuple(seeds), tuple(transports), tuple(revisions), tuple(kinds)
    started = time.perf_counter()
    runs = 0
    found: dict[str, list[str]] = {}
    outcome_kinds: Counter[str] = Counter()
    per_surface: dict[str, dict[str, int]] = {}
    for surface in surfaces:
        runner = SURFACES[surface]
        n = calls if calls is not None and surface == "calls" else SURFACE_CALLS[surface]
        figures = per_surface[surface] = {"runs": 0, "runs_with_problems": 0, "changes_lost_on_the_wire": 0,
                                          "misses_after_a_lost_change": 0}
        for transport in transports:
            if transport not in SURFACE_TRANSPORTS.get(surface, TRANSPORTS):
                continue
            for revision in revisions:
                for kind in kinds:
                    for seed in seeds:
                        runs += 1
                        figures["runs"] += 1
                        name = f"{surface} {transport} {revision} {kind} seed={seed}"
                        try:
                            first = runner(transport, revision, kind, seed, calls=n)
                            again = runner(transport, revision, kind, seed, calls=n)
                            problems = problems_of(first, n)
                            if first.trace != again.trace:
                                problems.append("the trace differs on a re-run of the same seed")
                            for got in first.outcomes.values():
                                outcome_kinds.update(k for k, _ in got)
                            figures["changes_lost_on_the_wire"] += first.lost_on_the_wire
                            figures["misses_after_a_lost_change"] += len(first.wire_misses)
                        except Exception as exc:  # an escaped exception is a problem, not a crash of the soak
                            problems = ["raised " + "".join(traceback.format_exception_only(exc)).strip()[:300]]
                        if problems:
                            found[name] = problems
                            figures["runs_with_problems"] += 1
    return {"runs": runs, "runs_with_problems": len(found), "surfaces": per_surface, "problems": found,
            "outcomes": dict(sorted(outcome_kinds.items())), "seconds": round(time.perf_counter() - started, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--seeds", type=int, default=25)
    parser.add_argument("--calls", type=int, default=None, help="calls per run of surface 'calls' (default 6)")
    parser.add_argument("--surfaces", nargs="*", default=list(SURFACES), choices=list(SURFACES))
    args = parser.parse_args()
    print(json.dumps(soak(range(args.seeds), calls=args.calls, surfaces=args.surfaces), indent=2))


if __name__ == "__main__":
    main()
