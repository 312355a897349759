# %% [markdown]
# # 06 · Transports
#
# **What you will learn**
#
# - how a message actually travels: over **stdio** (the server is a child process; one JSON-RPC
#   message per line) and over **Streamable HTTP** (one endpoint, `POST`, status codes, headers and
#   SSE streams);
# - why a stdio server's **stdout belongs to the protocol** and its logs go to **stderr**; how a
#   client shuts a server down (close stdin, then signals) and what happens when it crashes;
# - Streamable HTTP **2025-11-25**: sessions (`Mcp-Session-Id`), `202 Accepted`, JSON or SSE
#   answers, the `GET` stream, resuming with `Last-Event-ID`, `DELETE`;
# - Streamable HTTP **2026-07-28**: no sessions, mirrored headers (`MCP-Protocol-Version`,
#   `Mcp-Method`, `Mcp-Name`) and their `-32020` answer, status codes, request-scoped SSE,
#   cancelling by closing the stream, and the long-lived `subscriptions/listen` stream;
# - what "stateless" does and does not mean, with the same call over memory, stdio and HTTP;
# - why a local HTTP server checks `Origin`;
# - in the **fault lab**: drops, duplicates, reordering, corruption, crashes and cut streams, and what
#   a correct client does about each.
#
# Parts: **A** stdio · **B** Streamable HTTP, legacy · **C** Streamable HTTP, 2026-07-28 ·
# **D** stateless, side by side · **E** the fault lab.

# %% [markdown]
# ## One interface, three pipes
#
# Everything above the transport layer — the Client, the server session — sends and receives
# *messages* through a `MessageStream` (`send`, `receive`, `aclose`) and never sees a byte. Below it,
# each transport frames messages its own way and records every frame in the trace at the moment it
# goes on the wire. `open_link(..., transport="memory" | "stdio" | "http")` picks one.
#
# `same_call` (in `mcp_sim/scenarios/transport_tour.py`) connects to the weather server and asks for
# a two-day forecast for Lisbon. Here it is over stdio; the table has a **transport** column saying
# how each row travelled, and under each row the exact bytes.

# %%
import json

from mcp_sim.scenarios import transport_tour as tour
from mcp_sim.trace import TraceTable

over_stdio = tour.same_call("stdio")
TraceTable(over_stdio)

# %% [markdown]
# # Part A · stdio
#
# ## The server is a child process
#
# On stdio the client **launches** the server (row 1: `spawn`, with a process id) and owns its three
# pipes. The client writes to the server's **stdin**; the server writes to its **stdout**. Each
# message is one line of UTF-8 JSON ending in `\n` — that is the whole framing. A message may not
# contain a raw newline, and it never needs one: JSON writes a newline inside a string as the two
# characters `\n`. Here is a log notification whose text has two lines, as the simulator's encoder
# puts it on the pipe:

# %%
from mcp_sim.wire.jsonrpc import JSONRPCNotification, encode

line = encode(JSONRPCNotification("notifications/message", {"level": "info", "data": "first line\nsecond line"}))
print((line + "\n").encode())

# %% [markdown]
# One message, one line: the reader splits at `\n` and parses each piece. A reader has to cope with
# how pipes deliver bytes, though: one `read()` can return half a line, or three lines at once. (That
# is exercise `ex06_stdio_framer`.)

# %% [markdown]
# ## stdout belongs to the protocol
#
# Because stdout *is* the message channel, a server must write nothing else there. A forgotten
# `print("DEBUG …")` in a handler is the classic stdio bug. `stdout_mixup` runs a `forecast` tool
# that writes a debug line before answering — once to stdout (the bug: `ctx.stdout_raw`, what a stray
# `print` does) and once to stderr (the fix: `ctx.stderr`).

# %%
from mcp_sim.course.predict import ask

ask("06-stdio-server-s-tool")

# %%
for fixed in (False, True):
    recorder, got = tour.stdout_mixup(fixed=fixed)
    print("to stderr (the fix)" if fixed else "to stdout (the bug)")
    for e in recorder.events:
        stdio = e.framing.get("stdio")
        if stdio and stdio["stream"] != "stdin":
            print(f"  {e.kind:<9} {stdio['stream']}: {stdio['line'].encode()[:90]!r}")
        elif e.kind == "transport" and "invalid" in e.marks:
            print(f"  client: {e.text}")
    print("  the caller got:", got)

# %% [markdown]
# With the bug, the debug text arrives on stdout as a frame of its own, and the client reports that it
# *could not read a frame*. Here the client survives: it skips the line and the real response follows.
# Now imagine the printed text happened to be a line of valid JSON-RPC — a logged value an attacker
# chose, for instance. The client would take it for the server's answer. Chapter 10's lab
# `stdio-stdout-contamination` plays exactly that. With the fix, the line goes to stderr, is recorded
# as a `log` event, and stdout carries only messages. A client should not treat stderr output as an
# error: servers log there routinely.

# %% [markdown]
# ## Shutting a server down
#
# The client ends a stdio connection in up to three steps: close the server's stdin and wait; if the
# process is still running, send `SIGTERM` and wait; then `SIGKILL`. A well-behaved server exits as
# soon as it reads end-of-file. `shutdown` runs the three kinds of server:

# %%
for label, options in (("exits on end-of-file", {}),
                       ("ignores end-of-file", {"exits_on_stdin_eof": False}),
                       ("ignores SIGTERM too", {"exits_on_stdin_eof": False, "handles_sigterm": False})):
    steps = [e for e in tour.shutdown(**options).events if e.kind == "transport" and "spawn" not in e.marks]
    print(label)
    for e in steps:
        print(f"  {e.t_ms:>6.0f} ms  {e.text}")

# %% [markdown]
# ## A crash, and a restart
#
# When the server process dies, everything in flight dies with it. On stdio the client launched the
# process, so the client can start a new one — 2026-07-28 says it SHOULD, re-sending what was lost
# (and re-opening any `subscriptions/listen`). But *what* was lost matters. A `tools/call` that was
# already written to stdin may have run before the crash, or not: nobody knows. Sending it again
# might book a second desk or send a second e-mail.
#
# The fault lab (Part E) makes the server crash as the second message after the opening reaches it,
# while four calls are in flight: two `lookup`s, which only read, and two `book`s, which change the
# world. The host trusts `lookup` to be repeated (`retry_after_crash`), but not `book`:

# %%
from mcp_sim.scenarios.fault_lab import run_fault_experiment

crash = run_fault_experiment(fault="crash", transport="stdio", revision="2026-07-28")
display(TraceTable(crash.highlights(), title="crash on stdio"))
for call in crash.calls:
    print(f"{call.call:<12} {call.outcome:<16} request ids {list(call.request_ids)}")

# %% [markdown]
# The process exits with code 1 and a last line on stderr; the client restarts it (a new process
# id), discovers the server again, and sends each `lookup` once more **with a new id** — the old id
# belonged to the dead process's conversation. Each `book` ends in `OutcomeUnknown`: the client says
# plainly that it does not know whether the booking happened, rather than guessing either way.

# %% [markdown]
# # Part B · Streamable HTTP, 2025-11-25
#
# A remote server cannot be a child process. Streamable HTTP gives it **one endpoint** (here `/mcp`):
# every client message is its own `POST`, sent with `Accept: application/json, text/event-stream`.
# In the 2025-11-25 era the connection is a **session**:
#
# - the response to `initialize` carries `Mcp-Session-Id`; the client sends it on every later
#   request, plus `MCP-Protocol-Version`;
# - a notification or response the client posts is answered `202 Accepted`, with no body;
# - a request is answered with one JSON body **or** an SSE stream (`text/event-stream`) that may
#   carry notifications (progress, logs) and even server requests before the response;
# - after initialization the client opens a `GET` stream for messages the server sends on its own;
# - `DELETE` ends the session.
#
# `legacy_http` opens a session, calls `get_forecast` with a progress token and closes. Meanwhile a
# stranger tries `tools/list` without a session id, and with one the server never issued.

# %%
legacy, refusals = tour.legacy_http()
print("\n".join(tour.http_lines(legacy, link="weather")))

# %% [markdown]
# Read it top to bottom: `initialize` comes back on an SSE stream whose first event is a *priming*
# event (an id with no data, so the client has something to resume from); `notifications/initialized`
# gets `202`; the `GET` opens the server's own stream; the `tools/call` answer is a stream carrying
# two progress notifications and then the response; `DELETE` ends the session. SSE event ids such as
# `2-3` name a stream and a position in it. The session id travels in the headers:

# %%
from mcp_sim.trace.table import transport_detail, transport_summary

opened = next(e for e in legacy.events if e.kind == "response" and e.method == "initialize")
call = next(e for e in legacy.events if e.kind == "request" and e.method == "tools/call")
print("\n".join(transport_detail(opened)))
print("\n".join(transport_detail(call)))

# %%
for answer in refusals:
    print(answer.line())

# %%
ask("06-2025-11-25-client")

# %% [markdown]
# ### JSON answers, and where the progress goes then
#
# A server may answer a request with plain JSON instead of a stream. Then it has no stream to put the
# request's progress on, so those notifications travel on the client's `GET` stream:

# %%
as_json, _ = tour.legacy_http(response_mode="json")
print("\n".join(tour.http_lines(as_json, link="weather")[4:12]))

# %% [markdown]
# ### A cut stream, resumed
#
# In this era an SSE stream is **resumable**: every event has an id, and a client whose stream broke
# sends `GET` with `Last-Event-ID: <the last id it saw>`; the server replays what came after it on
# that stream. Disconnecting is *not* cancelling — the request keeps running. In the fault lab the
# first SSE event after the opening is lost and its stream cut:

# %%
cut = run_fault_experiment(fault="cut", transport="http", revision="2025-11-25")
for e in cut.highlights():
    print(f"{e.t_ms:>6.0f} ms  {e.kind:<9} {e.method or e.text}  {list(e.marks)}")
print(cut.summary())

# %% [markdown]
# The response was lost with the cut stream; a second later (the `retry` interval the server asked
# for) the client resumed from the last event it had, got the response **replayed**, and the call
# ended normally.

# %% [markdown]
# # Part C · Streamable HTTP, 2026-07-28
#
# The 2026-07-28 revision drops the session. There is no `initialize`, no `Mcp-Session-Id`, no `GET`
# stream and no resumption: **each `POST` stands alone** and carries everything the server needs —
# the version in `_meta` and in the `MCP-Protocol-Version` header, the method in `Mcp-Method`, and for
# `tools/call`, `resources/read` and `prompts/get` the tool, resource or prompt name in `Mcp-Name`.
# The headers let a gateway or load balancer route a request without reading its body; the server
# checks that they agree with it.
#
# `modern_http` makes one ordinary call, then posts the very request the client sent again, by hand,
# with its headers right and wrong:

# %%
modern, answers = tour.modern_http()
sent = next(e for e in modern.events if e.kind == "request" and e.method == "tools/call")
print("\n".join(transport_detail(sent)))

# %%
ask("06-2026-07-28-post")

# %%
for answer in answers:
    print(answer.line())

# %% [markdown]
# The status follows the JSON-RPC answer: a good call is `200`; a header mismatch `400` + `-32020`
# (also for a missing `MCP-Protocol-Version`); a method this server does not offer `404` + `-32601`;
# `GET` (or `DELETE`) `405 Method Not Allowed`, since there is no stream to open and no session to
# end; a foreign `Origin` `403` (see below). A notification, had we posted one, would get `202`.

# %% [markdown]
# ### Request-scoped streams, and cancelling by closing them
#
# A modern server answers with JSON, or — when it has progress or log messages for *this* request —
# with an SSE stream that carries them and ends with the response. Nothing else goes on that stream,
# and the server never sends requests on it. The ready-made `logging-progress-cancel` scenario calls
# a slow `count` tool twice, the second time with a two-second timeout:

# %%
from mcp_sim.scenarios import run_scenario

progress_http = run_scenario("logging-progress-cancel", revision="2026-07-28", transport="http", seed=1)
for e in progress_http:
    if e.link != "app":
        print(f"{e.t_ms:>6.0f} ms  {transport_summary(e):<26} {e.kind:<12} {e.method or e.text}")

# %% [markdown]
# When the client gives up on the second call, it does **not** post `notifications/cancelled`:
# in 2026-07-28, closing the request's response stream *is* the cancellation, and the server cancels
# that handler. (On stdio there is no stream to close, so the same client sends
# `notifications/cancelled` there.) A broken stream cannot be resumed either: the request is lost,
# and a client that still wants the answer sends it again with a new id.
#
# ### `subscriptions/listen`: the one long-lived stream
#
# Without a `GET` stream, how does a modern client hear that a list changed? It posts
# `subscriptions/listen`, naming what it wants to hear about, and the answer is a stream that stays
# open: first an acknowledgement, then the notifications, each tagged with the listen request's id.
# (Chapter 07 is about change; here we only watch the stream.)

# %%
listening = run_scenario("subscriptions", revision="2026-07-28", transport="http", seed=1)
for e in listening:
    if e.link != "app" and (e.request_id == 2 or "SSE" in transport_summary(e)):
        print(f"{e.t_ms:>6.0f} ms  {transport_summary(e):<26} {e.kind:<12} {e.method or e.text}")

# %% [markdown]
# # Part D · What "stateless" means
#
# **Stateless does mean**: no session and no handshake. Every request carries its version and the
# client's capabilities in `_meta`, so any server process behind a load balancer can answer it, and a
# restarted server has nothing to forget. The simulated HTTP server serves each `POST` with a fresh
# run of the server program.
#
# **Stateless does not mean** that nothing is remembered. The *application* still has state — the
# desks booked, the files written. What the protocol forbids is relying on *earlier requests on the
# same connection*: state that spans requests is named explicitly in each request (a cursor, a
# `requestState`, a handle passed as a tool argument). And a `subscriptions/listen` stream is long-lived
# without being a session: it is one request, open until someone closes it.
#
# The same 2026-07-28 call over the three transports shows what changes and what does not: the
# messages are the same, only the framing differs. (Every ready-made story runs over any transport:
# `mcp-sim scenarios` lists them, and `mcp-sim run weather --transport stdio` prints one's trace table
# with the transport column in a terminal.)

# %%
for transport in ("memory", "stdio", "http"):
    run = tour.same_call(transport)
    call, answer = (e for e in run.events if e.method == "tools/call")
    print(f"{transport:<7} request:  {transport_summary(call) or '(a hand-off in memory)'}")
    print(f"{'':<7} response: {transport_summary(answer) or '(a hand-off in memory)'}")
    print(f"{'':<7} same text: {json.dumps(answer.message['result']['content'][0]['text'], ensure_ascii=False)}")

# %% [markdown]
# Step through a richer story — logs, progress and a cancelled call — over stdio and over HTTP, side
# by side. Use *show as* to see each message as stdio bytes or as its HTTP exchange, and notice where
# the cancellation differs.

# %%
from functools import partial

from mcp_sim.widgets.player import play, side_by_side

rerun = partial(run_scenario, "logging-progress-cancel")
over_stdio_run = run_scenario("logging-progress-cancel", revision="2026-07-28", transport="stdio", seed=1)
side_by_side(play(over_stdio_run, runner=rerun, options={"revision": "2026-07-28", "transport": "stdio", "seed": 1}),
             play(progress_http, runner=rerun, options={"revision": "2026-07-28", "transport": "http", "seed": 1}))

# %% [markdown]
# ## Origin checks and DNS rebinding
#
# A local HTTP server (one listening on `127.0.0.1` for your editor) is reachable by every web page
# your browser opens. A page from `evil.example` can make its own host name resolve to `127.0.0.1`
# (*DNS rebinding*) and then send requests to your server as if it were same-origin. The browser still
# sends the page's real `Origin`, so the defence is simple: the server **must** check `Origin` and
# refuse any it does not expect — `403 Forbidden` — and should listen on `127.0.0.1` only, and
# authenticate. Above, the request with `Origin: https://evil.example` got exactly that:

# %%
print(answers[-1].line())

# %% [markdown]
# Chapter 10 (security) attacks a server that forgot the check, in the lab `dns-rebinding`.

# %% [markdown]
# # Part E · The fault lab
#
# Real links lose, repeat, reorder and damage messages, and servers crash. The lab opens one link
# cleanly, then turns the faults on — drawn from the simulation's seeded generator, so a seed replays
# the same story — and runs a few concurrent calls through the real Client, with a timeout each.
# `lookup` calls (read-only) are asked again once after a timeout, as a **new request with a new
# id**; `book` calls never are. The summary line checks the lab's promise: every request ends in a
# response, or in a timeout, crash or cut that the trace shows. Nothing just vanishes.
#
# Try: `drop` on stdio and on modern HTTP (where does the cancellation go?); `duplicate` (the second
# copy of a response is ignored, a duplicated request is not run twice); `corrupt` (parse errors);
# `crash` on each transport (stdio restarts, legacy HTTP forgets sessions and answers `404`, memory has
# nothing to restart); `cut` on both HTTP eras (resumed, or lost). The code behind the panel is
# `mcp_sim/scenarios/fault_lab.py`.

# %%
from mcp_sim.widgets.fault_lab import fault_lab

fault_lab(fault="drop", transport="stdio", revision="2025-11-25", seed=1)

# %%
ask("06-stdio-server-crashes-while")

# %%
dropped = run_fault_experiment(fault="drop", transport="http", revision="2026-07-28", seed=1)
print(dropped.summary())
for e in dropped.highlights():
    print(f"{e.t_ms:>6.0f} ms  {e.kind:<9} #{e.request_id} {list(e.marks)}  {e.text or e.method}")

# %% [markdown]
# On modern HTTP a request lost on the way never opened a stream, so at the timeout there is nothing
# to close ("nothing to cancel"), and no `notifications/cancelled` goes out. The lost `lookup` (request
# 2) is asked again as request 6 — which is dropped too, so its second timeout ends the call; the lost
# `book` (request 5) is not asked again.

# %% [markdown]
# ## Recap
#
# - Every transport carries the same JSON-RPC messages; the trace's transport column shows the
#   framing: stdio lines, or HTTP method, status, headers and SSE event ids.
# - **stdio**: the client launches the server; one message per line; stdout is for messages only,
#   logs go to stderr; shutdown is close stdin → `SIGTERM` → `SIGKILL`; after a crash the client
#   restarts the server and re-sends only what is safe to repeat, with new ids.
# - **Streamable HTTP 2025-11-25**: one endpoint; `202` for notifications and responses; JSON or SSE
#   answers; `Mcp-Session-Id` on every request after `initialize` (`400` without, `404` once it is
#   gone: start again); a `GET` stream; resume with `Last-Event-ID`; `DELETE` to end.
# - **Streamable HTTP 2026-07-28**: `POST` only, no session; `MCP-Protocol-Version`, `Mcp-Method`,
#   `Mcp-Name` must match the body (`400` + `-32020`); `404` + `-32601` for an unknown method; `405`
#   for `GET`/`DELETE`; request-scoped SSE; closing the stream cancels; no resumption;
#   `subscriptions/listen` is the long-lived stream.
# - Stateless means no connection state, not no state: anything that spans requests is named in them.
# - A local HTTP server checks `Origin` (`403`) against DNS rebinding.
# - Under faults, every request ends in a response or a visible timeout, crash or cut; timeouts are
#   followed by a cancellation; retries are new requests with new ids.
#
# **Exercises** (grade each with `grade("…")` from a cell, or `mcp-sim grade …` in a terminal):
#
# - `ex06_stdio_framer` — a line framer that survives partial reads and several messages per read:
#   `grade("ex06_stdio_framer")`;
# - `ex06_http_answers` — the status, headers and body a 2026-07-28 server gives:
#   `grade("ex06_http_answers")`;
# - `ex06_legacy_sessions` — which request needs which header, and what `404` means:
#   `grade("ex06_legacy_sessions")`;
# - `ex06_drops_duplicates` — a client that stays correct under drops and duplicates:
#   `grade("ex06_drops_duplicates")`;
# - `ex06_diagnose_stdout` — who printed to stdout?: `grade("ex06_diagnose_stdout")`.
