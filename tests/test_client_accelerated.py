"""The Client's accelerated twin records exactly the trace of the readable Client.

Every client-heavy story runs twice — once as the course's readable :class:`Client`, once with
``mcp_sim.accelerated.use()`` (one timer per request, a send without a cancel scope, kept ``_meta``) — and the two JSON Lines
exports must be equal byte for byte: timeouts and cancellation, late and duplicate responses,
progress, legacy server requests, MRTR, restart after a crash, the list cache and subscriptions, and
every ready-made scenario in every revision and on every transport.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio
import pytest
from test_client_cache import tools_listing
from test_client_fakeserver import Ctx, FakeServer, run, text_result
from test_client_input import HostStub, MrtrForecast, legacy_forecast
from test_client_requests import ExpiringStream, slow_echo
from test_client_restart import _server as fragile_server

from mcp_sim import accelerated
from mcp_sim.roles.cache import ListCache
from mcp_sim.roles.client import AcceleratedClient, Client, ClientCallbacks, OutcomeUnknown, RequestTimeout
from mcp_sim.roles.server_session import serve
from mcp_sim.scenarios import SCENARIOS, run_scenario
from mcp_sim.sim.world import Simulation, current_simulation
from mcp_sim.trace.jsonl import dumps_jsonl
from mcp_sim.transports import Faults, Latency, open_link
from mcp_sim.transports.memory import memory_link
from mcp_sim.wire.jsonrpc import JSONRPCResultResponse

Story = Callable[[], str]


def both_ways(story: Story) -> tuple[str, str]:
    """The story's trace as the readable Client records it, and as the accelerated one does."""
    with accelerated.use(False):
        plain = story()
    with accelerated.use():
        fast = story()
    return plain, fast


def test_the_switch_chooses_the_client_at_creation() -> None:
    with accelerated.use(False):
        plain = Client()
    with accelerated.use():
        fast = Client()
    assert type(plain) is Client and type(fast) is AcceleratedClient
    assert isinstance(fast, Client)


# --- requests in flight ----------------------------------------------------------------------------

def timeouts_and_late_responses(era: str) -> str:
    async def body(client: Client) -> None:
        async def one(n: int) -> None:
            try:
                await client.call_tool("echo", {"n": n, "delay": 5 - n}, timeout=3)
            except RequestTimeout:
                pass

        async with anyio.create_task_group() as tg:
            for n in range(5):
                tg.start_soon(one, n)
        await anyio.sleep(10)  # the answers to the timed-out calls arrive late

    _, rec = run(FakeServer(era=era, handlers={"tools/call": slow_echo}), body, Client(era=era))
    return dumps_jsonl(rec.events)


def duplicates_and_progress() -> str:
    async def twice(params: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
        await ctx.notify("notifications/progress", {"progressToken": "progress-1", "progress": 1, "total": 2})
        await ctx.stream.send(JSONRPCResultResponse(ctx.request_id, text_result("first")))
        await ctx.stream.send(JSONRPCResultResponse(99, text_result("stray")))
        return text_result("second")

    seen: list[float] = []

    async def body(client: Client) -> None:
        await client.call_tool("twice", {}, on_progress=lambda p, t, m: seen.append(p))
        await anyio.sleep(1)

    _, rec = run(FakeServer(era="legacy", handlers={"tools/call": twice}), body, Client(era="legacy"))
    assert seen == [1]
    return dumps_jsonl(rec.events)


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_timeouts_cancellation_and_late_responses(era: str) -> None:
    plain, fast = both_ways(lambda: timeouts_and_late_responses(era))
    assert plain == fast
    assert '"timeout"' in plain and '"late"' in plain and "notifications/cancelled" in plain


def test_duplicate_stray_responses_and_progress() -> None:
    plain, fast = both_ways(duplicates_and_progress)
    assert plain == fast
    assert '"duplicate"' in plain and '"unknown"' in plain and "notifications/progress" in plain


def session_expired() -> str:
    """A stream whose third send finds the legacy HTTP session gone."""
    sim = Simulation(0)
    server = FakeServer(era="legacy", handlers={"tools/call": slow_echo})

    async def main() -> None:
        c_end, s_end = memory_link(sim, "weather")
        async with anyio.create_task_group() as tg:
            tg.start_soon(server, s_end)
            client = Client(era="legacy")
            await client.connect(ExpiringStream(c_end, expire_at=3), tg)
            await client.call_tool("echo", {"n": 7, "delay": 0})
            await client.close()

    sim.run(main)
    return dumps_jsonl(sim.recorder.events)


def test_an_expired_session_is_opened_again() -> None:
    plain, fast = both_ways(session_expired)
    assert plain == fast and '"session-expired"' in plain


# --- opening the session: era detection, -32022 ------------------------------------------------------

async def opened(client: Client) -> str | None:
    return client.era


def opening(server: Callable[[], FakeServer], client: Callable[[], Client]) -> str:
    _, rec = run(server(), opened, client())
    return dumps_jsonl(rec.events)


@pytest.mark.parametrize("server_era", ["legacy", "modern", "dual"])
def test_era_detection(server_era: str) -> None:
    plain, fast = both_ways(lambda: opening(lambda: FakeServer(era=server_era), lambda: Client(era="auto")))
    assert plain == fast and "server/discover" in plain


def test_a_silent_probe_and_a_renegotiated_version() -> None:
    def silent() -> FakeServer:
        return FakeServer(era="legacy", silent=frozenset({"server/discover"}))

    plain, fast = both_ways(lambda: opening(silent, lambda: Client(era="auto", probe_timeout=2.0)))
    assert plain == fast and '"timeout"' in plain

    def from_the_future() -> Client:
        return Client(era="modern", versions=("2026-07-28", "2027-01-01"))

    plain, fast = both_ways(lambda: opening(lambda: FakeServer(era="modern"), from_the_future))
    assert plain == fast and "-32022" in plain


# --- client input: legacy server requests, modern MRTR ---------------------------------------------

def legacy_server_requests() -> str:
    _, rec = run(FakeServer(era="legacy", handlers={"tools/call": legacy_forecast}),
                 lambda c: c.call_tool("get_forecast", {}), Client(era="legacy", callbacks=HostStub().callbacks()))
    return dumps_jsonl(rec.events)


def mrtr_rounds() -> str:
    _, rec = run(FakeServer(era="modern", handlers={"tools/call": MrtrForecast()}),
                 lambda c: c.call_tool("get_forecast", {"days": 2}),
                 Client(era="modern", callbacks=HostStub().callbacks()))
    return dumps_jsonl(rec.events)


def test_legacy_server_requests() -> None:
    plain, fast = both_ways(legacy_server_requests)
    assert plain == fast
    assert "elicitation/create" in plain and "sampling/createMessage" in plain


def test_mrtr() -> None:
    plain, fast = both_ways(mrtr_rounds)
    assert plain == fast
    assert plain.count('"input_required"') == 2 and "inputResponses" in plain


# --- the list cache and subscriptions --------------------------------------------------------------

def cache_and_listen() -> str:
    async def listen(params: dict[str, Any], ctx: Ctx) -> None:
        sub = {"io.modelcontextprotocol/subscriptionId": ctx.request_id}
        await ctx.notify("notifications/subscriptions/acknowledged",
                         {"notifications": {"toolsListChanged": True}, "_meta": sub})
        await anyio.sleep(1)
        await ctx.notify("notifications/tools/list_changed", {"_meta": sub})

    server = FakeServer(era="modern", capabilities={"tools": {"listChanged": True}},
                        handlers={"subscriptions/listen": listen, "tools/list": tools_listing(ttl=5_000)})

    async def body(client: Client) -> None:
        client.cache = ListCache(current_simulation().now)
        await client.list_tools()
        await client.list_tools()  # from the cache: not on the wire
        sub = await client.listen({"toolsListChanged": True})
        await anyio.sleep(2)
        await client.list_tools()  # invalidated by the notification
        await sub.close()
        await anyio.sleep(6)
        await client.list_tools()  # expired

    _, rec = run(server, body, Client(era="modern"))
    return dumps_jsonl(rec.events)


def test_cache_and_subscriptions() -> None:
    plain, fast = both_ways(cache_and_listen)
    assert plain == fast
    events = [json.loads(line) for line in plain.splitlines()]
    asked = [e for e in events if e["kind"] == "request" and e["method"] == "tools/list"]
    assert len(asked) == 3  # four list_tools: one served from the cache
    assert "subscriptions/listen" in plain and "notifications/cancelled" in plain


# --- a crashed stdio server, restarted --------------------------------------------------------------

def restart_after_crash(revision: str, trusted: bool) -> str:
    sim = Simulation(11)
    server = fragile_server()

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            stream = await open_link(sim, tg, "fragile", lambda s: serve(server, s), transport="stdio",
                                     revision=revision)
            legacy = revision < "2026"
            client = Client("app", era="legacy" if legacy else "modern", callbacks=ClientCallbacks(),
                            retry_after_crash=("slow",) if trusted else ())
            await client.connect(stream, tg)
            if legacy:
                await client.subscribe_resource("notes://today")
            else:
                await client.listen({"resourceSubscriptions": ["notes://today"]})

            async def crash_soon() -> None:
                await anyio.sleep(0.5)
                stream.process.crash(exit_code=3, reason="out of memory")

            tg.start_soon(crash_soon)
            if trusted:
                await client.call_tool("slow", {"seconds": 2})
            else:
                with pytest.raises(OutcomeUnknown):
                    await client.call_tool("slow", {"seconds": 2})
            server.resource_updated("notes://today")
            await anyio.sleep(0.1)
            await client.close()

    sim.run(main)
    return dumps_jsonl(sim.recorder.events)


@pytest.mark.parametrize("trusted", [False, True])
@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
def test_restart_and_resubscribe(revision: str, trusted: bool) -> None:
    plain, fast = both_ways(lambda: restart_after_crash(revision, trusted))
    assert plain == fast
    assert '"restart"' in plain
    assert ("because the host trusts it to be idempotent" in plain) is trusted
    assert ('"outcome-unknown"' in plain) is not trusted


# --- every ready-made scenario ---------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(SCENARIOS))
@pytest.mark.parametrize("revision", ["2025-06-18", "2025-11-25", "2026-07-28"])
def test_every_scenario_on_memory(name: str, revision: str) -> None:
    plain, fast = both_ways(lambda: dumps_jsonl(run_scenario(name, revision=revision, seed=3).events))
    assert plain == fast and plain


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
@pytest.mark.parametrize("name", ["complete-call", "weather-mrtr", "multi-server"])
def test_scenarios_on_the_other_transports(name: str, revision: str, transport: str) -> None:
    plain, fast = both_ways(lambda: dumps_jsonl(run_scenario(name, revision=revision, transport=transport).events))
    assert plain == fast and plain


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
def test_a_scenario_under_faults(revision: str) -> None:
    faults = {"issues": Faults(latency=Latency.exponential(0.5), drop=0.2, duplicate=0.2, reorder=0.2)}

    def story() -> str:
        return dumps_jsonl(run_scenario("complete-call", revision=revision, seed=5, faults=faults).events)

    plain, fast = both_ways(story)
    assert plain == fast
    assert '"dropped"' in plain or '"duplicate"' in plain


# --- task-augmented calls ----------------------------------------------------------------------------

def tasks_story(era: str) -> str:
    """A required task polled to its end, a task that asks for input, and one cancelled at its deadline."""
    from test_client_realwire import build_jobs

    from mcp_sim.bridge.real import accept_elicitation
    from mcp_sim.roles.client import TaskTimeout

    sim = Simulation(3)

    async def main() -> None:
        client_end, server_end = memory_link(sim, "jobs")
        async with anyio.create_task_group() as tg:
            tg.start_soon(serve, build_jobs(), server_end)
            client = Client(era=era, callbacks=accept_elicitation({"ok": True}), sim=sim)  # type: ignore[arg-type]
            async with client.connected_to(client_end):
                await client.list_tools()
                await client.call_tool("batch", {"n": 2}, task=True if era == "modern" else None)
                await client.call_tool("approve", {}, task=True)
                with pytest.raises(TaskTimeout):
                    await client.call_tool_as_task("forever", {}, task_timeout=3)
            tg.cancel_scope.cancel()

    sim.run(main)
    return dumps_jsonl(sim.recorder.events)


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_task_calls(era: str) -> None:
    plain, fast = both_ways(lambda: tasks_story(era))
    assert plain == fast
    assert "tasks/get" in plain and "tasks/cancel" in plain
