"""A tour of the protocol: one short story per group of methods, so that running every scenario in a
revision shows every method of that revision at least once (``mcp-sim scenarios`` lists them).

Each story is an ``async def story(sim, *, revision, transport, faults=None)`` like those in
:mod:`mcp_sim.scenarios.stories`, and runs in every simulated revision over every transport. What a
story shows depends on the era, and that difference is the lesson:

* ``ping-and-lifecycle`` (chapter 03) — legacy ``initialize`` and ``ping``; modern ``server/discover``
  (2026-07-28 has no ``ping``: every request stands alone, so there is no connection to keep alive).
* ``resources-tour`` and ``prompts-and-completion`` (chapter 05) — what servers offer, read and filled in.
* ``logging-progress-cancel`` (chapters 02 and 04) — log messages (legacy ``logging/setLevel`` once
  per connection, modern ``logLevel`` in each request's ``_meta``), progress, and a timed-out call
  the client cancels.
* ``subscriptions`` (chapter 07) — legacy ``resources/subscribe`` and session-wide ``list_changed``;
  modern ``subscriptions/listen`` with its acknowledgement and ``subscriptionId``.
* ``client-input`` (chapter 04) — roots, elicitation (form and URL mode) and sampling: legacy
  server→client requests; modern entries of an ``InputRequiredResult``'s ``inputRequests``.
* ``tasks`` (chapter 08) — long-running work: 2025-11-25 tasks (``tasks/get``, ``list``, ``result``,
  ``cancel``, ``notifications/tasks/status``); the 2026-07-28 ``io.modelcontextprotocol/tasks``
  extension (``resultType: "task"``, ``tasks/get``, ``tasks/update``, ``tasks/cancel``,
  ``notifications/tasks`` on a listen stream); revisions without tasks run the job inline.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anyio

import mcp_sim.scenarios.notes as notes
import mcp_sim.scenarios.weather as weather
from mcp_sim.capabilities.mrtr import elicit, elicit_url, list_roots
from mcp_sim.protocol.revisions import TASKS_EXTENSION, get_revision
from mcp_sim.roles.client import Client, RequestTimeout
from mcp_sim.roles.context import Context
from mcp_sim.roles.host import HOST, Host
from mcp_sim.roles.model import SamplingRule, ScriptedModel
from mcp_sim.roles.server import Server
from mcp_sim.roles.user import ScriptedUser
from mcp_sim.sim.world import Simulation

Faults = Mapping[str, Any]
"""Faults per link name (see :mod:`mcp_sim.transports.faults`)."""

TRIP_ROOT = {"uri": "file:///projects/ana/trips", "name": "Trips"}
PHOTO_ROOT = {"uri": "file:///projects/ana/photos", "name": "Photos"}
PACKING_RULES = (SamplingRule(r"pack", "Umbrella, a warm jumper and walking shoes."),)


# --- small ready-made servers -----------------------------------------------------------------------

def clockwork() -> Server:
    """A server whose tool takes time on the virtual clock: ``count`` logs and reports progress."""
    server = Server("clockwork", version="1.0.0", title="Clockwork",
                    instructions="Slow jobs: count logs what it does and reports its progress.")

    @server.tool(annotations={"readOnlyHint": True})
    async def count(ctx: Context, to: int = 3) -> str:
        """Count to ``to``, one number per simulated second, logging and reporting progress."""
        await ctx.log("info", f"counting to {to}", logger_name="clockwork")
        for n in range(1, to + 1):
            await ctx.sleep(1)
            await ctx.report_progress(n, to, f"counted {n}")
        await ctx.log("debug", "done counting", logger_name="clockwork")
        return f"counted to {to}"

    return server


def travel_agent() -> Server:
    """A server whose one tool needs the client's help: the user's roots, a form, the Host's model,
    and (2025-11-25 and later) a URL the user opens in a browser to pay."""
    server = Server("travel", version="1.0.0", title="Travel agent")

    @server.tool(annotations={"readOnlyHint": False, "destructiveHint": False})
    async def book_trip(ctx: Context) -> str:
        """Book a trip: reads the shared folders, asks where to, drafts a packing list, takes payment."""
        first = await ctx.ask({
            "roots": list_roots(),
            "where": elicit("Where to?", {"type": "object", "required": ["city"], "properties": {
                "city": {"type": "string", "title": "City", "enum": sorted(weather.STATIONS)}}}),
        })
        folders = [r["uri"] for r in first["roots"].get("roots", [])]
        form = first["where"]
        if form.get("action") != "accept":
            return "No destination: nothing booked."
        city = form["content"]["city"]
        sky = weather.conditions(city, 0)["sky"]
        draft = await ctx.sample([f"What should I pack for {city}? The sky will be {sky}."], 40, key="packing")
        packing = draft["content"]["text"]
        paid = ""
        if get_revision(ctx.revision).has_elicitation_modes:
            # URL mode: the payment page is opened by the user, out of the client's sight. In legacy
            # revisions the server tells the client when the out-of-band step is finished.
            ident = None if ctx.is_modern else f"payment-{ctx.server.next_number('payment')}"
            answer = await ctx.ask({"payment": elicit_url("Pay the deposit", "https://travel.example/pay", ident)})
            if ident is not None and answer["payment"].get("action") == "accept":
                await ctx.session.notify("notifications/elicitation/complete", {"elicitationId": ident})
            paid = f", deposit {answer['payment'].get('action')}"
        return f"Booked {city} (saved in {', '.join(folders) or 'no folder'}{paid}). Pack: {packing}"

    return server


def notebook() -> Server:
    """The notes server plus a prompt, so that its tools, prompts and resources can all change."""
    server = notes.build()

    @server.prompt(title="Summarise a note")
    def summarise(path: str) -> str:
        """Summarise one note."""
        return f"Summarise the note {path} in one sentence."

    return server


# --- the stories ------------------------------------------------------------------------------------

def _host(**kw: Any) -> Host:
    return Host(model=ScriptedModel([], sampling_rules=PACKING_RULES), **kw)


async def _connect(host: Host, name: str, server: Server, *, revision: str, transport: str,
                   faults: Faults | None) -> Client:
    return await host.add_server(name, server, transport=transport, revision=revision,
                                 faults=(faults or {}).get(name))


async def ping_and_lifecycle(sim: Simulation, *, revision: str, transport: str,
                             faults: Faults | None = None) -> None:
    """Legacy: ``initialize`` → result → ``notifications/initialized``, then ``ping`` (either side may
    check the other is alive). Modern: ``server/discover``, then a request that needs no handshake;
    there is no ``ping`` in 2026-07-28, as there is no connection state to keep alive."""
    async with _host(user=ScriptedUser()) as host:
        client = await _connect(host, "weather", weather.build(), revision=revision, transport=transport,
                                faults=faults)
        if client.era == "legacy":
            await client.ping()
        else:
            await client.list_tools()  # stands alone: its _meta carries the version and capabilities


async def resources_tour(sim: Simulation, *, revision: str, transport: str,
                         faults: Faults | None = None) -> None:
    """``resources/list``, ``resources/templates/list``, then ``resources/read`` of a fixed resource
    and of a URI built from a template."""
    async with _host(user=ScriptedUser()) as host:
        client = await _connect(host, "weather", weather.build(), revision=revision, transport=transport,
                                faults=faults)
        await client.list_resources()
        await client.list_resource_templates()
        await client.read_resource("weather://stations")
        await client.read_resource("weather://forecast/Oslo/2026-07-28")


async def prompts_and_completion(sim: Simulation, *, revision: str, transport: str,
                                 faults: Faults | None = None) -> None:
    """``prompts/list``; ``completion/complete`` for a prompt argument and for a template variable
    (the user typed "Po"); then ``prompts/get`` with the chosen value."""
    async with _host(user=ScriptedUser()) as host:
        client = await _connect(host, "weather", weather.build(), revision=revision, transport=transport,
                                faults=faults)
        await client.list_prompts()
        await client.complete({"type": "ref/prompt", "name": "plan_trip"}, {"name": "destination", "value": "Po"})
        await client.complete({"type": "ref/resource", "uri": "weather://forecast/{city}/{date}"},
                              {"name": "city", "value": "L"})
        await client.get_prompt("plan_trip", {"destination": "Porto", "days": "2"})


async def logging_progress_cancel(sim: Simulation, *, revision: str, transport: str,
                                  faults: Faults | None = None) -> None:
    """Log messages, progress, cancellation. The client asks for ``info`` logs (legacy:
    ``logging/setLevel`` once; modern: ``logLevel`` in every request's ``_meta``), calls ``count``
    with a ``progressToken``, then gives up on a second call after two seconds and cancels it."""
    async with _host(user=ScriptedUser()) as host:
        client = await _connect(host, "clockwork", clockwork(), revision=revision, transport=transport,
                                faults=faults)
        me = f"client/{client.server_name}"
        if client.era == "legacy":
            await client.request("logging/setLevel", {"level": "info"})
        else:
            client.log_level = "info"

        def show(done: float, total: float | None, message: str | None) -> None:
            host.say(me, HOST, f"progress {done:g} of {total:g}" if total else f"progress {done:g}")

        await client.call_tool("count", {"to": 3}, on_progress=show)
        try:
            await client.call_tool("count", {"to": 10}, timeout=2.0)
        except RequestTimeout:
            host.say(me, HOST, "count took longer than 2 s: the client cancelled it")


async def subscriptions(sim: Simulation, *, revision: str, transport: str,
                        faults: Faults | None = None) -> None:
    """Hearing about change. Legacy: ``resources/subscribe`` to one note; the session hears
    ``notifications/resources/updated`` and every ``list_changed``; then ``resources/unsubscribe``.
    Modern: one ``subscriptions/listen`` request names what to hear; the server acknowledges it and
    tags each notification with its ``subscriptionId``; closing it cancels the request."""
    server = notebook()
    todo = f"{notes.PREFIX}todo.md"
    async with _host(user=ScriptedUser()) as host:
        client = await _connect(host, "notes", server, revision=revision, transport=transport, faults=faults)
        listen = None
        if client.era == "legacy":
            await client.subscribe_resource(todo)
        else:
            listen = await client.listen({"resourceSubscriptions": [todo], "resourcesListChanged": True,
                                          "toolsListChanged": True, "promptsListChanged": True})
        await client.call_tool("write_note", {"path": "todo.md", "text": "# To do\n- watch a resource\n"})
        await client.call_tool("write_note", {"path": "packing.md", "text": "umbrella\n"})

        # A new version of the server goes live with one more prompt and one more tool: both lists change.
        @server.prompt(title="Plan the week")
        def plan_week() -> str:
            """Plan the week from the notes."""
            return "Plan my week from my notes."

        @server.tool(annotations={"readOnlyHint": True})
        def count_notes() -> str:
            """How many notes there are."""
            return f"{len(server.resources)} notes"

        await anyio.sleep(1)  # let the notifications arrive (and the Host re-list the tools)
        if listen is not None:
            await listen.close()
        else:
            await client.unsubscribe_resource(todo)


async def client_input(sim: Simulation, *, revision: str, transport: str,
                       faults: Faults | None = None) -> None:
    """A tool that needs the client: ``roots/list``, a form (``elicitation/create``), the Host's model
    (``sampling/createMessage``) and a URL-mode elicitation. Legacy servers send these as requests
    (and ``notifications/elicitation/complete`` when the URL step is done); modern servers return
    them in ``inputRequests`` and the client retries. Legacy clients also announce a new root with
    ``notifications/roots/list_changed``."""
    user = ScriptedUser([{"city": "Oslo"}, True])
    async with _host(user=user, roots=[TRIP_ROOT]) as host:
        client = await _connect(host, "travel", travel_agent(), revision=revision, transport=transport,
                                faults=faults)
        await client.call_tool("book_trip", {})
        if client.era == "legacy":
            host.roots.append(dict(PHOTO_ROOT))
            await client.notify("notifications/roots/list_changed")


def workshop() -> Server:
    """A server with long jobs (course chapter 08): ``render`` may run as a task, ``export`` only as one."""
    server = Server("workshop", version="1.0.0", title="Workshop")

    @server.tool(task_support="optional", annotations={"readOnlyHint": True})
    async def render(ctx: Context, frames: int = 3) -> str:
        """Render ``frames`` frames, ten simulated seconds each."""
        for n in range(1, frames + 1):
            await ctx.sleep(10)
            await ctx.report_progress(n, frames)
        return f"rendered {frames} frames"

    @server.tool(task_support="required")
    async def export(ctx: Context) -> str:
        """Export everything: only ever runs as a task."""
        await ctx.sleep(5)
        return "exported"

    return server


async def tasks(sim: Simulation, *, revision: str, transport: str, faults: Faults | None = None) -> None:
    """Long-running work. 2025-11-25: ``tools/call`` with a ``task`` field answers at once with a task;
    the client polls ``tasks/get``, lists its tasks, fetches ``tasks/result`` and cancels a second
    task, while the server sends ``notifications/tasks/status``. 2026-07-28: the
    ``io.modelcontextprotocol/tasks`` extension — the client declares it in the request's ``_meta``,
    the result says ``resultType: "task"``, then ``tasks/get``, a ``subscriptions/listen`` for the
    task's ``notifications/tasks``, ``tasks/update`` and ``tasks/cancel``.
    Revisions without tasks run the same job inline: the call simply takes its time."""
    async with _host(user=ScriptedUser()) as host:
        client = await _connect(host, "workshop", workshop(), revision=revision, transport=transport,
                                faults=faults)
        me = f"client/{client.server_name}"
        if client.era == "legacy" and not get_revision(client.protocol_version or "").has_tasks:
            await client.call_tool("render", {"frames": 2}, timeout=60)
            host.say(me, HOST, f"{client.protocol_version} has no tasks: the call held its request open for 20 s")
            return
        if client.era == "legacy":
            created = await client.request("tools/call", {"name": "render", "arguments": {"frames": 3},
                                                          "task": {"ttl": 120_000}})
            task_id = created["task"]["taskId"]
            await client.request("tasks/get", {"taskId": task_id})
            await client.request("tasks/list", {})
            await client.request("tasks/result", {"taskId": task_id}, timeout=60)
            second = await client.request("tools/call", {"name": "export", "arguments": {}, "task": {}})
            await client.request("tasks/cancel", {"taskId": second["task"]["taskId"]})
            await anyio.sleep(0.1)  # the status notification of the cancelled task arrives
            return
        # 2026-07-28: the tasks extension, declared in each request's _meta capabilities.
        with_tasks = {**client.capabilities(), "extensions": {TASKS_EXTENSION: {}}}
        created = await client.call_tool("render", {"frames": 2}, capabilities=with_tasks)
        task_id = created["taskId"]
        await client.request("tasks/get", {"taskId": task_id}, capabilities=with_tasks)
        watch = await client.listen({"taskIds": [task_id]}, capabilities=with_tasks)
        await anyio.sleep(25)  # the task completes after 20 s: notifications/tasks arrives on the stream
        await watch.close()
        await client.request("tasks/get", {"taskId": task_id}, capabilities=with_tasks)
        second = await client.call_tool("export", {}, capabilities=with_tasks)
        await client.request("tasks/update", {"taskId": second["taskId"], "inputResponses": {}},
                             capabilities=with_tasks)
        await client.request("tasks/cancel", {"taskId": second["taskId"]}, capabilities=with_tasks)
