"""A small hand-written MCP server for the client tests.

The client tests need a peer that can misbehave on purpose (answer twice, answer late, never answer,
ask for input the client did not declare, speak only one era), which a well-behaved server never
does. This peer speaks the wire directly through a MessageStream, so every reply is visible.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

from mcp_sim.protocol.errors import McpError
from mcp_sim.protocol.lifecycle import check_modern_request, negotiate_version
from mcp_sim.roles.client import Client
from mcp_sim.sim.world import Simulation
from mcp_sim.trace.recorder import Recorder
from mcp_sim.transports.base import MessageStream
from mcp_sim.transports.memory import memory_link
from mcp_sim.wire.jsonrpc import (
    InvalidMessage,
    JSONRPCErrorResponse,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResultResponse,
    RequestId,
    error_object,
)

Handler = Callable[[dict[str, Any], "Ctx"], Awaitable[dict[str, Any]]]


@dataclass
class Ctx:
    server: FakeServer
    stream: MessageStream
    request_id: RequestId
    meta: Any = None

    async def ask(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Legacy: send a server→client request and wait for the answer (raises McpError on error)."""
        return await self.server.ask(self.stream, method, params, self.request_id)

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        await self.stream.send(JSONRPCNotification(method, params), related_request_id=self.request_id)


def text_result(text: str, **extra: Any) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], **extra}


@dataclass
class FakeServer:
    name: str = "fake"
    era: str = "legacy"  # "legacy", "modern" or "dual"
    versions: tuple[str, ...] = ("2025-06-18", "2025-11-25", "2026-07-28")
    capabilities: dict[str, Any] = field(default_factory=lambda: {"tools": {"listChanged": True}})
    handlers: dict[str, Handler] = field(default_factory=dict)
    initialize_version: str | None = None
    """Answer initialize with this version regardless of what was asked."""
    received: list[dict[str, Any]] = field(default_factory=list)
    cancelled: list[RequestId] = field(default_factory=list)
    crash_on: str | None = None
    silent: frozenset[str] = frozenset()
    """Methods this server never answers (to exercise timeouts)."""
    _next_id: int = 0
    _waiting: dict[RequestId, Any] = field(default_factory=dict)

    def modern_versions(self) -> list[str]:
        return [v for v in self.versions if v >= "2026"]

    def legacy_versions(self) -> list[str]:
        return [v for v in self.versions if v < "2026"]

    async def __call__(self, stream: MessageStream) -> None:
        try:
            async with anyio.create_task_group() as tg:
                while True:
                    try:
                        message = await stream.receive()
                    except (anyio.EndOfStream, anyio.ClosedResourceError):
                        break
                    if isinstance(message, InvalidMessage):
                        continue
                    self.received.append(message.to_dict())
                    if isinstance(message, JSONRPCRequest):
                        if message.method == self.crash_on:
                            raise RuntimeError(f"{self.name} crashed on {message.method}")
                        if message.method in self.silent:
                            continue
                        tg.start_soon(self._handle, stream, message)
                    elif isinstance(message, JSONRPCNotification):
                        if message.method == "notifications/cancelled":
                            self.cancelled.append((message.params or {}).get("requestId"))
                    else:
                        waiter = self._waiting.pop(message.id, None)
                        if waiter is not None:
                            waiter[1] = message
                            waiter[0].set()
        finally:
            await stream.aclose()

    async def ask(self, stream: MessageStream, method: str, params: dict[str, Any], related: RequestId) -> dict[str, Any]:
        self._next_id += 1
        rid = f"s{self._next_id}"
        slot: list[Any] = [anyio.Event(), None]
        self._waiting[rid] = slot
        await stream.send(JSONRPCRequest(rid, method, params), related_request_id=related)
        await slot[0].wait()
        reply = slot[1]
        if isinstance(reply, JSONRPCErrorResponse):
            raise McpError.from_error_object(reply.error)
        return dict(reply.result)

    async def _handle(self, stream: MessageStream, request: JSONRPCRequest) -> None:
        params = dict(request.params or {})
        try:
            result = await self._result_for(stream, request, params)
        except McpError as exc:
            await stream.send(JSONRPCErrorResponse(request.id, exc.to_error_object()))
            return
        if result is None:  # the handler chose not to answer
            return
        await stream.send(JSONRPCResultResponse(request.id, result))

    async def _result_for(self, stream: MessageStream, request: JSONRPCRequest,
                          params: dict[str, Any]) -> dict[str, Any] | None:
        method = request.method
        meta = None
        if method == "initialize":
            if self.era == "modern":
                raise McpError(-32601, "Method not found: initialize")
            version = self.initialize_version or negotiate_version(params["protocolVersion"], self.legacy_versions())
            return {"protocolVersion": version, "capabilities": self.capabilities,
                    "serverInfo": {"name": self.name, "version": "1.0"}}
        is_modern_request = "io.modelcontextprotocol/protocolVersion" in (params.get("_meta") or {})
        if self.era == "legacy" or (self.era == "dual" and not is_modern_request):
            if method == "server/discover":
                raise McpError(-32601, "Method not found: server/discover")
        else:
            meta = check_modern_request(params, self.modern_versions())
            if method == "server/discover":
                return {"resultType": "complete", "supportedVersions": self.modern_versions(),
                        "capabilities": self.capabilities, "ttlMs": 0, "cacheScope": "public",
                        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": self.name, "version": "1.0"}}}
        handler = self.handlers.get(method)
        if handler is None:
            raise McpError(-32601, f"Method not found: {method}")
        result = await handler(params, Ctx(self, stream, request.id, meta))
        if result is not None and meta is not None and "resultType" not in result:
            result = {"resultType": "complete", **result}
        return result


def error_of(code: int, message: str) -> JSONRPCErrorResponse:
    return JSONRPCErrorResponse(1, error_object(code, message))


def run(server: Callable[[Any], Awaitable[None]], body: Callable[[Client], Awaitable[Any]], client: Client | None = None,
        name: str = "weather") -> tuple[Any, Recorder]:
    """Connect ``client`` to ``server`` over a memory link inside a fresh simulation; run ``body``."""
    sim = Simulation(0)

    async def main() -> Any:
        c_end, s_end = memory_link(sim, name)
        box: dict[str, Any] = {}
        async with anyio.create_task_group() as tg:
            tg.start_soon(server, s_end)
            cl = client or Client()
            try:
                box["value"] = await body_with_connect(cl, c_end, tg)
            except Exception as exc:  # re-raised outside the task group, unwrapped
                box["error"] = exc
            finally:
                await cl.close()
        if "error" in box:
            raise box["error"]
        return box["value"]

    async def body_with_connect(cl: Client, stream: Any, tg: Any) -> Any:
        await cl.connect(stream, tg)
        return await body(cl)

    return sim.run(main), sim.recorder


def wire(rec: Recorder) -> list[tuple[str, str]]:
    """(kind, method) of every JSON-RPC message on the wire, in order."""
    return [(e.kind, e.method or "") for e in rec.events if e.message is not None and e.kind != "app"]


