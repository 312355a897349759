"""A simulated server for the real-wire tests: the weather server plus one tool that asks the user.

``confirm_delete`` calls ``ctx.elicit``: over a legacy connection the server sends an
``elicitation/create`` request mid-call; over 2026-07-28 it answers ``InputRequiredResult`` and
finishes on the client's retry (MRTR). Serve it with
``python -m mcp_sim.bridge serve sim_server:build`` (with this folder on ``PYTHONPATH``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from mcp_sim.capabilities.context import Context
from mcp_sim.roles.server import Server
from mcp_sim.scenarios import weather


def build() -> Server:
    server = weather.build()

    @server.tool(annotations={"destructiveHint": True})
    async def confirm_delete(name: str, ctx: Context) -> str:
        """Delete a note after the user confirms."""
        answer = await ctx.elicit(f"Really delete the note {name!r}?",
                                  {"type": "object", "properties": {"confirm": {"type": "boolean"}},
                                   "required": ["confirm"]})
        confirmed = answer.get("action") == "accept" and (answer.get("content") or {}).get("confirm")
        return f"deleted {name}" if confirmed else f"kept {name}"

    @server.tool()
    def shout(text: str) -> str:
        """Print to stdout (a classic stdio bug) and return the text in capitals."""
        print("a stray print that must not reach the protocol stream")
        return text.upper()

    return server


TESTS_DIR = Path(__file__).resolve().parent


def env_with_tests() -> dict[str, str]:
    """This process's environment with the tests folder importable (for ``sim_server:build``)."""
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": str(TESTS_DIR) + (os.pathsep + path if path else "")}


def serve_argv(*extra: str, server: str = "sim_server:build") -> list[str]:
    """The command line of ``mcp-sim serve`` for this fixture, run by the current interpreter."""
    return [sys.executable, "-m", "mcp_sim.cli", "serve", server, *extra]


def sdk_server_argv(*extra: str) -> list[str]:
    return [sys.executable, str(TESTS_DIR / "sdk_server.py"), *extra]
