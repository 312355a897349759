"""The security lab: scripted attacks against a ``vulnerable`` and a ``fixed`` configuration.

A lab is data plus one scripted story. The data (:class:`LabFacts`) names the attacker, what they
control, the mistake the vulnerable configuration makes, the boundary that fixes it, the rule behind
it and what the fix does not cover. The story (``Lab.run``) builds a small world on the simulation — the simulator's own Hosts, Clients and
:class:`~mcp_sim.roles.server.Server` objects (the ready-made ones where they fit), tokens, a shared
machine — runs the attack with names, amounts and paths drawn from the seeded generator, and reports
an :class:`Outcome`: did it work, and what did the attacker get (data read, money moved …).

**The two configurations differ only in the defence.** A lab declares its defence as a value
(``Lab.defences["vulnerable"]`` and ``Lab.defences["fixed"]``: a reviewer, a cache, a sandbox
policy, a codec …) and the story receives only that value: it never learns which configuration it
runs in (:class:`LabContext` has no ``config``). The model, the users, the servers and the attack
script are the same in both; the outcome is read from what the attacker obtained or what happened
(a payment, a file sent away), never from a branch on the configuration. The defence is handed to
the simulator's components (``Host(tool_review=defence.reviewer)``), which apply it.

A lab may also name **variants** of its attack (``Lab.variants``): the same lesson through another
field, another name, another client of the same user, a replay of the whole flow — the cases a fix
narrower than the lesson would miss. ``run_lab(name, config, seed, variant=…)`` runs one; the story
reads ``ctx.variant``. Every story also runs a legitimate piece of work and reports in
``Outcome.legitimate`` whether it still succeeded: a fix that stops everything is not a fix.

:func:`mcp_sim.scenarios.security.run_lab` runs one lab and returns a :class:`LabResult` whose ``trace`` is the recorder of the
run, with the attack's messages marked ``"attack"``, and whose ``explanation`` paragraph is composed
from the lab's facts and the outcome's data — nothing in it is written per run.

.. code-block:: python

    from mcp_sim.scenarios.security import run_lab
    result = run_lab("requeststate-tampering", config="vulnerable", seed=3)
    result.succeeded, result.evidence, result.explanation
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
from anyio.abc import TaskGroup

from mcp_sim.protocol.revisions import LATEST
from mcp_sim.roles.client import Client, ClientCallbacks
from mcp_sim.roles.server import Server
from mcp_sim.roles.server_session import serve
from mcp_sim.security.identity import AuthInfo
from mcp_sim.sim.world import Simulation
from mcp_sim.trace.reading import Prose
from mcp_sim.trace.recorder import Recorder, TraceEvent
from mcp_sim.transports.base import MessageStream
from mcp_sim.transports.memory import memory_link

ServerMain = Callable[[MessageStream], Awaitable[None]]
Config = Literal["vulnerable", "fixed"]
CONFIGS: tuple[Config, ...] = ("vulnerable", "fixed")
Layer = Literal["roles", "capabilities", "transports", "authorization"]
LAYERS: tuple[Layer, ...] = ("roles", "capabilities", "transports", "authorization")
"""The boundary a lab's attack crosses: the course's three layers, plus authorization (who may use a
token for what), which sits across all three."""
ATTACK = "attack"


@dataclass(frozen=True, kw_only=True)
class LabFacts:
    """What a lab teaches, declared once. The explanation paragraph is composed from these."""

    title: str
    layer: Layer
    """Whose boundary the attack crosses (one of :data:`LAYERS`)."""
    summary: str
    """One sentence: what goes wrong, for ``mcp-sim lab list``."""
    attacker: str
    """Who attacks, as a noun phrase: "a malicious third-party server"."""
    controls: str
    """What the attacker controls, as a clause: "the text of its own tool definitions"."""
    goal: str
    """What the attacker is after: "another server's credentials"."""
    mistake: str
    """Why the vulnerable configuration lets it through, as a clause: "the Host assumed …"."""
    boundary: str
    """The security boundary that stops it: "the per-server sandbox (process permissions)"."""
    fix: str
    """What the fixed configuration does, as a clause."""
    rule: str
    """The lesson in one sentence, in lower-case prose: the rules themselves are cited in :attr:`rules`."""
    not_covered: str
    """What the fix does not cover, as a clause: the threat that needs another boundary."""
    revision: str = LATEST
    roles: str = ""
    """Which parts run on the simulator's real roles and which are modelled inside the lab."""
    rules: tuple[str, ...] = ()
    """The rulebook ids behind the lesson (``mcp-sim rules --id ID``): their strength, words and source."""

    def rule_cited(self) -> str:
        """:attr:`rule` followed by the rules it rests on, each with its strength and source."""
        from mcp_sim.protocol import rulebook

        cites = "; ".join(rulebook.get(i).cite() for i in self.rules)
        return f"{self.rule} Rules: {cites}" if cites else self.rule


@dataclass
class Outcome:
    """What the attack achieved, as data. ``obtained`` and ``stopped_by`` are built by the story from
    that data (e.g. ``f"read {path}"``), never typed per run."""

    succeeded: bool
    evidence: dict[str, Any]
    legitimate: bool
    """Whether the legitimate piece of work in the story (the user's own call) still succeeded."""
    obtained: str
    """What the attacker got or caused, when it worked (a clause)."""
    stopped_by: str = ""
    """Which check refused the attack, when it failed (from the refusal itself)."""


@dataclass
class LabResult:
    """The result of one run of one lab."""

    lab: str
    config: Config
    seed: int
    succeeded: bool
    evidence: dict[str, Any]
    trace: Recorder
    explanation: str
    facts: LabFacts
    variant: str = "main"
    legitimate: bool = True
    """Whether the legitimate work in the same run still succeeded."""
    obtained: str = ""
    """What the attacker got, as the story put it (:attr:`Outcome.obtained`)."""
    stopped_by: str = ""
    """What refused the attack, as the story put it (:attr:`Outcome.stopped_by`)."""

    def attack_events(self) -> list[TraceEvent]:
        """The trace events marked ``"attack"``."""
        return [e for e in self.trace.events if ATTACK in e.marks]

    def verdict(self) -> str:
        """The run in one sentence: which configuration, whether the attack worked, whether the
        legitimate work still did, and how many of the trace's events belong to the attack."""
        attack = "SUCCEEDED" if self.succeeded else "FAILED"
        work = "still succeeded" if self.legitimate else "did NOT succeed"
        return (f"{self.lab} [{self.config}, variant {self.variant}, seed {self.seed}]: the attack {attack}; "
                f"the legitimate work {work}; {len(self.attack_events())} of {len(self.trace.events)} events "
                "are marked attack.")

    def headline(self) -> Prose:
        """The verdict alone, to display (the facts follow elsewhere, e.g. in a boundary card)."""
        return Prose([self.verdict()])

    def report(self) -> Prose:
        """The verdict, then the explanation: what happened as a paragraph, and the lab's lessons as
        labelled facts — the same words as :attr:`explanation`, laid out for reading."""
        story, facts = explanation_parts(self.facts, self.config, self._outcome())
        return Prose([story], heading=self.verdict(), facts=facts)

    def _outcome(self) -> Outcome:
        return Outcome(self.succeeded, self.evidence, self.legitimate, self.obtained, self.stopped_by)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        """The report as HTML for notebooks, with its plain-text twin."""
        return self.report()._repr_mimebundle_()


def explanation_parts(facts: LabFacts, config: Config, outcome: Outcome) -> tuple[str, list[tuple[str, str]]]:
    """The explanation in two parts: what happened (who attacked, with what, and the result), and the
    lessons as ``(label, sentence)`` pairs — why it worked or what held, the boundary, the rule and
    what the fix does not cover. Each fact is said once."""
    threat = f"The attacker is {facts.attacker}, who controls {facts.controls}."
    if outcome.succeeded:
        story = f"{threat} In the {config} configuration the attack succeeded: the attacker {outcome.obtained}."
        why = f"It worked because {facts.mistake}."
        if config == "fixed":
            why += " The fix did not hold here, so the boundary is incomplete."
        lessons = [("why it worked", why),
                   ("the boundary", f"The boundary that stops it is {facts.boundary}: {facts.fix}.")]
    else:
        story = f"{threat} In the {config} configuration the attack on {facts.goal} failed: {outcome.stopped_by}."
        lessons = [("the boundary", f"The boundary that held is {facts.boundary}: {facts.fix}."),
                   ("without it", f"Without it, {facts.mistake}.")]
    return story, [*lessons, ("the rule", facts.rule_cited()),
                   ("not covered", f"The fix does not cover {facts.not_covered}.")]


def explain(facts: LabFacts, config: Config, outcome: Outcome) -> str:
    """One paragraph from the lab's facts and the run's outcome: who attacked with what, what went
    wrong (or what held), which boundary fixes it and what that boundary does not cover."""
    story, lessons = explanation_parts(facts, config, outcome)
    return " ".join([story, *(f"Rule: {text}" if label == "the rule" else text for label, text in lessons)])


# --------------------------------------------------------------------------------------------------
# What a story gets to build its world
# --------------------------------------------------------------------------------------------------

@dataclass
class LabContext:
    """The story's toolbox: the simulation, the attack variant, a task group for servers and clients,
    and helpers that connect a bare Client or mark the attack's messages. It deliberately does not
    say which configuration runs: the story sees the defence (its second argument) and nothing else."""

    sim: Simulation
    tg: TaskGroup
    variant: str = "main"
    _predicates: list[Callable[[TraceEvent], bool]] = field(default_factory=list)

    @property
    def rng(self) -> Any:
        return self.sim.rng

    @property
    def recorder(self) -> Recorder:
        return self.sim.recorder

    def _on_event(self, event: TraceEvent) -> None:
        if ATTACK not in event.marks and any(p(event) for p in self._predicates):
            events = self.recorder.events
            if events and events[-1] is event:
                events[-1] = dataclasses.replace(event, marks=(*event.marks, ATTACK))

    @contextmanager
    def attack(self, *, links: tuple[str, ...] | None = None,
               when: Callable[[TraceEvent], bool] | None = None) -> Iterator[None]:
        """Mark every event recorded inside this block as ``"attack"`` — only those on ``links``, and only
        those ``when`` accepts, if given."""
        def predicate(event: TraceEvent) -> bool:
            return (links is None or event.link in links) and (when is None or when(event))

        self._predicates.append(predicate)
        try:
            yield
        finally:
            self._predicates.remove(predicate)

    def note(self, sender: str, receiver: str, text: str, *, attack: bool = False,
             data: dict[str, Any] | None = None) -> None:
        """Record something that is not an MCP message (a file read inside a server, an HTTP redirect)."""
        self.recorder.record_app(sender=sender, receiver=receiver, text=text, data=data,
                                 marks=(ATTACK,) if attack else ())

    def serve(self, name: str, server: Server | ServerMain, *, auth: AuthInfo | None = None) -> MessageStream:
        """Serve ``server`` (a :class:`~mcp_sim.roles.server.Server`, or ``async def main(stream)``) on a
        new memory link named ``name``, whose server end reports ``auth``; return the client end."""
        client_end, server_end = memory_link(self.sim, name, auth=auth)
        main = server_main(server)

        async def run() -> None:
            await main(server_end)

        self.tg.start_soon(run, name=f"server/{name}")
        return client_end

    @asynccontextmanager
    async def client(self, name: str, server: Server | ServerMain, *, auth: AuthInfo | None = None,
                     callbacks: ClientCallbacks | None = None, capabilities: dict[str, Any] | None = None,
                     client_name: str = "mcp-sim-client") -> AsyncIterator[Client]:
        """A real :class:`~mcp_sim.roles.client.Client` (modern era) connected to ``server``."""
        stream = self.serve(name, server, auth=auth)
        client = Client(client_name, era="modern", versions=(LATEST,), callbacks=callbacks,
                        capabilities=capabilities, auth=auth, sim=self.sim)
        await client.connect(stream, self.tg)
        try:
            yield client
        finally:
            await client.close()


def server_main(server: Server | ServerMain) -> ServerMain:
    """``async def main(stream)`` for a Server (``serve(server, stream)``), or ``server`` itself."""
    if isinstance(server, Server):
        async def main(stream: MessageStream) -> None:
            await serve(server, stream)

        return main
    return server


Story = Callable[[LabContext, Any], Awaitable[Outcome]]
"""``async def story(ctx, defence) -> Outcome``: the world, the legitimate work and the attack."""


@dataclass(frozen=True)
class Lab:
    """One lab: its name, its facts, its story, the two values of its defence, and the variants of its
    attack (each a short description). The labs themselves are written in
    :mod:`mcp_sim.scenarios.security`, which also holds the one table of them all (``LABS``)."""

    name: str
    facts: LabFacts
    story: Story
    defences: Mapping[Config, Any]
    """The defence the story receives in each configuration — the only thing that differs."""
    variants: Mapping[str, str] = field(default_factory=dict)
    """Other attacks on the same lesson (name → what it changes); ``"main"`` is always there."""

    def __post_init__(self) -> None:
        if set(self.defences) != set(CONFIGS):
            raise ValueError(f"lab {self.name!r} must declare a defence for each of {CONFIGS}")
        if type(self.defences["vulnerable"]) is not type(self.defences["fixed"]):
            raise TypeError(f"lab {self.name!r}: both configurations must give the same kind of defence")

    def run(self, config: Config = "vulnerable", seed: int = 0, variant: str = "main") -> LabResult:
        if config not in CONFIGS:
            raise ValueError(f"config must be one of {CONFIGS}, not {config!r}")
        if variant != "main" and variant not in self.variants:
            raise KeyError(f"lab {self.name!r} has no variant {variant!r}; it has: main, {', '.join(self.variants)}")
        return self.run_with(self.defences[config], config, seed, variant)

    def run_with(self, defence: Any, config: Config, seed: int, variant: str = "main") -> LabResult:
        """Run the story with any ``defence`` value (a test may try a deliberately narrow one);
        ``config`` only labels the result."""
        sim = Simulation(seed)

        async def main() -> Outcome:
            async with anyio.create_task_group() as tg:
                ctx = LabContext(sim, tg, variant)
                sim.recorder.subscribe(ctx._on_event)
                outcome = await self.story(ctx, defence)
                tg.cancel_scope.cancel()
            return outcome

        outcome = sim.run(main)
        return LabResult(self.name, config, seed, outcome.succeeded, outcome.evidence, sim.recorder,
                         explain(self.facts, config, outcome), self.facts, variant, outcome.legitimate,
                         outcome.obtained, outcome.stopped_by)
