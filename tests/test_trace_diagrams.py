"""Diagrams: the SVG sequence diagram, its table, and the Graphviz topology and lifecycle diagrams."""

from __future__ import annotations

import html
import time
import xml.etree.ElementTree as ET

import pytest

from mcp_sim.protocol.lifecycle import legacy_state_table
from mcp_sim.trace import (
    LifecycleDiagram,
    SequenceDiagram,
    ServerPlacement,
    TopologyDiagram,
    TraceTable,
    graphviz_svg,
)
from mcp_sim.trace.page import trace_html
from mcp_sim.trace.samples import synthetic_trace_recorder, weather_trace

SVG = "{http://www.w3.org/2000/svg}"


def _row_texts(svg: str) -> list[str]:
    root = ET.fromstring(svg)
    rows = [g for g in root.iter(f"{SVG}g") if "mcpsim-row" in (g.get("class") or "")]
    return ["".join(t.itertext()) for row in rows for t in row.iter(f"{SVG}text")]


def test_svg_contains_each_label_in_order() -> None:
    trace = weather_trace()
    svg = SequenceDiagram(trace).to_svg()
    texts = " | ".join(_row_texts(svg))
    expected = ["→ initialize #1", "← result #1", "⇢ notifications/initialized", "→ tools/list #2",
                "← result #2", "→ tools/call #3", "⇢ notifications/progress 1/2", "stderr: fetching forecast",
                "← result #3", "→ prompts/list #4", "✖ error -32601 #4"]
    position = 0
    for label in expected:
        found = texts.find(label, position)
        assert found >= 0, f"{label!r} missing or out of order"
        position = found + len(label)


def test_svg_is_well_formed_accessible_and_deterministic() -> None:
    trace = weather_trace(drop_call=True)
    svg = SequenceDiagram(trace, title="Weather <fork>").to_svg()
    root = ET.fromstring(svg)  # well-formed XML
    assert root.get("role") == "img"
    title, desc = root.find(f"{SVG}title"), root.find(f"{SVG}desc")
    assert title is not None and title.text == "Weather <fork>"
    assert desc is not None and "dash-dot" in (desc.text or "")
    assert root.get("aria-labelledby") == f"{title.get('id')} {desc.get('id')}"
    assert svg == SequenceDiagram(weather_trace(drop_call=True), title="Weather <fork>").to_svg()
    # Lifelines in the course's order.
    lifelines = [g.get("data-participant") for g in root.iter(f"{SVG}g") if g.get("class") == "mcpsim-lifeline"]
    assert lifelines == ["user", "host", "model", "client/weather", "server/weather"]
    # Each row says its time on the time lane; the timeout, the drop and the cancel are named there.
    texts = _row_texts(svg)
    assert "30000 ms" in texts and "◷ timeout" in texts and "✂ dropped" in texts and "⊘ cancel" in texts


def test_line_styles_differ_by_kind_not_only_colour() -> None:
    root = ET.fromstring(SequenceDiagram(weather_trace()).to_svg())
    styles: dict[str, set[str]] = {}
    for g in root.iter(f"{SVG}g"):
        cls = g.get("class") or ""
        if "mcpsim-row" not in cls:
            continue
        kind = cls.split()[1].removeprefix("mcpsim-")
        for line in g.iter(f"{SVG}line"):
            styles.setdefault(kind, set()).add(f"{line.get('stroke-dasharray')}|{line.get('marker-end')}")
    request, response, notification, error = (styles[k] for k in ("request", "response", "notification", "error"))
    assert len({*request, *response, *notification, *error}) == 4
    assert all("None" in s for s in request)  # solid


def test_highlight_marks_one_row() -> None:
    svg = SequenceDiagram(weather_trace(), highlight=9).to_svg()
    assert svg.count("mcpsim-current") == 1
    assert 'data-seq="9"' in svg.split("mcpsim-current")[1][:40]


def test_table_is_in_step_with_the_diagram() -> None:
    trace = weather_trace().filter(link="weather", kind=["request", "response", "error"])
    diagram = SequenceDiagram(trace)
    table = diagram.table()
    assert isinstance(table, TraceTable)
    assert table.seqs == diagram.seqs == [e.seq for e in trace]
    text = table.to_text()
    assert text.splitlines()[0].split() == ["seq", "time", "from", "→", "to", "layer", "kind", "method", "/", "id",
                                              "caption"]
    assert len(text.splitlines()) == 2 + len(trace)
    assert "prompts/list #4 (-32601)" in text
    rows = {r.seq: r for r in table.rows}
    assert {rows[e.seq].layer for e in trace if e.method == "tools/list"} == {"capabilities"}
    assert all(rows[e.seq].layer == e.layer for e in trace)
    page = table.to_html()
    assert page.count("<tr data-seq=") == len(trace)
    assert html.escape("The weather client asks the weather server which tools it offers") in page


def test_thousand_messages_render_under_a_second() -> None:
    trace = synthetic_trace_recorder(1000).trace()
    assert len(trace.messages()) == 1000
    start = time.perf_counter()
    svg = SequenceDiagram(trace).to_svg()
    elapsed = time.perf_counter() - start
    assert elapsed < 1.0, f"{elapsed:.3f} s"
    assert svg.count('class="mcpsim-row mcpsim-') == len(trace)
    ET.fromstring(svg)


def test_hostile_text_cannot_break_the_svg() -> None:
    from mcp_sim.trace import Recorder

    rec = Recorder()
    rec.record_message(link="x", sender="server/x", receiver="client/x",
                       raw='{"jsonrpc":"2.0","method":"</text><script>alert(1)</script>\\u0001{x}"}')
    rec.record_message(link="x", sender="server/x", receiver="client/x", raw="\x00\x01 binary")
    svg = SequenceDiagram(rec.trace()).to_svg()
    ET.fromstring(svg)
    assert "<script>" not in svg


# --- Graphviz diagrams --------------------------------------------------------------------------

needs_binary = pytest.mark.skipif(graphviz_svg.dot_binary() is None, reason="no graphviz-pure binary")


@needs_binary
def test_lifecycle_diagram_drawn_from_the_table(capfd: pytest.CaptureFixture[str]) -> None:
    diagram = LifecycleDiagram(current="initializing")
    source = diagram.dot_source()
    for a, event, b in legacy_state_table():
        assert f"label={event}" in source or f'label="{event}"' in source
        if a != "any":
            assert a in source and b in source
    svg = diagram.to_svg()
    assert svg is not None
    root = ET.fromstring(svg)
    assert root.find(f"{SVG}title") is not None and root.find(f"{SVG}desc") is not None
    assert "initializing (current state)" in svg
    assert diagram._repr_html_().startswith("<div")
    out, err = capfd.readouterr()
    assert out == "" and err == ""  # nothing leaks into the notebook


@needs_binary
def test_topology_diagram_shows_boundaries(capfd: pytest.CaptureFixture[str]) -> None:
    diagram = TopologyDiagram([ServerPlacement("files"), ServerPlacement("weather", "stdio", sandbox="container"),
                               ServerPlacement("crm", "http")])
    svg = diagram.to_svg()
    assert svg is not None
    for words in ("host process (trust boundary)", "in-process server", "server process: weather",
                  "sandbox: container", "remote server: crm", "stdio (JSON lines on stdin/stdout)",
                  "Streamable HTTP (POST + SSE)", "owns (1:1)"):
        assert words in html.unescape(svg), words
    assert svg == TopologyDiagram([ServerPlacement("files"), ServerPlacement("weather", "stdio", sandbox="container"),
                                   ServerPlacement("crm", "http")]).to_svg()
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_topology_from_a_trace() -> None:
    diagram = TopologyDiagram.from_trace(weather_trace())
    assert [s.name for s in diagram.servers] == ["weather"]
    assert diagram.user and diagram.model
    assert "client/weather ⇄ server/weather over memory" in diagram.to_text()


def test_text_fallback_without_a_binary(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(graphviz_svg, "dot_binary", lambda: None)
    graphviz_svg.render_svg.cache_clear()
    try:
        diagram = LifecycleDiagram()
        assert diagram.to_svg() is None and diagram._repr_svg_() is None
        page = diagram._repr_html_()
        assert page.startswith("<pre") and "not started --initialize--&gt; initializing" in page
        assert "remote" in str(TopologyDiagram([ServerPlacement("crm", "http")]))
    finally:
        graphviz_svg.render_svg.cache_clear()


def test_failing_binary_falls_back_quietly(monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(graphviz_svg, "dot_binary", lambda: "/nonexistent/graphviz-pure")
    graphviz_svg.render_svg.cache_clear()
    try:
        assert LifecycleDiagram(title="x").to_svg() is None
        assert graphviz_svg.render_svg("digraph { a -> }") is None
    finally:
        graphviz_svg.render_svg.cache_clear()
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_notebook_html_survives_sanitizers() -> None:
    """Untrusted notebooks and GitHub strip <svg> from HTML output; an <img> data URI survives."""
    import base64
    import re

    diagram = SequenceDiagram(weather_trace())
    page = diagram._repr_html_()
    assert "<svg" not in page
    match = re.search(r"src='data:image/svg\+xml;base64,([^']+)'", page)
    assert match is not None
    assert base64.b64decode(match.group(1)).decode() == diagram.to_svg()
    assert "alt='Sequence diagram. 15 events between user, host" in page
    assert diagram._repr_svg_() == diagram.to_svg()
    assert "<svg" in diagram.inline_html()
    trace_page = trace_html(weather_trace())
    assert "<svg" not in trace_page and "<table" in trace_page


def test_diagrams_fit_a_notebook_output() -> None:
    """Columns narrow so five lifelines fit 880 px; wider diagrams scale, with a full-size fold."""
    from mcp_sim.trace.embed import FIT_WIDTH, FULL_VIEW_CLASS
    from mcp_sim.trace.graphviz_svg import svg_width_px

    five = SequenceDiagram(weather_trace())
    assert len(five.participants) >= 4 and five.width <= FIT_WIDTH
    page = five._repr_html_()
    assert "max-width:100%;height:auto" in page and FULL_VIEW_CLASS not in page  # fits: no second copy
    assert 120 <= five.col_w <= 196
    # A lifeline name too long for its column is split at the slash, not cut short.
    from mcp_sim.trace.sequence import _lifeline_name

    two_lines = _lifeline_name("client/issue-tracker", 100, 58, 98)
    assert ">client/</tspan>" in two_lines and ">issue-tracker</tspan>" in two_lines
    assert "tspan" not in _lifeline_name("host", 100, 58, 98)
    # Graphviz diagrams are laid out top to bottom when left to right would not fit.
    topo = TopologyDiagram([ServerPlacement("notes", "stdio"), ServerPlacement("weather", "stdio"),
                            ServerPlacement("issues", "http")])
    drawn = topo.to_svg()
    if drawn is not None:  # a Graphviz binary is installed
        assert svg_width_px(drawn) <= FIT_WIDTH
        assert "rankdir=TB" in list(topo.layouts())[1]
        assert svg_width_px(LifecycleDiagram().to_svg() or "") <= FIT_WIDTH
    from mcp_sim.trace.embed import svg_img

    folded = svg_img("<svg xmlns='http://www.w3.org/2000/svg' width='2000' height='10'/>", "wide", width=2000)
    assert f"<details class='{FULL_VIEW_CLASS}'><summary>open full size (2,000 px wide)</summary>" in folded
    assert folded.count("data:image/svg+xml") == 2
