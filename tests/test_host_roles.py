"""The Host: one client per server, aggregation, policy, approvals, model-API schemas, isolation, budgets."""

from __future__ import annotations

import re
from typing import Any

import anyio
import pytest
from test_client_fakeserver import Ctx, FakeServer, text_result

from mcp_sim.roles.host import Host
from mcp_sim.roles.host_tools import (
    HostTool,
    qualify,
    to_anthropic_messages,
    to_anthropic_tools,
    to_openai_messages,
    to_openai_tools,
)
from mcp_sim.roles.model import ChatMessage, ScriptedModel, ToolCall, ToolRule
from mcp_sim.roles.user import CallableApprover, NeverApprove, ScriptedApprover, ScriptedUser
from mcp_sim.scenarios import issues, weather
from mcp_sim.security.host_policy import ApprovalPolicy, SamplingBudget, ToolPolicy
from mcp_sim.sim.world import Simulation

MODEL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def tools_of(*names: str, annotations: dict[str, Any] | None = None) -> Any:
    async def handler(params: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
        return {"tools": [{"name": n, "description": f"{n} tool", "inputSchema": {"type": "object"},
                           **({"annotations": annotations} if annotations else {})} for n in names]}
    return handler


async def echo(params: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    return text_result(f"{params['name']} ran")


def test_qualified_names_are_unique_and_legal_for_model_apis() -> None:
    taken: set[str] = set()
    names = [qualify("git hub", "search", taken), qualify("git_hub", "search", taken),
             qualify("a" * 40, "b" * 40, taken), qualify("weather", "get.forecast", taken)]
    assert len(set(names)) == 4
    assert all(MODEL_NAME.match(n) for n in names)
    assert names[0] == "git_hub__search" and names[1] == "git_hub__search_2"


def test_host_aggregates_tools_from_one_client_per_server() -> None:
    sim = Simulation(0)

    async def main() -> tuple[list[str], list[str]]:
        async with Host() as host:
            await host.add_server("a", FakeServer("a", handlers={"tools/list": tools_of("search", "delete")}))
            await host.add_server("b", FakeServer("b", era="modern", handlers={"tools/list": tools_of("search")}))
            with pytest.raises(ValueError, match="own Client"):
                await host.add_server("a", FakeServer("a"))
            tools = await host.list_tools()
            clients = [id(host.client("a")), id(host.client("b"))]
            assert clients[0] != clients[1]
            host.tool_policy = ToolPolicy(deny=("*__delete",))
            return [t.qualified_name for t in tools], [t.qualified_name for t in host.visible_tools()]

    names, visible = sim.run(main)
    assert names == ["a__search", "a__delete", "b__search"]
    assert visible == ["a__search", "b__search"]


def test_model_api_schemas() -> None:
    tool = HostTool("weather", {"name": "get_forecast", "description": "Forecast",
                                "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}},
                    "weather__get_forecast")
    spec = tool.spec()
    assert to_openai_tools([spec]) == [{"type": "function", "function": {
        "name": "weather__get_forecast", "description": "Forecast",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]
    assert to_anthropic_tools([spec]) == [{"name": "weather__get_forecast", "description": "Forecast",
                                           "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}]
    conversation = [ChatMessage("user", "weather?"),
                    ChatMessage("assistant", tool_calls=(ToolCall("call_1", "weather__get_forecast", {"city": "Oslo"}),)),
                    ChatMessage("tool", "Oslo: rain", tool_call_id="call_1")]
    openai = to_openai_messages(conversation)
    assert openai[1]["tool_calls"][0]["function"] == {"name": "weather__get_forecast", "arguments": '{"city": "Oslo"}'}
    assert openai[2] == {"role": "tool", "tool_call_id": "call_1", "content": "Oslo: rain"}
    anthropic = to_anthropic_messages(conversation)
    assert anthropic[1]["content"] == [{"type": "tool_use", "id": "call_1", "name": "weather__get_forecast",
                                        "input": {"city": "Oslo"}}]
    assert anthropic[2]["content"][0]["type"] == "tool_result" and anthropic[2]["content"][0]["tool_use_id"] == "call_1"


def _tool(server: str, annotations: dict[str, Any]) -> HostTool:
    return HostTool(server, {"name": "t", "annotations": annotations}, f"{server}__t")


def test_approval_policy_treats_annotations_as_hints() -> None:
    untrusted = ApprovalPolicy(mode="unless-read-only")
    trusted = ApprovalPolicy(mode="unless-read-only", trusted_servers=frozenset({"weather"}))
    read_only = {"readOnlyHint": True}
    assert untrusted.reasons(_tool("weather", read_only))        # an untrusted hint does not skip approval
    assert trusted.reasons(_tool("weather", read_only)) == ()    # the policy says: trust weather's hints
    assert trusted.reasons(_tool("weather", {"readOnlyHint": True, "destructiveHint": True}))
    lax = ApprovalPolicy(mode="destructive-only", trusted_servers=frozenset({"issues"}))
    assert "destructive" in lax.reasons(_tool("issues", {"destructiveHint": True}))
    assert lax.reasons(_tool("issues", {"readOnlyHint": False, "destructiveHint": False})) == ()
    # No annotations: destructiveHint defaults to true for a tool that is not read-only.
    assert lax.reasons(_tool("issues", {}))
    assert "policy: always ask" in ApprovalPolicy().reasons(_tool("weather", read_only))


def test_denied_call_never_reaches_the_server() -> None:
    sim = Simulation(0)
    server = FakeServer("issues", handlers={"tools/list": tools_of("delete_issue", annotations={"destructiveHint": True}),
                                            "tools/call": echo})

    async def main() -> dict[str, Any]:
        async with Host(approver=NeverApprove()) as host:
            await host.add_server("issues", server)
            await host.list_tools()
            return await host.call_tool("issues__delete_issue", {"number": 1})

    result = sim.run(main)
    assert result["isError"] is True and "did not approve" in result["content"][0]["text"]
    assert not any(m.get("method") == "tools/call" for m in server.received)
    texts = [e.text for e in sim.recorder.events if e.kind == "app"]
    assert any("destructive" in (t or "") for t in texts) and "deny" in texts


def test_destructive_tools_are_asked_about_even_in_the_laxest_mode() -> None:
    sim = Simulation(0)
    approver = ScriptedApprover([True, True])

    async def main() -> None:
        policy = ApprovalPolicy(mode="destructive-only", trusted_servers=frozenset({"issues"}))
        async with Host(approver=approver, approval_policy=policy) as host:
            await host.add_server("issues", issues.build())
            await host.list_tools()
            await host.call_tool("issues__search_issues", {"query": "login"})
            await host.call_tool("issues__delete_issue", {"number": 1})

    sim.run(main)
    assert [r.tool for r in approver.asked] == ["delete_issue"]


def test_a_crashing_server_leaves_the_others_working() -> None:
    sim = Simulation(0)
    crashy = FakeServer("crashy", handlers={"tools/list": tools_of("boom")}, crash_on="tools/call")
    steady = FakeServer("steady", handlers={"tools/list": tools_of("echo"), "tools/call": echo})

    async def main() -> tuple[dict[str, Any], dict[str, Any], list[str], str | None]:
        async with Host(approver=CallableApprover(lambda r: True)) as host:
            await host.add_server("crashy", crashy)
            await host.add_server("steady", steady)
            await host.list_tools()
            crashed = await host.call_tool("crashy__boom", {})
            fine = await host.call_tool("steady__echo", {})
            names = [t.qualified_name for t in await host.list_tools()]
            return crashed, fine, names, host.servers["crashy"].error

    crashed, fine, names, error = sim.run(main)
    assert crashed["isError"] and "could not run boom" in crashed["content"][0]["text"]
    assert fine == text_result("echo ran")
    assert names == ["steady__echo"] and error is not None
    assert any("crash" in e.marks for e in sim.recorder.events)


def test_a_hanging_server_times_out_while_the_others_answer() -> None:
    sim = Simulation(0)
    hanging = FakeServer("hanging", silent=frozenset({"tools/list"}))
    steady = FakeServer("steady", handlers={"tools/list": tools_of("echo")})

    async def main() -> tuple[list[str], float]:
        async with Host(timeout=5) as host:
            await host.add_server("hanging", hanging)
            await host.add_server("steady", steady)
            names = [t.qualified_name for t in await host.list_tools()]
            return names, sim.now()

    names, now = sim.run(main)
    assert names == ["steady__echo"]
    assert now == pytest.approx(5.0)
    assert any(e.kind == "timeout" and e.link == "hanging" for e in sim.recorder.events)
    assert any(e.method == "notifications/cancelled" and e.link == "hanging" for e in sim.recorder.events)


def test_sampling_budget_is_enforced() -> None:
    sim = Simulation(0)

    async def sampler(params: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
        out = []
        for _ in range(3):
            try:
                r = await ctx.ask("sampling/createMessage", {"messages": [
                    {"role": "user", "content": {"type": "text", "text": "say hello"}}], "maxTokens": 50})
                out.append(r["content"]["text"])
            except Exception as exc:
                out.append(f"refused: {exc}")
        return text_result(" | ".join(out))

    server = FakeServer("s", handlers={"tools/list": tools_of("t"), "tools/call": sampler})

    async def main() -> str:
        async with Host(model=ScriptedModel(), approver=CallableApprover(lambda r: True),
                        sampling_budget=SamplingBudget(max_calls=2)) as host:
            await host.add_server("s", server, era="legacy")
            await host.list_tools()
            result = await host.call_tool("s__t", {})
            return str(result["content"][0]["text"])

    text = sim.run(main)
    parts = text.split(" | ")
    assert parts[0].startswith("(summary)") and parts[1].startswith("(summary)")
    assert "budget is exhausted" in parts[2]


def test_host_records_user_host_model_lifelines_and_elicitation() -> None:
    sim = Simulation(0)
    model = ScriptedModel([ToolRule(r"weather in (?P<city>\w+)", "get_forecast", {"city": "{city}"},
                                    answer="Forecast: {result}")])

    async def main() -> str:
        async with Host(model=model, user=ScriptedUser(approvals=[True])) as host:
            await host.add_server("weather", weather.build(), revision="2026-07-28")
            return await host.chat("What's the weather in Oslo?")

    answer = sim.run(main)
    assert answer.startswith("Forecast: Oslo: day 1:")
    participants = {p for e in sim.recorder.events if e.kind == "app" for p in (e.sender, e.receiver)}
    assert {"user", "host", "model", "client/weather"} <= participants
    to_model = next(e for e in sim.recorder.events if e.kind == "app" and e.receiver == "model")
    assert to_model.message is not None and to_model.message["tools"][0]["type"] == "function"


def test_policy_hides_tools_from_the_model_and_refuses_hidden_calls() -> None:
    sim = Simulation(0)

    async def main() -> tuple[list[dict[str, Any]], dict[str, Any]]:
        async with Host(tool_policy=ToolPolicy(allow=("issues__search_*",)), model_api="anthropic") as host:
            await host.add_server("issues", issues.build())
            await host.list_tools()
            return host.model_tools(), await host.call_tool("issues__delete_issue", {"number": 1})

    tools, refused = sim.run(main)
    assert [t["name"] for t in tools] == ["issues__search_issues"] and "input_schema" in tools[0]
    assert refused["isError"] and "policy" in refused["content"][0]["text"]


def test_each_client_runs_in_its_own_task() -> None:
    """A slow server does not hold up the others: calls to different servers overlap in time."""
    sim = Simulation(0)

    async def slow(params: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
        await anyio.sleep(3)
        return text_result("slow done")

    async def main() -> float:
        async with Host(approver=CallableApprover(lambda r: True)) as host:
            await host.add_server("x", FakeServer("x", handlers={"tools/list": tools_of("t"), "tools/call": slow}))
            await host.add_server("y", FakeServer("y", handlers={"tools/list": tools_of("t"), "tools/call": slow}))
            await host.list_tools()
            start = sim.now()
            async with anyio.create_task_group() as tg:
                tg.start_soon(host.call_tool, "x__t", {})
                tg.start_soon(host.call_tool, "y__t", {})
            return sim.now() - start

    assert sim.run(main) == pytest.approx(3.0)


def test_a_server_whose_connection_never_opened_is_not_asked_anything() -> None:
    """A modern-only client meets a legacy-only server: ``server/discover`` fails, the connection never
    opens, and the Host reports the server unavailable without sending it ``tools/list`` (a request on a
    connection that never opened is refused by the server's lifecycle)."""
    from mcp_sim.scenarios.complete_call import run_complete_call

    run = run_complete_call("version-mismatch", revision="2026-07-28")
    sent = [e.method for e in run.recorder.events if e.kind == "request"]
    assert sent == ["server/discover"]
    assert any("is unavailable" in (e.text or "") for e in run.recorder.events)
