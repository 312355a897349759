"""Task stories for course chapter 08: long-running work, told once per era.

The ``tasks`` tour scenario (:mod:`mcp_sim.scenarios.tour`) shows every task method once. The chapter
needs more than a tour: the *same* client behaviour in 2025-11-25 and in 2026-07-28, each on the
virtual clock, so that a learner can compare when things happen, not only what is sent. Each story
here is one such behaviour:

* ``poll`` — start a render as a task and ask ``tasks/get`` every ``pollInterval`` until it is done;
* ``notify`` — start it, then wait for the server to *say* it is done (2025-11-25:
  ``notifications/tasks/status``; 2026-07-28: ``notifications/tasks`` on a ``subscriptions/listen``);
* ``cancel`` — start a long render, cancel it, and look at what is left of it;
* ``expiry`` — come back for a finished task after its ``ttl`` has run out;
* ``rules`` — what a server says when a client ignores ``execution.taskSupport`` or the extension;
* ``input`` — a task that stops to ask the user something (2025-11-25: an ``elicitation/create``
  request tagged with the task; 2026-07-28: ``inputRequests`` in ``tasks/get``, answered by
  ``tasks/update``).

Every message in these traces is produced by the simulator's own Client and Server; the stories only
decide *when* the client asks. :func:`run_tasks_story` runs one in a fresh simulation and returns the
recorder; :func:`timeline` turns a trace into the task's life in seconds of virtual time.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

import anyio

from mcp_sim.protocol.errors import McpError
from mcp_sim.protocol.revisions import LATEST, TASKS_EXTENSION
from mcp_sim.roles.client import Client, ConnectionLost, RequestTimeout
from mcp_sim.roles.client.tasks import task_request_seconds
from mcp_sim.roles.context import Context
from mcp_sim.roles.host import HOST, Host
from mcp_sim.roles.model import ScriptedModel
from mcp_sim.roles.server import Server
from mcp_sim.roles.user import ScriptedUser
from mcp_sim.sim.world import Simulation

if TYPE_CHECKING:
    from mcp_sim.trace.event import TraceEvent
    from mcp_sim.trace.recorder import Recorder

POLL_INTERVAL_MS: Final = 5_000
"""How often the studio asks to be polled: every five simulated seconds."""
FRAME_SECONDS: Final = 8
"""One rendered frame takes eight simulated seconds, so a poll and a finish never fall on the same tick."""
TERMINAL: Final = frozenset({"completed", "failed", "cancelled"})
TASK_REVISIONS: Final = ("2025-11-25", "2026-07-28")
"""The revisions with tasks: 2025-11-25 in its core, 2026-07-28 through the extension."""


def studio(*, ttl_ms: int | None = 60_000) -> Server:
    """A server with slow jobs, one per ``execution.taskSupport`` value (and one that asks the user).

    ``render`` may run as a task (``optional``), ``export`` only as one (``required``), ``preview``
    never (``forbidden``, the default), and ``publish`` asks the user before it goes on."""
    server = Server("studio", version="1.0.0", title="Studio", task_ttl_ms=ttl_ms,
                    task_poll_interval_ms=POLL_INTERVAL_MS)

    @server.tool(task_support="optional", annotations={"readOnlyHint": True})
    async def render(ctx: Context, frames: int = 3) -> str:
        """Render ``frames`` frames, eight simulated seconds each."""
        for n in range(1, frames + 1):
            await ctx.sleep(FRAME_SECONDS)
            await ctx.report_progress(n, frames)
        return f"rendered {frames} frames"

    @server.tool(task_support="required")
    async def export(ctx: Context) -> str:
        """Export the project: only ever runs as a task (five simulated seconds)."""
        await ctx.sleep(5)
        return "exported project.zip"

    @server.tool(task_support="optional")
    async def publish(ctx: Context) -> str:
        """Publish the render, after the user says yes."""
        await ctx.sleep(3)
        answer = await ctx.elicit("Publish the render to the public gallery?", {
            "type": "object", "required": ["publish"],
            "properties": {"publish": {"type": "boolean", "title": "Publish"}}})
        await ctx.sleep(4)
        content = answer.get("content") or {}
        return "published" if answer.get("action") == "accept" and content.get("publish") else "kept private"

    @server.tool(annotations={"readOnlyHint": True})
    def preview() -> str:
        """A quick low-resolution preview: never a task."""
        return "preview ready"

    return server


# --- what every story does the same way in both eras -------------------------------------------------

class TaskClient:
    """One client's task verbs, spoken in its era: the 2025-11-25 ``task`` field and ``tasks/result``,
    or the 2026-07-28 extension declared in each request's capabilities."""

    def __init__(self, host: Host, client: Client) -> None:
        self.host = host
        self.client = client
        self.me = f"client/{client.server_name}"
        self.modern = client.era == "modern"
        self.caps: dict[str, Any] | None = (
            {**client.capabilities(), "extensions": {TASKS_EXTENSION: {}}} if self.modern else None)

    def say(self, text: str) -> None:
        self.host.say(self.me, HOST, text)

    async def start(self, tool: str, arguments: Mapping[str, Any] | None = None, *,
                    ttl_ms: int | None = None) -> dict[str, Any]:
        """Call ``tool`` as a task and return the ``Task`` the server created."""
        if self.modern:
            return await self.client.call_tool(tool, arguments or {}, capabilities=self.caps)
        task: dict[str, Any] = {} if ttl_ms is None else {"ttl": ttl_ms}
        created = await self.client.request("tools/call", {"name": tool, "arguments": dict(arguments or {}),
                                                           "task": task})
        return dict(created["task"])

    async def request(self, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        return await self.client.request(method, params, capabilities=self.caps)

    async def get(self, task_id: str, *, timeout: float | None = None) -> dict[str, Any]:
        return await self.client.request("tasks/get", {"taskId": task_id}, capabilities=self.caps, timeout=timeout)

    async def try_request(self, method: str, params: Mapping[str, Any]) -> dict[str, Any] | McpError:
        """The result, or the error the server answered (it is in the trace either way)."""
        try:
            return await self.request(method, params)
        except McpError as exc:
            return exc

    @staticmethod
    def poll_seconds(task: Mapping[str, Any]) -> float:
        """The wait the server asked for: ``pollInterval`` (2025-11-25) or ``pollIntervalMs`` (extension)."""
        interval = task.get("pollInterval", task.get("pollIntervalMs"))
        return (interval if isinstance(interval, int) and interval > 0 else 1_000) / 1000

    async def poll(self, task: Mapping[str, Any]) -> dict[str, Any]:
        """``tasks/get`` every ``pollInterval`` until the task is in a terminal status."""
        current = dict(task)
        answered = True
        while current["status"] not in TERMINAL and current["status"] != "input_required":
            if answered:
                await anyio.sleep(self.poll_seconds(current))
            try:
                # A poll has its own short deadline (two intervals) and, when lost, is sent again at
                # once: the next poll was due one interval later anyway, so a lost poll costs one interval.
                current = await self.get(current["taskId"], timeout=task_request_seconds(current, self.client.timeout))
                answered = True
            except RequestTimeout:
                # The task lives on the server, not in this request.
                self.say("a poll got no answer; the task is still on the server, so poll again")
                answered = False
        return current

    async def outcome(self, task: Mapping[str, Any]) -> dict[str, Any] | McpError:
        """The tool's own result once the task is over: ``tasks/result`` (2025-11-25), or the ``result``
        already inside the extension's ``DetailedTask``."""
        if self.modern:
            return dict(task.get("result") or {})
        return await self.try_request("tasks/result", {"taskId": task["taskId"]})


Story = Callable[[TaskClient], Awaitable[None]]


async def poll(tc: TaskClient) -> None:
    """Poll: the client asks ``tasks/get`` every ``pollInterval`` seconds until the render is done."""
    task = await tc.start("render", {"frames": 3})
    tc.say(f"{task['taskId']} started; asking again every {tc.poll_seconds(task):g} s")
    done = await tc.poll(task)
    await tc.outcome(done)
    tc.say(f"{done['taskId']} is {done['status']}")


async def notify(tc: TaskClient) -> None:
    """Push: the client waits, without polling, for the server to announce the end of the task."""
    task = await tc.start("render", {"frames": 3})
    task_id = task["taskId"]
    finished = anyio.Event()
    callbacks = tc.client.callbacks
    passed_on = callbacks.on_notification

    def hear(server: str, method: str, params: dict[str, Any]) -> None:
        if passed_on is not None:
            passed_on(server, method, params)
        if method in ("notifications/tasks/status", "notifications/tasks") and params.get("taskId") == task_id \
                and params.get("status") in TERMINAL:
            finished.set()

    callbacks.on_notification = hear
    watch = await tc.client.listen({"taskIds": [task_id]}, capabilities=tc.caps) if tc.modern else None
    with anyio.move_on_after(120):
        await finished.wait()
    if watch is not None:
        await watch.close()  # the notification carried the whole DetailedTask, result included
    else:
        await tc.outcome(task)
    tc.say(f"{task_id} finished: the server said so, no polling")


async def cancel(tc: TaskClient) -> None:
    """Cancel: a six-frame render is cancelled after one poll; then the client looks at what is left."""
    task = await tc.start("render", {"frames": 6})
    task_id = task["taskId"]
    await anyio.sleep(tc.poll_seconds(task))
    await tc.get(task_id)
    tc.say("the user changed their mind: cancel the render")
    await tc.request("tasks/cancel", {"taskId": task_id})
    await tc.get(task_id)
    if not tc.modern:
        await tc.outcome(task)
    await tc.try_request("tasks/cancel", {"taskId": task_id})
    await anyio.sleep(45)  # after the render would have finished (48 s), before the ttl runs out (60 s)
    await tc.try_request("tasks/get", {"taskId": task_id})


async def expiry(tc: TaskClient) -> None:
    """Expiry: the export finishes at 5 s; the client looks at 6 s, then comes back at 15 s, after the
    task's ten-second ``ttl`` ran out."""
    task = await tc.start("export", ttl_ms=10_000)
    task_id = task["taskId"]
    await anyio.sleep(6)
    await tc.get(task_id)
    await anyio.sleep(9)
    gone = await tc.try_request("tasks/get", {"taskId": task_id})
    if isinstance(gone, McpError):
        tc.say(f"{task_id} is gone: its ttl ran out at 10 s ({gone.code})")


async def rules(tc: TaskClient) -> None:
    """Negotiation: each tool's ``execution.taskSupport`` (2025-11-25) or the client's declaration of
    the extension (2026-07-28) decides what a ``tools/call`` may do."""
    client = tc.client
    await client.list_tools()
    if not tc.modern:
        for params in ({"name": "export", "arguments": {}}, {"name": "preview", "arguments": {}, "task": {}}):
            try:
                await client.request("tools/call", params)
            except McpError:
                pass  # -32601: the error is in the trace
        return
    try:
        await client.call_tool("export", {})  # the extension is not declared
    except McpError:
        pass
    await client.call_tool("render", {"frames": 1})  # not declared: runs inline, the answer takes 8 s
    task = await tc.start("render", {"frames": 1})
    try:
        await client.request("tasks/get", {"taskId": task["taskId"]})  # tasks/get without the extension
    except McpError:
        pass


async def ask_user(tc: TaskClient) -> None:
    """Input: the ``publish`` task stops until the user answers a question."""
    task = await tc.start("publish")
    current = await tc.poll(task)
    if current["status"] == "input_required":
        # 2026-07-28: the question is inside the task; the Host asks the user, tasks/update answers.
        ask = tc.client.callbacks.elicitation
        answers = {}
        for key, request in (current.get("inputRequests") or {}).items():
            if request.get("method") == "elicitation/create" and ask is not None:
                answers[key] = await ask(tc.client.server_name, dict(request.get("params") or {}))
        await tc.request("tasks/update", {"taskId": task["taskId"], "inputResponses": answers})
        current = await tc.poll({**current, "status": "working"})
    await tc.outcome(current)


STORIES: Final[Mapping[str, Story]] = {"poll": poll, "notify": notify, "cancel": cancel, "expiry": expiry,
                                       "rules": rules, "input": ask_user}
"""The stories by name, in the chapter's order."""


def run_tasks_story(story: str, *, revision: str = LATEST, transport: str = "memory", seed: int = 0,
                    faults: Mapping[str, Any] | None = None) -> Recorder:
    """Run one story against a fresh :func:`studio` (the ``expiry`` story's keeps tasks ten seconds)
    in a new simulation and return its recorder. The keywords are the trace player's fork options."""
    if story not in STORIES:
        raise KeyError(f"unknown task story {story!r}; known: {', '.join(STORIES)}")
    if revision not in TASK_REVISIONS:
        raise ValueError(f"revision {revision!r} has no tasks; the stories run in {', '.join(TASK_REVISIONS)}")
    sim = Simulation(seed)

    async def main() -> None:
        server = studio(ttl_ms=10_000 if story == "expiry" else 60_000)
        user = ScriptedUser([{"publish": True}])
        async with Host(model=ScriptedModel([]), user=user) as host:
            client = await host.add_server("studio", server, transport=transport, revision=revision,
                                           faults=(faults or {}).get("studio"))
            tc = TaskClient(host, client)
            try:
                await STORIES[story](tc)
            except (RequestTimeout, ConnectionLost, McpError) as exc:  # a fork that dropped a message
                tc.say(f"the story stops here: {exc}")

    sim.run(main)
    recorder: Recorder = sim.recorder
    return recorder


# --- reading a trace as a task's life ---------------------------------------------------------------

def _task_of(e: TraceEvent) -> Mapping[str, Any] | None:
    """The task a message shows, if it shows one (a created task, a polled task, a status push)."""
    message = e.message or {}
    body = message.get("result") if e.kind == "response" else message.get("params")
    if not isinstance(body, Mapping):
        return None
    if e.kind == "response" and isinstance(body.get("task"), Mapping):
        return body["task"]  # 2025-11-25 CreateTaskResult
    return body if "status" in body and "taskId" in body else None


def describe(e: TraceEvent) -> str:
    """One short phrase for a message of a task's life: its method and what it says about the task."""
    message = e.message or {}
    method = e.method or ""
    if e.kind == "error":
        return f"{method} → error {message['error']['code']}"
    task = _task_of(e)
    if task is not None:
        status = str(task["status"])
        if "result" in task or ("_meta" in (message.get("result") or {}) and e.method == "tasks/result"):
            status += " + result"
        if "inputRequests" in task:
            status += f" + inputRequests {sorted(task['inputRequests'])}"
        return f"{method} → {task['taskId']} {status}"
    if e.kind == "request":
        params = message.get("params") or {}
        extra = f" {params['name']}" if "name" in params else f" {params['taskId']}" if "taskId" in params else ""
        if "task" in params:
            extra += f" task={params['task']}"
        meta = params.get("_meta")
        if isinstance(meta, Mapping) and (method == "tools/call" or method.startswith("tasks/")):
            caps = meta.get("io.modelcontextprotocol/clientCapabilities") or {}
            declared = TASKS_EXTENSION in (caps.get("extensions") or {})
            if method == "tools/call" or not declared:
                extra += " (declares the tasks extension)" if declared else " (tasks extension NOT declared)"
        return f"{method}{extra}"
    if e.kind == "response" and method == "tasks/result":
        return f"{method} → the tool's result"
    return f"{method} ({e.kind})"


def timeline(trace: Recorder | list[TraceEvent], *, skip: tuple[str, ...] = ("notifications/progress",)) -> str:
    """The messages of a run, one line each: virtual time in seconds, direction, and what the line says
    about the task — the numbers the chapter's questions are about."""
    lines = []
    for e in trace:
        if e.kind not in ("request", "response", "error", "notification") or e.method in skip:
            continue
        arrow = "client → server" if e.sender.startswith("client") else "server → client"
        lost = "  (dropped on the way)" if "dropped" in e.marks else ""
        lines.append(f"{e.t_ms / 1000:6.1f} s  {arrow}  {describe(e)}{lost}")
    return "\n".join(lines)


__all__ = ["FRAME_SECONDS", "POLL_INTERVAL_MS", "STORIES", "TASK_REVISIONS", "TaskClient", "describe", "run_tasks_story", "studio",
           "timeline"]
