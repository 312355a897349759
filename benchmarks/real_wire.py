"""tools/call round trips per second over a real stdio pipe: the simulator vs the official SDK.

Measured in the same run, on the same machine, one call at a time (each round trip waits for its
response), after a warm-up:

* ``mcp_sim``: the simulator's Client driving ``mcp-sim serve weather`` (a real subprocess);
* ``sdk``: the official ``mcp`` SDK's Client driving an SDK ``MCPServer`` (a real subprocess, this
  file run with ``--sdk-server``) with the same tool.

Both eras are measured: ``legacy`` (``initialize``, 2025-11-25) and ``modern`` (2026-07-28, per-request
``_meta``). Prints one JSON object. Usage: ``python benchmarks/real_wire.py [--calls N]``.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from typing import Any

import anyio

CITY = {"city": "Oslo"}


def run_sdk_server() -> None:
    """The SDK side's server: one tool, the same answer shape as the weather server's."""
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("bench", version="1.0.0")

    @server.tool()
    def get_forecast(city: str, days: int = 1) -> str:
        """Forecast for a city."""
        return f"{city}: day 1: sunny, 6°C"

    server.run("stdio")


async def bench_mcp_sim(era: str, calls: int, warmup: int) -> float:
    from mcp_sim.bridge.real import connect_real

    command = [sys.executable, "-m", "mcp_sim.cli", "serve", "weather"]
    async with connect_real(command, era=era) as session:  # type: ignore[arg-type]
        client = session.client
        for _ in range(warmup):
            await client.call_tool("get_forecast", CITY)
        start = time.perf_counter()
        for _ in range(calls):
            await client.call_tool("get_forecast", CITY)
        elapsed = time.perf_counter() - start
    return calls / elapsed


async def bench_sdk(mode: str, calls: int, warmup: int) -> float:
    import os

    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=[os.path.abspath(__file__), "--sdk-server"])
    async with Client(params, mode=mode) as client:
        for _ in range(warmup):
            await client.call_tool("get_forecast", CITY)
        start = time.perf_counter()
        for _ in range(calls):
            await client.call_tool("get_forecast", CITY)
        elapsed = time.perf_counter() - start
    return calls / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--sdk-server", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.sdk_server:
        run_sdk_server()
        return
    results: dict[str, Any] = {"benchmark": "tools/call round trips per second over real stdio",
                               "calls": args.calls, "warmup": args.warmup,
                               "python": platform.python_version(), "mcp_sim": {}, "sdk": {}}
    for era, sdk_mode in (("legacy", "legacy"), ("modern", "2026-07-28")):
        results["mcp_sim"][era] = round(anyio.run(bench_mcp_sim, era, args.calls, args.warmup), 1)
        results["sdk"][era] = round(anyio.run(bench_sdk, sdk_mode, args.calls, args.warmup), 1)
    results["mcp_sim_vs_sdk"] = {era: round(results["mcp_sim"][era] / results["sdk"][era], 2)
                                 for era in ("legacy", "modern")}
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
