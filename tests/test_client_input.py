"""Client input: legacy server→client requests vs modern InputRequiredResult (MRTR)."""

from __future__ import annotations

from typing import Any

import pytest
from test_client_fakeserver import Ctx, FakeServer, run, text_result

from mcp_sim.protocol.errors import McpError
from mcp_sim.roles.client import Client, ClientCallbacks

ASK_CITY = {"message": "Which city?", "requestedSchema": {"type": "object", "properties": {"city": {"type": "string"}},
                                                          "required": ["city"]}}
ASK_SUMMARY = {"messages": [{"role": "user", "content": {"type": "text", "text": "Summarise: rain"}}],
               "maxTokens": 20}


class HostStub:
    """Stands in for the Host: records what it was asked and answers deterministically."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, str]] = []

    async def elicit(self, server: str, params: dict[str, Any]) -> dict[str, Any]:
        self.asked.append(("elicitation", server))
        if params.get("mode") == "url":
            return {"action": "accept"}
        return {"action": "accept", "content": {"city": "Paris"}}

    async def sample(self, server: str, params: dict[str, Any]) -> dict[str, Any]:
        self.asked.append(("sampling", server))
        return {"role": "assistant", "content": {"type": "text", "text": "Light rain."}, "model": "stub",
                "stopReason": "endTurn"}

    async def roots(self, server: str) -> list[dict[str, Any]]:
        self.asked.append(("roots", server))
        return [{"uri": "file:///project", "name": "project"}]

    def callbacks(self, *, sampling: bool = True, elicitation: bool = True, roots: bool = True,
                  url: bool = True) -> ClientCallbacks:
        return ClientCallbacks(elicitation=self.elicit if elicitation else None, elicitation_url=url,
                               sampling=self.sample if sampling else None, roots=self.roots if roots else None)


# --- legacy: the server sends requests while tools/call is pending --------------------------------

async def legacy_forecast(params: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    await ctx.notify("notifications/message", {"level": "info", "data": "looking up the city"})
    answer = await ctx.ask("elicitation/create", ASK_CITY)
    summary = await ctx.ask("sampling/createMessage", ASK_SUMMARY)
    return text_result(f"{answer['content']['city']}: {summary['content']['text']}")


def test_legacy_elicitation_and_sampling_during_tools_call() -> None:
    host = HostStub()
    logs: list[tuple[str, str]] = []
    callbacks = host.callbacks()
    callbacks.on_notification = lambda server, method, params: logs.append((server, method))
    result, rec = run(FakeServer(era="legacy", handlers={"tools/call": legacy_forecast}),
                      lambda c: c.call_tool("get_forecast", {}), Client(era="legacy", callbacks=callbacks))
    assert result["content"][0]["text"] == "Paris: Light rain."
    assert host.asked == [("elicitation", "weather"), ("sampling", "weather")]
    assert logs == [("weather", "notifications/message")]
    flow = [(e.sender.split("/")[0], e.kind, e.method) for e in rec.events if e.message is not None][3:]
    assert flow == [
        ("client", "request", "tools/call"),
        ("server", "notification", "notifications/message"),
        ("server", "request", "elicitation/create"),
        ("client", "response", "elicitation/create"),
        ("server", "request", "sampling/createMessage"),
        ("client", "response", "sampling/createMessage"),
        ("server", "response", "tools/call"),
    ]
    init = rec.events[0].message["params"]["capabilities"]  # type: ignore[index]
    assert init == {"roots": {"listChanged": True}, "sampling": {}, "elicitation": {"form": {}, "url": {}}}


def test_legacy_undeclared_sampling_is_answered_with_method_not_found() -> None:
    async def asks(params: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
        try:
            await ctx.ask("sampling/createMessage", ASK_SUMMARY)
        except McpError as exc:
            return text_result(f"error {exc.code}")
        return text_result("sampled")

    host = HostStub()
    result, _ = run(FakeServer(era="legacy", handlers={"tools/call": asks}), lambda c: c.call_tool("t", {}),
                    Client(era="legacy", callbacks=host.callbacks(sampling=False)))
    assert result["content"][0]["text"] == "error -32601"
    assert host.asked == []


def test_legacy_url_elicitation_needs_the_url_capability() -> None:
    async def asks(params: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
        try:
            await ctx.ask("elicitation/create", {"mode": "url", "message": "Log in", "url": "https://x.example/login",
                                                 "elicitationId": "e1"})
        except McpError as exc:
            return text_result(f"error {exc.code}")
        return text_result("accepted")

    host = HostStub()
    result, _ = run(FakeServer(era="legacy", handlers={"tools/call": asks}), lambda c: c.call_tool("t", {}),
                    Client(era="legacy", callbacks=host.callbacks(url=False)))
    assert result["content"][0]["text"] == "error -32602"
    result, _ = run(FakeServer(era="legacy", handlers={"tools/call": asks}), lambda c: c.call_tool("t", {}),
                    Client(era="legacy", callbacks=host.callbacks()))
    assert result["content"][0]["text"] == "accepted"


def test_legacy_roots_list() -> None:
    async def asks(params: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
        roots = await ctx.ask("roots/list", {})
        return text_result(roots["roots"][0]["uri"])

    result, _ = run(FakeServer(era="legacy", handlers={"tools/call": asks}), lambda c: c.call_tool("t", {}),
                    Client(era="legacy", callbacks=HostStub().callbacks()))
    assert result["content"][0]["text"] == "file:///project"


# --- modern: InputRequiredResult and the retry ----------------------------------------------------

class MrtrForecast:
    """Round 1 asks for two inputs (elicitation + sampling); round 2 asks once more; round 3 answers."""

    def __init__(self, second_state: bool = True) -> None:
        self.calls: list[dict[str, Any]] = []
        self.second_state = second_state

    async def __call__(self, params: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
        self.calls.append(params)
        state = params.get("requestState")
        if "confirm" in (params.get("inputResponses") or {}):
            return {"resultType": "complete", "content": [{"type": "text", "text": "Paris: light rain"}]}
        if state is None:
            return {"resultType": "input_required", "requestState": "state-1",
                    "inputRequests": {"city": {"method": "elicitation/create", "params": ASK_CITY},
                                      "summary": {"method": "sampling/createMessage", "params": ASK_SUMMARY}}}
        if state == "state-1":
            answer: dict[str, Any] = {"resultType": "input_required",
                                      "inputRequests": {"confirm": {"method": "elicitation/create", "params": {
                                          "message": "Really?", "requestedSchema": {"type": "object", "properties": {
                                              "city": {"type": "string"}}}}}}}
            if self.second_state:
                answer["requestState"] = "state-2"
            return answer
        raise McpError(-32602, "unexpected state")


def test_mrtr_two_input_requests_and_a_second_round() -> None:
    server_tool = MrtrForecast()
    host = HostStub()
    result, rec = run(FakeServer(era="modern", handlers={"tools/call": server_tool}),
                      lambda c: c.call_tool("get_forecast", {"days": 2}), Client(era="modern", callbacks=host.callbacks()))
    assert result["content"][0]["text"] == "Paris: light rain"
    assert host.asked == [("elicitation", "weather"), ("sampling", "weather"), ("elicitation", "weather")]
    calls = [e.message for e in rec.events if e.kind == "request" and e.method == "tools/call"]
    assert [c["id"] for c in calls] == [2, 3, 4]  # type: ignore[index]  # a NEW id for every retry
    first, second, third = (c["params"] for c in calls)  # type: ignore[index]
    for p in (first, second, third):
        assert p["name"] == "get_forecast" and p["arguments"] == {"days": 2}  # the original params
    assert "inputResponses" not in first and "requestState" not in first
    assert second["requestState"] == "state-1"
    assert set(second["inputResponses"]) == {"city", "summary"}
    assert second["inputResponses"]["city"] == {"action": "accept", "content": {"city": "Paris"}}
    assert second["inputResponses"]["summary"]["content"]["text"] == "Light rain."
    assert third["requestState"] == "state-2" and set(third["inputResponses"]) == {"confirm"}


def test_mrtr_sends_no_request_state_when_none_was_given() -> None:
    server_tool = MrtrForecast(second_state=False)
    run(FakeServer(era="modern", handlers={"tools/call": server_tool}), lambda c: c.call_tool("get_forecast", {}),
        Client(era="modern", callbacks=HostStub().callbacks()))
    assert "requestState" not in server_tool.calls[2]
    assert "inputResponses" in server_tool.calls[2]


def test_mrtr_never_fulfils_an_undeclared_kind() -> None:
    server_tool = MrtrForecast()
    host = HostStub()

    async def body(client: Client) -> McpError:
        with pytest.raises(McpError) as info:
            # This request declares only elicitation, but the server also asks for sampling.
            await client.call_tool("get_forecast", {}, capabilities={"elicitation": {}})
        return info.value

    error, rec = run(FakeServer(era="modern", handlers={"tools/call": server_tool}), body,
                     Client(era="modern", callbacks=host.callbacks()))
    assert "summary" in error.message and "sampling" in error.message
    assert ("sampling", "weather") not in host.asked
    assert len(server_tool.calls) == 1  # no retry was sent
    sent_caps = [e.message["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]  # type: ignore[index]
                 for e in rec.events if e.kind == "request" and e.method == "tools/call"]
    assert sent_caps == [{"elicitation": {}}]


def test_mrtr_gives_up_after_a_bounded_number_of_rounds() -> None:
    async def forever(params: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
        return {"resultType": "input_required", "requestState": "again"}

    async def body(client: Client) -> McpError:
        with pytest.raises(McpError) as info:
            await client.call_tool("loop", {})
        return info.value

    error, rec = run(FakeServer(era="modern", handlers={"tools/call": forever}), body,
                     Client(era="modern", max_input_rounds=3))
    assert "gives up after 3 rounds" in error.message
    assert sum(1 for e in rec.events if e.kind == "request" and e.method == "tools/call") == 4


def test_same_story_in_both_eras_asks_the_host_the_same_questions() -> None:
    legacy_host, modern_host = HostStub(), HostStub()
    legacy, _ = run(FakeServer(era="legacy", handlers={"tools/call": legacy_forecast}),
                    lambda c: c.call_tool("get_forecast", {}), Client(era="legacy", callbacks=legacy_host.callbacks()))

    async def modern_forecast(params: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
        responses = params.get("inputResponses")
        if not responses:
            return {"resultType": "input_required",
                    "inputRequests": {"city": {"method": "elicitation/create", "params": ASK_CITY},
                                      "summary": {"method": "sampling/createMessage", "params": ASK_SUMMARY}}}
        return text_result(f"{responses['city']['content']['city']}: {responses['summary']['content']['text']}")

    modern, _ = run(FakeServer(era="modern", handlers={"tools/call": modern_forecast}),
                    lambda c: c.call_tool("get_forecast", {}), Client(era="modern", callbacks=modern_host.callbacks()))
    assert legacy["content"] == modern["content"]
    assert legacy_host.asked == modern_host.asked
