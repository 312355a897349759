"""Tasks on a lost message (issue "faults without surprises, part two", item 3).

A task lives on the server, not in any one request: a lost ``tasks/get`` or ``tasks/update`` answer
costs one short per-request deadline and a resend, never the task (rule
``tasks.sim-client-poll-deadline``); a crash empties the restarted server's tasks and every caller
learns its task's fate — a result, or :class:`TaskLost` saying why — never ``working`` for ever nor a
bare ``-32602`` (rule ``tasks.sim-crash-forgets-tasks``).

Each fault is placed exactly: a first run without faults numbers the frames the server sends, and
the second run drops the one answer the test is about (``Faults(drop_at=...)`` on that direction).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import pytest

from mcp_sim.capabilities.context import Context
from mcp_sim.roles.client import Client, ClientCallbacks, ConnectionLost, TaskLost, TaskTimeout
from mcp_sim.roles.client.tasks import MIN_TASK_REQUEST_TIMEOUT
from mcp_sim.roles.server import Server
from mcp_sim.roles.server_session import serve
from mcp_sim.sim.world import Simulation
from mcp_sim.trace.jsonl import dumps_jsonl
from mcp_sim.transports import open_link
from mcp_sim.transports.faults import Faults, LinkFaults

LEGACY, MODERN = "2025-11-25", "2026-07-28"
TRANSPORTS = ("memory", "stdio", "http")


def _server(poll_ms: int = 1_000) -> Server:
    server = Server("jobs", task_poll_interval_ms=poll_ms)

    @server.tool(task_support="optional")
    async def job(ctx: Context, seconds: float) -> str:
        """A job that takes a while."""
        await ctx.sleep(seconds)
        return f"done after {seconds:g} s"

    @server.tool(task_support="optional")
    async def approve(ctx: Context) -> str:
        """Asks the user inside the task, then finishes."""
        await ctx.sleep(1)
        answer = await ctx.elicit("Go ahead?", {"type": "object", "properties": {"ok": {"type": "boolean"}}})
        await ctx.sleep(1)
        return f"ok={answer['content']['ok']}"

    return server


async def _yes(server: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"ok": True}}


def _answer_frame(sim: Simulation, method: str, nth: int = 1) -> int:
    """The number of the server→client frame that answers the ``nth`` ``method`` request (1-based),
    counted as the wire counts them: every message the server sent on the link, in order."""
    asked: dict[Any, str] = {}
    count = 0
    seen = 0
    for event in sim.recorder:
        if event.kind == "request" and event.sender.startswith("client/"):
            asked[event.request_id] = event.method or ""
        elif event.kind in ("response", "error", "notification", "request") and event.sender.startswith("server/"):
            count += 1
            if event.kind in ("response", "error") and asked.get(event.request_id) == method:
                seen += 1
                if seen == nth:
                    return count
    raise AssertionError(f"no answer to {method} #{nth} in the trace")


def _run(seed: int, transport: str, revision: str, body: Callable[[Client], Any], *,
         faults: LinkFaults | None = None, server: Server | None = None) -> tuple[Simulation, Any]:
    sim = Simulation(seed)
    srv = server or _server()
    out: dict[str, Any] = {}

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            stream = await open_link(sim, tg, "jobs", lambda s: serve(srv, s),
                                     transport=transport,  # type: ignore[call-overload]
                                     revision=revision, faults=faults)
            client = Client("app", era="legacy" if revision == LEGACY else "modern",
                            callbacks=ClientCallbacks(elicitation=_yes))
            await client.connect(stream, tg)
            try:
                out["value"] = await body(client)
            except Exception as exc:  # the outcome under test, whatever it is
                out["value"] = exc
            await client.close()
            if transport == "http":
                await stream.server.aclose()  # type: ignore[attr-defined]

    sim.run(main)
    return sim, out["value"]


def _job(client: Client) -> Any:
    return client.call_tool("job", {"seconds": 2}, task=True, timeout=30)


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("revision", [LEGACY, MODERN])
def test_a_lost_poll_costs_one_interval_not_the_task(transport: str, revision: str) -> None:
    """A 2 s job whose first ``tasks/get`` answer is lost still ends with its result, soon after 2 s."""
    sim, clean = _run(5, transport, revision, _job)
    assert clean["content"][0]["text"] == "done after 2 s"
    clean_end = sim.now()
    frame = _answer_frame(sim, "tasks/get")
    sim, result = _run(5, transport, revision, _job, faults=LinkFaults(to_client=Faults(drop_at=(frame,))))
    assert not isinstance(result, Exception), result
    assert result["content"][0]["text"] == "done after 2 s"
    assert not isinstance(result, TaskTimeout)
    gets = [e for e in sim.recorder if e.kind == "request" and e.method == "tasks/get"]
    assert len({e.request_id for e in gets}) == len(gets)  # sent again with a new id
    assert not [e for e in sim.recorder if e.kind == "request" and e.method == "tasks/cancel"]
    assert any("asks again" in (e.text or "") for e in sim.recorder)
    # The loss cost about one poll deadline, nowhere near the 30 s task deadline.
    assert sim.now() - clean_end <= MIN_TASK_REQUEST_TIMEOUT + 1.5


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_lost_tasks_update_answer_is_sent_again_and_the_task_ends(transport: str) -> None:
    """2026-07-28: the acknowledgement of ``tasks/update`` is lost; the update goes again (the server
    ignores answers to requests no longer open), the user is asked once, and the task completes."""
    def body(client: Client) -> Any:
        return client.call_tool("approve", {}, task=True, timeout=30)

    asked: list[str] = []

    async def counting_yes(server: str, params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params.get("message", ""))
        return await _yes(server, params)

    sim, clean = _run(6, transport, MODERN, body)
    assert clean["content"][0]["text"] == "ok=True"
    frame = _answer_frame(sim, "tasks/update")
    sim, result = _run(6, transport, MODERN, lambda c: _with_elicitation(c, counting_yes, body),
                       faults=LinkFaults(to_client=Faults(drop_at=(frame,))))
    assert not isinstance(result, Exception), result
    assert result["content"][0]["text"] == "ok=True"
    updates = [e for e in sim.recorder if e.kind == "request" and e.method == "tasks/update"]
    assert len(updates) == 2 and updates[0].request_id != updates[1].request_id
    assert asked == ["Go ahead?"]  # the user answered once; the second update re-sent that answer
    assert not [e for e in sim.recorder if e.kind == "request" and e.method == "tasks/cancel"]


async def _with_elicitation(client: Client, handler: Any, body: Callable[[Client], Any]) -> Any:
    client.callbacks.elicitation = handler
    return await body(client)


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("revision", [LEGACY, MODERN])
def test_a_crash_with_tasks_in_flight_tells_every_caller_its_tasks_fate(transport: str, revision: str) -> None:
    """Two tasks: one finished on the server before the crash (its result not fetched yet: the poll
    interval is 5 s), one still running. After the crash each caller gets its result or
    :class:`TaskLost` — never ``TaskTimeout``, never a task ``working`` for ever, never a bare
    ``-32602`` — and the restarted server holds no task still working."""
    server = _server(poll_ms=5_000)

    async def body(client: Client) -> dict[str, Any]:
        outcomes: dict[str, Any] = {}

        async def one(name: str, seconds: float) -> None:
            try:
                outcomes[name] = await client.call_tool("job", {"seconds": seconds}, task=True, timeout=60)
            except Exception as exc:
                outcomes[name] = exc

        async with anyio.create_task_group() as tg:
            tg.start_soon(one, "short", 1.0)
            tg.start_soon(one, "long", 20.0)
            await anyio.sleep(3)
            stream: Any = client._stream
            if transport == "stdio":
                stream.process.crash(reason="out of memory")
            else:
                stream.server.crash()
        return outcomes

    sim, outcomes = _run(8, transport, revision, body, server=server)
    assert set(outcomes) == {"short", "long"}
    for name, outcome in outcomes.items():
        assert not isinstance(outcome, TaskTimeout), (name, outcome)
        if isinstance(outcome, Exception):
            assert isinstance(outcome, (TaskLost, ConnectionLost)), (name, outcome)
            if isinstance(outcome, TaskLost):
                assert outcome.task_id.startswith("task-") and outcome.why
        else:
            assert outcome["content"][0]["text"].startswith("done after"), (name, outcome)
    # The long task cannot have finished: it was lost, and said so.
    assert isinstance(outcomes["long"], TaskLost)
    if transport == "stdio":
        # A new process starts with no tasks: the finished one is gone too, and the reason is given.
        assert isinstance(outcomes["short"], TaskLost) and "restarted" in outcomes["short"].why
        assert "restarted" in outcomes["long"].why
    elif revision == LEGACY:
        # The crash ended the session; the new session cannot see the old one's tasks.
        assert isinstance(outcomes["short"], TaskLost) and "session was renewed" in outcomes["short"].why
    else:
        # 2026-07-28 HTTP: the server process restarted empty, so the finished task is gone too, and
        # its caller is told so instead of polling an unknown task.
        assert isinstance(outcomes["short"], TaskLost), outcomes["short"]
    if transport == "http":
        assert server.task_store.tasks == {}  # the restarted process holds no task at all
    assert not [r for r in server.task_store.tasks.values() if not r.is_terminal]
    assert sim.now() < 30  # nobody waited for the 60 s deadline
    assert any("is lost" in (e.text or "") and e.kind == "app" for e in sim.recorder)


def test_same_seed_same_trace_with_a_lost_poll() -> None:
    sim, _ = _run(5, "http", MODERN, _job)
    frame = _answer_frame(sim, "tasks/get")
    faults = LinkFaults(to_client=Faults(drop_at=(frame,)))
    first, _ = _run(5, "http", MODERN, _job, faults=faults)
    second, _ = _run(5, "http", MODERN, _job, faults=faults)
    assert dumps_jsonl(first.recorder.events) == dumps_jsonl(second.recorder.events)
