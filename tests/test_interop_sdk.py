"""Interoperability with the official ``mcp`` Python SDK (2.3.0) as the real peer, both eras, over a
real stdio pipe and real HTTP on 127.0.0.1.

* the SDK's ``Client`` lists and calls the tools, resources and prompts of ``mcp-sim serve``;
* the simulator's ``Client`` lists and calls those of an SDK-built server (``tests/sdk_server.py``);
* an elicitation crosses the wire in each direction: in 2026-07-28 as a Multi Round-Trip Request
  (``InputRequiredResult`` → retry with ``inputResponses`` and the echoed ``requestState``), in the
  legacy era as an ``elicitation/create`` request sent mid-call.

The SDK's ``mode="auto"`` probes with ``server/discover`` and picks 2026-07-28 when the server
answers it; ``mode="legacy"`` performs the ``initialize`` handshake (2025-11-25).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as sdk_types
import pytest
from mcp import Client as SdkClient
from mcp.client.session import ClientRequestContext
from mcp.client.stdio import StdioServerParameters

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sim_server import build, env_with_tests, sdk_server_argv, serve_argv

from mcp_sim.bridge.http_server import serve_http
from mcp_sim.bridge.real import connect_real
from mcp_sim.trace.recorder import TraceEvent


async def accept(context: ClientRequestContext, params: sdk_types.ElicitRequestParams) -> sdk_types.ElicitResult:
    """The SDK client's user: accept every elicitation, confirming."""
    return sdk_types.ElicitResult(action="accept", content={"confirm": True})


def text(block: Any) -> str:
    """The text of a content block (the SDK types it as a union of block kinds)."""
    return str(getattr(block, "text", ""))


async def sdk_drives(client: SdkClient) -> dict[str, Any]:
    """What the SDK client sees of the simulated weather server."""
    tools = {t.name for t in (await client.list_tools()).tools}
    forecast = await client.call_tool("get_forecast", {"city": "Oslo", "days": 2})
    bad_args = await client.call_tool("get_forecast", {"city": 7})
    confirm = await client.call_tool("confirm_delete", {"name": "draft"})
    resources = [str(r.uri) for r in (await client.list_resources()).resources]
    read = await client.read_resource(resources[0])
    templates = [t.uri_template for t in (await client.list_resource_templates()).resource_templates]
    prompts = [p.name for p in (await client.list_prompts()).prompts]
    prompt = await client.get_prompt("plan_trip", {"destination": "Oslo"})
    return {"version": client.protocol_version, "tools": tools, "forecast": text(forecast.content[0]),
            "bad_args": bad_args.is_error, "confirm": text(confirm.content[0]), "resources": resources,
            "read": text(read.contents[0]), "templates": templates, "prompts": prompts,
            "prompt": text(prompt.messages[0].content)}


def check_sdk_view(seen: dict[str, Any], mode: str) -> None:
    assert seen["version"] == ("2025-11-25" if mode == "legacy" else "2026-07-28")
    assert {"get_forecast", "get_conditions", "confirm_delete"} <= seen["tools"]
    assert "Oslo" in seen["forecast"] and "day 2" in seen["forecast"]
    assert seen["bad_args"] is True
    assert seen["confirm"] == "deleted draft"
    assert seen["resources"] == ["weather://stations"] and "Lisbon" in seen["read"]
    assert seen["templates"] == ["weather://forecast/{city}/{date}"]
    assert seen["prompts"] == ["plan_trip"] and "Oslo" in seen["prompt"]


def mrtr_round_trip(events: list[TraceEvent]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The InputRequiredResult of a tools/call and the retry that answered it."""
    frames = [e.message for e in events if e.message is not None]
    asked = next(m for m in frames if (m.get("result") or {}).get("resultType") == "input_required")
    retry = next(m for m in frames if m.get("method") == "tools/call" and "inputResponses" in m["params"])
    return asked["result"], retry["params"]


# --- the SDK's client against the simulated server ------------------------------------------------------

@pytest.mark.slow
def test_sdk_client_drives_mcp_sim_serve_over_stdio_in_both_eras(tmp_path: Path) -> None:
    """Two real ``mcp-sim serve`` processes at once: one SDK client per era."""
    seen: dict[str, dict[str, Any]] = {}

    async def one(mode: str) -> None:
        argv = serve_argv("--trace", str(tmp_path / f"{mode}.jsonl"))
        params = StdioServerParameters(command=argv[0], args=argv[1:], env=env_with_tests())
        async with SdkClient(params, mode=mode, elicitation_callback=accept) as client:
            seen[mode] = await sdk_drives(client)

    async def main() -> None:
        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:
                for mode in ("legacy", "auto"):
                    tg.start_soon(one, mode)

    anyio.run(main)
    for mode in ("legacy", "auto"):
        check_sdk_view(seen[mode], mode)
        # The server's own trace (``--trace``), written when its stdin closed.
        lines = (tmp_path / f"{mode}.jsonl").read_text().splitlines()
        events = [TraceEvent.from_json(json.loads(line)) for line in lines]
        assert all(e.transport == "stdio" for e in events if e.message is not None)
        if mode == "auto":
            asked, retry = mrtr_round_trip(events)
            key = next(iter(asked["inputRequests"]))
            assert asked["inputRequests"][key]["method"] == "elicitation/create"
            assert retry["inputResponses"][key]["action"] == "accept"
            assert retry.get("requestState") == asked.get("requestState")
        else:
            methods = [e.method for e in events if e.kind == "request"]
            assert methods[0] == "initialize" and "elicitation/create" in methods


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_sdk_client_drives_the_simulated_server_over_http(mode: str) -> None:
    async def main() -> tuple[dict[str, Any], list[TraceEvent]]:
        with anyio.fail_after(30):
            async with serve_http(build()) as handle:
                async with SdkClient(handle.url, mode=mode, elicitation_callback=accept) as client:
                    seen = await sdk_drives(client)
                return seen, list(handle.recorder.events)

    seen, events = anyio.run(main)
    check_sdk_view(seen, mode)
    if mode == "auto":
        asked, retry = mrtr_round_trip(events)
        assert retry.get("requestState") == asked.get("requestState")
        posts = [e for e in events if e.kind == "request"]
        assert all(e.framing["http"]["request"]["headers"].get("mcp-method") == e.method for e in posts)
    else:
        ask = next(e for e in events if e.method == "elicitation/create" and e.kind == "request")
        assert ask.framing["http"]["sse"] == {"event": "message"}


# --- the simulated client against an SDK-built server ---------------------------------------------------

async def sim_drives(target: Any, era: str) -> tuple[dict[str, Any], list[TraceEvent]]:
    async with connect_real(target, era=era, shutdown_grace=20.0) as session:  # type: ignore[arg-type]
        client = session.client
        seen = {
            "era": client.era, "version": client.protocol_version, "server": (client.server_info or {}).get("name"),
            "tools": {t["name"] for t in await client.list_all_tools()},
            "add": await client.call_tool("add", {"a": 2, "b": 3}),
            "bad_args": await client.call_tool("add", {"a": "two"}),
            "confirm": await client.call_tool("confirm_delete", {"name": "draft"}),
            "resources": (await client.list_resources())["resources"],
            "read": await client.read_resource("notes://readme"),
            "templates": (await client.list_resource_templates())["resourceTemplates"],
            "prompt": await client.get_prompt("summarize", {"topic": "MCP"}),
        }
    return seen, list(session.recorder.events)


def check_sim_view(seen: dict[str, Any], events: list[TraceEvent], era: str) -> None:
    expected_era = "legacy" if era == "legacy" else "modern"
    assert seen["era"] == expected_era and seen["server"] == "sdk-notes"
    assert seen["tools"] == {"add", "echo", "confirm_delete"}
    assert seen["add"]["structuredContent"] == {"result": 5}
    assert seen["bad_args"]["isError"] is True
    assert seen["confirm"]["content"][0]["text"] == "deleted draft"
    assert [r["uri"] for r in seen["resources"]] == ["notes://readme"]
    assert seen["read"]["contents"][0]["text"] == "Hello from the SDK server."
    assert [t["uriTemplate"] for t in seen["templates"]] == ["notes://{name}"]
    assert "MCP" in seen["prompt"]["messages"][0]["content"]["text"]
    if expected_era == "modern":
        asked, retry = mrtr_round_trip(events)
        assert set(retry["inputResponses"]) == set(asked["inputRequests"])
        assert retry["requestState"] == asked["requestState"]  # echoed exactly
    else:
        ask = next(e for e in events if e.method == "elicitation/create" and e.kind == "request")
        answer = next(e for e in events if e.method == "elicitation/create" and e.kind == "response")
        assert ask.sender.startswith("server/") and answer.sender.startswith("client/")


@pytest.mark.slow
def test_simulated_client_drives_an_sdk_server_over_stdio_in_both_eras() -> None:
    """Two real SDK server processes at once: the simulated client speaks legacy to one and
    2026-07-28 to the other."""
    results: dict[str, tuple[dict[str, Any], list[TraceEvent]]] = {}

    async def one(era: str) -> None:
        results[era] = await sim_drives(sdk_server_argv(), era)

    async def main() -> None:
        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:
                for era in ("legacy", "modern"):
                    tg.start_soon(one, era)

    anyio.run(main)
    for era, (seen, events) in results.items():
        check_sim_view(seen, events, era)
        assert events[-1].kind == "transport" and "exited with code 0" in (events[-1].text or "")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow
def test_simulated_client_drives_an_sdk_server_over_http() -> None:
    port = _free_port()
    proc = subprocess.Popen(sdk_server_argv("--http", str(port)), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        async def main() -> None:
            with anyio.fail_after(60):
                while True:
                    try:
                        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                            break
                    except OSError:
                        assert proc.poll() is None, "the SDK server did not start"
                        await anyio.sleep(0.05)
                for era in ("legacy", "modern", "auto"):
                    seen, events = await sim_drives(f"http://127.0.0.1:{port}/mcp", era)
                    check_sim_view(seen, events, era)
                    if era == "legacy":
                        assert any("DELETE session" in (e.text or "") for e in events)

        anyio.run(main)
    finally:
        proc.terminate()
        proc.wait(10)
