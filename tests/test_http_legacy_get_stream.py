"""Legacy Streamable HTTP: nothing about a request that is still running travels on the GET stream.

The 2025-11-25 transport page (*Listening for Messages from the Server*) says the messages a server
sends on the stream the client opened with ``GET`` should be unrelated to any concurrently-running
request (rule ``http.legacy.get-stream-unrelated``). A server that answers requests with one JSON body
has no stream of the request's own, so the simulated server drops a progress notification or a log
line about the request (a transport note in the trace says so) and, for a request of its own about it
(elicitation), answers with an SSE stream after all (rule ``http.legacy.json-mode-related``). Course
chapter 06, Part B.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcp_sim.capabilities.context import Context
from mcp_sim.protocol.schema import find_spec_dir, schema_errors
from mcp_sim.roles.client import Client, ClientCallbacks
from mcp_sim.roles.server import Server
from mcp_sim.roles.server_session import serve
from mcp_sim.scenarios import transport_tour as tour
from mcp_sim.sim.world import Simulation
from mcp_sim.trace.recorder import Recorder
from mcp_sim.transports.http_server import SimulatedHttpServer

LEGACY = "2025-11-25"


def _in_flight_on_get_stream(recorder: Recorder) -> list[str]:
    """Every message sent on the GET stream (SSE ids ``0-n``) while a request it names is running."""
    running: set[Any] = set()
    problems = []
    for e in recorder.events:
        if e.message is None:
            continue
        sse = e.framing.get("sse") or {}
        on_get = str(sse.get("id", "")).startswith("0-")
        if e.kind == "request" and e.sender.startswith("client"):
            running.add(e.request_id)
        elif e.kind in ("response", "error") and e.sender.startswith("server"):
            running.discard(e.request_id)
        params = e.message.get("params") or {}
        token = params.get("progressToken")
        if on_get and (e.request_id in running or token is not None or e.kind in ("response", "error")):
            problems.append(f"{e.kind} {e.method} on the GET stream")
    return problems


def _story(response_mode: str) -> Recorder:
    sim = Simulation(seed=3)
    server = Server("asker", version="1.0.0")

    @server.tool()
    async def confirm(item: str, ctx: Context) -> str:
        """Report progress, log, then ask the user to confirm."""
        await ctx.report_progress(1, 2)
        await ctx.log("info", f"about to confirm {item}")
        answer = await ctx.elicit(f"Confirm {item}?", {"type": "object", "properties": {"ok": {"type": "boolean"}}})
        await ctx.report_progress(2, 2)
        return f"{item}: {answer.get('action')}"

    async def elicit(_server: str, _params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"ok": True}}

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            http = SimulatedHttpServer(sim, tg, "asker", lambda s: serve(server, s),
                                       response_mode=response_mode)  # type: ignore[arg-type]
            stream = http.connect("asker", revision=LEGACY)
            client = Client("app", era="legacy", callbacks=ClientCallbacks(elicitation=elicit))
            await client.connect(stream, tg)
            result = await client.call_tool("confirm", {"item": "desk 4"}, on_progress=lambda *_: None)
            assert result["content"][0]["text"] == "desk 4: accept"
            await client.close()
            await http.aclose()
            tg.cancel_scope.cancel()

    sim.run(main)
    recorder: Recorder = sim.recorder
    return recorder


@pytest.mark.parametrize("response_mode", ["json", "sse", "auto"])
def test_no_message_about_a_running_request_goes_on_the_get_stream(response_mode: str) -> None:
    recorder = _story(response_mode)
    assert _in_flight_on_get_stream(recorder) == []
    if response_mode == "json":
        dropped = [e for e in recorder.events if "dropped" in e.marks]
        assert len(dropped) == 2 and all("GET stream" in e.text for e in dropped)  # progress 1/2 and the log
        asked = next(e for e in recorder.events if e.method == "elicitation/create" and e.kind == "request")
        assert asked.framing.get("sse"), "the elicitation travels on the tools/call answer's own stream"
        assert not str(asked.framing["sse"]["id"]).startswith("0-")


def test_the_tour_s_json_answering_server_sends_no_progress_on_the_get_stream() -> None:
    recorder, _ = tour.legacy_http(response_mode="json")
    assert _in_flight_on_get_stream(recorder) == []
    assert not [e for e in recorder.events if e.method == "notifications/progress"]
    assert len([e for e in recorder.events if "dropped" in e.marks]) == 2
    # with SSE answers the progress travels on the request's own stream, as before
    streamed, _ = tour.legacy_http()
    progress = [e for e in streamed.events if e.method == "notifications/progress"]
    assert len(progress) == 2 and all(not e.framing["sse"]["id"].startswith("0-") for e in progress)


@pytest.mark.skipif(find_spec_dir() is None, reason="official MCP schemas not found")
@pytest.mark.parametrize("response_mode", ["json", "sse"])
def test_every_message_stays_schema_valid(response_mode: str) -> None:
    runs = [_story(response_mode), tour.legacy_http(response_mode=response_mode)[0]]  # type: ignore[arg-type]
    for recorder in runs:
        checked = 0
        for e in recorder.events:
            if e.message is not None:
                assert schema_errors(e.message, LEGACY) == [], (e.kind, e.method)
                checked += 1
        assert checked > 5
