# %% [markdown]
# # 01 · Roles: Host, Client, Server
#
# **What you will learn**
#
# - who the three participants of MCP are, and which one is "the app";
# - the one-client-per-server rule, and what it buys (and does not buy) you;
# - why separate connections are **not** a security sandbox;
# - who decides what: the Host's approval versus the Server's own permission checks.

# %% [markdown]
# ## Three participants
#
# | role | what it is | what it is responsible for |
# |---|---|---|
# | **Host** | the AI application the user runs — a desktop assistant, an IDE, your agent | holds the model, creates the clients, decides which tools the model may see, asks the user before acting, assembles context |
# | **Client** | a connector *inside* the host, one per server | speaks the protocol: handshake or discovery, ids, capabilities, retries |
# | **Server** | a program that offers tools, resources and prompts — local or remote | exposes capabilities and checks every caller's permission |
#
# The most common misunderstanding is to call the application "the client". The application is the
# **host**; a client is a small part of it that exists once for every server the host talks to.

# %%
from mcp_sim.trace import ServerPlacement, TopologyDiagram

TopologyDiagram([
    ServerPlacement("notes", "stdio"),         # a local subprocess on the user's machine
    ServerPlacement("weather", "stdio"),       # another local subprocess, same user, same disk
    ServerPlacement("issues", "http"),         # a remote service reached over Streamable HTTP
], title="One host, three clients, three servers")

# %% [markdown]
# ## One client per server
#
# The host creates a separate client for each server. Each connection then has its own version,
# capabilities, authentication and failures: if one server crashes or hangs, the others keep
# working. The simulator enforces the rule [[ref host.one-client-per-server]] — try to point one
# client at a second server:

# %%
import anyio

from mcp_sim.roles.client import Client
from mcp_sim.roles.server_session import serve
from mcp_sim.scenarios import issues, weather
from mcp_sim.sim.world import Simulation
from mcp_sim.transports.memory import memory_link

sim = Simulation(seed=1)


async def one_client_two_servers() -> None:
    async with anyio.create_task_group() as tg:
        to_weather, weather_end = memory_link(sim, "weather")
        to_issues, issues_end = memory_link(sim, "issues")
        tg.start_soon(serve, weather.build(), weather_end)
        tg.start_soon(serve, issues.build(), issues_end)
        client = Client("my-app", era="modern")
        await client.connect(to_weather, tg)
        try:
            await client.connect(to_issues, tg)  # the same client, a second server
        except Exception as exc:
            print(f"{type(exc).__name__}: {exc}")
        await client.close()
        await to_issues.aclose()


sim.run(one_client_two_servers)

# %% [markdown]
# Before reading on, predict:

# %%
from mcp_sim.course.predict import ask

ask("01-notes-weather-servers-above")

# %% [markdown]
# ## Separate connections are not a sandbox
#
# One client per server is a *bookkeeping* boundary, not a *security* boundary. Two local servers
# launched by the same host usually run as the same user, on the same file system, with the same
# environment variables. Nothing in the protocol stops one of them from reading the other's files.
# The real boundaries are process and container permissions, network egress rules, and the user's
# authorization — enforced by the host's runtime and by each server, not by the connection graph.
# The topology diagram above draws those boundaries as enclosures; the security lab makes a
# malicious server cross one. The spec's architecture says the same in its design principles:
# servers should not be able to "see into" other servers, and it is the host process that enforces
# the boundaries. [[rule host.connections-are-not-a-sandbox]]

# %% [markdown]
# ## Who decides what
#
# The host decides *whether* to act: which servers' tools the model may see, whether the user must
# confirm a call, how context from many servers is combined. The server decides *whether this caller
# may do this*: identity, scopes, tenant, ownership of the object. Neither replaces the other: a host
# can be bypassed by another caller, and a server cannot see the user's intent
# [[ref host.approves-server-authorizes]].
#
# Here is the complete call from the user's request to the final answer, with the host's approval
# step in the middle. Step through it with the player.

# %%
from mcp_sim.scenarios import run_scenario
from mcp_sim.widgets.player import play

complete = run_scenario("complete-call", revision="2026-07-28", seed=1)
play(complete)

# %% [markdown]
# The player's buttons need a running kernel; until you run the cell it shows the step where it was
# left (or, on a page that cannot run widgets, a static copy). Its text twin, which reads well
# anywhere, is the table of the same trace: find the approval (`host → user`, then `user → host`) just before the
# client sends `tools/call`.

# %%
from mcp_sim.trace import TraceTable

TraceTable(complete)

# %% [markdown]
# ## Recap
#
# - The host is the app; a client is one connection inside it; a server offers capabilities.
# - One client per server gives independent lifecycles and failures — not isolation.
# - The host approves, the server authorizes; both checks are needed.
#
# **Exercises:** `ex01_topology`.
#
# [[rules-table]]
