"""Server throughput: ``tools/call`` requests handled per second, arguments validated against the
tool's ``inputSchema``, measured without a transport (the session's ``handle`` is called directly).

Run: ``python benchmarks/server.py`` (prints one JSON object).
"""

from __future__ import annotations

import json
import platform
import time

import anyio

from mcp_sim.protocol import meta as M
from mcp_sim.roles.server import Server
from mcp_sim.roles.server_session import ServerSession
from mcp_sim.wire.jsonrpc import JSONRPCNotification, JSONRPCRequest, JSONRPCResultResponse

N = 5000


def build() -> Server:
    server = Server("bench", version="1.0.0")

    @server.tool(annotations={"readOnlyHint": True})
    def get_forecast(city: str, days: int = 1) -> str:
        """Forecast for a city."""
        return f"{city}: sunny for {days} day(s)"

    return server


async def measure(era: str) -> float:
    session = ServerSession(build())
    params: dict = {"name": "get_forecast", "arguments": {"city": "Lisbon", "days": 3}}
    if era == "modern":
        params["_meta"] = M.request_meta("2026-07-28", {}, {"name": "bench", "version": "1"})
    else:
        await session.handle(JSONRPCRequest(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                                              "clientInfo": {"name": "bench", "version": "1"}}))
        session._on_notification(JSONRPCNotification("notifications/initialized"))
    for i in range(200):  # warm up
        await session.handle(JSONRPCRequest(i, "tools/call", params))
    start = time.perf_counter()
    for i in range(N):
        reply = await session.handle(JSONRPCRequest(i, "tools/call", params))
    elapsed = time.perf_counter() - start
    assert isinstance(reply, JSONRPCResultResponse) and not reply.result.get("isError"), reply
    return N / elapsed


def main() -> None:
    modern = anyio.run(measure, "modern")
    legacy = anyio.run(measure, "legacy")
    print(json.dumps({
        "benchmark": "server tools/call (argument validation on, no transport)",
        "requests": N,
        "modern_calls_per_second": round(modern),
        "legacy_calls_per_second": round(legacy),
        "python": platform.python_version(),
    }))


if __name__ == "__main__":
    main()
