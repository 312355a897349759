"""``mcp-sim serve`` / ``mcp-sim connect`` and the notebook helpers ``RealServer`` / ``run_real``."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sim_server import env_with_tests, sdk_server_argv, serve_argv

from mcp_sim.bridge.commands import ServerSpecError, connect_command, load_server, serve_command
from mcp_sim.bridge.real import RealServer, connect_real, run_real
from mcp_sim.roles.server import Server


def test_server_specs_and_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert isinstance(load_server("weather"), Server)
    assert "confirm_delete" in load_server("sim_server:build").tools
    for bad in ("no_such_scenario", "mcp_sim.wire:JSONRPC_VERSION", "no.such.module:x"):
        with pytest.raises(ServerSpecError):
            load_server(bad)
    assert serve_command(["no_such_scenario"]) == 2
    assert serve_command(["weather", "--transport", "http", "--host", "0.0.0.0"]) == 2
    assert connect_command([]) == 2
    assert connect_command(["--url", "http://127.0.0.1:1/mcp", "--", "python", "x.py"]) == 2
    assert "0.0.0.0" in capsys.readouterr().err


@pytest.mark.slow
def test_connect_command_prints_a_summary_and_saves_the_real_trace(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    trace = tmp_path / "weather.jsonl"
    code = connect_command(["--era", "modern", "--trace", str(trace),
                            "--call", "get_forecast", "--args", '{"city": "Oslo"}',
                            "--call", "get_forecast", "--args", '{"city": "Atlantis"}',
                            "--read", "weather://stations", "--prompt", "plan_trip",
                            "--prompt-args", '{"destination": "Oslo"}', "--", *serve_argv(server="weather")])
    out = capsys.readouterr().out
    assert code == 0
    assert "weather 1.0.0" in out and "modern (protocol 2026-07-28)" in out
    assert "get_forecast" in out and "weather://stations" in out and "plan_trip" in out
    assert "Oslo: day 1" in out and "(isError)" in out
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    frames = [e for e in events if e["message"] is not None]
    assert frames[0]["message"]["method"] == "server/discover"
    assert {e["transport"] for e in frames} == {"stdio"}
    assert all(set(e) >= {"t_ms", "from", "to", "revision", "message"} for e in events)
    times = [e["t_ms"] for e in events]
    assert times == sorted(times) and times[-1] > 0
    assert "exited with code 0" in events[-1]["text"]


@pytest.mark.slow
def test_real_server_and_run_real_work_without_await() -> None:
    with RealServer(sdk_server_argv(), era="modern") as server:
        assert {t["name"] for t in server.list_tools()} == {"add", "echo", "confirm_delete"}
        assert server.call_tool("add", {"a": 20, "b": 22})["structuredContent"] == {"result": 42}
        assert server.read_resource("notes://readme")["contents"][0]["text"].startswith("Hello")
        assert server.client.protocol_version == "2026-07-28"
    assert "exited with code 0" in (server.recorder.events[-1].text or "")
    recorder = run_real(sdk_server_argv(), era="legacy", calls=[("echo", {"text": "hi"})])
    methods = [e.method for e in recorder.events if e.kind == "request"]
    assert methods[0] == "initialize" and "tools/call" in methods


@pytest.mark.slow
def test_serve_over_http_then_sigterm_exits_cleanly() -> None:
    proc = subprocess.Popen([*serve_argv("--transport", "http", "--port", "0")], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env_with_tests())
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "127.0.0.1" in line, proc.stderr.read() if proc.stderr else line
        url = line.split()[-1]

        async def main() -> str:
            with anyio.fail_after(30):
                async with connect_real(url, era="auto") as session:
                    result = await session.client.call_tool("shout", {"text": "over http"})
                    return str(result["content"][0]["text"])

        assert anyio.run(main) == "OVER HTTP"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)


@pytest.mark.slow
def test_serve_with_a_bearer_token_and_connect_with_and_without_it(capsys: pytest.CaptureFixture[str]) -> None:
    """``mcp-sim serve --bearer-token`` refuses a client without the token (one request, a clear
    error on stderr, exit code 1) and serves one that sends it with ``--bearer-token``."""
    proc = subprocess.Popen([*serve_argv("--transport", "http", "--port", "0", "--bearer-token", "s3cret")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env_with_tests())
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "127.0.0.1" in line, proc.stderr.read() if proc.stderr else line
        url = line.split()[-1]
        assert connect_command(["--url", url, "--bearer-token", "wrong"]) == 1
        err = capsys.readouterr().err
        assert "RequestRefused" in err and "HTTP 401: invalid_token" in err and "Group" not in err
        assert connect_command(["--url", url, "--bearer-token", "s3cret", "--call", "shout",
                                "--args", '{"text": "hi"}']) == 0
        assert "HI" in capsys.readouterr().out
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)
