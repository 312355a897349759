"""Running every ready-made scenario shows every method of a revision's official schema at least once,
and every message on the way is valid.

The expected methods are read from the schema itself: every definition whose ``method`` is a constant.
In 2026-07-28, ``elicitation/create``, ``sampling/createMessage`` and ``roots/list`` count when they
travel inside an ``InputRequiredResult``'s ``inputRequests``: that is the only way they travel there.

The 2026-07-28 tasks extension's methods count too (its own schema adds them); its results are
validated against the extension's schema (``test_fidelity``).
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest
from test_fidelity import _check_trace

from mcp_sim.protocol.schema import definitions_key, find_spec_dir, load_schema
from mcp_sim.scenarios import SCENARIOS, run_scenario
from mcp_sim.trace.recorder import Recorder

pytestmark = pytest.mark.skipif(find_spec_dir() is None,
                                reason="official MCP schemas not found (../shared/spec or MCP_SIM_SPEC_DIR)")

LEGACY, MODERN = "2025-11-25", "2026-07-28"
EMBEDDED = {"elicitation/create", "sampling/createMessage", "roots/list"}


TOUR = {
    # scenario: (methods it shows in 2025-11-25, methods it shows in 2026-07-28)
    "ping-and-lifecycle": ({"initialize", "notifications/initialized", "ping"}, {"server/discover", "tools/list"}),
    "resources-tour": ({"resources/list", "resources/templates/list", "resources/read"},
                       {"resources/list", "resources/templates/list", "resources/read"}),
    "prompts-and-completion": ({"prompts/list", "completion/complete", "prompts/get"},
                               {"prompts/list", "completion/complete", "prompts/get"}),
    "logging-progress-cancel": ({"logging/setLevel", "notifications/message", "notifications/progress",
                                 "notifications/cancelled"},
                                {"notifications/message", "notifications/progress", "notifications/cancelled"}),
    "subscriptions": ({"resources/subscribe", "notifications/resources/updated", "resources/unsubscribe",
                       "notifications/resources/list_changed", "notifications/tools/list_changed",
                       "notifications/prompts/list_changed"},
                      {"subscriptions/listen", "notifications/subscriptions/acknowledged",
                       "notifications/resources/updated", "notifications/resources/list_changed",
                       "notifications/tools/list_changed", "notifications/prompts/list_changed",
                       "notifications/cancelled"}),
    "client-input": ({"roots/list", "elicitation/create", "sampling/createMessage",
                      "notifications/elicitation/complete", "notifications/roots/list_changed"},
                     {"roots/list", "elicitation/create", "sampling/createMessage"}),
    "tasks": ({"tools/call", "tasks/get", "tasks/list", "tasks/result", "tasks/cancel",
               "notifications/tasks/status"},
              {"tools/call", "tasks/get", "subscriptions/listen", "notifications/tasks", "tasks/update",
               "tasks/cancel"}),
}
"""What each scenario of the tour promises in its name and description."""


def _method_consts(definition: Any) -> set[str]:
    """The ``method`` constant of a definition, also when it is written as an ``allOf`` of parts."""
    if not isinstance(definition, dict):
        return set()
    found = set()
    const = (definition.get("properties") or {}).get("method", {}).get("const")
    if isinstance(const, str):
        found.add(const)
    for part in definition.get("allOf") or []:
        found |= _method_consts(part)
    return found


def schema_methods(revision: str) -> set[str]:
    """Every method the official schema of ``revision`` defines."""
    definitions = load_schema(revision)[definitions_key(revision)]
    return {m for d in definitions.values() for m in _method_consts(d)}


def expected_methods(revision: str) -> set[str]:
    """The revision's methods; for 2026-07-28 also the tasks extension's own (those its schema adds)."""
    methods = schema_methods(revision)
    if revision == MODERN:
        methods |= schema_methods("ext-tasks") - methods
    return methods


@cache
def run(scenario: str, revision: str) -> Recorder:
    return run_scenario(scenario, revision=revision, transport="memory", seed=7)


def methods_seen(trace: Recorder) -> tuple[set[str], set[str]]:
    """(methods of requests and notifications on the wire, methods inside ``inputRequests``)."""
    wire, embedded = set(), set()
    for event in trace:
        message = event.message
        if event.kind not in ("request", "response", "notification") or not isinstance(message, dict):
            continue
        if "method" in message:
            wire.add(message["method"])
        result = message.get("result")
        if isinstance(result, dict) and result.get("resultType") == "input_required":
            embedded |= {r["method"] for r in (result.get("inputRequests") or {}).values()}
    return wire, embedded


def test_the_schemas_are_read_as_expected() -> None:
    """The expected sets come from the schemas, so check the reading against known facts."""
    legacy, modern = expected_methods(LEGACY), expected_methods(MODERN)
    assert len(schema_methods(LEGACY)) == 31 and len(schema_methods(MODERN)) == 21
    assert {"ping", "initialize", "tasks/result", "notifications/elicitation/complete"} <= legacy
    assert {"ping", "initialize", "logging/setLevel", "notifications/roots/list_changed"}.isdisjoint(modern)
    assert {"server/discover", "subscriptions/listen", "tasks/update", "notifications/tasks"} <= modern


@pytest.mark.parametrize("revision", [LEGACY, MODERN])
def test_the_scenarios_together_show_every_method_of_the_schema(revision: str) -> None:
    wire: set[str] = set()
    embedded: set[str] = set()
    for name in sorted(SCENARIOS):
        trace = run(name, revision)
        assert _check_trace(trace, revision) > 0  # every message valid for its revision
        on_wire, inside = methods_seen(trace)
        wire |= on_wire
        embedded |= inside
    missing = expected_methods(revision) - wire - embedded
    assert not missing, f"no scenario shows {sorted(missing)} in {revision}"
    assert (wire | embedded) <= expected_methods(revision), sorted((wire | embedded) - expected_methods(revision))
    if revision == MODERN:
        # 2026-07-28 servers send no requests: input requests travel only inside InputRequiredResult.
        assert EMBEDDED <= embedded and not EMBEDDED & wire


@pytest.mark.parametrize("revision", [LEGACY, MODERN])
@pytest.mark.parametrize("scenario", sorted(TOUR))
def test_each_tour_scenario_shows_what_its_name_says(scenario: str, revision: str) -> None:
    on_wire, inside = methods_seen(run(scenario, revision))
    promised = TOUR[scenario][0 if revision == LEGACY else 1]
    assert promised <= on_wire | inside, sorted(promised - on_wire - inside)
    assert SCENARIOS[scenario].description


@pytest.mark.parametrize("scenario", sorted(TOUR))
def test_tour_scenarios_are_deterministic(scenario: str) -> None:
    for revision in (LEGACY, MODERN):
        first, second = (json.dumps([e.to_json() for e in run_scenario(scenario, revision=revision, seed=11)],
                                    sort_keys=True) for _ in range(2))
        assert first == second
