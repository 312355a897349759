"""The simulator's client against real peers over the real wire: loopback HTTP servers that refuse,
real stdio servers pinned to older revisions, task-augmented tool calls, and elicitation answers
that keep to the requested schema."""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_fidelity import _check_trace

from mcp_sim.bridge.real import connect_real
from mcp_sim.protocol.schema import find_spec_dir
from mcp_sim.transports.base import RequestRefused

# --- 1. an HTTP layer that refuses: one request, one clear error -------------------------------------


class Refusing:
    """A loopback HTTP server that answers every request with ``status`` and an OAuth-style JSON body
    (not a JSON-RPC message), counting what it was sent."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        self.status = status
        self.body = json.dumps(body).encode()
        self.requests: list[tuple[str, bytes]] = []

    @contextmanager
    def running(self) -> Iterator[str]:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                outer.requests.append((self.command, self.rfile.read(length) if length else b""))
                self.send_response(outer.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(outer.body)))
                if outer.status == 401:
                    self.send_header("WWW-Authenticate", 'Bearer error="invalid_token"')
                self.end_headers()
                self.wfile.write(outer.body)

            do_POST = do_GET = do_DELETE = _answer

            def log_message(self, format: str, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}/mcp"
        finally:
            server.shutdown()
            server.server_close()

    @property
    def posts(self) -> list[dict[str, Any]]:
        return [json.loads(body) for command, body in self.requests if command == "POST"]


def leaves(group: BaseExceptionGroup[Any]) -> list[Any]:
    """The exceptions inside a (nested) exception group."""
    out: list[Any] = []
    for exc in group.exceptions:
        out.extend(leaves(exc) if isinstance(exc, BaseExceptionGroup) else [exc])
    return out


REFUSALS = [
    (401, {"error": "invalid_token", "error_description": "the token expired"}, "HTTP 401: invalid_token"),
    (403, {"error": "insufficient_scope"}, "HTTP 403: insufficient_scope"),
    (500, {"message": "upstream unavailable"}, "HTTP 500: upstream unavailable"),
]


@pytest.mark.parametrize("era", ["auto", "legacy", "modern"])
@pytest.mark.parametrize(("status", "body", "said"), REFUSALS)
def test_an_http_refusal_is_one_request_and_one_clear_error(era: str, status: int, body: dict[str, Any],
                                                            said: str) -> None:
    refusing = Refusing(status, body)

    caught: list[RequestRefused] = []

    async def main() -> None:
        with anyio.fail_after(60):
            try:
                async with connect_real(url, era=era, probe_timeout=30.0):  # type: ignore[arg-type]
                    pass
            except* RequestRefused as group:
                caught.extend(leaves(group))

    with refusing.running() as url:
        started = time.monotonic()
        anyio.run(main)
        took = time.monotonic() - started
    assert len(caught) == 1 and said in str(caught[0]) and caught[0].status == status
    first = {"auto": "server/discover", "modern": "server/discover", "legacy": "initialize"}[era]
    assert [m.get("method") for m in refusing.posts] == [first]  # exactly one request, never answered
    assert took < 30.0  # the probe did not wait out its 30 s


# --- 2. older revisions: accepted, and kept to -------------------------------------------------------


def client_messages(events: list[Any]) -> list[dict[str, Any]]:
    return [e.message for e in events if e.message is not None and e.sender.startswith("client/")]


@pytest.mark.parametrize("revision", ["2024-11-05", "2025-03-26"])
def test_a_server_pinned_to_an_older_revision_is_accepted_and_its_rules_kept(revision: str) -> None:
    """``mcp-sim serve --revision`` over a real pipe answers ``initialize`` with an older revision: the
    client accepts it, declares only what that revision defines (no elicitation before 2025-06-18), so
    the server never asks, and every message the client sends is valid for that revision's schema."""
    from sim_server import env_with_tests, serve_argv

    from mcp_sim.protocol.schema import schema_errors

    seen: dict[str, Any] = {}

    async def main() -> None:
        with anyio.fail_after(30):
            async with connect_real(serve_argv("--revision", revision), env=env_with_tests(),
                                    probe_timeout=5.0) as session:
                client = session.client
                seen["version"] = client.protocol_version
                seen["era"] = client.era
                seen["tools"] = {t["name"] for t in await client.list_all_tools()}
                seen["forecast"] = await client.call_tool("get_forecast", {"city": "Oslo"})
                seen["confirm"] = await client.call_tool("confirm_delete", {"name": "draft"})
        seen["events"] = list(session.recorder.events)

    anyio.run(main)
    assert (seen["era"], seen["version"]) == ("legacy", revision)
    assert {"get_forecast", "confirm_delete"} <= seen["tools"]
    assert "Oslo" in seen["forecast"]["content"][0]["text"]
    sent = client_messages(seen["events"])
    initialize = next(m for m in sent if m.get("method") == "initialize")
    assert initialize["params"]["protocolVersion"] == "2025-11-25"  # offered: the newest; answered: older
    # After negotiation the client keeps to the older revision: it has no elicitation, so the user is
    # never asked and no ElicitResult goes back, whatever the server tries.
    assert not any("action" in (m.get("result") or {}) for m in sent)
    assert "kept draft" in seen["confirm"]["content"][0]["text"] or seen["confirm"].get("isError")
    if find_spec_dir() is not None:
        for message in sent:
            if message.get("method") in ("server/discover", "initialize"):
                continue  # the probe (2026-07-28 by design) and the offer (the newest legacy revision)
            assert schema_errors(message, revision, "JSONRPCMessage") == [], message


# --- 4. elicitation answers keep to the requested schema ---------------------------------------------

SIGN_UP = {"type": "object",
           "properties": {"name": {"type": "string"},
                          "email": {"type": "string", "format": "email"},
                          "website": {"type": "string", "format": "uri"},
                          "born": {"type": "string", "format": "date"},
                          "plan": {"type": "string", "enum": ["free", "pro"]},
                          "seats": {"type": "integer", "minimum": 1, "maximum": 10}},
           "required": ["name", "email"]}


def build_forms() -> Any:
    """A server whose one tool asks for a sign-up form with format fields (served by the tests below)."""
    from mcp_sim.capabilities.context import Context
    from mcp_sim.roles.server import Server

    server = Server("forms")

    @server.tool()
    async def sign_up(ctx: Context) -> str:
        """Sign the user up (asks for their details)."""
        answer = await ctx.elicit("Your details, please", SIGN_UP)
        return f"{answer.get('action')}: {sorted((answer.get('content') or {}).items())}"

    return server


def test_placeholders_are_honest_and_always_valid() -> None:
    from mcp_sim.roles.client.elicitation import checked_answer, content_errors, placeholder_content

    assert placeholder_content(SIGN_UP) is None  # a required e-mail has no honest placeholder
    optional_formats = {**SIGN_UP, "required": ["name"]}
    filled = placeholder_content(optional_formats)
    assert filled == {"name": "", "plan": "free", "seats": 1} and content_errors(optional_formats, filled) == []
    titled = {"type": "object", "properties": {"c": {"type": "string", "oneOf": [{"const": "r", "title": "Red"}]},
                                               "ok": {"type": "boolean", "default": False}}}
    assert placeholder_content(titled) == {"c": "r", "ok": False}
    bad = {"name": "Ada", "email": "", "website": "not a uri", "born": "10/12/1815", "seats": 0}
    problems = content_errors(SIGN_UP, bad)
    assert [p.split(":")[0] for p in problems] == ["born", "email", "seats", "website"]
    good = {"name": "Ada", "email": "ada@example.org", "website": "https://example.org/ada", "born": "1815-12-10"}
    assert content_errors(SIGN_UP, good) == []
    params = {"message": "?", "requestedSchema": SIGN_UP}
    assert checked_answer(params, {"action": "accept", "content": bad}) == ({"action": "decline"}, problems)
    assert checked_answer(params, {"action": "accept", "content": good})[0]["action"] == "accept"
    assert checked_answer(params, {"action": "cancel"}) == ({"action": "cancel"}, [])


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_elicitation_answers_over_the_real_wire_fit_the_schema_or_decline(era: str) -> None:
    """Against ``mcp-sim serve`` over a real pipe: the default host declines a form it cannot fill
    honestly; given content is sent when valid; a Host answering invalid content is turned into a
    decline by the client itself, and the trace says why."""
    from sim_server import env_with_tests, serve_argv

    from mcp_sim.bridge.real import accept_elicitation
    from mcp_sim.roles.client import ClientCallbacks

    async def careless(server: str, params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"name": "Ada", "email": "", "born": ""}}

    good = {"name": "Ada", "email": "ada@example.org", "born": "1815-12-10"}
    hosts = {"default": accept_elicitation(), "given": accept_elicitation(good),
             "given-bad": accept_elicitation({"name": "Ada", "email": "ada"}),
             "careless": ClientCallbacks(elicitation=careless)}
    said: dict[str, str] = {}

    async def main() -> None:
        with anyio.fail_after(60):
            async with connect_real(serve_argv(server="test_client_realwire:build_forms"), env=env_with_tests(),
                                    era=era, callbacks=hosts["default"]) as session:  # type: ignore[arg-type]
                for host, callbacks in hosts.items():  # one server; the Host's answers change between calls
                    session.client.callbacks = callbacks
                    result = await session.client.call_tool("sign_up", {})
                    said[host] = result["content"][0]["text"]
        said["notes"] = "\n".join(e.text or "" for e in session.recorder.events if "declines instead" in (e.text or ""))

    anyio.run(main)
    assert said["default"].startswith("decline")
    assert said["given"].startswith("accept") and "ada@example.org" in said["given"]
    assert said["given-bad"].startswith("decline")
    assert said["careless"].startswith("decline")
    assert said["notes"].count("declines instead") == 1 and "email" in said["notes"] and "born" in said["notes"]


# --- 3. task-augmented tool calls ---------------------------------------------------------------------

EXT = "io.modelcontextprotocol/tasks"


def build_jobs(poll_ms: int = 1000) -> Any:
    """Tools that run as tasks: one must, one may and asks the user on the way, one never ends."""
    from mcp_sim.capabilities.context import Context
    from mcp_sim.roles.server import Server

    server = Server("jobs", task_poll_interval_ms=poll_ms)

    @server.tool(task_support="required")
    async def batch(n: int, ctx: Context) -> str:
        """Only as a task: counts to n, a second a step."""
        for _ in range(n):
            await ctx.sleep(1)
        return f"batch of {n} done"

    @server.tool(task_support="optional")
    async def approve(ctx: Context) -> str:
        """Waits for the user's approval inside the task."""
        await ctx.sleep(1)
        answer = await ctx.elicit("Approve?", {"type": "object", "properties": {"ok": {"type": "boolean"}},
                                               "required": ["ok"]})
        return f"approved={(answer.get('content') or {}).get('ok')}"

    @server.tool(task_support="optional")
    async def forever(ctx: Context) -> str:
        """Never ends on its own."""
        await ctx.sleep(10_000)
        return "never"

    return server


def build_fast_jobs() -> Any:
    """:func:`build_jobs` asking for polls every 50 ms (for real processes on a real clock)."""
    return build_jobs(poll_ms=50)


def sim_tasks(era: str, body: Any) -> tuple[Any, list[Any]]:
    """Run ``body(client)`` against :func:`build_jobs` on a simulated memory link (virtual clock)."""
    from mcp_sim.bridge.real import accept_elicitation
    from mcp_sim.roles.client import Client
    from mcp_sim.roles.server_session import serve
    from mcp_sim.sim.world import Simulation
    from mcp_sim.transports.memory import memory_link

    sim = Simulation(0)

    async def main() -> Any:
        client_end, server_end = memory_link(sim, "jobs")
        async with anyio.create_task_group() as tg:
            tg.start_soon(serve, build_jobs(), server_end)
            client = Client(era=era, callbacks=accept_elicitation({"ok": True}), sim=sim)  # type: ignore[arg-type]
            async with client.connected_to(client_end):
                out = await body(client)
            tg.cancel_scope.cancel()
        return out

    out = sim.run(main)
    events = list(sim.recorder.events)
    if find_spec_dir() is not None:  # every message of the story is valid for its revision's schema
        assert _check_trace(events, "2025-11-25" if era == "legacy" else "2026-07-28") > 0
    return out, events


def methods_sent(events: list[Any]) -> list[str]:
    return [e.message["method"] for e in events if e.message is not None and e.sender.startswith("client/")
            and "method" in e.message and "id" in e.message]


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_tool_that_requires_a_task_is_called_as_one_and_polled(era: str) -> None:
    """2025-11-25: the listing says the tool requires a task, so ``call_tool`` makes one. 2026-07-28:
    the server answers ``-32021`` naming the tasks extension; the caller asks for a task."""
    from mcp_sim.protocol.errors import McpError

    async def body(client: Any) -> Any:
        await client.list_tools()
        if client.era == "legacy":
            return await client.call_tool("batch", {"n": 3})
        with pytest.raises(McpError) as refused:
            await client.call_tool("batch", {"n": 3})
        assert refused.value.code == -32021 and EXT in str(refused.value.data)
        return await client.call_tool("batch", {"n": 3}, task=True)

    result, events = sim_tasks(era, body)
    assert result["content"][0]["text"] == "batch of 3 done"
    sent = methods_sent(events)
    polls = sent.count("tasks/get")
    assert 2 <= polls <= 4  # every pollInterval (1 s) over a 3 s task, not a storm
    if era == "legacy":
        call = next(e.message for e in events if e.message and e.message.get("method") == "tools/call")
        assert call["params"]["task"] == {} and sent[-1] == "tasks/result"
    else:  # the server asked for the extension (-32021); the caller called again, declaring it
        calls = [e.message for e in events if e.message and e.message.get("method") == "tools/call"]
        assert len(calls) == 2
        assert EXT not in (calls[0]["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
                           .get("extensions") or {})
        assert EXT in calls[1]["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"]
        assert "tasks/result" not in sent


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_task_that_asks_for_input_gets_it_and_finishes(era: str) -> None:
    async def body(client: Any) -> Any:
        return await client.call_tool("approve", {}, task=True)

    result, events = sim_tasks(era, body)
    assert result["content"][0]["text"] == "approved=True"
    if era == "modern":
        assert "tasks/update" in methods_sent(events)


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_task_past_its_deadline_is_cancelled(era: str) -> None:
    from mcp_sim.roles.client import TaskTimeout

    async def body(client: Any) -> Any:
        with pytest.raises(TaskTimeout) as caught:
            await client.call_tool_as_task("forever", {}, task_timeout=5)
        return caught.value

    timeout, events = sim_tasks(era, body)
    assert timeout.task_id == "task-1"
    sent = methods_sent(events)
    assert sent[-1] == "tasks/cancel" and 3 <= sent.count("tasks/get") <= 5


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_tasks_over_a_real_pipe(era: str) -> None:
    """``mcp-sim serve`` over real stdio, both eras: a required task is called, polled and finished."""
    from sim_server import env_with_tests, serve_argv

    seen: dict[str, Any] = {}

    async def main() -> None:
        with anyio.fail_after(90):
            async with connect_real(serve_argv(server="test_client_realwire:build_fast_jobs"), env=env_with_tests(),
                                    era=era) as session:  # type: ignore[arg-type]
                await session.client.list_tools()
                seen["result"] = await session.client.call_tool("batch", {"n": 1}, task=True if era == "modern" else None)
        seen["sent"] = methods_sent(list(session.recorder.events))

    anyio.run(main)
    assert seen["result"]["content"][0]["text"] == "batch of 1 done"
    assert "tasks/get" in seen["sent"]


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_tasks_over_real_http_finish(era: str) -> None:
    """The real HTTP endpoint of ``mcp-sim serve``: a 2026-07-28 POST's session used to be cancelled
    as soon as the POST was answered, killing the task it had started; now the task finishes and
    later POSTs (``tasks/get``) see it end."""
    from mcp_sim.bridge.http_server import serve_http

    seen: dict[str, Any] = {}

    async def main() -> None:
        with anyio.fail_after(60):
            async with serve_http(build_fast_jobs()) as handle, \
                    connect_real(handle.url, era=era) as session:  # type: ignore[arg-type]
                await session.client.list_tools()
                seen["result"] = await session.client.call_tool("batch", {"n": 1}, task=True if era == "modern" else None)
        seen["sent"] = methods_sent(list(session.recorder.events))

    anyio.run(main)
    assert seen["result"]["content"][0]["text"] == "batch of 1 done"
    assert "tasks/get" in seen["sent"]


BATCHING_SERVER = r'''
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("method") == "initialize":
        out = {"jsonrpc": "2.0", "id": msg["id"], "result": {"protocolVersion": sys.argv[1],
               "capabilities": {"tools": {}, "logging": {}}, "serverInfo": {"name": "batcher", "version": "1"}}}
    elif msg.get("method") == "tools/list":
        out = [{"jsonrpc": "2.0", "method": "notifications/message",
                "params": {"level": "info", "data": "listing tools"}},
               {"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": []}}]
    elif "id" in msg and "method" in msg:
        out = {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "Method not found"}}
    else:
        continue
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
'''


@pytest.mark.parametrize("revision", ["2025-03-26", "2025-06-18"])
def test_a_batch_is_read_only_in_the_revision_that_allowed_it(revision: str, tmp_path: Path) -> None:
    """A real stdio server answers ``tools/list`` with a JSON-RPC batch (a log notification and the
    response). 2025-03-26 allowed batches and required receivers to accept them: the client reads
    both. In 2025-06-18 a batch is one invalid message: the client does not take the response from it."""
    from mcp_sim.roles.client import RequestTimeout

    script = tmp_path / "batcher.py"
    script.write_text(BATCHING_SERVER)
    seen: dict[str, Any] = {}
    logs: list[str] = []

    async def main() -> None:
        from mcp_sim.roles.client import ClientCallbacks

        callbacks = ClientCallbacks(on_notification=lambda server, method, params: logs.append(method))
        with anyio.fail_after(60):
            async with connect_real([sys.executable, str(script), revision], era="legacy", callbacks=callbacks,
                                    timeout=30.0) as session:
                try:
                    wait = 20.0 if revision == "2025-03-26" else 3.0  # the other never comes
                    seen["tools"] = await session.client.request("tools/list", timeout=wait)
                except RequestTimeout:
                    seen["tools"] = None

    anyio.run(main)
    if revision == "2025-03-26":
        assert seen["tools"] == {"tools": []} and logs == ["notifications/message"]
    else:
        assert seen["tools"] is None and logs == []


# --- 5. the real HTTP endpoint: bearer tokens ---------------------------------------------------------


@pytest.mark.parametrize("era", ["auto", "legacy", "modern"])
def test_bearer_tokens_on_the_real_endpoint_and_the_clients_one_clear_error(era: str) -> None:
    """``serve_http`` with a token validator answers like the simulated endpoint: 401 without a
    valid token, 403 without the scope, the call served with both. The client sends exactly one
    request per refusal and reports the status and the OAuth error."""
    from sim_server import build

    from mcp_sim.bridge.http_server import serve_http
    from mcp_sim.security.identity import AuthInfo
    from mcp_sim.transports.http_server import static_tokens

    tokens = static_tokens({"good": AuthInfo("ada", scopes=("mcp",)), "narrow": AuthInfo("bob", scopes=())})
    outcomes: dict[str | None, str] = {}
    refusals: list[str] = []

    async def attempt(url: str, token: str | None) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token is not None else None
        try:
            async with connect_real(url, era=era, headers=headers, probe_timeout=30.0) as session:  # type: ignore[arg-type]
                tools = await session.client.list_all_tools()
                outcomes[token] = f"ok: {len(tools)} tools"
        except* RequestRefused as group:
            outcomes[token] = str(leaves(group)[0])

    async def main() -> None:
        with anyio.fail_after(60):
            async with serve_http(build(), token_validator=tokens, required_scopes=("mcp",)) as handle:
                for token in (None, "forged", "narrow", "good"):
                    await attempt(handle.url, token)
                refusals.extend(e.text or "" for e in handle.recorder.events if "bearer token" in (e.text or ""))

    anyio.run(main)
    assert "HTTP 401" in outcomes[None]
    assert "HTTP 401: invalid_token" in outcomes["forged"]
    assert "HTTP 403: insufficient_scope" in outcomes["narrow"]
    assert outcomes["good"].startswith("ok")
    assert len(refusals) == 3  # one request per refused connection: no retries, no answers


def build_dynamic() -> Any:
    """A server whose one tool says its tool list changed."""
    from mcp_sim.capabilities.context import Context
    from mcp_sim.capabilities.subscriptions import Change
    from mcp_sim.roles.server import Server

    server = Server("dyn")

    @server.tool()
    async def poke(ctx: Context) -> str:
        """Announce that the tools changed."""
        ctx.server.notify_change(Change("tools"))
        return "poked"

    return server


def test_listen_over_real_http_and_closing_the_stream_cancels_it() -> None:
    """``subscriptions/listen`` on the real endpoint: the acknowledgement and a change arrive on the
    POST's stream; closing the subscription hangs that POST up (no ``notifications/cancelled`` is
    POSTed in 2026-07-28) and the server sees the cancellation."""
    from mcp_sim.bridge.http_server import serve_http

    seen: dict[str, Any] = {}

    async def main() -> None:
        with anyio.fail_after(60):
            async with serve_http(build_dynamic()) as handle:
                async with connect_real(handle.url, era="modern") as session:
                    sub = await session.client.listen({"toolsListChanged": True})
                    await session.client.call_tool("poke", {})
                    with anyio.fail_after(20):
                        while not sub.received:
                            await anyio.sleep(0.05)
                    await sub.close()
                    with anyio.fail_after(20):
                        while not any("closed the stream" in (e.text or "") for e in handle.recorder.events):
                            await anyio.sleep(0.05)
                seen["accepted"] = sub.accepted
                seen["received"] = [method for method, _ in sub.received]
                seen["client"] = list(session.recorder.events)

    anyio.run(main)
    assert seen["accepted"] == {"toolsListChanged": True}
    assert seen["received"] == ["notifications/tools/list_changed"]
    sent = [e.message.get("method") for e in seen["client"] if e.message is not None and e.sender.startswith("client/")]
    assert "notifications/cancelled" not in sent


def build_steps() -> Any:
    """A server whose tool reports progress between slow steps (its answer is an SSE stream)."""
    from mcp_sim.capabilities.context import Context
    from mcp_sim.roles.server import Server

    server = Server("steps")

    @server.tool()
    async def steps(n: int, ctx: Context) -> str:
        """Work in n steps, reporting each."""
        for k in range(n):
            await ctx.sleep(0.3)
            await ctx.report_progress(k + 1, n)
        return f"{n} steps done"

    return server


def test_a_legacy_stream_cut_mid_way_is_resumed_with_last_event_id() -> None:
    """The real endpoint keeps a legacy POST's SSE events (ids ``<stream>-<n>``); when the client's
    connection breaks, the request runs on, and a GET with ``Last-Event-ID`` delivers what was missed
    and then the rest, up to the response. An unknown id gets 400."""
    import httpx

    from mcp_sim.bridge.http_server import serve_http
    from mcp_sim.transports.sse import SseParser

    accept = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    seen: dict[str, Any] = {}

    def events_of(lines: list[str]) -> list[Any]:
        parser, out = SseParser(), []
        for line in lines:
            event = parser.feed_line(line)
            if event is not None and event.data.strip():
                out.append(event)
        return out

    async def main() -> None:
        with anyio.fail_after(60):
            async with serve_http(build_steps()) as handle, httpx.AsyncClient(timeout=20) as http:
                init = await http.post(handle.url, headers=accept, json={
                    "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                        "protocolVersion": "2025-11-25", "capabilities": {},
                        "clientInfo": {"name": "cutter", "version": "1"}}})
                session = {**accept, "Mcp-Session-Id": init.headers["mcp-session-id"],
                           "MCP-Protocol-Version": "2025-11-25"}
                await http.post(handle.url, headers=session,
                                json={"jsonrpc": "2.0", "method": "notifications/initialized"})
                first: list[str] = []
                async with http.stream("POST", handle.url, headers=session, json={
                        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
                        "params": {"name": "steps", "arguments": {"n": 4}, "_meta": {"progressToken": "p"}}}) as r:
                    async for line in r.aiter_lines():
                        first.append(line)
                        if events_of(first):
                            break  # hang up after the first event: the connection breaks
                cut = events_of(first)
                seen["first"] = [(e.id, e.data) for e in cut]
                resumed = await http.get(handle.url, headers={**session, "Accept": "text/event-stream",
                                                              "Last-Event-ID": cut[-1].id})
                seen["rest"] = [(e.id, e.data) for e in events_of(resumed.text.splitlines())]
                bad = await http.get(handle.url, headers={**session, "Accept": "text/event-stream",
                                                          "Last-Event-ID": "99-1"})
                seen["bad"] = bad.status_code

    anyio.run(main)
    (first_id, first_data), = seen["first"]
    stream = first_id.split("-")[0]
    assert first_id == f"{stream}-1" and json.loads(first_data)["params"]["progress"] == 1
    ids = [i for i, _ in seen["rest"]]
    assert ids == [f"{stream}-{n}" for n in range(2, 6)]  # progress 2..4, then the response: none lost
    messages = [json.loads(d) for _, d in seen["rest"]]
    assert [m["params"]["progress"] for m in messages[:-1]] == [2, 3, 4]
    assert messages[-1]["id"] == 2 and messages[-1]["result"]["content"][0]["text"] == "4 steps done"
    assert seen["bad"] == 400


# --- bounded loops -------------------------------------------------------------------------------------


class Recording:
    """A client stream that records what the client sends and never receives anything."""

    def __init__(self, expire_on: str | None = None) -> None:
        from mcp_sim.transports.base import LinkInfo

        self.info = LinkInfo(name="peer", transport="memory", client="client/peer", server="server/peer")
        self.revision: str | None = None
        self.auth = None
        self.sent: list[Any] = []
        self.expire_on = expire_on

    async def send(self, message: Any, *, related_request_id: Any = None) -> None:
        from mcp_sim.transports.base import SessionExpired
        from mcp_sim.wire.jsonrpc import JSONRPCRequest, JSONRPCResultResponse

        self.sent.append(message)
        if isinstance(message, JSONRPCRequest) and message.method == self.expire_on:
            raise SessionExpired("404: the session has expired")
        if isinstance(message, JSONRPCRequest) and message.method == "initialize":
            reply = JSONRPCResultResponse(message.id, {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                                                       "serverInfo": {"name": "peer", "version": "1"}})
            self._client._on_response(reply)  # answer the handshake at once

    async def receive(self) -> Any:
        await anyio.sleep_forever()

    async def aclose(self) -> None:
        pass


def test_unreadable_frames_are_answered_a_bounded_number_of_times() -> None:
    """A peer that answers every error with another unreadable frame cannot keep a legacy client
    answering for ever: past MAX_INVALID_REPLIES the client stops answering and says so."""
    from mcp_sim.roles.client import Client
    from mcp_sim.roles.client.connection import MAX_INVALID_REPLIES
    from mcp_sim.wire.jsonrpc import PARSE_ERROR, InvalidMessage, JSONRPCErrorResponse, error_object

    stream = Recording()

    async def main() -> None:
        client = Client(era="legacy")
        stream._client = client  # type: ignore[attr-defined]
        async with anyio.create_task_group() as tg:
            await client.connect(stream, tg)  # type: ignore[arg-type]
            reply = JSONRPCErrorResponse(None, error_object(PARSE_ERROR))
            for _ in range(MAX_INVALID_REPLIES + 30):
                client._dispatch(InvalidMessage("{", reply, "not JSON"), tg)
            await anyio.sleep(0.1)
            await client.close()

    anyio.run(main)
    answers = [m for m in stream.sent if isinstance(m, JSONRPCErrorResponse)]
    assert len(answers) == MAX_INVALID_REPLIES


def test_a_server_that_ends_every_session_is_not_reinitialized_for_ever() -> None:
    from mcp_sim.roles.client import Client
    from mcp_sim.roles.client.client_input import MAX_SESSION_RENEWALS
    from mcp_sim.transports.base import SessionExpired

    stream = Recording(expire_on="tools/list")

    async def main() -> None:
        client = Client(era="legacy")
        stream._client = client  # type: ignore[attr-defined]
        async with anyio.create_task_group() as tg:
            await client.connect(stream, tg)  # type: ignore[arg-type]
            with pytest.raises(SessionExpired):
                await client.list_tools()
            await client.close()

    anyio.run(main)
    methods = [getattr(m, "method", None) for m in stream.sent]
    assert methods.count("initialize") == 1 + MAX_SESSION_RENEWALS
    assert methods.count("tools/list") == 1 + MAX_SESSION_RENEWALS


def test_the_real_client_resumes_a_broken_legacy_stream() -> None:
    """The connection of a legacy POST's SSE answer is cut after its first event (an ASGI wrapper
    around the real endpoint raises on the second write, and the socket closes mid-body). The real
    client asks again with ``GET`` + ``Last-Event-ID`` and gets every progress notification and the
    result, as if nothing had happened."""
    import socket

    import uvicorn

    from mcp_sim.bridge.http_server import StreamableHTTPEndpoint

    endpoint = StreamableHTTPEndpoint(build_steps())
    inner = endpoint.app("/mcp")
    cut = [False]

    async def cutting(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or cut[0]:
            await inner(scope, receive, send)
            return
        events = [0]

        async def send_then_cut(message: Any) -> None:
            if message["type"] == "http.response.body" and b"data:" in message.get("body", b""):
                events[0] += 1
                if events[0] == 2:
                    cut[0] = True
                    raise OSError("the test cuts the connection")
            await send(message)

        await inner(scope, receive, send_then_cut)

    progress: list[float] = []
    seen: dict[str, Any] = {}

    async def main() -> None:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        userver = uvicorn.Server(uvicorn.Config(cutting, log_level="critical", access_log=False, lifespan="on"))
        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:
                tg.start_soon(userver.serve, [sock])
                while not userver.started:
                    await anyio.sleep(0.01)
                async with connect_real(f"http://127.0.0.1:{port}/mcp", era="legacy") as session:
                    seen["result"] = await session.client.call_tool(
                        "steps", {"n": 4}, on_progress=lambda p, total, message: progress.append(p))
                seen["events"] = [e.text or "" for e in session.recorder.events]
                userver.should_exit = True

    anyio.run(main)
    assert cut[0]
    assert seen["result"]["content"][0]["text"] == "4 steps done"
    assert progress == [1, 2, 3, 4]
    assert any("GET with Last-Event-ID" in text for text in seen["events"])
