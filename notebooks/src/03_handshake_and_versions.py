# %% [markdown]
# # 03 · The handshake and versions
#
# **What you will learn**
#
# - how a legacy connection opens: `initialize` → result → `notifications/initialized`, and what the
#   two sides agree on (a protocol version, each side's capabilities, who they are);
# - what happens when the versions do not match, or a capability was never declared;
# - how the modern era (2026-07-28) drops the handshake: every request carries its version and
#   the client's capabilities in `_meta`, and `server/discover` — optional for the client — tells
#   what a server supports;
# - the modern errors `-32022` (unsupported version) and `-32021` (missing client capability);
# - how a client that does not know a server's era finds out.

# %%
from mcp_sim.protocol.revisions import comparison_table

# %% [markdown]
# ## Five revisions, two eras
#
# MCP versions are dates. The table below is drawn from the simulator's registry of revisions — the
# same data that decides what the simulated servers and clients may send.

# %%
comparison_table("requests")

# %% [markdown]
# Three things to notice:
#
# 1. `initialize`, `ping` and `logging/setLevel` vanish in 2026-07-28: there is no session to open,
#    keep alive or configure.
# 2. The server-to-client requests (`sampling/createMessage`, `elicitation/create`, `roots/list`)
#    only live **inside** `inputRequests` in 2026-07-28 — chapter 04 is about that.
# 3. `server/discover` and `subscriptions/listen` are new.

# %% [markdown]
# ## The legacy handshake
#
# A legacy client opens with `initialize` [[ref lifecycle.initialize-first]], offering a version it
# speaks — its newest [[ref lifecycle.client-offers-latest]] — and its capabilities. The server
# answers with the same version if it supports it [[ref lifecycle.server-echoes-supported-version]],
# otherwise with another version it supports [[ref lifecycle.server-counter-offers]], normally its
# newest [[ref lifecycle.server-counter-offers-latest]]; the client then either accepts (and sends
# `notifications/initialized` [[ref lifecycle.initialized-notification]]) or disconnects.

# %%
import json

from mcp_sim.scenarios import run_scenario
from mcp_sim.trace import TraceTable

legacy = run_scenario("handshake", revision="2025-11-25", seed=1)
TraceTable(legacy)

# %% [markdown]
# The first three messages are the handshake. Here they are exactly as they crossed the wire:

# %%
from mcp_sim.trace.reading import JsonView

wire = [e for e in legacy if e.kind != "app"]
for event in wire[:3]:
    display(JsonView(event.message, title=f"{event.sender} → {event.receiver}"))

# %% [markdown]
# The lifecycle is a small state machine. The simulator keeps it as a table — the diagram below is
# drawn from that same table, so it cannot disagree with what the simulator enforces.

# %%
from mcp_sim.trace import LifecycleDiagram

LifecycleDiagram(current="operating")

# %%
from mcp_sim.course.predict import ask

ask("03-legacy-client-offers-protocolversion")

# %% [markdown]
# ## Modern: negotiation on every request
#
# In 2026-07-28 the server keeps no memory of a client between requests, so each request must say
# everything the server needs: `params._meta` carries `io.modelcontextprotocol/protocolVersion` and
# `io.modelcontextprotocol/clientCapabilities` on every request [[ref meta.required-fields]], and
# `io.modelcontextprotocol/clientInfo`, who the client is, which it should include
# [[ref meta.client-info]].

# %%
modern = run_scenario("handshake", revision="2026-07-28", seed=1)
TraceTable(modern)

# %% [markdown]
# Look at the `tools/list` request: the client says again, on this request, which version it
# speaks and what it can do. The server learns nothing from the earlier `server/discover`
# [[ref stateless.no-context-from-earlier-requests]], which this client sent by choice
# [[ref versioning.discover-optional-for-clients]].

# %%
tools_list = next(e for e in modern if e.kind == "request" and e.method == "tools/list")
display(JsonView(tools_list.message))

# %% [markdown]
# ## When negotiation fails
#
# | situation | legacy answer | modern answer |
# |---|---|---|
# | version not supported | server answers with its own version; client may disconnect | `-32022` with `data.requested` and `data.supported`; client retries with a common version |
# | `_meta` missing | — | `-32602` |
# | a client capability the server needs was not declared | the server must not ask | `-32021` with `data.requiredCapabilities` |
# | a server capability the client needs was not declared | the client must not ask (`-32601` if it does) | same |

# %%
import anyio

from mcp_sim.protocol import meta
from mcp_sim.protocol.errors import McpError
from mcp_sim.roles.client import Client
from mcp_sim.roles.server import Server
from mcp_sim.roles.server_session import serve
from mcp_sim.scenarios import weather
from mcp_sim.scenarios.stories import weather_with_outing
from mcp_sim.sim.world import Simulation
from mcp_sim.transports.memory import memory_link
from mcp_sim.wire import JSONRPCRequest


def run_against(server: Server, client: Client | None = None, raw: list[JSONRPCRequest] | None = None,
                then=None, seed: int = 1) -> Simulation:
    """Connect ``client`` (or send ``raw`` requests by hand) to ``server``; run ``then(client)``."""
    sim = Simulation(seed)

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            to_server, server_end = memory_link(sim, server.name)
            tg.start_soon(serve, server, server_end)
            try:
                if raw is not None:
                    for request in raw:
                        await to_server.send(request)
                        await to_server.receive()
                else:
                    await client.connect(to_server, tg)
                    if then is not None:
                        await then(client)
            except McpError as exc:
                # Say where the error came from: an answer that crossed the wire, or the client's own
                # decision, which sends nothing (the code is then only the client's local label).
                answered = [e for e in sim.recorder if e.kind == "error"]
                if any(e.message["error"]["code"] == exc.code for e in answered):
                    print(f"the server answered with error {exc.code}: {exc.message}")
                else:
                    print(f"the client stopped on its own; no error went on the wire: {exc.message}")
            finally:
                if client is not None:
                    await client.close()
                await to_server.aclose()

    sim.run(main)
    return sim


# A legacy client that only speaks 2025-06-18 meets a server that only speaks 2025-11-25.
picky = Server("picky", version="1.0.0", supported_versions=("2025-11-25",))
sim = run_against(picky, Client("old-app", era="legacy", versions=("2025-06-18",)))
TraceTable(sim.recorder)

# %% [markdown]
# The server did not agree to anything: it answered with the version *it* speaks, a counter-offer.
# The client does not speak 2025-11-25, so it closed the connection without sending
# `notifications/initialized` [[ref lifecycle.client-disconnects-on-unsupported]]. Nothing else crossed the wire:
# the trace ends with the server's answer, and no error code was sent. The client only reported
# its reason to its own host, printed above the table.
#
# Now the modern errors. The next requests are built by hand on purpose — a future version nobody
# supports, and a request with no `_meta` at all:

# %%
future = meta.request_meta("2027-01-01", {})
sim = run_against(weather.build(), raw=[
    JSONRPCRequest(1, "tools/list", {"_meta": future}),
    JSONRPCRequest(2, "tools/list", {}),
])
for event in sim.recorder:
    if event.kind == "error":
        print(json.dumps(event.message["error"]))

# %% [markdown]
# `-32022` lists what the server does support [[ref versioning.unsupported-version-error]], so the
# client can retry with a common version [[ref versioning.client-retries-with-common-version]]; the
# request without `_meta` is malformed, `-32602` [[ref meta.missing-field-invalid-params]].
# And `-32021`: the tool `plan_outing` needs to ask the user (elicitation), but this client declared
# no capabilities on the request [[ref meta.server-uses-only-declared-capabilities]].

# %%
sim = run_against(weather_with_outing(), Client("no-ui-app", era="modern", capabilities={}),
                  then=lambda c: c.call_tool("plan_outing", {"days": 1}))
display(JsonView(sim.recorder.events[-1].message))

# %% [markdown]
# Finally, the client's own check. This small server offers tools only — its `server/discover`
# answer declares no `prompts` capability — so a client that asks it for a prompt is stopped
# **before** anything is sent: the trace has no `prompts/get` on the wire.

# %%
tools_only = Server("tools-only", version="1.0.0")


@tools_only.tool()
def echo(text: str) -> str:
    """Repeat the text."""
    return text


sim = run_against(tools_only, Client("app", era="modern"), then=lambda c: c.get_prompt("daily_summary", {}))
print([e.method for e in sim.recorder if e.kind == "request"])

# %% [markdown]
# ## Which era is this server?
#
# A client that speaks both eras and meets an unknown server over stdio should probe with
# `server/discover` [[ref versioning.stdio-dual-era-probe]]. A `DiscoverResult`, or one of the modern
# error codes, means modern; anything else — including a timeout — means legacy, and the client
# falls back to `initialize`. The fallback must not hang on one particular error code: legacy
# servers answer an unknown method in different ways [[ref versioning.fallback-not-keyed-to-one-code]].
# Over Streamable HTTP the client tries a modern request instead and reads the body of a `400`
# [[ref http.modern.era-from-400-body]]. Either way it remembers the answer for that server
# [[ref versioning.cache-era]]. (A client that speaks only 2026-07-28 need not probe; the simulator's
# `era="auto"` client is this detection.)

# %%
legacy_only = weather.build()
legacy_only.supported_versions = ("2025-11-25",)  # this weather server predates 2026-07-28
sim = run_against(legacy_only, Client("curious-app", era="auto"), then=lambda c: c.list_tools())
TraceTable(sim.recorder)

# %% [markdown]
# Step through the probe and the fallback yourself:

# %%
from mcp_sim.widgets.player import play

play(sim.recorder)

# %% [markdown]
# The probe failed in a way that is not one of the modern codes, so the client concluded
# "legacy" and fell back to `initialize`. Against a modern server the same client stays modern:

# %%
sim = run_against(weather.build(), Client("curious-app", era="auto"), then=lambda c: c.list_tools())
print([e.method for e in sim.recorder if e.kind == "request"])

# %% [markdown]
# ## Recap
#
# - Legacy: one handshake per connection fixes the version and the capabilities for its lifetime.
# - Modern: no handshake; each request carries version and capabilities, and the server checks them
#   every time (`-32602`, `-32022`, `-32021`).
# - `server/discover` tells a client what a modern server supports — and whether it is modern at all.
#
# **Exercises:** `ex03_version_negotiation`, `ex03_modern_meta`, `ex03_era_detection`.
#
# [[rules-table]]
