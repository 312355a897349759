"""Experimental tasks of revision 2025-11-25 (course chapter 08, "Tasks").

A requester can ask for a long request (``tools/call``, and on the other side ``sampling/createMessage``
or ``elicitation/create``) to run as a *task*: it adds ``params.task`` (:class:`TaskMetadata`) and the
receiver answers at once with a :class:`CreateTaskResult` instead of the real result. The requester then
polls ``tasks/get``, fetches the real result with ``tasks/result`` (which blocks until the task ends),
and may ``tasks/list`` or ``tasks/cancel``. Status changes may be pushed as
``notifications/tasks/status``. Either side can be the task receiver.

These core tasks exist only in 2025-11-25. In 2026-07-28 tasks became the extension
``io.modelcontextprotocol/tasks`` with a different shape: see :mod:`mcp_sim.protocol.ext_tasks`.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

from mcp_sim.protocol.base import MCPModel
from mcp_sim.protocol.messages import (
    Notification,
    NotificationParams,
    PaginatedRequest,
    PaginatedResult,
    Request,
    RequestParams,
    Result,
)

TaskStatus: TypeAlias = Literal["working", "input_required", "completed", "failed", "cancelled"]
"""Where a task is in its life; the last three are terminal."""


class TaskMetadata(MCPModel):
    """``params.task`` of a request that should run as a task; ``ttl`` in ms asks how long to keep it."""

    ttl: int | None = None


class RelatedTaskMetadata(MCPModel):
    """``_meta["io.modelcontextprotocol/related-task"]``: links a message to the task it belongs to."""

    taskId: str


class TaskAugmentedRequestParams(RequestParams):
    """Params of a request that may be run as a task."""

    task: TaskMetadata | None = None


class Task(MCPModel):
    """The state of one task. ``ttl`` (ms, or ``null`` for unlimited) is how long the receiver keeps it."""

    taskId: str
    status: TaskStatus
    statusMessage: str | None = None
    createdAt: str
    lastUpdatedAt: str
    ttl: int | None
    pollInterval: int | None = None


class CreateTaskResult(Result):
    """The immediate answer to a task-augmented request: the new :class:`Task`."""

    task: Task


class TaskIdRequestParams(RequestParams):
    """Params naming one task (unnamed in the schema): used by ``tasks/get``, ``tasks/result``, ``tasks/cancel``."""

    taskId: str


class GetTaskRequest(Request):
    """``tasks/get``: poll a task's status."""

    method: Literal["tasks/get"] = "tasks/get"
    params: TaskIdRequestParams


class GetTaskResult(Result, Task):
    """The task's current state (a Result that is also a Task)."""


class GetTaskPayloadRequest(Request):
    """``tasks/result``: wait for the task to end and get what the original request would have returned."""

    method: Literal["tasks/result"] = "tasks/result"
    params: TaskIdRequestParams


class GetTaskPayloadResult(Result):
    """The original request's result (e.g. a ``CallToolResult``), whatever its shape."""


class ListTasksRequest(PaginatedRequest):
    """``tasks/list``: page through the receiver's tasks."""

    method: Literal["tasks/list"] = "tasks/list"


class ListTasksResult(PaginatedResult):
    """One page of tasks."""

    tasks: list[Task]


class CancelTaskRequest(Request):
    """``tasks/cancel``: ask the receiver to stop a task (``notifications/cancelled`` must not be used)."""

    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: TaskIdRequestParams


class CancelTaskResult(Result, Task):
    """The task's state after the cancellation request."""


class TaskStatusNotificationParams(NotificationParams, Task):
    """Params of ``notifications/tasks/status``: the whole :class:`Task`."""


class TaskStatusNotification(Notification):
    """``notifications/tasks/status``: a task changed status (optional; requesters must still poll)."""

    method: Literal["notifications/tasks/status"] = "notifications/tasks/status"
    params: TaskStatusNotificationParams


__all__ = [
    "CancelTaskRequest",
    "CancelTaskResult",
    "CreateTaskResult",
    "GetTaskPayloadRequest",
    "GetTaskPayloadResult",
    "GetTaskRequest",
    "GetTaskResult",
    "ListTasksRequest",
    "ListTasksResult",
    "RelatedTaskMetadata",
    "Task",
    "TaskAugmentedRequestParams",
    "TaskIdRequestParams",
    "TaskMetadata",
    "TaskStatus",
    "TaskStatusNotification",
    "TaskStatusNotificationParams",
]
