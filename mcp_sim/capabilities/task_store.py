"""The server's tasks as data: one :class:`TaskRecord` per task, kept in a :class:`TaskStore`
(2025-11-25 "Tasks" and the 2026-07-28 tasks extension; course chapter 08).

A task outlives the request that started it and the connection that sent it, so the server keeps it
here, keyed by ``taskId`` and owned by the caller that created it. How tasks start, wait for input
and answer ``tasks/*`` requests is :mod:`mcp_sim.capabilities.tasks`.
"""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import anyio

from mcp_sim.capabilities.mrtr import InputRequest
from mcp_sim.protocol.errors import invalid_params

logger = logging.getLogger(__name__)

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
    process: int | None = None
    """The number of the server session whose process holds the task in memory, when one connection
    is one process (stdio): the task goes with it. ``None`` where the process outlives connections."""
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
                # Only what is still unanswered: a client may answer the requests one tasks/update at a time.
                out["inputRequests"] = {k: r.to_json(self.revision) for k, r in self.input_requests.items()
                                        if k not in self.input_responses}
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

    def forget(self, record: TaskRecord, why: str) -> None:
        """Drop ``record`` because its work can never finish (see ``tasks.sim-crash-forgets-tasks``):
        its waiters are woken, and the next ``tasks/*`` for it is ``-32602``, as on a server that
        restarted empty."""
        if self.tasks.get(record.task_id) is record:
            del self.tasks[record.task_id]
            logger.info("task %s forgotten: %s", record.task_id, why)
        if record.scope is not None:
            record.scope.cancel()
        record.done.set()

    def forget_owner(self, owner: str, why: str) -> int:
        """Forget every task of ``owner`` (a legacy session that ended: nobody can ask for them again);
        how many there were."""
        doomed = [r for r in self.tasks.values() if r.owner == owner]
        for record in doomed:
            self.forget(record, why)
        return len(doomed)

    def forget_process(self, session: int, why: str) -> int:
        """Forget every task held by the process of server session ``session`` (a stdio process that
        exited); how many there were."""
        doomed = [r for r in self.tasks.values() if r.process == session]
        for record in doomed:
            self.forget(record, why)
        return len(doomed)

    def forget_all(self, why: str) -> int:
        """Forget every task: the process that held them all restarted empty (an HTTP server's crash);
        how many there were."""
        doomed = list(self.tasks.values())
        for record in doomed:
            self.forget(record, why)
        return len(doomed)

    def find(self, task_id: Any, owner: str, now: float) -> TaskRecord:
        """The caller's task ``task_id``, or ``-32602`` (unknown, expired, or someone else's)."""
        self.purge(now)
        record = self.tasks.get(task_id) if isinstance(task_id, str) else None
        if record is None or record.owner != owner:
            raise invalid_params(f"Unknown task: {task_id}",
                                 rule="tasks/* for an unknown or expired taskId is -32602.")
        return record
