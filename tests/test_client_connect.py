"""The client's connection: the 1:1 rule, legacy initialize, modern discover, era detection, -32022."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from test_client_fakeserver import FakeServer, run, wire

from mcp_sim.protocol.errors import McpError
from mcp_sim.protocol.lifecycle import LegacyState
from mcp_sim.roles.client import Client, ClientAlreadyConnected, ClientCallbacks
from mcp_sim.sim.world import Simulation
from mcp_sim.transports.memory import memory_link


async def nothing(client: Client) -> Client:
    return client


def test_second_connect_is_refused_with_the_one_to_one_rule() -> None:
    sim = Simulation(0)

    async def main() -> str:
        a_client, a_server = memory_link(sim, "weather")
        b_client, b_server = memory_link(sim, "issues")
        async with anyio.create_task_group() as tg:
            tg.start_soon(FakeServer("weather"), a_server)
            tg.start_soon(FakeServer("issues"), b_server)
            client = Client()
            await client.connect(a_client, tg)
            with pytest.raises(ClientAlreadyConnected) as info:
                await client.connect(b_client, tg)
            await client.close()
            await b_client.aclose()
            return str(info.value)

    message = sim.run(main)
    assert "1:1" in message and "one Client per Server" in message and "'weather'" in message
    # Nothing was sent to the second server.
    assert not [e for e in sim.recorder.events if e.link == "issues" and e.sender.startswith("client")]


def test_legacy_handshake_in_order() -> None:
    client = Client(era="legacy", callbacks=ClientCallbacks(sampling=_never))
    result, rec = run(FakeServer(era="legacy"), nothing, client)
    assert wire(rec) == [("request", "initialize"), ("response", "initialize"),
                         ("notification", "notifications/initialized")]
    init = rec.events[0].message
    assert init is not None
    params = init["params"]
    assert params["protocolVersion"] == "2025-11-25"  # the newest legacy version the client speaks
    assert params["capabilities"] == {"sampling": {}}
    assert params["clientInfo"]["name"] == "mcp-sim-client"
    assert result.protocol_version == "2025-11-25"
    assert result.server_capabilities == {"tools": {"listChanged": True}}


async def _never(server: str, params: dict[str, Any]) -> dict[str, Any]:
    raise AssertionError("not called")


def test_legacy_server_answers_an_older_version_the_client_speaks() -> None:
    async def body(client: Client) -> tuple[str | None, LegacyState]:
        return client.protocol_version, client.lifecycle.state

    (version, state), _ = run(FakeServer(era="legacy", versions=("2025-06-18",)), body, Client(era="legacy"))
    assert version == "2025-06-18"
    assert state is LegacyState.OPERATING


def test_legacy_client_disconnects_when_it_cannot_speak_the_servers_version() -> None:
    server = FakeServer(era="legacy", initialize_version="2024-11-05")

    with pytest.raises(McpError) as info:
        run(server, nothing, Client(era="legacy", versions=("2025-06-18", "2025-11-25")))
    assert "SHOULD disconnect" in str(info.value)
    assert info.value.data["answered"] == "2024-11-05"
    # The client never sent notifications/initialized.
    assert [m["method"] for m in server.received] == ["initialize"]


def test_modern_discover_carries_meta_on_every_request() -> None:
    async def body(client: Client) -> dict[str, Any]:
        return client.server_capabilities or {}

    caps, rec = run(FakeServer(era="modern"), body, Client(era="modern"))
    assert caps == {"tools": {"listChanged": True}}
    assert wire(rec) == [("request", "server/discover"), ("response", "server/discover")]
    meta = rec.events[0].message["params"]["_meta"]  # type: ignore[index]
    assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
    assert meta["io.modelcontextprotocol/clientCapabilities"] == {}
    assert meta["io.modelcontextprotocol/clientInfo"] == {"name": "mcp-sim-client", "version": "0.1.0"}


def test_modern_unsupported_version_retries_with_a_mutual_one() -> None:
    """A client from the future offers 2027-01-01; the server answers -32022 with what it supports;
    the client retries with 2026-07-28, which both speak."""
    client = Client(era="modern", versions=("2026-07-28", "2027-01-01"))
    result, rec = run(FakeServer(era="modern"), nothing, client)
    assert result.protocol_version == "2026-07-28"
    assert wire(rec) == [("request", "server/discover"), ("error", "server/discover"),
                         ("request", "server/discover"), ("response", "server/discover")]
    sent = [e.message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"]  # type: ignore[index]
            for e in rec.events if e.kind == "request"]
    assert sent == ["2027-01-01", "2026-07-28"]
    error = next(e for e in rec.events if e.kind == "error").message["error"]  # type: ignore[index]
    assert error["code"] == -32022 and error["data"]["supported"] == ["2026-07-28"]
    assert [e.message["id"] for e in rec.events if e.kind == "request"] == [1, 2]  # type: ignore[index]


def test_modern_negotiation_fails_without_a_common_version() -> None:
    with pytest.raises(McpError) as info:
        run(FakeServer(era="modern", versions=("2027-01-01",)), nothing, Client(era="modern", versions=("2026-07-28",)))
    assert info.value.code == -32022
    assert "no protocol version in common" in info.value.message


def test_modern_client_against_a_legacy_server_explains_the_mismatch() -> None:
    with pytest.raises(McpError) as info:
        run(FakeServer(era="legacy"), nothing, Client(era="modern"))
    assert "legacy server" in info.value.message


@pytest.mark.parametrize(("server_era", "expected"), [("legacy", "legacy"), ("modern", "modern"), ("dual", "modern")])
def test_auto_detects_the_era_with_a_discover_probe(server_era: str, expected: str) -> None:
    result, rec = run(FakeServer(era=server_era), nothing, Client(era="auto"))
    assert result.era == expected
    assert wire(rec)[0] == ("request", "server/discover")
    if expected == "legacy":
        assert ("request", "initialize") in wire(rec)


def test_auto_treats_a_silent_probe_as_legacy() -> None:
    server = FakeServer(era="legacy", silent=frozenset({"server/discover"}))
    result, rec = run(server, nothing, Client(era="auto", probe_timeout=2.0))
    assert result.era == "legacy"
    assert [e.kind for e in rec.events][:2] == ["request", "timeout"]
    init = next(e for e in rec.events if e.method == "initialize")
    assert init.t_ms == 2000.0  # the probe waited 2 virtual seconds
    # A probe is not cancelled: before initialize the client may send nothing else.
    assert not any(e.method == "notifications/cancelled" for e in rec.events)


def test_capability_violation_is_stopped_before_sending_legacy() -> None:
    async def body(client: Client) -> tuple[McpError, int]:
        before = len(client._sim.recorder.events)  # type: ignore[union-attr]
        with pytest.raises(McpError) as info:
            await client.list_prompts()
        return info.value, len(client._sim.recorder.events) - before  # type: ignore[union-attr]

    (error, recorded), _ = run(FakeServer(era="legacy", capabilities={"tools": {}}), body, Client(era="legacy"))
    assert error.message == "prompts/list needs the server capability 'prompts', which weather did not declare"
    assert recorded == 0  # nothing went on the wire


def test_capability_violation_is_stopped_before_sending_modern() -> None:
    async def body(client: Client) -> tuple[str, int]:
        before = len(client._sim.recorder.events)  # type: ignore[union-attr]
        with pytest.raises(McpError) as info:
            await client.call_tool("get_forecast", {"city": "Paris"})
        return info.value.message, len(client._sim.recorder.events) - before  # type: ignore[union-attr]

    (message, recorded), _ = run(FakeServer(era="modern", capabilities={"resources": {}}), body, Client(era="modern"))
    assert message == "tools/call needs the server capability 'tools', which weather did not declare"
    assert recorded == 0


def test_method_of_another_revision_is_refused() -> None:
    async def body(client: Client) -> str:
        with pytest.raises(McpError) as info:
            await client.ping()
        return info.value.message

    message, _ = run(FakeServer(era="modern"), body, Client(era="modern"))
    assert "ping does not exist in protocol revision 2026-07-28" in message
