# %% [markdown]
# # 05 · What servers offer
#
# **What you will learn**
#
# - the three things a server offers — **tools**, **resources** (and resource templates) and
#   **prompts** — plus the utilities around them: **completion**, **pagination** and **icons**;
# - **whom each one is designed for**: the model calls tools, the application attaches resources, the
#   user picks prompts — and how the course's Host plays all three parts (a design, not a rule);
# - tools in detail: input and output schemas, `structuredContent`, how a failing tool answers and
#   when a *protocol error* is due, and why annotations are hints, not guarantees;
# - the same capability in both eras, 2025-11-25 and 2026-07-28, side by side;
# - how to write a server of your own in a few lines and call it through the Host.

# %% [markdown]
# ## One server, three controllers
#
# The `library` server (in `mcp_sim/scenarios/offerings.py`) offers a bit of everything: three
# tools, a catalogue resource, a template for one book, a `review` prompt and completion for its
# argument. The spec designs each primitive for a different **controller** — whoever decides that it
# is used:
#
# | primitive | listed by | designed to be controlled by | what that looks like in the course's Host |
# |---|---|---|---|
# | tools | `tools/list` | the **model** | the model proposes a call; the Host runs it (after approval) |
# | resources, templates | `resources/list`, `resources/templates/list` | the **application** | the Host decides what context to attach |
# | prompts | `prompts/list` | the **user** | the user picks one, like a slash command |
#
# That column is what each primitive is *for*, not a rule: every one of these pages adds that the
# protocol does not mandate any user interaction model, and the resources page names "automatic
# context inclusion, based on heuristics or the AI model's selection" as a valid design. So a Host
# that let the model pick resources would comply too. The course's Host keeps the three apart; that is
# [[rule host.controls-per-primitive]] What the tools page does ask is [[rule host.human-in-the-loop]]
#
# `who_decides` plays one of each through a Host: the user asks a question and the model calls the
# `book_facts` tool; the application attaches the catalogue; the user types `/review Em…`, the
# Host completes the title and fetches the prompt.

# %%
import json

from mcp_sim.scenarios.offerings import library, who_decides
from mcp_sim.trace import SequenceDiagram, TraceTable

legacy = who_decides("2025-11-25")
modern = who_decides("2026-07-28")
TraceTable(legacy.recorder)

# %%
SequenceDiagram(legacy.recorder)

# %% [markdown]
# Read the `app` rows: the **model** chose the tool (`tool_calls: library__book_facts`), the
# **host** chose to attach the resource, the **user** chose the prompt. The MCP messages below those
# rows are the same kind of request each time — the difference is who sent the Host there. Another
# Host could send them for other reasons (the model asking for a resource, say) and still comply: the
# protocol only carries the requests; who triggers them is the Host's design.

# %% [markdown]
# ## Tools
#
# `tools/list` returns each tool's name, description and `inputSchema` (a JSON Schema for its
# arguments, [[ref tools.input-schema-object]] an object) and, optionally, a display `title`, an
# `outputSchema`, `annotations` and `icons`. A server that offers tools declares the `tools`
# capability [[ref tools.capability-declared]]; the same goes for `resources`, `prompts` and
# `completions` [[ref completion.capability-declared]], and a client asks only what was declared.
# The library serves two per page, so the list took two requests (more on that under *Pagination*).
# Here is the first page, as the 2025-11-25 server sent it:

# %%
from mcp_sim.trace.reading import JsonView

def messages(sim, method, kind="response"):
    """The messages of one method and kind in a run's trace."""
    return [e.message for e in sim.recorder if e.method == method and e.kind == kind]


display(JsonView(messages(legacy, "tools/list")[0]["result"]))

# %% [markdown]
# `book_facts` declares an `outputSchema`, so its result carries `structuredContent` — JSON a
# program can use directly. Two rules of different strength meet here:
# [[rule tools.structured-content-conforms]] and [[rule tools.structured-content-text-copy]] The
# library does both. On the other side, [[rule tools.client-validates-structured]]

# %%
display(JsonView(messages(legacy, "tools/call")[0]))

# %% [markdown]
# ### Errors as results, or protocol errors?
#
# Before reading on, predict two answers: one for a resource nobody has, one for a tool called with
# arguments that break its schema.

# %%
from mcp_sim.course.predict import ask

ask("05-missing-resource-2026")

# %%
ask("05-bad-arguments")

# %% [markdown]
# Two kinds of failure look alike but are answered differently:
#
# - the tool **ran and failed** (the book is not in the catalogue; since 2025-11-25 also: the
#   arguments break the `inputSchema`) → a normal **result** with `isError: true` and a text that
#   says what went wrong. The model reads it and can try again. [[rule tools.execution-error-is-result]]
#   And the client's part: [[rule host.tool-errors-to-model]]
# - the request **cannot be handled at all** (no tool has that name) → a JSON-RPC **error**,
#   `-32602` [[ref tools.unknown-tool-protocol-error]]. A client may still show such an error to the
#   model [[ref tools.client-may-pass-protocol-errors]].
# - a resource the server does not have differs by era: [[rule resources.not-found-legacy]]
#   [[rule resources.not-found-modern]] Modern clients keep reading the old code
#   [[ref resources.client-accepts-32002]], and [[rule resources.no-empty-contents-for-missing]]
#
# We ask the library for all three, in both eras, with a Client of our own:

# %%
import anyio

from mcp_sim.protocol.errors import McpError
from mcp_sim.roles.client import Client
from mcp_sim.roles.server_session import serve
from mcp_sim.sim.world import Simulation
from mcp_sim.transports.memory import memory_link


def ask_library(era: str) -> Simulation:
    sim = Simulation(seed=1)

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            to_server, server_end = memory_link(sim, "library")
            tg.start_soon(serve, library(), server_end)
            client = Client("explorer", era=era)
            await client.connect(to_server, tg)
            await client.call_tool("book_facts", {"title": "Hamlet"})
            for attempt in (client.call_tool("borrow", {"title": "Dune"}),
                            client.read_resource("library://books-of-the-month")):
                try:
                    await attempt
                except McpError:
                    pass  # the error response is in the trace
            await client.close()

    sim.run(main)
    return sim


for era in ("legacy", "modern"):
    run = ask_library(era)
    answers = [e.message for e in run.recorder
               if e.kind in ("response", "error") and e.method in ("tools/call", "resources/read")]
    print(era)
    for answer in answers:
        body = answer.get("result") or answer["error"]
        print("  ", json.dumps({k: v for k, v in body.items() if k != "_meta"}))

# %% [markdown]
# The failing tool answered with a result in both eras (the modern one adds `resultType`). The
# unknown tool is `-32602` in both. Only the missing resource differs: `-32002` in 2025-11-25,
# `-32602` in 2026-07-28.

# %% [markdown]
# ### Annotations are hints, not guarantees
#
# `readOnlyHint`, `destructiveHint`, `idempotentHint` and `openWorldHint` describe a tool, but the
# *server* writes them: [[rule host.annotations-untrusted]] And a tool that is not read-only counts
# as destructive unless it says otherwise (the schema's defaults). When to ask the user is the Host's
# own policy: [[rule host.unless-read-only]] The same run with the library trusted:

# %%
trusting = who_decides("2025-11-25", trusted=True)
for run, label in ((legacy, "untrusted"), (trusting, "trusted")):
    asked = [e.caption for e in run.recorder if e.kind == "app" and "Allow" in e.caption]
    print(f"{label:10}", asked or "no approval asked")

# %% [markdown]
# The untrusted server's `readOnlyHint: true` changed nothing: anyone can write it. Only when the
# Host trusts the library does the hint let the call through unasked — and `reserve`
# (`destructiveHint: false` but not read-only) would still be asked about.

# %% [markdown]
# ## Resources and templates
#
# A resource is data the application can attach. It needs only a `uri` and a `name`; a `title`,
# `description`, `mimeType`, `size` and `icons` are optional [[ref resources.required-fields]]. The
# server checks every URI it is asked for [[ref resources.validate-uris]]. A **template**
# (`uriTemplate`, RFC 6570) describes a family of URIs; the client fills in the variables and reads
# the URI like any other. The ready-made `resources-tour` scenario lists both and reads one of each
# from the weather server:

# %%
from mcp_sim.scenarios import run_scenario

tour_legacy = run_scenario("resources-tour", revision="2025-11-25", seed=1)
tour_modern = run_scenario("resources-tour", revision="2026-07-28", seed=1)
for event in tour_legacy:
    if event.kind == "response" and event.method in ("resources/templates/list", "resources/read"):
        print(event.method, json.dumps(event.message["result"])[:300])

# %% [markdown]
# ## Prompts and completion
#
# A prompt is a template of messages the *user* picks; its arguments can be completed as the user
# types (`completion/complete`, for a prompt argument or a template variable), from a server that
# declared `completions` [[ref completion.capability-declared]], best first
# [[ref completion.sorted-by-relevance]]. The server checks a prompt's arguments before filling it in
# [[ref prompts.validate-arguments]]. The ready-made
# `prompts-and-completion` scenario completes "Po" and "L", then gets the prompt:

# %%
prompts = run_scenario("prompts-and-completion", revision="2025-11-25", seed=1)
for event in prompts:
    if event.kind == "response" and event.method in ("completion/complete", "prompts/get"):
        print(event.method, json.dumps(event.message["result"]))

# %% [markdown]
# ## Pagination with opaque cursors
#
# Every list method can answer in pages. A page with more after it carries a `nextCursor`; the
# client sends it back, unchanged, as `params.cursor`; the last page has none.
#
# - [[rule pagination.cursor-opaque]]
# - [[rule pagination.no-fixed-page-size]]
# - [[rule pagination.missing-cursor-ends]] And in 2026-07-28: [[rule pagination.empty-cursor-is-a-cursor]]
# - [[rule pagination.stable-cursors]] [[rule pagination.invalid-cursor-32602]]
#
# Where does a server keep its place between pages? [[rule pagination.position-in-the-cursor]] A
# client that decoded the library's cursor and edited the offset would be relying on a detail the
# server may change at any time.

# %%
pages = messages(legacy, "tools/list")
requests = messages(legacy, "tools/list", kind="request")
for request, page in zip(requests, pages, strict=True):
    print("cursor sent:", request.get("params", {}).get("cursor"), "→ tools:",
          [t["name"] for t in page["result"]["tools"]], "nextCursor:", page["result"].get("nextCursor"))

# %% [markdown]
# ## Icons
#
# Since 2025-11-25 tools, resources, templates, prompts and the server itself may carry `icons`:
# a `src`, and optionally a `mimeType`, `sizes` and a `theme` (`light` or `dark`: the background the
# icon is drawn for). Showing one is not harmless, and the spec's rules are strict:
#
# - [[rule icons.safe-schemes]]
# - [[rule icons.precautions]]
# - [[rule icons.png-and-jpeg]] [[rule icons.may-refuse-types]]
#
# The library's icon, below, is an SVG — exactly the type the spec singles out, since an SVG can
# carry script. A careful Host sanitizes it or shows no icon at all.

# %%
first_tool = messages(legacy, "tools/list")[0]["result"]["tools"][0]
display(JsonView(first_tool["icons"]))

# %% [markdown]
# ## The same capability in both eras
#
# What changes between 2025-11-25 and 2026-07-28 for these primitives? The primitives are the same;
# around them, each modern request carries its `_meta` (version, capabilities, client info), each
# modern result says `resultType`, and the list and read results say how long they may be cached
# (`ttlMs`, `cacheScope`, chapter 07). And some methods and fields change:
#
# - `tools/call`, `prompts/get` and `resources/read` may answer with an `InputRequiredResult`
#   (chapter 04): [[rule mrtr.server-may-ask]]
# - `resources/subscribe` and `resources/unsubscribe` are gone (chapter 07 has `subscriptions/listen`);
# - `Tool.execution` and a request's `params.task` are gone, and the `tasks` capability with them:
#   tasks are an extension, announced under `extensions` (chapter 08);
# - an `outputSchema` may be any JSON Schema 2020-12: [[rule tools.structured-content-any-json]]
# - lists no longer depend on the connection: [[rule tools.list-not-per-connection]]
#   [[rule tools.list-may-vary-by-authorization]] [[rule tools.deterministic-order]]
# - a missing resource is `-32602`, at must strength, and never an empty `contents`.
#
# Compare one answer of each:

# %%
for name, run in (("2025-11-25", legacy), ("2026-07-28", modern)):
    read = messages(run, "resources/read")[0]["result"]
    print(name, json.dumps({k: v for k, v in read.items() if k != "_meta"}))

# %% [markdown]
# Step through both runs side by side. Look at where the version travels (once, in `initialize`;
# or in every request's `_meta`) and at what stays the same (every tool, resource and prompt
# message).

# %%
from functools import partial

from mcp_sim.widgets.player import play, side_by_side

rerun = partial(run_scenario, "resources-tour")
side_by_side(play(tour_legacy, runner=rerun, options={"revision": "2025-11-25", "seed": 1}),
             play(tour_modern, runner=rerun, options={"revision": "2026-07-28", "seed": 1}))

# %% [markdown]
# ## Your own server, in a few lines
#
# A server is a `Server` and a few decorated functions: type hints become the `inputSchema`, the
# docstring the description. Here is a dice server with one tool; we connect it to a Host, and the
# model calls it when the user asks for a roll. The roll comes from the simulation's seeded random
# generator (`current_simulation().rng`, never the `random` module), so the run is the same every time.

# %%
from mcp_sim.roles.host import Host
from mcp_sim.roles.model import ScriptedModel, ToolRule
from mcp_sim.roles.server import Server
from mcp_sim.roles.user import ScriptedUser
from mcp_sim.sim.world import current_simulation

dice = Server("dice", version="1.0.0")


@dice.tool(annotations={"readOnlyHint": True})
def roll(sides: int = 6) -> str:
    """Roll one die with ``sides`` sides."""
    return f"You rolled {current_simulation().rng.randint(1, sides)}."


def play_dice(revision: str) -> Simulation:
    sim = Simulation(seed=5)

    async def main() -> None:
        model = ScriptedModel([ToolRule(r"roll a d(?P<n>\d+)", "roll", lambda m: {"sides": int(m["n"])})])
        async with Host(model=model, user=ScriptedUser(approvals=[True])) as host:
            await host.add_server("dice", dice, revision=revision)
            await host.list_tools()
            print(revision, "→", await host.chat("Please roll a d20"))

    sim.run(main)
    return sim


dice_run = play_dice("2026-07-28")
play_dice("2025-11-25")
TraceTable(dice_run.recorder)

# %% [markdown]
# ## Recap
#
# - A server offers **tools** (designed for the model to call), **resources** and templates (for the
#   application to attach) and **prompts** (for the user to pick); that is a design, and the course's
#   Host follows it — a human who can deny tool calls is what the spec asks (should).
# - A tool that ran and failed should answer with `isError: true` in a result; a request nothing
#   could run gets a JSON-RPC error (`-32602` for an unknown tool). Resource not found: `-32002` up
#   to 2025-11-25 (should), `-32602` in 2026-07-28 (must).
# - A tool with an `outputSchema` must return conforming `structuredContent`, and should add the same
#   JSON as text; clients should validate it.
# - Annotations are hints written by the server: a client must treat them as untrusted unless the
#   server is trusted.
# - Lists come in pages; cursors are opaque and only echoed (must); the last page has no `nextCursor`;
#   an invalid cursor should get `-32602`; in 2026-07-28 an empty cursor is still a cursor.
# - Icons are untrusted input: only `https:`/`data:`, no credentials, care with SVG (must).
# - Both eras carry the same primitives; 2026-07-28 adds `_meta`, `resultType`, cache hints and
#   `InputRequiredResult`, drops `resources/subscribe` and tasks from the core, and fixes lists per caller.
#
# [[rules-table]]
#
# **Exercises:** `ex05_tool_results`, `ex05_pagination`, `ex05_diagnose`, `ex05_who_controls`.
