"""Item 1: declaring a server from plain Python — schemas, descriptions, structured output."""

from __future__ import annotations

from typing import Annotated, TypedDict

from pydantic import BaseModel, Field
from test_server_support import MODERN, assert_valid, meta, run_with

from mcp_sim.capabilities.context import Context
from mcp_sim.roles.server import Server


def small_server() -> Server:
    # The docstring example: one tool, one resource, one prompt in under 15 lines.
    server = Server("weather", version="1.0.0")

    @server.tool(annotations={"readOnlyHint": True})
    def get_forecast(city: str, days: int = 1) -> str:
        """Forecast for a city."""
        return f"{city}: sunny for {days} day(s)"

    @server.resource("weather://stations", mime_type="application/json")
    def stations() -> list[str]:
        return ["Lisbon", "Oslo"]

    @server.prompt()
    def plan_trip(destination: str) -> str:
        return f"Plan a trip to {destination}, checking the forecast first."

    return server


def test_docstring_example_is_in_the_module_docstring() -> None:
    import mcp_sim.roles.server as module

    assert "def get_forecast(city: str, days: int = 1) -> str:" in (module.__doc__ or "")


def test_small_server_lists_exact_tool_in_each_revision() -> None:
    server = small_server()
    tool = server.tools["get_forecast"]
    expected = {
        "name": "get_forecast",
        "description": "Forecast for a city.",
        "inputSchema": {"type": "object",
                        "properties": {"city": {"type": "string"}, "days": {"default": 1, "type": "integer"}},
                        "required": ["city"]},
        "annotations": {"readOnlyHint": True},
    }
    for revision in ("2025-06-18", "2025-11-25", MODERN):
        assert tool.to_json(revision) == expected
        assert_valid(expected, revision, "Tool")


def test_context_parameter_is_not_in_schema_and_async_works() -> None:
    server = Server("s")

    @server.tool()
    async def whoami(greeting: str, ctx: Context) -> str:
        """Say who is calling."""
        return f"{greeting} {ctx.revision} {ctx.request_id}"

    assert server.tools["whoami"].input_schema["properties"] == {"greeting": {"type": "string"}}

    async def body(c):  # type: ignore[no-untyped-def]
        return await c.request("tools/call", {"name": "whoami", "arguments": {"greeting": "hi"}, "_meta": meta()},
                               id="r1")

    reply = run_with(server, body)
    assert reply["result"]["content"] == [{"type": "text", "text": f"hi {MODERN} r1"}]


class Forecast(TypedDict):
    city: str
    high_c: int


class Station(BaseModel):
    name: str
    altitude_m: float = 0.0


def test_structured_output_from_typeddict_and_model() -> None:
    server = Server("s")

    @server.tool(title="Forecast", icons=[{"src": "https://example.com/sun.png", "mimeType": "image/png"}])
    def forecast(city: Annotated[str, Field(description="City name")]) -> Forecast:
        """Structured forecast."""
        return {"city": city, "high_c": 21}

    @server.tool()
    def station(name: str) -> Station:
        """A station."""
        return Station(name=name)

    tool = server.tools["forecast"]
    assert tool.output_schema == {"type": "object", "properties": {"city": {"type": "string"},
                                                                   "high_c": {"type": "integer"}},
                                  "required": ["city", "high_c"]}
    assert tool.input_schema["properties"]["city"] == {"description": "City name", "type": "string"}
    # icons exist from 2025-11-25 on; title and outputSchema from 2025-06-18.
    assert "icons" not in tool.to_json("2025-06-18") and "title" in tool.to_json("2025-06-18")
    assert tool.to_json("2025-11-25")["icons"] == [{"src": "https://example.com/sun.png", "mimeType": "image/png"}]
    for revision in ("2025-06-18", "2025-11-25", MODERN):
        assert_valid(tool.to_json(revision), revision, "Tool")

    async def body(c):  # type: ignore[no-untyped-def]
        a = await c.request("tools/call", {"name": "forecast", "arguments": {"city": "Oslo"}, "_meta": meta()})
        b = await c.request("tools/call", {"name": "station", "arguments": {"name": "Tor"}, "_meta": meta()})
        return a, b

    a, b = run_with(server, body)
    assert a["result"]["structuredContent"] == {"city": "Oslo", "high_c": 21}
    assert a["result"]["content"] == [{"type": "text", "text": '{"city": "Oslo", "high_c": 21}'}]
    assert b["result"]["structuredContent"] == {"name": "Tor", "altitude_m": 0.0}
    assert_valid(a["result"], MODERN, "CallToolResult")


def test_resources_templates_prompts_and_completion_declared() -> None:
    server = Server("s")

    @server.resource_template("weather://forecast/{city}/{date}", mime_type="application/json",
                              complete={"city": ["Lisbon", "London", "Oslo"]})
    def forecast(city: str, date: str) -> dict[str, str]:
        return {"city": city, "date": date}

    @server.prompt(argument_descriptions={"destination": "Where to"})
    def plan_trip(destination: str, days: str = "3") -> str:
        """Plan a trip."""
        return f"{destination} {days}"

    @server.completion(prompt="plan_trip", argument="destination")
    def destinations(value: str) -> list[str]:
        return [c for c in ("Lisbon", "Lyon", "Oslo") if c.startswith(value)]

    assert server.prompts["plan_trip"].to_json(MODERN) == {
        "name": "plan_trip", "description": "Plan a trip.",
        "arguments": [{"name": "destination", "description": "Where to", "required": True},
                      {"name": "days", "required": False}]}
    assert server.capabilities_for("2025-06-18")["completions"] == {}

    async def body(c):  # type: ignore[no-untyped-def]
        read = await c.request("resources/read", {"uri": "weather://forecast/Oslo/2026-07-28", "_meta": meta()})
        comp1 = await c.request("completion/complete", {
            "ref": {"type": "ref/resource", "uri": "weather://forecast/{city}/{date}"},
            "argument": {"name": "city", "value": "l"}, "_meta": meta()})
        comp2 = await c.request("completion/complete", {
            "ref": {"type": "ref/prompt", "name": "plan_trip"},
            "argument": {"name": "destination", "value": "L"}, "_meta": meta()})
        return read, comp1, comp2

    read, comp1, comp2 = run_with(server, body, revision=MODERN)
    assert read["result"]["contents"] == [{"uri": "weather://forecast/Oslo/2026-07-28", "mimeType": "application/json",
                                           "text": '{"city": "Oslo", "date": "2026-07-28"}'}]
    assert comp1["result"]["completion"] == {"values": ["Lisbon", "London"], "total": 2, "hasMore": False}
    assert comp2["result"]["completion"]["values"] == ["Lisbon", "Lyon"]
    assert_valid(comp2["result"], MODERN, "CompleteResult")


def test_template_parameters_must_match_the_function() -> None:
    server = Server("s")
    try:
        @server.resource_template("x://{a}")
        def bad(b: str) -> str:
            return b
    except TypeError as exc:
        assert "template variables" in str(exc)
    else:
        raise AssertionError("expected a TypeError")


def test_completion_needs_no_capability_in_2024_11_05() -> None:
    """``completion/complete`` existed in 2024-11-05 with no capability to announce it (``completions``
    came with 2025-03-26): the server answers it and does not advertise a capability that revision lacks."""
    server = Server("s", supported_versions=("2024-11-05", "2025-11-25"))

    @server.prompt()
    def plan_trip(destination: str) -> str:
        """Plan a trip."""
        return destination

    @server.completion(prompt="plan_trip", argument="destination")
    def destinations(value: str) -> list[str]:
        return [c for c in ("Lisbon", "Lyon", "Oslo") if c.startswith(value)]

    async def body(c):  # type: ignore[no-untyped-def]
        hello = await c.initialize("2024-11-05")
        answer = await c.request("completion/complete", {
            "ref": {"type": "ref/prompt", "name": "plan_trip"}, "argument": {"name": "destination", "value": "L"}})
        return hello, answer

    hello, answer = run_with(server, body, revision="2024-11-05")
    assert hello["result"]["protocolVersion"] == "2024-11-05"
    assert "completions" not in hello["result"]["capabilities"]
    assert answer["result"]["completion"]["values"] == ["Lisbon", "Lyon"]
    assert_valid(answer["result"], "2024-11-05", "CompleteResult")
