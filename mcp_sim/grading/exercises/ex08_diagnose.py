"""Exercise ex08_diagnose (chapter 08): which message of this tasks trace breaks which rule?

Each case runs the chapter's task story in the simulator (:mod:`.ex08_task_traces`: a real Client and
a real Server, 2025-11-25 core tasks or the 2026-07-28 extension) and then, unless the case is a sound
trace, breaks exactly one message in a seeded way: a finished task's status going back, a Task
answering for another ``taskId``, tasks used without the capability or extension being declared, a
cancel of a finished task answered as a success, a result shown while the task still works, a Task in
the other era's shape. The learner's ``diagnose(trace)`` returns ``{"index": i, "rule": tag}`` for the
broken message, or ``None``. Sound traces hold decoys (a refused cancel of a finished task,
``input_required`` going back to ``working``, a 2026-07-28 cancel of a finished task acknowledged, a
cancelled task polled once more). Every seed tries
every kind; the seed picks the story and which message breaks.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from mcp_sim.grading.model import Check, CheckContext, CheckFailed, Exercise, Hint

R_TERMINAL = "tasks.legacy.terminal-is-final"
R_TASK_ID = "tasks.legacy.task-id-names-the-task"
R_DECLARED = "tasks.legacy.only-declared"
R_CANCEL_DONE = "tasks.legacy.cancel-terminal-refused"
R_RESULT = "tasks.ext.get-by-status"
R_SHAPE = "tasks.legacy.create-task-result"
RULE_TAGS = {"terminal-regress": R_TERMINAL, "wrong-task-id": R_TASK_ID, "undeclared": R_DECLARED,
             "cancel-finished": R_CANCEL_DONE, "result-while-working": R_RESULT, "era-shape": R_SHAPE}

LEGACY, MODERN = "2025-11-25", "2026-07-28"
_TERMINAL = ("completed", "failed", "cancelled")
_EXT = "io.modelcontextprotocol/tasks"
_CC = "io.modelcontextprotocol/clientCapabilities"


def _methods(messages: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """Index of each server response → the client request it answers."""
    requests: dict[Any, dict[str, Any]] = {}
    out = {}
    for i, m in enumerate(messages):
        msg = m["message"]
        if m["from"] == "client" and "method" in msg and "id" in msg:
            requests[json.dumps(msg["id"])] = msg
        elif m["from"] == "server" and "method" not in msg and "id" in msg:
            out[i] = requests[json.dumps(msg["id"])]
    return out


def _task_of(msg: dict[str, Any]) -> dict[str, Any] | None:
    """The Task a server message shows (result, nested task, or notification params), if any."""
    if "params" in msg and msg.get("method", "").startswith("notifications/tasks"):
        params: dict[str, Any] = msg["params"]
        return params
    result = msg.get("result")
    if not isinstance(result, dict):
        return None
    if isinstance(result.get("task"), dict):
        task: dict[str, Any] = result["task"]
        return task
    return result if "taskId" in result else None


def _status_messages(messages: list[dict[str, Any]], answered: dict[int, dict[str, Any]]) -> list[int]:
    """Server messages that show a Task after an earlier message showed the same task terminal."""
    seen: dict[str, str] = {}
    out = []
    for i, m in enumerate(messages):
        task = _task_of(m["message"]) if m["from"] == "server" else None
        if task is None:
            continue
        if seen.get(task["taskId"]) in _TERMINAL and answered.get(i, {}).get("method") != "tasks/cancel":
            out.append(i)
        seen[task["taskId"]] = task["status"]
    return out


def break_trace(rng: Any, messages: list[dict[str, Any]], revision: str, mistake: str) -> int:
    """Break one message of ``messages`` (in place) the way ``mistake`` says; return its index."""
    answered = _methods(messages)
    modern = revision == MODERN

    def responses(method: str, test: Any = lambda i: True) -> list[int]:
        return [i for i, req in answered.items() if req["method"] == method and test(i)]

    if mistake == "terminal-regress":
        at = rng.choice(_status_messages(messages, answered))
        task = _task_of(messages[at]["message"])
        assert task is not None
        task["status"] = rng.choice([s for s in ("working", "input_required", "failed", "completed")
                                     if s != task["status"]])
        for key in ("result", "error", "inputRequests"):
            task.pop(key, None)
        return at
    if mistake == "wrong-task-id":
        at = rng.choice(responses("tasks/get") + responses("tasks/cancel", lambda i: "taskId" in messages[i]["message"].get("result", {})))
        task = _task_of(messages[at]["message"])
        assert task is not None
        ids = sorted({t["taskId"] for t in (_task_of(m["message"]) for m in messages if m["from"] == "server") if t})
        task["taskId"] = rng.choice([t for t in ids if t != task["taskId"]] + [f"task-{rng.randint(7, 99)}"])
        return at
    if mistake == "undeclared":
        if modern:
            at = rng.choice([i for i in answered if messages[i]["message"].get("result", {}).get("resultType") == "task"])
            caps = answered[at]["params"]["_meta"][_CC]
            del caps["extensions"][_EXT]
            if not caps["extensions"]:
                del caps["extensions"]
            return at
        init = next(i for i, req in answered.items() if req["method"] == "initialize")
        tasks_caps = messages[init]["message"]["result"]["capabilities"]["tasks"]
        options = ["requests", "cancel", "everything"] + (["list"] if "tasks/list" in
                                                           {r["method"] for r in answered.values()} else [])
        what = rng.choice(options)
        if what == "everything":
            del messages[init]["message"]["result"]["capabilities"]["tasks"]
        else:
            del tasks_caps[what]
        first = {"requests": "tools/call", "everything": "tools/call", "list": "tasks/list", "cancel": "tasks/cancel"}
        return next(i for i, m in enumerate(messages) if m["from"] == "client" and
                    m["message"].get("method") == first[what] and
                    (first[what] != "tools/call" or "task" in m["message"].get("params", {})))
    if mistake == "cancel-finished":
        at = next(i for i in responses("tasks/cancel") if "error" in messages[i]["message"])
        msg = messages[at]["message"]
        task_id = answered[at]["params"]["taskId"]
        last = [t for t in (_task_of(m["message"]) for m in messages[:at] if m["from"] == "server")
                if t and t["taskId"] == task_id][-1]
        msg["result"] = {**{k: v for k, v in last.items() if k != "statusMessage"}, "status": "cancelled"}
        del msg["error"]
        return at
    if mistake == "result-while-working":
        done = next(_task_of(messages[i]["message"]) for i in responses("tasks/get")
                    if messages[i]["message"]["result"]["status"] == "completed")
        assert done is not None
        at = rng.choice([i for i in responses("tasks/get")
                         if messages[i]["message"]["result"]["status"] in ("working", "input_required")])
        messages[at]["message"]["result"]["result"] = copy.deepcopy(done["result"])
        return at
    if mistake == "era-shape":
        created = [i for i in responses("tools/call") if _task_of(messages[i]["message"]) is not None]
        shown = created + responses("tasks/get")
        at = rng.choice(shown)
        result = messages[at]["message"]["result"]
        if at in created and rng.random() < 0.5:
            if modern:  # the legacy nesting, in a 2026-07-28 answer
                task = {k: result.pop(k) for k in list(result) if k not in ("resultType", "_meta")}
                result["task"] = task
            else:       # the extension's flattening, in a 2025-11-25 answer
                result.update(result.pop("task"))
            return at
        task = _task_of(messages[at]["message"])
        assert task is not None
        names = (("ttlMs", "ttl"), ("pollIntervalMs", "pollInterval")) if modern else \
            (("ttl", "ttlMs"), ("pollInterval", "pollIntervalMs"))
        old, new = rng.choice(names)
        task[new] = task.pop(old)
        return at
    raise ValueError(mistake)


def build_trace(rng: Any, revision: str, mistake: str) -> tuple[dict[str, Any], int | None]:
    """A simulated trace in ``revision`` with ``mistake`` in it (``""``: none), and the bad index."""
    from mcp_sim.grading.exercises.ex08_task_traces import public, story

    messages, _ = story(rng, revision)
    bad = break_trace(rng, messages, revision, mistake) if mistake else None
    return {"revision": revision, "messages": public(messages)}, bad


KINDS = {"terminal-regress": (LEGACY, MODERN), "wrong-task-id": (LEGACY, MODERN), "undeclared": (LEGACY, MODERN),
         "cancel-finished": (LEGACY,), "result-while-working": (MODERN,), "era-shape": (LEGACY, MODERN)}


def _ask(ctx: CheckContext, kind: str) -> None:
    mistake, revision = kind.rsplit(" in ", 1)
    mistake = "" if mistake == "sound trace" else mistake
    trace, bad = build_trace(ctx.rng, revision, mistake)
    got = ctx.function("diagnose")(copy.deepcopy(trace))
    listing = "\n".join(f"  [{i}] {m['from']}: {json.dumps(m['message'])}" for i, m in enumerate(trace["messages"]))
    if bad is None:
        if got is not None:
            tag = got.get("rule", "") if isinstance(got, dict) else ""
            raise CheckFailed(f"Trace ({revision}):\n{listing}\nEvery message here keeps the rules (a 2025-11-25 "
                              f"cancel of a finished task refused, a 2026-07-28 one acknowledged, input_required "
                              f"going back to working and a task polled after it ended are all fine), so diagnose() should return None; it returned "
                              f"{got!r}.", RULE_TAGS.get(tag if isinstance(tag, str) else "", ""))
        return
    want = {"index": bad, "rule": mistake}
    if got != want:
        raise CheckFailed(f"Trace ({revision}):\n{listing}\nOne message of this trace breaks a rule; "
                          f"diagnose() returned {got!r}, which is not it.", RULE_TAGS[mistake],
                          case=f"the trace above ({revision})", expected=json.dumps(want))


def _kinds(mistake: str) -> tuple[str, ...]:
    return tuple(f"{mistake} in {era}" for era in KINDS[mistake])


EXERCISE = Exercise(
    id="ex08_diagnose",
    title="Diagnose a tasks trace: which message breaks which rule?",
    chapter="08",
    summary="Read a Client–Server tasks trace (2025-11-25 core tasks or the 2026-07-28 extension) and name the "
            "message that breaks a rule, or say the trace is sound.",
    rules=tuple(RULE_TAGS.values()),
    functions=("diagnose",),
    checks=(
        Check("Sound traces are sound", R_TERMINAL, _ask, ("sound trace in 2025-11-25", "sound trace in 2026-07-28"),
              hint="Which status changes are allowed? Only the terminal ones are final."),
        Check("A finished task's status goes back", R_TERMINAL, _ask, _kinds("terminal-regress"),
              hint="Remember each task's latest status, from every message that shows a Task."),
        Check("An answer about another task", R_TASK_ID, _ask, _kinds("wrong-task-id"),
              hint="Compare each answer's taskId with the taskId of the request it answers."),
        Check("Tasks without the capability or the extension", R_DECLARED, _ask, _kinds("undeclared"),
              hint="2025-11-25: read capabilities.tasks in the initialize answer. 2026-07-28: read each request's "
                   "clientCapabilities."),
        Check("A finished task cancelled successfully", R_CANCEL_DONE, _ask, _kinds("cancel-finished"),
              hint="What was the task's status when tasks/cancel arrived, and what came back?"),
        Check("A result while the task works", R_RESULT, _ask, _kinds("result-while-working"),
              hint="Which status may carry a result?"),
        Check("A Task in the other era's shape", R_SHAPE, _ask, _kinds("era-shape"),
              hint="Look at the names of the ttl and interval fields, and where the Task sits in the create answer."),
    ),
    hints=(
        Hint("Walk the messages in order and keep: each request by id (answers carry no method), the server's "
             "tasks capabilities (2025-11-25), and each task's latest status.", R_TERMINAL),
        Hint("A Task shows up in several places: the create answer, tasks/get answers, successful tasks/cancel "
             "answers (2025-11-25), and notifications/tasks/status (2025-11-25) or notifications/tasks "
             "(2026-07-28).", R_SHAPE),
        Hint("Return {\"index\": i, \"rule\": tag} with one of the tags \"terminal-regress\", \"wrong-task-id\", "
             "\"undeclared\", \"cancel-finished\", \"result-while-working\", \"era-shape\" — or None for a sound "
             "trace.", R_DECLARED),
    ),
)
