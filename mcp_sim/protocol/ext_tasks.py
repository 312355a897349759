"""The tasks extension ``io.modelcontextprotocol/tasks`` (2026-07-28; course chapter 08).

In 2026-07-28 tasks left the core protocol and became an official *extension*, negotiated through
``capabilities.extensions["io.modelcontextprotocol/tasks"]`` on both sides. The models here follow the
extension's own schema (``ext-tasks/draft/schema.json``), so several names repeat those of the
2025-11-25 core tasks in :mod:`mcp_sim.protocol.tasks` with a different shape. What changed:

* Only ``tools/call`` may become a task, and the *server* decides. It answers with a
  :class:`CreateTaskResult` whose task fields sit directly in the result (``resultType: "task"``), not
  under ``task``.
* ``ttl``/``pollInterval`` are renamed ``ttlMs``/``pollIntervalMs``.
* ``tasks/get`` returns a :data:`DetailedTask`: an ``input_required`` task carries ``inputRequests``
  (the MRTR pattern), a ``completed`` one its ``result``, a ``failed`` one its ``error``.
* ``tasks/update`` delivers ``inputResponses`` (it replaces the blocking ``tasks/result``);
  ``tasks/cancel`` asks to stop. There is no ``tasks/list``.
* Status pushes are ``notifications/tasks`` on a ``subscriptions/listen`` stream that asked for
  ``taskIds``.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal, TypeAlias

from pydantic import ConfigDict, Field, TypeAdapter, model_validator

from mcp_sim.protocol.base import MCPModel
from mcp_sim.protocol.messages import Error, Notification, NotificationParams, Request, Result
from mcp_sim.protocol.mrtr import InputRequests, InputResponses
from mcp_sim.protocol.tasks import TaskIdRequestParams, TaskStatus

EXTENSION_ID: Final = "io.modelcontextprotocol/tasks"
"""The key under ``capabilities.extensions`` that switches the extension on."""


class Task(MCPModel):
    """A task's state. ``ttlMs`` (``null`` = unlimited) and ``pollIntervalMs`` are in milliseconds."""

    taskId: str
    status: TaskStatus
    statusMessage: str | None = None
    createdAt: str
    lastUpdatedAt: str
    ttlMs: int | None
    pollIntervalMs: int | None = None


class WorkingTask(Task):
    """The task is running."""

    status: Literal["working"] = "working"


class InputRequiredTask(Task):
    """The task waits for the client: answer ``inputRequests`` with ``tasks/update``."""

    status: Literal["input_required"] = "input_required"
    inputRequests: InputRequests


class CompletedTask(Task):
    """The task finished; ``result`` is what ``tools/call`` would have returned."""

    status: Literal["completed"] = "completed"
    result: dict[str, Any]


class FailedTask(Task):
    """The task failed with a JSON-RPC ``error``."""

    status: Literal["failed"] = "failed"
    error: Error


class CancelledTask(Task):
    """The task was cancelled."""

    status: Literal["cancelled"] = "cancelled"


DetailedTask: TypeAlias = Annotated[
    WorkingTask | InputRequiredTask | CompletedTask | FailedTask | CancelledTask,
    Field(discriminator="status"),
]
"""A task with what its status implies: input requests, a result or an error."""

_DETAILED_TASK: TypeAdapter[Any] = TypeAdapter(DetailedTask)

_NEEDS: Final = {"input_required": "inputRequests", "completed": "result", "failed": "error"}


class _DetailedTaskFields(Task):
    """A :class:`Task` plus whichever of ``inputRequests``/``result``/``error`` its status requires."""

    inputRequests: InputRequests | None = None
    result: dict[str, Any] | None = None
    error: Error | None = None

    @model_validator(mode="after")
    def _status_brings_its_field(self) -> _DetailedTaskFields:
        needed = _NEEDS.get(self.status)
        if needed is not None and getattr(self, needed) is None:
            raise ValueError(f"a task with status {self.status!r} must carry {needed!r}")
        return self

    def detailed(self) -> Any:
        """The matching :data:`DetailedTask` variant (``WorkingTask``, ``CompletedTask`` ...)."""
        fields = set(Task.model_fields) | {"inputRequests", "result", "error"}
        data = {k: v for k, v in self.to_json().items() if k in fields}
        return _DETAILED_TASK.validate_python(data)


class CreateTaskResult(Result, Task):
    """The server chose to run ``tools/call`` as a task: the task's fields, flattened, ``resultType: "task"``."""

    resultType: Literal["task"] = "task"


class GetTaskRequest(Request):
    """``tasks/get``: the task's current state."""

    method: Literal["tasks/get"] = "tasks/get"
    params: TaskIdRequestParams


class GetTaskResult(Result, _DetailedTaskFields):
    """A :data:`DetailedTask` as a result (``resultType: "complete"``)."""

    resultType: Literal["complete"] = "complete"


class UpdateTaskRequestParams(TaskIdRequestParams):
    """The answers to an ``input_required`` task's ``inputRequests`` (unnamed in the schema)."""

    inputResponses: InputResponses


class UpdateTaskRequest(Request):
    """``tasks/update``: deliver input a task asked for."""

    method: Literal["tasks/update"] = "tasks/update"
    params: UpdateTaskRequestParams


class UpdateTaskResult(Result):
    """Acknowledges ``tasks/update``."""

    resultType: Literal["complete"] = "complete"


class CancelTaskRequest(Request):
    """``tasks/cancel``: ask the server to stop a task (cooperative: it may still complete)."""

    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: TaskIdRequestParams


class CancelTaskResult(Result):
    """Acknowledges ``tasks/cancel``."""

    resultType: Literal["complete"] = "complete"


class TaskStatusNotificationParams(NotificationParams, _DetailedTaskFields):
    """The whole :data:`DetailedTask`, plus the notification ``_meta``."""


class TaskStatusNotification(Notification):
    """``notifications/tasks``: a watched task changed (sent on a ``subscriptions/listen`` stream)."""

    method: Literal["notifications/tasks"] = "notifications/tasks"
    params: TaskStatusNotificationParams


class TaskSubscriptionNotifications(MCPModel):
    """What the extension adds to ``SubscriptionFilter``: the ``taskIds`` to watch."""

    taskIds: list[str] | None = None


class TaskSubscriptionAcknowledgedNotifications(MCPModel):
    """What the extension adds to the acknowledged filter: the ``taskIds`` the server will report on."""

    taskIds: list[str] | None = None


class TasksExtensionCapability(MCPModel):
    """The (empty) settings object under ``capabilities.extensions["io.modelcontextprotocol/tasks"]``."""

    model_config = ConfigDict(extra="forbid")


TasksExtensionRequest: TypeAlias = Annotated[
    GetTaskRequest | UpdateTaskRequest | CancelTaskRequest, Field(discriminator="method")
]
"""Every request the extension defines (client to server)."""
