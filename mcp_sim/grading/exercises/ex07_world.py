"""The simulator behind the chapter-07 exercises (change notifications, subscriptions, caching).

The checks of ``ex07_list_changed``, ``ex07_cache`` and ``ex07_next_message`` never type a message by
hand: they build a small seeded :class:`~mcp_sim.roles.server.Server` (a *catalog* of tools, prompts,
resources and templates), connect the real :class:`~mcp_sim.roles.client.Client` to it over an
in-memory link on the virtual clock, let both sides talk, and read what went over the wire. So every
list result, capability object and notification a learner sees is one the simulator produced, valid
for its revision.

This module holds no exercise; it is the shared stage the three exercises play on.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

import anyio

from mcp_sim import accelerated
from mcp_sim.capabilities.caching import CachePolicy
from mcp_sim.capabilities.context import Context
from mcp_sim.capabilities.prompts import PromptDefinition, prompt_from_function
from mcp_sim.capabilities.tools import ToolDefinition, tool_from_function
from mcp_sim.protocol.revisions import get_revision
from mcp_sim.roles.client import Client
from mcp_sim.roles.client.opening import ClientEra
from mcp_sim.roles.server import Server
from mcp_sim.roles.server_session import serve
from mcp_sim.security.identity import AuthInfo
from mcp_sim.sim.world import Simulation
from mcp_sim.transports.memory import memory_link

LIST_FIELD: Final[Mapping[str, str]] = {"tools/list": "tools", "prompts/list": "prompts",
                                        "resources/list": "resources",
                                        "resources/templates/list": "resourceTemplates"}
"""Each list method and the member of its result that holds the items."""

LEGACY_REVISIONS: Final = ("2025-06-18", "2025-11-25")
MODERN: Final = "2026-07-28"

TOOL_NAMES = ("forecast", "convert", "search", "translate", "summarise", "lookup", "schedule", "remind", "archive",
          "export", "backup", "rename")
PROMPT_NAMES = ("plan_week", "review_code", "write_summary", "draft_email", "explain", "triage")
FILE_NAMES = ("todo.md", "ideas.md", "packing.md", "budget.md", "reading.md", "recipes.md", "goals.md")
TEMPLATE_NAMES = ("notes", "tickets", "photos", "invoices")
TENANTS: Final = ("acme", "globex", "initech", "umbrella", "hooli")
SUBJECTS: Final = ("alice", "bob", "carol", "dave", "erin", "frank")

Connect = Callable[[AuthInfo | None], Awaitable[Client]]
Story = Callable[[Connect, Server], Awaitable[None]]


def _echo(text: str) -> str:
    return text


def _prompt() -> str:
    return "Help me with my notes."


def _template(id: str) -> str:  # the template's variable is called id
    return id


@functools.cache
def _base_tool() -> ToolDefinition:
    # Reading a function's signature builds a pydantic model: done once, then copied under new names.
    return tool_from_function(_echo)


@functools.cache
def _base_prompt() -> PromptDefinition:
    return prompt_from_function(_prompt)


def add_tool(server: Server, name: str, *, tenant: str | None = None) -> None:
    """Offer a tool; with ``tenant`` only that tenant's callers see it (the list becomes per caller)."""
    visible = None if tenant is None else (lambda auth, t=tenant: auth is not None and auth.tenant == t)
    base = _base_tool()
    server.add_tool(dataclasses.replace(base, name=name, input_schema=copy.deepcopy(base.input_schema),
                                        description=f"{name.replace('_', ' ').capitalize()} for you.",
                                        visible=visible))


def add_prompt(server: Server, name: str) -> None:
    server.add_prompt(dataclasses.replace(_base_prompt(), name=name, arguments=[],
                                          description=f"{name.replace('_', ' ').capitalize()}."))


def add_template(server: Server, folder: str) -> None:
    """Offer the template ``<folder>://items/{id}``."""
    server.resource_template(f"{folder}://items/{{id}}", name=folder)(_template)


def add_resource(server: Server, file: str) -> str:
    uri = f"notes://files/{file}"
    server.add_resource(uri, content=f"# {file}\n", name=file, mime_type="text/markdown")
    return uri


def catalog(rng: Any, *, page_size: int | None = None, list_changed: bool = True, per_caller: bool = False,
            ttl_ms: int = 60_000, capabilities: Mapping[str, Any] | None = None,
            tools: int | None = None, tenants: tuple[str, ...] = (), subscribe: bool = True) -> Server:
    """A server with a few seeded tools, prompts, resources and templates, ``page_size`` per page.

    ``tenants`` adds one tool each that only that tenant's callers see; ``ttl_ms`` is the ``ttlMs``
    its 2026-07-28 list results carry; ``subscribe`` whether it declares ``resources.subscribe``."""
    server = Server("catalog", version="1.0.0", page_size=page_size, list_changed=list_changed,
                    per_caller=per_caller, capabilities=capabilities, subscribe=subscribe,
                    cache=CachePolicy(list_ttl_ms=ttl_ms, read_ttl_ms=ttl_ms))
    for tenant in tenants:  # first, so the first page already differs from caller to caller
        add_tool(server, f"{tenant}_report", tenant=tenant)
    for name in rng.sample(TOOL_NAMES, rng.randint(3, 6) if tools is None else tools):
        add_tool(server, name)
    for name in rng.sample(PROMPT_NAMES, rng.randint(2, 4)):
        add_prompt(server, name)
    for file in rng.sample(FILE_NAMES, rng.randint(2, 4)):
        add_resource(server, file)
    for folder in rng.sample(TEMPLATE_NAMES, rng.randint(1, 3)):
        add_template(server, folder)
    return server


def unused(rng: Any, pool: tuple[str, ...], taken: Any) -> str:
    """A name from ``pool`` not in ``taken`` yet."""
    return str(rng.choice([n for n in pool if n not in taken]))


async def _work(steps: int, ctx: Context) -> str:
    """Work in ``steps`` steps, saying so in the log and with progress notifications."""
    await ctx.log("info", f"working in {steps} steps")
    for n in range(1, steps + 1):
        await ctx.report_progress(n, steps)
    return f"done in {steps} steps"


def add_worker(server: Server) -> None:
    """Offer ``work``, a tool that logs and reports progress (request-scoped notifications)."""
    server.add_tool(dataclasses.replace(_base_worker(), name="work", description="Work for a while."))


@functools.cache
def _base_worker() -> ToolDefinition:
    return tool_from_function(_work)


def record(seed: int, revision: str, server: Server, story: Story) -> list[dict[str, Any]]:
    """Run ``story`` against ``server`` in a fresh simulation; every wire message, oldest first.

    ``story(connect, server)`` calls ``await connect(auth)`` for each connection it needs (a real
    :class:`Client` of ``revision``'s era); each message is ``{"from", "link", "message"}``, where
    ``link`` numbers the connection (0 for the first)."""
    sim = Simulation(seed)
    era: ClientEra = "modern" if get_revision(revision).is_modern else "legacy"
    links: dict[str, int] = {}

    async def main() -> None:
        clients: list[Client] = []
        async with anyio.create_task_group() as tg:
            async def connect(auth: AuthInfo | None = None) -> Client:
                name = f"{server.name}-{len(links)}" if links else server.name
                links[name] = len(links)
                c_end, s_end = memory_link(sim, name, auth=auth)
                tg.start_soon(serve, server, s_end)
                client = Client("course-client", "1.0.0", era=era, versions=(revision,), sim=sim)
                await client.connect(c_end, tg)
                clients.append(client)
                return client

            await story(connect, server)
            for client in clients:
                await client.close()

    with accelerated.use():  # the same trace as the readable twins (a test proves it), sooner
        sim.run(main)
    out = []
    for event in sim.recorder.events:
        if event.kind in ("request", "response", "error", "notification") and event.message is not None:
            sender = str(event.sender)
            out.append({"from": "client" if sender.startswith("client/") else "server",
                        "link": links.get(sender.partition("/")[2], 0), "message": copy.deepcopy(event.message)})
    return out


def results_by_request(messages: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any], int]]:
    """``(request, result, link)`` for every answered client request, in the order the answers came."""
    asked: dict[tuple[int, str], dict[str, Any]] = {}
    out = []
    for m in messages:
        msg = m["message"]
        key = (m["link"], repr(msg.get("id")))
        if m["from"] == "client" and "method" in msg and "id" in msg:
            asked[key] = msg
        elif m["from"] == "server" and "result" in msg and key in asked:
            out.append((asked.pop(key), msg["result"], m["link"]))
    return out


def list_pages(messages: list[dict[str, Any]]) -> dict[tuple[str, str | None], dict[str, Any]]:
    """``{(method, cursor): result}`` of every list page in ``messages`` (a later answer wins)."""
    pages = {}
    for request, result, _ in results_by_request(messages):
        if request["method"] in LIST_FIELD:
            pages[(request["method"], (request.get("params") or {}).get("cursor"))] = result
    return pages


def whole_list(pages: Mapping[tuple[str, str | None], dict[str, Any]], method: str) -> list[dict[str, Any]]:
    """Every item of ``method``, following ``nextCursor`` through ``pages`` from the first page."""
    items: list[dict[str, Any]] = []
    cursor: str | None = None
    for _ in range(len(pages) + 1):
        page = pages[(method, cursor)]
        items += page.get(LIST_FIELD[method]) or []
        cursor = page.get("nextCursor")
        if cursor is None:
            return items
    raise AssertionError(f"the pages of {method} never end")


async def list_everything(client: Client, methods: tuple[str, ...] = tuple(LIST_FIELD)) -> None:
    """Fetch every page of each of ``methods`` (no cache: each page goes over the wire)."""
    fetch = {"tools/list": client.list_tools, "prompts/list": client.list_prompts,
             "resources/list": client.list_resources, "resources/templates/list": client.list_resource_templates}
    for method in methods:
        cursor = None
        while True:
            page = await fetch[method](cursor)
            cursor = page.get("nextCursor")
            if not cursor:
                break


async def watch_story(client: Client, server: Server, rng: Any, *, watched: str,
                      flags: Mapping[str, bool], before: int | None = None) -> None:
    """Subscribe to ``watched``, see it change, see the tool list change, list tools again, stop.

    Legacy: ``resources/subscribe`` → ``{}``; ``notifications/resources/updated``;
    ``notifications/tools/list_changed``; ``tools/list``; ``resources/unsubscribe``.
    Modern: ``subscriptions/listen`` naming ``watched`` and the ``flags`` asked for →
    ``notifications/subscriptions/acknowledged``; the same changes, tagged with the listen request's
    id; ``tools/list``; ``notifications/cancelled`` for the listen request. Zero to two ordinary
    requests come first, so ids differ from seed to seed, and a ``prompts/list`` follows the
    subscription, so the stream's id is not the newest one when the changes come."""
    count = rng.randint(0, 2) if before is None else before  # ordinary requests before the subscription
    for method in rng.sample(("tools/list", "prompts/list", "resources/list"), count):
        await list_everything(client, (method,))
    listen = None
    if client.era == "legacy":
        await client.subscribe_resource(watched)
    else:
        listen = await client.listen({"resourceSubscriptions": [watched], **flags})
    # another request after the subscription, so the newest request is not the one that opened the stream
    await list_everything(client, ("prompts/list",))
    server.resource_updated(watched)
    await anyio.sleep(1)
    add_tool(server, unused(rng, TOOL_NAMES, server.tools))
    await anyio.sleep(1)
    await list_everything(client, ("tools/list",))
    if listen is not None:
        await listen.close()
    else:
        await client.unsubscribe_resource(watched)
