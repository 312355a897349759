# %% [markdown]
# # 02 · JSON-RPC messages
#
# Every MCP message, on every transport, is a JSON-RPC 2.0 message. In the course's map (chapter 00)
# this format is the bottom of the **transports** layer: the envelope every pipe carries. The spec
# files the same format under its *data layer*; chapter 00 has the table that translates.
#
# **What you will learn**
#
# - the four kinds of message MCP sends — request, response, error, notification — and how to tell
#   them apart at a glance;
# - how a client matches answers to questions when several requests are in flight (the `id`);
# - the rules MCP adds on top of JSON-RPC (no `null` ids, no batches since 2025-06-18);
# - what a well-behaved peer answers when it receives something it cannot read.
#
# Every message below is produced by the simulator's codec and servers; nothing is typed by hand
# except the deliberately broken frames in the last section.

# %%
import json

from mcp_sim.wire import JSONRPCNotification, JSONRPCRequest, decode, encode

# %% [markdown]
# ## One format, four shapes
#
# Whatever the pipe — a stdio subprocess or an HTTP endpoint — MCP moves the same thing: small JSON
# objects that follow JSON-RPC 2.0. Each one says `"jsonrpc": "2.0"` and then takes one of four shapes.
#
# | shape | has `id`? | has `method`? | carries | answered? |
# |---|---|---|---|---|
# | request | yes | yes | `params` | exactly once |
# | notification | **no** | yes | `params` | never |
# | result response | yes (the request's) | no | `result` | — |
# | error response | yes (the request's); from 2025-11-25 absent if the request was unreadable | no | `error: {code, message, data?}` | — |
#
# The `id` is the whole trick: it is how an answer finds its question [[ref jsonrpc.response-echoes-id]].

# %%
request = JSONRPCRequest(id=1, method="tools/list", params={})
note = JSONRPCNotification(method="notifications/initialized")
print(encode(request))
print(encode(note))

# %% [markdown]
# The codec works both ways. `decode` turns text into one of the four shapes — or into an
# `InvalidMessage` that carries the error a peer should send back. It never raises, because a
# server that crashes on a bad frame is a server anyone can knock over.

# %%
for text in ['{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_forecast"}}',
             '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":0.5}}',
             '{"jsonrpc":"2.0","id":7,"result":{"content":[]}}',
             '{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"Unknown tool: get_forcast"}}']:
    print(f"{type(decode(text)).__name__:24} ← {text}")

# %% [markdown]
# ## Several requests in flight
#
# A client does not have to wait for one answer before asking the next question. Below, a client
# sends three `tools/call` requests at once to the weather server; the server takes a different
# (simulated) time for each city, so the answers come back **out of order**. Watch the ids.

# %%
import anyio

from mcp_sim.roles.client import Client
from mcp_sim.roles.context import Context
from mcp_sim.roles.server import Server
from mcp_sim.roles.server_session import serve
from mcp_sim.sim.world import Simulation
from mcp_sim.trace import SequenceDiagram, TraceTable
from mcp_sim.transports.memory import memory_link

slow = Server("slow-weather", version="1.0.0")


@slow.tool(annotations={"readOnlyHint": True})
async def forecast(ctx: Context, city: str) -> str:
    """The forecast for a city; some cities take longer to compute."""
    await ctx.sleep({"Oslo": 3.0, "Lima": 1.0, "Rome": 2.0}[city])  # simulated seconds
    return f"{city}: clear skies"


sim = Simulation(seed=2)


async def three_in_flight() -> None:
    async with anyio.create_task_group() as tg:
        to_server, server_end = memory_link(sim, "slow-weather")
        tg.start_soon(serve, slow, server_end)
        client = Client("notebook", era="modern", discover=False)
        await client.connect(to_server, tg)
        async with anyio.create_task_group() as calls:  # three requests at once
            for city in ("Oslo", "Lima", "Rome"):
                calls.start_soon(client.call_tool, "forecast", {"city": city})
        await client.close()


sim.run(three_in_flight)
TraceTable(sim.recorder)

# %% [markdown]
# Request `#1` (Oslo) was sent first but answered last, after three simulated seconds; `#2` (Lima)
# came back first. The client matched each answer by its `id`, not by its position. Here are the
# exact bytes of the first request and of the answer that came back to it:

# %%
by_id = {}
for event in sim.recorder:
    if event.request_id == 1:
        by_id[event.kind] = event.raw
print(by_id["request"])
print(by_id["response"])

# %%
SequenceDiagram(sim.recorder)

# %% [markdown]
# ## What a peer answers to input it cannot read
#
# JSON-RPC fixes five error codes for problems with the message itself:
#
# | code | name | when |
# |---|---|---|
# | -32700 | Parse error | the bytes are not JSON (the answer has no `id`: nobody could read one) |
# | -32600 | Invalid Request | JSON, but not a valid message — wrong `jsonrpc`, a `null` id, a batch where batches are not allowed |
# | -32601 | Method not found | the receiver does not implement (or did not advertise) that method |
# | -32602 | Invalid params | the method exists, the parameters are wrong (an unknown tool, a bad cursor …) |
# | -32603 | Internal error | the receiver failed while handling a valid request |
#
# MCP adds rules of its own. An `id` is a string or an integer [[ref jsonrpc.request-id-string-or-integer]],
# **never `null`** [[ref jsonrpc.request-id-not-null]]. And a sender does not reuse its ids, where the
# eras differ: legacy forbids reusing any id within the session
# [[ref jsonrpc.legacy.request-id-unused-in-session]]; 2026-07-28, which has no sessions, only an id
# still awaiting its answer [[ref jsonrpc.request-id-not-in-flight]].

# %%
broken = {
    "not JSON": '{"jsonrpc":"2.0","id":1,"method":',
    "null id": '{"jsonrpc":"2.0","id":null,"method":"ping"}',
    "wrong version": '{"jsonrpc":"1.0","id":2,"method":"ping"}',
    "a batch": '[{"jsonrpc":"2.0","id":3,"method":"ping"}]',
    "array params": '{"jsonrpc":"2.0","id":4,"method":"tools/list","params":[1]}',
}
for label, text in broken.items():
    answer = decode(text)
    print(f"{label:14} → {json.dumps(answer.reply.to_dict())}")

# %% [markdown]
# Notice the ids in those answers: when the `id` could be read (`2`, `4`) the error echoes it, so the
# sender knows which request failed; when it could not (`null`, unparseable) the error has none.
#
# Leaving the `id` out is only valid from revision 2025-11-25, whose schema made it optional on an
# error response [[ref jsonrpc.error-echoes-id-when-readable]]. The earlier schemas (2024-11-05 to 2025-06-18) require an `id` that is a string or
# an integer on every error, so in those revisions an answer to an unreadable request matches no
# schema at all: plain JSON-RPC 2.0 would send `"id": null`, which MCP forbids.
#
# Batches — a JSON array of messages — were allowed in exactly one revision, 2025-03-26. The codec
# recognises them and, unless told the revision allows them, refuses them with `-32600`
# [[ref jsonrpc.batches-only-2025-03-26]].

# %%
print(type(decode(broken["a batch"], allow_batch=True)).__name__)

# %% [markdown]
# ## Predict, then reveal

# %%
from mcp_sim.course.predict import ask

ask("02-server-receives-jsonrpc-2")

# %% [markdown]
# ## Recap
#
# - JSON-RPC is MCP's message format on every transport; it gives MCP four shapes; the `id` ties each response to its request, so many requests
#   can be in flight and answers may arrive in any order.
# - Notifications have no `id` and are never answered.
# - Unreadable input gets `-32700` (no id, valid from 2025-11-25); readable-but-invalid input gets
#   `-32600` (with the id when it could be read); MCP ids are never `null`; batches only existed in 2025-03-26.
#
# **Exercises:** `ex02_next_message` and `ex02_error_codes` in `../exercises/` — see
# [00 · Start here](00_start_here.ipynb) for how to grade them.
#
# [[rules-table]]
