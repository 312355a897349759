# %% [markdown]
# # 00 · Start here
#
# Welcome to **mcp-sim**, a course on the Model Context Protocol (MCP) that you run rather than
# read. Everything happens inside this notebook's Python process: simulated hosts, clients and
# servers exchange real MCP messages on a simulated clock, with no network and no model API key.
#
# **In this notebook**
#
# - a first story: one tool call, from the user's words to the answer;
# - how the course works: read, run, predict, watch, solve;
# - the map you will use throughout: MCP's three layers;
# - how your exercises are graded.

# %% [markdown]
# ## A first story
#
# A user asks a host to file a bug; the host's model picks a tool; the user approves; the client
# calls the server. The story runs on the simulation's clock, paced like a real one: the user takes
# four seconds to type the request and two and a half to read the approval dialog, the model almost
# a second per answer, and every message takes 40 ms to reach the server or come back. Watch the
# `time` column: the wire costs milliseconds, the people and the model cost seconds.
#
# Each row is one message or one step inside the host, and the `layer` column says which of MCP's
# three layers (the map below) it belongs to: `roles` for talk between the user, the host and its
# model, `capabilities` for the client and server learning what each offers (the lifecycle) and then
# using it, `transports` for messages about the flow itself (ping, progress, cancellation).

# %%
from mcp_sim.scenarios import run_scenario
from mcp_sim.trace import SequenceDiagram, TraceTable

first = run_scenario("first-call", revision="2026-07-28", seed=1)
TraceTable(first)

# %% [markdown]
# The same run as a sequence diagram: one vertical lifeline per participant, one arrow per message,
# time flowing down. Solid arrows are requests, dashed arrows are answers, dotted arrows are
# notifications; the label of each arrow says which, so nothing depends on colour.

# %%
SequenceDiagram(first)

# %% [markdown]
# ## How to use the course
#
# 1. **Run every cell, top to bottom** (*Run → Run All Cells*). Each notebook starts from a fresh
#    simulation, so you can re-run it any time.
# 2. **Predict, then reveal.** Some cells ask a question before showing the answer. Choose, press
#    *Check*, read the explanation.
# 3. **Watch the messages.** Every exchange is recorded. You will see it as a table, as a sequence
#    diagram, and in a step-through player where you hold time.
# 4. **Solve the exercises** in `../exercises/`, then grade them from a notebook cell or the terminal.
#
# Simulated time is not wall time: a timeout of five minutes passes in a few milliseconds, and the
# same seed always gives the same run, byte for byte.

# %% [markdown]
# ## The map: three layers
#
# MCP's vocabulary is easier to hold in three layers, each answering one question:
#
# | layer | question | the words that live there |
# |---|---|---|
# | **roles** | who talks? | Host, Client, Server (and the user and the model around them) |
# | **capabilities** | what is offered? | tools, resources, prompts, completion; and what a server asks of the client: elicitation, sampling, roots |
# | **transports** | how do messages travel? | JSON-RPC 2.0 messages over stdio or Streamable HTTP |
#
# They are teaching categories, not separate programs. The payoff of keeping them apart: a transport
# can change without changing what a tool means, and new capabilities arrive without changing who
# talks to whom. The package is laid out the same way (`mcp_sim/roles/`, `mcp_sim/capabilities/`,
# `mcp_sim/transports/` with the JSON-RPC codec in `mcp_sim/wire/`).
#
# ### The same map in the spec's words
#
# The official specification draws **two** layers, and you will meet its words when you read it.
# This is the only place the course translates; everywhere else it uses its own three.
#
# | the spec's layer | what the spec puts there | where this course teaches it |
# |---|---|---|
# | **data layer** | the JSON-RPC message format; the lifecycle (the `initialize` handshake, or `server/discover` and per-request `_meta` in 2026-07-28); the primitives (tools, resources, prompts; elicitation, sampling, roots); utilities such as progress, cancellation and logging | the message format, and the utilities about the flow of messages (ping, progress, cancellation): **transports**, chapter 02 · the lifecycle: **capabilities**, chapter 03 (it is where both sides declare what they offer) · the primitives and logging: **capabilities**, chapters 04 and up |
# | **transport layer** | stdio and Streamable HTTP: how a message is framed, sent and authorized | **transports**, chapter 06 |
#
# The spec has no layer for **roles**: it names Host, Client and Server in its architecture overview,
# before either layer. The one real difference is JSON-RPC: the spec files the message format under
# its data layer (it is the same on every transport), this course files it under transports (it is
# how every message travels).

# %% [markdown]
# ## Two eras
#
# MCP changed shape in its 2026-07-28 revision. The course teaches both:
#
# - **legacy** (up to 2025-11-25): a connection opens with an `initialize` handshake, and the server
#   may send requests back to the client;
# - **modern** (2026-07-28): stateless — every request carries its version and the client's
#   capabilities; a server that needs input returns an `InputRequiredResult` instead of asking.

# %%
from mcp_sim.course.predict import ask

ask("00-run-above-revision-2026")

# %% [markdown]
# ## How grading works
#
# Each exercise is a folder in `../exercises/` with a `README.md` (the task and the spec rule behind
# it) and a `starter.py` you edit. Grade it from a cell:
#
# ```python
# from mcp_sim.widgets.grader_panel import grade_panel
# grade_panel("ex02_error_codes")
# ```
#
# (`grade` from `mcp_sim.grading` returns the same verdict as data, its hints folded one inside the
# next.) Or grade from a terminal: `mcp-sim grade ex02_error_codes` (all exercises: `mcp-sim grade`;
# your progress: `mcp-sim progress`). Self-study grading checks your understanding, not your honesty:
# your code runs as you and could read the reference solutions one folder away, and the record it
# keeps proves nothing to anyone else (a class grades with `mcp-sim grade --isolation os`, in a sandbox
# that holds only your files). The checks run your code on many generated cases, not on one
# example, so an answer that only works for one example will not pass. The cases are seeded, not
# random: the same seed always gives the same cases, so a failure can be reproduced, and `mcp-sim
# grade --seed 7` draws another set. A failed check cites the rule you broke, shows the case that
# broke it (the smallest input of that kind the check found) and says what your code did — not what
# it should have done. Help comes only when you ask: the panel's *Show next hint* button reveals one
# hint at a time, from what to compare up to the last hint, which gives the expected answer for the
# case shown. In a terminal, `mcp-sim grade ex02_error_codes --hints 2` shows the first two hints
# (without `--hints`, none). An error in your code is shown once with its traceback, even when it
# breaks every check. Your files are never modified, and code that crashes or loops forever is
# stopped with a readable message instead of breaking the notebook.
#
# Here is what the panel looks like for an exercise you have not started yet:

# %%
from mcp_sim.widgets.grader_panel import grade_panel

grade_panel("ex02_error_codes", record=False)

# %% [markdown]
# ## The chapters
#
# The list is drawn from the course outline (`mcp_sim/course/__init__.py`), so it always names every
# chapter:

# %%
from mcp_sim.course.contents import Contents

Contents()

# %% [markdown]
# **Recap:** run, predict, watch, solve. Three layers — roles, capabilities, transports — and two
# eras. Next: [01 · Roles](01_roles.ipynb).
#
# [[rules-table]]
