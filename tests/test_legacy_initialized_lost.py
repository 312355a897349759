"""A lost or overtaken legacy ``notifications/initialized`` no longer locks the client out (issue
"faults without surprises", part two; course chapters 03 and 06).

The client may send requests once the server has answered ``initialize``
(``lifecycle.client-waits-for-initialize-result``) and sends ``notifications/initialized`` right after
(``lifecycle.initialized-notification``). If that notification is dropped, or a request overtakes it,
the simulator's server used to refuse every later request with ``-32600``, for ever. Now it takes a
client request in that state as implying the notification (simulator rule
``lifecycle.sim-request-implies-initialized``), and the Streamable HTTP client opens its ``GET``
stream even when the notification's ``POST`` was lost.
"""

from __future__ import annotations

import anyio
import pytest
from test_server_support import CLIENT_INFO, RawClient, run_with

from mcp_sim.capabilities.context import Context
from mcp_sim.protocol.rulebook import get as rule
from mcp_sim.roles.client import Client
from mcp_sim.roles.server import Server
from mcp_sim.roles.server_session import serve
from mcp_sim.sim.world import Simulation
from mcp_sim.transports import open_link
from mcp_sim.transports.faults import Faults, LinkFaults

LEGACY = "2025-11-25"


def notes_server() -> Server:
    server = Server("notes", version="1.0.0")

    @server.tool()
    async def read(ctx: Context) -> str:
        """Read the notes."""
        return "buy milk"

    return server


@pytest.mark.parametrize("transport", ["memory", "stdio", "http"])
def test_a_dropped_initialized_notification_does_not_refuse_later_requests(transport: str) -> None:
    sim = Simulation(0)
    server = notes_server()
    texts: list[str] = []

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            # Frame 2 to the server is notifications/initialized (after initialize).
            stream = await open_link(sim, tg, "notes", lambda s: serve(server, s), transport=transport,  # type: ignore[call-overload]
                                     revision=LEGACY, faults=LinkFaults(to_server=Faults(drop_at=(2,))))
            client = Client("app", era="legacy", timeout=5)
            await client.connect(stream, tg)
            for _ in range(3):
                texts.append(str((await client.call_tool("read", {}))["content"][0]["text"]))
            await client.close()
            tg.cancel_scope.cancel()

    sim.run(main)
    dropped = [e for e in sim.recorder if "dropped" in e.marks]
    assert [e.method for e in dropped] == ["notifications/initialized"]
    assert texts == ["buy milk"] * 3  # before: three -32600 refusals
    if transport == "http":  # the GET stream for the server's own messages opened all the same
        assert any(e.text == "GET /mcp" for e in sim.recorder if e.kind == "transport")


def test_a_request_overtaking_initialized_is_answered_and_the_late_notification_is_harmless() -> None:
    async def body(c: RawClient) -> dict:
        out = {"init": await c.request("initialize", {"protocolVersion": LEGACY, "capabilities": {},
                                                      "clientInfo": CLIENT_INFO})}
        out["ping"] = await c.request("ping")  # a ping implies nothing
        out["overtaking"] = await c.request("tools/list")
        await c.notify("notifications/initialized")  # arrives late
        out["after"] = await c.request("tools/call", {"name": "read", "arguments": {}})
        out["again"] = await c.request("initialize", {"protocolVersion": LEGACY, "capabilities": {},
                                                      "clientInfo": CLIENT_INFO})
        return out

    r = run_with(notes_server, body)
    assert r["ping"]["result"] == {}
    assert [t["name"] for t in r["overtaking"]["result"]["tools"]] == ["read"]
    assert r["after"]["result"]["content"][0]["text"] == "buy milk"
    assert r["again"]["error"]["code"] == -32600  # still one initialize per connection


def test_a_request_before_initialize_is_still_refused() -> None:
    """Only the notification can be implied, never the handshake (``lifecycle.initialize-first``)."""
    def legacy_only() -> Server:
        server = notes_server()
        server.supported_versions = (LEGACY,)
        return server

    async def body(c: RawClient) -> dict:
        return await c.request("tools/list")

    assert run_with(legacy_only, body)["error"]["code"] == -32600


def test_the_choice_is_a_simulator_rule_with_its_alternatives() -> None:
    chosen = rule("lifecycle.sim-request-implies-initialized")
    assert chosen.provenance == "simulator" and chosen.alternatives
