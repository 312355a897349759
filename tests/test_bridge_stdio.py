"""``mcp-sim serve`` over a real stdio pipe: bad input gets the right JSON-RPC answer, good input
still works afterwards, stdout carries nothing but protocol, and closing stdin ends the process
with exit code 0."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sim_server import env_with_tests, serve_argv

from mcp_sim.bridge.stdio import StdioServerStream, spawn_stdio
from mcp_sim.transports.base import LinkInfo
from mcp_sim.wire.jsonrpc import InvalidMessage, JSONRPCRequest, JSONRPCResultResponse

MODERN_META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
               "io.modelcontextprotocol/clientCapabilities": {}}


def modern(id: int, method: str, **params: Any) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": {**params, "_meta": MODERN_META}})


def run_lines(lines: list[str], *extra: str, server: str = "sim_server:build") -> tuple[list[dict[str, Any]], str, int]:
    """Write ``lines`` to a fresh ``mcp-sim serve`` process, close stdin, collect stdout lines."""
    proc = subprocess.run(serve_argv(*extra, server=server), input="\n".join(lines) + "\n", capture_output=True,
                          text=True, timeout=60, env=env_with_tests())
    replies = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    return replies, proc.stderr, proc.returncode


@pytest.mark.slow
def test_bad_input_answered_with_the_right_code_and_id_then_serving_goes_on() -> None:
    lines = [
        "this is not json",                                                     # -32700, no id
        '{"jsonrpc":"2.0","id":1,"method":"tools/list"',                        # truncated: -32700
        '{"jsonrpc":"2.0","id":null,"method":"tools/list"}',                    # null id: -32600, no id
        '{"jsonrpc":"1.0","id":2,"method":"tools/list"}',                       # wrong version: -32600 id 2
        '{"jsonrpc":"2.0","id":3}',                                             # neither method nor result
        '[{"jsonrpc":"2.0","id":4,"method":"tools/list"}]',                     # batch: -32600
        modern(5, "no/such/method"),                                            # -32601
        modern(6, "tools/call", name="no_such_tool", arguments={}),             # -32602
        modern(7, "tools/call", name="get_forecast", arguments={"city": 42}),   # isError result
        modern(8, "tools/call", name="shout", arguments={"text": "still here"}),  # a stray print
        modern(9, "tools/call", name="get_forecast", arguments={"city": "Oslo"}),
    ]
    replies, stderr, code = run_lines(lines)
    assert code == 0, stderr
    assert len(replies) == len(lines), replies
    by_position = dict(enumerate(replies))

    def error(i: int) -> tuple[Any, int]:
        reply = by_position[i]
        return reply.get("id", "absent"), reply["error"]["code"]

    # Errors for unreadable requests carry no id (there was none to read).
    assert error(0) == ("absent", -32700)
    assert error(1) == ("absent", -32700)
    assert error(2) == ("absent", -32600)
    assert error(3) == (2, -32600)
    assert error(4) == (3, -32600)
    assert error(5) == ("absent", -32600)
    # Requests answered out of order are matched by id.
    rest = {r["id"]: r for r in replies[6:]}
    assert rest[5]["error"]["code"] == -32601
    assert rest[6]["error"]["code"] == -32602
    assert rest[7]["result"]["isError"] is True
    assert rest[8]["result"]["content"][0]["text"] == "STILL HERE"
    assert "Oslo" in rest[9]["result"]["content"][0]["text"]
    # stdout carried protocol only: the stray print went to stderr.
    assert "a stray print" in stderr


@pytest.mark.slow
def test_legacy_handshake_over_the_pipe_and_a_pinned_revision() -> None:
    init = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
    lines = [init, '{"jsonrpc":"2.0","method":"notifications/initialized"}',
             '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nope"}}',
             '{"jsonrpc":"2.0","id":3,"method":"ping"}']
    replies, stderr, code = run_lines(lines, "--revision", "2025-06-18", server="weather")
    assert code == 0, stderr
    by_id = {r["id"]: r for r in replies}
    assert by_id[1]["result"]["protocolVersion"] == "2025-06-18"
    assert by_id[2]["error"]["code"] == -32602
    assert by_id[3]["result"] == {}
    assert all("resultType" not in r.get("result", {}) for r in replies)


@pytest.mark.slow
def test_our_client_spawns_the_server_and_stdin_close_ends_it_with_code_0() -> None:
    async def main() -> tuple[Any, Any, list[Any]]:
        with anyio.fail_after(60):
            async with spawn_stdio(serve_argv(), env=env_with_tests()) as stream:
                await stream.send_raw("garbage")
                bad = await stream.receive()
                await stream.send(JSONRPCRequest(1, "server/discover", {"_meta": MODERN_META}))
                good = await stream.receive()
            return bad, good, stream.recorder.events

    bad, good, events = anyio.run(main)
    assert isinstance(bad, JSONRPCResultResponse) is False
    assert not isinstance(bad, InvalidMessage)  # the server's -32700 answer is itself a valid message
    assert bad.to_dict()["error"]["code"] == -32700
    assert isinstance(good, JSONRPCResultResponse) and "2026-07-28" in good.result["supportedVersions"]
    kinds = [e.kind for e in events]
    assert kinds[0] == "transport" and kinds[-1] == "transport"
    assert "exited with code 0" in (events[-1].text or "")
    frames = [e for e in events if e.message is not None or e.kind == "invalid"]
    assert [e.framing["stdio"]["stream"] for e in frames] == ["stdin", "stdout", "stdin", "stdout"]
    assert frames[0].kind == "invalid"
    assert all(e.t_ms > 0 for e in events)


def test_server_stream_reads_lines_and_skips_blank_ones(tmp_path: Path) -> None:
    """The server end, on ordinary files instead of the process's own pipes."""
    source = tmp_path / "in.txt"
    source.write_bytes(b'\n{"jsonrpc":"2.0","id":1,"method":"ping"}\r\n  \n{bad\n')
    sink = tmp_path / "out.txt"
    info = LinkInfo("t", "stdio", "client/t", "server/t")

    async def main() -> list[Any]:
        with source.open("rb") as stdin, sink.open("wb") as stdout:
            stream = StdioServerStream(info, stdin=stdin, stdout=stdout)
            got = [await stream.receive(), await stream.receive()]
            await stream.send(JSONRPCResultResponse(1, {}))
            with pytest.raises(anyio.EndOfStream):
                await stream.receive()
            return got

    first, second = anyio.run(main)
    assert isinstance(first, JSONRPCRequest) and first.method == "ping"
    assert isinstance(second, InvalidMessage) and second.reply.error.code == -32700
    assert sink.read_bytes() == b'{"jsonrpc":"2.0","id":1,"result":{}}\n'
