"""Exercise ex08_task_polling (chapter 08): a client's task-polling loop, with a deadline.

A long ``tools/call`` may come back at once as a *task*: 2025-11-25 answers ``{"task": Task}`` (the
client asked with ``params.task``), the 2026-07-28 tasks extension answers the task itself, flattened,
with ``resultType: "task"`` — or, since the server decides there, runs the call inline and answers
``resultType: "complete"``. The client then polls ``tasks/get``, no faster than the task's suggested
interval (``pollInterval`` / ``pollIntervalMs``), until the status stops it: ``completed``, ``failed``
and ``cancelled`` end the task; ``input_required`` means it waits for the user, which a polling loop
cannot answer, so the loop hands the task back. A completed 2025-11-25 task's result is fetched with
``tasks/result``; the extension's completed ``tasks/get`` carries it. A caller that cannot wait any
longer sends ``tasks/cancel``.

The learner writes ``run_task(job, send, new_id, now, sleep)``. Nothing in it is asynchronous: the
check plays the server (:class:`TaskServer`) and owns a virtual clock — ``now()`` reads it in
milliseconds, ``sleep(ms)`` moves it on — so every run is exact and instant. The server's answers are
built by the simulator's own task records (:class:`~mcp_sim.capabilities.task_store.TaskRecord`), and
it raises the first rule the client breaks. Every seed tries every case kind; the seed picks ids,
times, intervals, the tool and its output.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import strategies as st

from mcp_sim.grading.differential import Mismatch, differential
from mcp_sim.grading.model import Check, CheckContext, CheckFailed, Exercise, Hint

R_SHAPE = "tasks.ext.client-handles-both"
R_INTERVAL = "tasks.legacy.poll-interval"
R_STOP = "tasks.legacy.terminal-is-final"
R_RESULT = "tasks.legacy.result-is-the-call-s"
R_CANCEL = "tasks.legacy.not-notifications-cancelled"
R_BLOCKS = "tasks.legacy.result-blocks"
R_ISERROR = "tasks.legacy.iserror-is-failed"
R_LOOP = "tasks.course-deadline-loop"
R_DEADLINE = "tasks.course-cancel-at-deadline"
R_INTERVAL_EXT = "tasks.ext.poll-interval"
R_CANCEL_EXT = "tasks.ext.cancel-not-notification"
R_STOP_EXT = "tasks.ext.keep-polling"


def era_rule(revision: str, legacy: str) -> str:
    """The rule of ``revision``'s era for what ``legacy`` says in 2025-11-25 (the extension has its own)."""
    if revision != "2026-07-28":
        return legacy
    return {R_INTERVAL: R_INTERVAL_EXT, R_CANCEL: R_CANCEL_EXT, R_STOP: R_STOP_EXT}.get(legacy, legacy)

LEGACY, MODERN = "2025-11-25", "2026-07-28"
_TOOLS = ("render", "transcode", "backup", "index_docs", "train_model")
_EXT = "io.modelcontextprotocol/tasks"
_MAX_REQUESTS = 120


class TaskServer:
    """Plays the server of one task whose status follows ``timeline`` — ``[(at_ms, status, interval)]``,
    ``interval`` being the ``pollInterval`` from then on (``None``: none given) — and checks every
    request against the rules above. ``inline`` answers the call at once instead (2026-07-28 only)."""

    def __init__(self, ctx: CheckContext, revision: str, call: dict[str, Any], timeline: list[tuple[int, str, Any]],
                 start_ms: int, deadline_ms: int, default_ms: int, output: str, inline: bool = False) -> None:
        from mcp_sim.capabilities.task_store import TaskRecord

        self.revision, self.call, self.timeline = revision, call, timeline
        self.clock, self.deadline, self.default = start_ms, deadline_ms, default_ms
        self.inline, self.output = inline, output
        self.requests: list[dict[str, Any]] = []
        self.task_id = f"{ctx.rng.choice(('task', 'job', 't'))}-{ctx.rng.randint(1, 9999)}"
        self.record = TaskRecord(task_id=self.task_id, owner="learner", tool=call["name"],
                                 flavor="core" if revision == LEGACY else "extension", created_at=start_ms / 1000,
                                 updated_at=start_ms / 1000, ttl_ms=60_000, poll_interval_ms=0, revision=revision)
        self.created = False
        self.last_seen: dict[str, Any] | None = None  # the latest Task the client was shown
        self.last_seen_at = start_ms
        self.cancelled_at: int | None = None
        self.result_fetched = False

    # --- the clock -------------------------------------------------------------------------------
    def now(self) -> int:
        return self.clock

    def sleep(self, ms: Any) -> None:
        if isinstance(ms, bool) or not isinstance(ms, (int, float)) or ms < 0:
            raise CheckFailed(f"sleep() takes a number of milliseconds ≥ 0; it was given {ms!r}.",
                              era_rule(self.revision, R_INTERVAL))
        if self.clock + ms > self.deadline:
            raise CheckFailed(f"At {self.clock} ms the loop slept {ms} ms, past its deadline ({self.deadline} ms).",
                              R_DEADLINE)
        self.clock += max(0, round(ms))

    # --- the task as the simulator's record shows it ---------------------------------------------
    def _status_now(self) -> tuple[str, Any, int]:
        status, interval, since = "working", None, self.timeline[0][0]
        for at, s, iv in self.timeline:
            if at <= self.clock:
                status, interval, since = s, iv, at
        if self.cancelled_at is not None:
            status, since = "cancelled", self.cancelled_at
        return status, interval, since

    def _task(self) -> dict[str, Any]:
        from mcp_sim.capabilities.mrtr import elicit

        status, interval, since = self._status_now()
        rec = self.record
        rec.status = status  # type: ignore[assignment]
        rec.updated_at = since / 1000
        rec.poll_interval_ms = interval if interval is not None else 0
        rec.status_message = {"failed": "the job ran out of disk space", "input_required": "waiting for approval",
                              "cancelled": "cancelled"}.get(status)
        rec.result = {"content": [{"type": "text", "text": self.output}]} if status == "completed" else None
        if status == "failed" and self.revision == LEGACY:  # 2025-11-25: an isError result makes the task failed
            rec.result = self.failed_result()
        if rec.result is not None and self.revision == MODERN:
            rec.result = {"resultType": "complete", **rec.result}
        rec.error = ({"code": -32603, "message": "the job ran out of disk space"}
                     if status == "failed" and self.revision == MODERN else None)
        rec.input_requests = ({"approve-1": elicit("Go ahead?", {"type": "object", "properties": {
            "ok": {"type": "boolean"}}})} if status == "input_required" else {})
        task = rec.task_json() if self.revision == LEGACY else rec.extension_json()
        if interval is None:
            task.pop("pollInterval", None)
            task.pop("pollIntervalMs", None)
        self.last_seen, self.last_seen_at = task, self.clock
        return task

    def failed_result(self) -> dict[str, Any]:
        """What the failed 2025-11-25 call returned: a tool result with isError (the task is failed)."""
        return {"content": [{"type": "text", "text": "the job ran out of disk space"}], "isError": True}

    def _interval(self) -> int:
        seen = self.last_seen or {}
        value = seen.get("pollInterval" if self.revision == LEGACY else "pollIntervalMs")
        return value if isinstance(value, int) else self.default

    # --- the requests ----------------------------------------------------------------------------
    def __call__(self, request: Any) -> dict[str, Any]:
        if not isinstance(request, dict):
            raise CheckFailed(f"send() takes one JSON-RPC request as a dict; it was given {type(request).__name__}.")
        request = copy.deepcopy(request)
        self.requests.append(request)
        if len(self.requests) > _MAX_REQUESTS:
            raise CheckFailed(f"{_MAX_REQUESTS} requests and counting: the loop is busy polling. Sleep the task's "
                              f"poll interval between two tasks/get.", era_rule(self.revision, R_INTERVAL))
        rid = request.get("id")
        method, params = request.get("method"), request.get("params")
        if request.get("jsonrpc") != "2.0" or not isinstance(method, str) or "id" not in request:
            raise CheckFailed(f"Every message run_task sends is a JSON-RPC 2.0 request with an id and a method; got "
                              f"{json.dumps(request)}. (A notification — notifications/cancelled included — is not "
                              f"how tasks are stopped.)", era_rule(self.revision, R_CANCEL))
        if any(rid == r.get("id") and type(rid) is type(r.get("id")) for r in self.requests[:-1]):
            raise CheckFailed(f"The id {rid!r} was used before: every request needs a new id (call new_id()).",
                              R_SHAPE)
        if not isinstance(params, dict):
            raise CheckFailed(f"{method} needs a params object; got {params!r}.", R_SHAPE)
        if not self.created:
            if method != "tools/call" or params != self.call:
                raise CheckFailed(f"The first request is the call itself: tools/call with the job's params "
                                  f"{json.dumps(self.call)} exactly; got {json.dumps(request)}.", R_SHAPE)
            self.created = True
            if self.inline:
                return self._reply(rid, {"resultType": "complete", "content": [{"type": "text", "text": self.output}],
                                         "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "jobs",
                                                                                          "version": "1.0"}}})
            task = self._task()
            body = {"task": task} if self.revision == LEGACY else {**task, "resultType": "task"}
            if self.revision == MODERN:
                body.pop("inputRequests", None)
            return self._reply(rid, body)
        if self.inline:
            raise CheckFailed(f"The server answered the call inline (resultType \"complete\"): there is no task to "
                              f"ask about, yet the client sent {method}.", R_SHAPE)
        if method in ("tasks/get", "tasks/result", "tasks/cancel"):
            if params.get("taskId") != self.task_id:
                raise CheckFailed(f"{method} must name the task: params.taskId {self.task_id!r} (from the call's "
                                  f"answer); got {params.get('taskId')!r}.", R_SHAPE)
            if self.revision == MODERN and params.get("_meta") != self.call.get("_meta"):
                raise CheckFailed(f"In 2026-07-28 every request carries _meta — the version and the client's "
                                  f"capabilities, the tasks extension among them: send the call's _meta with "
                                  f"{method} too; got {params.get('_meta')!r}.", R_SHAPE)
        seen_status = (self.last_seen or {}).get("status")
        if method == "tasks/get":
            return self._get(rid, seen_status)
        if method == "tasks/result":
            return self._result(rid, seen_status)
        if method == "tasks/cancel":
            return self._cancel(rid, seen_status)
        raise CheckFailed(f"run_task sent {method}; it needs only tools/call, tasks/get, "
                          f"{'tasks/result, ' if self.revision == LEGACY else ''}tasks/cancel.", R_SHAPE)

    def _get(self, rid: Any, seen_status: Any) -> dict[str, Any]:
        if seen_status in ("completed", "failed", "cancelled", "input_required"):
            raise CheckFailed(f"The client polled tasks/get again after the task said {seen_status!r}. "
                              f"{'A terminal status never changes' if seen_status != 'input_required' else 'The task waits for the user, which polling cannot answer'}: "
                              f"stop polling and return.", era_rule(self.revision, R_STOP)
                              if seen_status != "input_required" else R_LOOP)
        if self.clock >= self.deadline:
            raise CheckFailed(f"At {self.clock} ms the deadline ({self.deadline} ms) has come and the task is still "
                              f"{seen_status}, yet the client polled tasks/get again.", R_DEADLINE)
        gap, interval = self.clock - self.last_seen_at, self._interval()
        if gap < interval:
            said = "no pollInterval, so the default" if (self.last_seen or {}).get(
                "pollInterval" if self.revision == LEGACY else "pollIntervalMs") is None else "a poll interval"
            raise CheckFailed(f"tasks/get came {gap} ms after the previous answer, which gave {said} of {interval} ms. "
                              f"Sleep the interval of the latest Task before polling again.",
                              era_rule(self.revision, R_INTERVAL))
        task = self._task()
        return self._reply(rid, task if self.revision == LEGACY else {"resultType": "complete", **task})

    def _result(self, rid: Any, seen_status: Any) -> dict[str, Any]:
        if self.revision == MODERN:
            raise CheckFailed("The 2026-07-28 tasks extension has no tasks/result: a completed tasks/get carries "
                              "the result in its result member.", R_RESULT)
        if seen_status == "input_required":
            raise CheckFailed("tasks/result was sent after the task said 'input_required': the protocol allows it "
                              "(the server would ask its question on that response), but this loop hands such a "
                              "task back to its caller instead of waiting for the user.", R_LOOP)
        if seen_status == "working":
            # tasks/result waits until the task is terminal (tasks.legacy.result-blocks): move the clock there
            ends = [(at, st) for at, st, _ in self.timeline if at > self.clock and st != "working"]
            end = ends[0] if ends else None
            if end is None or end[0] > self.deadline or end[1] == "input_required":
                why = ("the task asked for input while it waited" if end is not None and end[1] == "input_required"
                       else "the task was still working at the deadline")
                raise CheckFailed(f"tasks/result was sent at {self.clock} ms while the task was working; it waits "
                                  f"until the task ends, and {why} ({self.deadline} ms): the loop missed its "
                                  f"deadline.", R_LOOP)
            self.clock = end[0]
            self._task()
            seen_status = end[1]
        self.result_fetched = True
        if seen_status == "cancelled":  # the simulator's answer (tasks.sim-cancelled-result-error)
            failure = {"code": -32603, "message": f"Task {self.task_id} was cancelled"}
            return {"jsonrpc": "2.0", "id": rid, "error": copy.deepcopy(failure)}
        body = dict(self.record.result or {})
        body["_meta"] = {"io.modelcontextprotocol/related-task": {"taskId": self.task_id}}
        return self._reply(rid, body)

    def _cancel(self, rid: Any, seen_status: Any) -> dict[str, Any]:
        if seen_status in ("completed", "failed", "cancelled"):
            raise CheckFailed(f"tasks/cancel was sent for a task that already said {seen_status!r}: a finished "
                              f"task has nothing left to stop (2025-11-25 even refuses it with -32602).",
                              era_rule(self.revision, R_STOP))
        if self.clock < self.deadline and seen_status != "input_required":
            raise CheckFailed(f"tasks/cancel at {self.clock} ms, before the deadline ({self.deadline} ms), while the "
                              f"task was still working.", R_DEADLINE)
        if self.cancelled_at is not None:
            raise CheckFailed("tasks/cancel was sent twice.", R_DEADLINE)
        late = self.clock - self.deadline
        if late > self._interval():
            raise CheckFailed(f"tasks/cancel came {late} ms after the deadline ({self.deadline} ms), more than a "
                              f"poll interval late.", R_DEADLINE)
        self.cancelled_at = self.clock
        task = self._task()
        return self._reply(rid, task if self.revision == LEGACY else {"resultType": "complete"})

    @staticmethod
    def _reply(rid: Any, result: dict[str, Any]) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": rid, "result": copy.deepcopy(result)}


def make_case(ctx: CheckContext, revision: str, ends: str, *, polls: int | None = None, intervals: str = "fixed",
              deadline_polls: int | None = None, inline: bool = False,
              offset: int | None = None) -> tuple[TaskServer, dict[str, Any]]:
    """A job and its server. ``ends`` is the status the task reaches after ``polls`` intervals (or
    ``"never"``: it works past the deadline); ``intervals`` is ``"fixed"``, ``"changing"`` or ``"none"``;
    ``deadline_polls`` puts the deadline that many intervals (and a bit) after the start."""
    rng = ctx.rng
    # not whole seconds: a loop that rounds an interval to seconds polls too early
    default = rng.choice((1250, 1750))
    first = {"fixed": rng.choice((2500, 3750, 5125)), "changing": rng.choice((4500, 6250)), "none": None}[intervals]
    start = rng.randint(0, 50) * 100
    polls = polls if polls is not None else rng.randint(2, 4)
    step = first if first is not None else default
    timeline: list[tuple[int, str, Any]] = [(start, "working", first)]
    if intervals == "changing" and first is not None:
        later = first * 2 if rng.random() < 0.5 else first + 3000
        timeline.append((start + step + 1, "working", later))
        step = later
    if ends != "never":
        timeline.append((start + (first or default) + polls * step - rng.randint(1, 300), ends, timeline[-1][2]))
    if deadline_polls is not None and offset is not None:  # on the instant of a poll, or 1 ms after it
        deadline = start + deadline_polls * (first or default) + offset
    elif deadline_polls is not None:
        deadline = start + deadline_polls * (first or default) + rng.randint(1, (first or default) // 2)
    else:
        deadline = start + 50 * max(step, default) * 10
    tool = rng.choice(_TOOLS)
    call: dict[str, Any] = {"name": tool, "arguments": {"size": rng.randint(1, 9)}}
    if revision == LEGACY:
        call["task"] = {"ttl": 60_000}
    else:
        call["_meta"] = {"io.modelcontextprotocol/protocolVersion": MODERN,
                         "io.modelcontextprotocol/clientCapabilities": {"extensions": {_EXT: {}}}}
    output = f"{tool} finished: job {rng.randint(100, 999)}"
    server = TaskServer(ctx, revision, call, timeline, start, deadline, default, output, inline=inline)
    job = {"revision": revision, "call": call, "deadline_ms": deadline, "default_poll_ms": default}
    return server, job


def run_case(ctx: CheckContext, server: TaskServer, job: dict[str, Any]) -> Any:
    counter = iter(range(ctx.rng.randint(1, 50), 10**6))
    style = ctx.rng.choice(("int", "str"))

    def new_id() -> Any:
        value = next(counter)
        return value if style == "int" else f"req-{value}"

    got = ctx.function("run_task")(copy.deepcopy(job), server, new_id, server.now, server.sleep)
    return got


def _expect(ctx: CheckContext, server: TaskServer, job: dict[str, Any], got: Any, want: dict[str, Any], *,
            must_cancel: bool = False) -> None:
    story = (f"The job: {json.dumps(job)}\nThe task's timeline (ms, status, poll interval): {server.timeline}"
             f"\nThe client sent: {[r.get('method') for r in server.requests]}")
    if not server.requests:
        raise CheckFailed("run_task() never called send(): start with the tools/call request.\n" + story, R_SHAPE)
    status = want["status"]
    if status == "completed" and job["revision"] == LEGACY and server.task_id and not server.inline \
            and not server.result_fetched:
        raise CheckFailed("The task completed, but the client never sent tasks/result: in 2025-11-25 the completed "
                          "result is fetched with tasks/result.\n" + story, R_RESULT)
    if must_cancel and server.cancelled_at is None:
        raise CheckFailed(f"The deadline passed while the task was still working, but the client never sent "
                          f"tasks/cancel (it returned {got!r}).\n" + story, R_DEADLINE)
    accepted = [want]
    if status == "failed" and job["revision"] == LEGACY:
        # a failed 2025-11-25 task: no result, or the isError result tasks/result returns (both comply)
        tagged = {**server.failed_result(), "_meta": {"io.modelcontextprotocol/related-task": {"taskId": server.task_id}}}
        accepted.append({**want, "result": tagged})
    if got not in accepted:
        rule = era_rule(job["revision"], R_STOP) if isinstance(got, dict) and got.get("status") != status \
            else R_RESULT
        raise CheckFailed(f"run_task() returned {got!r}, which is not what this run calls for.\n" + story, rule,
                          expected=" or ".join(json.dumps(a) for a in accepted))


def _want(server: TaskServer, status: str) -> dict[str, Any]:
    if server.inline:
        return {"status": "completed", "taskId": None,
                "result": {"resultType": "complete", "content": [{"type": "text", "text": server.output}],
                           "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "jobs", "version": "1.0"}}}}
    result: Any = None
    if status == "completed":
        result = {"content": [{"type": "text", "text": server.output}]}
        if server.revision == LEGACY:
            result["_meta"] = {"io.modelcontextprotocol/related-task": {"taskId": server.task_id}}
        else:
            result = {"resultType": "complete", **result}
    return {"status": status, "taskId": server.task_id, "result": result}


def _era(kind: str) -> str:
    return MODERN if "2026" in kind else LEGACY


def check_shapes(ctx: CheckContext, kind: str) -> None:
    server, job = make_case(ctx, _era(kind), "completed", inline="inline" in kind)
    _expect(ctx, server, job, run_case(ctx, server, job), _want(server, "completed"))


def check_interval(ctx: CheckContext, kind: str) -> None:
    mode = "changing" if "changing" in kind else "none" if "no pollInterval" in kind else "fixed"
    server, job = make_case(ctx, _era(kind), "completed", intervals=mode, polls=ctx.rng.randint(3, 5))
    _expect(ctx, server, job, run_case(ctx, server, job), _want(server, "completed"))


def check_stop(ctx: CheckContext, kind: str) -> None:
    status = kind.split()[0]
    server, job = make_case(ctx, _era(kind), status)
    _expect(ctx, server, job, run_case(ctx, server, job), _want(server, status))


def check_deadline(ctx: CheckContext, kind: str) -> None:
    server, job = make_case(ctx, _era(kind), "never", deadline_polls=ctx.rng.randint(2, 4),
                            intervals="changing" if "changing" in kind else "fixed",
                            offset=0 if "exactly" in kind else 1 if "1 ms after" in kind else None)
    _expect(ctx, server, job, run_case(ctx, server, job), _want(server, "cancelled"), must_cancel=True)


# --- generated: any era, timeline, intervals and deadline, against the task's own schedule -------------

_ENDS = ("completed", "failed", "cancelled", "input_required", "never")
_GENERATED = st.tuples(st.sampled_from((LEGACY, MODERN)), st.sampled_from(_ENDS),
                       st.lists(st.sampled_from((None, 999, 1250, 2500, 3001)), min_size=1, max_size=3),
                       st.sampled_from((750, 1000, 1750)), st.integers(0, 8000), st.sampled_from(("far", "exact", "plus1", "odd")),
                       st.integers(1, 4), st.integers(0, 9))


def _timeline(case: tuple[Any, ...]) -> tuple[list[tuple[int, str, Any]], int, int]:
    """``(timeline, start, deadline)`` of a generated case: the intervals change at each of the first
    polls, the task ends ``end_ms`` after the start (or never), the deadline is far, exactly on a
    poll, or between two."""
    _, ends, intervals, default, end_ms, where, polls, _ = case
    start, timeline, at = 700, [], 700
    for i, interval in enumerate(intervals):
        timeline.append((at, "working", interval))
        at += (interval or default) if i == 0 else 1
    if ends != "never":
        timeline.append((start + 1 + end_ms, ends, timeline[-1][2]))
    first = intervals[0] or default
    if ends == "never" and where == "far":  # a task that never ends needs a deadline in reach
        where = "odd"
    deadline = {"far": start + 10**6, "exact": start + polls * first, "plus1": start + polls * first + 1,
                "odd": start + polls * first + 7}[where]
    return timeline, start, deadline


def _polled(timeline: list[tuple[int, str, Any]], start: int, deadline: int, default: int) -> str:
    """The status a client that polls at the latest interval stops at (``"deadline"``: still working
    when the deadline comes)."""
    def status_at(clock: int) -> tuple[str, Any]:
        found = ("working", timeline[0][2])
        for at, status, interval in timeline:
            if at <= clock:
                found = (status, interval)
        return found

    clock, interval = start, timeline[0][2]
    while True:
        step = interval if interval is not None else default
        if clock + step >= deadline:
            return "deadline"
        clock += step
        status, interval = status_at(clock)
        if status != "working":
            return status


def _describe(case: tuple[Any, ...]) -> str:
    timeline, start, deadline = _timeline(case)
    inline = " (the server answers inline)" if case[0] == MODERN and case[7] == 0 else ""
    return (f"{case[0]}{inline}: the task's timeline (ms, status, poll interval) {timeline}, call at {start} ms, "
            f"deadline {deadline} ms, default_poll_ms {case[3]}")


def check_generated(ctx: CheckContext, kind: str) -> None:
    def learner(case: tuple[Any, ...]) -> None:
        revision, default, variant = case[0], case[3], case[7]
        timeline, start, deadline = _timeline(case)
        inline = revision == MODERN and variant == 0
        call: dict[str, Any] = {"name": _TOOLS[variant % len(_TOOLS)], "arguments": {"size": variant}}
        if revision == LEGACY:
            call["task"] = {"ttl": 60_000}
        else:
            call["_meta"] = {"io.modelcontextprotocol/protocolVersion": MODERN,
                             "io.modelcontextprotocol/clientCapabilities": {"extensions": {_EXT: {}}}}
        server = TaskServer(ctx, revision, call, timeline, start, deadline, default, f"job {variant} done",
                            inline=inline)
        job = {"revision": revision, "call": call, "deadline_ms": deadline, "default_poll_ms": default}
        got = run_case(ctx, server, job)
        stopped = "completed" if inline else _polled(timeline, start, deadline, default)
        want = _want(server, "cancelled" if stopped == "deadline" else stopped)
        # 2025-11-25: a tasks/result sent while the task works waits for its end, which may come before the
        # deadline although no poll saw it: that end is right too
        ended = [(at, st) for at, st, _ in timeline if st != "working"]
        waited = revision == LEGACY and ended and ended[0][0] <= deadline and ended[0][1] != "input_required" \
            and server.result_fetched
        if waited and got != want:
            want = _want(server, ended[0][1])
            stopped = ended[0][1]
        _expect(ctx, server, job, got, want, must_cancel=stopped == "deadline")

    differential(ctx, _GENERATED, learner=learner, oracle=lambda case: None, compare=_no_mismatch,
                 describe=_describe, raises_rule=R_SHAPE, examples=15)


def _no_mismatch(case: Any, got: Any, want: Any) -> Mismatch | None:
    return None  # the server and _expect raise at the first rule broken


EXERCISE = Exercise(
    id="ex08_task_polling",
    title="Poll a task: honour pollInterval, stop in time, cancel at the deadline",
    chapter="08",
    summary="Run a tools/call as a task in either era: poll tasks/get at the server's pace, stop at the status "
            "that ends polling, fetch the result the era's way, and cancel when the deadline passes.",
    rules=(R_SHAPE, R_INTERVAL, R_INTERVAL_EXT, R_STOP, R_STOP_EXT, R_RESULT, R_BLOCKS, R_ISERROR, R_CANCEL,
           R_CANCEL_EXT, R_LOOP, R_DEADLINE),
    functions=("run_task",),
    checks=(
        Check("The call's answer in each era's shape", R_SHAPE, check_shapes,
              ("task in 2025-11-25", "task in 2026-07-28", "inline answer in 2026-07-28"),
              hint="Look at where the Task sits in each era's answer, and at resultType: is there a task at all?"),
        Check("Polling at the server's pace", R_INTERVAL, check_interval,
              ("fixed interval in 2025-11-25", "fixed interval in 2026-07-28", "changing interval in 2025-11-25",
               "changing interval in 2026-07-28", "no pollInterval in 2025-11-25", "no pollInterval in 2026-07-28"),
              hint="Which Task's interval do you sleep: the first one, or the latest? And what if it has none?"),
        Check("Stop at the status that ends polling", R_STOP, check_stop,
              ("completed in 2025-11-25", "completed in 2026-07-28", "failed in 2025-11-25", "failed in 2026-07-28",
               "cancelled in 2025-11-25", "cancelled in 2026-07-28", "input_required in 2025-11-25",
               "input_required in 2026-07-28"),
              hint="List the statuses after which another tasks/get can tell you nothing new."),
        Check("Give up at the deadline with tasks/cancel", R_DEADLINE, check_deadline,
              ("deadline in 2025-11-25", "deadline in 2026-07-28", "deadline with a changing interval in 2025-11-25",
               "deadline with a changing interval in 2026-07-28", "deadline exactly at a poll in 2025-11-25",
               "deadline exactly at a poll in 2026-07-28", "deadline 1 ms after a poll in 2025-11-25",
               "deadline 1 ms after a poll in 2026-07-28"),
              hint="Before each poll, compare now() with the deadline; never sleep past it."),
        Check("Any timeline, intervals and deadline: the loop stops where the task's schedule says", R_INTERVAL,
              check_generated, ("generated",),
              hint="Replay the smallest timeline by hand: when is each poll due, what does it show, and does the "
                   "deadline come first?"),
    ),
    hints=(
        Hint("Send the call, then read the answer: 2025-11-25 puts the Task under result.task; 2026-07-28 puts it "
             "at the top with resultType \"task\" — and resultType \"complete\" means there is no task, the answer "
             "is the result.", R_SHAPE),
        Hint("Between two tasks/get, sleep the pollInterval (pollIntervalMs) of the latest Task you received, or "
             "the job's default_poll_ms when it has none — but never past the deadline.", R_INTERVAL),
        Hint("Stop polling on completed, failed, cancelled and input_required. Return a result only for completed: "
             "in 2025-11-25 fetch it with tasks/result; in 2026-07-28 it is in the tasks/get answer.", R_RESULT),
        Hint("When now() reaches the deadline and the task is still working, send tasks/cancel {taskId} (with the "
             "call's _meta in 2026-07-28) and return status \"cancelled\".", R_DEADLINE),
    ),
    forbidden=("mcp_sim.roles", "mcp_sim.capabilities", "mcp_sim.scenarios"),
)
