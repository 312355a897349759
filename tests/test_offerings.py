"""Chapter 05's library server: every message it exchanges through the Host is valid for its revision,
each primitive is reached by its own controller, and annotations only count from a trusted server."""

from __future__ import annotations

import pytest
from test_fidelity import _check_trace

from mcp_sim.protocol.schema import find_spec_dir
from mcp_sim.scenarios.offerings import who_decides

ERAS = ("2025-11-25", "2026-07-28")


@pytest.mark.skipif(find_spec_dir() is None, reason="official MCP schemas not found (../shared/spec or MCP_SIM_SPEC_DIR)")
@pytest.mark.parametrize("trusted", [False, True])
@pytest.mark.parametrize("revision", ERAS)
def test_every_message_is_valid(revision: str, trusted: bool) -> None:
    sim = who_decides(revision, trusted=trusted)
    assert _check_trace(sim.recorder, revision) > 0


@pytest.mark.parametrize("revision", ERAS)
def test_each_controller_reaches_its_primitive(revision: str) -> None:
    events = list(who_decides(revision).recorder)
    methods = [e.method for e in events if e.kind == "request"]
    assert methods.count("tools/list") == 2, "two tools per page: the list takes two requests"
    assert methods[-4:] == ["tools/call", "resources/read", "completion/complete", "prompts/get"]
    call = next(e.message for e in events if e.kind == "response" and e.method == "tools/call")
    assert call["result"]["structuredContent"] == {"title": "Dune", "year": 1965}
    prompt = next(e.message for e in events if e.kind == "request" and e.method == "prompts/get")
    assert prompt["params"]["arguments"] == {"title": "Emma"}, "the completed value is the one used"


def test_a_read_only_hint_skips_approval_only_from_a_trusted_server() -> None:
    def asked(trusted: bool) -> int:
        return sum(1 for e in who_decides("2025-11-25", trusted=trusted).recorder
                   if e.kind == "app" and e.caption.startswith("The host says to the user: “Allow"))

    assert asked(trusted=False) == 1
    assert asked(trusted=True) == 0


def test_same_seed_same_trace() -> None:
    def trace() -> list[object]:
        return [e.message for e in who_decides("2026-07-28", seed=3).recorder]

    assert trace() == trace()
