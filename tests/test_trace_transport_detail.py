"""The trace table and the player show how every message travelled: the stdio bytes, or the HTTP
method, path, status, headers and SSE event id — in both eras (course chapter 06).

Every expected value is read from the recorded events, never written here: whatever the transports
record, the table and the player must show it for the row it belongs to.
"""

from __future__ import annotations

import html
import re
from dataclasses import replace
from functools import cache
from typing import Any

import pytest

from mcp_sim.scenarios import run_scenario
from mcp_sim.trace import Trace, TraceTable
from mcp_sim.trace.event import TraceEvent
from mcp_sim.trace.page import trace_page
from mcp_sim.trace.table import COLUMNS
from mcp_sim.transports.faults import Faults, LinkFaults
from mcp_sim.widgets.player import PlayerState, http_text

ERAS = ("2025-11-25", "2026-07-28")
SCENARIOS = ("weather", "subscriptions", "logging-progress-cancel")
RUNS = [(name, revision, transport) for name in SCENARIOS for revision in ERAS for transport in ("stdio", "http")]


@cache
def trace_of(name: str, revision: str, transport: str, cut: bool = False) -> Trace:
    faults = None
    if cut:  # every server-to-client SSE stream is cut at its 3rd event: the client resumes with Last-Event-ID
        links = Trace.of(run_scenario(name, revision=revision, transport=transport)).links()
        faults = {link: LinkFaults(to_client=Faults(cut_sse_at=3)) for link in links}
    return Trace.of(run_scenario(name, revision=revision, transport=transport, faults=faults))


def stdio_line(e: TraceEvent) -> str:
    line = e.framing["stdio"].get("line")
    return line if line is not None else f"{e.raw}\n"


def http_parts(e: TraceEvent) -> list[dict[str, Any]]:
    http = e.framing["http"]
    return [http[key] for key in ("request", "response") if key in http]


def sse_id(e: TraceEvent) -> str | None:
    sse = e.framing.get("sse") or e.framing["http"].get("sse") or {}
    return sse.get("id")


def text_blocks(table: TraceTable) -> dict[int, str]:
    """The text view cut into rows: a row's line and the indented detail lines under it."""
    blocks: dict[int, list[str]] = {}
    current: list[str] = []
    for line in table.to_text().splitlines()[2:]:
        if line.startswith(" "):
            current.append(line)
        else:
            current = blocks.setdefault(int(line.split()[0]), [])
            current.append(line)
    return {seq: "\n".join(lines) for seq, lines in blocks.items()}


def html_rows(table: TraceTable) -> dict[int, str]:
    rows = re.findall(r"<tr data-seq='(\d+)'>(.*?)</tr>", table.to_html(), flags=re.S)
    return {int(seq): html.unescape(body) for seq, body in rows}


def assert_shows_transport(e: TraceEvent, shown: str, view: str) -> None:
    if "stdio" in e.framing:
        line = stdio_line(e)
        assert line.endswith("\n")
        assert repr(line.encode("utf-8")) in shown, f"{view}: #{e.seq} lacks its stdio bytes"
        assert e.framing["stdio"]["stream"] in shown
        return
    for part in http_parts(e):
        if "method" in part:
            assert f"{part['method']} {part['path']}" in shown, f"{view}: #{e.seq} lacks its request line"
        if "status" in part:
            assert f"{part['status']} {part['reason']}".strip() in shown, f"{view}: #{e.seq} lacks its status"
        for name, value in part["headers"].items():
            assert f"{name}: {value}" in shown, f"{view}: #{e.seq} lacks the header {name}"
    if sse_id(e) is not None:
        assert re.search(rf"\bid:? {re.escape(str(sse_id(e)))}\b", shown), f"{view}: #{e.seq} lacks its SSE id"


def wired(trace: Trace) -> list[TraceEvent]:
    return [e for e in trace if "stdio" in e.framing or "http" in e.framing]


@pytest.mark.parametrize(("name", "revision", "transport"), RUNS)
def test_the_table_shows_every_rows_transport_detail(name: str, revision: str, transport: str) -> None:
    trace = trace_of(name, revision, transport)
    events = wired(trace)
    messages = [e for e in trace if e.message is not None and e.kind != "app"]
    assert messages and all(e in events for e in messages), "every message on the link carries its framing"
    table = TraceTable(trace)
    assert "transport" in table.columns
    blocks, rows = text_blocks(table), html_rows(table)
    assert sorted(blocks) == sorted(rows) == [e.seq for e in trace]
    for e in events:
        assert_shows_transport(e, blocks[e.seq], "text")
        assert_shows_transport(e, rows[e.seq], "html")
        assert "<details>" in table.to_html().split(f"<tr data-seq='{e.seq}'>")[1].split("</tr>")[0]


@pytest.mark.parametrize(("name", "revision", "transport"), RUNS)
def test_the_player_shows_every_steps_transport_detail(name: str, revision: str, transport: str) -> None:
    trace = trace_of(name, revision, transport)
    state = PlayerState(trace)
    for e in wired(trace):
        state.jump_to_seq(e.seq)
        view = "stdio" if "stdio" in e.framing else "http"
        assert_shows_transport(e, state.detail(view), f"player {view} view")


def test_the_headers_of_each_era_are_all_shown() -> None:
    """The scenarios really carry each era's headers (so the tests above are not vacuous), and the
    table shows every one of them."""
    seen: dict[str, set[str]] = {era: set() for era in ERAS}
    for era in ERAS:
        trace = trace_of("subscriptions", era, "http")
        text = TraceTable(trace).to_text()
        for e in wired(trace):
            for part in http_parts(e):
                seen[era] |= set(part["headers"])
                assert all(f"{k}: {v}" in text for k, v in part["headers"].items())
    assert {"Mcp-Session-Id", "MCP-Protocol-Version"} <= seen["2025-11-25"]
    assert {"MCP-Protocol-Version", "Mcp-Method", "Mcp-Name"} <= seen["2026-07-28"]
    assert "Mcp-Session-Id" not in seen["2026-07-28"]


def test_a_resumed_stream_shows_its_last_event_id_and_the_replayed_ids() -> None:
    trace = trace_of("logging-progress-cancel", "2025-11-25", "http", cut=True)
    resumed = [e for e in wired(trace) if "Last-Event-ID" in e.framing["http"].get("request", {}).get("headers", {})]
    replayed = [e for e in trace if "replayed" in e.marks]
    assert resumed and replayed
    blocks, rows = text_blocks(TraceTable(trace)), html_rows(TraceTable(trace))
    for e in resumed + replayed:
        assert_shows_transport(e, blocks[e.seq], "text")
        assert_shows_transport(e, rows[e.seq], "html")
    first = resumed[0].framing["http"]["request"]
    assert f"{first['method']} {first['path']}" in blocks[resumed[0].seq].splitlines()[0]  # in the short cell too


def test_the_short_cell_names_the_stdio_size_and_the_http_status() -> None:
    trace = trace_of("weather", "2026-07-28", "stdio")
    table = TraceTable(trace)
    for e, row in zip(trace, table.rows, strict=True):
        if "stdio" in e.framing:
            assert row.transport == f"{e.framing['stdio']['stream']}, {len(stdio_line(e).encode())} bytes"
    http = trace_of("weather", "2025-11-25", "http")
    for e, row in zip(http, TraceTable(http).rows, strict=True):
        if "http" in e.framing and "response" in e.framing["http"]:
            assert f"→ {e.framing['http']['response']['status']}" in row.transport
            if sse_id(e) is not None:
                assert row.transport.endswith(f"SSE id {sse_id(e)}")


def test_memory_links_get_no_transport_column() -> None:
    trace = Trace.of(run_scenario("weather", revision="2026-07-28", transport="memory"))
    assert not wired(trace)
    table = TraceTable(trace)
    assert table.columns == COLUMNS
    assert "transport" not in table.to_text().splitlines()[0].split()


def test_the_standalone_page_has_the_transport_cells() -> None:
    trace = trace_of("weather", "2026-07-28", "http")
    page = html.unescape(trace_page(trace))
    assert "<th scope='col'>transport</th>" in page
    for e in wired(trace):
        for part in http_parts(e):
            for name, value in part["headers"].items():
                assert f"{name}: {value}" in page


def test_real_wire_framing_is_shown_too() -> None:
    """The real-wire bridge records less (a URL instead of a path, the byte count instead of the
    line, the SSE event inside the exchange); the table and the player still show all of it."""
    trace = trace_of("weather", "2026-07-28", "http")
    request = next(e for e in trace if e.kind == "request")
    response = next(e for e in trace if e.kind == "response")
    assert request.raw is not None and response.raw is not None
    posted = replace(request, framing={"http": {"request": {
        "method": "POST", "url": "http://127.0.0.1:8000/mcp", "headers": request.framing["http"]["request"]["headers"]}}})
    streamed = replace(response, framing={"http": {"response": {"status": 200, "content_type": "text/event-stream"},
                                                   "sse": {"event": "message"}}})
    piped = replace(request, transport="stdio", framing={"stdio": {"stream": "stdin",
                                                                   "bytes": len(request.raw.encode()) + 1}})
    table = TraceTable([posted, streamed, piped])
    text = table.to_text()
    url = posted.framing["http"]["request"]["url"]
    assert f"POST {url}" in text and "200" in text and '(content_type: "text/event-stream")' in text
    assert all(f"{k}: {v}" in text for k, v in posted.framing["http"]["request"]["headers"].items())
    assert "event message" in text  # the SSE event, though the bridge nests it in the exchange
    assert repr((request.raw + "\n").encode()) in text
    assert table.rows[2].transport == f"stdin, {len(request.raw.encode()) + 1} bytes"
    player = http_text(streamed)
    assert "--- SSE event ---" in player and "event: message" in player and f"data: {response.raw}" in player
    assert "(sse:" not in player
