"""The real Streamable HTTP endpoint on 127.0.0.1: status codes and headers of both eras, and the
simulated client over real HTTP, recorded in the same trace format as a simulation."""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sim_server import build

from mcp_sim.bridge.http_server import HttpServerHandle, check_loopback, origin_allowed, serve_http
from mcp_sim.bridge.real import connect_real
from mcp_sim.transports import http as H
from mcp_sim.transports.sse import SseEvent, SseParser
from mcp_sim.wire.jsonrpc import JSONRPCRequest

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def modern_headers(method: str, name: str | None = None) -> dict[str, str]:
    headers = {**ACCEPT, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
    if name is not None:
        headers["Mcp-Name"] = name
    return headers


def body(id: int | None, method: str, **params: Any) -> str:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if id is not None:
        message["id"] = id
    return json.dumps(message)


def with_endpoint(check: Callable[[HttpServerHandle, httpx.AsyncClient], Awaitable[None]], **options: Any) -> None:
    async def main() -> None:
        with anyio.fail_after(30):
            async with serve_http(build(), **options) as handle, httpx.AsyncClient(timeout=10) as http:
                await check(handle, http)

    anyio.run(main)


def test_modern_status_codes_and_header_checks() -> None:
    async def check(h: HttpServerHandle, http: httpx.AsyncClient) -> None:
        url = h.url
        ok = await http.post(url, content=body(1, "tools/call", name="get_forecast", arguments={"city": "Oslo"},
                                               _meta=META), headers=modern_headers("tools/call", "get_forecast"))
        assert ok.status_code == 200 and ok.json()["result"]["resultType"] == "complete"
        assert H.MCP_SESSION_ID.lower() not in ok.headers  # no sessions in 2026-07-28

        # Headers must repeat the body: missing or different → 400 with -32020, the request's id kept.
        for headers in (modern_headers("tools/list", "get_forecast"),           # wrong Mcp-Method
                        modern_headers("tools/call"),                            # missing Mcp-Name
                        modern_headers("tools/call", "get_conditions"),          # wrong Mcp-Name
                        {**ACCEPT, "Mcp-Method": "tools/call", "Mcp-Name": "get_forecast"}):  # no version
            r = await http.post(url, content=body(2, "tools/call", name="get_forecast", arguments={}, _meta=META),
                                headers=headers)
            assert r.status_code == 400 and r.json()["error"]["code"] == -32020 and r.json()["id"] == 2
        mismatch = {**modern_headers("tools/list"), "MCP-Protocol-Version": "2025-11-25"}
        r = await http.post(url, content=body(3, "tools/list", _meta=META), headers=mismatch)
        assert (r.status_code, r.json()["error"]["code"]) == (400, -32020)

        # Error codes map to statuses.
        r = await http.post(url, content=body(4, "no/such", _meta=META), headers=modern_headers("no/such"))
        assert (r.status_code, r.json()["error"]["code"], r.json()["id"]) == (404, -32601, 4)
        r = await http.post(url, content=body(5, "tools/call", name="nope", _meta=META),
                            headers=modern_headers("tools/call", "nope"))
        assert (r.status_code, r.json()["error"]["code"]) == (400, -32602)
        future = {**META, "io.modelcontextprotocol/protocolVersion": "2099-01-01"}
        r = await http.post(url, content=body(6, "tools/list", _meta=future),
                            headers={**modern_headers("tools/list"), "MCP-Protocol-Version": "2099-01-01"})
        assert (r.status_code, r.json()["error"]["code"]) == (400, -32022)
        assert "2026-07-28" in r.json()["error"]["data"]["supported"]
        r = await http.post(url, content=body(7, "tools/list"), headers=modern_headers("tools/list"))
        assert (r.status_code, r.json()["error"]["code"]) == (400, -32602)  # missing _meta
        # A tool's own failure is a result, not a protocol error.
        r = await http.post(url, content=body(8, "tools/call", name="get_forecast", arguments={"city": 1},
                                              _meta=META), headers=modern_headers("tools/call", "get_forecast"))
        assert r.status_code == 200 and r.json()["result"]["isError"] is True

        # Unreadable bodies, batches, notifications, other methods, foreign origins.
        r = await http.post(url, content="{not json", headers=ACCEPT)
        assert (r.status_code, r.json()["error"]["code"], "id" in r.json()) == (400, -32700, False)
        r = await http.post(url, content="[" + body(9, "tools/list", _meta=META) + "]", headers=ACCEPT)
        assert (r.status_code, r.json()["error"]["code"]) == (400, -32600)
        r = await http.post(url, content=body(None, "notifications/cancelled", requestId=1, _meta=META),
                            headers=modern_headers("notifications/cancelled"))
        assert r.status_code == 202
        assert (await http.get(url, headers={"Accept": "text/event-stream"})).status_code == 405
        assert (await http.delete(url)).status_code == 405
        r = await http.post(url, content=body(10, "tools/list", _meta=META),
                            headers={**modern_headers("tools/list"), "Origin": "https://evil.example"})
        assert r.status_code == 403
        r = await http.post(url, content=body(11, "tools/list", _meta=META),
                            headers={**modern_headers("tools/list"), "Origin": "http://localhost:6274"})
        assert r.status_code == 200
        r = await http.post(url, content=body(12, "tools/list", _meta=META),
                            headers={**modern_headers("tools/list"), "Accept": "text/html"})
        assert r.status_code == 406

    with_endpoint(check)


def test_legacy_session_lifecycle_over_http() -> None:
    async def check(h: HttpServerHandle, http: httpx.AsyncClient) -> None:
        url = h.url
        init = body(1, "initialize", protocolVersion="2025-11-25", capabilities={"elicitation": {}},
                    clientInfo={"name": "raw", "version": "0"})
        r = await http.post(url, content=init, headers=ACCEPT)
        assert r.status_code == 200 and r.json()["result"]["protocolVersion"] == "2025-11-25"
        session = r.headers[H.MCP_SESSION_ID]
        assert len(session) >= 32 and all(0x21 <= ord(c) <= 0x7E for c in session)
        legacy = {**ACCEPT, H.MCP_SESSION_ID: session, "MCP-Protocol-Version": "2025-11-25"}
        r = await http.post(url, content=body(None, "notifications/initialized"), headers=legacy)
        assert r.status_code == 202
        r = await http.post(url, content=body(2, "tools/list"), headers=legacy)
        assert r.status_code == 200 and {t["name"] for t in r.json()["result"]["tools"]} >= {"get_forecast"}
        # Legacy errors travel with status 200.
        r = await http.post(url, content=body(3, "no/such"), headers=legacy)
        assert (r.status_code, r.json()["error"]["code"]) == (200, -32601)
        r = await http.post(url, content=body(4, "tools/list"),
                            headers={**legacy, "MCP-Protocol-Version": "1999-01-01"})
        assert r.status_code == 400
        # An elicitation mid-call turns the POST's answer into an SSE stream.
        async with anyio.create_task_group() as tg:
            async def answer_elicitation() -> None:
                async with http.stream("GET", url, headers={**legacy, "Accept": "text/event-stream"}) as get:
                    assert get.status_code == 200
                    async for _ in get.aiter_lines():
                        break
            tg.start_soon(answer_elicitation)
            async with http.stream("POST", url, content=body(5, "tools/call", name="confirm_delete",
                                                             arguments={"name": "x"}), headers=legacy) as post:
                assert post.headers["content-type"].startswith("text/event-stream")
                parser, events = SseParser(), []
                async for line in post.aiter_lines():
                    event = parser.feed_line(line)
                    if event is None:
                        continue
                    message = json.loads(event.data)
                    events.append(message)
                    if message.get("method") == "elicitation/create":
                        reply = {"jsonrpc": "2.0", "id": message["id"],
                                 "result": {"action": "accept", "content": {"confirm": True}}}
                        ack = await http.post(url, content=json.dumps(reply), headers=legacy)
                        assert ack.status_code == 202
                    if "result" in message and message.get("id") == 5:
                        break
            tg.cancel_scope.cancel()
        assert [m.get("method") for m in events] == ["elicitation/create", None]
        assert events[-1]["result"]["content"][0]["text"] == "deleted x"
        # Sessions: missing → 400 for a legacy-only request; unknown → 404; DELETE ends one.
        assert (await http.delete(url, headers={H.MCP_SESSION_ID: session})).status_code == 200
        r = await http.post(url, content=body(6, "tools/list"), headers=legacy)
        assert r.status_code == 404
        assert (await http.get(url, headers={**legacy, "Accept": "text/event-stream"})).status_code == 404

    with_endpoint(check)


def test_a_legacy_post_with_a_used_id_is_refused_at_once() -> None:
    """Each POST gets its own answer: a second POST with an id the session used (a copy sent at the same
    moment, a copy after the answer, or another request) gets 400 and -32600 without an id; the first
    keeps its answer. (The session program drops a copy: its POST used to wait for nothing.)"""
    async def check(h: HttpServerHandle, http: httpx.AsyncClient) -> None:
        init = body(1, "initialize", protocolVersion="2025-11-25", capabilities={},
                    clientInfo={"name": "raw", "version": "0"})
        r = await http.post(h.url, content=init, headers=ACCEPT)
        legacy = {**ACCEPT, H.MCP_SESSION_ID: r.headers[H.MCP_SESSION_ID], "MCP-Protocol-Version": "2025-11-25"}
        await http.post(h.url, content=body(None, "notifications/initialized"), headers=legacy)
        call = body(7, "tools/call", name="get_forecast", arguments={"city": "Paris"})
        answers: list[httpx.Response] = []

        async def post(text: str) -> None:
            answers.append(await http.post(h.url, content=text, headers=legacy))

        async with anyio.create_task_group() as tg:
            tg.start_soon(post, call)
            tg.start_soon(post, call)
        await post(call)
        await post(body(7, "tools/list"))
        await post(body(1, "ping"))  # initialize's id is used too
        assert sorted(a.status_code for a in answers) == [200, 400, 400, 400, 400]
        ok = next(a for a in answers if a.status_code == 200)
        assert ok.json()["id"] == 7 and "result" in ok.json()
        for refused in (a for a in answers if a.status_code == 400):
            assert "id" not in refused.json() and refused.json()["error"]["code"] == -32600
        r = await http.post(h.url, content=body(8, "tools/list"), headers=legacy)
        assert r.status_code == 200 and r.json()["id"] == 8

    with_endpoint(check)


def test_a_pinned_legacy_endpoint_refuses_modern_posts() -> None:
    async def check(h: HttpServerHandle, http: httpx.AsyncClient) -> None:
        r = await http.post(h.url, content=body(1, "tools/list", _meta=META), headers=modern_headers("tools/list"))
        assert r.status_code == 400 and r.json()["error"]["code"] != -32020  # not a modern error: legacy
        assert (await http.get(h.url)).status_code == 400

    with_endpoint(check, revision="2025-06-18")


@pytest.mark.parametrize("era", ["legacy", "modern", "auto"])
def test_simulated_client_over_real_http_records_frames(era: str) -> None:
    async def main() -> None:
        with anyio.fail_after(30):
            async with serve_http(build()) as h, connect_real(h.url, era=era) as session:  # type: ignore[arg-type]
                client = session.client
                assert client.era == ("legacy" if era == "legacy" else "modern")
                tools = await client.list_all_tools()
                assert "confirm_delete" in {t["name"] for t in tools}
                result = await client.call_tool("confirm_delete", {"name": "x"})
                assert result["content"][0]["text"] == "deleted x"
                calls = [e for e in session.recorder.events if e.method == "tools/call" and e.kind == "request"]
                if client.era == "modern":  # an MRTR round trip: the retry carries the answers
                    assert len(calls) == 2 and "inputResponses" in calls[1].message["params"]  # type: ignore[index]
                    headers = calls[0].framing["http"]["request"]["headers"]
                    assert headers["Mcp-Method"] == "tools/call" and headers["Mcp-Name"] == "confirm_delete"
                else:  # the server asked mid-call, on the POST's SSE stream
                    asks = [e for e in session.recorder.events if e.method == "elicitation/create"]
                    assert asks[0].framing["http"]["sse"] == {"event": "message"}
                server_side = [e for e in h.recorder.events if e.message is not None]
                assert len(server_side) >= 6 and all(e.transport == "http" for e in server_side)

    anyio.run(main)


def test_sans_io_pieces() -> None:
    parser = SseParser()
    lines = SseEvent('{"a":1}', id="7").encode().split("\n")
    events = [e for e in (parser.feed_line(line) for line in [": ping", *lines]) if e is not None]
    assert len(events) == 1 and events[0].data == '{"a":1}' and events[0].id == "7"
    request = JSONRPCRequest(1, "resources/read", {"uri": "weather://stations", "_meta": META})
    assert H.modern_request_headers(request, "2026-07-28") == {
        "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "resources/read", "Mcp-Name": "weather://stations"}
    assert H.check_modern_headers(httpx.Headers(H.modern_request_headers(request, "2026-07-28")), request) is None
    assert [H.modern_status_for(c) for c in (None, -32601, -32602, -32021, -32022, -32603)] == [200, 404, 400, 400, 400, 200]
    assert origin_allowed(None) and origin_allowed("http://127.0.0.1:9") and origin_allowed("http://[::1]:80")
    assert not origin_allowed("http://localhost.evil.example") and not origin_allowed("null")
    with pytest.raises(ValueError):
        check_loopback("0.0.0.0")
