"""The trace views on real scenarios (skipped until the scenario registry exists)."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from collections import Counter

import pytest

from mcp_sim.trace import SequenceDiagram, TopologyDiagram, Trace, loads_jsonl, to_jsonl, to_mermaid
from mcp_sim.trace.captions import label, who
from mcp_sim.trace.sequence import xml_text
from mcp_sim.widgets.player import PlayerState

scenarios = pytest.importorskip("mcp_sim.scenarios")
if not hasattr(scenarios, "run_scenario"):
    pytest.skip("mcp_sim.scenarios has no run_scenario yet", allow_module_level=True)

CASES = [("weather", "2025-11-25", "memory"), ("weather", "2026-07-28", "stdio"),
         ("weather-mrtr", "2025-11-25", "http"), ("weather-mrtr", "2026-07-28", "memory")]


@pytest.fixture(scope="module", params=CASES, ids=["-".join(c) for c in CASES])
def trace(request: pytest.FixtureRequest) -> Trace:
    name, revision, transport = request.param
    if name not in scenarios.SCENARIOS:
        pytest.skip(f"no scenario {name!r}")
    return Trace(scenarios.run_scenario(name, revision=revision, transport=transport, seed=1).trace(),
                 title=f"{name}, {revision}, {transport}")


def test_each_request_once_and_each_answer_matches(trace: Trace) -> None:
    requests = Counter((e.link, e.sender, e.request_id) for e in trace
                       if e.kind == "request" and "duplicate" not in e.marks)
    assert requests and all(n == 1 for n in requests.values()), requests
    for e in trace.filter(kind=["response", "error"]):
        if e.request_id is not None and "duplicate" not in e.marks:
            assert (e.link, e.receiver, e.request_id) in requests
            assert e.method is not None
    times = [e.t_ms for e in trace]
    assert times == sorted(times)


def test_views_agree_on_a_real_trace(trace: Trace) -> None:
    buffer = io.StringIO()
    to_jsonl(trace, buffer)
    assert loads_jsonl(buffer.getvalue()) == trace
    diagram = SequenceDiagram(trace)
    root = ET.fromstring(diagram.to_svg())
    assert root.get("role") == "img"
    assert diagram.table().seqs == diagram.seqs == [e.seq for e in trace]
    svg = diagram.to_svg()
    position = 0
    for e in trace.filter(kind=["request", "response", "error", "notification"]):
        text = label(e, limit=120)[:20]
        found = svg.find(xml_text(text), position)
        assert found >= 0, text
        position = found
    for e in trace:
        if e.kind in ("request", "notification", "response", "error"):
            assert who(e.sender) in e.caption.lower() and who(e.receiver) in e.caption.lower(), e.caption
    assert to_mermaid(trace).startswith("sequenceDiagram")


def test_player_walks_a_real_trace(trace: Trace) -> None:
    state = PlayerState(trace)
    seen = []
    while True:
        assert state.detail("json") and state.detail("stdio") and state.detail("http")
        seen.append(state.current)
        if state.at_end:
            break
        state.forward()
    assert seen == list(trace)
    transport = trace.transports()[0] if trace.transports() else "memory"
    topology = TopologyDiagram.from_trace(trace)
    assert all(s.transport == transport for s in topology.servers)
