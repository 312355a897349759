# %% [markdown]
# # 04 · When the server needs the client
#
# **What you will learn**
#
# - the thin channel back up: **elicitation** (ask the user), **sampling** (borrow the host's model)
#   and **roots** (which folders are in scope) — and that sampling and roots are deprecated in
#   2026-07-28;
# - how the legacy era did it: the server sends a JSON-RPC request to the client in the middle of a
#   `tools/call`;
# - how the modern era does it: a **Multi Round-Trip Request** — the server answers with an
#   `InputRequiredResult`, the client gathers the input and asks again;
# - why `requestState` must be treated as attacker-controlled.

# %% [markdown]
# ## The same tool, two eras
#
# The weather server has a tool, `plan_outing`, that needs two things it cannot get by itself: the
# user's preferred activity (elicitation) and a one-line summary written by the host's model
# (sampling). We run the *same* scenario in 2025-11-25 and in 2026-07-28.

# %%
import json

from mcp_sim.scenarios import run_scenario
from mcp_sim.trace import SequenceDiagram, TraceTable

legacy = run_scenario("weather-mrtr", revision="2025-11-25", seed=1)
modern = run_scenario("weather-mrtr", revision="2026-07-28", seed=1)
print(f"legacy: {len(legacy)} events, modern: {len(modern)} events")

# %% [markdown]
# ### Legacy: the server sends requests
#
# While `tools/call` is still open, the server sends `elicitation/create` and
# `sampling/createMessage` **to the client** — requests flowing the "wrong" way over the same
# connection. The client answers them (through its host, which asks the user and the model), and
# only then does the server finish the tool call.

# %%
TraceTable([e for e in legacy if e.link == "weather"])

# %%
SequenceDiagram(legacy)

# %% [markdown]
# ### Modern: the server returns what it needs
#
# In 2026-07-28 servers never send requests. The server ends the `tools/call` with
# `resultType: "input_required"`, listing what it needs under `inputRequests` (each under a key it
# chooses) and an opaque `requestState`. The client fulfils every entry and sends `tools/call`
# again — a **new id**, the **original params**, plus `inputResponses` (same keys) and the
# `requestState` echoed **exactly**. The server can finish, or ask again.

# %%
TraceTable([e for e in modern if e.link == "weather"])

# %% [markdown]
# The first answer to `tools/call`, and the retry the client sent back:

# %%
calls = [e for e in modern if e.method == "tools/call" and e.kind in ("request", "response")]
first_answer = next(e for e in calls if e.kind == "response")
print(json.dumps(first_answer.message["result"], indent=2))
retry = [e for e in calls if e.kind == "request"][1]
print(json.dumps({k: v for k, v in retry.message["params"].items() if k != "_meta"}, indent=2))

# %%
SequenceDiagram(modern)

# %% [markdown]
# ### Side by side
#
# Use the player to step through both traces. Compare who sends requests, how many round trips
# there are, and where the state of the half-finished tool call lives (legacy: in the server's
# memory, on a call stack; modern: inside `requestState`, carried by the client).

# %%
from functools import partial

import ipywidgets as widgets

from mcp_sim.widgets.player import play

rerun = partial(run_scenario, "weather-mrtr")  # lets each player fork the run with one change
widgets.HBox([play(legacy, runner=rerun, options={"revision": "2025-11-25", "seed": 1}).widget,
              play(modern, runner=rerun, options={"revision": "2026-07-28", "seed": 1}).widget])

# %% [markdown]
# Each player can **fork** the run: pick a step, choose a change under *Fork this moment* and the
# world is re-run with that one difference. Here is one fork done in code: what if the modern
# server's `InputRequiredResult` never reaches the client?

# %%
from mcp_sim.widgets.player import PlayerState

state = PlayerState(modern, runner=rerun, options={"revision": "2026-07-28", "seed": 1})
state.jump(next(i for i, e in enumerate(state.visible) if e.kind == "response" and e.method == "tools/call"))
fork = state.fork(state.change_drop_current())
print(fork.summary())
for event in fork.forked:
    if event.kind == "timeout" or event.method == "notifications/cancelled":
        print(event.caption)

# %% [markdown]
# The client waited for an answer that never came, timed out on the simulated clock, told the server
# it gave up (`notifications/cancelled`) and reported the failure to the host: every request ends in
# a response or a visible timeout, never silence.

# %% [markdown]
# ## `requestState` is attacker-controlled
#
# The server hands `requestState` to the client and trusts whatever comes back at its own peril:
# the client (or anyone who intercepts it) can change it. If the state says "transfer 10 €" and the
# server believes it, a caller can send back "transfer 10 000 €". The spec tells servers to protect
# the state's integrity (an HMAC or authenticated encryption) when it influences authorization or
# business logic, and to bind it to the caller, the original request and a short expiry.

# %%
from mcp_sim.scenarios.security import run_lab

for config in ("vulnerable", "fixed"):
    result = run_lab("requeststate-tampering", config=config, seed=4)
    print(f"{config:10} attack succeeded: {result.succeeded}")
print()
print(result.explanation)

# %%
from mcp_sim.course.predict import Prediction

Prediction(
    question="A 2026-07-28 client receives an InputRequiredResult with inputRequests but no requestState. "
             "What must its retry contain?",
    choices=["inputResponses and requestState: null", "inputResponses only", "a requestState it makes up"],
    answer="inputResponses only",
    why="The client echoes requestState exactly when the server sent one, and MUST NOT include one otherwise. "
        "The retry is the same method with the original params, a new id and inputResponses keyed like "
        "inputRequests.",
)

# %% [markdown]
# ## Recap
#
# - Legacy servers ask the client with JSON-RPC requests during a call; modern servers return an
#   `InputRequiredResult` and the client retries with `inputResponses` and the echoed `requestState`.
# - A server may only ask for what the client declared on that very request.
# - `requestState` crosses the trust boundary twice: seal it, bind it, expire it.
#
# **Exercises:** `ex04_mrtr_loop`, `ex04_seal_state`.
