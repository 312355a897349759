# %% [markdown]
# # 08 · Tasks
#
# **What you will learn**
#
# - why a tool that works for minutes needs a different shape than one request and one response —
#   *call now, collect later* — and who keeps the work alive meanwhile;
# - the experimental tasks of **2025-11-25**: a `task` field on `tools/call`, the `CreateTaskResult`
#   that comes back at once, then `tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel` and
#   `notifications/tasks/status`; the `tasks` capability on both sides and each tool's
#   `execution.taskSupport` (a 2025-11-25 field only);
# - the **2026-07-28** extension `io.modelcontextprotocol/tasks`: declared in each request, decided
#   by the server, answered with `resultType: "task"`; `tasks/get` with the result inside,
#   `tasks/update` for the user's answers, `tasks/cancel`, and `notifications/tasks` on a
#   `subscriptions/listen` stream;
# - **polling** (at the pace `pollInterval` asks for) against **being told**, on the virtual clock;
# - **cancellation** and what is left of a task afterwards, and **expiry** (`ttl`);
# - the errors that guard all of this: `-32601`, `-32602` and `-32021`.

# %% [markdown]
# ## The problem: a call that takes a while
#
# Until now every tool answered within its own request. A slow tool still can: the client simply
# waits, with the request open, until the result arrives. In 2025-06-18, which has no tasks, the
# ready-made `tasks` scenario does exactly that with a 20-second render. `timeline` (from
# `mcp_sim/scenarios/tasks_story.py`) prints a run's messages one per line, with the time of the
# simulation's virtual clock:

# %%
import json

from mcp_sim.scenarios import run_scenario
from mcp_sim.scenarios.tasks_story import run_tasks_story, timeline

no_tasks = run_scenario("tasks", revision="2025-06-18", seed=1)
print(timeline(no_tasks))

# %% [markdown]
# Twenty seconds with a request open. That is fine for twenty seconds; it is not fine for an hour.
# The request is tied to its connection, so a dropped connection, a restarted client or an HTTP
# proxy that gives up loses the answer, and the work with it. Nothing else can look at the job
# either: the client cannot ask "how far along?", and another client cannot pick it up.
#
# A **task** separates the two: the server answers at once with a *handle* (a `taskId`) and keeps
# the work, and its result, on its own side. The client comes back for it whenever it likes — on the
# same connection or on a new one.

# %% [markdown]
# ## Who may run what as a task
#
# The chapter's server is the `studio` (in `tasks_story.py`): four tools, one for each case.
#
# | tool | what it does | `execution.taskSupport` (2025-11-25) |
# |---|---|---|
# | `render` | eight seconds per frame | `optional`: as a task or inline, the client chooses |
# | `export` | five seconds | `required`: only ever as a task |
# | `publish` | asks the user, then publishes | `optional` |
# | `preview` | instant | absent, which means `forbidden` |
#
# In **2025-11-25** the server first declares the `tasks` capability in its `initialize` result:
# `list` and `cancel` say it serves `tasks/list` and `tasks/cancel`, and `requests.tools.call` says
# `tools/call` may be task-augmented [[ref tasks.legacy.capability]]. Then each tool says for itself in
# `tools/list`: a `forbidden` (or absent) tool is never called as a task [[ref tasks.legacy.forbidden-not-as-task]],
# an `optional` one either way [[ref tasks.legacy.optional-either-way]], a `required` one only as a task
# [[ref tasks.legacy.required-as-task]]:

# %%
def messages(trace, method, kind="response"):
    """The messages of one method and kind in a run's trace."""
    return [e.message for e in trace if e.method == method and e.kind == kind]


rules_legacy = run_tasks_story("rules", revision="2025-11-25")
rules_modern = run_tasks_story("rules", revision="2026-07-28")
print("tasks capability:", json.dumps(messages(rules_legacy, "initialize")[0]["result"]["capabilities"]["tasks"]))
for tool in messages(rules_legacy, "tools/list")[0]["result"]["tools"]:
    print(f"{tool['name']:8}", json.dumps(tool.get("execution", "(no execution field: forbidden)")))

# %% [markdown]
# Tasks can run the other way too. A client that declares `tasks` with
# `requests.sampling.createMessage` or `requests.elicitation.create` lets the *server* turn its
# sampling or elicitation request into a task that the client runs (the user may take a day to
# answer a form), with the same `tasks/*` methods sent by the server. Whoever sends the
# task-augmented request is the *requestor*; whoever runs the work is the *receiver*. The course's
# Host never offers that, so its clients do not declare `tasks` (a declared capability is a promise);
# here is what the studio's client sent in its `initialize`:

# %%
print("client capabilities:", json.dumps(messages(rules_legacy, "initialize", "request")[0]["params"]["capabilities"]))

# %% [markdown]
# In **2026-07-28** there is no `tasks` capability any more. Tasks became an *extension*, named in
# `capabilities.extensions` and versioned apart from the core schema: the server lists it in its
# `server/discover` result, and the client names it in the capabilities of **each request** that may
# become a task [[ref tasks.ext.declared-in-request]]. There is no `execution.taskSupport` either: a
# 2026-07-28 `Tool` has no `execution` field, so a client cannot know in advance which tools may
# answer with a task; it must be ready for a task from any `tools/call` [[ref tasks.ext.no-tool-level-negotiation]]
# [[ref tasks.ext.client-handles-both]]. The same studio, listed in 2026-07-28:

# %%
discover = messages(rules_modern, "server/discover")[0]["result"]
print("server extensions:", json.dumps(discover["capabilities"]["extensions"]))
for tool in messages(rules_modern, "tools/list")[0]["result"]["tools"]:
    print(f"{tool['name']:8}", json.dumps(tool.get("execution", "(no execution field)")))

# %%
from mcp_sim.course.predict import ask

ask("08-2025-11-25-client")

# %%
print(timeline(rules_legacy))

# %% [markdown]
# ## Starting a task
#
# The `poll` story starts a three-frame render (24 seconds of work) as a task. Here is the start in
# each era. In 2025-11-25 the client adds `task` to the params (it may ask for a `ttl` there) and
# the result wraps the new task in `task` [[ref tasks.legacy.create-task-result]]:

# %%
from mcp_sim.trace.reading import JsonView

poll_legacy = run_tasks_story("poll", revision="2025-11-25")
poll_modern = run_tasks_story("poll", revision="2026-07-28")
display(JsonView(messages(poll_legacy, "tools/call", "request")[0]))
display(JsonView(messages(poll_legacy, "tools/call")[0]))

# %% [markdown]
# In 2026-07-28 the request is an ordinary `tools/call`; what changes is one entry in its `_meta`
# capabilities. The **server** decides whether to make a task of it, and says so with
# `resultType: "task"` [[ref tasks.ext.server-decides]] [[ref tasks.ext.result-type-task]], and only once
# the task is durably created [[ref tasks.ext.durable-before-answer]]. The task's fields sit directly in
# the result, and two were renamed: `ttl` → `ttlMs`, `pollInterval` → `pollIntervalMs`. The `taskId`s
# you will see (`task-1` …) are the simulator's readable counters, which a real server must not copy
# [[ref tasks.sim-readable-ids]] [[ref tasks.ext.id-entropy]].

# %%
display(JsonView(messages(poll_modern, "tools/call", "request")[0]["params"]["_meta"]))
display(JsonView(messages(poll_modern, "tools/call")[0]))

# %% [markdown]
# Either way the answer came at 0.0 s, with `status: "working"`. A task then moves through a small
# state machine: `working` ⇄ `input_required`, then one of three **terminal** states, `completed`,
# `failed` or `cancelled`, which it never leaves.

# %% [markdown]
# ## Polling, at the pace the server asks for
#
# The studio says `pollInterval: 5000`: ask again every five seconds. Clients should honour it
# [[ref tasks.legacy.poll-interval]]; in the extension the value may change during the task's life and a
# server may rate-limit clients that poll faster [[ref tasks.ext.poll-interval]]. Predict first: the render
# ends at 24 s.

# %%
ask("08-task-created-0-s")

# %%
print("2025-11-25")
print(timeline(poll_legacy))
print("\n2026-07-28")
print(timeline(poll_modern))

# %% [markdown]
# Three differences are worth reading slowly:
#
# - **Where the result is.** In 2025-11-25 `tasks/get` only reports the status; the tool's own result
#   comes from `tasks/result`, which returns exactly what the `tools/call` would have returned, tagged
#   with `io.modelcontextprotocol/related-task` in its `_meta` [[ref tasks.legacy.result-is-the-call-s]]
#   [[ref tasks.legacy.related-task]]. (`tasks/result` on an unfinished task *blocks* until the task ends
#   [[ref tasks.legacy.result-blocks]].) In 2026-07-28 there is no `tasks/result`: once `completed`, the
#   `tasks/get` answer carries the result inside it, a `DetailedTask` [[ref tasks.ext.get-by-status]].
# - **Unasked news.** The 2025-11-25 server also sent `notifications/tasks/status` at 24 s. That is
#   optional [[ref tasks.legacy.status-notification-optional]], and a client must not rely on it
#   [[ref tasks.legacy.no-relying-on-status-notification]], which is why this client kept polling.
# - **A tool that failed.** A tool that ran and failed answers with a *result* (`isError: true`,
#   chapter 05). 2025-11-25 counts such a task as `failed`, and `tasks/result` returns that result
#   [[ref tasks.legacy.iserror-is-failed]]. The extension files it under `completed`, the failing result
#   inside, and keeps `failed` for JSON-RPC errors during the work, carried in the task's `error` field
#   [[ref tasks.ext.failed-is-json-rpc-only]].

# %%
display(JsonView(messages(poll_legacy, "tasks/result")[0]))
display(JsonView(messages(poll_modern, "tasks/get")[-1]["result"]))

# %% [markdown]
# 2025-11-25 also lets a client list its tasks (`tasks/list`, paginated like every list), and every task
# it can reach with `tasks/get` is in that list [[ref tasks.legacy.list-covers-get]]; a server that cannot
# tell requestors apart should not offer the list at all [[ref tasks.legacy.no-list-without-identity]]. The ready-made
# `tasks` tour scenario asks for it while its render is running:

# %%
tour = run_scenario("tasks", revision="2025-11-25", seed=1)
display(JsonView(messages(tour, "tasks/list")[0]["result"]))

# %% [markdown]
# The extension has no `tasks/list`: the client keeps the ids it was given, durably, so that it can
# resume polling after a restart [[ref tasks.ext.keep-polling]]. Tasks belong to whoever created them
# [[ref tasks.legacy.bind-to-auth-context]] [[ref tasks.ext.auth-each-request]]: when another caller asks for
# your `taskId`, this server answers as if it did not exist (`-32602`). Over Streamable HTTP every
# `tasks/*` request of the extension also names its task in the `Mcp-Name` header, so that a load
# balancer can route it [[ref tasks.ext.mcp-name-header]].

# %% [markdown]
# ## Being told instead of asking
#
# Polling is simple and always works; it costs one round trip per interval and up to one interval
# of delay. Both eras also let the server *push* the news:
#
# - 2025-11-25: `notifications/tasks/status`, on the same connection, when the server chooses to
#   send it (it may skip some transitions, or all of them);
# - 2026-07-28: `notifications/tasks`, on a `subscriptions/listen` stream (chapter 07) whose filter
#   names the task in `taskIds` [[ref tasks.ext.notifications-on-listen]]. The notification is the whole
#   `DetailedTask`, result included; progress and log messages are never sent for a task
#   [[ref tasks.ext.no-progress-for-tasks]]. Since the server may only start sending once the client has
#   subscribed, and the client can only subscribe once it knows the `taskId`, a client polls once after
#   the acknowledgement in case the task changed in between.
#
# The `notify` story starts the same render and then waits, without polling, for that message:

# %%
notify_legacy = run_tasks_story("notify", revision="2025-11-25")
notify_modern = run_tasks_story("notify", revision="2026-07-28")
print("2025-11-25")
print(timeline(notify_legacy))
print("\n2026-07-28")
print(timeline(notify_modern))

# %% [markdown]
# The news arrived at 24 s, the moment the work ended, and no `tasks/get` was sent. Count the
# messages each client needed to learn the outcome:

# %%
for label, run in (("2025-11-25 poll", poll_legacy), ("2025-11-25 notify", notify_legacy),
                   ("2026-07-28 poll", poll_modern), ("2026-07-28 notify", notify_modern)):
    wire = [e for e in run if e.kind in ("request", "response", "notification", "error")
            and e.method != "notifications/progress"]
    print(f"{label:18} {len(wire):2} messages")

# %% [markdown]
# The push is faster and cheaper, but only as reliable as the stream that carries it. A 2025-11-25
# client should keep polling anyway [[ref tasks.legacy.keep-polling]]; a 2026-07-28 client may stop
# polling while its listen stream is open and fall back to `tasks/get` if the stream breaks. Since the
# task lives on the server, a client that lost its connection can ask again — as long as it still
# has the `taskId` and the task's `ttl` has not run out.

# %% [markdown]
# ## Cancelling, and what is left afterwards
#
# A task is not an open request, so `notifications/cancelled` (chapter 02) does not apply to it and is
# not used for it [[ref tasks.legacy.not-notifications-cancelled]] [[ref tasks.ext.cancel-not-notification]]:
# it has its own `tasks/cancel`. The `cancel` story starts a six-frame render (48 s of work), polls once
# at 5 s, cancels, looks at the task, cancels again, and comes back at 50 s, after the render would
# have finished. Predict before you run it:

# %%
ask("08-render-cancelled-5-s")

# %%
cancel_legacy = run_tasks_story("cancel", revision="2025-11-25")
cancel_modern = run_tasks_story("cancel", revision="2026-07-28")
print("2025-11-25")
print(timeline(cancel_legacy))
print("\n2026-07-28")
print(timeline(cancel_modern))

# %% [markdown]
# What the two eras do differently:
#
# - **The answer to `tasks/cancel`.** 2025-11-25 moves the task to `cancelled` *before* answering
#   and returns the task [[ref tasks.legacy.cancelled-before-answer]], and it stays cancelled
#   [[ref tasks.legacy.cancelled-stays]]; the extension only acknowledges with an empty result
#   [[ref tasks.ext.cancel-acknowledged]]. For the extension cancelling is a request, not an order: the
#   work may still end `completed` if it finished first [[ref tasks.ext.cancel-cooperative]], and a client
#   need not poll to see `cancelled` [[ref tasks.ext.forget-after-cancel]]. This simulator's extension
#   server happens to stop the render at once, which is why both timelines show `cancelled`.
# - **Cancelling twice.** 2025-11-25 rejects cancelling a task in a terminal state with `-32602`
#   [[ref tasks.legacy.cancel-terminal-refused]]. The extension says nothing about it; this simulator
#   acknowledges again and leaves the task as it was, and an error would comply too
#   [[ref tasks.sim-cancel-terminal-ext]].
# - **The result.** A cancelled task has none: `tasks/get` shows no `result`, and in 2025-11-25
#   `tasks/result` answers with an error [[ref tasks.sim-cancelled-result-error]]. A server may even delete
#   a cancelled task at once [[ref tasks.legacy.cancelled-may-vanish]]: fetch what you need *before*
#   cancelling.

# %%
display(JsonView(messages(cancel_legacy, "tasks/cancel")[0]))
display(JsonView(messages(cancel_legacy, "tasks/cancel", "error")[0]))
display(JsonView(messages(cancel_modern, "tasks/cancel")[0]))

# %% [markdown]
# ## How long a task is kept: `ttl`
#
# A finished task's result waits on the server, but not forever. `ttl` (`ttlMs` in the extension)
# counts **from creation**; `null` means no limit. It is not a promise to keep the task that long —
# it is the point after which the server *may* delete it. In 2025-11-25 the client may ask for a
# `ttl` in its `task` field [[ref tasks.legacy.ttl-asked]] and the server answers with the one it grants
# [[ref tasks.legacy.ttl-override]]; in the extension only the server chooses, and the value may change
# while the task lives [[ref tasks.ext.ttl-may-change]]. After it runs out the server may delete the task,
# result and all, but need not [[ref tasks.legacy.ttl-may-delete]]; the extension also lets it mark the task
# `failed` first [[ref tasks.ext.ttl-backstop]]. A `tasks/get` for a deleted task is `-32602`, the same as
# for an id that never existed [[ref tasks.legacy.unknown-task]] [[ref tasks.ext.unknown-task-get]].
#
# In the `expiry` story the export takes 5 s and its ttl is 10 s. The client looks at 6 s, then
# leaves it until 15 s:

# %%
ask("08-ttl-10000-ms-creation")

# %%
expiry_legacy = run_tasks_story("expiry", revision="2025-11-25")
expiry_modern = run_tasks_story("expiry", revision="2026-07-28")
print("2025-11-25")
print(timeline(expiry_legacy))
print("\n2026-07-28")
print(timeline(expiry_modern))

# %% [markdown]
# ## A task that needs the user
#
# The `publish` tool stops after 3 s to ask the user a yes/no question. The task shows it by moving
# to `input_required`; how the question travels depends on the era:
#
# - 2025-11-25: the server sends an ordinary `elicitation/create` request (chapter 04), tagged with
#   the task in `_meta` (`io.modelcontextprotocol/related-task`), so that the client knows which task
#   is asking [[ref tasks.legacy.related-task]]. The spec also asks a client that sees `input_required`
#   to call `tasks/result` at once, so that over HTTP the question has a response stream to travel on
#   [[ref tasks.legacy.input-required-call-result]]. The course's client does not: on the memory
#   transport below the question reaches it anyway, so it keeps polling (a *should*, not a *must*);
# - 2026-07-28: the server cannot send requests, so the open questions appear in the task itself,
#   as `inputRequests` in the `tasks/get` answer (the same shapes as chapter 04's
#   `InputRequiredResult`), and the client answers with `tasks/update` and `inputResponses`
#   [[ref tasks.ext.answer-with-update]]. The keys are unique over the task's life, so an answer can
#   never be matched to the wrong question [[ref tasks.ext.input-keys-unique]]; the same question shows up
#   in every poll until answered, so the client deduplicates [[ref tasks.ext.dedupe-input-keys]]. The
#   acknowledgement of `tasks/update` may come before the task shows the answer, and a partial answer
#   may be accepted [[ref tasks.ext.update-ack-eventual]]. The questions get the same trust as direct
#   ones: a task is not a more trusted channel [[ref tasks.ext.same-trust-as-direct]]. Input needed
#   *before* the task starts is a multi round-trip exchange on the `tools/call` itself, finished before
#   the task is created [[ref tasks.ext.mrtr-before-task]].

# %%
input_legacy = run_tasks_story("input", revision="2025-11-25")
input_modern = run_tasks_story("input", revision="2026-07-28")
print("2025-11-25")
print(timeline(input_legacy))
print(json.dumps(messages(input_legacy, "elicitation/create", "request")[0]["params"]["_meta"]))
print("\n2026-07-28")
print(timeline(input_modern))
print(json.dumps(messages(input_modern, "tasks/update", "request")[0]["params"]["inputResponses"]))

# %% [markdown]
# ## The extension's guard: `-32021`
#
# In 2026-07-28 nothing is remembered between requests, so each request must say for itself that it
# speaks the extension. A server never answers a task to a request that did not declare it
# [[ref tasks.ext.declared-in-request]]. The `rules` story leaves the declaration out on purpose:

# %%
print(timeline(rules_modern))
display(JsonView(messages(rules_modern, "tasks/get", "error")[0]))

# %% [markdown]
# - `export` can only run as a task on this server, and the request did not declare the extension:
#   `-32021` (*missing required client capability*), with the missing piece in
#   `data.requiredCapabilities` [[ref tasks.ext.required-capability-error]]. (That `export` needs a task
#   is the server's own business: the 2026 client could not see it in `tools/list`.);
# - `render` may run either way, so the undeclared call simply ran inline and answered after 8 s;
# - a `tasks/get` (or `tasks/update`, `tasks/cancel`) from a request that does not declare the
#   extension is `-32021` too, and so is a `subscriptions/listen` that asks for `taskIds`
#   [[ref tasks.ext.undeclared-is-32021]].

# %%
ask("08-2026-07-28-request")

# %% [markdown]
# ## The two designs side by side
#
# The methods come from the simulator's revision table (`mcp_sim/protocol/revisions.py`), the same
# data that drives the server:

# %%
from mcp_sim.protocol.revisions import TASKS_EXTENSION, TASKS_EXTENSION_METHODS, get_revision

core = get_revision("2025-11-25")
print("2025-11-25 core:    ", sorted(m for m in core.requests if m.startswith("tasks/")),
      sorted(n for n in core.notifications if n.startswith("notifications/tasks")))
print(f"2026-07-28 {TASKS_EXTENSION}:", sorted(TASKS_EXTENSION_METHODS), "+ notifications/tasks")
print("2026-07-28 core:    ", sorted(m for m in get_revision("2026-07-28").requests if m.startswith("tasks/")))

# %% [markdown]
# | | 2025-11-25 (experimental, core) | 2026-07-28 (extension `io.modelcontextprotocol/tasks`) |
# |---|---|---|
# | negotiated | `tasks` capability at `initialize`, both sides; `execution.taskSupport` per tool | `extensions` in `server/discover` and in **each request's** `_meta` |
# | who decides | the client, with `params.task` (within `taskSupport`) | the server, per request |
# | the answer | `CreateTaskResult {task: {…}}` | `resultType: "task"` and the task's fields, flat |
# | timing fields | `ttl`, `pollInterval` | `ttlMs`, `pollIntervalMs` |
# | the result | `tasks/result` (blocks until the end) | inside `tasks/get` once `completed` |
# | input | `elicitation/create` etc. tagged `related-task`; status `input_required` | `inputRequests` in `tasks/get`, answered by `tasks/update` |
# | listing | `tasks/list` | none: keep your ids |
# | pushed news | `notifications/tasks/status` (optional) | `notifications/tasks` on `subscriptions/listen` with `taskIds` |
# | cancel | `tasks/cancel` → the cancelled task; terminal task → `-32602` | `tasks/cancel` → acknowledgement; cooperative (terminal task: unspecified; this simulator acknowledges) |
# | who runs tasks | either side (server tools; client sampling and elicitation) | the server, for `tools/call` only |
# | undeclared | `-32601` when `taskSupport` is broken (a *should* for `forbidden`, a *must* for `required`; the same page also allows `-32600`) | `-32021` with `requiredCapabilities` |

# %% [markdown]
# ## Step through it yourself
#
# Below are the two cancellation runs, 2025-11-25 on the left and 2026-07-28 on the right. Step to a
# `tasks/get` answer and **fork** the run with that message dropped: the client's poll times out, and
# because the task lives on the server, the next poll simply picks up where the last one left off.
# Or change the revision of one side to see the other era's version of the same story.

# %%
from functools import partial

from mcp_sim.widgets.player import play, side_by_side

rerun = partial(run_tasks_story, "cancel")
side_by_side(play(cancel_legacy, runner=rerun, options={"revision": "2025-11-25", "seed": 0}),
             play(cancel_modern, runner=rerun, options={"revision": "2026-07-28", "seed": 0}))

# %% [markdown]
# ## Recap
#
# - A task turns a long call into *call now, collect later*: the server keeps the work and its result,
#   under a `taskId`, for `ttl` milliseconds from creation; the client comes back whenever it likes.
# - **2025-11-25** (experimental, core): the `tasks` capability on both sides and each tool's
#   `execution.taskSupport`; the client asks with `params.task`, gets a `CreateTaskResult`, then uses
#   `tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel`; `notifications/tasks/status` is an
#   optional hint.
# - **2026-07-28** (`io.modelcontextprotocol/tasks` extension): declared in every request; the server
#   decides; no tool says in advance whether it may become a task (no `execution` field);
#   `resultType: "task"`; `tasks/get` carries the result, `tasks/update` the user's answers,
#   `tasks/cancel` asks to stop; `notifications/tasks` come on a `subscriptions/listen` stream.
# - Poll at `pollInterval`: you learn of the end up to one interval late. Pushed notifications are
#   faster, but a client should still be able to poll.
# - Cancel with `tasks/cancel`, never `notifications/cancelled`. A cancelled 2025-11-25 task stays
#   cancelled and has no result; an extension cancel may still end `completed`. Fetch what you need first.
# - `ttl` is when the server *may* delete the task (or, in the extension, mark it `failed`), not a
#   promise to keep it. Unknown, foreign or deleted `taskId` → `-32602`; an undeclared extension →
#   `-32021`; a call that ignores `taskSupport` in 2025-11-25 → `-32601` (or `-32600`, which the same
#   page also allows).
#
# [[rules-table]]
#
# **Exercises:**
#
# - `ex08_task_polling` — write a client's polling loop that honours `pollInterval` and cancels at a
#   deadline, in both eras;
# - `ex08_next_message` — play the next message of a task conversation, in the right shape for its era;
# - `ex08_diagnose` — find what is wrong in a broken tasks trace.
#
# The input flow of a 2026-07-28 task uses the same `inputRequests`/`inputResponses` shapes as chapter
# 04's multi round-trip requests; `ex04_mrtr_loop` is a good warm-up if they are hazy.
