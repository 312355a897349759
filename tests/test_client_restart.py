"""A stdio server that crashes: the client restarts it, re-opens the session and re-establishes its
subscriptions (2026-07-28 stdio transport rules); a call whose outcome the crash made unknown is
reported as such, and sent again only for a tool the host trusts to be idempotent."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcp_sim.capabilities.context import Context
from mcp_sim.roles.client import Client, OutcomeUnknown
from mcp_sim.roles.server import Server
from mcp_sim.roles.server_session import serve
from mcp_sim.sim.world import Simulation
from mcp_sim.transports import open_link
from mcp_sim.transports.faults import Faults, LinkFaults


def _server() -> Server:
    server = Server("fragile", version="1.0.0")

    @server.tool()
    async def slow(ctx: Context, seconds: float) -> str:
        """Work for a while."""
        await ctx.sleep(seconds)
        return f"done after {seconds:g} s"

    @server.resource("notes://today", mime_type="text/plain")
    def today() -> str:
        """Today's note."""
        return "nothing yet"

    return server


def _counting_server(counts: dict[str, int]) -> Server:
    server = _server()

    @server.tool()
    async def pay(ctx: Context, invoice: str) -> str:
        """Pay an invoice (not something to do twice)."""
        counts[invoice] = counts.get(invoice, 0) + 1
        await ctx.sleep(2)
        return f"paid {invoice}"

    return server


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
def test_crash_mid_call_restarts_resubscribes_and_says_the_outcome_is_unknown(revision: str) -> None:
    sim = Simulation(11)
    counts: dict[str, int] = {}
    server = _counting_server(counts)
    seen: list[tuple[str, dict]] = []

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            stream = await open_link(sim, tg, "fragile", lambda s: serve(server, s), transport="stdio",
                                     revision=revision)
            from mcp_sim.roles.client import ClientCallbacks

            client = Client("app", era="legacy" if revision < "2026" else "modern",
                            callbacks=ClientCallbacks(on_notification=lambda *a: seen.append((a[-2], a[-1]))))
            await client.connect(stream, tg)
            if revision < "2026":
                await client.subscribe_resource("notes://today")
            else:
                sub = await client.listen({"resourceSubscriptions": ["notes://today"]})

            async def crash_soon() -> None:
                await anyio.sleep(0.5)
                stream.process.crash(exit_code=3, reason="out of memory")

            tg.start_soon(crash_soon)
            with pytest.raises(OutcomeUnknown) as lost:
                await client.call_tool("pay", {"invoice": "A-1"})
            assert lost.value.method == "tools/call"
            sent = [e.request_id for e in sim.recorder if e.kind == "request" and e.method == "tools/call"]
            assert lost.value.request_id == sent[-1]
            assert client.restarts == 1
            # The new process got the subscription again: a change reaches the client.
            server.resource_updated("notes://today")
            await anyio.sleep(0.1)
            if revision >= "2026":
                assert sub.accepted and not sub.closed
            # The restarted server answers the next call.
            assert (await client.call_tool("pay", {"invoice": "B-2"}))["content"][0]["text"] == "paid B-2"
            await client.close()

    sim.run(main)
    assert counts == {"A-1": 1, "B-2": 1}  # the call with an unknown outcome was not sent again
    calls = [e for e in sim.recorder if e.kind == "request" and e.method == "tools/call"]
    assert [c.request_id for c in calls] == sorted({c.request_id for c in calls})
    opening = "initialize" if revision < "2026" else "server/discover"
    assert [e.method for e in sim.recorder if e.kind == "request" and e.method == opening] == [opening] * 2
    resubscribe = "resources/subscribe" if revision < "2026" else "subscriptions/listen"
    assert len([e for e in sim.recorder if e.kind == "request" and e.method == resubscribe]) == 2
    assert any("restarts fragile" in (e.text or "") for e in sim.recorder)
    assert any("outcome is unknown" in (e.text or "") for e in sim.recorder)
    assert ("notifications/resources/updated", {"uri": "notes://today"}) in [
        (m, {k: v for k, v in p.items() if k != "_meta"}) for m, p in seen]


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
def test_a_tool_the_host_trusts_is_retried_and_the_trace_says_why(revision: str) -> None:
    sim = Simulation(11)
    server = _server()

    async def main() -> dict:
        async with anyio.create_task_group() as tg:
            stream = await open_link(sim, tg, "fragile", lambda s: serve(server, s), transport="stdio",
                                     revision=revision)
            client = Client("app", era="legacy" if revision < "2026" else "modern", retry_after_crash=("slow",))
            await client.connect(stream, tg)

            async def crash_soon() -> None:
                await anyio.sleep(0.5)
                stream.process.crash()

            tg.start_soon(crash_soon)
            result = await client.call_tool("slow", {"seconds": 2})
            await client.close()
            return result

    assert sim.run(main)["content"][0]["text"] == "done after 2 s"
    calls = [e for e in sim.recorder if e.kind == "request" and e.method == "tools/call"]
    assert len(calls) == 2 and calls[0].request_id != calls[1].request_id  # retried with a new id
    notes = [e.text for e in sim.recorder if e.kind == "app" and "retrying tools/call" in (e.text or "")]
    assert len(notes) == 1 and "because the host trusts it to be idempotent" in notes[0]
    assert sim.now() >= 2.5  # the retry ran its full two simulated seconds after the crash


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
def test_a_second_crash_during_the_reopen_is_survived(revision: str) -> None:
    """The first re-open's opening request crashes the new process too: another process is started."""
    legacy = revision < "2026"
    reopen_frame = 4 if legacy else 3  # legacy: initialize, initialized, tools/call; modern: discover, call
    sim = Simulation(21)
    counts: dict[str, int] = {}

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            stream = await open_link(sim, tg, "fragile", lambda s: serve(_counting_server(counts), s),
                                     transport="stdio", revision=revision,
                                     faults=LinkFaults(to_server=Faults(crash_at=reopen_frame)))
            client = Client("app", era="legacy" if legacy else "modern")
            await client.connect(stream, tg)

            async def crash_soon() -> None:
                await anyio.sleep(0.5)
                stream.process.crash()

            tg.start_soon(crash_soon)
            with pytest.raises(OutcomeUnknown):
                await client.call_tool("pay", {"invoice": "A-1"})
            assert client.restarts == 2
            assert (await client.call_tool("pay", {"invoice": "B-2"}))["content"][0]["text"] == "paid B-2"
            await client.close()

    sim.run(main)
    assert counts == {"A-1": 1, "B-2": 1}
    crashed = [e for e in sim.recorder if "crash" in e.marks]
    assert crashed, "the fault plan crashed the re-open"


def test_an_idle_legacy_server_that_crashed_is_restarted_by_the_next_call() -> None:
    sim = Simulation(22)

    async def main() -> dict:
        async with anyio.create_task_group() as tg:
            stream = await open_link(sim, tg, "fragile", lambda s: serve(_server(), s), transport="stdio",
                                     revision="2025-11-25")
            client = Client("app", era="legacy")
            await client.connect(stream, tg)
            await client.call_tool("slow", {"seconds": 0.1})
            stream.process.crash()  # nothing in flight
            await anyio.sleep(1)
            result = await client.call_tool("slow", {"seconds": 0.2})
            assert client.restarts == 1
            await client.close()
            return result

    assert sim.run(main)["content"][0]["text"] == "done after 0.2 s"
    assert [e.method for e in sim.recorder if e.kind == "request"].count("initialize") == 2


def test_a_lost_reinitialize_is_never_followed_by_calls_to_an_uninitialized_process() -> None:
    """Frames to the server: 1 initialize, 2 initialized, 3 tools/call (crash), 4 the re-open's
    initialize — lost. The client starts another process instead of sending anything to this one."""
    sim = Simulation(23)

    async def main() -> dict:
        async with anyio.create_task_group() as tg:
            stream = await open_link(sim, tg, "fragile", lambda s: serve(_server(), s), transport="stdio",
                                     revision="2025-11-25", faults=LinkFaults(to_server=Faults(drop_at=(4,))))
            client = Client("app", era="legacy", timeout=5, retry_after_crash=("slow",))
            await client.connect(stream, tg)

            async def crash_soon() -> None:
                await anyio.sleep(0.5)
                stream.process.crash()

            tg.start_soon(crash_soon)
            result = await client.call_tool("slow", {"seconds": 1})
            assert client.restarts == 2
            await client.close()
            return result

    assert sim.run(main)["content"][0]["text"] == "done after 1 s"
    requests = [e for e in sim.recorder if e.kind == "request"]
    lost = next(i for i, e in enumerate(requests) if "dropped" in e.marks)
    assert requests[lost].method == "initialize"
    assert requests[lost + 1].method == "initialize"  # a fresh process, opened before anything else


def test_no_restart_when_disabled() -> None:
    sim = Simulation(12)

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            stream = await open_link(sim, tg, "fragile", lambda s: serve(_server(), s), transport="stdio")
            client = Client("app", era="modern", restart_on_crash=False)
            await client.connect(stream, tg)

            async def crash_soon() -> None:
                await anyio.sleep(0.5)
                stream.process.crash()

            tg.start_soon(crash_soon)
            from mcp_sim.transports.base import TransportClosed

            with pytest.raises(TransportClosed):
                await client.call_tool("slow", {"seconds": 2})
            assert client.restarts == 0
            await client.close()

    sim.run(main)


def test_a_failing_notification_handler_does_not_stop_the_client() -> None:
    sim = Simulation(13)
    server = _server()

    def broken(server_name: str, method: str, params: dict) -> None:
        raise ValueError("learner bug")

    async def main() -> dict:
        async with anyio.create_task_group() as tg:
            stream = await open_link(sim, tg, "fragile", lambda s: serve(server, s), transport="memory",
                                     revision="2025-11-25")
            from mcp_sim.roles.client import ClientCallbacks

            client = Client("app", era="legacy", callbacks=ClientCallbacks(on_notification=broken))
            await client.connect(stream, tg)
            await client.subscribe_resource("notes://today")
            server.resource_updated("notes://today")
            await anyio.sleep(0.1)
            result = await client.call_tool("slow", {"seconds": 1})  # the client still works
            await client.close()
            return result

    assert sim.run(main)["content"][0]["text"] == "done after 1 s"
    assert any("handler failed" in (e.text or "") and "learner bug" in (e.text or "") for e in sim.recorder)


def test_the_host_names_the_tools_it_trusts_to_be_retried_after_a_crash() -> None:
    """Host.add_server(retry_after_crash=...) is the host's own policy: ``slow`` is retried, ``pay`` is not."""
    from mcp_sim.roles.host import Host

    sim = Simulation(24)
    counts: dict[str, int] = {}
    results: dict[str, Any] = {}

    async def main() -> None:
        async with Host(sim=sim) as host:
            client = await host.add_server("fragile", _counting_server(counts), transport="stdio",
                                           revision="2026-07-28", retry_after_crash=("slow",))
            assert client.retry_after_crash == frozenset({"slow"})
            for tool, args in (("slow", {"seconds": 2}), ("pay", {"invoice": "A-1"})):
                async def crash_soon() -> None:
                    await anyio.sleep(0.5)
                    client._stream.process.crash()  # type: ignore[union-attr]

                async with anyio.create_task_group() as tg:
                    tg.start_soon(crash_soon)
                    try:
                        results[tool] = await client.call_tool(tool, args)
                    except OutcomeUnknown as exc:
                        results[tool] = exc

    sim.run(main)
    assert results["slow"]["content"][0]["text"] == "done after 2 s"
    assert isinstance(results["pay"], OutcomeUnknown) and counts == {"A-1": 1}
    notes = [e.text or "" for e in sim.recorder if e.kind == "app"]
    assert sum("trusts it to be idempotent" in n for n in notes) == 1
    assert sum("outcome is unknown" in n for n in notes) == 1


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_calls_made_while_a_legacy_http_session_is_renewed_wait_for_it(seed: int) -> None:
    """A legacy HTTP server that lost its sessions answers ``404``: the client opens one new session,
    and every call — those that got the 404 and those made while ``initialize`` is in flight — waits
    for it and goes out on it (the lifecycle allows nothing but pings until the session is open)."""
    from mcp_sim.scenarios.fault_lab import Experiment, run_fault_experiment

    run = run_fault_experiment(Experiment(fault="crash", transport="http", revision="2025-11-25", seed=seed))
    assert [c.outcome for c in run.calls] == ["result"] * len(run.calls), run.calls
    initializes = [e for e in run.events if e.kind == "request" and e.method == "initialize"]
    assert len(initializes) == 2  # the first session and exactly one renewal
