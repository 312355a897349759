"""Streamable HTTP 2026-07-28: POST only, mirrored headers, status from the JSON-RPC answer,
request-scoped SSE, cancellation by closing the stream, subscriptions/listen."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from test_transport_peers import MODERN, AnsweringServer, MiniClient, modern_params

from mcp_sim.sim.world import Simulation
from mcp_sim.transports import (
    AuthInfo,
    Faults,
    Headers,
    HttpRequest,
    LinkFaults,
    SimulatedHttpServer,
    static_tokens,
)
from mcp_sim.transports.http import (
    check_modern_headers,
    is_modern_version,
    modern_request_headers,
    modern_status_for,
    refuse_content,
)
from mcp_sim.transports.sse import SseEvent, SseParser, comment, parse_sse
from mcp_sim.wire.jsonrpc import (
    JSONRPCErrorResponse,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResultResponse,
    encode,
)

POST_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
                "MCP-Protocol-Version": MODERN}


def run(seed: int, body: Any, **server_options: Any) -> tuple[Simulation, AnsweringServer]:
    sim = Simulation(seed)
    peer = AnsweringServer()

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            server = SimulatedHttpServer(sim, tg, "tools", peer, **server_options)
            await body(sim, tg, server)
            await server.aclose()

    sim.run(main)
    return sim, peer


def exchanges(sim: Simulation) -> list[tuple[str, str, Any]]:
    """(kind, request-or-status, body-or-text) for every HTTP frame."""
    out = []
    for e in sim.recorder:
        http = e.framing.get("http")
        if http is None:
            continue
        if e.sender.startswith("client"):
            out.append((e.kind, f'{http["request"]["method"]} {http["request"]["headers"]}', e.raw or e.text))
        else:
            response = http.get("response") or {}
            out.append((e.kind, f'{response.get("status")} {response.get("headers")}', e.raw or e.text))
    return out


def test_tools_call_carries_method_and_name_headers_and_gets_json() -> None:
    async def body(sim: Simulation, tg: Any, server: SimulatedHttpServer) -> None:
        stream = server.connect("tools")
        client = MiniClient(sim, stream, tg)
        answer = await client.request("tools/call", modern_params({"name": "add", "arguments": {"a": 1}}))
        assert isinstance(answer, JSONRPCResultResponse)
        await stream.aclose()

    sim, peer = run(21, body)
    body_text = ('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1},'
                 '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
                 '"io.modelcontextprotocol/clientCapabilities":{}}}}')
    headers = {**POST_HEADERS, "Mcp-Method": "tools/call", "Mcp-Name": "add"}
    assert exchanges(sim) == [
        ("request", f"POST {headers}", body_text),
        ("response", "200 {'Content-Type': 'application/json'}",
         '{"jsonrpc":"2.0","id":1,"result":{"echo":"tools/call","params":{"name":"add","arguments":{"a":1}}}}'),
    ]
    assert peer.connections == 1


@pytest.mark.parametrize(("method", "params", "header", "value", "reason"), [
    ("tools/list", {}, "Mcp-Method", "tools/call", "Mcp-Method is 'tools/call' but the body's method is 'tools/list'"),
    ("tools/list", {}, "Mcp-Method", None, "the Mcp-Method header is required"),
    ("tools/call", {"name": "add"}, "Mcp-Name", "delete_all", "Mcp-Name is 'delete_all' but params.name is 'add'"),
    ("resources/read", {"uri": "file:///a"}, "Mcp-Name", None, "the Mcp-Name header is required for resources/read"),
    ("tools/list", {}, "MCP-Protocol-Version", None, "the MCP-Protocol-Version header is required"),
    ("tools/list", {}, "MCP-Protocol-Version", "2026-12-01",
     "MCP-Protocol-Version is '2026-12-01' but _meta says '2026-07-28'"),
])
def test_header_mismatch_is_400_with_32020(method: str, params: dict[str, Any], header: str, value: str | None,
                                           reason: str) -> None:
    async def body(sim: Simulation, tg: Any, server: SimulatedHttpServer) -> None:
        stream = server.connect("tools")
        stream.extra_headers[header] = value
        client = MiniClient(sim, stream, tg)
        answer = await client.request(method, modern_params(params))
        assert answer.to_dict() == {"jsonrpc": "2.0", "id": 1, "error": {
            "code": -32020, "message": "Header mismatch", "data": {"reason": reason, "header": header}}}
        await stream.aclose()

    sim, peer = run(22, body)
    status = exchanges(sim)[1][1]
    assert status == "400 {'Content-Type': 'application/json'}"
    assert peer.connections == 0  # answered by the transport; the server program never saw it


@pytest.mark.parametrize(("code", "status"), [(-32601, 404), (-32602, 400), (-32021, 400), (-32022, 400),
                                              (-32603, 200), (-32002, 200)])
def test_status_follows_the_json_rpc_answer(code: int, status: int) -> None:
    async def body(sim: Simulation, tg: Any, server: SimulatedHttpServer) -> None:
        stream = server.connect("tools")
        client = MiniClient(sim, stream, tg)
        answer = await client.request("fail", modern_params({"code": code}))
        assert isinstance(answer, JSONRPCErrorResponse) and answer.error.code == code
        await stream.aclose()

    sim, _ = run(23, body)
    assert exchanges(sim)[1][:2] == ("error", f"{status} {{'Content-Type': 'application/json'}}")


def test_notification_is_202_and_get_delete_are_405() -> None:
    async def body(sim: Simulation, tg: Any, server: SimulatedHttpServer) -> None:
        stream = server.connect("tools")
        await stream.send(JSONRPCNotification("notifications/roots/list_changed", modern_params()))
        await anyio.sleep(0.01)  # let the server program run before the server shuts down
        for method in ("GET", "DELETE"):
            response = await stream.http(HttpRequest(method, "/mcp", Headers({
                "Accept": "text/event-stream", "MCP-Protocol-Version": MODERN})))
            assert (response.status, response.headers.to_dict(), response.body) == (405, {"Allow": "POST"}, None)
        await stream.aclose()

    sim, peer = run(24, body, versions=(MODERN,))
    assert exchanges(sim)[1] == ("transport", "202 {}", "HTTP 202 Accepted")
    assert peer.notifications == ["notifications/roots/list_changed"]


def test_progress_turns_the_answer_into_a_request_scoped_sse_stream() -> None:
    async def body(sim: Simulation, tg: Any, server: SimulatedHttpServer) -> None:
        stream = server.connect("tools")
        client = MiniClient(sim, stream, tg)
        answer = await client.request("progress", modern_params({"steps": 2, "token": "t"}))
        assert answer.to_dict()["result"] == {"done": True}
        assert [n.method for n in client.notifications] == ["notifications/progress"] * 2
        await stream.aclose()

    sim, _ = run(25, body)
    head = "200 {'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no'}"
    assert [(k, s) for k, s, _ in exchanges(sim)[1:]] == [
        ("transport", head), ("notification", head), ("notification", head), ("response", head), ("transport", head)]
    events = [e for e in sim.recorder if "sse" in e.framing]
    assert [e.framing["sse"] for e in events] == [{"event": "message"}] * 3  # no ids: no resumption in 2026


def test_cancellation_is_closing_the_response_stream() -> None:
    async def body(sim: Simulation, tg: Any, server: SimulatedHttpServer) -> None:
        stream = server.connect("tools")
        client = MiniClient(sim, stream, tg)

        async def cancel_later() -> None:
            await anyio.sleep(1.0)
            await stream.send(JSONRPCNotification("notifications/cancelled",
                                                  modern_params({"requestId": 1, "reason": "user pressed stop"})))

        tg.start_soon(cancel_later)
        with pytest.raises(TimeoutError):
            await client.request("progress", modern_params({"steps": 500}), timeout=3.0)
        await stream.aclose()

    sim, peer = run(26, body)
    assert peer.interrupted == [1]
    assert peer.notifications == []  # nothing was POSTed for the cancellation
    posts = [e for e in sim.recorder if e.framing.get("http", {}).get("request", {}).get("method") == "POST"
             and e.sender.startswith("client")]
    assert len(posts) == 1
    texts = [(e.sender, e.text, e.marks) for e in sim.recorder if "cancelled" in e.marks]
    assert texts == [
        ("client/tools", "client closes the response stream of request 1 instead of sending notifications/cancelled "
                         "(2026-07-28: closing the stream is the cancellation)", ("cancelled",)),
        ("server/tools", "the client closed the response stream: the server cancels request 1", ("cancelled",)),
    ]
    timeout = [e for e in sim.recorder if e.kind == "timeout"]
    assert timeout[0].t_ms == 3000.0 and timeout[0].marks == ("timeout",)


def test_subscriptions_listen_is_a_long_lived_stream() -> None:
    async def body(sim: Simulation, tg: Any, server: SimulatedHttpServer) -> None:
        stream = server.connect("tools")
        client = MiniClient(sim, stream, tg)
        await stream.send(JSONRPCRequest("listen-1", "subscriptions/listen",
                                         modern_params({"notifications": {"toolsListChanged": True}})))
        await anyio.sleep(60)
        assert [n.method for n in client.notifications] == ["notifications/subscriptions/acknowledged"]
        assert len(server.calls) == 1  # still open after a simulated minute
        await stream.send(JSONRPCNotification("notifications/cancelled", modern_params({"requestId": "listen-1"})))
        await anyio.sleep(0.01)
        assert len(server.calls) == 0
        await stream.aclose()

    _, peer = run(27, body)
    assert peer.interrupted == ["listen-1"]


def test_session_id_and_last_event_id_are_ignored() -> None:
    async def body(sim: Simulation, tg: Any, server: SimulatedHttpServer) -> None:
        stream = server.connect("tools")
        stream.extra_headers.update({"Mcp-Session-Id": "made-up", "Last-Event-ID": "7-7"})
        client = MiniClient(sim, stream, tg)
        assert isinstance(await client.request("tools/list", modern_params()), JSONRPCResultResponse)
        await stream.aclose()

    sim, _ = run(28, body)
    response = next(e for e in sim.recorder if e.kind == "response")
    assert "Mcp-Session-Id" not in response.framing["http"]["response"]["headers"]


def test_each_post_gets_a_fresh_server_stream_with_the_validated_auth() -> None:
    alice = AuthInfo(subject="alice", scopes=("tools",), token="t-alice")
    bob = AuthInfo(subject="bob", scopes=("tools",), token="t-bob")

    async def body(sim: Simulation, tg: Any, server: SimulatedHttpServer) -> None:
        for token in ("t-alice", "t-bob", "t-alice"):
            stream = server.connect(token=token, origin="https://ide.example")
            client = MiniClient(sim, stream, tg)
            await client.request("tools/list", modern_params())
            await stream.aclose()
        stream = server.connect()
        refused = await stream.http(HttpRequest("POST", "/mcp", Headers({**POST_HEADERS, "Mcp-Method": "tools/list"}),
                                                encode(JSONRPCRequest(1, "tools/list", modern_params()))))
        assert refused.status == 401
        assert refused.headers["www-authenticate"] == (
            'Bearer resource_metadata="https://tools.example/.well-known/oauth-protected-resource/mcp"')
        # the scheme is case-insensitive (RFC 7235 §2.1): "bearer" and "BEARER" carry the token too
        for scheme, status in (("bearer", 200), ("BEARER", 200), ("Basic", 401), ("Bearer", 401)):
            credentials = "" if status == 401 and scheme == "Bearer" else " t-bob"
            answer = await stream.http(HttpRequest("POST", "/mcp", Headers({
                **POST_HEADERS, "Mcp-Method": "tools/list", "Origin": "https://ide.example",
                "Authorization": f"{scheme}{credentials}"}), encode(JSONRPCRequest(2, "tools/list", modern_params()))))
            assert answer.status == status, (scheme, answer.status)
        await stream.aclose()

    _, peer = run(29, body, token_validator=static_tokens({"t-alice": alice, "t-bob": bob}),
                  allowed_origins=("https://ide.example",))
    assert peer.auth == [alice, bob, alice, bob, bob]


def test_a_cut_modern_stream_loses_the_request_and_cancels_the_handler() -> None:
    async def body(sim: Simulation, tg: Any, server: SimulatedHttpServer) -> None:
        stream = server.connect("tools", faults=LinkFaults(to_client=Faults(cut_sse_at=2)))
        client = MiniClient(sim, stream, tg)
        with pytest.raises(TimeoutError):
            await client.request("progress", modern_params({"steps": 5}), timeout=2.0)
        # The session re-issues the request with a new id, as the spec says.
        answer = await client.request("progress", modern_params({"steps": 1}))
        assert isinstance(answer, JSONRPCResultResponse) and answer.id == 2
        await stream.aclose()

    sim, peer = run(30, body)
    assert peer.interrupted == [1]
    lost = next(e for e in sim.recorder if "lost" in e.marks)
    assert lost.text == "the response stream broke and cannot be resumed: request 1 is lost (re-issue it with a new id)"


def test_a_dual_era_server_serves_both_eras_at_once() -> None:
    async def body(sim: Simulation, tg: Any, server: SimulatedHttpServer) -> None:
        legacy = server.connect("old", open_get_stream=False)
        modern = server.connect("new")
        old_client, new_client = MiniClient(sim, legacy, tg), MiniClient(sim, modern, tg)
        await old_client.initialize("2025-06-18")
        assert isinstance(await new_client.request("server/discover", modern_params()), JSONRPCResultResponse)
        assert isinstance(await old_client.request("tools/list"), JSONRPCResultResponse)
        assert legacy.session_id is not None and modern.session_id is None
        await legacy.aclose()
        await modern.aclose()

    _, peer = run(31, body)
    assert sorted(m for _, m, _ in peer.handled) == ["initialize", "server/discover", "tools/list"]


def test_the_shared_rulebook() -> None:
    """The sans-IO rules in mcp_sim.transports.http, which the real wire (mcp_sim.bridge) uses too."""
    task_get = JSONRPCRequest(1, "tasks/get", {"taskId": "t-1", "_meta": {"io.modelcontextprotocol/protocolVersion": MODERN}})
    headers = modern_request_headers(task_get, MODERN)
    assert headers == {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tasks/get", "Mcp-Name": "t-1"}
    assert check_modern_headers(Headers(headers), task_get) is None
    missing = check_modern_headers(Headers({**headers, "Mcp-Name": "t-2"}), task_get)
    assert missing is not None and missing.code == -32020 and missing.data == {
        "reason": "Mcp-Name is 't-2' but params.taskId is 't-1'", "header": "Mcp-Name"}
    assert [modern_status_for(c) for c in (None, -32700, -32600, -32601, -32020, -32603)] == [200, 400, 400, 404, 400, 200]

    def refused(method: str, **headers: str) -> int | None:
        verdict = refuse_content(method, Headers({k.replace("_", "-"): v for k, v in headers.items()}))
        return verdict[0] if verdict is not None else None

    assert refused("POST", Accept="*/*", Content_Type="application/json; charset=utf-8") is None
    assert refused("POST", Content_Type="application/json") == 406  # MCP: the client MUST send Accept
    assert refused("POST", Accept="application/json, text/*") == 415
    assert refused("GET", Accept="application/json") == 406
    assert is_modern_version("2026-07-28") and is_modern_version("2099-01-01") and not is_modern_version("2025-11-25")


def test_one_sse_codec() -> None:
    events = [SseEvent("", "1-1", retry=500), SseEvent('{"a":1}', "1-2"), SseEvent('{"b":2}')]
    text = "".join(e.encode() for e in events) + comment()
    parsed = parse_sse(text)
    assert [(e.data, e.retry) for e in parsed] == [("", 500), ('{"a":1}', None), ('{"b":2}', None)]
    # The last event id carries over to an event without one: it is where a client would resume.
    assert [e.id for e in parsed] == ["1-1", "1-2", "1-2"]
    parser = SseParser()
    assert [parser.feed_line(line) for line in (": ping", "data: x", "")][-1] == SseEvent("x")
