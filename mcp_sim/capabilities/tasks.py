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
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal

import anyio

from mcp_sim.capabilities.mrtr import ClientInputUnavailable, InputRequest
from mcp_sim.capabilities.pagination import page_result
from mcp_sim.capabilities.subscriptions import Change
from mcp_sim.protocol.errors import (
    INTERNAL_ERROR,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    McpError,
    invalid_params,
)
from mcp_sim.protocol.meta import RELATED_TASK

if TYPE_CHECKING:
    from mcp_sim.capabilities.tools import ToolDefinition
    from mcp_sim.roles.context import Context

logger = logging.getLogger(__name__)

TASKS_EXTENSION: Final = "io.modelcontextprotocol/tasks"
TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]
TERMINAL: Final = frozenset({"completed", "failed", "cancelled"})
EPOCH: Final = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
"""Virtual time 0 as a calendar date, so ``createdAt`` reads like a timestamp and stays deterministic."""


def iso_time(seconds: float) -> str:
    """An ISO 8601 UTC timestamp for a moment of virtual time."""
    moment = EPOCH + dt.timedelta(seconds=seconds)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


@dataclass
class TaskRecord:
    """One task as the server remembers it."""

    task_id: str
    owner: str
    flavor: Literal["core", "extension"]
    tool: str
    created_at: float
    ttl_ms: int | None
    poll_interval_ms: int
    status: TaskStatus = "working"
    status_message: str | None = None
    updated_at: float = 0.0
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, InputRequest] = field(default_factory=dict)
    input_responses: dict[str, Any] = field(default_factory=dict)
    revision: str = "2026-07-28"
    done: anyio.Event = field(default_factory=anyio.Event)
    answered: anyio.Event = field(default_factory=anyio.Event)
    scope: anyio.CancelScope | None = None

    @property
    def is_terminal(self) -> bool:
        return self.status in TERMINAL

    def task_json(self) -> dict[str, Any]:
        """The 2025-11-25 ``Task`` object (``ttl``, ``pollInterval``)."""
        out: dict[str, Any] = {"taskId": self.task_id, "status": self.status}
        if self.status_message:
            out["statusMessage"] = self.status_message
        out.update(createdAt=iso_time(self.created_at), lastUpdatedAt=iso_time(self.updated_at), ttl=self.ttl_ms,
                   pollInterval=self.poll_interval_ms)
        return out

    def extension_json(self, detailed: bool = True) -> dict[str, Any]:
        """The extension's ``Task`` (``ttlMs``, ``pollIntervalMs``); ``detailed`` adds what its status
        carries: ``inputRequests``, ``result`` or ``error`` (a ``DetailedTask``)."""
        out: dict[str, Any] = {"taskId": self.task_id, "status": self.status}
        if self.status_message:
            out["statusMessage"] = self.status_message
        out.update(createdAt=iso_time(self.created_at), lastUpdatedAt=iso_time(self.updated_at),
                   ttlMs=self.ttl_ms, pollIntervalMs=self.poll_interval_ms)
        if detailed:
            if self.status == "input_required":
                out["inputRequests"] = {k: r.to_json(self.revision) for k, r in self.input_requests.items()}
            elif self.status == "completed" and self.result is not None:
                out["result"] = self.result
            elif self.status == "failed" and self.error is not None:
                out["error"] = self.error
        return out


class TaskStore:
    """The server's tasks, by id. Expired tasks disappear (their ``ttl`` counts from creation)."""

    def __init__(self) -> None:
        self.tasks: dict[str, TaskRecord] = {}

    def purge(self, now: float) -> None:
        for task_id, record in list(self.tasks.items()):
            if record.ttl_ms is not None and now * 1000 >= record.created_at * 1000 + record.ttl_ms:
                if record.scope is not None:
                    record.scope.cancel()
                del self.tasks[task_id]

    def find(self, task_id: Any, owner: str, now: float) -> TaskRecord:
        """The caller's task ``task_id``, or ``-32602`` (unknown, expired, or someone else's)."""
        self.purge(now)
        record = self.tasks.get(task_id) if isinstance(task_id, str) else None
        if record is None or record.owner != owner:
            raise invalid_params(f"Unknown task: {task_id}",
                                 rule="tasks/* for an unknown or expired taskId is -32602.")
        return record


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


async def start_tool_task(ctx: Context, tool: ToolDefinition, arguments: Mapping[str, Any]) -> dict[str, Any] | None:
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
        record = _create(ctx, tool, "extension", server.task_ttl_ms)
        out = record.extension_json(detailed=False)
        return {"resultType": "task", **out}
    if ctx.revision < "2025-11-25":
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
    record = _create(ctx, tool, "core", ttl)
    return {"task": record.task_json()}


def _create(ctx: Context, tool: ToolDefinition, flavor: Literal["core", "extension"], ttl: int | None) -> TaskRecord:
    from mcp_sim.capabilities.tools import run_tool

    server = ctx.server
    now = ctx.now()
    task_id = f"task-{server.next_number('task')}"
    record = TaskRecord(task_id=task_id, owner=ctx.caller_key, flavor=flavor, tool=tool.name, created_at=now,
                        updated_at=now, ttl_ms=ttl, poll_interval_ms=server.task_poll_interval_ms,
                        revision=ctx.revision)
    server.task_store.tasks[task_id] = record
    task_ctx = ctx.for_task(record)
    arguments = dict(ctx.params.get("arguments") or {})

    async def work() -> None:
        with anyio.CancelScope() as scope:
            record.scope = scope
            try:
                result = await run_tool(task_ctx, tool, arguments, (McpError,), ClientInputUnavailable)
            except McpError as exc:
                record.error = exc.to_error_object().to_dict()
                set_status(task_ctx, record, "failed", exc.message)
                return
            if record.flavor == "extension":
                result = {"resultType": "complete", **result}
            record.result = result
            set_status(task_ctx, record, "completed")
        record.scope = None

    ctx.session.spawn(work)
    return record


async def wait_for_input(ctx: Context, record: TaskRecord, requests: Mapping[str, InputRequest]) -> dict[str, Any]:
    """Inside a 2026 task: publish ``inputRequests``, wait until ``tasks/update`` answers them all."""
    record.input_requests = dict(requests)
    record.answered = anyio.Event()
    set_status(ctx, record, "input_required", "waiting for the client's input")
    await record.answered.wait()
    answers = {k: record.input_responses[k] for k in requests}
    record.input_requests = {}
    set_status(ctx, record, "working")
    return answers


# --- the requests ---------------------------------------------------------------------------------

async def get_task(ctx: Context) -> dict[str, Any]:
    """``tasks/get``: a 2025-11-25 ``Task``, or the extension's ``DetailedTask``."""
    record = ctx.server.task_store.find(ctx.params.get("taskId"), ctx.caller_key, ctx.now())
    return record.extension_json() if ctx.is_modern else record.task_json()


async def task_result(ctx: Context) -> dict[str, Any]:
    """``tasks/result`` (2025-11-25): wait for the task to finish, then return the tool's own result."""
    record = ctx.server.task_store.find(ctx.params.get("taskId"), ctx.caller_key, ctx.now())
    await record.done.wait()
    related = {RELATED_TASK: {"taskId": record.task_id}}
    if record.status == "completed" and record.result is not None:
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
    """``tasks/cancel``: stop the work; a task that already finished cannot be cancelled (``-32602``)."""
    record = ctx.server.task_store.find(ctx.params.get("taskId"), ctx.caller_key, ctx.now())
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
