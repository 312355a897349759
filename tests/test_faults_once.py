"""At most one execution per request on every path (issue "faults without surprises", part two).

* A duplicated legacy HTTP POST travels as long as its original and never reaches the server before
  it: the server's copy check (same session, same id, same request) drops it, and a copy that meets a
  server restarted by a crash finds no session (404) and runs nothing. Before, the copy was handed
  over at once, ran first; the original then met the 404 of the crash, the client re-initialized and
  sent it again — the tool ran twice.
* A duplicated server→client request (legacy ``elicitation/create``, ``sampling/createMessage``,
  ``roots/list``) is answered once: the client's copy check drops the copy, so the Host asks its user
  each question once and a scripted user's answers go to the right questions.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import anyio
import pytest

from mcp_sim.capabilities.context import Context
from mcp_sim.roles.client import Client, ClientCallbacks
from mcp_sim.roles.server import Server
from mcp_sim.roles.server_session import serve
from mcp_sim.sim.world import Simulation
from mcp_sim.trace.jsonl import dumps_jsonl
from mcp_sim.transports import open_link
from mcp_sim.transports.faults import Faults, LinkFaults

LEGACY = "2025-11-25"


def duplicate_then_crash(seed: int = 0) -> tuple[Counter[str], dict[str, str], str]:
    """Legacy HTTP, 50 ms to the server. Call ``a``'s POST (frame 4: after initialize, initialized
    and the GET) is duplicated; call ``b``'s POST, 10 ms later, crashes the server before ``a``'s
    original arrives. Returns the executions per call, each call's outcome and the trace."""
    executions: Counter[str] = Counter()
    outcomes: dict[str, str] = {}
    server = Server("once", version="1.0.0")

    @server.tool()
    async def work(ctx: Context, token: str) -> str:
        """Work that must not run twice."""
        executions[token] += 1
        await ctx.sleep(0.2)
        return f"done {token}"

    sim = Simulation(seed)

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            stream = await open_link(sim, tg, "once", lambda s: serve(server, s), transport="http", revision=LEGACY,
                                     faults=LinkFaults(to_server=Faults(latency=0.05, duplicate_at=(4,), crash_at=5)))
            client = Client("app", era="legacy", timeout=5)
            await client.connect(stream, tg)

            async def call(token: str, after: float) -> None:
                await anyio.sleep(after)
                try:
                    result = await client.call_tool("work", {"token": token})
                    outcomes[token] = str(result["content"][0]["text"])
                except Exception as exc:  # every failure is an outcome; which one is what the test reads
                    outcomes[token] = type(exc).__name__

            async with anyio.create_task_group() as calls:
                calls.start_soon(call, "a", 0.0)
                calls.start_soon(call, "b", 0.01)
            await client.close()
            tg.cancel_scope.cancel()

    sim.run(main)
    return executions, outcomes, dumps_jsonl(sim.recorder)


def test_a_duplicate_never_overtakes_its_original_before_a_crash() -> None:
    executions, outcomes, trace = duplicate_then_crash()
    events = [json.loads(line) for line in trace.splitlines()]
    marked = [e for e in events if "duplicate" in (e.get("marks") or [])
              and (e.get("message") or {}).get("method") == "tools/call"]
    assert marked, "the fault did duplicate a's tools/call"
    assert any("crash" in (e.get("marks") or []) for e in events)
    assert executions["a"] == 1, executions  # the defect: 2 (the copy ran, then the re-sent original)
    assert outcomes["a"] == "done a"
    assert executions["b"] == 0 and outcomes["b"] == "RequestTimeout"  # b's POST was lost in the crash


def test_a_duplicate_and_crash_give_the_same_trace_on_a_rerun() -> None:
    assert duplicate_then_crash(3)[2] == duplicate_then_crash(3)[2]


def ask_twice(transport: str, *, duplicate: float = 1.0, seed: int = 0) -> tuple[list[str], str, list[dict[str, Any]]]:
    """A tool asks the user two questions (legacy elicitation) over a link that duplicates every frame
    to the client. Returns the questions the user saw, the tool's answer and the trace's events."""
    asked: list[str] = []
    script = iter(["blue", "seven", "third answer", "fourth answer"])
    server = Server("quiz", version="1.0.0")

    @server.tool()
    async def quiz(ctx: Context) -> str:
        """Two questions, one after the other."""
        schema = {"type": "object", "properties": {"a": {"type": "string"}}}
        colour = await ctx.elicit("colour?", schema)
        number = await ctx.elicit("number?", schema)
        return f"{colour['content']['a']} {number['content']['a']}"

    async def user(server_name: str, params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params["message"])
        return {"action": "accept", "content": {"a": next(script)}}

    sim = Simulation(seed)
    answer: dict[str, str] = {}

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            stream = await open_link(sim, tg, "quiz", lambda s: serve(server, s), transport=transport,  # type: ignore[call-overload]
                                     revision=LEGACY, faults=LinkFaults(to_client=Faults(latency=0.01,
                                                                                         duplicate=duplicate)))
            client = Client("app", era="legacy", timeout=5, callbacks=ClientCallbacks(elicitation=user))
            await client.connect(stream, tg)
            result = await client.call_tool("quiz", {})
            answer["text"] = str(result["content"][0]["text"])
            await client.close()
            tg.cancel_scope.cancel()

    sim.run(main)
    return asked, answer["text"], [json.loads(line) for line in dumps_jsonl(sim.recorder).splitlines()]


@pytest.mark.parametrize("transport", ["memory", "stdio", "http"])
def test_a_duplicated_elicitation_is_asked_once(transport: str) -> None:
    asked, text, events = ask_twice(transport)
    copies = [e for e in events if (e.get("message") or {}).get("method") == "elicitation/create"
              and "duplicate" in (e.get("marks") or [])]
    assert len(copies) == 2, "each question was duplicated on the wire"
    assert asked == ["colour?", "number?"]  # the defect: each question asked twice
    assert text == "blue seven"  # the defect: "blue third answer" (the second answer went to the copy)
    ignored = [e for e in events if "ignores a copy of the server's elicitation/create" in (e.get("text") or "")]
    assert len(ignored) == 2


def test_a_new_session_starts_the_copy_check_afresh() -> None:
    """The server's ids start again in each session: after a stdio restart the new process asks the
    same question with the same id 1, and that is a new question, not a copy of the old one."""
    asked: list[str] = []
    server = Server("quiz", version="1.0.0")

    @server.tool()
    async def quiz(ctx: Context) -> str:
        """One question."""
        got = await ctx.elicit("colour?", {"type": "object", "properties": {"a": {"type": "string"}}})
        return str(got["content"]["a"])

    async def user(server_name: str, params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params["message"])
        return {"action": "accept", "content": {"a": f"answer {len(asked)}"}}

    sim = Simulation(0)
    texts: list[str] = []

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            stream = await open_link(sim, tg, "quiz", lambda s: serve(server, s), transport="stdio", revision=LEGACY)
            client = Client("app", era="legacy", timeout=5, callbacks=ClientCallbacks(elicitation=user))
            await client.connect(stream, tg)
            texts.append(str((await client.call_tool("quiz", {}))["content"][0]["text"]))
            await client.restart_server()
            texts.append(str((await client.call_tool("quiz", {}))["content"][0]["text"]))
            await client.close()
            tg.cancel_scope.cancel()

    sim.run(main)
    assert asked == ["colour?", "colour?"] and texts == ["answer 1", "answer 2"]
