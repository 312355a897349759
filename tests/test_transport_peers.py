"""Tiny test-local peers for the transport tests: a server program and a client that speak just
enough JSON-RPC to exercise the pipes (no dependency on the real sessions)."""

from __future__ import annotations

from typing import Any

import anyio
from anyio.abc import TaskGroup

from mcp_sim.protocol.meta import CLIENT_CAPABILITIES, PROTOCOL_VERSION
from mcp_sim.sim.world import Simulation
from mcp_sim.transports.base import MessageStream, TransportClosed
from mcp_sim.wire.jsonrpc import (
    METHOD_NOT_FOUND,
    InvalidMessage,
    JSONRPCErrorResponse,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResultResponse,
    RequestId,
    error_object,
)

MODERN = "2026-07-28"


def modern_params(params: dict[str, Any] | None = None, version: str = MODERN) -> dict[str, Any]:
    out = dict(params or {})
    out["_meta"] = {PROTOCOL_VERSION: version, CLIENT_CAPABILITIES: {}}
    return out


class AnsweringServer:
    """A server program: answers every request, handles them concurrently, honours
    ``notifications/cancelled``, answers unreadable frames with the decoder's error, and knows a few
    special methods (``slow``, ``progress``, ``ask``, ``unknown``, ``subscriptions/listen``)."""

    def __init__(self) -> None:
        self.connections = 0
        self.handled: list[tuple[int, str, Any]] = []
        self.cancelled: list[RequestId] = []
        self.interrupted: list[RequestId] = []
        self.invalid: list[str] = []
        self.notifications: list[str] = []
        self.auth: list[Any] = []

    async def __call__(self, stream: MessageStream) -> None:
        self.connections += 1
        connection = self.connections
        self.auth.append(stream.auth)
        handlers: dict[RequestId, anyio.CancelScope] = {}
        waiting: dict[RequestId, Any] = {}

        async def handle(request: JSONRPCRequest) -> None:
            with anyio.CancelScope() as scope:
                handlers[request.id] = scope
                try:
                    await self._answer(stream, request, waiting, connection)
                except anyio.get_cancelled_exc_class():
                    self.interrupted.append(request.id)
                    raise
                finally:
                    handlers.pop(request.id, None)

        async with anyio.create_task_group() as tg:
            while True:
                try:
                    message = await stream.receive()
                except anyio.EndOfStream:
                    break
                if isinstance(message, InvalidMessage):
                    self.invalid.append(message.raw)
                    if message.is_answerable:
                        await stream.send(message.reply)
                elif isinstance(message, JSONRPCRequest):
                    tg.start_soon(handle, message)
                elif isinstance(message, JSONRPCNotification):
                    self.notifications.append(message.method)
                    if message.method == "notifications/cancelled":
                        request_id = (message.params or {}).get("requestId")
                        if isinstance(request_id, (str, int)):
                            self.cancelled.append(request_id)
                            scope = handlers.get(request_id)
                            if scope is not None:
                                scope.cancel()
                elif message.id is not None:
                    box = waiting.get(message.id)
                    if box is not None:
                        box["answer"] = message
                        box["event"].set()
            tg.cancel_scope.cancel()

    async def _answer(self, stream: MessageStream, request: JSONRPCRequest, waiting: dict[RequestId, Any],
                      connection: int) -> None:
        params = dict(request.params or {})
        params.pop("_meta", None)
        self.handled.append((connection, request.method, request.id))
        result: dict[str, Any]
        if request.method == "initialize":
            result = {"protocolVersion": params.get("protocolVersion"), "capabilities": {},
                      "serverInfo": {"name": "peer", "version": "1.0"}}
        elif request.method == "slow":
            await anyio.sleep(params.get("seconds", 1.0))
            result = {"slept": params.get("seconds", 1.0)}
        elif request.method == "progress":
            for step in range(1, params.get("steps", 2) + 1):
                await stream.send(JSONRPCNotification("notifications/progress",
                                                      {"progressToken": params.get("token", 1), "progress": step}),
                                  related_request_id=request.id)
                await anyio.sleep(0.01)
            result = {"done": True}
        elif request.method == "ask":
            ask_id = f"ask-{request.id}"
            box: dict[str, Any] = {"event": anyio.Event()}
            waiting[ask_id] = box
            await stream.send(JSONRPCRequest(ask_id, "sampling/createMessage", {"messages": [], "maxTokens": 5}),
                              related_request_id=request.id)
            await box["event"].wait()
            result = {"client said": box["answer"].to_dict().get("result")}
        elif request.method == "announce":
            await stream.send(JSONRPCNotification("notifications/tools/list_changed"))  # not about any request
            result = {"announced": True}
        elif request.method == "fail":
            await stream.send(JSONRPCErrorResponse(request.id, error_object(params["code"], "it failed")),
                              related_request_id=request.id)
            return
        elif request.method == "unknown":
            await stream.send(JSONRPCErrorResponse(request.id, error_object(METHOD_NOT_FOUND)),
                              related_request_id=request.id)
            return
        elif request.method == "subscriptions/listen":
            await stream.send(JSONRPCNotification("notifications/subscriptions/acknowledged",
                                                  {"notifications": params.get("notifications", {})}),
                              related_request_id=request.id)
            await anyio.sleep_forever()
            return
        else:
            result = {"echo": request.method, "params": params}
        await stream.send(JSONRPCResultResponse(request.id, result), related_request_id=request.id)


class InlineServer:
    """The lightest server program: answers each request inline, one at a time (for load tests)."""

    def __init__(self) -> None:
        self.connections = 0
        self.answered = 0

    async def __call__(self, stream: MessageStream) -> None:
        self.connections += 1
        while True:
            try:
                message = await stream.receive()
            except anyio.EndOfStream:
                return
            if isinstance(message, JSONRPCRequest):
                params = dict(message.params or {})
                params.pop("_meta", None)
                if message.method == "initialize":
                    result: dict[str, Any] = {"protocolVersion": params.get("protocolVersion"), "capabilities": {},
                                              "serverInfo": {"name": "inline", "version": "1.0"}}
                else:
                    result = {"echo": message.method, "params": params}
                self.answered += 1
                await stream.send(JSONRPCResultResponse(message.id, result), related_request_id=message.id)


class MiniClient:
    """A client that correlates answers by id, answers server requests, and keeps what is left over."""

    def __init__(self, sim: Simulation, stream: MessageStream, tg: TaskGroup) -> None:
        self.sim = sim
        self.stream = stream
        self.pending: dict[RequestId, dict[str, Any]] = {}
        self.unmatched: list[JSONRPCMessage | InvalidMessage] = []
        self.notifications: list[JSONRPCNotification] = []
        self.server_requests: list[JSONRPCRequest] = []
        self.closed = anyio.Event()
        self._next = 0
        tg.start_soon(self._read)

    async def _read(self) -> None:
        try:
            while True:
                message = await self.stream.receive()
                if isinstance(message, (JSONRPCResultResponse, JSONRPCErrorResponse)) and message.id in self.pending:
                    box = self.pending.pop(message.id)
                    box["answer"] = message
                    box["event"].set()
                elif isinstance(message, JSONRPCRequest):
                    self.server_requests.append(message)
                    await self.stream.send(JSONRPCResultResponse(message.id, {"role": "assistant", "content": "hi"}))
                elif isinstance(message, JSONRPCNotification):
                    self.notifications.append(message)
                else:
                    self.unmatched.append(message)
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            pass  # the link closed (MemoryStream.aclose closes its own inbox too)
        finally:
            self.closed.set()
            for box in self.pending.values():  # what was in flight is lost with the link
                box["answer"] = None
                box["event"].set()

    def next_id(self) -> int:
        self._next += 1
        return self._next

    async def request(self, method: str, params: dict[str, Any] | None = None, *, timeout: float = 5.0,
                      request_id: RequestId | None = None) -> JSONRPCResultResponse | JSONRPCErrorResponse:
        rid = request_id if request_id is not None else self.next_id()
        box: dict[str, Any] = {"event": anyio.Event()}
        self.pending[rid] = box
        try:
            with self.sim.fail_after(timeout, what=f"{method} #{rid}", who=self.stream.info.client,
                                     link=self.stream.info.name, request_id=rid, method=method):
                await self.stream.send(JSONRPCRequest(rid, method, params))
                await box["event"].wait()
        finally:
            self.pending.pop(rid, None)
        answer = box["answer"]
        if answer is None:
            raise TransportClosed(f"the link closed while {method} #{rid} was in flight")
        assert isinstance(answer, (JSONRPCResultResponse, JSONRPCErrorResponse))
        return answer

    async def initialize(self, version: str = "2025-11-25") -> JSONRPCResultResponse | JSONRPCErrorResponse:
        answer = await self.request("initialize", {"protocolVersion": version, "capabilities": {},
                                                   "clientInfo": {"name": "mini", "version": "1"}})
        self.stream.revision = version
        await self.stream.send(JSONRPCNotification("notifications/initialized"))
        return answer


def test_peer_answers_on_memory() -> None:
    from mcp_sim.transports import open_link

    sim = Simulation(1)
    peer = AnsweringServer()

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            stream = await open_link(sim, tg, "peer", peer)
            client = MiniClient(sim, stream, tg)
            answer = await client.request("tools/list", {"cursor": "x"})
            assert answer.to_dict() == {"jsonrpc": "2.0", "id": 1,
                                        "result": {"echo": "tools/list", "params": {"cursor": "x"}}}
            await stream.aclose()

    sim.run(main)
    assert peer.handled == [(1, "tools/list", 1)]
