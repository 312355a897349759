"""The shape of the simulated HTTP transport's cost under load: what one in-flight client keeps alive
for the garbage collector, what a finished client leaves behind, and the light pieces that keep both
small (the mailbox, the stream logs). Counts of objects, not seconds: they hold on a busy machine.

Why it matters: Python's collector runs full passes over every tracked object, and more of them the
more objects survive young collections. With thousands of clients in flight at once, each object an
in-flight call keeps alive makes every full pass longer, so the cost per client grows with the number
of clients (``benchmarks/http_load.py`` shows it)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

import anyio
import pytest

from mcp_sim.protocol.meta import CLIENT_CAPABILITIES, PROTOCOL_VERSION
from mcp_sim.sim.world import Simulation
from mcp_sim.trace.recorder import Recorder
from mcp_sim.transports import MessageStream, SimulatedHttpServer
from mcp_sim.transports.http_mailbox import Mailbox
from mcp_sim.transports.sse import SseStreamLog
from mcp_sim.wire.jsonrpc import JSONRPCNotification, JSONRPCRequest, JSONRPCResultResponse, RequestId

MODERN_META = {PROTOCOL_VERSION: "2026-07-28", CLIENT_CAPABILITIES: {}}

# Tracked objects per in-flight client at the busiest moment (client task and stream included). Before
# the transport was trimmed these were about 121 (2026-07-28) and 151 (legacy); now about 100 and 109.
# Most of what is left is anyio's: a task costs some twenty objects, and each call runs the server
# program in one.
IN_FLIGHT_LIMIT = {"modern": 110, "legacy": 120}


async def echo_server(stream: MessageStream) -> None:
    """Answers every request at once with an empty result (``initialize`` with a minimal one)."""
    while True:
        try:
            message = await stream.receive()
        except anyio.EndOfStream:
            return
        if isinstance(message, JSONRPCRequest):
            result: dict[str, object] = {}
            if message.method == "initialize":
                result = {"protocolVersion": "2025-11-25", "capabilities": {},
                          "serverInfo": {"name": "echo", "version": "1"}}
            await stream.send(JSONRPCResultResponse(message.id, result), related_request_id=message.id)


async def call(stream: MessageStream, request_id: RequestId, method: str, params: dict[str, object]) -> None:
    await stream.send(JSONRPCRequest(request_id, method, params))
    while True:
        answer = await stream.receive()
        if isinstance(answer, JSONRPCResultResponse) and answer.id == request_id:
            return


def load(era: str, clients: int, calls: int, *, peak: list[int] | None = None) -> None:
    """``clients`` clients at once, ``calls`` calls each; with ``peak``, the most tracked objects seen."""
    sim = Simulation(3, recorder=Recorder(enabled=False))

    async def one_client(server: SimulatedHttpServer, n: int) -> None:
        stream = server.connect(f"c{n}", open_get_stream=False)
        if era == "legacy":
            await call(stream, 0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}})
            stream.revision = "2025-11-25"
            await stream.send(JSONRPCNotification("notifications/initialized"))
        for i in range(1, calls + 1):
            params: dict[str, object] = {"name": "echo", "arguments": {"n": n}}
            if era == "modern":
                params["_meta"] = MODERN_META
            await call(stream, i, "tools/call", params)
        await stream.aclose()

    async def watch(done: anyio.Event) -> None:
        assert peak is not None
        while not done.is_set():
            peak[0] = max(peak[0], len(gc.get_objects()))
            await anyio.sleep(0)

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            server = SimulatedHttpServer(sim, tg, "hub", echo_server)
            done = anyio.Event()
            if peak is not None:
                tg.start_soon(watch, done)
            async with anyio.create_task_group() as group:
                for n in range(clients):
                    group.start_soon(one_client, server, n)
            done.set()
            await anyio.sleep(1.0)
            await server.aclose()

    sim.run(main)


@contextmanager
def collector_off() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_an_in_flight_client_keeps_few_objects_alive(era: str) -> None:
    clients = 300
    gc.collect()
    before = len(gc.get_objects())
    peak = [0]
    load(era, clients, 4, peak=peak)
    per_client = (peak[0] - before) / clients
    assert 0 < per_client < IN_FLIGHT_LIMIT[era], per_client


def transport_objects() -> int:
    """How many objects of the transport's own classes (exchanges, calls, sessions, mailboxes …) live."""
    modules = (vars(type(o)).get("__module__") for o in gc.get_objects())
    return sum(isinstance(module, str) and module.startswith("mcp_sim.transports") for module in modules)


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_finished_clients_leave_nothing_behind_without_the_collector(era: str) -> None:
    """Reference counting alone frees every exchange, call and session the moment its client is done
    (a reference cycle per client would leave them all for the collector)."""
    with collector_off():
        before = transport_objects()
        load(era, 50, 3)
        assert transport_objects() == before


def test_a_finished_stream_log_holds_nothing_the_collector_tracks_and_still_replays() -> None:
    log = SseStreamLog(4)
    delivered = []
    log.attach(delivered.append, lambda: None)
    log.append("", retry=500)  # a priming event
    log.append('{"jsonrpc":"2.0","id":1,"result":{}}')
    log.finish()
    gc.collect()  # a collection stops tracking the tuples that hold only text and numbers …
    gc.collect()  # … and the next one the tuple that holds only those
    assert all(not gc.is_tracked(kept) for kept in gc.get_referents(log) if kept is not SseStreamLog)
    assert log.attach(lambda _event: None, lambda: None, after=0) == delivered  # replayed as written
    assert [event.id for event in delivered] == ["4-1", "4-2"] and delivered[0].retry == 500
    assert log.attach(lambda _event: None, lambda: None, after=1) == delivered[1:]


def test_a_stream_that_cannot_be_resumed_keeps_no_events() -> None:
    log = SseStreamLog(0, resumable=False)
    log.append("x")
    log.finish()
    assert log.count == 1 and log.attach(lambda _event: None, lambda: None, after=0) == []


def test_the_mailbox_keeps_order_waits_and_ends() -> None:
    got: list[str] = []

    async def main() -> None:
        box = Mailbox()
        box.put("a")
        box.put("b")
        got.append(await box.get())
        got.append(await box.get())
        async with anyio.create_task_group() as tg:
            async def reader() -> None:
                got.append(await box.get())  # waits until "c" is put
                with pytest.raises(anyio.EndOfStream):
                    await box.get()

            tg.start_soon(reader)
            await anyio.sleep(0.1)
            box.put("c")
            await anyio.sleep(0.1)
            box.close()
        box.put("d")  # after closing: nobody reads it, it is dropped
        with pytest.raises(anyio.EndOfStream):
            await box.get()

    Simulation(1).run(main)
    assert got == ["a", "b", "c"]


def test_a_closed_mailbox_is_drained_before_it_ends() -> None:
    async def main() -> list[str]:
        box = Mailbox()
        box.put("last words")
        box.close()
        first = await box.get()
        with pytest.raises(anyio.EndOfStream):
            await box.get()
        return [first]

    assert Simulation(1).run(main) == ["last words"]


def test_a_reader_whose_wait_was_cancelled_can_wait_again() -> None:
    """Cancelling a waiting reader cancels the future it waited on; the next wait must not find it."""
    async def main() -> list[str]:
        box = Mailbox()
        with anyio.move_on_after(1.0) as scope:
            await box.get()  # nothing comes: the timeout cancels the wait
        assert scope.cancelled_caught
        got: list[str] = []
        async with anyio.create_task_group() as tg:
            async def reader() -> None:
                got.append(await box.get())

            tg.start_soon(reader)
            await anyio.sleep(0.1)
            box.put("after the timeout")
        return got

    assert Simulation(1).run(main) == ["after the timeout"]


def test_a_second_reader_while_one_waits_is_refused() -> None:
    async def main() -> None:
        box = Mailbox()
        async with anyio.create_task_group() as tg:
            tg.start_soon(box.get)
            await anyio.sleep(0.1)
            with pytest.raises(anyio.BusyResourceError):
                await box.get()
            box.put("for the first reader")

    Simulation(1).run(main)


def test_the_load_benchmark_reports_the_collector_figures() -> None:
    import json
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "benchmarks" / "http_load.py"
    proc = subprocess.run([sys.executable, str(script), "--sizes", "3", "6", "--calls", "2"],
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    for era in ("legacy", "modern"):
        assert report[era]["per_client_cpu_cost_ratio_6_vs_3"] > 0
        for row in report[era]["clients"].values():
            assert row["gc_tracked_objects_per_client_at_peak"] > 0
            assert row["full_collections"] == row["collections"][2] >= 0
            assert len(row["promoted_per_call"]) == 2
            assert row["collector_cpu_seconds"] >= row["full_collection_cpu_seconds"] >= 0
