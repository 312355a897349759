"""``mcp-sim check --url``: the same workload over real Streamable HTTP, against mcp-sim's own HTTP
server (``serve_http``, the bridge behind ``mcp-sim serve --transport http``) in both eras.

Only the nemesis actions that work over HTTP run (duplicate, reuse, oversized); the header and status
probes of each era are not built yet. Slow: a real socket and a real HTTP server.
"""

from __future__ import annotations

import anyio
import pytest
from sim_server import build

from mcp_sim.bridge.check import CheckOptions, run_check
from mcp_sim.bridge.http_server import serve_http

pytestmark = pytest.mark.slow


def test_a_compliant_http_server_breaks_no_must_in_either_era() -> None:
    async def main() -> None:
        with anyio.fail_after(120):
            async with serve_http(build()) as handle:
                report, trace = await run_check(handle.url, CheckOptions(seed=2))
        musts = [f for f in report.findings if f.strength == "MUST"]
        assert musts == [], musts
        assert report.passed and set(report.nemesis) == {"duplicate", "reuse", "oversized"}
        for era, summary in report.eras.items():
            assert summary.skipped is None, f"{era}: {summary.skipped}"
            assert summary.requests > 15
        posts = [e for e in trace if e.kind == "request" and e.transport == "http"]
        modern = [e for e in posts if e.link == "http-modern"]
        assert modern and all(e.framing["http"]["request"]["headers"].get("Mcp-Method") == e.method
                              for e in modern)
        legacy = [e for e in posts if e.link == "http-legacy" and e.method != "initialize"]
        assert legacy and all("Mcp-Session-Id" in e.framing["http"]["request"]["headers"] for e in legacy)

    anyio.run(main)
