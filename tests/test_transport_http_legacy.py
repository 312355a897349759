"""Legacy Streamable HTTP (2025-03-26 … 2025-11-25): sessions, headers, status codes, SSE streams,
the GET stream, resumption, Origin and bearer tokens."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from test_transport_peers import AnsweringServer, MiniClient

from mcp_sim.sim.world import Simulation
from mcp_sim.transports import (
    AuthInfo,
    Faults,
    Headers,
    HttpClientStream,
    HttpRequest,
    HttpStatusError,
    LinkFaults,
    SessionExpired,
    SimulatedHttpServer,
    open_link,
    static_tokens,
)
from mcp_sim.wire.jsonrpc import JSONRPCNotification, JSONRPCRequest, JSONRPCResultResponse

LEGACY = "2025-11-25"


def http_log(sim: Simulation) -> list[dict[str, Any]]:
    """The HTTP-level story: one entry per recorded frame."""
    out = []
    for e in sim.recorder:
        http = e.framing.get("http")
        if http is None:
            continue
        entry: dict[str, Any] = {"kind": e.kind, "from": e.sender.split("/")[0]}
        if e.sender.startswith("client"):
            entry["request"] = f'{http["request"]["method"]} {http["request"]["headers"]}'
        else:
            response = http.get("response")
            entry["status"] = response["status"] if response else None
        if "sse" in e.framing:
            entry["sse"] = e.framing["sse"]
        if e.raw is not None:
            entry["raw"] = e.raw
        elif e.text is not None:
            entry["text"] = e.text
        out.append(entry)
    return out


def run(seed: int, body: Any, **server_options: Any) -> tuple[Simulation, AnsweringServer]:
    sim = Simulation(seed)
    peer = AnsweringServer()

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            server = SimulatedHttpServer(sim, tg, "notes", peer, **server_options)
            await body(sim, tg, server)
            await server.aclose()

    sim.run(main)
    return sim, peer


def test_initialize_issues_a_session_id_and_later_requests_carry_it() -> None:
    seen: dict[str, Any] = {}

    async def body(sim: Simulation, tg: Any, server: SimulatedHttpServer) -> None:
        stream = server.connect("notes")
        client = MiniClient(sim, stream, tg)
        answer = await client.initialize(LEGACY)
        assert isinstance(answer, JSONRPCResultResponse)
        await client.request("tools/list")
        seen["session"] = stream.session_id
        seen["version"] = stream.protocol_version
        await stream.aclose()

    sim, peer = run(11, body)
    sid = seen["session"]
    assert sid is not None and len(sid) == 32 and all(0x21 <= ord(c) <= 0x7E for c in sid)
    assert seen["version"] == LEGACY
    post = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    after = {**post, "Mcp-Session-Id": sid, "MCP-Protocol-Version": LEGACY}
    get = {"Accept": "text/event-stream", "Mcp-Session-Id": sid, "MCP-Protocol-Version": LEGACY}
    sse_head = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
    log = http_log(sim)
    assert log[0] == {"kind": "request", "from": "client", "request": f"POST {post}",
                      "raw": '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
                             '"capabilities":{},"clientInfo":{"name":"mini","version":"1"}}}'}
    assert log[1] == {"kind": "transport", "from": "server", "status": 200,
                      "text": "HTTP 200 OK: text/event-stream (SSE stream opened)"}
    assert log[2] == {"kind": "transport", "from": "server", "status": 200, "sse": {"id": "1-1", "event": "message"},
                      "text": "SSE priming event (id 1-1)"}
    assert log[3]["kind"] == "response" and log[3]["sse"] == {"id": "1-2", "event": "message"}
    assert log[3]["raw"].startswith('{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"')
    assert log[4] == {"kind": "transport", "from": "server", "status": 200, "text": "server closes the SSE stream"}
    assert log[5] == {"kind": "notification", "from": "client", "request": f"POST {after}",
                      "raw": '{"jsonrpc":"2.0","method":"notifications/initialized"}'}
    assert log[6] == {"kind": "transport", "from": "server", "status": 202, "text": "HTTP 202 Accepted"}
    assert {"kind": "transport", "from": "client", "request": f"GET {get}", "text": "GET /mcp"} in log
    response_heads = [e.framing["http"]["response"] for e in sim.recorder
                      if e.kind == "response" and "http" in e.framing]
    assert response_heads[0]["headers"] == {**sse_head, "Mcp-Session-Id": sid}
    assert log[-2] == {"kind": "transport", "from": "client",
                       "request": f"DELETE { {'Accept': post['Accept'], 'Mcp-Session-Id': sid, 'MCP-Protocol-Version': LEGACY} }",
                       "text": "DELETE /mcp"}
    assert log[-1] == {"kind": "transport", "from": "server", "status": 200, "text": "HTTP 200 OK"}
    assert peer.connections == 1


def test_missing_session_id_is_400_and_unknown_is_404_then_reinitialize() -> None:
    async def body(sim: Simulation, tg: Any, server: SimulatedHttpServer) -> None:
        stream = server.connect("notes", open_get_stream=False)
        client = MiniClient(sim, stream, tg)
        await client.initialize(LEGACY)
        first = stream.session_id
        assert first is not None

        stream.extra_headers["Mcp-Session-Id"] = None  # break the rule: leave the header out
        with pytest.raises(HttpStatusError) as refused:
            await stream.send(JSONRPCRequest(50, "tools/list"))
        assert refused.value.status == 400
        assert refused.value.response.json() == {
            "jsonrpc": "2.0", "error": {"code": -32600,
                                        "message": "Bad Request: Mcp-Session-Id header is required after initialization"}}
        del stream.extra_headers["Mcp-Session-Id"]

        server.expire_session(first)
        with pytest.raises(SessionExpired):
            await client.request("tools/list")
        assert stream.session_id is None
        with pytest.raises(SessionExpired):  # until the client starts over
            await stream.send(JSONRPCRequest(51, "tools/list"))
        await client.initialize(LEGACY)  # initialize (without a session id) starts over
        assert stream.session_id not in (None, first)
        assert isinstance(await client.request("tools/list"), JSONRPCResultResponse)
        await stream.aclose()

    sim, peer = run(12, body)
    statuses = [e.framing["http"]["response"]["status"] for e in sim.recorder
                if e.sender.startswith("server") and "response" in e.framing.get("http", {})]
    assert 400 in statuses and 404 in statuses
    assert peer.connections == 2


def test_protocol_version_header_is_checked() -> None:
    async def body(sim: Simulation, tg: Any, server: SimulatedHttpServer) -> None:
        stream = server.connect("notes", open_get_stream=False)
        client = MiniClient(sim, stream, tg)
        await client.initialize(LEGACY)
        stream.extra_headers["MCP-Protocol-Version"] = "1999-01-01"
        with pytest.raises(HttpStatusError) as refused:
            await stream.send(JSONRPCRequest(60, "tools/list"))
        assert (refused.value.status, refused.value.response.json()["error"]["message"]) == (
            400, "Bad Request: Unsupported protocol version: 1999-01-01")
        stream.extra_headers["MCP-Protocol-Version"] = None  # absent → the server assumes 2025-03-26
        with pytest.raises(HttpStatusError) as refused:
            await stream.send(JSONRPCRequest(61, "tools/list"))
        assert refused.value.response.json()["error"]["message"] == (
            "Bad Request: Unsupported protocol version: 2025-03-26")
        await stream.aclose()

    run(13, body, versions=("2025-06-18", "2025-11-25"))


def test_delete_ends_the_session() -> None:
    async def body(sim: Simulation, tg: Any, server: SimulatedHttpServer) -> None:
        stream = server.connect("notes", open_get_stream=False)
        client = MiniClient(sim, stream, tg)
        await client.initialize(LEGACY)
        sid = stream.session_id
        assert sid is not None
        headers = Headers({"Mcp-Session-Id": sid, "MCP-Protocol-Version": LEGACY})
        response = await stream.http(HttpRequest("DELETE", "/mcp", headers))
        assert (response.status, response.body) == (200, None)
        again = await stream.http(HttpRequest("DELETE", "/mcp", headers))
        assert again.status == 404
        with pytest.raises(SessionExpired):
            await client.request("tools/list")
        await stream.aclose()

    _, peer = run(14, body)
    assert peer.connections == 1


def test_get_stream_can_be_disabled_with_405() -> None:
    async def body(sim: Simulation, tg: Any, server: SimulatedHttpServer) -> None:
        stream = server.connect("notes", open_get_stream=False)
        client = MiniClient(sim, stream, tg)
        await client.initialize(LEGACY)
        assert stream.session_id is not None
        response = await stream.http(HttpRequest("GET", "/mcp", Headers({
            "Accept": "text/event-stream", "Mcp-Session-Id": stream.session_id, "MCP-Protocol-Version": LEGACY})))
        assert (response.status, response.headers.to_dict()) == (405, {"Allow": "POST, DELETE"})
        await stream.aclose()

    run(15, body, get_stream=False)


def test_related_messages_ride_the_post_stream_and_others_the_get_stream() -> None:
    async def body(sim: Simulation, tg: Any, server: SimulatedHttpServer) -> None:
        stream = server.connect("notes")
        client = MiniClient(sim, stream, tg)
        await client.initialize(LEGACY)
        await anyio.sleep(0.1)  # let the GET stream open
        answer = await client.request("ask")
        assert answer.to_dict()["result"] == {"client said": {"role": "assistant", "content": "hi"}}
        await client.request("announce")
        await anyio.sleep(0.1)
        assert [n.method for n in client.notifications] == ["notifications/tools/list_changed"]
        await stream.aclose()

    sim, _ = run(16, body)
    sampling = next(e for e in sim.recorder if e.method == "sampling/createMessage" and e.kind == "request")
    assert sampling.framing["http"]["request"]["method"] == "POST"  # on the POST's SSE stream
    assert sampling.framing["sse"] == {"id": "2-2", "event": "message"}
    reply = next(e for e in sim.recorder if e.kind == "response" and e.method == "sampling/createMessage")
    assert reply.sender == "client/notes" and reply.framing["http"]["request"]["method"] == "POST"
    assert next(e for e in sim.recorder if e.kind == "transport" and e.sender == "server/notes"
                and e.text == "HTTP 202 Accepted" and e.seq > reply.seq)
    changed = next(e for e in sim.recorder if e.method == "notifications/tools/list_changed")
    assert changed.framing["http"]["request"]["method"] == "GET"  # on the GET stream
    assert changed.framing["sse"]["id"].startswith("0-")


def test_a_cut_stream_is_resumed_with_last_event_id() -> None:
    async def body(sim: Simulation, tg: Any, server: SimulatedHttpServer) -> None:
        stream = server.connect("notes", open_get_stream=False,
                                faults=LinkFaults(to_client=Faults(cut_sse_at=3)))
        client = MiniClient(sim, stream, tg)
        await client.initialize(LEGACY)  # SSE message event 1: the result (priming events are not counted)
        answer = await client.request("progress", {"steps": 3, "token": "p"})  # event 3 = progress 2: cut
        assert answer.to_dict()["result"] == {"done": True}
        assert [n.to_dict()["params"]["progress"] for n in client.notifications] == [1, 2, 3]
        await stream.aclose()

    sim, _ = run(17, body, sse_retry_ms=250)
    cut = next(e for e in sim.recorder if "cut" in e.marks)
    assert cut.framing["sse"] == {"id": "2-3", "event": "message"}
    resume = next(e for e in sim.recorder if e.framing.get("http", {}).get("request", {}).get("method") == "GET")
    assert resume.text == "GET /mcp (Last-Event-ID: 2-2)"
    assert resume.t_ms - cut.t_ms == 250.0  # the retry the priming event asked for
    replayed = [(e.framing["sse"]["id"], e.kind) for e in sim.recorder if "replayed" in e.marks]
    assert replayed == [("2-3", "notification"), ("2-4", "notification"), ("2-5", "response")]


def test_json_response_mode_answers_with_one_json_body() -> None:
    async def body(sim: Simulation, tg: Any, server: SimulatedHttpServer) -> None:
        stream = server.connect("notes", open_get_stream=False)
        client = MiniClient(sim, stream, tg)
        await client.initialize(LEGACY)
        await client.request("tools/list")
        await stream.aclose()

    sim, _ = run(18, body, response_mode="json")
    responses = [e for e in sim.recorder if e.kind == "response"]
    assert [r.framing["http"]["response"]["status"] for r in responses] == [200, 200]
    assert responses[0].framing["http"]["response"]["headers"]["Content-Type"] == "application/json"
    assert "Mcp-Session-Id" in responses[0].framing["http"]["response"]["headers"]
    assert "sse" not in responses[1].framing


def test_origin_and_bearer_tokens() -> None:
    alice = AuthInfo(subject="alice", scopes=("notes:read",), token="tok-alice")
    mallory = AuthInfo(subject="mallory", scopes=(), token="tok-mallory")
    bob = AuthInfo(subject="bob", scopes=("notes:read",), token="tok-bob")
    validator = static_tokens({"tok-alice": alice, "tok-mallory": mallory, "tok-bob": bob})
    meta = 'resource_metadata="https://notes.example/.well-known/oauth-protected-resource/mcp"'

    async def body(sim: Simulation, tg: Any, server: SimulatedHttpServer) -> None:
        def attempt(**kw: Any) -> HttpClientStream:
            return server.connect(open_get_stream=False, **kw)

        init = JSONRPCRequest(1, "initialize", {"protocolVersion": LEGACY, "capabilities": {}})
        outcomes = {}
        for label, kw in {"evil origin": {"origin": "https://evil.example", "token": "tok-alice"},
                          "no token": {"origin": "https://app.example"},
                          "bad token": {"token": "forged"},
                          "no scope": {"token": "tok-mallory"}}.items():
            with pytest.raises(HttpStatusError) as refused:
                await attempt(**kw).send(init)
            outcomes[label] = (refused.value.status, refused.value.response.headers.get("WWW-Authenticate"))
        assert outcomes == {
            "evil origin": (403, None),
            "no token": (401, f"Bearer {meta}"),
            "bad token": (401, f'Bearer error="invalid_token", {meta}'),
            "no scope": (403, f'Bearer error="insufficient_scope", scope="notes:read", {meta}'),
        }
        stream = attempt(token="tok-alice", origin="https://app.example")
        client = MiniClient(sim, stream, tg)
        await client.initialize(LEGACY)
        # A session is bound to its user: Bob cannot ride Alice's session id.
        stream.token = "tok-bob"
        with pytest.raises(SessionExpired):
            await client.request("tools/list")
        await stream.aclose()

    _, peer = run(19, body, allowed_origins=("https://app.example",), token_validator=validator,
                  required_scopes=("notes:read",))
    assert peer.auth == [AuthInfo(subject="alice", scopes=("notes:read",), token="tok-alice")]


def test_open_link_http_shares_one_server() -> None:
    sim = Simulation(20)
    peer = AnsweringServer()

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            first = await open_link(sim, tg, "shared", peer, transport="http", open_get_stream=False)
            second = await open_link(sim, tg, "shared#2", None, transport="http", http_server=first.server,
                                     open_get_stream=False)
            for stream in (first, second):
                client = MiniClient(sim, stream, tg)
                await client.initialize(LEGACY)
            assert first.session_id != second.session_id
            await stream.send(JSONRPCNotification("notifications/roots/list_changed"))
            await first.aclose()
            await second.aclose()

    sim.run(main)
    assert peer.connections == 2


@pytest.mark.parametrize(("version", "sends_header"), [("2025-03-26", False), ("2025-06-18", True)])
def test_the_version_header_arrived_with_2025_06_18(version: str, sends_header: bool) -> None:
    """A 2025-03-26 client has a session but no ``MCP-Protocol-Version`` header: it came with 2025-06-18."""
    async def body(sim: Simulation, tg: Any, server: SimulatedHttpServer) -> None:
        stream = server.connect("notes")
        client = MiniClient(sim, stream, tg)
        assert isinstance(await client.initialize(version), JSONRPCResultResponse)
        await client.request("tools/list")
        await stream.aclose()

    sim, _ = run(5, body)
    requests = [e.framing["http"]["request"]["headers"] for e in sim.recorder
                if e.sender.startswith("client") and "http" in e.framing]
    with_session = [h for h in requests if "Mcp-Session-Id" in h]
    assert len(with_session) >= 3  # initialized, tools/list, GET stream and/or DELETE
    assert all(("MCP-Protocol-Version" in h) is sends_header for h in with_session)
    if sends_header:
        assert all(h["MCP-Protocol-Version"] == version for h in with_session)


def test_a_used_request_id_is_refused_with_400_and_the_first_post_keeps_its_answer() -> None:
    """Every legacy POST gets its own answer: a second POST with an id the session used (a client bug)
    is refused at once — it used to overwrite the first POST's place, leaving one of the two waiting."""

    async def body(sim: Simulation, tg: Any, server: SimulatedHttpServer) -> None:
        stream = server.connect("notes", open_get_stream=False)
        client = MiniClient(sim, stream, tg)
        await client.initialize(LEGACY)
        answer = await client.request("tools/list", request_id=7)
        assert isinstance(answer, JSONRPCResultResponse)
        for method in ("tools/list", "ping"):  # the same request again, and another request with id 7
            with pytest.raises(HttpStatusError) as refused:
                await stream.send(JSONRPCRequest(7, method))
            assert refused.value.status == 400
            body_ = refused.value.response.json()
            assert "id" not in body_ and body_["error"]["code"] == -32600
            assert body_["error"]["data"] == {"requestId": 7, "method": method}
        assert isinstance(await client.request("tools/list", request_id=8), JSONRPCResultResponse)
        await stream.aclose()

    run(13, body)
