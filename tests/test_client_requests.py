"""Requests in flight: correlation, timeouts and cancellation, ignored responses, progress, SessionExpired."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from test_client_fakeserver import Ctx, FakeServer, run, text_result

from mcp_sim.protocol.errors import McpError
from mcp_sim.roles.client import Client, RequestTimeout
from mcp_sim.sim.world import Simulation
from mcp_sim.transports.base import SessionExpired
from mcp_sim.transports.memory import memory_link
from mcp_sim.wire.jsonrpc import JSONRPCMessage, JSONRPCResultResponse, RequestId


async def slow_echo(params: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    args = params["arguments"]
    await anyio.sleep(args["delay"])
    return text_result(f"done {args['n']}")


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_many_requests_in_flight_are_matched_by_id(era: str) -> None:
    async def body(client: Client) -> list[str]:
        out: dict[int, str] = {}

        async def one(n: int) -> None:
            result = await client.call_tool("echo", {"n": n, "delay": 5 - n})
            out[n] = result["content"][0]["text"]

        async with anyio.create_task_group() as tg:
            for n in range(5):
                tg.start_soon(one, n)
        return [out[n] for n in range(5)]

    answers, rec = run(FakeServer(era=era, handlers={"tools/call": slow_echo}), body, Client(era=era))
    assert answers == [f"done {n}" for n in range(5)]
    responses = [e.message["id"] for e in rec.events if e.kind == "response" and e.method == "tools/call"]  # type: ignore[index]
    assert responses == sorted(responses, reverse=True)  # answered in the reverse order of sending


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_timeout_sends_cancelled_and_the_late_response_is_ignored(era: str) -> None:
    server = FakeServer(era=era, handlers={"tools/call": slow_echo})

    async def body(client: Client) -> tuple[RequestTimeout, list[Any]]:
        with pytest.raises(RequestTimeout) as info:
            await client.call_tool("echo", {"n": 1, "delay": 10}, timeout=2)
        await anyio.sleep(20)  # the server answers at t+10 s: late
        return info.value, list(client.ignored)

    (timeout, ignored), rec = run(server, body, Client(era=era))
    rid = timeout.request_id
    assert server.cancelled == [rid]
    assert ignored == [("late", rid)]
    kinds = [(e.kind, e.method) for e in rec.events if e.request_id == rid or e.method == "notifications/cancelled"]
    assert kinds == [("request", "tools/call"), ("timeout", "tools/call"), ("notification", "notifications/cancelled"),
                     ("response", "tools/call"), ("transport", None)]
    late = [e for e in rec.events if "late" in e.marks]
    assert late and "ignores the late response" in (late[0].text or "")
    cancel = next(e for e in rec.events if e.method == "notifications/cancelled").message
    assert cancel["params"]["requestId"] == rid  # type: ignore[index]


def test_duplicate_and_unknown_responses_are_ignored_visibly() -> None:
    async def twice(params: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
        await ctx.stream.send(JSONRPCResultResponse(ctx.request_id, text_result("first")))
        await ctx.stream.send(JSONRPCResultResponse(9999, text_result("never asked")))
        return text_result("second")

    async def body(client: Client) -> tuple[str, list[Any]]:
        result = await client.call_tool("twice", {})
        await anyio.sleep(1)
        return result["content"][0]["text"], list(client.ignored)

    (text, ignored), rec = run(FakeServer(era="legacy", handlers={"tools/call": twice}), body, Client(era="legacy"))
    assert text == "first"
    assert [why for why, _ in ignored] == ["unknown", "duplicate"]
    assert sum(1 for e in rec.events if "ignored" in e.marks) == 2


def test_progress_notifications_reach_the_callback() -> None:
    async def working(params: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
        token = params["_meta"]["progressToken"]
        for step in (1, 2, 3):
            await anyio.sleep(1)
            await ctx.notify("notifications/progress", {"progressToken": token, "progress": step, "total": 3,
                                                        "message": f"step {step}"})
        return text_result("ok")

    async def body(client: Client) -> list[tuple[Any, ...]]:
        seen: list[tuple[Any, ...]] = []
        await client.call_tool("work", {}, on_progress=lambda p, t, m: seen.append((p, t, m)))
        return seen

    for era in ("legacy", "modern"):
        seen, _ = run(FakeServer(era=era, handlers={"tools/call": working}), body, Client(era=era))
        assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


def test_server_error_becomes_mcp_error() -> None:
    async def failing(params: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
        raise McpError(-32602, "Unknown tool: nope")

    async def body(client: Client) -> McpError:
        with pytest.raises(McpError) as info:
            await client.call_tool("nope", {})
        return info.value

    error, _ = run(FakeServer(era="legacy", handlers={"tools/call": failing}), body, Client(era="legacy"))
    assert error.code == -32602 and error.message == "Unknown tool: nope"


class ExpiringStream:
    """Wraps the client's end of a link; the ``expire_at``-th send raises SessionExpired, as legacy
    Streamable HTTP does when the server answers 404 for the session id."""

    def __init__(self, inner: Any, expire_at: int) -> None:
        self.inner = inner
        self.info = inner.info
        self.auth = None
        self.sends = 0
        self.expire_at = expire_at

    @property
    def revision(self) -> str | None:
        return self.inner.revision  # type: ignore[no-any-return]

    @revision.setter
    def revision(self, value: str | None) -> None:
        self.inner.revision = value

    async def send(self, message: JSONRPCMessage, *, related_request_id: RequestId | None = None) -> None:
        self.sends += 1
        if self.sends == self.expire_at:
            raise SessionExpired("404 Not Found: the session has expired")
        await self.inner.send(message, related_request_id=related_request_id)

    async def receive(self) -> Any:
        return await self.inner.receive()

    async def aclose(self) -> None:
        await self.inner.aclose()


def test_legacy_session_expired_reinitializes_and_retries() -> None:
    sim = Simulation(0)
    server = FakeServer(era="legacy", handlers={"tools/call": slow_echo})

    async def main() -> str:
        c_end, s_end = memory_link(sim, "weather")
        async with anyio.create_task_group() as tg:
            tg.start_soon(server, s_end)
            client = Client(era="legacy")
            await client.connect(ExpiringStream(c_end, expire_at=3), tg)  # 1 initialize, 2 initialized
            result = await client.call_tool("echo", {"n": 7, "delay": 0})
            await client.close()
        return str(result["content"][0]["text"])

    assert sim.run(main) == "done 7"
    assert [m.get("method") for m in server.received] == [
        "initialize", "notifications/initialized", "initialize", "notifications/initialized", "tools/call"]
    assert any("session-expired" in e.marks for e in sim.recorder.events)
