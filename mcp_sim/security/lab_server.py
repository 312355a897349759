"""A small modern-era (2026-07-28) MCP Server for the security labs.

The labs need Servers written *badly* on purpose — one that trusts its ``requestState``, one that
reads another tenant's rows, one that lies in its annotations — next to the same Server written well.
:class:`LabServer` is the smallest honest Server that lets each lab write its tool handlers in a few
lines while every message still crosses a real transport as real JSON-RPC: ``server/discover``,
``tools/list`` (with ``ttlMs``/``cacheScope``), ``tools/call`` (including ``InputRequiredResult``
round trips), ``resources/read`` and ``subscriptions/listen`` with ``notifications/tools/list_changed``.

Each handler receives a :class:`ToolContext`: the arguments, the caller's
:class:`~mcp_sim.transports.base.AuthInfo` (established by the transport, never by the message), this
request's ``_meta`` (protocol version and client capabilities — learnt afresh on every request), and
for a retry the ``inputResponses`` and ``requestState``. Authorization failures
(:class:`~mcp_sim.security.authorization.AccessDenied`), sandbox refusals and rejected request state
become a ``CallToolResult`` with ``isError: true``, as tool failures do in MCP.

Serve it through the Host with ``host.add_server(name, server.main, revision="2026-07-28")`` or to
a bare Client over :func:`~mcp_sim.transports.memory.memory_link`.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio

from mcp_sim.protocol import meta as M
from mcp_sim.protocol.errors import INVALID_PARAMS, METHOD_NOT_FOUND, McpError
from mcp_sim.protocol.lifecycle import ModernRequestMeta, check_modern_request
from mcp_sim.protocol.revisions import LATEST
from mcp_sim.security.authorization import AccessDenied
from mcp_sim.security.request_state import RequestStateRejected
from mcp_sim.security.sandbox import SandboxViolation
from mcp_sim.sim.world import current_simulation
from mcp_sim.transports.base import AuthInfo, MessageStream, TransportClosed
from mcp_sim.wire.jsonrpc import (
    InvalidMessage,
    JSONRPCErrorResponse,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResultResponse,
    RequestId,
)


@dataclass
class ToolContext:
    """Everything one ``tools/call`` (or ``resources/read``) gives its handler."""

    server: LabServer
    name: str
    arguments: dict[str, Any]
    auth: AuthInfo | None
    meta: ModernRequestMeta
    request_id: RequestId
    input_responses: dict[str, Any] | None = None
    request_state: str | None = None

    @property
    def now_ms(self) -> float:
        return current_simulation().now_ms()


ToolResult = dict[str, Any]
Handler = Callable[[ToolContext], Awaitable[ToolResult] | ToolResult]


def text_result(text: str, *, structured: Any = None, is_error: bool = False) -> ToolResult:
    """A ``CallToolResult`` with one text block (and ``structuredContent`` when given)."""
    out: ToolResult = {"resultType": "complete", "content": [{"type": "text", "text": text}]}
    if structured is not None:
        out["structuredContent"] = structured
    if is_error:
        out["isError"] = True
    return out


def tool_definition(name: str, description: str, properties: Mapping[str, Any] | None = None, *,
                    required: tuple[str, ...] = (), annotations: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A ``Tool`` object: name, description, an object ``inputSchema`` and optional annotations."""
    tool: dict[str, Any] = {"name": name, "description": description,
                            "inputSchema": {"type": "object", "properties": dict(properties or {}),
                                            "required": list(required)}}
    if annotations is not None:
        tool["annotations"] = dict(annotations)
    return tool


@dataclass
class LabServer:
    """A modern-era Server whose tools are plain functions. One instance may serve many links at once
    (several Hosts, several tenants); its data is shared by all of them, as a real service's is."""

    name: str
    version: str = "1.0.0"
    ttl_ms: int = 60_000
    cache_scope: str = "private"
    """``cacheScope`` of ``tools/list``: ``"private"`` when the list depends on who asks."""
    list_for: Callable[[AuthInfo | None], list[dict[str, Any]]] | None = None
    """When set, the tool list depends on the caller (e.g. per tenant) instead of :attr:`tools`."""
    tools: dict[str, tuple[dict[str, Any], Handler]] = field(default_factory=dict)
    resources: dict[str, Handler] = field(default_factory=dict)
    listeners: list[tuple[MessageStream, RequestId]] = field(default_factory=list)

    # -- defining -----------------------------------------------------------------------------------
    def add_tool(self, definition: dict[str, Any], handler: Handler) -> None:
        self.tools[definition["name"]] = (definition, handler)

    def definitions(self, auth: AuthInfo | None = None) -> list[dict[str, Any]]:
        if self.list_for is not None:
            return self.list_for(auth)
        return [d for d, _ in self.tools.values()]

    async def tools_changed(self) -> None:
        """Tell every ``subscriptions/listen`` stream that asked for it: the tool list changed. The
        notification carries no list: clients call ``tools/list`` again and must review it."""
        for stream, sub_id in list(self.listeners):
            try:
                await stream.send(JSONRPCNotification("notifications/tools/list_changed",
                                                      {"_meta": {M.SUBSCRIPTION_ID: sub_id}}))
            except TransportClosed:
                self.listeners.remove((stream, sub_id))

    # -- serving ------------------------------------------------------------------------------------
    async def main(self, stream: MessageStream) -> None:
        """Serve one link until the peer closes it."""
        while True:
            try:
                message = await stream.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, TransportClosed):
                return
            if isinstance(message, InvalidMessage):
                if message.is_answerable:
                    await stream.send(message.reply)
                continue
            if not isinstance(message, JSONRPCRequest):
                continue  # notifications (cancelled …) and stray responses need no answer here
            try:
                result = await self._handle(stream, message)
            except McpError as exc:
                await stream.send(JSONRPCErrorResponse(message.id, exc.to_error_object()))
                continue
            if result is not None:
                await stream.send(JSONRPCResultResponse(message.id, result))

    async def _handle(self, stream: MessageStream, request: JSONRPCRequest) -> dict[str, Any] | None:
        params = dict(request.params or {})
        meta = check_modern_request(params, [LATEST])
        info = {M.SERVER_INFO: {"name": self.name, "version": self.version}}
        method = request.method
        if method == "server/discover":
            return {"resultType": "complete", "supportedVersions": [LATEST],
                    "capabilities": {"tools": {"listChanged": True}, "resources": {}},
                    "ttlMs": self.ttl_ms, "cacheScope": "public", "_meta": info}
        if method == "tools/list":
            return {"resultType": "complete", "tools": self.definitions(stream.auth), "ttlMs": self.ttl_ms,
                    "cacheScope": self.cache_scope, "_meta": info}
        if method == "subscriptions/listen":
            wanted = dict(params.get("notifications") or {})
            accepted = {"toolsListChanged": True} if wanted.get("toolsListChanged") else {}
            await stream.send(JSONRPCNotification("notifications/subscriptions/acknowledged",
                                                  {"notifications": accepted,
                                                   "_meta": {M.SUBSCRIPTION_ID: request.id}}))
            if accepted:
                self.listeners.append((stream, request.id))
            return None  # the listen request stays open: its stream carries the notifications
        if method in ("tools/call", "resources/read"):
            key = params.get("name") if method == "tools/call" else params.get("uri")
            if method == "tools/call":
                names = {d["name"] for d in self.definitions(stream.auth)}
                entry = self.tools.get(str(key)) if key in names else None
                handler = entry[1] if entry else None
            else:
                handler = self.resources.get(str(key))
            if handler is None:
                raise McpError(INVALID_PARAMS, f"Unknown {'tool' if method == 'tools/call' else 'resource'}: {key}")
            ctx = ToolContext(self, str(key), dict(params.get("arguments") or {}), stream.auth, meta, request.id,
                              params.get("inputResponses"), params.get("requestState"))
            try:
                outcome = handler(ctx)
                result = await outcome if inspect.isawaitable(outcome) else outcome
            except AccessDenied as denied:
                return {**denied.to_tool_result(), "_meta": info}
            except (SandboxViolation, RequestStateRejected) as refused:
                return {**text_result(str(refused), is_error=True), "_meta": info}
            result = dict(result)
            result.setdefault("resultType", "complete")
            result.setdefault("_meta", info)
            return result
        raise McpError(METHOD_NOT_FOUND, f"Method not found: {method}")
