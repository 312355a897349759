"""Host-driven stories: a user, a Host with its model, and real servers (course chapters 00, 01, 03 and 04).

Each story is an ``async def story(sim, *, revision, transport)`` that plays one situation from the
course inside a simulation; :func:`mcp_sim.scenarios.run_scenario` runs it and hands back the trace.
The same story runs in any revision, so running it twice — ``revision="2025-11-25"`` and
``revision="2026-07-28"`` — puts the legacy and the modern flow side by side.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import anyio

import mcp_sim.scenarios.issues as issues
import mcp_sim.scenarios.notes as notes
import mcp_sim.scenarios.weather as weather
from mcp_sim.capabilities.context import Context
from mcp_sim.roles.host import Host
from mcp_sim.roles.model import ChatMessage, ModelTurn, SamplingRule, ScriptedModel, ToolRule, ToolSpec
from mcp_sim.roles.server import Server
from mcp_sim.roles.user import ApprovalRequest, CallableApprover, ScriptedUser
from mcp_sim.security.host_policy import ApprovalPolicy, SamplingBudget, ToolPolicy
from mcp_sim.sim.world import Simulation
from mcp_sim.transports.faults import Faults as WireFaults

Faults = Mapping[str, Any]
"""Faults per link name (see :mod:`mcp_sim.transports.faults`), e.g. to drop one message in a fork."""


def _issue_link(result: str, groups: dict[str, str]) -> str:
    try:
        number = json.loads(result)["number"]
    except (ValueError, KeyError, TypeError):
        return f"Issue created: {result}"
    return f"Issue #{number} created, here is the link: issues://{number}"


ISSUE_RULES = (
    ToolRule(r"(?:file|open|create) (?:an? )?(?:bug|issue)[^:]*:\s*(?P<title>.+)", "create_issue",
             {"title": "{title}", "labels": ["bug"]}, answer=_issue_link),
    ToolRule(r"delete issue #?(?P<number>\d+)", "delete_issue", lambda m: {"number": int(m["number"])},
             answer="Done: {result}"),
)

WEATHER_RULES = (
    ToolRule(r"plan .*outing", "plan_outing", {"days": 2}, answer="Here is your plan: {result}"),
    ToolRule(r"weather in (?P<city>[A-Z][a-z]+)", "get_forecast", {"city": "{city}", "days": 2},
             answer="The forecast for {city}: {result}"),
)

NOTES_RULES = (
    ToolRule(r"note that (?P<text>.+)", "write_note", {"path": "inbox.md", "text": "{text}"},
             answer="Saved: {result}"),
)

SAMPLING_RULES = (SamplingRule(r"outing", "Go to the park in the morning, before the showers."),)


def weather_with_outing() -> Server:
    """The weather server plus ``plan_outing``, a tool that needs the client's input twice: the user
    chooses the city (elicitation) and the Host's model writes the plan (sampling). In legacy
    revisions the server *sends requests* for both while the call is pending; in 2026-07-28 it answers
    ``InputRequiredResult`` and the client retries the call with the answers."""
    server = weather.build()

    @server.tool(annotations={"readOnlyHint": True})
    async def plan_outing(ctx: Context, days: int = 1) -> str:
        """Plan an outing around the forecast; asks which city, then drafts the plan."""
        answer = await ctx.elicit("Which city is the outing in?", {
            "type": "object", "properties": {"city": {"type": "string", "title": "City",
                                                      "enum": sorted(weather.STATIONS)}},
            "required": ["city"]}, key="city")
        if answer.get("action") != "accept":
            return "No city chosen: no plan."
        city = answer["content"]["city"]
        sky = weather.conditions(city, 0)["sky"]
        draft = await ctx.sample([{"role": "user", "content": {
            "type": "text", "text": f"Plan a {days}-day outing in {city}; the sky will be {sky}."}}],
            max_tokens=40, key="plan")
        return f"{city} ({sky}): {draft['content']['text']}"

    return server


def _host(**kw: Any) -> Host:
    return Host(model=ScriptedModel([*ISSUE_RULES, *WEATHER_RULES, *NOTES_RULES], sampling_rules=SAMPLING_RULES),
                **kw)


async def complete_call(sim: Simulation, *, revision: str, transport: str,
                        faults: Faults | None = None) -> None:
    """The complete tool call: discover → filter by policy → the model proposes ``create_issue`` → the
    user approves → the client calls → the result goes back to the model → the final answer."""
    user = ScriptedUser(approvals=[True])
    policy = ToolPolicy(deny=("*__delete_*",))  # the model is never shown the destructive tool
    async with _host(user=user, tool_policy=policy) as host:
        await host.add_server("issues", issues.build(), transport=transport, revision=revision,
                              faults=(faults or {}).get("issues"))
        await host.list_tools()
        await host.chat("File a bug for me: the login page crashes on Safari")


class PacedModel(ScriptedModel):
    """The scripted model, taking ``think`` seconds of virtual time for every turn, as a real model
    takes time to write its answer."""

    def __init__(self, *args: Any, think: float, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.think = think

    async def respond(self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> ModelTurn:
        await anyio.sleep(self.think)
        return await super().respond(messages, tools)


NETWORK_S = 0.040
"""The first story's server is a network away: 40 ms each way."""
MODEL_S = 0.9
"""… its model thinks for 0.9 s per turn …"""
TYPING_S = 4.0
"""… its user takes 4 s to type the request …"""
READING_S = 2.5
"""… and 2.5 s to read the approval dialog before saying yes."""


async def first_call(sim: Simulation, *, revision: str, transport: str,
                     faults: Faults | None = None) -> None:
    """Chapter 00's opening story: :func:`complete_call` at the pace of a real one. The same messages
    flow, but the user types, the model thinks, the user reads the dialog and every message crosses a
    network, each on the virtual clock (:data:`NETWORK_S`, :data:`MODEL_S`, :data:`TYPING_S`,
    :data:`READING_S`), so the trace shows where the time of a tool call goes: mostly in people and
    models, a little on the wire."""
    async def read_then_approve(request: ApprovalRequest) -> bool:
        await anyio.sleep(READING_S)
        return True

    model = PacedModel([*ISSUE_RULES, *WEATHER_RULES, *NOTES_RULES], sampling_rules=SAMPLING_RULES, think=MODEL_S)
    policy = ToolPolicy(deny=("*__delete_*",))
    link = (faults or {}).get("issues", WireFaults(latency=NETWORK_S))
    async with Host(model=model, user=ScriptedUser(), approver=CallableApprover(read_then_approve),
                    tool_policy=policy) as host:
        await host.add_server("issues", issues.build(), transport=transport, revision=revision, faults=link)
        await host.list_tools()
        await anyio.sleep(TYPING_S)
        await host.chat("File a bug for me: the login page crashes on Safari")


async def weather_mrtr(sim: Simulation, *, revision: str, transport: str,
                       faults: Faults | None = None) -> None:
    """A tool that needs elicitation and sampling: legacy server→client requests vs modern
    InputRequiredResult and retry."""
    user = ScriptedUser([{"city": "Lisbon"}], approvals=[True])
    async with _host(user=user, sampling_budget=SamplingBudget(max_calls=2, max_tokens=200)) as host:
        await host.add_server("weather", weather_with_outing(), transport=transport, revision=revision,
                              faults=(faults or {}).get("weather"))
        await host.list_tools()
        await host.chat("Please plan an outing for me")


async def handshake(sim: Simulation, *, revision: str, transport: str,
                    faults: Faults | None = None) -> None:
    """Opening a connection: legacy ``initialize`` → result → ``notifications/initialized``, or modern
    ``server/discover``; then the first request (``tools/list``)."""
    async with _host(user=ScriptedUser()) as host:
        client = await host.add_server("weather", weather.build(), transport=transport, revision=revision,
                                       faults=(faults or {}).get("weather"))
        await client.list_tools()


async def multi_server(sim: Simulation, *, revision: str, transport: str,
                       faults: Faults | None = None) -> None:
    """One Host, three Clients, three Servers: tools aggregated under collision-free names, read-only
    tools of a trusted server run without a dialog, the others ask first."""
    user = ScriptedUser(approvals=[True, True])
    approval = ApprovalPolicy(mode="unless-read-only", trusted_servers=frozenset({"weather"}))
    async with _host(user=user, approval_policy=approval, tool_policy=ToolPolicy(deny=("*__delete_*",))) as host:
        for name, server in (("weather", weather.build()), ("issues", issues.build()), ("notes", notes.build())):
            await host.add_server(name, server, transport=transport, revision=revision,
                                  faults=(faults or {}).get(name))
        await host.list_tools()
        await host.chat("What's the weather in Paris?")
        await host.chat("Open an issue: umbrella icon missing on rainy days")
        await host.chat("Please note that Paris will be rainy")


async def weather_chat(sim: Simulation, *, revision: str, transport: str,
                       faults: Faults | None = None) -> None:
    """The smallest complete story: ask for a forecast, approve the read-only tool, get the answer."""
    async with _host(user=ScriptedUser(approvals=[True])) as host:
        await host.add_server("weather", weather.build(), transport=transport, revision=revision,
                              faults=(faults or {}).get("weather"))
        await host.chat("What's the weather in Lisbon?")
