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
# The weather server has a tool, `plan_outing`, that needs two things it cannot get by itself: which
# city the outing is in, which only the user can say (elicitation), and a one-line plan written by
# the host's model (sampling). The third way back up, roots, gets its own section below. We run the *same* scenario in 2025-11-25 and in 2026-07-28.

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
# only then does the server finish the tool call. The server may ask only for what the client
# declared in `initialize` [[ref lifecycle.respect-negotiated]], and the host keeps the user in
# charge: it shows which server asks and lets the user decline
# [[ref elicitation.client-shows-server-and-decline]], and a human can deny a sampling request
# [[ref sampling.human-in-the-loop]].

# %%
TraceTable([e for e in legacy if e.link == "weather"])

# %% [markdown]
# Look at the ids. The client's requests are `initialize #1`, `tools/list #2`, `tools/call #3`; the
# server's own requests are `elicitation/create #1` and `sampling/createMessage #2` — the same
# numbers again. They do not clash, because **each side numbers the requests it sends**: the spec
# only asks that a sender never reuse an id of its own within the session
# [[ref jsonrpc.legacy.request-id-unused-in-session]] (in 2026-07-28: never one still awaiting its
# answer [[ref jsonrpc.request-id-not-in-flight]]). A response travels back
# to whoever sent the request, so the client looks an answer up among *its* open requests and the
# server among *its* own; the direction tells the two `#1`s apart.

# %%
SequenceDiagram(legacy)

# %% [markdown]
# ### Modern: the server returns what it needs
#
# In 2026-07-28 servers never send requests. The server ends the `tools/call` with
# `resultType: "input_required"`, listing what it needs under `inputRequests` (each under a key it
# chooses [[ref mrtr.keys-unique]]) and an opaque `requestState`. The client fulfils every entry
# [[ref mrtr.client-fulfils-input-requests]] and sends `tools/call` again — a **new id**, the
# **original params** [[ref mrtr.retry-new-id]], plus `inputResponses` (same keys) and the
# `requestState` echoed **exactly** [[ref mrtr.client-echoes-state]]. The server can finish, or ask
# again [[ref mrtr.server-may-ask-again]].

# %%
TraceTable([e for e in modern if e.link == "weather"])

# %% [markdown]
# The first answer to `tools/call`, and the retry the client sent back:

# %%
from mcp_sim.trace.reading import JsonView

calls = [e for e in modern if e.method == "tools/call" and e.kind in ("request", "response")]
first_answer = next(e for e in calls if e.kind == "response")
display(JsonView(first_answer.message["result"]))
retry = [e for e in calls if e.kind == "request"][1]
display(JsonView({k: v for k, v in retry.message["params"].items() if k != "_meta"}))

# %% [markdown]
# The `requestState` above looks opaque, but this server only **encodes** its state; it does not
# protect it. A well-behaved client never looks inside [[ref mrtr.client-does-not-read-state]] — but
# the server cannot count on well-behaved clients. Decode it the way any client could:

# %%
import base64

state = first_answer.message["result"]["requestState"]
decoded = base64.urlsafe_b64decode(state + "=" * (-len(state) % 4))  # base64 without its "=" padding
print(decoded.decode())

# %% [markdown]
# Plain JSON: the server's notes between rounds (which questions it asked, which answers it already
# has). Readable means editable. A client can write answers the user never gave into it and send the
# new string back on its retry:

# %%
edited = json.loads(decoded)
edited["answers"]["city"] = {"action": "accept", "content": {"city": "Atlantis"}}
forged = base64.urlsafe_b64encode(json.dumps(edited, separators=(",", ":")).encode()).decode().rstrip("=")
print(forged)
print(base64.urlsafe_b64decode(forged + "=" * (-len(forged) % 4)).decode())

# %% [markdown]
# A server that only decodes cannot tell that string from one it wrote itself. The last section
# shows where that leads, and how sealing the state stops it.

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

from mcp_sim.widgets.player import play, side_by_side

rerun = partial(run_scenario, "weather-mrtr")  # lets each player fork the run with one change
side_by_side(play(legacy, runner=rerun, options={"revision": "2025-11-25", "seed": 1}),
             play(modern, runner=rerun, options={"revision": "2026-07-28", "seed": 1}))

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
# it gave up (`notifications/cancelled`, this link's way to cancel) and reported the failure to the
# host [[ref cancel.modern-timeouts]]: every request ends in a response or a visible timeout, never
# silence.

# %% [markdown]
# ## Roots: which folders are in scope
#
# A server that works on files needs to know which folders the user shared with it. It asks the
# client for its **roots** (`roots/list`); the host answers from its configuration, and each root
# is a `file://` URI with an optional name [[ref roots.file-uri]]. Below, a small `files` server has a tool that asks for
# the roots, and a client whose host shares one folder; we run it in both eras.

# %%
import anyio

from mcp_sim.roles.client import Client, ClientCallbacks
from mcp_sim.roles.context import Context
from mcp_sim.roles.server import Server
from mcp_sim.roles.server_session import serve
from mcp_sim.sim.world import Simulation
from mcp_sim.transports.memory import memory_link

files = Server("files", version="1.0.0")


@files.tool(annotations={"readOnlyHint": True})
async def workspace(ctx: Context) -> str:
    """Which folders the user shared with this server (it asks the client for its roots)."""
    roots = await ctx.list_roots()
    return ", ".join(f"{r.get('name', '?')} ({r['uri']})" for r in roots)


async def shared_folders(server: str) -> list[dict]:
    """The host's answer to roots/list: the folders the user chose to share with ``server``."""
    return [{"uri": "file:///Users/ada/code/weather-app", "name": "weather-app"}]


def run_with_roots(era: str) -> Simulation:
    sim = Simulation(seed=1)

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            to_server, server_end = memory_link(sim, "files")
            tg.start_soon(serve, files, server_end)
            client = Client("ide", era=era, callbacks=ClientCallbacks(roots=shared_folders))
            await client.connect(to_server, tg)
            result = await client.call_tool("workspace", {})
            print(f"{era:6} tool result: {result['content'][0]['text']}")
            await client.close()

    sim.run(main)
    return sim


legacy_roots = run_with_roots("legacy")
modern_roots = run_with_roots("modern")
TraceTable(legacy_roots.recorder)

# %% [markdown]
# In the legacy era the server sends `roots/list` as a request of its own (again with its own id,
# `#1`), and the roots come back in the client's response:

# %%
for event in legacy_roots.recorder:
    if event.method == "roots/list" and event.kind in ("request", "response"):
        print(json.dumps(event.message))

# %% [markdown]
# In 2026-07-28 the same question travels inside an `InputRequiredResult`, and the roots come back
# in the retry's `inputResponses`:

# %%
for event in modern_roots.recorder:
    if event.method == "tools/call" and event.kind in ("request", "response"):
        body = event.message.get("result") or event.message["params"]
        asked_or_answered = {k: v for k, v in body.items() if k in ("inputRequests", "inputResponses")}
        if asked_or_answered:
            print(f"{event.kind:8} #{event.request_id}: {json.dumps(asked_or_answered)}")

# %% [markdown]
# Roots tell a well-behaved server where to look; they do not stop a server from looking elsewhere
# [[ref roots.server-respects-boundaries]], and the host decides which folders to share
# [[ref roots.client-exposes-with-permission]]. Like sampling, roots are deprecated in 2026-07-28: still
# specified, but new implementations should not adopt them.
#
# ## `requestState` is attacker-controlled
#
# The server hands `requestState` to the client and trusts whatever comes back at its own peril:
# the client (or anyone who intercepts it) can change it. If the state says "transfer 10 €" and the
# server believes it, a caller can send back "transfer 10 000 €".
#
# [[rule mrtr.state-attacker-controlled]]
#
# [[rule mrtr.state-integrity]]
#
# [[rule mrtr.state-bound]]
#
# [[rule mrtr.state-single-use]]

# %%
from mcp_sim.scenarios.security import run_lab

for config in ("vulnerable", "fixed"):
    result = run_lab("requeststate-tampering", config=config, seed=4)
    print(f"{config:10} attack succeeded: {result.succeeded}")
print()
print(result.explanation)

# %%
from mcp_sim.course.predict import ask

ask("04-2026-07-28-client")

# %% [markdown]
# ## Recap
#
# - Legacy servers ask the client with JSON-RPC requests during a call; modern servers return an
#   `InputRequiredResult` and the client retries with `inputResponses` and the echoed `requestState`.
# - A server may only ask for what the client declared on that very request [[ref mrtr.only-declared-input]].
# - Each side numbers its own requests, so a server's `#1` and a client's `#1` are different requests.
# - Roots (`roots/list`) tell a server which folders the user shared; in 2026-07-28 they too arrive
#   through `inputRequests`.
# - `requestState` crosses the trust boundary twice: encoded is not protected (you decoded and
#   edited one above); seal it, bind it, expire it.
#
# **Exercises:** `ex04_mrtr_loop`, `ex04_seal_state`.
#
# [[rules-table]]
