"""A stdio server that crashes mid-request: the client restarts it, re-opens the session, retries the
lost request with a new id and re-establishes its subscriptions (2026-07-28 stdio transport rules)."""

from __future__ import annotations

import anyio
import pytest

from mcp_sim.capabilities.context import Context
from mcp_sim.roles.client import Client
from mcp_sim.roles.server import Server
from mcp_sim.roles.server_session import serve
from mcp_sim.sim.world import Simulation
from mcp_sim.transports import open_link


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


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
def test_crash_mid_request_is_restarted_retried_and_resubscribed(revision: str) -> None:
    sim = Simulation(11)
    server = _server()
    seen: list[tuple[str, dict]] = []

    async def main() -> dict:
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
            result = await client.call_tool("slow", {"seconds": 2})
            assert client.restarts == 1
            # The new process got the subscription again: a change reaches the client.
            server.resource_updated("notes://today")
            await anyio.sleep(0.1)
            if revision >= "2026":
                assert sub.accepted and not sub.closed
            await client.close()
            return result

    result = sim.run(main)
    assert result["content"][0]["text"] == "done after 2 s"
    calls = [e for e in sim.recorder if e.kind == "request" and e.method == "tools/call"]
    assert len(calls) == 2 and calls[0].request_id != calls[1].request_id  # retried with a new id
    opening = "initialize" if revision < "2026" else "server/discover"
    assert [e.method for e in sim.recorder if e.kind == "request" and e.method == opening] == [opening] * 2
    resubscribe = "resources/subscribe" if revision < "2026" else "subscriptions/listen"
    assert len([e for e in sim.recorder if e.kind == "request" and e.method == resubscribe]) == 2
    assert any("restarts fragile" in (e.text or "") for e in sim.recorder)
    assert ("notifications/resources/updated", {"uri": "notes://today"}) in [
        (m, {k: v for k, v in p.items() if k != "_meta"}) for m, p in seen]
    assert sim.now() >= 2.5  # the retry ran its full two simulated seconds after the crash


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
