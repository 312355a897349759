"""One whole check: each era's workload under the nemesis on a real stdio server, then the checkers.

``run_check(command, eras=("legacy", "modern"), seed=0)`` starts the server once per era (and once
more for each probe that needs a fresh process), drives the workload with the nemesis's actions
scheduled among its steps, records every frame in one trace, and hands the trace to the checkers.
It returns the :class:`~mcp_sim.bridge.check.findings.CheckReport` and the trace.

Links are named ``<server>-<era>`` (the workload) and ``<server>-<era>-probe``: a second process,
started at the same time, for what needs a fresh one — in the legacy era ``initialize`` offering a
version nobody supports (``initialize`` may be sent once per connection), then the client hanging up
mid-call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import anyio

import mcp_sim.bridge.check.checkers as checkers
import mcp_sim.bridge.check.expectations as expectations
import mcp_sim.bridge.check.http_nemesis as http_nemesis
import mcp_sim.bridge.check.http_probes as http_probes
import mcp_sim.bridge.check.nemesis as nemesis
from mcp_sim.bridge.check.findings import CheckReport, EraSummary, Finding, count_by_strength
from mcp_sim.bridge.check.link import ProbeLink
from mcp_sim.bridge.check.session import (
    STARTUP_SECONDS,
    UNSUPPORTED_VERSION,
    CheckEra,
    EraSession,
    initialize_params,
)
from mcp_sim.bridge.check.workloads import WORKLOADS, example_arguments
from mcp_sim.bridge.recording import WallClockRecorder
from mcp_sim.bridge.stdio import link_name
from mcp_sim.trace.events import Trace

Progress = Callable[[str], None]


@dataclass
class CheckOptions:
    """What to run: eras, workload, nemesis actions, seed, and the deadline per request (seconds)."""

    eras: tuple[CheckEra, ...] = ("legacy", "modern")
    workload: str = "full"
    nemesis: tuple[str, ...] = nemesis.DEFAULT_NEMESIS
    seed: int = 0
    deadline: float = 10.0
    grace: float = 2.0


Target = Sequence[str] | str
"""A stdio server command (``["python", "server.py"]``) or a Streamable HTTP URL."""


def _link(target: Target, recorder: WallClockRecorder, name: str, options: CheckOptions) -> ProbeLink:
    """A link of the right kind for ``target``: a spawned stdio process, or an HTTP endpoint."""
    if isinstance(target, str):
        from mcp_sim.bridge.check.http_link import HttpProbeLink

        return HttpProbeLink(target, recorder, name, deadline=options.deadline)
    return ProbeLink(target, recorder, name, deadline=options.deadline, grace=options.grace)


def actions_for(link: ProbeLink) -> dict[str, nemesis.Action]:
    """The actions that run on the workload's link: stdio's (:mod:`.nemesis`), or Streamable HTTP's
    (:mod:`.http_nemesis`, where ``hangup`` runs on the workload's session too and ``restart`` does not
    exist)."""
    return http_nemesis.ACTIONS_RUN if link.transport == "http" else nemesis.ACTIONS_RUN


async def _side_run(command: Target, era: CheckEra, options: CheckOptions, recorder: WallClockRecorder,
                    name: str, progress: Progress) -> None:
    """A second, fresh process for the probes that need one: in the legacy era, ``initialize`` offering
    a version nobody supports (a connection has one ``initialize`` only); then, with the ``hangup``
    nemesis, a call left in flight when the client closes stdin."""
    async with _link(command, recorder, name, options) as probe:
        side = EraSession(probe, era)
        if era == "legacy":
            progress("legacy: offering an unsupported version")
            answer = await probe.request("initialize", initialize_params(UNSUPPORTED_VERSION),
                                         "expect:counter-offer", "opening", timeout=STARTUP_SECONDS)
            if not isinstance((answer or {}).get("result"), dict) or "hangup" not in options.nemesis \
                    or probe.transport == "http":  # over HTTP the hang-up runs on the workload's session
                return
            await probe.notify("notifications/initialized", None, "expect:no-response")
            side.opened = True
        elif "hangup" not in options.nemesis or not await side.open():
            return
        progress(f"{era}: nemesis hangup")
        listed = await side.call("tools/list", {}) if side.offers("tools") or era == "legacy" else None
        tools = ((listed or {}).get("result") or {}).get("tools") if isinstance(listed, dict) else None
        tool = tools[0] if isinstance(tools, list) and tools and isinstance(tools[0], dict) else {}
        await side.call("tools/call", {"name": tool.get("name", "mcp-sim-check-no-such-tool"),
                                       "arguments": example_arguments(tool.get("inputSchema"))},
                        "nemesis:hangup", wait=False)
    # leaving the block closes stdin with the call in flight: the checkers read how the process ended


async def _era_run(command: Target, era: CheckEra, options: CheckOptions, recorder: WallClockRecorder,
                   base: str, links: dict[str, str], progress: Progress) -> EraSession | None:
    """The workload with the nemesis's actions among its steps, on ``<base>-<era>``; the side probes
    run at the same time on ``<base>-<era>-probe`` (a server must serve two clients' processes)."""
    steps = WORKLOADS[options.workload]
    plan = nemesis.schedule(options.nemesis, [name for name, _ in steps], seed=options.seed, era=era)
    name = f"{base}-{era}"
    links[name] = era
    session: EraSession | None = None
    async with anyio.create_task_group() as group:
        if era == "legacy" or ("hangup" in options.nemesis and not isinstance(command, str)):
            links[f"{name}-probe"] = era
            group.start_soon(_side_run, command, era, options, recorder, f"{name}-probe", progress)
        async with _link(command, recorder, name, options) as link:
            progress(f"{era}: opening the session")
            opened = EraSession(link, era)
            if not await opened.open():
                return None
            session = opened
            actions = actions_for(link)
            for index in range(len(steps) + 1):
                for planned in plan:
                    if planned.after == index and planned.action in actions:
                        progress(f"{era}: nemesis {planned.action}")
                        await actions[planned.action](session, planned.variant)
                        await session.alive_probe("after-nemesis")
                if index < len(steps):
                    step_name, step = steps[index]
                    progress(f"{era}: {step_name}")
                    await step(session)
    return session


def eras_of_links(trace: Trace | Sequence[object]) -> dict[str, str]:
    """Each link of a recorded check with its era, read from the links' names (``<server>-legacy``,
    ``<server>-modern-probe`` …): what :func:`check_trace` needs to check a saved trace again."""
    links: dict[str, str] = {}
    for e in Trace.of(trace):
        for era in ("legacy", "modern"):
            if e.link.endswith((f"-{era}", f"-{era}-probe", f"-{era}-headers")):
                links.setdefault(e.link, era)
    return links


def check_trace(trace: Trace | Sequence[object], links: dict[str, str], *, deadline: float) -> list[Finding]:
    """Every checker over a recorded run; ``links`` maps each link's name to its era."""
    events = list(Trace.of(trace))
    findings: list[Finding] = []
    for name, era, link_events in checkers.split_links(events, links):
        run = checkers.pair_responses(name, era, link_events)
        findings += checkers.check_framing(run)
        findings += checkers.check_schema(run)
        findings += checkers.check_correlation(run, deadline_ms=deadline * 1000)
        findings += checkers.check_process(run)
        findings += checkers.check_era(run)
        findings += checkers.check_input_gating(run)
        findings += expectations.check_expectations(run)
        findings += http_probes.check_http_probes(run)
        findings += http_nemesis.check_http_nemesis(run, deadline_ms=deadline * 1000)
    return findings


async def run_check(command: Target, options: CheckOptions | None = None, *,
                    progress: Progress | None = None) -> tuple[CheckReport, Trace]:
    """Check the server ``command`` (a stdio command, or a Streamable HTTP URL) in each era of
    ``options``; the report and the trace. Over HTTP only the nemesis actions that work there run."""
    options = options or CheckOptions()
    if isinstance(command, str):
        from dataclasses import replace

        from mcp_sim.bridge.check.http_link import HTTP_NEMESIS

        options = replace(options, nemesis=tuple(a for a in options.nemesis if a in HTTP_NEMESIS))
    if options.workload not in WORKLOADS:
        raise ValueError(f"unknown workload {options.workload!r}; known: {', '.join(WORKLOADS)}")
    say = progress or (lambda _text: None)
    recorder = WallClockRecorder()
    base = link_name(list(command)) if not isinstance(command, str) else "http"
    links: dict[str, str] = {}
    schedule: list[str] = []
    sessions: dict[str, EraSession | None] = {}
    names = [name for name, _ in WORKLOADS[options.workload]]
    for era in options.eras:
        links[f"{base}-{era}"] = era  # the order of the report's links, whichever era starts first
        schedule.extend(p.describe(era, names) for p in nemesis.schedule(options.nemesis, names,
                                                                          seed=options.seed, era=era))

    async def one_era(era: CheckEra) -> None:
        sessions[era] = await _era_run(command, era, options, recorder, base, links, say)
        if isinstance(command, str) and sessions[era] is not None:
            say(f"{era}: HTTP header and status probes")
            links[f"{base}-{era}-headers"] = era
            probe = http_probes.probe_modern if era == "modern" else http_probes.probe_legacy
            await probe(command, recorder, f"{base}-{era}-headers")

    async with anyio.create_task_group() as group:  # the eras are independent: check them at once
        for era in options.eras:
            group.start_soon(one_era, era)
    sessions = {era: sessions.get(era) for era in options.eras}
    trace = Trace(recorder.events, title=f"mcp-sim check of {base}")
    findings = check_trace(trace, links, deadline=options.deadline)
    eras: dict[str, EraSummary] = {}
    for era_name, session in sessions.items():
        mine = [f for f in findings if links.get(str(f.evidence.get("link"))) == era_name]
        requests = sum(1 for e in trace if links.get(e.link) == era_name and e.kind == "request"
                       and e.sender.startswith("client/"))
        eras[era_name] = EraSummary(
            revision=session.revision if session else None, passed=not any(f.strength == "MUST" for f in mine),
            findings=count_by_strength(mine), requests=requests,
            skipped=None if session else f"the server does not open a {era_name} session "
                                         f"({'initialize' if era_name == 'legacy' else 'server/discover'} "
                                         "got no result)")
    report = CheckReport.build(findings, eras, seed=options.seed, nemesis=list(options.nemesis),
                               schedule=schedule, target=command if isinstance(command, str) else " ".join(command))
    return report, trace
