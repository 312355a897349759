"""Tasks: call now, fetch the result later (2025-11-25 experimental "Tasks" utility, and the 2026-07-28
extension ``io.modelcontextprotocol/tasks``; course chapter 08).

A long-running ``tools/call`` can answer at once with a *task* and keep working; the client polls it.

* **2025-11-25** (core, experimental): the client opts in per call with ``params.task``; the server
  answers ``CreateTaskResult {task}``; ``tasks/get`` shows the ``Task``, ``tasks/result`` waits for the
  tool's own result, ``tasks/list`` and ``tasks/cancel`` do what they say, and
  ``notifications/tasks/status`` reports changes. A tool says whether it may run as a task with
  ``execution.taskSupport`` (``forbidden``/``optional``/``required``).
* **2026-07-28 extension**: the client declares the extension in each request's capabilities and the
  *server* decides; the answer is the task itself, flattened, with ``resultType: "task"``.
  ``tasks/get`` returns a ``DetailedTask`` (the result or error inside once finished, the open
  ``inputRequests`` while it waits for the user), ``tasks/update`` delivers ``inputResponses``, and
  ``tasks/cancel`` asks it to stop. Status changes reach ``subscriptions/listen`` streams that named the
  task in ``taskIds``.

Tasks live on the server, not the connection, so a client may poll from a new connection (as every
2026 HTTP request is). Each task belongs to the caller that created it.

They live in the server's *memory*, though (rule ``tasks.sim-crash-forgets-tasks``): when the process
running a task's work dies — a crash, a killed stdio process — the work stops and the task is
forgotten, so a restarted server answers ``-32602`` for it, as a server restarted empty would, rather
than showing it ``working`` for ever. On stdio one connection is one process, so every task it held,
finished or not, goes when it ends; over HTTP (and the memory links of tests, which stand for new
connections to one server) the process outlives connections, and a crash forgets the tasks still
running. A task whose owner can never ask again (a legacy
session that ended) is forgotten with its session. The extension calls tasks durable: a server that keeps them in
durable storage would survive the crash and is just as compliant. Either way the client learns the
task's fate: see :class:`~mcp_sim.roles.client.tasks.TaskLost`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal, Protocol

import anyio

from mcp_sim.capabilities.context import Context
from mcp_sim.capabilities.mrtr import ClientInputUnavailable, InputRequest
from mcp_sim.capabilities.pagination import page_result
from mcp_sim.capabilities.subscriptions import Change
from mcp_sim.capabilities.task_store import TERMINAL, TaskRecord, TaskStatus, TaskStore, iso_time
from mcp_sim.protocol.errors import (
    INTERNAL_ERROR,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    McpError,
    invalid_params,
)
from mcp_sim.protocol.lifecycle import has_capability
from mcp_sim.protocol.meta import RELATED_TASK
from mcp_sim.protocol.revisions import TASKS_EXTENSION, revision_at

logger = logging.getLogger(__name__)

__all__ = [
    "TASKS_EXTENSION", "TERMINAL", "RunTool", "TaskContext", "TaskRecord", "TaskStatus", "TaskStore", "TaskTool",
    "cancel_task", "client_has_tasks_extension", "get_task", "iso_time", "list_tasks", "require_tasks_extension",
    "require_tasks_extension_to_listen", "set_status",
    "start_tool_task", "task_result", "update_task", "wait_for_input",
]
"""The task records and store live in :mod:`.task_store`; they are named here too, where callers look."""


class TaskTool(Protocol):
    """What starting a task needs to know about the tool (a ``ToolDefinition`` is one)."""

    @property
    def name(self) -> str: ...
    @property
    def task_support(self) -> str: ...
    @property
    def ask_first(self) -> Mapping[str, InputRequest] | None: ...


RunTool = Callable[..., Awaitable[dict[str, Any]]]
"""``run(ctx, tool, arguments, passthrough_errors, input_unavailable)``: how the tools capability runs a
tool (``capabilities.tools.run_tool``), handed in so tasks build on tools without importing them."""


class TaskContext(Context):
    """The context of a task's background work: the same caller and request, no longer tied to the
    request's own stream (its response has been sent). When the work asks the client for input, the
    task's status says so: ``input_required`` while it waits, ``working`` again once answered."""

    def __init__(self, ctx: Context, record: TaskRecord, gathered: Mapping[str, Any] | None = None) -> None:
        super().__init__(ctx.session, ctx.request_id, ctx.method, ctx.params, ctx.revision, ctx.modern_meta)
        self.task = record
        self._related = None
        self.request_state_nonce = ctx.request_state_nonce
        self.gathered = dict(gathered or {})
        """Answers gathered before the task started (the tool's ``ask_first``)."""

    async def ask(self, requests: Mapping[str, InputRequest]) -> dict[str, Any]:
        if requests and all(k in self.gathered for k in requests):
            return {k: self.gathered[k] for k in requests}  # asked before the task started
        if self.task.flavor == "extension":
            for r in requests.values():
                path = r.capability(self.revision)
                if not has_capability(self.client_capabilities, path):
                    raise ClientInputUnavailable(f"The request that started this task did not declare the "
                                                 f"'{path}' capability, so the task cannot ask for {r.method}")
            return await wait_for_input(self, self.task, requests)
        return await super().ask(requests)

    async def _ask_legacy(self, requests: Mapping[str, InputRequest]) -> dict[str, Any]:
        self._check_legacy(requests)
        set_status(self, self.task, "input_required", "waiting for the client's input")
        answers = await self._send_legacy(requests, {RELATED_TASK: {"taskId": self.task.task_id}})
        set_status(self, self.task, "working")
        return answers


def client_has_tasks_extension(ctx: Context) -> bool:
    """Did *this request* declare the tasks extension in its client capabilities?"""
    caps = ctx.client_capabilities or {}
    extensions = caps.get("extensions")
    return isinstance(extensions, Mapping) and TASKS_EXTENSION in extensions


def set_status(ctx: Context, record: TaskRecord, status: TaskStatus, message: str | None = None) -> None:
    record.status = status
    record.status_message = message
    record.updated_at = ctx.now()
    if status in TERMINAL:
        record.input_requests = {}
        record.done.set()
    ctx.server.notify_change(Change("task", task_id=record.task_id))
    if record.flavor == "core":
        ctx.session.send_soon("notifications/tasks/status", record.task_json())


async def start_tool_task(ctx: Context, tool: TaskTool, arguments: Mapping[str, Any],
                          run: RunTool) -> dict[str, Any] | None:
    """Start ``tool`` as a task when the revision, the tool and the request call for it; otherwise
    return ``None`` and let the call run normally."""
    server = ctx.server
    if ctx.is_modern:
        if tool.task_support == "forbidden" or not server.tasks_extension:
            return None
        if not client_has_tasks_extension(ctx):
            if tool.task_support == "required":
                raise McpError(MISSING_REQUIRED_CLIENT_CAPABILITY,
                               f"Tool {tool.name} runs only as a task: declare the {TASKS_EXTENSION} extension",
                               {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}},
                               rule="A server that needs an undeclared client capability answers -32021.",
                               revision=ctx.revision)
            return None
        gathered = await _ask_first(ctx, tool)
        record = _create(ctx, tool, run, "extension", server.task_ttl_ms, gathered)
        out = record.extension_json(detailed=False)
        return {"resultType": "task", **out}
    if not revision_at(ctx.revision).has_tasks:
        return None
    wants = isinstance(ctx.params.get("task"), Mapping)
    if tool.task_support == "required" and not wants:
        raise McpError(METHOD_NOT_FOUND, f"Tool {tool.name} must be called as a task (taskSupport: required)",
                       rule="A tool whose execution.taskSupport is required must be invoked with params.task; "
                            "servers answer -32601 otherwise.", revision=ctx.revision)
    if not wants:
        return None
    if tool.task_support == "forbidden":
        raise McpError(METHOD_NOT_FOUND, f"Tool {tool.name} does not support task-augmented calls",
                       rule="Clients MUST NOT call a tool as a task unless its execution.taskSupport allows it.",
                       revision=ctx.revision)
    requested = ctx.params["task"].get("ttl")
    ttl = requested if isinstance(requested, int) and requested >= 0 else server.task_ttl_ms
    record = _create(ctx, tool, run, "core", ttl, await _ask_first(ctx, tool))
    return {"task": record.task_json()}


async def _ask_first(ctx: Context, tool: TaskTool) -> dict[str, Any]:
    """The input a task needs before it starts, asked for on the call itself: a modern call answers
    ``InputRequiredResult`` until the client has answered every key (so the task's ``CreateTaskResult``
    comes on the final round, and carries no ``requestState``); a legacy session asks by request."""
    needs = tool.ask_first
    return await ctx.ask(dict(needs)) if needs else {}


def _create(ctx: Context, tool: TaskTool, run: RunTool, flavor: Literal["core", "extension"],
            ttl: int | None, gathered: Mapping[str, Any] | None = None) -> TaskRecord:
    server = ctx.server
    now = ctx.now()
    task_id = f"task-{server.next_number('task')}"
    # On stdio one connection is one server process: its tasks live and die with it.
    one_process = getattr(getattr(ctx.session.stream, "info", None), "transport", None) == "stdio"
    record = TaskRecord(task_id=task_id, owner=ctx.caller_key, flavor=flavor, tool=tool.name, created_at=now,
                        updated_at=now, ttl_ms=ttl, poll_interval_ms=server.task_poll_interval_ms,
                        revision=ctx.revision, process=ctx.session.number if one_process else None)
    server.task_store.tasks[task_id] = record
    task_ctx = TaskContext(ctx, record, gathered)
    arguments = dict(ctx.params.get("arguments") or {})

    async def work() -> None:
        try:
            with anyio.CancelScope() as scope:
                record.scope = scope
                try:
                    result = await run(task_ctx, tool, arguments, (McpError,), ClientInputUnavailable)
                except McpError as exc:
                    record.error = exc.to_error_object().to_dict()
                    set_status(task_ctx, record, "failed", exc.message)
                    return
                if record.flavor == "extension":
                    result = {"resultType": "complete", **result}
                record.result = result
                # 2025-11-25 counts a tool result with isError: true as a failed task (tasks/result still
                # returns that result); the extension keeps "failed" for JSON-RPC errors only.
                failed = record.flavor == "core" and result.get("isError") is True
                set_status(task_ctx, record, "failed" if failed else "completed")
        finally:
            record.scope = None
            if not record.is_terminal:
                # Not finished, not cancelled by tasks/cancel: what ran the work is gone (the server
                # process died, its connection broke). A restarted server does not know this task.
                server.task_store.forget(record, "the server process running it ended")

    ctx.session.spawn(work)
    return record


async def wait_for_input(ctx: Context, record: TaskRecord, requests: Mapping[str, InputRequest]) -> dict[str, Any]:
    """Inside a 2026 task: publish ``inputRequests``, wait until ``tasks/update`` answers them all."""
    for key in requests:  # a key asked again in a later round waits for a new answer
        record.input_responses.pop(key, None)
    record.input_requests = dict(requests)
    record.answered = anyio.Event()
    set_status(ctx, record, "input_required", "waiting for the client's input")
    await record.answered.wait()
    answers = {k: record.input_responses[k] for k in requests}
    record.input_requests = {}
    set_status(ctx, record, "working")
    return answers


# --- the requests ---------------------------------------------------------------------------------

def require_tasks_extension_to_listen(ctx: Context, requested: Mapping[str, Any]) -> None:
    """2026-07-28: a ``subscriptions/listen`` that asks for ``taskIds`` must declare the extension (``-32021``)."""
    if "taskIds" in requested and ctx.server.tasks_extension and not client_has_tasks_extension(ctx):
        raise McpError(MISSING_REQUIRED_CLIENT_CAPABILITY,
                       f"Task notifications belong to the {TASKS_EXTENSION} extension: declare it in this "
                       f"request's client capabilities", {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}},
                       rule="A listen request for taskIds from a client that did not declare the tasks extension "
                            "is answered -32021.", revision=ctx.revision)


def require_tasks_extension(ctx: Context) -> None:
    """2026-07-28: a ``tasks/*`` request whose ``_meta`` does not declare the extension is answered
    ``-32021`` (checked before the task id, so it is never mistaken for an unknown task). A request with
    no ``_meta`` at all is let through: the extension's own schema does not require one."""
    if ctx.is_modern and "_meta" in ctx.params and not client_has_tasks_extension(ctx):
        raise McpError(MISSING_REQUIRED_CLIENT_CAPABILITY,
                       f"{ctx.method} belongs to the {TASKS_EXTENSION} extension: declare it in this request's "
                       f"client capabilities", {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}},
                       rule="A server that needs an undeclared client capability answers -32021.",
                       revision=ctx.revision)


async def get_task(ctx: Context) -> dict[str, Any]:
    """``tasks/get``: a 2025-11-25 ``Task``, or the extension's ``DetailedTask``."""
    require_tasks_extension(ctx)
    record = ctx.server.task_store.find(ctx.params.get("taskId"), ctx.caller_key, ctx.now())
    return record.extension_json() if ctx.is_modern else record.task_json()


async def task_result(ctx: Context) -> dict[str, Any]:
    """``tasks/result`` (2025-11-25): wait for the task to finish, then return the tool's own result."""
    record = ctx.server.task_store.find(ctx.params.get("taskId"), ctx.caller_key, ctx.now())
    await record.done.wait()
    related = {RELATED_TASK: {"taskId": record.task_id}}
    if record.status in ("completed", "failed") and record.result is not None:
        result = dict(record.result)
        result["_meta"] = {**(result.get("_meta") or {}), **related}
        return result
    if record.status == "failed" and record.error is not None:
        raise McpError(record.error["code"], record.error["message"], record.error.get("data"))
    raise McpError(INTERNAL_ERROR, f"Task {record.task_id} was cancelled", {"taskId": record.task_id})


async def list_tasks(ctx: Context) -> dict[str, Any]:
    """``tasks/list`` (2025-11-25): the caller's tasks, oldest first, paginated."""
    store = ctx.server.task_store
    store.purge(ctx.now())
    mine = [r for r in store.tasks.values() if r.owner == ctx.caller_key]
    result, _ = page_result("tasks", mine, ctx.params.get("cursor"), ctx.server.page_size, "tasks",
                            lambda r: r.task_json())
    return result


async def cancel_task(ctx: Context) -> dict[str, Any]:
    """``tasks/cancel``: stop the work. In 2025-11-25 a task that already finished cannot be cancelled
    (``-32602``); the extension acknowledges every cancel of a known task and leaves a finished one as it is."""
    require_tasks_extension(ctx)
    record = ctx.server.task_store.find(ctx.params.get("taskId"), ctx.caller_key, ctx.now())
    if record.is_terminal and ctx.is_modern:
        return {}  # the extension only acknowledges: cancelling is a wish, and a finished task keeps its result
    if record.is_terminal:
        raise invalid_params(f"Task {record.task_id} is already {record.status}",
                             rule="tasks/cancel on a task in a terminal status is -32602.", revision=ctx.revision)
    if record.scope is not None:
        record.scope.cancel()
    set_status(ctx, record, "cancelled", "cancelled by the client")
    return {} if ctx.is_modern else record.task_json()


async def update_task(ctx: Context) -> dict[str, Any]:
    """``tasks/update`` (extension): deliver ``inputResponses`` for the task's open ``inputRequests``.
    Unexpected keys are ignored; the task continues once every open request is answered."""
    require_tasks_extension(ctx)
    record = ctx.server.task_store.find(ctx.params.get("taskId"), ctx.caller_key, ctx.now())
    responses = ctx.params.get("inputResponses")
    if not isinstance(responses, Mapping):
        raise invalid_params("tasks/update needs inputResponses (an object keyed like inputRequests)",
                             revision=ctx.revision)
    for key, value in responses.items():
        if key in record.input_requests:
            record.input_responses[key] = value
    if record.input_requests and all(k in record.input_responses for k in record.input_requests):
        record.answered.set()
    return {}
