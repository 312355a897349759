"""Ready-made scenarios: named stories that run in a fresh simulation and return their trace.

``SCENARIOS`` maps a name to a :class:`Scenario` (a description and a runner);
:func:`run_scenario` runs one — ``mcp-sim run <name>`` and the notebooks both use it::

    from mcp_sim.scenarios import run_scenario
    legacy = run_scenario("weather-mrtr", revision="2025-11-25")
    modern = run_scenario("weather-mrtr", revision="2026-07-28")

The servers themselves live beside this file (``weather``, ``issues``, ``notes``, ``finance``, each
with ``build()``); the Host-driven stories are in :mod:`mcp_sim.scenarios.stories`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

from mcp_sim.protocol.revisions import LATEST, REVISIONS
from mcp_sim.sim.world import Simulation

if TYPE_CHECKING:
    from mcp_sim.trace.recorder import Recorder

Story = Callable[..., Awaitable[None]]
"""``async def story(sim, *, revision, transport, faults=None) -> None``."""


@dataclass(frozen=True)
class Scenario:
    """A named story: what it shows, and how to run it."""

    name: str
    description: str
    runner: Callable[[], Story]
    """Returns the story function (imported late, so listing scenarios stays cheap)."""
    default_revision: str = LATEST

    def run(self, *, revision: str | None = None, transport: str = "memory", seed: int = 0) -> Recorder:
        return run_scenario(self.name, revision=revision or self.default_revision, transport=transport, seed=seed)


def _story(name: str) -> Callable[[], Story]:
    def load() -> Story:
        from mcp_sim.scenarios import stories

        story: Story = getattr(stories, name)
        return story

    return load


def _tour(name: str) -> Callable[[], Story]:
    def load() -> Story:
        from mcp_sim.scenarios import tour

        story: Story = getattr(tour, name)
        return story

    return load


SCENARIOS: Final[Mapping[str, Scenario]] = MappingProxyType({s.name: s for s in (
    Scenario("first-call", "Chapter 00's opening: the complete call at a real pace — the user types and reads, "
             "the model thinks, the server is 40 ms away.", _story("first_call")),
    Scenario("complete-call", "The complete call: discover, filter by policy, the model proposes create_issue, "
             "the user approves, the client calls, the model answers.", _story("complete_call")),
    Scenario("weather-mrtr", "A tool that needs elicitation and sampling: legacy server→client requests vs "
             "modern InputRequiredResult and retry.", _story("weather_mrtr")),
    Scenario("handshake", "Opening a connection: legacy initialize, or modern server/discover.",
             _story("handshake")),
    Scenario("multi-server", "One Host, three Clients (weather, issues, notes): aggregated tools, policy, "
             "approvals.", _story("multi_server")),
    Scenario("weather", "Ask the Host for a forecast; the weather tool runs after approval.",
             _story("weather_chat")),
    # The tour: together these show every method of each revision at least once.
    Scenario("ping-and-lifecycle", "Lifecycle: legacy initialize, initialized and ping; modern server/discover "
             "(no ping in 2026-07-28).", _tour("ping_and_lifecycle")),
    Scenario("resources-tour", "Resources: list, list templates, read a fixed resource and a templated URI.",
             _tour("resources_tour")),
    Scenario("prompts-and-completion", "Prompts and completion: list prompts, complete a prompt argument and a "
             "template variable, get the prompt.", _tour("prompts_and_completion")),
    Scenario("logging-progress-cancel", "Logging (setLevel or _meta logLevel) and notifications/message, "
             "progress notifications, and a timed-out call cancelled with notifications/cancelled.",
             _tour("logging_progress_cancel")),
    Scenario("subscriptions", "Change: legacy resources/subscribe, updated, list_changed and unsubscribe; modern "
             "subscriptions/listen, its acknowledgement and tagged notifications.", _tour("subscriptions")),
    Scenario("client-input", "Roots, elicitation (form and URL) and sampling: legacy server requests and "
             "roots/list_changed; modern inputRequests and retry.", _tour("client_input")),
    Scenario("tasks", "Long-running work: 2025-11-25 tasks (tools/call with a task, tasks/get, list, result, "
             "cancel, status notifications); the 2026-07-28 tasks extension (resultType task, tasks/get, "
             "tasks/update, tasks/cancel); inline in revisions without tasks.", _tour("tasks")),
)})
"""Every ready-made scenario, by name (read-only)."""


def run_scenario(name: str, *, revision: str = LATEST, transport: str = "memory", seed: int = 0,
                 faults: Mapping[str, Any] | None = None) -> Recorder:
    """Run scenario ``name`` in a fresh :class:`~mcp_sim.sim.world.Simulation` seeded with ``seed``
    and return its recorder (every message, plus the user/host/model talk).

    ``faults`` maps a link name (a server's name) to the faults to inject on that link — the trace
    player uses it to fork a run with one message dropped."""
    if name not in SCENARIOS:
        raise KeyError(f"unknown scenario {name!r}; known: {', '.join(SCENARIOS)}")
    if revision not in REVISIONS:
        raise KeyError(f"unknown revision {revision!r}; known: {', '.join(REVISIONS)}")
    story = SCENARIOS[name].runner()
    sim = Simulation(seed)

    async def main() -> None:
        await story(sim, revision=revision, transport=transport, faults=faults)

    sim.run(main)
    recorder: Recorder = sim.recorder
    return recorder


__all__ = ["SCENARIOS", "Scenario", "run_scenario"]
