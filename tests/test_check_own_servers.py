"""``mcp-sim check`` against the rest of mcp-sim's ready-made servers under ``mcp-sim serve`` (weather
and notes are in ``tests/test_check_peers.py``, with the SDK's server): no MUST broken in either era
under the nemesis actions that keep one process per era (restart and hang-up, which only add
processes, run against weather and notes there). Slow: every case spawns real servers."""

from __future__ import annotations

import sys

import pytest
from test_check_peers import assert_no_must

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("server", ["issues", "finance", "conformance"])
def test_the_other_ready_made_servers_break_no_must_in_either_era(server: str) -> None:
    assert_no_must([sys.executable, "-m", "mcp_sim.cli", "serve", server],
                   nemesis=("delay", "duplicate", "reuse", "malformed", "oversized"))
