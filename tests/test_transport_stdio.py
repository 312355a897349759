"""Simulated stdio: newline framing, stdout pollution, stderr logs, shutdown, crash and restart."""

from __future__ import annotations

import anyio
import pytest
from test_transport_peers import AnsweringServer, MiniClient, modern_params

from mcp_sim.sim.world import Simulation
from mcp_sim.transports import AlreadyConnected, AuthInfo, Faults, LinkFaults, TransportClosed, open_link
from mcp_sim.transports.base import MessageStream
from mcp_sim.wire.jsonrpc import PARSE_ERROR, InvalidMessage, JSONRPCRequest, JSONRPCResultResponse


def stdio_events(sim: Simulation) -> list[tuple[str, str, str | None]]:
    return [(e.kind, e.framing["stdio"]["stream"], e.framing["stdio"]["line"])
            for e in sim.recorder if "stdio" in e.framing]


def test_each_message_is_one_utf8_line_on_stdin_and_stdout() -> None:
    sim = Simulation(1)
    peer = AnsweringServer()

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            stream = await open_link(sim, tg, "files", peer, transport="stdio", revision="2025-11-25")
            client = MiniClient(sim, stream, tg)
            answer = await client.request("tools/call", {"name": "echo", "arguments": {"text": "two\nlines ü"}})
            assert isinstance(answer, JSONRPCResultResponse)
            await stream.aclose()

    sim.run(main)
    assert stdio_events(sim) == [
        ("request", "stdin",
         '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"two\\nlines ü"}}}\n'),
        ("response", "stdout",
         '{"jsonrpc":"2.0","id":1,"result":{"echo":"tools/call","params":{"name":"echo","arguments":'
         '{"text":"two\\nlines ü"}}}}\n'),
    ]
    request = next(e for e in sim.recorder if e.kind == "request")
    assert (request.link, request.sender, request.receiver, request.transport, request.revision) == (
        "files", "client/files", "server/files", "stdio", "2025-11-25")


def test_a_stray_print_on_stdout_corrupts_the_stream() -> None:
    sim = Simulation(2)
    received: list[object] = []

    async def chatty_server(stream: MessageStream) -> None:
        from mcp_sim.transports.stdio import StdioServerStream

        assert isinstance(stream, StdioServerStream)
        process = stream.process
        while True:
            try:
                message = await stream.receive()
            except anyio.EndOfStream:
                return
            assert isinstance(message, JSONRPCRequest)
            print("debug: handling", message.method, file=process.stdout)  # the classic bug
            process.stdout_write_raw("debug...")
            await stream.send(JSONRPCResultResponse(message.id, {}))

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            stream = await open_link(sim, tg, "chatty", chatty_server, transport="stdio")
            await stream.send(JSONRPCRequest(1, "ping"))
            for _ in range(3):
                received.append(await stream.receive())
            await stream.aclose()

    sim.run(main)
    first, second, third = received
    assert isinstance(first, InvalidMessage) and first.raw == "debug: handling ping"
    assert first.reply.error.code == PARSE_ERROR
    assert isinstance(second, InvalidMessage) and second.raw == "debug..."
    assert isinstance(third, JSONRPCResultResponse)
    assert stdio_events(sim)[1:3] == [("invalid", "stdout", "debug: handling ping\n"),
                                      ("invalid", "stdout", "debug...\n")]


def test_a_raw_newline_splits_a_frame_into_two_invalid_lines() -> None:
    sim = Simulation(3)
    peer = AnsweringServer()

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            stream = await open_link(sim, tg, "split", peer, transport="stdio")
            await stream.send_raw('{"jsonrpc":"2.0","id":1,\n"method":"ping"}')
            replies = [await stream.receive(), await stream.receive()]
            assert [r.to_dict()["error"]["code"] for r in replies] == [PARSE_ERROR, PARSE_ERROR]  # type: ignore[union-attr]
            await stream.aclose()

    sim.run(main)
    assert peer.invalid == ['{"jsonrpc":"2.0","id":1,', '"method":"ping"}']
    assert [e[:2] for e in stdio_events(sim)][:2] == [("invalid", "stdin"), ("invalid", "stdin")]


def test_stderr_lines_are_logs_not_errors() -> None:
    sim = Simulation(4)

    async def logging_server(stream: MessageStream) -> None:
        from mcp_sim.transports.stdio import StdioServerStream

        assert isinstance(stream, StdioServerStream)
        print("starting up", file=stream.process.stderr)
        stream.process.stderr_write("WARNING: no config file, using defaults")
        try:
            while True:
                await stream.receive()
        except anyio.EndOfStream:
            return

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            stream = await open_link(sim, tg, "logger", logging_server, transport="stdio")
            assert await stream.read_stderr_line() == "starting up"
            await stream.aclose()
            assert stream.process.returncode == 0

    sim.run(main)
    logs = [(e.kind, e.text, e.framing) for e in sim.recorder if e.kind == "log"]
    assert logs == [
        ("log", "starting up", {"stdio": {"stream": "stderr", "line": "starting up\n"}}),
        ("log", "WARNING: no config file, using defaults",
         {"stdio": {"stream": "stderr", "line": "WARNING: no config file, using defaults\n"}}),
    ]
    assert not [e for e in sim.recorder if e.kind in ("invalid", "error")]


@pytest.mark.parametrize(("eof", "sigterm", "code", "steps"), [
    (True, True, 0, ["shutdown"]),
    (False, True, -15, ["shutdown", "shutdown", "SIGTERM"]),
    (False, False, -9, ["shutdown", "shutdown", "SIGTERM", "shutdown", "SIGKILL"]),
])
def test_shutdown_closes_stdin_then_sigterm_then_sigkill(eof: bool, sigterm: bool, code: int,
                                                         steps: list[str]) -> None:
    sim = Simulation(5)
    peer = AnsweringServer()

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            stream = await open_link(sim, tg, "stubborn", peer, transport="stdio", exits_on_stdin_eof=eof,
                                     handles_sigterm=sigterm, shutdown_grace=2.0)
            await stream.aclose()
            assert stream.process.returncode == code

    sim.run(main)
    events = [e for e in sim.recorder if e.kind == "transport"]
    marks = [e.marks[0] for e in events if e.marks and e.marks[0] in ("shutdown", "SIGTERM", "SIGKILL")]
    assert marks == steps
    exit_event = events[-1]
    assert exit_event.marks[0] == "exit"
    assert exit_event.t_ms == {0: 0.0, -15: 2000.0, -9: 4000.0}[code]
    assert exit_event.text == {0: "process 1001 exited with code 0", -15: "process 1001 terminated by SIGTERM",
                               -9: "process 1001 killed by SIGKILL"}[code]


def test_crash_mid_request_loses_it_and_restart_gives_a_new_session() -> None:
    sim = Simulation(6)
    peer = AnsweringServer()

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            stream = await open_link(sim, tg, "fragile", peer, transport="stdio",
                                     auth=AuthInfo(subject="alice"))
            client = MiniClient(sim, stream, tg)
            await client.initialize()

            async def crash_soon() -> None:
                await anyio.sleep(0.5)
                stream.process.crash(exit_code=3, reason="segfault in a native library")

            tg.start_soon(crash_soon)
            with pytest.raises(TransportClosed):
                await client.request("slow", {"seconds": 10})
            assert stream.process.returncode == 3
            with pytest.raises(TransportClosed):
                await stream.send(JSONRPCRequest(99, "ping"))
            old_pid = stream.process.pid

            await stream.restart()
            assert stream.process.pid != old_pid
            client = MiniClient(sim, stream, tg)
            await client.initialize()  # a new process is a new server session
            answer = await client.request("slow", {"seconds": 1})
            assert isinstance(answer, JSONRPCResultResponse)
            await stream.aclose()

    sim.run(main)
    assert peer.connections == 2
    assert peer.auth[0] == AuthInfo(subject="alice")
    assert [m for _, m, _ in peer.handled] == ["initialize", "slow", "initialize", "slow"]
    texts = [e.text for e in sim.recorder if e.kind in ("transport", "log")]
    assert "fatal: segfault in a native library" in texts
    assert "process 1001 exited with code 3" in texts
    assert "client launches `mcp-server fragile` as process 1002" in texts


def test_only_one_client_per_stdio_server() -> None:
    sim = Simulation(7)

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            stream = await open_link(sim, tg, "solo", AnsweringServer(), transport="stdio")
            with pytest.raises(AlreadyConnected, match="one client per server process"):
                stream.process.connect()
            await stream.aclose()

    sim.run(main)


def test_crash_at_fault_kills_the_process_as_the_line_arrives() -> None:
    sim = Simulation(8)
    peer = AnsweringServer()

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            stream = await open_link(sim, tg, "doomed", peer, transport="stdio",
                                     faults=LinkFaults(to_server=Faults(crash_at=2)))
            client = MiniClient(sim, stream, tg)
            assert isinstance(await client.request("tools/list", modern_params()), JSONRPCResultResponse)
            with pytest.raises(TransportClosed):
                await client.request("tools/list", modern_params())
            await stream.restart()
            client = MiniClient(sim, stream, tg)
            assert isinstance(await client.request("tools/list", modern_params()), JSONRPCResultResponse)
            await stream.aclose()

    sim.run(main)
    crash = [e for e in sim.recorder if "crash" in e.marks]
    assert crash[0].kind == "request" and crash[0].framing["stdio"]["stream"] == "stdin"
    assert peer.connections == 2
