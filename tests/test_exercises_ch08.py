"""Chapter 08 exercises (tasks): plausible wrong answers and cheats, each rejected on the same 20 seeds.

``tests/test_exercises.py`` already checks, for every registered exercise, that the starter fails and
the reference passes on 20 seeds, that the generic cheats fail and that a hard-coded answer fails; its
five-wrong-answers test reads :data:`WRONG` below too. Here: the chapter's own wrong answers (small
edits of the reference, each a mistake a learner could make), cheats that reach for the simulator the
exercise is about, and the properties the checks rely on (simulated traces valid against the schema,
broken traces broken in exactly one message).
"""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest
from test_exercises import SEEDS, assert_wrong_answer_rejected

from mcp_sim.grading import get_exercise
from mcp_sim.grading.exercises import ex08_diagnose, ex08_task_traces
from mcp_sim.grading.runner import grade_seeds, reference_path
from mcp_sim.protocol.schema import find_spec_dir, schema_errors

POLL, NEXT, DIAG = "ex08_task_polling", "ex08_next_message", "ex08_diagnose"

WRONG: list[tuple[str, str, Any, str]] = [
    # --- ex08_task_polling ----------------------------------------------------------------------
    (POLL, "busy polling (no sleep)", [("        sleep(min(interval, left))\n", "")], "Polling at the server's pace"),
    (POLL, "the default interval, whatever the server says",
     [('interval = task.get("pollInterval" if legacy else "pollIntervalMs", job["default_poll_ms"])',
       'interval = job["default_poll_ms"]')], "Polling at the server's pace"),
    (POLL, "the first interval kept for good",
     [('    task_id = task["taskId"]\n',
       '    task_id = task["taskId"]\n'
       '    first = task.get("pollInterval" if legacy else "pollIntervalMs", job["default_poll_ms"])\n'),
      ('interval = task.get("pollInterval" if legacy else "pollIntervalMs", job["default_poll_ms"])',
       'interval = first')], "Polling at the server's pace"),
    (POLL, "the 2025-11-25 field name in both eras",
     [('task.get("pollInterval" if legacy else "pollIntervalMs", job["default_poll_ms"])',
       'task.get("pollInterval", job["default_poll_ms"])')], "Polling at the server's pace"),
    (POLL, "failed taken for completed",
     [('    if task["status"] == "completed":', '    if task["status"] in ("completed", "failed"):')],
     "Stop at the status that ends polling"),
    (POLL, "polling on through input_required",
     [('STOP = ("completed", "failed", "cancelled", "input_required")', 'STOP = ("completed", "failed", "cancelled")')],
     "Stop at the status that ends polling"),
    (POLL, "tasks/result asked for right after the call, its answer ignored",
     [('    task_id = task["taskId"]\n',
       '    task_id = task["taskId"]\n    if legacy:\n        request("tasks/result", {"taskId": task_id})\n')],
     "The call's answer in each era's shape"),
    (POLL, "an inline answer taken for a task",
     [('    elif answer.get("resultType") == "task":', '    elif True:')], "The call's answer in each era's shape"),
    (POLL, "no _meta on the 2026-07-28 polls",
     [('extra = {} if legacy else {"_meta": call["_meta"]}', 'extra: dict[str, Any] = {}')],
     "The call's answer in each era's shape"),
    (POLL, "gives up at the deadline without tasks/cancel",
     [('            request("tasks/cancel", {"taskId": task_id, **extra})\n', '')],
     "Give up at the deadline with tasks/cancel"),
    (POLL, "cancels too early, one interval before the deadline",
     [("        if left <= 0:", "        if left <= interval:")], "Give up at the deadline with tasks/cancel"),
    # --- ex08_next_message ----------------------------------------------------------------------
    (NEXT, "the extension's flat Task in a 2025-11-25 answer",
     [('        return reply({"task": task})', '        return reply(task)')], "Server: create the task"),
    (NEXT, "a 2026-07-28 task answered with resultType complete",
     [('return {"jsonrpc": "2.0", "id": rid, "result": {"resultType": "task", **task}}', 'return reply(task)')],
     "Server: create the task"),
    (NEXT, "a task whether or not the client opted in",
     [('if not wants or server["tools"][name] == "forbidden":', 'if server["tools"][name] == "forbidden":'),
      ('ttl = params["task"].get("ttl", server["default_ttl_ms"])',
       'ttl = params.get("task", {}).get("ttl", server["default_ttl_ms"])')], "Server: no opt-in, no task"),
    (NEXT, "a finished task cancelled anyway",
     [('        if current["status"] in TERMINAL:', '        if False:')], "Server: tasks/cancel of a finished task"),
    (NEXT, "the cancel answered with the Task as it was",
     [('return reply({**current, "status": "cancelled", "lastUpdatedAt": now})', 'return reply(dict(current))')],
     "Server: cancel a working task"),
    (NEXT, "tasks/result without the related-task tag",
     [('return reply({"content": [{"type": "text", "text": text}],\n'
       '                      "_meta": {"io.modelcontextprotocol/related-task": {"taskId": params["taskId"]}}})',
       'return reply({"content": [{"type": "text", "text": text}]})')], "Server: tasks/get and tasks/result"),
    (NEXT, "the client reuses its last id",
     [('new_id = max([i for i in used if isinstance(i, int)], default=0) + 1',
       'new_id = max([i for i in used if isinstance(i, int)], default=0)')], "Client: poll with tasks/get"),
    (NEXT, "2026-07-28 polls without _meta",
     [('    if modern:\n        params["_meta"]', '    if False:\n        params["_meta"]')],
     "Client: poll with tasks/get"),
    (NEXT, "inputResponses keyed by method",
     [('answers = {key: world["user_answer"] for key in latest[task_id].get("inputRequests", {})}',
       'answers = {r["method"]: world["user_answer"] for r in latest[task_id].get("inputRequests", {}).values()}')],
     "Client: fetch the result, answer the input"),
    (NEXT, "polls a completed task instead of fetching its result",
     [('    elif not modern and status == "completed":', '    elif False:')],
     "Client: fetch the result, answer the input"),
    (NEXT, "notifications/cancelled instead of tasks/cancel",
     [('        method, params = "tasks/cancel", {"taskId": task_id}',
       '        return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": used[-1]}}')],
     "Client: cancel with tasks/cancel"),
    # --- ex08_diagnose --------------------------------------------------------------------------
    (DIAG, "every status change flagged",
     [('if before in TERMINAL and task["status"] != before:', 'if before is not None and task["status"] != before:')],
     "Sound traces are sound"),
    (DIAG, "statuses never remembered",
     [('if before in TERMINAL and task["status"] != before:', 'if False:')], "A finished task's status goes back"),
    (DIAG, "answers' taskIds not compared",
     [('if result["taskId"] != asked:', 'if False:')], "An answer about another task"),
    (DIAG, "the 2025-11-25 capabilities never read",
     [('            if not modern:\n', '            if False:\n')], "Tasks without the capability or the extension"),
    (DIAG, "the request blamed for the server's task",
     [('                if not _declared_extension(request):\n                    return bad(index, "undeclared")',
       '                if not _declared_extension(request):\n                    return bad(index - 1, "undeclared")')],
     "Tasks without the capability or the extension"),
    (DIAG, "cancel answers not checked",
     [('if method == "tasks/cancel" and not modern and status.get(asked) in TERMINAL:', 'if False:')],
     "A finished task cancelled successfully"),
    (DIAG, "the extension's acknowledged cancel flagged",
     [('if method == "tasks/cancel" and not modern and status.get(asked) in TERMINAL:',
       'if method == "tasks/cancel" and status.get(asked) in TERMINAL:')], "Sound traces are sound"),
    (DIAG, "a result allowed in any status",
     [('if revision == MODERN and "result" in task and task["status"] != "completed":', 'if False:')],
     "A result while the task works"),
    (DIAG, "field names not checked",
     [('if any(name in task for name in OTHER_NAMES[revision]):', 'if False:')], "A Task in the other era's shape"),
]
"""(exercise, mistake, edits of the reference or a whole file, the check that must reject it)."""


@pytest.mark.parametrize(("exercise_id", "name", "edits", "failing_check"), WRONG,
                         ids=[f"{w[0]}:{w[1]}" for w in WRONG])
def test_plausible_wrong_answer_is_rejected_on_20_seeds(tmp_path: Path, exercise_id: str, name: str, edits: Any,
                                                        failing_check: str) -> None:
    assert_wrong_answer_rejected(tmp_path, exercise_id, name, edits, failing_check)


COMPLIANT: list[tuple[str, str, Any, str]] = [
    # answers the spec allows although the simulator (or the reference) does otherwise: every seed passes
    (NEXT, "the 2025-11-25 refusal in both eras (the extension is silent: an error complies too)",
     [('        if modern:                       # the extension acknowledges; a finished task stays as it is\n'
       '            return reply({})\n', ''),
      ('        return reply({**current, "status": "cancelled", "lastUpdatedAt": now})',
       '        return reply({} if modern else {**current, "status": "cancelled", "lastUpdatedAt": now})')],
     "Server: tasks/cancel of a finished task"),
    (POLL, "a failed 2025-11-25 task's isError result fetched with tasks/result",
     [('    if task["status"] == "completed":', '    if task["status"] == "completed" or (legacy and task["status"] == "failed"):')],
     "Stop at the status that ends polling"),
    (POLL, "2025-11-25: tasks/result at once, waiting for the end (it blocks)",
     [('    task_id = task["taskId"]\n',
       '    task_id = task["taskId"]\n    if legacy:\n'
       '        return {"status": "completed", "taskId": task_id,\n'
       '                "result": request("tasks/result", {"taskId": task_id})["result"]}\n')],
     "The call's answer in each era's shape"),
]
"""(exercise, compliant variant, edits of the reference, the check it must pass on every seed)."""


@pytest.mark.parametrize(("exercise_id", "name", "edits", "check"), COMPLIANT,
                         ids=[f"{w[0]}:{w[1]}" for w in COMPLIANT])
def test_a_compliant_variant_passes_on_20_seeds(tmp_path: Path, exercise_id: str, name: str, edits: Any,
                                                check: str) -> None:
    from test_exercises import _edit

    ex = get_exercise(exercise_id)
    path = tmp_path / f"{exercise_id}_variant.py"
    path.write_text(_edit(reference_path(exercise_id).read_text(encoding="utf-8"), *edits), encoding="utf-8")
    for result in grade_seeds(ex, path, path.name, SEEDS, only=[check]):
        assert not result.load_error, result.load_error
        got = next(c for c in result.checks if c.name == check)
        assert got.status == "passed", f"{name} is compliant but failed {check!r}:\n{result}"


def test_each_exercise_has_five_wrong_answers_breaking_different_rules() -> None:
    for exercise_id in (POLL, NEXT, DIAG):
        mine = [w for w in WRONG if w[0] == exercise_id]
        assert len(mine) >= 5 and len({w[3] for w in mine}) >= 4, exercise_id


CHEATS: dict[str, tuple[str, str]] = {
    "replay the simulator's recorded run": (NEXT, '''
from mcp_sim.grading.exercises.ex08_task_traces import story


def next_message(role, transcript, world):
    return {}
'''),
    "answer with the simulator's own server": (NEXT, '''
from mcp_sim.roles.server import Server


def next_message(role, transcript, world):
    return {"jsonrpc": "2.0", "id": transcript[-1]["message"].get("id"), "result": {}}
'''),
    "build the Tasks with the simulator's records": (POLL, '''
from mcp_sim.capabilities.task_store import TaskRecord


def run_task(job, send, new_id, now, sleep):
    return {"status": "completed", "taskId": None, "result": None}
'''),
    "move the clock backwards": (POLL, '''
def run_task(job, send, new_id, now, sleep):
    answer = send({"jsonrpc": "2.0", "id": new_id(), "method": "tools/call", "params": job["call"]})["result"]
    task = answer.get("task", answer)
    extra = {"_meta": job["call"]["_meta"]} if "_meta" in job["call"] else {}
    while task.get("status") == "working":
        sleep(-1)
        task = send({"jsonrpc": "2.0", "id": new_id(), "method": "tasks/get",
                     "params": {"taskId": task["taskId"], **extra}})["result"]
    return {"status": task.get("status"), "taskId": task.get("taskId"), "result": task.get("result")}
'''),
    "read the grader's checks for the broken index": (DIAG, '''
import mcp_sim.grading.exercises.ex08_diagnose as checks


def diagnose(trace):
    return None
'''),
}


@pytest.mark.parametrize("cheat", list(CHEATS))
def test_cheat_is_rejected_on_20_seeds(tmp_path: Path, cheat: str) -> None:
    exercise_id, source = CHEATS[cheat]
    path = tmp_path / "exercises" / exercise_id / "starter.py"
    path.parent.mkdir(parents=True)
    path.write_text(source, encoding="utf-8")
    results = grade_seeds(get_exercise(exercise_id), path, path.name, SEEDS, stop_at_first_failure=True)
    assert len(results) == len(SEEDS)
    for result in results:
        assert not result.passed, f"{cheat} passed:\n{result}"


# --- what the checks rely on ------------------------------------------------------------------------

def _answered(messages: list[dict[str, Any]]) -> dict[int, str]:
    requests, out = {}, {}
    for i, m in enumerate(messages):
        msg = m["message"]
        if m["from"] == "client" and "method" in msg and "id" in msg:
            requests[json.dumps(msg["id"])] = msg["method"]
        elif "method" not in msg:
            out[i] = requests[json.dumps(msg["id"])]
    return out


def _body(message: dict[str, Any], method: str | None, revision: str) -> tuple[str, str, Any] | None:
    from test_fidelity import _body_type

    return _body_type(message, method, revision)


@pytest.mark.skipif(find_spec_dir() is None, reason="official MCP schemas not found")
@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
def test_the_simulated_task_stories_are_valid_against_the_schema(revision: str) -> None:
    """Every message of the stories, checked with the ``jsonschema`` library (as the fidelity test does)
    and with the grader's own fast validator, which must agree."""
    for seed in range(5):
        messages, _ = ex08_task_traces.task_trace(random.Random(seed), revision)
        methods = _answered(messages)
        assert len(messages) > 20
        for i, m in enumerate(messages):
            assert schema_errors(m["message"], revision, "JSONRPCMessage") == [], (i, m)
            body = _body(m["message"], methods.get(i), revision)
            if body is not None:
                assert schema_errors(body[2], body[0], body[1]) == [], (i, m)
            assert ex08_task_traces.schema_problems(m["message"], methods.get(i), revision) == [], (i, m)


@pytest.mark.skipif(find_spec_dir() is None, reason="official MCP schemas not found")
@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
def test_the_graders_validator_rejects_what_the_schema_rejects(revision: str) -> None:
    messages, _ = ex08_task_traces.task_trace(random.Random(1), revision)
    methods = _answered(messages)
    created = next(i for i, m in enumerate(messages) if methods.get(i) == "tools/call"
                   and ("task" in m["message"]["result"] or m["message"]["result"].get("resultType") == "task"))
    polled = next(i for i, m in enumerate(messages) if m["message"].get("method") == "tasks/get")
    broken: list[tuple[dict[str, Any], str | None]] = []
    answer = copy.deepcopy(messages[created]["message"])
    task = answer["result"].get("task", answer["result"])
    task["status"] = "sleeping"                       # not a TaskStatus
    broken.append((answer, "tools/call"))
    answer = copy.deepcopy(messages[created]["message"])
    answer["result"].get("task", answer["result"]).pop("createdAt")   # a required member missing
    broken.append((answer, "tools/call"))
    request = copy.deepcopy(messages[polled]["message"])
    request["params"]["taskId"] = 7                   # taskId is a string
    broken.append((request, None))
    broken.append(({"jsonrpc": "2.0", "id": None, "result": {}}, "tasks/get"))   # a null id
    for message, method in broken:
        assert ex08_task_traces.schema_problems(message, method, revision) != [], message


@pytest.mark.parametrize("kind", [k for c in ex08_diagnose.EXERCISE.checks for k in c.kinds
                                  if "sound" not in k and k != "generated"])
def test_a_broken_trace_differs_from_the_run_in_one_message(kind: str) -> None:
    what, revision = kind.rsplit(" in ", 1)
    mistake, _, variant = what.partition(": ")
    for seed in range(4):
        rng = random.Random(seed)
        story_seed = rng.randrange(1 << 16)
        original, _ = ex08_task_traces.task_trace(random.Random(story_seed), revision,
                                                  True if variant == "no list" else None)
        broken = copy.deepcopy(original)
        bad = ex08_diagnose.break_trace(random.Random(seed), broken, revision, mistake, variant)
        changed = [i for i, (a, b) in enumerate(zip(original, broken, strict=True)) if a != b]
        assert changed == [bad] or (mistake == "undeclared" and len(changed) == 1), (kind, seed, changed, bad)


@pytest.mark.skipif(find_spec_dir() is None, reason="official MCP schemas not found")
def test_the_polling_servers_answers_are_valid_against_the_schema() -> None:
    """The polling exercise's server builds its Tasks with the simulator's task records: every answer
    the reference solution receives, in every case kind, is valid for its revision."""
    import importlib.util

    from mcp_sim.grading.exercises import ex08_task_polling as polling
    from mcp_sim.grading.model import CheckContext

    spec = importlib.util.spec_from_file_location("ex08_polling_reference", reference_path(POLL))
    assert spec is not None and spec.loader is not None
    reference = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reference)
    checked = 0
    for check in polling.EXERCISE.checks:
        for kind in check.kinds:
            for seed in range(3):
                answers: list[tuple[str, str, dict[str, Any]]] = []

                def run(name: str, args: Any, answers: list[tuple[str, str, dict[str, Any]]] = answers,
                        **_: Any) -> Any:
                    job, server, new_id, now, sleep = args

                    def send(request: dict[str, Any]) -> dict[str, Any]:
                        response = server(request)
                        answers.append((job["revision"], request["method"], response))
                        return response

                    return getattr(reference, name)(job, send, new_id, now, sleep)

                learner = type("InProcess", (), {"call": staticmethod(run)})()
                check.run(CheckContext(learner, random.Random(f"{kind}|{seed}"), seed), kind)  # type: ignore[arg-type]
                for revision, method, response in answers:
                    assert ex08_task_traces.schema_problems(response, method, revision) == [], (kind, method, response)
                    checked += 1
    assert checked > 100
