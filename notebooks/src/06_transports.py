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
# [[rule stdio.newline-delimited]] [[rule transport.utf-8]]
#
# One message, one line: the reader splits at `\n` and parses each piece. A reader has to cope with
# how pipes deliver bytes, though: one `read()` can return half a line, or three lines at once. (That
# is exercise `ex06_stdio_framer`.)

# %% [markdown]
# ## stdout belongs to the protocol
#
# Because stdout *is* the message channel, nothing else may go there
# [[ref stdio.stdout-only-messages]] (nor onto the server's stdin [[ref stdio.stdin-only-messages]]).
# In 2026-07-28 the stdio page adds two more: [[rule stdio.modern.server-sends-no-requests]]
# [[rule stdio.modern.client-sends-no-responses]] A forgotten
# `print("DEBUG …")` in a handler is the classic stdio bug. `stdout_mixup` runs a `forecast` tool
# that writes a debug line before answering — once to stdout (the bug: `ctx.stdout_raw`, what a stray
# `print` does) and once to stderr (the fix: `ctx.stderr`).

# %%
from mcp_sim.course.predict import ask

ask("06-stdout-debug-print")

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
# as a `log` event, and stdout carries only messages. [[rule stdio.stderr-for-logs]]
# [[rule stdio.stderr-is-not-an-error]]

# %% [markdown]
# ## Shutting a server down
#
# [[rule stdio.shutdown]] [[rule realwire.legacy.stdio-client-shutdown]] [[rule stdio.modern.exit-on-eof]]
# `shutdown` runs the three kinds of server:

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
# A question first: what may a client do about a call that was in flight when its server died?

# %%
ask("06-crash-during-book")

# %% [markdown]
# When the server process dies, everything in flight dies with it. On stdio the client launched the
# process, so the client can start a new one: [[rule stdio.modern.restart-after-crash]] (2025-11-25
# says nothing about it; there a restart is a new session with a new `initialize`.) But *what* was
# lost matters. A `tools/call` that was already written to stdin may have run before the crash, or
# not: nobody knows. Sending it again might book a second desk or send a second e-mail. The spec
# leaves the choice to the client, and a server's `idempotentHint` is only an untrusted hint
# [[ref host.annotations-untrusted]]; the course's Host decides for itself:
# [[rule host.retry-only-what-is-safe]]
#
# The fault lab (Part E) makes the server crash as the second message after the opening reaches it,
# while four calls are in flight: two `lookup`s, which only read, and two `book`s, which change the
# world. The host trusts `lookup` to be repeated (`retry_after_crash`, its own list), but not `book`:

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
# A remote server cannot be a child process. Streamable HTTP gives it **one endpoint** (here `/mcp`)
# [[ref http.single-endpoint]]: [[rule http.post-per-message]] In the 2025-11-25 era the rules are:
#
# - a notification or response the client posts: [[rule http.legacy.accepted-202]]
# - a request: [[rule http.json-or-sse]] A stream may carry notifications (progress, logs) and even
#   server requests before the response [[ref http.legacy.related-on-own-stream]];
# - after `initialize` every request carries `MCP-Protocol-Version`
#   [[ref http.legacy.protocol-version-header]]. Without it, and with no other clue, a server should
#   assume 2025-03-26 [[ref http.legacy.missing-version-assume-2025-03-26]]; an invalid one is `400`
#   [[ref http.legacy.invalid-version-400]].
#
# Three more mechanisms are **optional**, each a may of the spec:
#
# - a **session**: [[rule http.legacy.session-id-may]] If there is one, [[rule http.legacy.session-id-carry]]
#   A session id should be unguessable [[ref http.legacy.session-id-secure]] and holds only visible
#   ASCII [[ref http.legacy.session-id-visible-ascii]]. [[rule http.legacy.delete-ends-session]]
# - a **`GET` stream**: [[rule http.legacy.get-stream-may]]
# - **resumable streams**: [[rule http.legacy.sse-ids-may]] [[rule http.legacy.replay-may]]
#
# The simulated server and client switch every one of them on, so you can see them:
# [[rule http.legacy.sim-sessions]]
#
# `legacy_http` opens a session, calls `get_forecast` with a progress token and closes. Meanwhile a
# stranger tries `tools/list` without a session id, and with one the server never issued.

# %%
legacy, refusals = tour.legacy_http()
print("\n".join(tour.http_lines(legacy, link="weather")))

# %% [markdown]
# Read it top to bottom: `initialize` comes back on an SSE stream whose first event is a *priming*
# event [[ref http.legacy.priming-event]] (an id with no data, so the client has something to resume
# from); `notifications/initialized` gets `202`; the `GET` opens the server's own stream; the
# `tools/call` answer is a stream carrying two progress notifications and then the response;
# `DELETE` ends the session (the simulator answers it `200`: [[ref http.legacy.delete-200]]). SSE
# event ids such as `2-3` name a stream and a position in it; each message goes on one stream only
# [[ref http.legacy.no-broadcast]]. The session id travels in the headers:

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
ask("06-404-with-session-id")

# %% [markdown]
# The stranger's two tries show both refusals of a server that requires sessions: no id
# [[ref http.legacy.missing-session-400]], an id it does not know [[ref http.legacy.ended-session-404]].
# A server without sessions would have served them both. The simulated server also refuses an
# `initialize` that carries an id: [[rule http.legacy.initialize-with-session-400]]

# %% [markdown]
# ### JSON answers, and where the progress goes then
#
# A server may answer a request with plain JSON instead of a stream. Then it has no stream of the
# request's own for its progress — and the `GET` stream is not the place either:
# [[rule http.legacy.get-stream-unrelated]] [[rule http.legacy.get-stream-no-responses]]
#
# So the simulated server in JSON mode drops what it had to say about the request, and the trace
# notes it: [[rule http.legacy.json-mode-related]]

# %%
as_json, _ = tour.legacy_http(response_mode="json")
print("\n".join(tour.http_lines(as_json, link="weather")[4:10]))
for e in as_json.events:
    if "dropped" in e.marks:
        print("  note:", e.text)

# %% [markdown]
# ### A cut stream, resumed
#
# In this era an SSE stream *may* be resumable (the simulated one is): every event has an id, and
# [[rule http.legacy.resume-with-get]] The server replays what came after it, on that stream only. A
# server may also close the connection on purpose and let the client poll:
# [[rule http.legacy.close-and-poll]] And [[rule http.legacy.disconnect-is-not-cancel]] In the fault
# lab the first SSE event after the opening is lost and its stream cut:

# %%
cut = run_fault_experiment(fault="cut", transport="http", revision="2025-11-25")
for e in cut.highlights():
    print(f"{e.t_ms:>6.0f} ms  {e.kind:<9} {e.method or e.text}  {list(e.marks)}")
print(cut.summary())

# %% [markdown]
# The response was lost with the cut stream; a second later (the `retry` interval the server asked
# for) the client resumed from the last event it had, got the response **replayed**, and the call
# ended normally. Against a server without resumption the response would have been lost, and the
# client's timeout would have ended the call.
#
# One more legacy habit: a client that also speaks the older HTTP+SSE transport (2024-11-05) posts
# `initialize` first and, on a `400`, `404` or `405`, tries a `GET` that should open the old
# transport's stream with an `endpoint` event.

# %% [markdown]
# # Part C · Streamable HTTP, 2026-07-28
#
# The 2026-07-28 revision drops the session. There is no `initialize`, no `Mcp-Session-Id`, no `GET`
# stream and no resumption: **each `POST` stands alone** and carries everything the server needs —
# the version in `_meta` and in the `MCP-Protocol-Version` header, the method in `Mcp-Method`, and for
# `tools/call`, `resources/read` and `prompts/get` the tool, resource or prompt name in `Mcp-Name`:
# [[rule http.modern.protocol-version-header]] [[rule http.modern.method-and-name-headers]]
# The headers let a gateway or load balancer route a request without reading its body; the server
# checks that they agree with it. A few details of the headers:
#
# - [[rule http.modern.header-names-case-insensitive]]
# - [[rule http.modern.base64-header-values]]
# - a tool may ask for more: [[rule http.modern.x-mcp-header]] [[rule http.modern.x-mcp-header-invalid-tool-dropped]]
# - an old client's leftovers are ignored: [[rule http.modern.legacy-traffic]]
#
# `modern_http` makes one ordinary call, then posts the very request the client sent again, by hand,
# with its headers right and wrong:

# %%
modern, answers = tour.modern_http()
sent = next(e for e in modern.events if e.kind == "request" and e.method == "tools/call")
print("\n".join(transport_detail(sent)))

# %%
ask("06-name-header-mismatch")

# %%
for answer in answers:
    print(answer.line())

# %% [markdown]
# The status follows the JSON-RPC answer:
#
# - a good call is `200`;
# - a header mismatch is `400` + `-32020`: [[rule http.modern.header-mismatch-400]]
# - a missing `MCP-Protocol-Version` is refused the same way, because this server serves only
#   2026-07-28: [[rule http.modern.missing-version-header]]
# - a method this server does not offer: [[rule http.modern.unknown-method-404]]
# - `GET` (or `DELETE`) is `405 Method Not Allowed`: there is no stream to open and no session to end,
#   and this server supports only this revision ([[ref http.modern.legacy-traffic]]);
# - a foreign `Origin` is `403` (see below).
#
# Other `400`s a modern server gives, not tried here: [[rule http.modern.unsupported-version-400]]
# A request missing a required `_meta` field is `-32602` (chapter 03), and one that needs a client
# capability the request did not declare is `-32021` (MissingRequiredClientCapability). Without a
# valid token, `401`; with too few scopes, `403` (chapter 11). Because all of these are `400`s with a
# modern JSON-RPC error in the body, a client that speaks both eras tells them from a legacy server by
# reading the body: [[rule http.modern.era-from-400-body]]
#
# And notifications? [[rule http.modern.no-client-notifications]] The client never posts a response
# either: [[rule http.modern.client-posts-no-responses]]

# %% [markdown]
# ### Request-scoped streams, and cancelling by closing them
#
# A modern server answers with JSON, or — when it has progress or log messages for *this* request —
# with an SSE stream that carries them and ends with the response:
# [[rule http.modern.stream-is-request-scoped]] [[rule http.modern.no-proxy-buffering]] The ready-made `logging-progress-cancel` scenario calls
# a slow `count` tool twice, the second time with a two-second timeout:

# %%
from mcp_sim.scenarios import run_scenario

progress_http = run_scenario("logging-progress-cancel", revision="2026-07-28", transport="http", seed=1)
for e in progress_http:
    if e.link != "app":
        print(f"{e.t_ms:>6.0f} ms  {transport_summary(e):<26} {e.kind:<12} {e.method or e.text}")

# %% [markdown]
# When the client gives up on the second call, it does **not** post `notifications/cancelled`:
# [[rule cancel.modern-http-closes-stream]] (On stdio there is no stream to close, so the same client sends
# `notifications/cancelled` there.) A broken stream cannot be resumed either: the request is lost,
# and a client that still wants the answer sends it again with a new id (`Last-Event-ID` is ignored).
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
# restarted server has nothing to forget. One exception, from the tasks extension (chapter 08): a
# task's state lives in one process, so [[rule tasks.ext.mcp-name-header]] The simulated HTTP server serves each `POST` with a fresh
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
# sends the page's real `Origin`, so the defence is simple: [[rule http.origin-present-and-invalid-403]]
# [[rule http.bind-localhost]] Above, the request with `Origin: https://evil.example` got exactly that:

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
# Which calls are asked again is the lab host's policy ([[ref host.retry-only-what-is-safe]]), and what
# happens to copies is the simulator's: [[rule faults.duplicate-request-not-rerun]]
# [[rule faults.duplicate-response-ignored]] A late answer to a cancelled request is ignored, as
# [[ref faults.ignore-late-response]].
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
# - **stdio**: the client launches the server; one message per line (must); stdout is for messages
#   only (must not write anything else), logs may go to stderr; shutdown should be close stdin →
#   `SIGTERM` → `SIGKILL`; after a crash a 2026 client should restart the server, and may retry what
#   was lost — the course's Host re-sends only what it trusts to repeat, with new ids (its policy).
# - **Streamable HTTP 2025-11-25**: one endpoint (must); `202` for accepted notifications and
#   responses (must); JSON or SSE answers (the server's choice; the client must handle both). Optional
#   (may): a session (`Mcp-Session-Id`, then carried on every request, must; a server that requires
#   it should answer `400` without it; `404` once it is gone, must, and the client must start again),
#   a `GET` stream (whose messages should be unrelated to running requests), resumption with
#   `Last-Event-ID`; `DELETE` should end a session. The simulator turns every option on.
# - **Streamable HTTP 2026-07-28**: `POST` only, no session; `MCP-Protocol-Version`, `Mcp-Method`,
#   `Mcp-Name` must be sent and must match the body (`400` + `-32020`); `404` + `-32601` for an
#   unknown method (must); a modern-only server should answer `405` for `GET`/`DELETE` and ignore
#   session ids; request-scoped SSE; closing the stream must count as cancelling; no resumption;
#   `subscriptions/listen` is the long-lived stream.
# - Stateless means no connection state, not no state: anything that spans requests is named in them
#   (and task requests name their task in `Mcp-Name`).
# - A local HTTP server must answer a present, unexpected `Origin` with `403` and should listen on
#   `127.0.0.1` only.
# - Under faults, every request ends in a response or a visible timeout, crash or cut; timeouts should
#   be followed by a cancellation; retries are new requests with new ids.
#
# [[rules-table]]
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
