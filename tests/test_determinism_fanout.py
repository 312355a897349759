"""Same seed, same trace — also when one cancellation stops several waiters at once.

A legacy stdio server that crashes while several of its own requests to the client (elicitations)
are pending cancels them all with one scope; anyio wakes the waiters in the order of a set of tasks,
which depends on where the tasks sit in memory and so changes with ``PYTHONHASHSEED``. The server
must announce the cancellations (``notifications/cancelled``) in request-id order regardless: this
test runs the crash in fresh processes with different hash seeds (and with the accelerated twins on
and off) and asks for byte-identical traces.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio

from mcp_sim.capabilities.context import Context
from mcp_sim.roles.client import Client, ClientCallbacks
from mcp_sim.roles.server import Server
from mcp_sim.roles.server_session import serve
from mcp_sim.sim.world import Simulation
from mcp_sim.trace.jsonl import dumps_jsonl
from mcp_sim.transports import open_link

PENDING = 8
"""How many elicitations are pending when the server crashes."""


def crash_with_server_requests_pending(seed: int = 5, pending: int = PENDING) -> str:
    """``pending`` concurrent ``tools/call`` each wait on an elicitation the user takes ten seconds to
    answer; at 0.5 s the server process crashes. The trace, as JSON Lines."""
    sim = Simulation(seed)
    server = Server("asker", version="1.0.0")

    @server.tool()
    async def ask(ctx: Context, who: str) -> str:
        """Ask the user a question and wait for the answer."""
        return str(await ctx.elicit(f"{who}?", {"type": "object", "properties": {}}))

    async def slow_user(server_name: str, params: dict) -> dict:
        await anyio.sleep(10)
        return {"action": "accept", "content": {}}

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            stream = await open_link(sim, tg, "asker", lambda s: serve(server, s), transport="stdio",
                                     revision="2025-11-25")
            client = Client("app", era="legacy", callbacks=ClientCallbacks(elicitation=slow_user), timeout=30)
            await client.connect(stream, tg)

            async def call(n: int) -> None:
                try:
                    await client.call_tool("ask", {"who": f"question {n}"})
                except Exception:  # the crash ends every call; its outcome is not what this test reads
                    pass

            async with anyio.create_task_group() as calls:
                for n in range(pending):
                    calls.start_soon(call, n)
                await anyio.sleep(0.5)
                stream.process.crash()  # type: ignore[attr-defined]
                await anyio.sleep(1)
                calls.cancel_scope.cancel()
            tg.cancel_scope.cancel()

    sim.run(main)
    return dumps_jsonl(sim.recorder.events)


def _cancelled_ids(trace: str) -> list[int]:
    events = [json.loads(line) for line in trace.splitlines()]
    return [e["message"]["params"]["requestId"] for e in events
            if (e.get("message") or {}).get("method") == "notifications/cancelled"]


def test_the_crash_announces_every_pending_server_request_in_id_order() -> None:
    trace = crash_with_server_requests_pending()
    elicitations = [json.loads(line)["message"]["id"] for line in trace.splitlines()
                    if (json.loads(line).get("message") or {}).get("method") == "elicitation/create"]
    assert len(elicitations) == PENDING >= 3
    assert _cancelled_ids(trace) == sorted(elicitations)
    assert "fatal: the server process crashed" in trace


def _in_a_fresh_process(hash_seed: str, accelerated: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed, "MCP_SIM_ACCELERATED": accelerated}
    done = subprocess.run([sys.executable, __file__], env=env, capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parent.parent, check=True)
    return done.stdout


def test_the_crash_gives_the_same_trace_whatever_the_hash_seed() -> None:
    runs = {(seed, "0"): _in_a_fresh_process(seed, "0") for seed in ("0", "1", "7", "42", "1234", "65535")}
    runs.update({(seed, "1"): _in_a_fresh_process(seed, "1") for seed in ("0", "7")})
    first = runs[("0", "0")]
    assert len(_cancelled_ids(first)) >= 3
    different = [key for key, trace in runs.items() if trace != first]
    assert not different, f"traces differ for (PYTHONHASHSEED, MCP_SIM_ACCELERATED) = {different}"


if __name__ == "__main__":
    sys.stdout.write(crash_with_server_requests_pending())
