"""``mcp-sim check`` against real peers: the official Python SDK's server (``tests/sdk_server.py``),
the npm reference server ``@modelcontextprotocol/server-everything`` (legacy; installed by
``.ci/conformance.sh``) and mcp-sim's own ready-made servers under ``mcp-sim serve``, in both eras
under the whole default nemesis. None may break a rule of MUST strength; both eras must really have been checked.

(The SDK's SHOULD findings — an isError result for an unknown tool, a cursor it never issued served
as the first page, -32603 or code 0 for a bad prompts/get, silence on unreadable lines — are what it
does today and are not pinned here.) The other ready-made servers are checked in
``tests/test_check_own_servers.py`` (the two files each stay under a minute). Slow: every case
spawns real servers.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

import anyio
import pytest
from sim_server import sdk_server_argv

from mcp_sim.bridge.check import CheckOptions, run_check

pytestmark = pytest.mark.slow


def assert_no_must(command: list[str], eras: tuple[str, ...] = ("legacy", "modern"),
                   nemesis: tuple[str, ...] | None = None) -> None:
    """Check ``command`` in both eras under the default nemesis: no MUST broken, both eras checked."""
    options = CheckOptions(seed=5, eras=eras) if nemesis is None else CheckOptions(seed=5, eras=eras, nemesis=nemesis)  # type: ignore[arg-type]
    report, trace = anyio.run(run_check, command, options)
    musts = [f for f in report.findings if f.strength == "MUST"]
    assert musts == [], musts
    assert report.passed and report.exit_code == 0
    for era, summary in report.eras.items():
        assert summary.skipped is None, f"{era}: {summary.skipped}"
        assert summary.requests > 20
    if "legacy" in eras:
        assert report.eras["legacy"].revision in ("2025-06-18", "2025-11-25")
    if "modern" in eras:
        assert report.eras["modern"].revision == "2026-07-28"
    killed = [e for e in trace if "nemesis:kill" in e.marks]
    assert len(killed) == (len(eras) if "restart" in options.nemesis else 0)  # the restart ran in each era


def test_the_official_python_sdk_server_breaks_no_must_in_either_era() -> None:
    assert_no_must(sdk_server_argv())


@pytest.mark.parametrize("server", ["weather", "notes"])
def test_mcp_sim_s_own_servers_break_no_must_in_either_era(server: str) -> None:
    assert_no_must([sys.executable, "-m", "mcp_sim.cli", "serve", server])


CONFORMANCE_MODULES = Path(__file__).resolve().parent.parent / ".ci" / "conformance" / "node_modules"
"""Where ``.ci/conformance.sh`` installs Node 22 and the pinned npm packages, the reference server among them."""


def everything_command() -> list[str] | None:
    """The npm reference server ``@modelcontextprotocol/server-everything`` over stdio:
    ``MCP_SIM_SERVER_EVERYTHING`` if set (for instance ``npx -y @modelcontextprotocol/server-everything``),
    else the copy ``.ci/conformance.sh`` installs (pinned in ``.ci/conformance/package.json``)."""
    named = os.environ.get("MCP_SIM_SERVER_EVERYTHING")
    if named:
        return shlex.split(named)
    node = CONFORMANCE_MODULES / "node" / "bin" / "node"
    script = CONFORMANCE_MODULES / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
    return [str(node), str(script), "stdio"] if node.exists() and script.exists() else None


def test_the_npm_reference_server_breaks_no_must_in_the_legacy_era() -> None:
    command = everything_command()
    if command is None:
        reason = "the npm server-everything is not installed: .ci/conformance.sh installs it from the npm registry"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason}; did that step of .ci/run fail?")
        pytest.skip(reason)
    assert_no_must(command, eras=("legacy",))
