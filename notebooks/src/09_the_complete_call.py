# %% [markdown]
# # 09 · The complete call
#
# **What you will learn**
#
# - how one user request travels through all three layers — **roles** (user, Host, model),
#   **capabilities** (the Client and Server's session and `tools/call`) and **transports** (the
#   frames on the wire) — and back;
# - the eight steps of a tool call: discover, filter, offer, propose, approve, call, answer, reply —
#   and which participant owns each one;
# - what the Host's policy decides (`ToolPolicy`, `ApprovalPolicy`, `Host.decide`), and why tool
#   annotations from a server it does not trust change nothing;
# - what the model sees (the model API's own tool format, never MCP) and what it can do (propose,
#   never run);
# - what changes between 2025-11-25 and 2026-07-28 — and what does not;
# - when the call goes wrong, **which layer decided it** and the trace row that shows it: the user
#   says no, the policy hides the tool, the tool fails, the wire loses the request, the versions do
#   not match.

# %% [markdown]
# ## The cast
#
# Every chapter so far looked at one piece. This one follows a single request all the way. The cast
# is small: a user, a Host with its model, and one Client talking to the `issues` server (a toy
# issue tracker with `create_issue`, `search_issues` and `delete_issue`). The Host is configured the
# way a careful application would be: its `ToolPolicy` never shows the model a tool whose name
# starts with `delete_`, and its `ApprovalPolicy` asks the user before every call.
#
# The ready-made scenario `complete-call` plays it (`mcp-sim run complete-call` in a terminal does the
# same): it connects the server, lists its tools, and hands the user's sentence to `Host.chat`, the
# loop that offers tools to the model, runs the calls it proposes (each through `Host.call_tool`)
# and feeds the results back until the model answers. The diagram is drawn from the trace the run
# left behind.

# %%
import json

from mcp_sim.scenarios import run_scenario
from mcp_sim.trace import SequenceDiagram, TopologyDiagram, TraceTable

legacy = run_scenario("complete-call", revision="2025-11-25", seed=1)
modern = run_scenario("complete-call", revision="2026-07-28", seed=1)
TopologyDiagram.from_trace(modern, title="The complete call: user, host with its model, one client, one server")

# %% [markdown]
# Here is the whole 2025-11-25 run. Keep an eye on the **layer** column: `roles` rows are talk
# inside the application (user, Host, model, the Host's own client); `capabilities` rows are MCP
# messages between Client and Server.

# %%
TraceTable(legacy)

# %%
SequenceDiagram(legacy)

# %% [markdown]
# ## Step by step
#
# The helper below picks events out of a trace, so each step can show the real thing the simulator
# produced.

# %%
def events(run, kind=None, method=None, sender=None, receiver=None):
    """The events of a run matching every filter given."""
    return [e for e in run if (kind is None or e.kind == kind) and (method is None or e.method == method)
            and (sender is None or e.sender == sender) and (receiver is None or e.receiver == receiver)]


# %% [markdown]
# ### 1 · Discover: the Client lists the server's tools
#
# After the opening (the legacy handshake, or this client's optional `server/discover`; chapter 03)
# the Client asks `tools/list`. That is already an MCP request. The answer is written by the server
# — names, descriptions, schemas, annotations — and that makes all of it **untrusted input** to the
# Host: annotations count only from a server it trusts [[ref host.annotations-untrusted]].

# %%
listing = events(legacy, kind="response", method="tools/list")[0].message["result"]["tools"]
for tool in listing:
    print(f"{tool['name']:15} annotations={json.dumps(tool.get('annotations', {}))}")

# %% [markdown]
# ### 2 · Filter: the Host's policy decides what the model may see
#
# The Host gives each tool a collision-free name (`issues__create_issue`) and asks its policies two
# questions, in `Host.decide`: may the model see this tool (`ToolPolicy.permits`), and must the user
# approve a call to it (`ApprovalPolicy.reasons` — empty means "no need to ask")? The answers depend
# only on the tool's definition, whether its server is trusted, and the two policies. These two
# policies are this simulator's Host [[ref host.tool-policy]] [[ref host.approval-policy]]; the spec
# asks that the user can see which tools are exposed and deny a call, and leaves the how to the Host.
# Before we build the same Host as the scenario and ask it directly, predict:

# %%
from mcp_sim.course.predict import ask

ask("09-untrusted-server-marks-tool")

# %%
import mcp_sim.scenarios.issues as issues
from mcp_sim.roles.host import Host
from mcp_sim.roles.model import ScriptedModel
from mcp_sim.scenarios.stories import ISSUE_RULES
from mcp_sim.security.host_policy import ApprovalPolicy, ToolPolicy
from mcp_sim.sim.world import Simulation


def policy_table(trusted: bool, approval: ApprovalPolicy) -> list[str]:
    """The Host's verdict on each issues tool, for one trust setting and approval policy."""
    sim, rows = Simulation(seed=1), []

    async def main() -> None:
        async with Host(model=ScriptedModel(ISSUE_RULES), tool_policy=ToolPolicy(deny=("*__delete_*",)),
                        approval_policy=approval) as host:
            await host.add_server("issues", issues.build(), revision="2026-07-28", trusted=trusted)
            for tool in await host.list_tools():
                verdict = host.decide(tool)
                asks = "; ".join(verdict.reasons) or "no need to ask"
                rows.append(f"{tool.qualified_name:24} visible={verdict.visible!s:5}  approval: {asks}")

    sim.run(main)
    return rows


print("\n".join(policy_table(trusted=False, approval=ApprovalPolicy(mode="always"))))

# %% [markdown]
# `delete_issue` is invisible: the model is never offered it. That alone does not stop a model from
# *proposing* it — a model can invent a name, or copy one that injected text told it to use — so the
# Host checks every proposal against its policy again in step 5 [[ref host.recheck-proposals]], and a
# hidden tool is refused there. The other two are visible and the user is asked about both — the
# policy says "always ask", and the untrusted server's annotations count for nothing.
#
# A Host with a looser policy, `unless-read-only`, asks only when a tool may change something. Watch
# what the `readOnlyHint: true` on `search_issues` is worth when the server is untrusted, and when
# it is trusted:

# %%
loose = ApprovalPolicy(mode="unless-read-only", trusted_servers=frozenset({"issues"}))
print("untrusted server:")
print("\n".join(policy_table(trusted=False, approval=ApprovalPolicy(mode="unless-read-only"))))
print("trusted server:")
print("\n".join(policy_table(trusted=True, approval=loose)))

# %% [markdown]
# Only a trusted server's read-only hint lets a call through unasked. `create_issue` says
# `destructiveHint: false`, but it is not read-only, so even a trusted server's word does not skip
# the question under this policy. Annotations describe a tool; they are claims by its author.

# %% [markdown]
# ### 3 · Offer: the tools in the model API's format
#
# MCP does not define how a Host talks to its model. The Host converts the *visible* tools into the
# format of whatever model API it uses — this simulator's Host uses OpenAI chat-completions, where the
# MCP `inputSchema` becomes `parameters` [[ref host.model-api-format]]. This is what the Host sent the model (the trace keeps it beside the
# `host → model` row):

# %%
from mcp_sim.trace.reading import JsonView

offer = events(legacy, kind="app", sender="host", receiver="model")[0].message
print("api:", offer["api"])
display(JsonView(offer["tools"][0]))
print("tools offered:", [t["function"]["name"] for t in offer["tools"]])

# %% [markdown]
# Two tools, not three. The model sees names, descriptions and schemas. The qualified name
# (`issues__…`) does tell it which server a tool comes from — that is how the Host keeps two servers'
# `search` tools apart [[ref host.disambiguate-tool-names]] — but it does not see the server's
# annotations or the Host's policy.

# %%
ask("09-complete-call-participant-turns")

# %% [markdown]
# ### 4 · Propose: the model asks for a call
#
# The simulator's model is a `ScriptedModel` (`mcp_sim/roles/model.py`): readable rules instead of
# weights. The rule that fires here says "when the user asks to file a bug, call `create_issue` with
# the rest of the sentence as the title". A real LLM plugs into the same two methods. Either way the
# model only **proposes**: its answer is a tool call, nothing more. The trace keeps a compact copy of
# it (`name`, `arguments` as an object); on OpenAI's wire the same call is
# `{"type": "function", "function": {"name": …, "arguments": "<a JSON string>"}}`, the shape
# `ex09_next_step` asks you to read.

# %%
print("rule:", ISSUE_RULES[0].pattern, "→", ISSUE_RULES[0].tool)
proposal = events(legacy, kind="app", sender="model", receiver="host")[0].message
display(JsonView(proposal))

# %% [markdown]
# ### 5 · Approve: the Host asks the user
#
# `Host.call_tool` looks the name up, checks the policy again (a model may propose a tool it was
# never offered) and, because the decision has reasons, asks the user. The question names the
# server, the tool, the arguments and why it is asked — showing the arguments is what lets the user
# see what would leave [[ref host.confirm-with-inputs]]. Nothing has been sent to the server yet:
# [[rule host.human-in-the-loop]]

# %%
proposed_at = events(legacy, kind="app", sender="model")[0].seq
for e in events(legacy, kind="app"):
    if e.seq > proposed_at and (e.sender, e.receiver) in (("host", "user"), ("user", "host")):
        print(f"#{e.seq} {e.sender} → {e.receiver}: {e.text}")
        if e.text == "approve":
            break

# %% [markdown]
# ### 6 · Call: the Client sends `tools/call`
#
# Only now does MCP come in. The Host hands the call to the client for the tool's server, under the
# tool's **own** name (`create_issue`, not `issues__create_issue`) [[ref host.call-under-own-name]].
# Here the eras differ: the 2026-07-28 request carries in `_meta` the protocol version and the
# client's capabilities, which every request must carry [[ref meta.required-fields]], and the client's
# name, which it should [[ref meta.client-info]] — because there is no session to remember them
# [[ref stateless.no-context-from-earlier-requests]].

# %%
for label, run in (("2025-11-25", legacy), ("2026-07-28", modern)):
    print(label, json.dumps(events(run, kind="request", method="tools/call")[0].message, indent=1))

# %% [markdown]
# ### 7 · Answer: the server's result
#
# The server ran the tool and answered with a `CallToolResult`: text content, and — because
# `create_issue` declares an `outputSchema` — `structuredContent`. The 2026-07-28 result also says
# `resultType: "complete"` [[ref jsonrpc.result-type-required]]. It need not be the first answer: a
# 2026-07-28 server may answer `tools/call` with an `InputRequiredResult` first [[ref mrtr.server-may-ask]],
# and the call then takes another round trip (chapter 04); a legacy server would send its own
# requests to the client before answering.

# %%
for label, run in (("2025-11-25", legacy), ("2026-07-28", modern)):
    result = events(run, kind="response", method="tools/call")[0].message["result"]
    print(label, json.dumps({k: v for k, v in result.items() if k != "_meta"}))

# %% [markdown]
# ### 8 · Reply: the result goes back to the model, the model answers the user
#
# The Host turns the result into the model API's "tool result" message (`role: "tool"`, tied to
# the call's id) and asks the model again. The result is server-written too, so the Host should
# validate it before the model reads it [[ref host.validate-tool-results]]. With the result in hand
# the model writes its answer, and the Host shows it to the user.

# %%
second = events(legacy, kind="app", sender="host", receiver="model")[1].message
display(JsonView(second["messages"][-1]))
print("answer:", events(legacy, kind="app", sender="host", receiver="user")[-1].text)

# %% [markdown]
# ## Two eras, one call
#
# Put the runs side by side. Everything in the `roles` layer is identical — the policy, the offer,
# the proposal, the approval, the answer. In the `capabilities` layer, the opening differs
# (`initialize` + `notifications/initialized`, or this client's optional `server/discover`
# [[ref versioning.discover-optional-for-clients]]), and every modern request
# carries `_meta` and every modern result `resultType`. The tool call itself has the same method,
# name, arguments and content in both.

# %%
for label, run in (("2025-11-25", legacy), ("2026-07-28", modern)):
    mcp = [e.method for e in run if e.kind in ("request", "notification")]
    print(f"{label}: {len(list(run))} rows; client → server: {mcp}")

# %% [markdown]
# Step through both runs. The player can also fork a run: drop one message and watch what each layer
# does about it.

# %%
from functools import partial

from mcp_sim.widgets.player import play, side_by_side

rerun = partial(run_scenario, "complete-call")
side_by_side(play(legacy, runner=rerun, options={"revision": "2025-11-25", "seed": 1}),
             play(modern, runner=rerun, options={"revision": "2026-07-28", "seed": 1}))

# %% [markdown]
# ## When it goes wrong: who decided?
#
# Each layer can end the call, and each one's decision shows up as a particular row of the trace.
# `mcp_sim/scenarios/complete_call.py` plays the same request with **one** setting changed per
# outcome: the scripted user's answer, the Host's policy, the server's state, the wire's faults or the
# server's protocol versions. Every run is a real simulation; `decisive` is the row where the outcome
# was decided.

# %%
from mcp_sim.scenarios.complete_call import OUTCOMES, run_complete_call

for name, outcome in OUTCOMES.items():
    print(f"{name:17} changed: {outcome.change}")

# %%
runs = {(name, rev): run_complete_call(name, revision=rev, seed=1)
        for name in OUTCOMES for rev in ("2025-11-25", "2026-07-28")}
for (name, rev), run in runs.items():
    row = run.decisive
    where = f"#{row.seq} {row.sender} → {row.receiver} ({row.kind} {row.method or ''})".replace(" )", ")") \
        if row else "-"
    print(f"{name:17} {rev}  layer={run.outcome.layer or '-':13} decided by={run.outcome.decider or '-':7} {where}")

# %%
ask("09-user-denied-call-many")

# %%
ask("09-tool-failed-iserror-true")

# %% [markdown]
# ### The user says no (roles)
#
# The Host asked; the user answered `deny`. No `tools/call` was ever sent — the server never hears
# of the request. The Host hands the model a refusal, as an error result it can read:

# %%
denied = runs[("user-denies", "2026-07-28")]
TraceTable(denied.recorder)

# %% [markdown]
# ### The policy hides the tool (roles)
#
# The user asks to delete issue #99. The Host's `ToolPolicy` denies `*__delete_*`, so the model's
# offer has two tools and neither deletes anything. The decisive row is the Host's first message to
# the model — the filtered list — not anything the model or server did. This scripted model only
# proposes tools it was offered, so it says it cannot help; a model that proposed `delete_issue`
# anyway would be refused by the Host's second check [[ref host.recheck-proposals]].

# %%
hidden = runs[("policy-hides", "2026-07-28")]
print([t["function"]["name"] for t in hidden.decisive.message["tools"]])
print("answer:", hidden.answer)

# %% [markdown]
# ### The tool fails (capabilities: the server's answer)
#
# Now the policy allows `delete_issue` and the user approves, but issue #99 does not exist. The tool
# ran and failed, so the server answers with a **result** carrying `isError: true`, not a JSON-RPC
# error [[ref tools.execution-error-is-result]]. The Host passes its text to the model
# [[ref host.tool-errors-to-model]], which can read it and tell the user.

# %%
failed = runs[("tool-fails", "2025-11-25")]
display(JsonView(failed.decisive.message))
print("answer:", failed.answer)

# %% [markdown]
# ### The wire loses the request (transports)
#
# A fault on the link drops the frame that carries `tools/call`. The trace shows the request marked
# `dropped`; nothing comes back. The client's timeout (5 simulated seconds here) decides the call
# has failed [[ref cancel.modern-timeouts]], tells the server to forget it with
# `notifications/cancelled`, and the Host reports the failure to the model. Note the clock column:
# the time is simulated, so the notebook did not wait.
#
# `notifications/cancelled` is an MCP protocol message (in the spec's words, a utility of the data
# layer); the `layer` column files it under `transports` only because this course puts the messages
# about the flow itself there (chapter 00). How a request is cancelled depends on the transport in
# 2026-07-28: this link behaves like stdio, where the client sends the notification
# [[ref cancel.modern-stdio-notifies]]; on Streamable HTTP the client simply closes the request's
# response stream and sends no notification [[ref cancel.modern-http-closes-stream]].

# %%
lost = runs[("timeout", "2026-07-28")]
TraceTable(lost.recorder)

# %% [markdown]
# Whether `create_issue` ran is now unknown to the client — the frame might have been lost on the
# way back instead. That is why a Host does not blindly retry a call that is not idempotent
# [[ref host.no-blind-retry]] (chapter 06).

# %% [markdown]
# ### The versions do not match (capabilities: the lifecycle)
#
# The server speaks only the *other* era's versions. The 2025-11-25 client's `initialize` is
# refused by a modern-only server, whose error names the versions it does support
# [[ref versioning.modern-only-refusal-names-versions]]: a legacy client has no way forward, and that
# message may be all it can show its user. The 2026-07-28 client's `server/discover` is not
# understood by a legacy-only server. Either way no connection is established (a legacy session
# never opens; a modern client has no session to open, it just gets no answer it can use), the Host
# gets no tools from this server, and the model has nothing to call.
#
# The code of those errors is not what tells the eras apart. A client that speaks both eras probes
# with `server/discover` and falls back to `initialize` on *any* error that is not one of the modern
# codes [[ref versioning.fallback-not-keyed-to-one-code]]. A mismatch *within* 2026-07-28 looks
# different again: a version the server does not implement gets `-32022` with `data.supported`
# [[ref versioning.unsupported-version-error]], and the client retries with a common one
# [[ref versioning.client-retries-with-common-version]]; a missing client capability gets `-32021`
# (chapter 03).

# %%
for rev in ("2025-11-25", "2026-07-28"):
    row = runs[("version-mismatch", rev)].decisive
    print(rev, f"#{row.seq}", json.dumps(row.message["error"]))

# %% [markdown]
# ## Who is responsible
#
# | what went wrong | layer | who decided | the row that shows it |
# |---|---|---|---|
# | the user says no | roles | the user | `user → host: deny` |
# | the tool is hidden | roles | the Host (its `ToolPolicy`) | the Host's filtered offer to the model |
# | the tool fails | capabilities | the server (its tool) | the `tools/call` result with `isError: true` |
# | the request is lost | transports | the client (its timeout) | the `tools/call` frame marked `dropped` |
# | no shared version | capabilities (lifecycle) | the server refusing the opening request | the error answer to `initialize` / `server/discover` |
#
# In every case the model is told in words. When the call was refused, failed or was lost, the
# answer says why, because each layer reports its decision upward instead of swallowing it. When
# the tool was hidden or the server never connected, the model had nothing to call and can only
# say it cannot help. For the server that never connected, the Host's own record (the
# `client → host` row saying the server is unavailable) is where a person would look.

# %% [markdown]
# ## Recap
#
# - A complete call has eight steps: discover, filter, offer, propose, approve, call, answer, reply.
#   *Discover* (`tools/list`), *call* and *answer* are MCP messages; the rest happens inside the Host.
# - The Host decides what the model sees (`ToolPolicy`) and when the user is asked
#   (`ApprovalPolicy`); annotations are hints, worth something only from a trusted server; a human
#   can deny every call; the Host re-checks every proposal, because a model can propose any name.
# - The model sees the model API's format and only proposes; the Host runs the call through the one
#   client connected to that tool's server, under the tool's own name.
# - Both eras carry the same call; 2026-07-28 needs no opening (this client asks `server/discover`
#   by choice), adds `_meta` to every request and `resultType` to every result, and may put an
#   `InputRequiredResult` between call and answer.
# - When a call fails, the trace shows which layer decided: the user or the Host's policy (roles),
#   the tool or the lifecycle (capabilities), a lost frame and the client's timeout (transports).
#
# **Exercises:** `ex09_who_decides`, `ex09_host_policy`, `ex09_next_step`.
#
# [[rules-table]]
