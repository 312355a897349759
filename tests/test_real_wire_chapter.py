"""The helpers behind chapter 12, "The real wire" (``mcp_sim.bridge.notebook``).

Real processes and a real socket, both directions, both eras: the official SDK's client against a
server written as a plain function, the simulator's client against a server written with the SDK,
and the SDK's client over loopback HTTP. Every recorded message must be valid for its revision,
everything started must be stopped, and ``steady`` must make a real trace print the same every run.
"""

from __future__ import annotations

import re
import socket
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from test_fidelity import _check_trace

from mcp_sim.bridge.commands import load_server
from mcp_sim.bridge.notebook import (
    factory_source,
    real_times,
    run_sync,
    sdk_client_over_http,
    sdk_client_session,
    sim_client_sessions,
    steady,
    write_server_module,
)
from mcp_sim.protocol.schema import find_spec_dir
from mcp_sim.roles.server import Server
from mcp_sim.scenarios import weather
from mcp_sim.trace.event import TraceEvent
from mcp_sim.trace.events import Trace

needs_spec = pytest.mark.skipif(find_spec_dir() is None, reason="official MCP schemas not found")


def greeter():  # type: ignore[no-untyped-def]
    """A server factory as a learner writes it in the notebook: imports inside."""
    from mcp_sim.roles.server import Server

    server = Server("greeter", version="1.0.0")

    @server.tool()
    def greet(name: str) -> str:
        """Say hello."""
        return f"Hello, {name}!"

    return server


def sdk_notes():  # type: ignore[no-untyped-def]
    """A server built with the official SDK, imports inside."""
    from mcp.server.mcpserver import MCPServer

    mcp = MCPServer("sdk-notes", version="1.0.0")

    @mcp.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    return mcp


async def sdk_steps(client: Any) -> dict[str, Any]:
    tools = [t.name for t in (await client.list_tools()).tools]
    hello = await client.call_tool("greet", {"name": "Ada"})
    return {"tools": tools, "greet": hello.content[0].text}


async def sim_steps(client: Any) -> dict[str, Any]:
    tools = [t["name"] for t in await client.list_all_tools()]
    total = await client.call_tool("add", {"a": 2, "b": 3})
    return {"tools": tools, "add": total["structuredContent"]}


# --- pure helpers ---------------------------------------------------------------------------------------

def test_a_factory_becomes_a_module_mcp_sim_serve_can_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = factory_source(greeter)
    assert source.startswith("def greeter():") and "from mcp_sim.roles.server import Server" in source
    module = write_server_module(greeter, tmp_path, "ch12_greeter")
    assert module.spec == "ch12_greeter:greeter"
    assert module.env()["PYTHONPATH"].split(":")[0] == str(tmp_path)
    assert module.serve_argv()[:4] == [sys.executable, "-m", "mcp_sim.cli", "serve"]
    monkeypatch.syspath_prepend(str(tmp_path))
    server = load_server(module.spec)
    assert isinstance(server, Server) and server.name == "greeter"


def test_a_script_module_serves_itself_over_stdio(tmp_path: Path) -> None:
    module = write_server_module(sdk_notes, tmp_path, "sdk_script", run_stdio=True)
    text = (tmp_path / "sdk_script.py").read_text()
    assert text.rstrip().endswith('sdk_notes().run("stdio")') and 'if __name__ == "__main__":' in text
    assert module.factory == "sdk_notes"


def _event(seq: int, **kw: Any) -> TraceEvent:
    base: dict[str, Any] = dict(seq=seq, t_ms=123.456 * seq, link="x", sender="client/x", receiver="server/x",
                                kind="transport", message=None)
    base.update(kw)
    return TraceEvent(**base)


def test_steady_masks_what_changes_between_real_runs_and_keeps_messages() -> None:
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    events = [
        _event(1, text="spawned process 4242: /opt/venv/bin/python3.11 /var/folders/ab/sdk_server.py",
               caption="spawned process 4242: /opt/venv/bin/python3.11 -m mcp_sim.cli serve m:build"),
        _event(2, kind="request", message=message, raw='{"path": "/keep/me"}', method="tools/list",
               framing={"http": {"request": {"headers": {"mcp-session-id": "abc123", "Host": "127.0.0.1:51234",
                                                         "mcp-method": "tools/list"}}}}),
        _event(3, text="listening on http://127.0.0.1:51234/mcp"),
        _event(4, text="legacy session 501a8dea… opened"),
        _event(5, text="process 4242 exited with code 0"),
    ]
    out = steady(events, title="t")
    assert isinstance(out, Trace) and out.title == "t"
    assert [e.t_ms for e in out] == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert out[0].text == "spawned process <pid>: python sdk_server.py"
    assert out[0].caption == "spawned process <pid>: python -m mcp_sim.cli serve m:build"
    assert out[1].message == message and out[1].raw == '{"path": "/keep/me"}'  # messages are never touched
    headers = out[1].framing["http"]["request"]["headers"]
    assert headers == {"mcp-session-id": "<masked>", "Host": "<masked>", "mcp-method": "tools/list"}
    assert out[2].text == "listening on http://127.0.0.1:<port>/mcp"
    assert out[3].text == "legacy session <id>… opened"
    assert out[4].text == "process <pid> exited with code 0"
    assert real_times(events) == [246.912]  # the measured values stay available


def test_run_sync_returns_raises_and_times_out() -> None:
    async def fine() -> int:
        await anyio.sleep(0)
        return 7

    async def broken() -> None:
        raise ValueError("boom")

    async def slow() -> None:
        await anyio.sleep(10)

    assert run_sync(fine) == 7
    with pytest.raises(ValueError, match="boom"):
        run_sync(broken)
    with pytest.raises(TimeoutError):
        run_sync(slow, timeout=0.2)


# --- real processes and sockets ---------------------------------------------------------------------------

@needs_spec
@pytest.mark.slow
@pytest.mark.parametrize(("mode", "version", "first"), [("legacy", "2025-11-25", "initialize"),
                                                        ("auto", "2026-07-28", "server/discover")])
def test_the_sdk_client_drives_a_notebook_server_over_real_stdio(mode: str, version: str, first: str) -> None:
    run = sdk_client_session(greeter, mode=mode, steps=sdk_steps)
    assert run.protocol_version == version
    assert run.seen == {"tools": ["greet"], "greet": "Hello, Ada!"}
    frames = [e for e in run.trace if e.message is not None]
    assert frames[0].method == first and frames[0].sender == "client/greeter"
    assert all(e.transport == "stdio" for e in frames)
    assert {e.framing["stdio"]["stream"] for e in frames} == {"stdin", "stdout"}
    assert _check_trace(run.trace, version) == len(frames)
    assert run.extra["stderr"] == ""  # nothing but protocol on stdout, nothing logged at warning level


@needs_spec
@pytest.mark.slow
def test_the_simulated_client_drives_an_sdk_server_in_both_eras_and_stops_it() -> None:
    runs = sim_client_sessions(sdk_notes, eras=("legacy", "modern"), steps=sim_steps)
    assert list(runs) == ["legacy", "modern"]
    for era, version in (("legacy", "2025-11-25"), ("modern", "2026-07-28")):
        run = runs[era]  # type: ignore[index]
        assert (run.era, run.protocol_version) == (era, version)
        assert run.seen == {"tools": ["add"], "add": {"result": 5}}
        events = list(run.trace)
        assert "spawned process" in (events[0].text or "")
        assert events[-1].kind == "transport" and "exited with code 0" in (events[-1].text or "")
        assert _check_trace(run.trace, version) > 0
        assert steady(run.trace)[0].text == "spawned process <pid>: python sdk_server.py"


@needs_spec
@pytest.mark.slow
def test_the_sdk_client_over_loopback_http_leaves_no_port_open() -> None:
    async def steps(client: Any) -> dict[str, Any]:
        result = await client.call_tool("get_forecast", {"city": "Oslo"})
        return {"forecast": result.content[0].text}

    run = sdk_client_over_http(weather.build(), mode="auto", steps=steps)
    assert run.protocol_version == "2026-07-28" and run.seen["forecast"].startswith("Oslo: day 1")
    assert run.extra["port_closed"] is True
    posts = [e for e in run.trace if e.kind == "request"]
    assert [e.method for e in posts][:2] == ["server/discover", "tools/call"]
    assert all(e.framing["http"]["request"]["headers"]["mcp-method"] == e.method for e in posts)
    assert _check_trace(run.trace, "2026-07-28") > 0
    listening = next(e for e in steady(run.trace) if e.kind == "transport")
    assert listening.text == "listening on http://127.0.0.1:<port>/mcp"


def test_a_port_that_nobody_listens_on_is_reported_closed() -> None:
    from mcp_sim.bridge.notebook import _port_closed

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert _port_closed(port) is False
    assert _port_closed(port) is True


@pytest.mark.slow
def test_check_servers_checks_a_notebook_server_and_an_sdk_server_in_both_eras_and_stops_them() -> None:
    from mcp_sim.bridge.check import CheckOptions
    from mcp_sim.bridge.notebook import check_servers

    options = CheckOptions(nemesis=("malformed",), deadline=30.0, grace=20.0)  # five processes in all
    runs = check_servers(simulated={"greeter": greeter}, sdk={"sdk_notes": sdk_notes}, options=options)
    assert list(runs) == ["greeter", "sdk_notes"]
    for run in runs.values():
        assert run.report.passed and all(f.strength != "MUST" for f in run.report.findings)
        assert {era: s.revision for era, s in run.report.eras.items()} == {"legacy": "2025-11-25",
                                                                          "modern": "2026-07-28"}, run.report.eras
        # every process the checker spawned also ended before check_servers returned
        spawned = [e for e in run.trace if (e.text or "").startswith("spawned process")]
        ended = [e for e in run.trace if e.kind == "transport" and re.search(r"(exited|terminated)", e.text or "")]
        assert len(spawned) == 3 and len(ended) == len(spawned)  # legacy: workload and probe; modern: workload
        text = run.findings_text()
        assert not re.search(r"\d+ ms|process \d|\d+\.\d+ s", text)  # nothing that changes from run to run
        # the part before the nemesis: one era's workload process, no stderr line, no nemesis action
        part = run.before_nemesis("modern")
        assert part and {e.link for e in part} == {f"{run.name}-modern"}
        assert all(e.kind != "log" and not any(m.startswith("nemesis:") for m in e.marks) for e in part)
        assert [e.seq for e in part] == list(range(1, len(part) + 1))  # numbered apart from the other processes
        assert any("nemesis:" in " ".join(e.marks) for e in run.link_trace("modern"))
    assert runs["greeter"].report.findings == []  # the simulator's server keeps every rule checked here
    assert runs["greeter"].findings_text().splitlines()[0] == "greeter: passed, no MUST broken"
    # the SDK's server is silent on unreadable lines: a SHOULD, shown by rule and era
    assert "check.malformed-frame-answered" in runs["sdk_notes"].findings_text()
