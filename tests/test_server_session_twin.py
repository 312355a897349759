"""The server session's accelerated twin answers every modern request exactly as the readable session
does — the well-formed ones it checks in one pass, and every unusual one it hands to the readable path.

Each request below goes to a fresh readable :class:`ServerSession` and to a fresh
:class:`AcceleratedServerSession` of identically built servers; the two answers must be equal, byte
for byte once encoded. The unusual requests are the ones the twin must *not* take its quick path for.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcp_sim.protocol import meta as M
from mcp_sim.roles.server import Server
from mcp_sim.roles.server_session import AcceleratedServerSession, ServerSession
from mcp_sim.sim.world import Simulation
from mcp_sim.wire.jsonrpc import JSONRPCRequest

MODERN = "2026-07-28"
CAPS: dict[str, Any] = {"elicitation": {}}


def build() -> Server:
    server = Server("twin-check", tasks_extension=True)

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @server.resource("memo://one")
    def one() -> str:
        return "one"

    return server


def good_meta(**extra: Any) -> dict[str, Any]:
    return {**M.request_meta(MODERN, dict(CAPS), {"name": "t", "version": "1"}), **extra}


REQUESTS: list[tuple[str, str, dict[str, Any] | None]] = [
    ("a well-formed call", "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}, "_meta": good_meta()}),
    ("a progress token", "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2},
                                        "_meta": good_meta(progressToken="p-1")}),
    ("a progress token of the wrong type", "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2},
                                                          "_meta": good_meta(progressToken=1.5)}),
    ("a log level", "tools/list", {"_meta": good_meta(**{M.LOG_LEVEL: "debug"})}),
    ("no params", "tools/list", None),
    ("no _meta", "tools/list", {}),
    ("_meta not an object", "tools/list", {"_meta": ["x"]}),
    ("no version", "tools/list", {"_meta": {M.CLIENT_CAPABILITIES: {}}}),
    ("a version that is not a string", "tools/list", {"_meta": {M.PROTOCOL_VERSION: 20260728,
                                                                M.CLIENT_CAPABILITIES: {}}}),
    ("capabilities not an object", "tools/list", {"_meta": {M.PROTOCOL_VERSION: MODERN,
                                                            M.CLIENT_CAPABILITIES: []}}),
    ("an unsupported version", "tools/list", {"_meta": {M.PROTOCOL_VERSION: "2027-01-01",
                                                        M.CLIENT_CAPABILITIES: {}}}),
    ("an unknown method", "tools/frobnicate", {"_meta": good_meta()}),
    ("a server-to-client method", "sampling/createMessage", {"_meta": good_meta()}),
    ("an undeclared capability", "prompts/list", {"_meta": good_meta()}),
    ("a tasks-extension method without _meta", "tasks/get", {"taskId": "nope"}),
    ("a tasks-extension method with _meta", "tasks/get", {"taskId": "nope", "_meta": good_meta()}),
    ("a retry with a forged requestState", "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2},
                                                         "requestState": "forged", "_meta": good_meta()}),
    ("a retry with a requestState that is not a string", "tools/call",
     {"name": "add", "arguments": {"a": 1, "b": 2}, "requestState": 7, "_meta": good_meta()}),
    ("discovery", "server/discover", {"_meta": good_meta()}),
    ("a read", "resources/read", {"uri": "memo://one", "_meta": good_meta()}),
]


def answer(session_class: type[ServerSession], method: str, params: dict[str, Any] | None) -> str:
    out: list[str] = []

    async def main() -> None:
        session = session_class(build())
        response = await session.handle(JSONRPCRequest(7, method, json.loads(json.dumps(params))
                                                       if params is not None else None))
        out.append(json.dumps(response.to_dict() if response is not None else None, sort_keys=True))

    Simulation(0).run(main)
    return out[0]


@pytest.mark.parametrize(("what", "method", "params"), REQUESTS, ids=[r[0] for r in REQUESTS])
def test_the_twin_answers_as_the_readable_session(what: str, method: str, params: dict[str, Any] | None) -> None:
    readable = answer(ServerSession, method, params)
    assert answer(AcceleratedServerSession, method, params) == readable


def test_the_cases_reach_both_paths_and_both_outcomes() -> None:
    """The list is not all successes nor all errors: it exercises the quick path and every way out."""
    outcomes = [json.loads(answer(ServerSession, m, p)) for _, m, p in REQUESTS]
    assert sum("result" in o for o in outcomes) >= 5
    codes = {o["error"]["code"] for o in outcomes if "error" in o}
    assert {-32601, -32602, -32022} <= codes, codes

