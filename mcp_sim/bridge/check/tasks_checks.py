"""What the trace shows about tasks and listen streams (chapter 12).

The schema check already holds every task message to its shape (a legacy ``CreateTaskResult``, the
extension's ``GetTaskResult`` …). This module holds what a shape cannot show, from the trace alone:

* **expectations** of the requests :mod:`.workloads_tasks` marked — an unknown task id refused with
  -32602, a finished task's cancellation refused, a cancelled task answered as ``cancelled`` (legacy)
  or with an empty acknowledgement (2026-07-28), ``tasks/result`` of a finished task being that call's
  result and naming its task, a tasks request without the extension declared refused with -32021, a
  task-augmented call to a server that declared no tasks served as a plain call;
* **the task's life**, read from every status the server reported for it (creation, polls,
  cancellations, lists, status notifications): a legacy task begins ``working`` and a terminal status
  is final; a task polled to the deadline reached a terminal status; a task ``tasks/get`` still finds
  after ``tasks/list`` is in the list; a task answer only to a ``tools/call`` that declared the extension;
* **listen streams** (2026-07-28): acknowledged first, every message of a stream naming its
  ``subscriptionId``, and nothing on it that its filter did not ask for.
"""

from __future__ import annotations

from typing import Any

from mcp_sim.bridge.check.checkers import (
    LinkRun,
    _code,
    _ends,
    _finding,
    _key,
    _object,
    _result,
    _said,
    client_of,
    server_of,
)
from mcp_sim.bridge.check.findings import Finding
from mcp_sim.protocol import schema
from mcp_sim.trace.event import TraceEvent

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
RELATED_TASK = "io.modelcontextprotocol/related-task"
SUBSCRIPTION_KEY = "io.modelcontextprotocol/subscriptionId"
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
TERMINAL = ("completed", "failed", "cancelled")
STREAM_KINDS = {"notifications/tools/list_changed": "toolsListChanged",
                "notifications/prompts/list_changed": "promptsListChanged",
                "notifications/resources/list_changed": "resourcesListChanged",
                "notifications/resources/updated": "resourceSubscriptions",
                "notifications/tasks": "taskIds"}
"""A notification a listen stream may carry → the filter field that asks for it."""


def _task_id(request: TraceEvent) -> Any:
    return _object(_object(request.message).get("params")).get("taskId")


# --- expectations -------------------------------------------------------------------------------------

def unknown_task(run: LinkRun, request: TraceEvent, response: dict[str, Any] | None) -> list[Finding]:
    if response is None or _code(response) == -32602:
        return []
    if run.era == "modern":
        if request.method != "tasks/get":
            return []  # -32602 is only recommended for tasks/update and tasks/cancel
        rule = "tasks.ext.unknown-task-get"
    else:
        rule = "tasks.legacy.unknown-task"
    return [_finding(run, rule, "errors", f"{request.method} of a task id nobody issued got {_said(response)}, "
                     "not -32602 (Invalid params)", request.seq)]


def task_undeclared(run: LinkRun, request: TraceEvent, response: dict[str, Any] | None) -> list[Finding]:
    if response is None or _code(response) == -32021:
        return []
    return [_finding(run, "tasks.ext.undeclared-is-32021", "capabilities",
                     f"{request.method} from a request that did not declare the tasks extension got "
                     f"{_said(response)}, not -32021 (missing required client capability)", request.seq)]


def no_task(run: LinkRun, request: TraceEvent, response: dict[str, Any] | None) -> list[Finding]:
    result = _result(response)
    if result is None or not isinstance(result.get("task"), dict) or "content" in result:
        return []
    return [_finding(run, "tasks.legacy.capability", "capabilities",
                     "the server declared no tasks capability at initialize, yet answered a task-augmented "
                     "tools/call with a task instead of serving it as a plain call", request.seq)]


def task_required(run: LinkRun, request: TraceEvent, response: dict[str, Any] | None) -> list[Finding]:
    if _result(response) is None:
        return []
    return [_finding(run, "tasks.legacy.required-error", "errors",
                     "a plain tools/call of a tool whose execution.taskSupport is required was served, "
                     "not refused with -32601", request.seq)]


def task_status(run: LinkRun, request: TraceEvent, response: dict[str, Any] | None) -> list[Finding]:
    result = _result(response)
    if result is None:
        return []
    if run.era == "legacy" and result.get("taskId") != _task_id(request):
        return [_finding(run, "tasks.legacy.task-id-names-the-task", "lifecycle",
                         f"tasks/get of {_task_id(request)!r} was answered about the task "
                         f"{result.get('taskId')!r}", request.seq)]
    if run.era == "modern" and result.get("resultType") != "complete":
        return [_finding(run, "tasks.ext.get-by-status", "lifecycle",
                         f"tasks/get was answered with resultType {result.get('resultType')!r}, not 'complete'",
                         request.seq)]
    return []


def task_result(run: LinkRun, request: TraceEvent, response: dict[str, Any] | None) -> list[Finding]:
    if response is None:
        return []
    task = _task_id(request)
    status = last_status(run, task, request.seq)
    result = _result(response)
    out = []
    if status == "completed" and result is None:
        out.append(_finding(run, "tasks.legacy.result-is-the-call-s", "lifecycle",
                            f"tasks/result of the completed task {task!r} got {_said(response)}, not the "
                            "call's result", request.seq))
    if result is None:
        return out
    errors = schema.schema_errors(result, run.revision, "CallToolResult")
    if errors:
        out.append(_finding(run, "tasks.legacy.result-is-the-call-s", "lifecycle",
                            f"tasks/result of the task {task!r} is no CallToolResult: {errors[0]}", request.seq))
    elif status == "completed" and result.get("isError") is True:
        out.append(_finding(run, "tasks.legacy.iserror-is-failed", "lifecycle",
                            f"the task {task!r} was reported completed, but its result has isError true "
                            "(such a task is failed)", request.seq))
    related = _object(_object(result.get("_meta")).get(RELATED_TASK)).get("taskId")
    if related != task:
        out.append(_finding(run, "tasks.legacy.related-task", "lifecycle",
                            f"tasks/result of the task {task!r} carries no _meta {RELATED_TASK} naming it "
                            f"(found {related!r})", request.seq))
    return out


def cancel_terminal(run: LinkRun, request: TraceEvent, response: dict[str, Any] | None) -> list[Finding]:
    if response is None or _code(response) == -32602:
        return []
    return [_finding(run, "tasks.legacy.cancel-terminal-refused", "errors",
                     f"tasks/cancel of the task {_task_id(request)!r}, already "
                     f"{last_status(run, _task_id(request), request.seq)}, got {_said(response)}, not -32602",
                     request.seq)]


def task_cancel(run: LinkRun, request: TraceEvent, response: dict[str, Any] | None) -> list[Finding]:
    result = _result(response)
    if result is None:
        return []  # legacy: -32602 when the task finished first (the two can cross)
    if run.era == "legacy" and result.get("status") != "cancelled":
        return [_finding(run, "tasks.legacy.cancelled-before-answer", "lifecycle",
                         f"tasks/cancel of the working task {_task_id(request)!r} was answered with status "
                         f"{result.get('status')!r}, not 'cancelled'", request.seq)]
    extra = sorted(set(result) - {"resultType", "_meta"})
    if run.era == "modern" and (extra or result.get("resultType") != "complete"):
        return [_finding(run, "tasks.ext.cancel-acknowledged", "lifecycle",
                         f"tasks/cancel was answered with {', '.join(extra) or 'resultType ' + repr(result.get('resultType'))}"
                         ", not an empty acknowledgement with resultType 'complete'", request.seq)]
    return []


EXPECTATIONS = {"expect:unknown-task": unknown_task, "expect:task-undeclared": task_undeclared,
                "expect:no-task": no_task, "expect:task-required": task_required,
                "expect:task-status": task_status, "expect:task-result": task_result,
                "expect:cancel-terminal": cancel_terminal, "expect:task-cancel": task_cancel}
"""The task expectations, by mark (:mod:`.expectations` adds them to its own)."""


# --- the task's life -----------------------------------------------------------------------------------

def statuses(run: LinkRun) -> list[tuple[str, str, TraceEvent]]:
    """(task id, status, event) for every status the server reported, in trace order: in a task answer
    to a call, a tasks/get or tasks/cancel answer, a tasks/list entry, or a status notification."""
    out: list[tuple[str, str, TraceEvent]] = []
    for e in run.events:
        if e.sender != server_of(run.name) or not isinstance(e.message, dict):
            continue
        found: list[dict[str, Any]] = []
        if e.kind == "notification" and e.method in ("notifications/tasks/status", "notifications/tasks"):
            found.append(_object(e.message.get("params")))
        elif e.kind == "response":
            result = _object(e.message.get("result"))
            if isinstance(result.get("task"), dict):
                found.append(result["task"])
            elif isinstance(result.get("tasks"), list):
                found += [t for t in result["tasks"] if isinstance(t, dict)]
            elif e.method in ("tasks/get", "tasks/cancel") or result.get("resultType") == "task":
                found.append(result)
        for task in found:
            if isinstance(task.get("taskId"), str) and isinstance(task.get("status"), str):
                out.append((task["taskId"], task["status"], e))
    return out


def last_status(run: LinkRun, task: Any, before: int | None = None) -> str | None:
    """The last status the server reported for ``task`` (before event ``before``, if given)."""
    seen = [s for t, s, e in statuses(run) if t == task and (before is None or e.seq < before)]
    return seen[-1] if seen else None


def check_task_lives(run: LinkRun) -> list[Finding]:
    """Each task's reported statuses, and which requests were answered with a task."""
    out = []
    history: dict[str, list[tuple[str, TraceEvent]]] = {}
    for task, status, e in statuses(run):
        history.setdefault(task, []).append((status, e))
    for task, seen in history.items():
        first, e = seen[0]
        if run.era == "legacy" and first != "working" and _object(_object(e.message).get("result")).get("task"):
            out.append(_finding(run, "tasks.legacy.begin-working", "lifecycle",
                                f"the task {task!r} was created in status {first!r}, not 'working'", e.seq))
        terminal = next((s for s, _e in seen if s in TERMINAL), None)
        later = next(((s, ev) for s, ev in seen if terminal and s != terminal
                      and ev.seq > next(x.seq for y, x in seen if y == terminal)), None)
        if run.era == "legacy" and later is not None:
            out.append(_finding(run, "tasks.legacy.terminal-is-final", "lifecycle",
                                f"the task {task!r} was reported {terminal!r}, then {later[0]!r}", later[1].seq))
    out += _unfinished(run, history)
    out += _list_covers_get(run)
    out += _task_answers(run)
    return out


def _unfinished(run: LinkRun, history: dict[str, list[tuple[str, TraceEvent]]]) -> list[Finding]:
    """A task polled (``task:poll``) until the deadline whose last poll still said it was not done."""
    last_poll: dict[str, TraceEvent] = {}
    for e in run.requests:
        if "task:poll" in e.marks and isinstance(_task_id(e), str):
            last_poll[_task_id(e)] = e
    out = []
    for task, request in last_poll.items():
        answer = run.answer(request)
        status = (_result(answer.message if answer else None) or {}).get("status")
        if answer is None or status is None or any(s in TERMINAL and e.seq <= answer.seq
                                                   for s, e in history.get(task, [])):
            continue  # (a cancel after the deadline may end it: that is the checker's doing)
        out.append(_finding(run, "check.task-reaches-terminal", "timing",
                            f"the task {task!r} was still {status!r} when the deadline ended its polling",
                            request.seq))
    return out


def _list_covers_get(run: LinkRun) -> list[Finding]:
    listed: set[Any] = set()
    lists = 0
    for e in run.requests:
        answer = run.answer(e)
        result = _result(answer.message if answer else None)
        if e.method == "tasks/list" and result is not None:
            lists += 1
            listed |= {t.get("taskId") for t in result.get("tasks") or [] if isinstance(t, dict)}
        elif "task:after-list" in e.marks and result is not None and lists and _task_id(e) not in listed:
            return [_finding(run, "tasks.legacy.list-covers-get", "lifecycle",
                             f"tasks/get still finds the task {_task_id(e)!r}, but tasks/list did not list it",
                             e.seq)]
    return []


def _task_answers(run: LinkRun) -> list[Finding]:
    """2026-07-28: a task (``resultType: "task"``) answers only a ``tools/call`` whose own
    ``_meta`` declared the extension."""
    if run.era != "modern":
        return []
    out = []
    for e in run.requests:
        answer = run.answer(e)
        if (_result(answer.message if answer else None) or {}).get("resultType") != "task":
            continue
        caps = _object(_object(_object(_object(e.message).get("params")).get("_meta")).get(
            "io.modelcontextprotocol/clientCapabilities"))
        if e.method != "tools/call":
            out.append(_finding(run, "tasks.ext.tools-call-only", "capabilities",
                                f"{e.method} was answered with a task; only tools/call may become one", e.seq))
        elif TASKS_EXTENSION not in _object(caps.get("extensions")):
            out.append(_finding(run, "tasks.ext.declared-in-request", "capabilities",
                                "a tools/call that did not declare the tasks extension was answered with a task",
                                e.seq))
    return out


# --- listen streams ------------------------------------------------------------------------------------

def _subscription(e: TraceEvent) -> Any:
    """The subscriptionId a server message names in its ``_meta`` (``None`` if it names none)."""
    message = _object(e.message)
    holder = message.get("params") if e.kind == "notification" else message.get("result")
    return _object(_object(holder).get("_meta")).get(SUBSCRIPTION_KEY)


def check_listens(run: LinkRun) -> list[Finding]:
    """Every 2026-07-28 listen the client opened: acknowledged before anything else of its stream, its
    messages naming it, nothing on it the filter did not ask for."""
    if run.era != "modern":
        return []
    out = []
    listens = [e for e in run.requests if e.method == "subscriptions/listen"]
    crashes = [(start, end) for start, end, how, _seen in _ends(run) if how == "crash"]
    for listen in listens:
        answer = run.answer(listen)
        if answer is not None and _code(answer.message) is not None:
            if _code(answer.message) == -32601:
                out.append(_finding(run, "check.declared-capability-served", "capabilities",
                                    "the server declares listChanged or resources.subscribe but refuses "
                                    "subscriptions/listen as an unknown method", listen.seq))
            continue
        wanted = _object(_object(_object(listen.message).get("params")).get("notifications"))
        mine = [e for e in run.events if e.sender == server_of(run.name) and e.seq > listen.seq
                and e.kind in ("notification", "response") and _key(_subscription(e)) == _key(listen.request_id)]
        if not mine:
            if not any(start < listen.seq < end for start, end in crashes):
                out.append(_finding(run, "subscriptions.ack-first", "lifecycle",
                                    f"the listen (id {listen.request_id!r}) was never acknowledged: no "
                                    f"{ACKNOWLEDGED} named its subscriptionId", listen.seq))
            continue
        if mine[0].method != ACKNOWLEDGED or mine[0].kind != "notification":
            out.append(_finding(run, "subscriptions.ack-first", "lifecycle",
                                f"the first message of the listen (id {listen.request_id!r}) is "
                                f"{mine[0].method}, not {ACKNOWLEDGED}", mine[0].seq))
        for e in mine:
            field = STREAM_KINDS.get(e.method or "")
            if e.kind == "notification" and e.method != ACKNOWLEDGED and not (field and wanted.get(field)):
                out.append(_finding(run, "subscriptions.only-what-was-asked", "capabilities",
                                    f"the listen (id {listen.request_id!r}) carried {e.method}, which its filter "
                                    "did not ask for", e.seq))
    out += _unnamed(run, listens)
    return out


def _unnamed(run: LinkRun, listens: list[TraceEvent]) -> list[Finding]:
    """Stream notifications sent while a listen was open that name no open listen's id."""
    if not listens:
        return []
    closed = {_key(_object(_object(e.message).get("params")).get("requestId")): e.seq for e in run.events
              if e.sender == client_of(run.name) and e.method == "notifications/cancelled"}
    out = []
    for e in run.events:
        if e.sender != server_of(run.name) or e.kind != "notification" or (
                e.method not in STREAM_KINDS and e.method != ACKNOWLEDGED):
            continue
        open_ids = {_key(ls.request_id) for ls in listens
                    if ls.seq < e.seq <= closed.get(_key(ls.request_id), e.seq)}
        if open_ids and _key(_subscription(e)) not in open_ids:
            out.append(_finding(run, "subscriptions.subscription-id", "jsonrpc",
                                f"{e.method} names the subscriptionId {_subscription(e)!r}, not the id of the "
                                "open listen it belongs to", e.seq))
    return out
