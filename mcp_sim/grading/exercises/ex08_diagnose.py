"""Exercise ex08_diagnose (chapter 08): which message of this tasks trace breaks which rule?

Each case runs the chapter's task story in the simulator (:mod:`.ex08_task_traces`: a real Client and
a real Server, 2025-11-25 core tasks or the 2026-07-28 extension) and then, unless the case is a sound
trace, breaks exactly one message in a seeded way: a finished task's status going back (also after
the end came as ``notifications/tasks`` on a 2026-07-28 listen stream), a Task
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
import random
from typing import Any

from hypothesis import strategies as st

from mcp_sim.grading.differential import differential
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


def _status_messages(messages: list[dict[str, Any]], answered: dict[int, dict[str, Any]],
                     terminal: str) -> list[int]:
    """Server messages that show a Task after an earlier message showed the same task ``terminal``."""
    seen: dict[str, str] = {}
    out = []
    for i, m in enumerate(messages):
        task = _task_of(m["message"]) if m["from"] == "server" else None
        if task is None:
            continue
        if seen.get(task["taskId"]) == terminal and answered.get(i, {}).get("method") != "tasks/cancel":
            out.append(i)
        seen[task["taskId"]] = task["status"]
    return out


VARIANTS: dict[str, dict[str, tuple[str, ...]]] = {
    # mistake -> revision -> the variations of that mistake, each its own case kind
    "terminal-regress": {LEGACY: ("completed, then working", "failed, then completed", "cancelled, then working",
                                  "completed, then working after a newer task"),
                         MODERN: ("completed, then working", "completed, then failed",
                                  "completed on a listen stream, then working",
                                  "completed, then working after a newer task")},
    "wrong-task-id": {LEGACY: ("tasks/get names another task", "tasks/cancel names an unknown task"),
                      MODERN: ("tasks/get names another task", "tasks/get names an unknown task")},
    "undeclared": {LEGACY: ("no requests.tools.call", "no cancel", "no list", "no tasks at all"),
                   MODERN: ("the first task", "a later task")},
    "cancel-finished": {LEGACY: ("a completed task", "a cancelled task")},
    "result-while-working": {MODERN: ("while working", "while input_required")},
    "era-shape": {LEGACY: ("the create answer flattened", "ttlMs for ttl", "pollIntervalMs for pollInterval"),
                  MODERN: ("the create answer nested", "ttl for ttlMs", "pollInterval for pollIntervalMs")},
}


def break_trace(rng: Any, messages: list[dict[str, Any]], revision: str, mistake: str, variant: str) -> int:
    """Break one message of ``messages`` (in place) the way ``mistake`` and its ``variant`` say; return
    its index. The seed (``rng``) only chooses among equivalent places."""
    answered = _methods(messages)
    modern = revision == MODERN

    def responses(method: str, test: Any = lambda i: True) -> list[int]:
        return [i for i, req in answered.items() if req["method"] == method and test(i)]

    if mistake == "terminal-regress":
        before, _, after = variant.partition(", then ")
        if after.endswith(" after a newer task"):  # the answer about an older task, once a newer one exists
            after = after.removesuffix(" after a newer task")
            created_ids: list[str] = []
            candidates = []
            for i, m in enumerate(messages):
                shown = _task_of(m["message"]) if m["from"] == "server" else None
                if shown is not None and answered.get(i, {}).get("method") == "tools/call":
                    created_ids.append(shown["taskId"])
                elif shown is not None and len(created_ids) > 1 and shown["taskId"] != created_ids[-1]:
                    candidates.append(i)
            at = next(i for i in candidates if i in _status_messages(messages, answered, before))
        elif before.endswith(" on a listen stream"):  # the first Task after the one notifications/tasks ended
            before = before.removesuffix(" on a listen stream")
            heard = next(i for i, m in enumerate(messages) if m["message"].get("method") == "notifications/tasks"
                         and m["message"]["params"]["status"] == before)
            at = next(i for i in _status_messages(messages, answered, before) if i > heard)
        else:
            at = rng.choice(_status_messages(messages, answered, before))
        task = _task_of(messages[at]["message"])
        assert task is not None
        task["status"] = after
        for key in ("result", "error", "inputRequests"):
            task.pop(key, None)
        return at
    if mistake == "wrong-task-id":
        if variant.startswith("tasks/cancel"):
            at = rng.choice(responses("tasks/cancel", lambda i: "taskId" in messages[i]["message"].get("result", {})))
        else:
            at = rng.choice(responses("tasks/get"))
        task = _task_of(messages[at]["message"])
        assert task is not None
        ids = sorted({t["taskId"] for t in (_task_of(m["message"]) for m in messages if m["from"] == "server") if t})
        others = [t for t in ids if t != task["taskId"]]
        task["taskId"] = rng.choice(others) if "another" in variant else f"task-{rng.randint(50, 99)}"
        return at
    if mistake == "undeclared":
        if modern:
            made = [i for i in answered if messages[i]["message"].get("result", {}).get("resultType") == "task"]
            at = made[0] if variant == "the first task" else rng.choice(made[1:])
            caps = answered[at]["params"]["_meta"][_CC]
            del caps["extensions"][_EXT]
            if not caps["extensions"]:
                del caps["extensions"]
            return at
        init = next(i for i, req in answered.items() if req["method"] == "initialize")
        tasks_caps = messages[init]["message"]["result"]["capabilities"]["tasks"]
        what = {"no requests.tools.call": "requests", "no cancel": "cancel", "no list": "list",
                "no tasks at all": "everything"}[variant]
        if what == "everything":
            del messages[init]["message"]["result"]["capabilities"]["tasks"]
        else:
            del tasks_caps[what]
        first = {"requests": "tools/call", "everything": "tools/call", "list": "tasks/list", "cancel": "tasks/cancel"}
        return next(i for i, m in enumerate(messages) if m["from"] == "client" and
                    m["message"].get("method") == first[what] and
                    (first[what] != "tools/call" or "task" in m["message"].get("params", {})))
    if mistake == "cancel-finished":
        def last_shown(at: int) -> dict[str, Any]:
            task_id = answered[at]["params"]["taskId"]
            return [t for t in (_task_of(m["message"]) for m in messages[:at] if m["from"] == "server")
                    if t and t["taskId"] == task_id][-1]

        status = variant.split()[-2]  # "a completed task" -> completed
        at = next(i for i in responses("tasks/cancel") if "error" in messages[i]["message"]
                  and last_shown(i)["status"] == status)
        msg = messages[at]["message"]
        last = last_shown(at)
        msg["result"] = {**{k: v for k, v in last.items() if k != "statusMessage"}, "status": "cancelled"}
        del msg["error"]
        return at
    if mistake == "result-while-working":
        done = next(_task_of(messages[i]["message"]) for i in responses("tasks/get")
                    if messages[i]["message"]["result"]["status"] == "completed")
        assert done is not None
        status = variant.split()[-1]
        at = rng.choice([i for i in responses("tasks/get") if messages[i]["message"]["result"]["status"] == status])
        messages[at]["message"]["result"]["result"] = copy.deepcopy(done["result"])
        return at
    if mistake == "era-shape":
        created = [i for i in responses("tools/call") if _task_of(messages[i]["message"]) is not None]
        if variant.startswith("the create answer"):
            at = rng.choice(created)
            result = messages[at]["message"]["result"]
            if modern:  # the legacy nesting, in a 2026-07-28 answer
                task = {k: result.pop(k) for k in list(result) if k not in ("resultType", "_meta")}
                result["task"] = task
            else:       # the extension's flattening, in a 2025-11-25 answer
                result.update(result.pop("task"))
            return at
        at = rng.choice(created + responses("tasks/get"))
        task = _task_of(messages[at]["message"])
        assert task is not None
        new, _, old = variant.partition(" for ")
        task[new] = task.pop(old)
        return at
    raise ValueError(mistake)


def build_trace(rng: Any, revision: str, mistake: str, variant: str = "") -> tuple[dict[str, Any], int | None]:
    """A simulated trace in ``revision`` with ``mistake`` (``""``: none) in its ``variant``, and the bad
    index. A 2025-11-25 client sends tasks/list only where a variation needs it (or the story draws)."""
    from mcp_sim.grading.exercises.ex08_task_traces import public, story

    messages, _ = story(rng, revision, True if variant == "no list" else None)
    bad = break_trace(rng, messages, revision, mistake, variant) if mistake else None
    return {"revision": revision, "messages": public(messages)}, bad


def _ask(ctx: CheckContext, kind: str, rng: Any = None) -> None:
    """``kind`` is ``"<mistake>: <variant> in <revision>"`` or ``"sound trace in <revision>"``."""
    what, revision = kind.rsplit(" in ", 1)
    mistake, _, variant = what.partition(": ")
    mistake = "" if mistake == "sound trace" else mistake
    trace, bad = build_trace(ctx.rng if rng is None else rng, revision, mistake, variant)
    got = ctx.function("diagnose")(copy.deepcopy(trace))
    listing = "\n".join(f"  [{i}] {m['from']}: {json.dumps(m['message'])}" for i, m in enumerate(trace["messages"]))
    if bad is None:
        if got is not None:
            tag = got.get("rule", "") if isinstance(got, dict) else ""
            raise CheckFailed(f"Trace ({revision}):\n{listing}\nEvery message here keeps the rules (a 2025-11-25 "
                              f"cancel of a finished task refused, a 2026-07-28 one acknowledged, input_required "
                              f"going back to working and a task polled after it ended are all fine), yet "
                              f"diagnose() returned {got!r}.", RULE_TAGS.get(tag if isinstance(tag, str) else "", ""),
                              expected="None")
        return
    want = {"index": bad, "rule": mistake}
    if got != want:
        raise CheckFailed(f"Trace ({revision}):\n{listing}\nOne message of this trace breaks a rule; "
                          f"diagnose() returned {got!r}, which is not it.", RULE_TAGS[mistake],
                          case=f"the trace above ({revision})", expected=json.dumps(want))


def _kinds(mistake: str) -> tuple[str, ...]:
    return tuple(f"{mistake}: {variant} in {era}" for era, variants in VARIANTS[mistake].items()
                 for variant in variants)


def check_generated(ctx: CheckContext, kind: str) -> None:
    """Every kind, on other stories of this seed (other tools, times, with and without tasks/list):
    a seeded generator of the same power as the fixed cases."""
    kinds = [k for c in EXERCISE.checks if c.run is not check_generated for k in c.kinds]
    rules = {k: c.rule for c in EXERCISE.checks for k in c.kinds}

    def learner(case: tuple[int, int]) -> None:
        try:
            _ask(ctx, kinds[case[0]], random.Random(f"ex08_diagnose|{ctx.seed}|{case[1]}"))
        except CheckFailed as exc:
            raise CheckFailed(str(exc), exc.rule or rules[kinds[case[0]]], case=exc.case, expected=exc.expected) \
                from None

    differential(ctx, st.tuples(st.integers(0, len(kinds) - 1), st.integers(0, 5)), learner=learner,
                 oracle=lambda case: None, compare=lambda *_: None,
                 describe=lambda case: f"the kind {kinds[case[0]]!r} on story {case[1] + 1} of this seed",
                 raises_rule=R_SHAPE, examples=12)


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
        Check("Any kind, on other stories of the seed", R_TERMINAL, check_generated, ("generated",),
              hint="Walk the smallest case's trace by hand, keeping each task's latest status and each request "
                   "by id."),
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
