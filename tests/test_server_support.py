"""A tiny raw JSON-RPC client for the server tests: it sends exact JSON and keeps everything it
receives, so each test can assert on the wire. (No tests here; the other test_server_* files use it.)"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest

from mcp_sim.protocol import meta as M
from mcp_sim.protocol.schema import find_spec_dir, schema_errors
from mcp_sim.roles.server import Server
from mcp_sim.roles.server_session import serve
from mcp_sim.security.identity import AuthInfo
from mcp_sim.sim.world import Simulation
from mcp_sim.transports.memory import MemoryStream, memory_link
from mcp_sim.wire.jsonrpc import InvalidMessage

MODERN = "2026-07-28"
LEGACY = ("2025-06-18", "2025-11-25")
HAS_SCHEMA = find_spec_dir() is not None
CLIENT_INFO = {"name": "raw-client", "version": "0.0.1"}


def meta(caps: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    """The required per-request _meta of a 2026-07-28 request."""
    out = M.request_meta(MODERN, caps or {}, CLIENT_INFO)
    out.update(extra)
    return out


def assert_valid(obj: dict[str, Any], revision: str, type_name: str) -> None:
    """Check ``obj`` against the official schema when the schemas are available."""
    if not HAS_SCHEMA:
        return
    errors = schema_errors(obj, revision, type_name)
    assert not errors, f"{type_name} invalid for {revision}: {errors}\n{json.dumps(obj, indent=1)}"


def assert_message_valid(obj: dict[str, Any], revision: str) -> None:
    if HAS_SCHEMA:
        errors = schema_errors(obj, revision, "JSONRPCMessage")
        assert not errors, f"invalid {revision} message: {errors}\n{json.dumps(obj, indent=1)}"


class RawClient:
    """Sends raw JSON-RPC over a memory link and records every message it receives."""

    def __init__(self, stream: MemoryStream, revision: str | None = None) -> None:
        self.stream = stream
        self.revision = revision
        """When set, every message received is checked against that revision's schema."""
        self.received: list[dict[str, Any]] = []
        self._next_id = 0
        self.auto_answer: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {}

    async def send(self, obj: dict[str, Any]) -> None:
        await self.stream.send_raw(json.dumps(obj, separators=(",", ":")))

    async def recv(self, timeout: float = 60.0) -> dict[str, Any]:
        with anyio.fail_after(timeout):
            message = await self.stream.receive()
        obj = message.reply.to_dict() if isinstance(message, InvalidMessage) else message.to_dict()
        if self.revision is not None:
            assert_message_valid(obj, self.revision)
        self.received.append(obj)
        return obj

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    async def request(self, method: str, params: dict[str, Any] | None = None, *, id: Any = None,
                      timeout: float = 60.0) -> dict[str, Any]:
        """Send a request and read until its response; answer server requests with ``auto_answer``."""
        rid = self.new_id() if id is None else id
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        await self.send(msg)
        return await self.until_response(rid, timeout)

    async def until_response(self, rid: Any, timeout: float = 60.0) -> dict[str, Any]:
        while True:
            obj = await self.recv(timeout)
            if "method" in obj and "id" in obj and obj["method"] in self.auto_answer:
                await self.send({"jsonrpc": "2.0", "id": obj["id"], "result": self.auto_answer[obj["method"]](obj)})
                continue
            if obj.get("id") == rid and "method" not in obj:
                return obj

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        await self.send(msg)

    async def initialize(self, version: str = "2025-11-25", capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
        reply = await self.request("initialize", {"protocolVersion": version, "capabilities": capabilities or {},
                                                  "clientInfo": CLIENT_INFO})
        await self.notify("notifications/initialized")
        return reply

    def notifications(self, method: str | None = None) -> list[dict[str, Any]]:
        return [m for m in self.received if "method" in m and "id" not in m
                and (method is None or m["method"] == method)]


def run_with(server: Server | Callable[[], Server], body: Callable[[RawClient], Awaitable[Any]], *,
             seed: int = 0, auth: AuthInfo | None = None, revision: str | None = None) -> Any:
    """Serve ``server`` on a memory link, run ``body(client)``, close the link, return body's value."""
    async def main() -> Any:
        sim = current
        srv = server() if callable(server) and not isinstance(server, Server) else server
        client_end, server_end = memory_link(sim, "test", auth=auth)
        client = RawClient(client_end, revision)
        async with anyio.create_task_group() as tg:
            tg.start_soon(serve, srv, server_end)
            try:
                return await body(client)
            finally:
                await client_end.aclose()

    current = Simulation(seed)
    return current.run(main)


needs_schema = pytest.mark.skipif(not HAS_SCHEMA, reason="official MCP schemas not available")
