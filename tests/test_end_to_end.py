"""The complete tool call, end to end, in the legacy (2025-11-25) and modern (2026-07-28) eras.

discover/initialize → tools/list → consolidated list → the user asks → the Host gives the model the
tools its policy allows → the model proposes create_issue → the user approves → the client calls →
the result goes back to the model → the final answer reaches the user.
"""

from __future__ import annotations

from typing import Any

import pytest

from mcp_sim.scenarios import SCENARIOS, run_scenario
from mcp_sim.trace.recorder import TraceEvent

HANDSHAKE = {
    "2025-11-25": [
        ("client/issues", "server/issues", "request", "initialize"),
        ("server/issues", "client/issues", "response", "initialize"),
        ("client/issues", "server/issues", "notification", "notifications/initialized"),
    ],
    "2026-07-28": [
        ("client/issues", "server/issues", "request", "server/discover"),
        ("server/issues", "client/issues", "response", "server/discover"),
    ],
}

CALL = [
    ("client/issues", "server/issues", "request", "tools/list"),
    ("server/issues", "client/issues", "response", "tools/list"),
    ("client/issues", "host", "app", "tools: issues__create_issue, issues__search_issues, issues__delete_issue"),
    ("user", "host", "app", "File a bug for me: the login page crashes on Safari"),
    ("host", "model", "app", "messages + 2 tool schemas filtered by policy"),
    ("model", "host", "app", "tool_calls: issues__create_issue(title='the login page crashes on Safari', "
                             "labels=['bug'])"),
    ("host", "user", "app", None),  # the approval dialog
    ("user", "host", "app", "approve"),
    ("host", "client/issues", "app", "forward the call create_issue"),
    ("client/issues", "server/issues", "request", "tools/call"),
    ("server/issues", "client/issues", "response", "tools/call"),
    ("client/issues", "host", "app", "result of create_issue"),
    ("host", "model", "app", "tool results + 2 tool schemas filtered by policy"),
    ("model", "host", "app", "Issue #3 created, here is the link: issues://3"),
    ("host", "user", "app", "Issue #3 created, here is the link: issues://3"),
]


def step(e: TraceEvent) -> tuple[str, str, str, str | None]:
    return e.sender, e.receiver, e.kind, e.text if e.kind == "app" else e.method


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
def test_complete_call_messages_in_order(revision: str) -> None:
    trace = run_scenario("complete-call", revision=revision)
    steps = [step(e) for e in trace.events]
    expected = [("host", "client/issues", "app", "create a Client for the issues server (memory)"),
                *HANDSHAKE[revision], *CALL]
    assert len(steps) == len(expected)
    for got, want in zip(steps, expected, strict=True):
        if want[3] is None:
            assert got[:3] == want[:3]
        else:
            assert got == want

    messages = {(e.kind, e.method): e.message for e in trace.events if e.message is not None and e.kind != "app"}
    call: Any = messages[("request", "tools/call")]
    assert call["params"]["name"] == "create_issue"
    assert call["params"]["arguments"] == {"title": "the login page crashes on Safari", "labels": ["bug"]}
    result: Any = messages[("response", "tools/call")]["result"]
    assert result["structuredContent"]["number"] == 3
    approval = next(e for e in trace.events if e.kind == "app" and e.receiver == "user")
    assert "create_issue" in (approval.text or "")

    if revision == "2026-07-28":
        # Negotiation is per request: every request carries the version and the client capabilities.
        for e in trace.events:
            if e.kind == "request":
                meta = e.message["params"]["_meta"]  # type: ignore[index]
                assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
                assert "io.modelcontextprotocol/clientCapabilities" in meta
        assert result["resultType"] == "complete"
    else:
        assert all("_meta" not in (e.message or {}).get("params", {}) for e in trace.events if e.kind == "request")

    # The model is never shown the destructive tool: the Host's policy filtered it.
    to_model = next(e for e in trace.events if e.kind == "app" and e.receiver == "model")
    assert [t["function"]["name"] for t in to_model.message["tools"]] == [  # type: ignore[index]
        "issues__create_issue", "issues__search_issues"]


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
def test_weather_mrtr_compares_the_eras(revision: str) -> None:
    trace = run_scenario("weather-mrtr", revision=revision)
    wire = [(e.sender.split("/")[0], e.kind, e.method) for e in trace.events
            if e.message is not None and e.kind != "app" and e.method in
            ("tools/call", "elicitation/create", "sampling/createMessage")]
    if revision == "2025-11-25":
        assert wire == [("client", "request", "tools/call"),
                        ("server", "request", "elicitation/create"), ("client", "response", "elicitation/create"),
                        ("server", "request", "sampling/createMessage"),
                        ("client", "response", "sampling/createMessage"),
                        ("server", "response", "tools/call")]
    else:
        assert wire == [("client", "request", "tools/call"), ("server", "response", "tools/call")] * 3
        results = [e.message["result"]["resultType"] for e in trace.events  # type: ignore[index]
                   if e.kind == "response" and e.method == "tools/call"]
        assert results == ["input_required", "input_required", "complete"]
    final = [e.text for e in trace.events if e.kind == "app" and e.receiver == "user"][-1]
    assert final == "Here is your plan: Lisbon (fog): Go to the park in the morning, before the showers."


@pytest.mark.parametrize("name", sorted(SCENARIOS))
@pytest.mark.parametrize("revision", ["2025-06-18", "2025-11-25", "2026-07-28"])
def test_every_scenario_runs_deterministically(name: str, revision: str) -> None:
    first = [e.to_json() for e in run_scenario(name, revision=revision, seed=3).events]
    second = [e.to_json() for e in run_scenario(name, revision=revision, seed=3).events]
    assert first == second and first


def test_handshake_scenario() -> None:
    legacy = [e.method for e in run_scenario("handshake", revision="2025-11-25").events if e.kind != "app"]
    modern = [e.method for e in run_scenario("handshake", revision="2026-07-28").events if e.kind != "app"]
    assert legacy == ["initialize", "initialize", "notifications/initialized", "tools/list", "tools/list"]
    assert modern == ["server/discover", "server/discover", "tools/list", "tools/list"]


def test_multi_server_scenario_has_one_client_per_server() -> None:
    trace = run_scenario("multi-server")
    clients = {e.sender for e in trace.events if e.sender.startswith("client/")}
    assert clients == {"client/weather", "client/issues", "client/notes"}
    answers = [e.text for e in trace.events if e.kind == "app" and e.sender == "host" and e.receiver == "user"
               and not (e.text or "").startswith("Allow")]
    assert answers[0].startswith("The forecast for Paris")  # type: ignore[union-attr]
    assert answers[1].startswith("Issue #3 created")  # type: ignore[union-attr]
    assert answers[2].startswith("Saved:")  # type: ignore[union-attr]


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
def test_complete_call_over_real_transports(transport: str, revision: str) -> None:
    trace = run_scenario("complete-call", revision=revision, transport=transport)
    final = [e.text for e in trace.events if e.kind == "app" and e.receiver == "user"][-1]
    assert final == "Issue #3 created, here is the link: issues://3"
    assert {e.transport for e in trace.events if e.kind == "request"} == {transport}
