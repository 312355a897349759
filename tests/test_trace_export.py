"""Exports: JSON Lines loads back equal; Mermaid and the standalone HTML page are complete."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from mcp_sim.trace import load_jsonl, loads_jsonl, to_jsonl, to_mermaid, trace_page
from mcp_sim.trace.samples import synthetic_trace_recorder, weather_recorder, weather_trace


def test_jsonl_round_trip_through_a_file(tmp_path: Path) -> None:
    rec = weather_recorder(drop_call=True)
    path = tmp_path / "weather.jsonl"
    rec.to_jsonl(path)
    loaded = load_jsonl(path)
    assert loaded == rec.trace()
    assert [e.message for e in loaded] == [e.message for e in rec.events]


def test_jsonl_lines_have_the_required_fields() -> None:
    buffer = io.StringIO()
    to_jsonl(weather_trace(), buffer)
    lines = buffer.getvalue().splitlines()
    assert len(lines) == len(weather_trace())
    for line in lines:
        obj = json.loads(line)
        assert {"t_ms", "from", "to", "revision", "message"} <= set(obj)
    first_message = json.loads(lines[1])
    assert first_message["message"]["method"] == "initialize"
    assert first_message["raw"] == json.dumps(first_message["message"], separators=(",", ":"))


def test_jsonl_round_trip_through_text_and_odd_content() -> None:
    rec = synthetic_trace_recorder(30)
    rec.record_message(link="x", sender="server/x", receiver="client/x", raw="not json \u0001 at all")
    rec.record_message(link="x", sender="server/x", receiver="client/x",
                       raw='{"jsonrpc":"2.0","id":"é","result":{"t":"line\\nbreak","n":1.5}}')
    rec.record_event(kind="transport", link="x", sender="client/x", receiver="server/x", text="connected",
                     framing={"stdio": {"stream": "stdin", "line": "x\n"}})
    buffer = io.StringIO()
    to_jsonl(rec.events, buffer)
    assert all("\n" not in line for line in buffer.getvalue().split("\n")[:-1])
    assert loads_jsonl(buffer.getvalue()) == rec.trace()
    assert load_jsonl(io.StringIO(buffer.getvalue())) == rec.trace()


def test_broken_jsonl_names_the_line() -> None:
    with pytest.raises(ValueError, match="line 2"):
        loads_jsonl('{"seq":1,"t_ms":0,"link":"a","from":"a","to":"b","kind":"app"}\nnot json\n')


def test_mermaid_sequence_diagram() -> None:
    text = to_mermaid(weather_trace())
    lines = text.splitlines()
    assert lines[0] == "sequenceDiagram"
    assert "    actor user as user" in lines
    assert "    participant client_weather as client/weather" in lines
    assert "    client_weather->>server_weather: → tools/list #35;2 @3 ms" in lines
    assert "    server_weather-->>client_weather: ← result #35;2 @5 ms" in lines
    assert any(line.startswith("    server_weather-)client_weather: ⇢ notifications/progress") for line in lines)
    assert any(line.startswith("    server_weather--xclient_weather: ✖ error -32601") for line in lines)
    assert any(line.startswith("    Note over server_weather: stderr:") for line in lines)
    dropped = to_mermaid(weather_trace(drop_call=True))
    assert "client_weather-xserver_weather: → tools/call #35;3 [dropped]" in dropped
    # No raw ';' or '#' that Mermaid would misread inside message text.
    for line in lines[6:]:
        body = line.split(": ", 1)[1]
        assert ";" not in re.sub(r"#\d+;", "", body) and "#" not in re.sub(r"#\d+;", "", body)


def test_standalone_html_page() -> None:
    trace = weather_trace()
    page = trace_page(trace, title="Weather")
    assert page.startswith("<!DOCTYPE html>")
    assert "<svg" in page and "<table>" in page and "<title>Weather</title>" in page
    # No external assets: nothing is fetched from anywhere.
    assert not re.search(r"""(src|href)=['"](https?:)?//""", page)
    assert "<script" not in page and "<link" not in page
    # Every message's JSON is on the page.
    for e in trace:
        if e.message is not None:
            assert f"id='e{e.seq}'" in page
    assert "&quot;get_forecast&quot;" in page
    assert page == trace_page(weather_trace(), title="Weather")  # deterministic
