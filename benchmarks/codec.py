"""Codec throughput: encode + decode of a typical tools/call request and result, per second.

Run: ``python benchmarks/codec.py`` (prints one JSON object).
"""

from __future__ import annotations

import json
import platform
import time

from mcp_sim.wire import JSONRPCRequest, JSONRPCResultResponse, decode, encode

REQUEST = JSONRPCRequest(42, "tools/call", {
    "name": "get_forecast",
    "arguments": {"city": "Lisbon", "days": 3},
    "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
              "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
              "io.modelcontextprotocol/clientInfo": {"name": "mcp-sim", "version": "0.1.0"}},
})
RESULT = JSONRPCResultResponse(42, {
    "resultType": "complete",
    "content": [{"type": "text", "text": "Lisbon: sunny, 24°C; then cloudy, 21°C; then rain, 18°C."}],
    "structuredContent": {"city": "Lisbon", "days": [{"sky": "sunny", "c": 24}, {"sky": "cloudy", "c": 21},
                                                      {"sky": "rain", "c": 18}]},
    "isError": False,
    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "weather", "version": "1.0.0"}},
})


def rate(message: object, seconds: float = 1.0) -> float:
    n = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        for _ in range(500):
            decode(encode(message))  # type: ignore[arg-type]
        n += 500
        now = time.perf_counter()
        if now >= deadline:
            return n / (now - start)


def main() -> None:
    out = {
        "benchmark": "codec encode+decode",
        "python": platform.python_version(),
        "tools_call_request_per_s": round(rate(REQUEST)),
        "tools_call_result_per_s": round(rate(RESULT)),
        "request_bytes": len(encode(REQUEST).encode()),
        "result_bytes": len(encode(RESULT).encode()),
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
