"""Exercise ex08_next_message (chapter 08): play the Client or the Server of a tasks session — write
the next message.

Each case runs the chapter's task story in the simulator (a real Client and a real Server, see
:mod:`.ex08_task_traces`), in 2025-11-25 (core tasks) or 2026-07-28 (the tasks extension), and stops
it just before a message of a fixed kind: the server creating a task, or running a call inline because
nobody opted in; answering ``tasks/get`` and ``tasks/result``; cancelling a finished task (refused in
2025-11-25, acknowledged by the extension), a working one, and (2025-11-25) one already cancelled;
answering ``tasks/get`` after the completion came as ``notifications/tasks`` on a 2026-07-28 listen
stream (whose ``subscriptions/listen`` the client closed, so it is never answered); the client polling, fetching the result,
answering ``input_required`` with ``tasks/update``, and cancelling. The learner's ``next_message(role, transcript, world)`` must return
the message the simulator sent there. It is compared structurally (the same JSON, apart from what the
protocol leaves free: ids of new requests, ``statusMessage`` texts, ``serverInfo``) and validated
against the revision's official schema. Every seed tries every kind; the seed picks the tools, times,
intervals, retention and answers.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from mcp_sim.grading.differential import differential
from mcp_sim.grading.model import Check, CheckContext, CheckFailed, Exercise, Hint

R_CREATE = "tasks.legacy.create-task-result"
R_OPT_IN = "tasks.ext.declared-in-request"
R_CANCEL_DONE = "tasks.legacy.cancel-terminal-refused"
R_CANCEL_DONE_EXT = "tasks.sim-cancel-terminal-ext"
R_STATE = "tasks.legacy.result-is-the-call-s"
R_CANCEL = "tasks.legacy.cancelled-before-answer"
R_POLL = "tasks.legacy.keep-polling"
R_NEXT = "tasks.legacy.related-task"
R_SCHEMA = "jsonrpc.messages-follow-jsonrpc"

LEGACY, MODERN = "2025-11-25", "2026-07-28"
_SERVER_INFO = "io.modelcontextprotocol/serverInfo"

Finder = Callable[[list[dict[str, Any]]], int]


def _request_index(messages: list[dict[str, Any]], method: str, test: Callable[[dict[str, Any]], bool] = bool,
                   nth: int = 0) -> int:
    found = [i for i, m in enumerate(messages) if m["from"] == "client" and m["message"].get("method") == method
             and "id" in m["message"] and test(m["message"].get("params") or {})]
    return found[nth]


def _response_index(messages: list[dict[str, Any]], request_at: int) -> int:
    rid = messages[request_at]["message"]["id"]
    return next(i for i in range(request_at + 1, len(messages)) if messages[i]["from"] == "server"
                and "method" not in messages[i]["message"] and messages[i]["message"].get("id") == rid)


def _opted_in(params: dict[str, Any]) -> bool:
    caps = (params.get("_meta") or {}).get("io.modelcontextprotocol/clientCapabilities") or {}
    return "task" in params or "io.modelcontextprotocol/tasks" in (caps.get("extensions") or {})


def _answer(method: str, test: Callable[[dict[str, Any]], bool] = bool, nth: int = 0) -> Finder:
    return lambda ms: _response_index(ms, _request_index(ms, method, test, nth))


def _ask(method: str, test: Callable[[dict[str, Any]], bool] = bool, nth: int = 0) -> Finder:
    return lambda ms: _request_index(ms, method, test, nth)


def _created(messages: list[dict[str, Any]]) -> list[str]:
    """The taskIds the server handed out, in order."""
    out = []
    for m in messages:
        result = m["message"].get("result") if m["from"] == "server" else None
        if isinstance(result, dict) and (isinstance(result.get("task"), dict) or result.get("resultType") == "task"):
            out.append(result.get("task", result)["taskId"])
    return out


def _get_of_older(messages: list[dict[str, Any]]) -> int:
    """The answer to a tasks/get of a task that is not the newest one."""
    for i, m in enumerate(messages):
        msg = m["message"]
        if m["from"] == "client" and msg.get("method") == "tasks/get" and "id" in msg:
            made = _created(messages[:i])
            if made and msg["params"]["taskId"] != made[-1]:
                return _response_index(messages, i)
    raise LookupError("no tasks/get of an older task")


def _failed_get(messages: list[dict[str, Any]]) -> int:
    """The answer that first shows a task failed."""
    return next(i for i, m in enumerate(messages) if m["from"] == "server"
                and (m["message"].get("result") or {}).get("status") == "failed")


def _poll_newest_of_several(messages: list[dict[str, Any]]) -> int:
    """The client's first tasks/get of a task created after another one."""
    for i, m in enumerate(messages):
        msg = m["message"]
        if m["from"] == "client" and msg.get("method") == "tasks/get" and "id" in msg:
            made = _created(messages[:i])
            if len(made) > 1 and msg["params"]["taskId"] == made[-1]:
                return i
    raise LookupError("no poll of a second task")


def _cancel_of(status: str, answer: bool = True) -> Finder:
    """The first tasks/cancel (its answer, or the request itself) of a task whose latest status was ``status``."""
    def find(messages: list[dict[str, Any]]) -> int:
        latest: dict[str, str] = {}
        for i, m in enumerate(messages):
            msg = m["message"]
            if m["from"] == "client" and msg.get("method") == "tasks/cancel" and "id" in msg \
                    and latest.get(msg["params"]["taskId"]) == status:
                return _response_index(messages, i) if answer else i
            result = msg.get("params") if str(msg.get("method", "")).startswith("notifications/tasks") \
                else msg.get("result")
            task = result.get("task", result) if isinstance(result, dict) else None
            if m["from"] == "server" and isinstance(task, dict) and "taskId" in task and "status" in task:
                latest[task["taskId"]] = task["status"]
        raise LookupError(f"no tasks/cancel of a {status} task")
    return find


CASES: dict[str, tuple[str, Finder]] = {
    # kind: (role, where the expected message is)
    "create": ("server", _answer("tools/call", _opted_in)),
    "inline": ("server", _answer("tools/call", lambda p: not _opted_in(p))),
    "cancel finished": ("server", _cancel_of("completed")),  # the story cancels a finished task first,
    "cancel a failed task": ("server", _cancel_of("failed")),  # 2025-11-25: then the failed one,
    "cancel working": ("server", _cancel_of("working")),  # then one that still works,
    "cancel a cancelled task": ("server", _cancel_of("cancelled")),  # 2025-11-25: and that one again
    "tasks/get after the completion notice": ("server", _answer("tasks/get", nth=1)),  # 2026-07-28: on a listen
    "tasks/result": ("server", _answer("tasks/result")),
    "tasks/get of an older task": ("server", _get_of_older),
    "tasks/get of a failed task": ("server", _failed_get),
    "poll a second task": ("client", _poll_newest_of_several),
    "poll": ("client", _ask("tasks/get")),
    "fetch the result": ("client", _ask("tasks/result")),
    "answer input_required": ("client", _ask("tasks/update")),
    "cancel": ("client", _cancel_of("working", answer=False)),
}


def build_case(rng: Any, kind: str) -> tuple[str, list[dict[str, Any]], dict[str, Any], dict[str, Any], str | None]:
    """Run the story for ``kind`` (``"<case> in <revision>"``) and cut it: (role, transcript, world,
    the simulator's own next message, the method it answers)."""
    from mcp_sim.capabilities.task_store import iso_time
    from mcp_sim.grading.exercises.ex08_task_traces import TASKS_EXT, public, story

    case, _, revision = kind.rpartition(" in ")
    role, find = CASES[case]
    messages, drawn = story(rng, revision)
    at = find(messages)
    expected = messages[at]["message"]
    transcript = messages[:at]
    method = None
    if "method" not in expected:
        method = next(m["message"]["method"] for m in transcript if m["from"] == "client"
                      and m["message"].get("id") == expected.get("id") and "method" in m["message"])
    created = sum(1 for m in transcript if m["from"] == "server" and "result" in m["message"] and (
        "task" in m["message"]["result"] or m["message"]["result"].get("resultType") == "task"))
    world: dict[str, Any] = {
        "revision": revision,
        "server": {"tools": {drawn["long_tool"]: "optional", drawn["only_task_tool"]: "required",
                             drawn["asking_tool"]: "optional"},
                   "outputs": drawn["outputs"], "poll_interval_ms": drawn["poll_interval_ms"],
                   "default_ttl_ms": drawn["server_ttl_ms"], "next_task_id": f"task-{created + 1}"},
    }
    if role == "server":
        world["now"] = iso_time(messages[at]["t_ms"] / 1000)
    else:
        world["intent"] = "cancel" if case == "cancel" else "wait"
        world["user_answer"] = drawn["user_answer"]
        if revision == MODERN:
            first = next(m["message"] for m in transcript if m["from"] == "client" and "id" in m["message"])
            caps = copy.deepcopy(first["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"])
            caps.setdefault("extensions", {})[TASKS_EXT] = {}
            world["client_capabilities"] = caps
            world["client_info"] = first["params"]["_meta"].get("io.modelcontextprotocol/clientInfo")
    return role, public(transcript), world, expected, method


def _normal(result: Any) -> Any:
    """A result without what the protocol leaves free: ``statusMessage`` and ``serverInfo``."""
    if not isinstance(result, dict):
        return result
    out = {k: v for k, v in result.items() if k != "statusMessage"}
    meta = out.get("_meta")
    if isinstance(meta, dict):
        meta = {k: v for k, v in meta.items() if k != _SERVER_INFO}
        if meta:
            out["_meta"] = meta
        else:
            out.pop("_meta")
    return out


def _same_id(a: Any, b: Any) -> bool:
    return a == b and type(a) is type(b)


def judge(ctx: CheckContext, kind: str, rule: str, rng: Any = None) -> None:
    from mcp_sim.grading.exercises.ex08_task_traces import TASKS_EXT, schema_problems
    from mcp_sim.wire.jsonrpc import InvalidMessage, JSONRPCErrorResponse, JSONRPCRequest, parse_object

    role, transcript, world, expected, method = build_case(ctx.rng if rng is None else rng, kind)
    got = ctx.function("next_message")(role, copy.deepcopy(transcript), copy.deepcopy(world))
    last = transcript[-1]
    where = (f"Playing the {role} of a {world['revision']} session; the transcript's last message: "
             f"{last['from']}: {json.dumps(last['message'])}")
    if not isinstance(got, dict):
        raise CheckFailed(f"{where}\nnext_message() returned {type(got).__name__}; it should return one JSON-RPC "
                          f"message as a dict.")
    parsed = parse_object(got)
    if isinstance(parsed, InvalidMessage):
        raise CheckFailed(f"{where}\nYour message {json.dumps(got)} is not valid JSON-RPC: {parsed.reason}.")
    if role == "server":
        pending = next(m["message"] for m in transcript if m["from"] == "client"
                       and _same_id(m["message"].get("id"), expected["id"]) and "method" in m["message"])
        want_error = "error" in expected
        if kind.startswith("cancel finished") and world["revision"] == MODERN and "error" in got \
                and _same_id(got.get("id"), expected["id"]):
            want_error = True  # tasks.sim-cancel-terminal-ext: an error complies too; the simulator acknowledges
            expected = {**expected, "error": {"code": getattr(getattr(parsed, "error", None), "code", None)}}
        what = "an error response" if want_error else "a result response"
        if isinstance(parsed, JSONRPCRequest) or "method" in got or ("error" in got) != want_error:
            raise CheckFailed(f"{where}\nThe pending request is {json.dumps(pending)}: the server owes it {what}; "
                              f"yours is {json.dumps(got)}.", rule)
        if not _same_id(got.get("id"), expected["id"]):
            raise CheckFailed(f"{where}\nThe response must carry the id of the request it answers, "
                              f"{expected['id']!r}; yours has {got.get('id')!r}.", rule)
        if want_error:
            assert isinstance(parsed, JSONRPCErrorResponse)
            if parsed.error.code != expected["error"]["code"]:
                raise CheckFailed(f"{where}\nYour answer to {json.dumps(pending)} is error {parsed.error.code}: "
                                  f"not the code this server answers here.", rule,
                                  expected=f"error {expected['error']['code']}")
        elif _normal(got["result"]) != _normal(expected["result"]):
            raise CheckFailed(f"{where}\nYour answer to {json.dumps(pending)} is\n  "
                              f"{json.dumps(_normal(got['result']))}\nwhich is not what this server answers here.",
                              rule, expected=json.dumps(_normal(expected['result'])))
    else:
        if not isinstance(parsed, JSONRPCRequest):
            raise CheckFailed(f"{where}\nThe client's next message is a {expected['method']} request (with an id); "
                              f"yours is {json.dumps(got)}.", rule)
        used = [m["message"]["id"] for m in transcript if m["from"] == "client" and "id" in m["message"]]
        if any(_same_id(parsed.id, u) for u in used):
            raise CheckFailed(f"{where}\nThe id {parsed.id!r} was already used by the client; a new request needs a "
                              f"new id.", R_POLL)
        if parsed.method != expected["method"]:
            raise CheckFailed(f"{where}\nYour next request is {parsed.method}: not the one this client sends "
                              f"here.", rule, expected=f"a {expected['method']} request")
        mine = {k: v for k, v in (got.get("params") or {}).items() if k != "_meta"}
        theirs = {k: v for k, v in expected["params"].items() if k != "_meta"}
        if mine != theirs:
            raise CheckFailed(f"{where}\nYour {expected['method']} params (apart from _meta) are "
                              f"{json.dumps(mine)}: not the ones this client sends here.", rule,
                              expected=json.dumps(theirs))
        if world["revision"] == MODERN:
            meta = (got.get("params") or {}).get("_meta") or {}
            caps = meta.get("io.modelcontextprotocol/clientCapabilities") or {}
            if meta.get("io.modelcontextprotocol/protocolVersion") != MODERN or \
                    TASKS_EXT not in (caps.get("extensions") or {}):
                raise CheckFailed(f"{where}\nA 2026-07-28 request carries _meta with protocolVersion {MODERN!r} and "
                                  f"the clientCapabilities, here with the {TASKS_EXT} extension declared; yours "
                                  f"has _meta {json.dumps(meta)}.", R_POLL)
    problems = schema_problems(got, method, world["revision"])
    if problems:
        raise CheckFailed(f"{where}\nYour message {json.dumps(got)} is not valid against the {world['revision']} "
                          f"schema: {problems[0]}", R_SCHEMA)


def _check(rule: str) -> Callable[[CheckContext, str], None]:
    return lambda ctx, kind: judge(ctx, kind, rule)


def _both(case: str) -> tuple[str, ...]:
    return (f"{case} in {LEGACY}", f"{case} in {MODERN}")


# --- generated: any kind, on any of several stories of this seed ----------------------------------------

def check_generated(ctx: CheckContext, kind: str) -> None:
    """Every kind of the fixed checks, on stories the fixed cases did not draw (other tools, times,
    intervals, retention, answers; with and without tasks/list): a seeded generator of the same power."""
    kinds = [(k, c.rule) for c in EXERCISE.checks if c.run is not check_generated for k in c.kinds]
    cases = st.tuples(st.integers(0, len(kinds) - 1), st.integers(0, 5))

    def learner(case: tuple[int, int]) -> None:
        which, story = case
        judge(ctx, kinds[which][0], kinds[which][1], random.Random(f"ex08_next_message|{ctx.seed}|{story}"))

    differential(ctx, cases, learner=learner, oracle=lambda case: None, compare=lambda *_: None,
                 describe=lambda case: f"the kind {kinds[case[0]][0]!r} on story {case[1] + 1} of this seed",
                 raises_rule=R_SCHEMA, examples=12)


EXERCISE = Exercise(
    id="ex08_next_message",
    title="Continue a tasks session: the next message, as Client or Server",
    chapter="08",
    summary="Read a paused tasks session (2025-11-25 core tasks or the 2026-07-28 extension) and write the "
            "message the Client or the Server sends next.",
    rules=(R_CREATE, R_OPT_IN, R_CANCEL_DONE, R_CANCEL_DONE_EXT, R_STATE, R_CANCEL, R_POLL, R_NEXT, R_SCHEMA),
    functions=("next_message",),
    checks=(
        Check("Server: create the task", R_CREATE, _check(R_CREATE), _both("create"),
              hint="Which era is it? Look where each era puts the Task, and which names its ttl and interval carry."),
        Check("Server: no opt-in, no task", R_OPT_IN, _check(R_OPT_IN), _both("inline"),
              hint="Did this request ask for a task (params.task) or declare the tasks extension?"),
        Check("Server: tasks/cancel of a finished task", R_CANCEL_DONE, _check(R_CANCEL_DONE),
              (*_both("cancel finished"), f"cancel a failed task in {LEGACY}", f"cancel a cancelled task in {LEGACY}"),
              hint="What was the task's last status before this tasks/cancel, and which era refuses such a "
                   "cancel?"),
        Check("Server: cancel a working task", R_CANCEL, _check(R_CANCEL), _both("cancel working"),
              hint="What does each era answer a successful tasks/cancel with?"),
        Check("Server: tasks/get and tasks/result", R_STATE, _check(R_STATE),
              (*_both("tasks/get after the completion notice"), f"tasks/result in {LEGACY}",
               *_both("tasks/get of an older task"), f"tasks/get of a failed task in {LEGACY}"),
              hint="Find the latest Task the server announced for this taskId, and the tool's output in the world."),
        Check("Client: poll with tasks/get", R_POLL, _check(R_POLL), (*_both("poll"), *_both("poll a second task")),
              hint="Which task is working, and what does a 2026-07-28 request always carry?"),
        Check("Client: fetch the result, answer the input", R_NEXT, _check(R_NEXT),
              (f"fetch the result in {LEGACY}", f"answer input_required in {MODERN}"),
              hint="Read the last tasks/get answer: completed (2025-11-25) or input_required (2026-07-28)?"),
        Check("Client: cancel with tasks/cancel", R_CANCEL, _check(R_CANCEL), _both("cancel"),
              hint="The world says the user gave up: which request stops a task, and which task is it?"),
        Check("Any kind, on other stories: the simulator's next message", R_STATE, check_generated, ("generated",),
              hint="Replay the smallest case's transcript by hand: which request is pending, or what is the "
                   "newest task's latest status?"),
    ),
    hints=(
        Hint("Sort the transcript first: client requests by id, the server's answers, the server's notices. "
             "The server answers the one client request without a response; the client acts on the latest news "
             "about the newest task.", R_POLL),
        Hint("Keep a table of tasks: taskId → the latest Task you saw (from the create answer, tasks/get answers, "
             "notifications/tasks/status, the cancel answer) and the tool that started it.", R_STATE),
        Hint("2025-11-25: {task: {..., ttl, pollInterval}}, tasks/get answers a bare Task, tasks/result the tool's "
             "result with _meta related-task. 2026-07-28: resultType \"task\" with ttlMs and pollIntervalMs, "
             "tasks/* answers carry resultType \"complete\", cancel answers are empty.", R_CREATE),
        Hint("A tasks/cancel for a task that already completed, failed or was cancelled: 2025-11-25 refuses it "
             "with -32602; the 2026-07-28 extension says nothing, and its simulated server acknowledges it and changes nothing "
             "(an error would comply too).", R_CANCEL_DONE_EXT),
    ),
    forbidden=("mcp_sim.roles", "mcp_sim.capabilities", "mcp_sim.scenarios", "mcp_sim.grading"),
)
