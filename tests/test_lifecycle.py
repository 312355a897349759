"""Lifecycle tables, version negotiation, per-request _meta checks and era detection."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_sim.protocol import meta as M
from mcp_sim.protocol.errors import McpError
from mcp_sim.protocol.lifecycle import (
    LEGACY_ALLOWED,
    LEGACY_TRANSITIONS,
    LegacyLifecycle,
    LegacyState,
    LifecycleViolation,
    capability_object,
    check_modern_request,
    client_accepts,
    era_from_discover_reply,
    era_from_http_probe,
    has_capability,
    legacy_state_table,
    negotiate_version,
    require_client_capability,
)
from mcp_sim.protocol.revisions import LEGACY_VERSIONS, REVISIONS


def test_legacy_happy_path() -> None:
    lc = LegacyLifecycle("client")
    lc.check_send("initialize")
    with pytest.raises(LifecycleViolation) as err:
        lc.check_send("tools/list")
    assert "not started" in str(err.value) and err.value.rule
    assert lc.on_event("initialize") is LegacyState.INITIALIZING
    assert lc.may_send("ping") and not lc.may_send("tools/call")
    with pytest.raises(LifecycleViolation) as cancel:  # initialize MUST NOT be cancelled
        lc.check_send("notifications/cancelled")
    assert "MUST NOT be cancelled" in (cancel.value.rule or "")
    assert lc.may_send("notifications/message", "server") and not lc.may_send("sampling/createMessage", "server")
    assert lc.on_event("initialize result") is LegacyState.INITIALIZED
    lc.check_send("notifications/initialized")
    assert lc.on_event("notifications/initialized") is LegacyState.OPERATING
    lc.check_send("tools/call")
    assert lc.on_event("close") is LegacyState.CLOSED
    assert not lc.may_send("ping")


def test_failed_initialize_closes() -> None:
    lc = LegacyLifecycle("server")
    lc.on_event("initialize")
    assert lc.on_event("initialize error") is LegacyState.CLOSED


def test_unknown_events_keep_the_state() -> None:
    lc = LegacyLifecycle("client")
    assert lc.on_event("tools/list") is LegacyState.NOT_STARTED


def test_every_state_has_rules_for_both_sides() -> None:
    for state in LegacyState:
        assert set(LEGACY_ALLOWED[state]) == {"client", "server"}
    reached = {b for (_, _), b in LEGACY_TRANSITIONS.items()} | {LegacyState.NOT_STARTED}
    assert reached == set(LegacyState)
    rows = legacy_state_table()
    assert ("not started", "initialize", "initializing") in rows and ("any", "close", "closed") in rows


@given(st.sampled_from(list(REVISIONS)), st.lists(st.sampled_from(LEGACY_VERSIONS), min_size=1, unique=True))
def test_negotiation_answers_requested_or_latest(requested: str, supported: list[str]) -> None:
    answer = negotiate_version(requested, supported)
    if requested in supported:
        assert answer == requested
    else:
        assert answer == max(supported)
    assert client_accepts(answer, [answer]) and not client_accepts(answer, [v for v in supported if v != answer])


def _params(version: str | None = "2026-07-28", caps: dict | None = None) -> dict:
    meta: dict = {}
    if version is not None:
        meta[M.PROTOCOL_VERSION] = version
    if caps is not None:
        meta[M.CLIENT_CAPABILITIES] = caps
    return {"_meta": meta}


def test_modern_meta_required() -> None:
    for params in ({}, {"_meta": {}}, _params(caps=None), _params(version=None, caps={})):
        with pytest.raises(McpError) as err:
            check_modern_request(params, ["2026-07-28"])
        assert err.value.code == -32602
    ok = check_modern_request(_params(caps={"elicitation": {}}) | {"name": "x"}, ["2026-07-28"])
    assert ok.protocol_version == "2026-07-28" and ok.client_capabilities == {"elicitation": {}}


def test_unsupported_version_lists_supported() -> None:
    with pytest.raises(McpError) as err:
        check_modern_request(_params("2027-01-01", {}), ["2026-07-28"])
    assert err.value.code == -32022
    assert err.value.data == {"requested": "2027-01-01", "supported": ["2026-07-28"]}


def test_missing_client_capability() -> None:
    meta = check_modern_request(_params(caps={"sampling": {}}), ["2026-07-28"])
    require_client_capability(meta, "sampling")
    with pytest.raises(McpError) as err:
        require_client_capability(meta, "elicitation")
    assert err.value.code == -32021
    assert err.value.data == {"requiredCapabilities": {"elicitation": {}}}


def test_capability_paths() -> None:
    caps = {"resources": {"subscribe": True, "listChanged": False}, "elicitation": {}, "tools": {}}
    assert has_capability(caps, "tools") and has_capability(caps, "resources.subscribe")
    assert not has_capability(caps, "resources.listChanged") and not has_capability(caps, "prompts")
    assert has_capability(caps, "elicitation.form") and not has_capability(caps, "elicitation.url")
    assert capability_object("elicitation.url") == {"elicitation": {"url": {}}}


@pytest.mark.parametrize(("reply", "era"), [
    ({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete", "supportedVersions": ["2026-07-28"],
                                            "capabilities": {}, "ttlMs": 0, "cacheScope": "public"}}, "modern"),
    ({"jsonrpc": "2.0", "id": 1, "error": {"code": -32022, "message": "x"}}, "modern"),
    ({"jsonrpc": "2.0", "id": 1, "error": {"code": -32021, "message": "x"}}, "modern"),
    ({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}}, "legacy"),
    ({"jsonrpc": "2.0", "id": 1, "error": {"code": -32600, "message": "not initialized"}}, "legacy"),
    ({"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "x"}}, "legacy"),
    (None, "legacy"),
])
def test_era_detection(reply: dict | None, era: str) -> None:
    assert era_from_discover_reply(reply) == era


def test_http_era_detection() -> None:
    modern_err = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32022, "message": "x"}}
    assert era_from_http_probe(400, modern_err) == "modern"
    assert era_from_http_probe(400, {"jsonrpc": "2.0", "error": {"code": -32600, "message": "x"}}) == "legacy"
    assert era_from_http_probe(404, None) == "legacy"
    assert era_from_http_probe(405, None) == "legacy"


@pytest.mark.parametrize("era", ["legacy", "auto"])
def test_a_modern_only_server_names_its_versions_when_it_refuses_initialize(era: str) -> None:
    # versioning, Backward Compatibility: a server that supports only modern versions SHOULD name the
    # versions it supports in any error to initialize (rule versioning.modern-only-refusal-names-versions);
    # a legacy client has no way forward, and this error may be all it can show. A dual-era client
    # (era="auto") never sends initialize here: its server/discover probe finds a modern server.
    import anyio

    from mcp_sim.protocol.schema import schema_errors
    from mcp_sim.roles.client import Client
    from mcp_sim.roles.server import Server
    from mcp_sim.roles.server_session import serve
    from mcp_sim.sim.world import Simulation
    from mcp_sim.transports.memory import memory_link

    modern_only = Server("modern-only", version="1.0.0", supported_versions=("2026-07-28",))

    @modern_only.tool()
    def echo(text: str) -> str:
        """Repeat the text."""
        return text

    sim = Simulation(seed=1)

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            to_server, server_end = memory_link(sim, "modern-only")
            tg.start_soon(serve, modern_only, server_end)
            client = Client("old-app", era=era)  # type: ignore[arg-type]
            try:
                await client.connect(to_server, tg)
                await client.list_tools()
            except McpError:
                pass
            finally:
                await client.close()
                await to_server.aclose()

    sim.run(main)
    methods = [e.method for e in sim.recorder if e.kind == "request"]
    if era == "auto":
        assert methods[0] == "server/discover" and "initialize" not in methods
        return
    refusal = next(e.message for e in sim.recorder if e.kind == "error" and e.method == "initialize")
    error = refusal["error"]
    assert error["data"]["supported"] == ["2026-07-28"] and "2026-07-28" in error["message"]
    assert error["data"]["requested"] == "2025-11-25"
    for revision in ("2025-11-25", "2026-07-28"):  # what the legacy client reads, and the server's own era
        assert schema_errors(refusal, revision) == [], revision


@given(st.integers(min_value=-32768, max_value=32767).filter(lambda c: c not in (-32020, -32021, -32022)))
def test_a_dual_era_client_falls_back_on_any_error_that_is_not_modern(code: int) -> None:
    # stdio Backward Compatibility: the fallback must not be keyed to one error code (rule
    # versioning.fallback-not-keyed-to-one-code): every non-modern error means a legacy server.
    assert era_from_discover_reply({"jsonrpc": "2.0", "id": 1, "error": {"code": code, "message": "x"}}) == "legacy"
