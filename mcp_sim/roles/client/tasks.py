"""Task-augmented tool calls: start now, poll, collect the result later (course chapter 08; spec
2025-11-25 ``basic/utilities/tasks`` and the 2026-07-28 extension ``io.modelcontextprotocol/tasks``).

Some tools take minutes. Instead of holding a request open that long, the server answers at once
with a *task* and keeps working; the client polls the task until it ends. The two eras do it
differently, and :meth:`TaskCalls.call_tool_as_task` speaks both:

* **2025-11-25** (experimental, core). The server declares ``tasks.requests.tools.call``; a tool says
  in ``execution.taskSupport`` whether it may (``optional``) or must (``required``) run as a task.
  The client opts in per call with ``params.task`` (an optional ``ttl``), gets a ``CreateTaskResult``,
  polls ``tasks/get`` no faster than the task's ``pollInterval`` asks, and once the task has ended
  — or needs input, which the server asks for with ordinary requests the client answers as usual —
  fetches the tool's own result with ``tasks/result``.
* **2026-07-28** (extension). The client declares the extension in the request's capabilities and the
  *server* decides whether to run the call as a task: the answer is then the task itself, flattened,
  with ``resultType: "task"``. ``tasks/get`` returns the task with its ``result`` or ``error`` once it
  has ended; while it waits for the user it lists ``inputRequests``, which the client fulfils through
  its Host and delivers with ``tasks/update``. There is no ``tasks/result``.

Either way the wait has a deadline. When it passes, the client asks the server to stop the work
with ``tasks/cancel`` (``notifications/cancelled`` is never used for tasks) and raises
:class:`TaskTimeout`. Every loop here is bounded: by that deadline on the clock, and by
:data:`MAX_TASK_POLLS`.

**Only the task's deadline ends the task** (rule ``tasks.sim-client-poll-deadline``). The task lives
on the server, not in any one request, so each ``tasks/get``, ``tasks/update`` and (once the task has
ended) ``tasks/result`` has its own short deadline (:func:`task_request_seconds`: two poll
intervals, at least :data:`MIN_TASK_REQUEST_TIMEOUT`) and is simply sent again, with a new id, when
its answer is lost. A lost poll therefore costs one interval, not the task: the next poll would have
gone out one interval later anyway. These requests only read, or deliver answers keyed by the
task's unique ``inputRequests`` keys (``tasks.ext.input-keys-unique``), so sending one again is
harmless. The creating ``tools/call`` is the exception: sending it again could start the work twice,
so it gets the client's ordinary request timeout and is never repeated.

**A task the server no longer knows is lost, and the caller is told so.** A server may forget a
task: its ttl ran out (``tasks.sim-expiry-deletes``), or its process died and came back empty
(``tasks.sim-crash-forgets-tasks``). Its next ``tasks/*`` answer is ``-32602`` (unknown task); the
client turns that into :class:`TaskLost`, an
:class:`~mcp_sim.roles.client.errors.OutcomeUnknown` that says which task, and why it is probably gone
(ttl passed, the stdio server was restarted, the HTTP session renewed, or none of those the client
could see) — never a bare ``Unknown task`` and never a task waited on for ever.

:meth:`TaskCalls.call_tool` uses a task by itself for a 2025-11-25 tool whose listing said
``taskSupport: "required"``; in 2026-07-28 the caller asks for one (``task=True``) — a server whose
tool runs only as a task says so with ``-32021``, naming the extension.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any, Final

import anyio

from mcp_sim.protocol.errors import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, McpError
from mcp_sim.protocol.revisions import TASKS_EXTENSION, revision_at
from mcp_sim.roles.client.callbacks import ClientCallbacks
from mcp_sim.roles.client.connection import ProgressCallback
from mcp_sim.roles.client.errors import OutcomeUnknown, RequestTimeout
from mcp_sim.roles.client.opening import ClientEra
from mcp_sim.roles.client.restart import RestartingClient
from mcp_sim.sim.world import Simulation
from mcp_sim.transports.base import TransportClosed

TASK_TIMEOUT: Final = 600.0
"""Seconds a task-augmented call may take, from the first request to the result, before the client
cancels the task."""

DEFAULT_POLL_INTERVAL: Final = 1.0
"""Seconds between two ``tasks/get`` when the task names no poll interval."""

MIN_POLL_INTERVAL: Final = 0.1
"""The shortest wait between polls, whatever the server asks: a poll interval of 0 must not become a
request storm."""

MAX_TASK_POLLS: Final = 10_000
"""How many ``tasks/get`` one call sends at most (the deadline usually ends the wait long before)."""

MIN_TASK_REQUEST_TIMEOUT: Final = 2.0
"""The shortest deadline of one ``tasks/get``, ``tasks/update`` or ``tasks/result`` of an ended task
(seconds): a lost answer is noticed this soon and the request sent again (see :func:`task_request_seconds`)."""

ENDED: Final = frozenset({"completed", "failed", "cancelled"})
"""The terminal task statuses: nothing changes after them."""


class TaskTimeout(RequestTimeout):
    """A task-augmented call did not end in time; the client has asked the server to cancel the task."""

    def __init__(self, server: str, task_id: str, seconds: float) -> None:
        TimeoutError.__init__(self, f"task {task_id} on {server} did not end within {seconds:g} s; the client "
                              f"sent tasks/cancel")
        self.server = server
        self.method = "tools/call"
        self.request_id = task_id
        self.seconds = seconds
        self.task_id = task_id


class TaskLost(OutcomeUnknown):
    """The server answered ``-32602`` (unknown task) for a task this client created and had not yet
    seen end: the server forgot it — its ttl ran out, or it restarted empty after a crash. Whether the
    tool ran, and what it returned, is unknown; the client does not start it again on its own."""

    def __init__(self, server: str, task_id: str, why: str) -> None:
        super().__init__(server, "tools/call", task_id, f"no longer knows task {task_id} ({why})")
        self.task_id = task_id
        self.why = why


def _poll_seconds(task: Mapping[str, Any], field: str) -> float:
    """The wait before the next poll: the task's own interval (milliseconds), never below the minimum."""
    interval = task.get(field)
    if isinstance(interval, (int, float)) and not isinstance(interval, bool):
        return max(interval / 1000, MIN_POLL_INTERVAL)
    return DEFAULT_POLL_INTERVAL


def task_request_seconds(task: Mapping[str, Any], request_timeout: float) -> float:
    """The deadline of one ``tasks/get`` (or ``tasks/update``, or ``tasks/result`` of an ended task):
    two of the task's poll intervals, at least :data:`MIN_TASK_REQUEST_TIMEOUT`, at most the client's
    ordinary ``request_timeout``. Sent again at once when it passes, a lost poll costs one interval
    more than an answered one (``tasks.sim-client-poll-deadline``)."""
    field = "pollIntervalMs" if "pollIntervalMs" in task else "pollInterval"
    return min(max(2 * _poll_seconds(task, field), MIN_TASK_REQUEST_TIMEOUT), request_timeout)


class TaskCalls(RestartingClient):
    """The request loop and restarts, plus tool calls that run as tasks."""

    def __init__(self, name: str, version: str, *, era: ClientEra, versions: tuple[str, ...],
                 callbacks: ClientCallbacks | None, capabilities: dict[str, Any] | None, timeout: float,
                 probe_timeout: float, discover: bool, log_level: str | None, max_input_rounds: int,
                 restart_on_crash: bool, retry_after_crash: Collection[str], sim: Simulation | None) -> None:
        super().__init__(name, version, era=era, versions=versions, callbacks=callbacks, capabilities=capabilities,
                         timeout=timeout, probe_timeout=probe_timeout, discover=discover, log_level=log_level,
                         max_input_rounds=max_input_rounds, restart_on_crash=restart_on_crash,
                         retry_after_crash=retry_after_crash, sim=sim)
        self.task_support: dict[str, str] = {}
        """``execution.taskSupport`` of each tool a ``tools/list`` showed (2025-11-25), by name."""

    def _learn_tools(self, result: Mapping[str, Any]) -> None:
        """Remember which listed tools must (or may) run as tasks."""
        for tool in result.get("tools") or ():
            execution = tool.get("execution") if isinstance(tool, Mapping) else None
            if isinstance(execution, Mapping) and isinstance(execution.get("taskSupport"), str):
                self.task_support[tool["name"]] = execution["taskSupport"]

    # ---------------------------------------------------------------------------------------------
    # tools/call, as a task when it must be
    # ---------------------------------------------------------------------------------------------
    async def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None, *,
                        timeout: float | None = None, on_progress: ProgressCallback | None = None,
                        capabilities: Mapping[str, Any] | None = None, task: bool | None = None) -> dict[str, Any]:
        """``tools/call``. Returns the ``CallToolResult``; a tool's own failure is a *result* with
        ``isError: true``, not an exception (protocol errors raise :class:`McpError`).

        ``task=True`` runs it as a task (:meth:`call_tool_as_task`, ``timeout`` then bounds the whole
        task, by default :data:`TASK_TIMEOUT`); ``None`` (the default) does so
        when the tool's 2025-11-25 listing said ``taskSupport: "required"``. In 2026-07-28 the server
        decides and no listing says it: a tool that runs only as a task is answered ``-32021`` naming
        the tasks extension, and the caller says ``task=True`` (the client never declares more than it
        was asked to on its own)."""
        if task is None:
            task = self.era == "legacy" and self.task_support.get(name) == "required"
        if task:
            return await self.call_tool_as_task(name, arguments, on_progress=on_progress, capabilities=capabilities,
                                                task_timeout=TASK_TIMEOUT if timeout is None else timeout)
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        result, _ = await self._request("tools/call", params, timeout=timeout, on_progress=on_progress,
                                        capabilities=capabilities)
        return result

    async def call_tool_as_task(self, name: str, arguments: Mapping[str, Any] | None = None, *,
                                ttl_ms: int | None = None, task_timeout: float = TASK_TIMEOUT,
                                on_progress: ProgressCallback | None = None,
                                capabilities: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Call ``name`` as a task and wait for its result, polling as the task asks. Returns the tool's
        ``CallToolResult`` (also when the server chose to run it at once; a tool that reported its own
        failure gives its ``isError`` result, as a plain call would). A task that failed with a protocol
        error raises it as :class:`McpError`; one still running after ``task_timeout`` seconds is cancelled and raises
        :class:`TaskTimeout`."""
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        deadline = anyio.current_time() + task_timeout
        if self.era == "modern":
            return await self._modern_task(params, deadline, task_timeout, on_progress, capabilities)
        return await self._legacy_task(params, ttl_ms, deadline, task_timeout, on_progress)

    def _left(self, deadline: float) -> float:
        return max(deadline - anyio.current_time(), 0.0)

    def _watch(self, task: Mapping[str, Any], deadline: float, seconds: float,
               declared: Mapping[str, Any] | None) -> _TaskWatch:
        """What the client remembers about a task it just created, to poll it and explain its loss."""
        ttl = task.get("ttlMs", task.get("ttl"))
        return _TaskWatch(str(task.get("taskId")), deadline, seconds, declared, anyio.current_time(),
                          ttl if isinstance(ttl, int) and not isinstance(ttl, bool) else None,
                          self.restarts, self.sessions_opened)

    async def _give_up(self, task_id: str, seconds: float) -> TaskTimeout:
        """The deadline passed: ask the server to stop the task (if it can be asked), then report."""
        self._note("timeout", f"task {task_id} did not end within {seconds:g} s; the client cancels it",
                   marks=("timeout", "task"))
        try:
            self.check_can_send("tasks/cancel")
            await self.request("tasks/cancel", {"taskId": task_id}, capabilities=self._task_capabilities(),
                               timeout=task_request_seconds({}, self.timeout))
        except (McpError, RequestTimeout, TransportClosed):
            pass  # already ended, or the server cannot cancel: the client has stopped waiting either way
        return TaskTimeout(self.server_name, task_id, seconds)

    def _lost(self, watch: _TaskWatch) -> TaskLost:
        """``-32602`` for a task this client created: say why the server has probably forgotten it."""
        now = anyio.current_time()
        if watch.ttl_ms is not None and (now - watch.created_at) * 1000 >= watch.ttl_ms:
            why = f"its ttl of {watch.ttl_ms} ms has passed"
        elif self.restarts != watch.restarts:
            why = (f"the server process was restarted since the task was created (restart {self.restarts}); "
                   f"a new process starts with no tasks")
        elif self.sessions_opened != watch.sessions:
            why = "the legacy session was renewed since the task was created; the server forgot the old one"
        else:
            why = "its ttl has not passed: the server forgot it, e.g. it crashed and restarted empty"
        self._note("app", f"{self.participant} learns that task {watch.task_id} is lost: {why}",
                   marks=("task", "lost", "outcome-unknown"))
        return TaskLost(self.server_name, watch.task_id, why)

    async def _task_request(self, method: str, params: Mapping[str, Any], watch: _TaskWatch,
                            task: Mapping[str, Any], *, unknown_means_lost: bool = True) -> dict[str, Any]:
        """One ``tasks/get``, ``tasks/update`` or ``tasks/result`` of an ended task, with its own short
        deadline (:func:`task_request_seconds`), sent again with a new id whenever its answer is lost,
        until the task's own deadline. ``-32602`` for the task becomes :class:`TaskLost`."""
        for _ in range(MAX_TASK_POLLS):
            left = self._left(watch.deadline)
            if left <= 0:
                break
            try:
                return await self.request(method, params, timeout=min(task_request_seconds(task, self.timeout), left),
                                          capabilities=watch.declared)
            except RequestTimeout:
                self._note("app", f"{method} for task {watch.task_id} got no answer; the task lives on the "
                           f"server, not in that request, so the client asks again", marks=("retry", "task"))
            except McpError as exc:
                if exc.code == INVALID_PARAMS and unknown_means_lost:
                    raise self._lost(watch) from exc
                raise
        raise await self._give_up(watch.task_id, watch.seconds)

    # -- 2025-11-25: params.task, tasks/get, tasks/result --------------------------------------------
    async def _legacy_task(self, params: dict[str, Any], ttl_ms: int | None, deadline: float, seconds: float,
                           on_progress: ProgressCallback | None) -> dict[str, Any]:
        version = self.protocol_version or ""
        if not revision_at(version).has_tasks:
            raise McpError(METHOD_NOT_FOUND, f"revision {version} has no tasks (they exist in 2025-11-25 and, as "
                           f"an extension, in 2026-07-28)", revision=version)
        if not _declares_task_calls(self.server_capabilities):
            raise McpError(METHOD_NOT_FOUND, f"{self.server_name} did not declare tasks.requests.tools.call: it "
                           f"cannot run a tools/call as a task",
                           rule="A requestor only augments a request with a task when the receiver declared task "
                                "support for that request type.", revision=version)
        params["task"] = {"ttl": ttl_ms} if ttl_ms is not None else {}
        # Never sent twice (it would start the work twice): the ordinary request timeout, no retry.
        created = await self.request("tools/call", params, timeout=min(self.timeout, self._left(deadline)),
                                     on_progress=on_progress)
        task = created.get("task")
        if not isinstance(task, Mapping):
            return created  # the server ran it at once
        watch = self._watch(task, deadline, seconds, None)
        task_id = watch.task_id
        ref = {"taskId": task_id}
        try:
            for _ in range(MAX_TASK_POLLS):
                status = task.get("status")
                if status == "cancelled":
                    raise McpError(INTERNAL_ERROR, f"task {task_id} was cancelled", {"taskId": task_id},
                                   revision=self.protocol_version)
                if status in ENDED:
                    # tasks/result of an ended task answers at once: a short deadline, sent again if lost.
                    # A failed task's own error may be -32602 too, so only a completed one's means "lost".
                    return await self._task_request("tasks/result", ref, watch, task,
                                                    unknown_means_lost=status != "failed")
                if status == "input_required":
                    # Waiting for input (asked for with ordinary requests, answered as usual): tasks/result
                    # waits for the end and returns the tool's own result, or its error.
                    try:
                        return await self.request("tasks/result", ref, timeout=self._left(deadline))
                    except McpError as exc:
                        if exc.code == INVALID_PARAMS:
                            raise self._lost(watch) from exc
                        raise
                wait = _poll_seconds(task, "pollInterval")
                if wait >= self._left(deadline):
                    raise await self._give_up(task_id, seconds)
                await anyio.sleep(wait)
                task = await self._task_request("tasks/get", ref, watch, task)
            raise await self._give_up(task_id, seconds)
        except TaskTimeout:
            raise
        except RequestTimeout:
            raise await self._give_up(task_id, seconds) from None

    # -- 2026-07-28: the extension, tasks/get, tasks/update ------------------------------------------
    def _task_capabilities(self, capabilities: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
        """What a modern request declares to take part in tasks: its usual capabilities plus the
        extension (legacy requests declare nothing per request: ``None``)."""
        if self.era != "modern":
            return None
        base = dict(capabilities) if capabilities is not None else \
            dict(self._declared(self.protocol_version or self._newest("modern")))
        extensions = dict(base.get("extensions") or {})
        extensions.setdefault(TASKS_EXTENSION, {})
        base["extensions"] = extensions
        return base

    async def _modern_task(self, params: dict[str, Any], deadline: float, seconds: float,
                           on_progress: ProgressCallback | None,
                           capabilities: Mapping[str, Any] | None) -> dict[str, Any]:
        declared = self._task_capabilities(capabilities)
        assert declared is not None
        # Never sent twice (it would start the work twice): the ordinary request timeout, no retry.
        task = await self.request("tools/call", params, timeout=min(self.timeout, self._left(deadline)),
                                  on_progress=on_progress, capabilities=declared)
        if task.get("resultType") != "task":
            return task  # the server decided to answer at once
        watch = self._watch(task, deadline, seconds, declared)
        try:
            return await self._poll_modern(task, watch)
        except TaskTimeout:
            raise
        except RequestTimeout:
            raise await self._give_up(watch.task_id, seconds) from None

    async def _poll_modern(self, task: Mapping[str, Any], watch: _TaskWatch) -> dict[str, Any]:
        """Poll ``tasks/get`` until the task ends, answering its ``inputRequests`` on the way."""
        task_id = watch.task_id
        answered: dict[str, Any] = {}
        for _ in range(MAX_TASK_POLLS):
            status = task.get("status")
            if status == "completed" and isinstance(task.get("result"), Mapping):
                return dict(task["result"])
            if status == "failed":
                found = task.get("error")
                error: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
                raise McpError(int(error.get("code", INTERNAL_ERROR)), str(error.get("message", "the task failed")),
                               error.get("data"), revision=self.protocol_version)
            if status == "cancelled":
                raise McpError(INTERNAL_ERROR, f"task {task_id} was cancelled", {"taskId": task_id},
                               revision=self.protocol_version)
            if status == "input_required":
                await self._answer_task_input(task, answered, watch)
            wait = _poll_seconds(task, "pollIntervalMs")
            if wait >= self._left(watch.deadline):
                raise await self._give_up(task_id, watch.seconds)
            await anyio.sleep(wait)
            task = await self._task_request("tasks/get", {"taskId": task_id}, watch, task)
        raise await self._give_up(task_id, watch.seconds)

    async def _answer_task_input(self, task: Mapping[str, Any], answered: dict[str, Any], watch: _TaskWatch) -> None:
        """Fulfil the task's open ``inputRequests`` through the Host and send them with ``tasks/update``.
        Keys are unique over a task's life, so a key answered once is never asked of the user again; if
        the task still lists it (the update's answer was lost, or the update itself), the answer already
        given is sent again — harmless, since the server ignores answers to requests no longer open."""
        requests: Mapping[str, Any] = task.get("inputRequests") or {}
        declared = watch.declared or {}
        responses: dict[str, Any] = {}
        for key, asked in requests.items():
            if not isinstance(asked, Mapping):
                continue
            if key not in answered:
                answered[key] = await self.fulfil_input(str(asked.get("method")), dict(asked.get("params") or {}),
                                                        declared)
            responses[key] = answered[key]
        if responses:
            await self._task_request("tasks/update", {"taskId": watch.task_id, "inputResponses": responses},
                                     watch, task)


@dataclass(frozen=True)
class _TaskWatch:
    """One task a call is waiting for: its deadline, and what the client saw when it was created (to
    tell, if the server forgets it, why that probably happened)."""

    task_id: str
    deadline: float
    seconds: float
    declared: Mapping[str, Any] | None
    created_at: float
    ttl_ms: int | None
    restarts: int
    sessions: int


def _declares_task_calls(capabilities: Mapping[str, Any] | None) -> bool:
    """Did the server declare ``tasks.requests.tools.call`` (unknown capabilities count as yes)?"""
    if capabilities is None:
        return True
    tasks = capabilities.get("tasks")
    requests = tasks.get("requests") if isinstance(tasks, Mapping) else None
    tools = requests.get("tools") if isinstance(requests, Mapping) else None
    return isinstance(tools, Mapping) and "call" in tools
