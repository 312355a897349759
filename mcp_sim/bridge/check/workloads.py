"""The standard workloads: discover what a server offers and exercise all of it (chapter 12).

A workload is a named list of steps; each step is an async function of an :class:`EraSession`. Every
request a step sends is *marked* with what the server is expected to do (``expect:result``,
``expect:method-not-found``, ``expect:unsupported-version`` …) so that the checkers in
:mod:`mcp_sim.bridge.check.expectations`, which read only the trace, know which answer to hold it to.
The workload itself judges nothing.

The steps follow the spec's order of things: lists first (following ``nextCursor`` page by page),
then calls with valid and with invalid arguments, reads, prompts, ``ping`` (legacy only: the
2026-07-28 revision has no ``ping``), a Multi Round-Trip Request where a tool asks for input
(2026-07-28), a few requests in flight at once, and a cancelled call. Tasks (both eras) and
2026-07-28 listen streams, where the server offers them, are asked for by :mod:`.workloads_tasks`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Final

import anyio

from mcp_sim.bridge.check.session import CAPABILITIES_KEY, UNSUPPORTED_VERSION, EraSession, example_arguments
from mcp_sim.bridge.check.workloads_tasks import listen, task_tools, tasks

Step = Callable[[EraSession], Awaitable[None]]

MAX_PAGES: Final = 5
UNKNOWN_URI: Final = "mcp-sim-check://no/such/resource"
BAD_CURSOR: Final = "mcp-sim-check:a-cursor-nobody-issued"
LISTS: Final = (("tools", "tools/list", "tools"), ("resources", "resources/list", "resources"),
                ("resources", "resources/templates/list", "resourceTemplates"),
                ("prompts", "prompts/list", "prompts"))
"""(capability, method, member of the result that holds the items)."""


# --- the steps -----------------------------------------------------------------------------------

async def version_probe(session: EraSession) -> None:
    """Modern: a request naming a version nobody supports (-32022 expected) and one without ``_meta``
    (-32602 expected). Legacy negotiation is probed on a link of its own (see :mod:`.run`)."""
    if session.era != "modern" or session.link.transport != "stdio":
        return  # over HTTP the version travels in headers too: http_probes probes it there, with the statuses
    await session.link.request("tools/list", session.params(version=UNSUPPORTED_VERSION),
                               "expect:unsupported-version")
    await session.link.request("tools/list", {}, "expect:meta-missing")


async def lists(session: EraSession) -> None:
    """Every list, declared or not, page by page: an undeclared list that answers, or a declared one
    refused as unknown, is a capability finding."""
    for capability, method, member in LISTS:
        declared = "declared:yes" if session.offers(capability) else "declared:no"
        cursor: str | None = None
        for _page in range(MAX_PAGES):
            params = {"cursor": cursor} if cursor is not None else {}
            answer = await session.call(method, params, "expect:list", declared, f"capability:{capability}")
            result = (answer or {}).get("result")
            if not isinstance(result, dict):
                break
            items = result.get(member)
            if isinstance(items, list) and session.offers(capability):
                target = {"tools": session.tools, "resources": session.resources,
                          "prompts": session.prompts}.get(member)
                if target is not None:
                    target.extend(i for i in items if isinstance(i, dict))
            cursor = result.get("nextCursor") if isinstance(result.get("nextCursor"), str) else None
            if cursor is None:
                break
    if session.offers("tools"):
        await session.call("tools/list", {"cursor": BAD_CURSOR}, "expect:bad-cursor")


async def calls(session: EraSession) -> None:
    """Up to three tools with valid arguments, one without its required arguments, and an unknown tool."""
    required = [t for t in task_tools(session) if t.get("execution", {}).get("taskSupport") == "required"]
    for tool in session.tools[:3]:
        await session.call("tools/call", {"name": tool.get("name"),
                                          "arguments": example_arguments(tool.get("inputSchema"))},
                           "expect:task-required" if tool in required else "expect:call")
    for tool in session.tools:
        schema = tool.get("inputSchema")
        if isinstance(schema, dict) and schema.get("required"):
            await session.call("tools/call", {"name": tool.get("name"), "arguments": {}},
                               "expect:invalid-arguments")
            break
    if session.offers("tools"):
        await session.call("tools/call", {"name": "mcp-sim-check-no-such-tool", "arguments": {}},
                           "expect:unknown-tool")


async def reads(session: EraSession) -> None:
    """The first resource, and one nobody has."""
    for resource in session.resources[:1]:
        await session.call("resources/read", {"uri": resource.get("uri")}, "expect:result")
    if session.offers("resources"):
        await session.call("resources/read", {"uri": UNKNOWN_URI}, "expect:resource-not-found")


async def prompts(session: EraSession) -> None:
    """The first prompt filled in, the same without its required arguments, and an unknown prompt."""
    for prompt in session.prompts[:1]:
        found = prompt.get("arguments")
        arguments: list[Any] = found if isinstance(found, list) else []
        required = [a.get("name") for a in arguments if isinstance(a, dict) and a.get("required")]
        await session.call("prompts/get", {"name": prompt.get("name"),
                                           "arguments": {str(n): "check" for n in required}}, "expect:result")
        if required:
            await session.call("prompts/get", {"name": prompt.get("name"), "arguments": {}},
                               "expect:prompt-error")
    if session.offers("prompts"):
        await session.call("prompts/get", {"name": "mcp-sim-check-no-such-prompt", "arguments": {}},
                           "expect:prompt-error")


async def basics(session: EraSession) -> None:
    """``ping`` (legacy), an unknown method, and a notification nobody defined (never answered)."""
    if session.era == "legacy":
        await session.call("ping", None, "expect:result")
    await session.call("mcp-sim-check/no-such-method", {}, "expect:method-not-found")
    await session.link.notify("notifications/mcp-sim-check", session.params(), "expect:no-response")


async def concurrent(session: EraSession) -> None:
    """Four requests in flight at once: each answer must carry its own request's id."""
    method = "ping" if session.era == "legacy" else "tools/list" if session.offers("tools") else "server/discover"
    ids = [session.link.new_id() for _ in range(4)]
    for rid in ids:
        await session.call(method, None, "expect:result", "concurrent", wait=False, request_id=rid)
    for rid in ids:
        await session.link.response(rid)


async def cancellation(session: EraSession) -> None:
    """A call cancelled at once with ``notifications/cancelled``; the server must go on serving (it may
    or may not still answer the cancelled call: the two can cross on the wire)."""
    if not session.tools:
        return
    tool = session.tools[0]
    rid = session.link.new_id()
    await session.call("tools/call", {"name": tool.get("name"),
                                      "arguments": example_arguments(tool.get("inputSchema"))},
                       "cancelled", wait=False, request_id=rid)
    await session.link.notify("notifications/cancelled", session.params({"requestId": rid, "reason": "check"}),
                              "expect:no-response", "cancel")
    await anyio.sleep(0.1)
    await session.alive_probe("after-cancel")


async def subscriptions(session: EraSession) -> None:
    """Legacy ``resources/subscribe`` and ``resources/unsubscribe`` of the first resource, where the
    server declares ``resources.subscribe`` (2026-07-28's ``subscriptions/listen`` is the ``listen``
    step, in :mod:`.workloads_tasks`)."""
    resources = session.capabilities.get("resources")
    if session.era != "legacy" or not isinstance(resources, dict) or resources.get("subscribe") is not True:
        return
    for resource in session.resources[:1]:
        for method in ("resources/subscribe", "resources/unsubscribe"):
            await session.call(method, {"uri": resource.get("uri")}, "expect:subscription")


async def mrtr(session: EraSession) -> None:
    """2026-07-28 Multi Round-Trip Requests, where a tool asks: each of the first three tools is called
    once more with the elicitation capability declared; an InputRequiredResult is answered by a retry
    with a new id, every elicitation declined and the ``requestState`` echoed. (The server may ask
    again; the checkers hold the retry to the same rules as any request.)"""
    if session.era != "modern":
        return
    for tool in session.tools[:3]:
        params = session.params({"name": tool.get("name"), "arguments": example_arguments(tool.get("inputSchema"))})
        params["_meta"][CAPABILITIES_KEY] = {"elicitation": {"form": {}}}
        answer = await session.link.request("tools/call", params, "mrtr")
        result = (answer or {}).get("result")
        if not isinstance(result, dict) or result.get("resultType") != "input_required":
            continue
        asks = result.get("inputRequests")
        keys = list(asks) if isinstance(asks, dict) else []
        retry = dict(params, inputResponses={key: {"action": "decline"} for key in keys})
        if "requestState" in result:
            retry["requestState"] = result["requestState"]
        await session.link.request("tools/call", retry, "mrtr", "expect:mrtr-retry")


WORKLOADS: Final[dict[str, tuple[tuple[str, Step], ...]]] = {
    "lifecycle": (("version", version_probe), ("basics", basics)),
    "full": (("version", version_probe), ("lists", lists), ("calls", calls), ("reads", reads),
             ("prompts", prompts), ("basics", basics), ("subscriptions", subscriptions), ("listen", listen), ("tasks", tasks),
             ("mrtr", mrtr), ("concurrent", concurrent), ("cancellation", cancellation)),
}
"""Workloads by name: ``full`` (the default) exercises everything; ``lifecycle`` only the opening."""
