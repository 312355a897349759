# %% [markdown]
# # 12 · The real wire
#
# **What you will learn**
#
# - how a server written with the simulator's `Server` class becomes a **real process** that any MCP
#   client can start — here the official Python SDK's client (package `mcp`), over a real stdio pipe;
# - how the simulator's `Client` drives a **real server** built with the SDK, in both eras;
# - that the 2026-07-28 Streamable HTTP request headers hold on a real loopback socket, and what a
#   local HTTP server must do to be safe there;
# - where the bridge records real traffic, so the trace table, the sequence diagram and the player
#   show a real session exactly like a simulated one;
# - what changes when the wire is real: the wall clock replaces the virtual clock, runs stop being
#   reproducible, processes must be started and stopped, failures are real — and what a trace can
#   and cannot see;
# - how `mcp-sim check` puts a real server — yours, and one the SDK wrote — under a workload and a
#   nemesis in both eras, and how to read its findings.
#
# Every cell below starts real processes (or a real socket), waits for them with a time limit and
# stops them before it ends. Nothing keeps running after a cell.

# %% [markdown]
# ## A server in a few lines
#
# This is an ordinary simulator server, like the ones of chapter 05. One detail matters for what
# follows: the imports are *inside* the function. A real client will run this server in another
# process, and only the function's own text travels there.

# %%
def build():
    """A greeter: one tool, one resource."""
    from mcp_sim.roles.server import Server

    server = Server("greeter", version="1.0.0")

    @server.tool()
    def greet(name: str) -> str:
        """Say hello to someone."""
        return f"Hello, {name}!"

    @server.resource("greeter://motto", mime_type="text/plain")
    def motto() -> str:
        """What the greeter lives by."""
        return "Be kind to every client."

    return server


# %% [markdown]
# ## A real client: the official SDK over stdio
#
# `sdk_client_sessions` (in `mcp_sim/bridge/notebook.py`) writes `build` into a module in a temporary
# folder and hands the SDK's client a **command**: `python -m mcp_sim.cli serve notebook_server:build
# --trace FILE`. The SDK starts that process itself, writes JSON-RPC lines to its stdin and reads
# lines from its stdout — the stdio transport of chapter 06, for real. When the SDK is done it
# closes the server's stdin; `mcp-sim serve` exits and saves every line it read and wrote to the
# trace file, which the helper reads back.
#
# The code below is the SDK's own API (`client.list_tools()`, `client.call_tool(...)`). The helper
# starts two server processes at once and connects one SDK client to each: one with
# `mode="legacy"`, which makes the SDK open with the `initialize` handshake, one with `mode="auto"`.
# We look at the legacy one first. But predict what the other one does:

# %%
from mcp_sim.course.predict import ask

ask("12-other-sdk-client-connected")

# %%
from mcp_sim.bridge.notebook import sdk_client_sessions, steady
from mcp_sim.trace import SequenceDiagram, TraceTable


async def use_greeter(client):
    """What the SDK's client does once connected (SDK types: attributes, not dicts)."""
    tools = (await client.list_tools()).tools
    hello = await client.call_tool("greet", {"name": "Ada"})
    motto = await client.read_resource("greeter://motto")
    return {"tools": [t.name for t in tools], "greet": hello.content[0].text, "motto": motto.contents[0].text}


sdk_runs = sdk_client_sessions(build, modes=("legacy", "auto"), steps=use_greeter)
legacy_run, modern_run = sdk_runs["legacy"], sdk_runs["auto"]
print("the SDK negotiated", legacy_run.protocol_version)
print("the SDK saw", legacy_run.seen)
TraceTable(steady(legacy_run.trace, title="greeter served to the SDK client, legacy era, real stdio"))

# %% [markdown]
# Every row is a line that really crossed the pipe, recorded by the server as it read or wrote it
# (`stdin` rows came from the SDK, `stdout` rows went back). The `initialize` request names the SDK
# as `clientInfo`; our server answered with its capabilities; the SDK then sent
# `notifications/initialized` before its first request, as the legacy handshake requires.
#
# One thing on this page is *not* as recorded: the times. A real trace carries wall-clock
# milliseconds, which change on every run; `steady(...)` replaces them by each event's position so
# that this page reads the same every time it is executed. `legacy_run.trace` keeps the measured
# values (more on that below).

# %%
print("the SDK negotiated", modern_run.protocol_version)
print("same answers as in the legacy era:", modern_run.seen == legacy_run.seen)
SequenceDiagram(steady(modern_run.trace))

# %% [markdown]
# So the SDK (version 2.3.0) speaks **both** eras: `mode="legacy"` gives 2025-11-25 with a
# handshake, `mode="auto"` picks 2026-07-28 when the server answers `server/discover` — the probe a
# client that speaks both eras should send first on stdio [[ref versioning.stdio-dual-era-probe]].
# The greeter did not change at all between the two runs: it is a dual-era server
# [[ref versioning.dual-era-server-may]], and the simulator's `Server` chooses the era from what the
# client sends, exactly as it does in simulation.

# %% [markdown]
# ## Our client, a real server
#
# Now the other way round. Here is a server written with the SDK itself (its `MCPServer` class,
# decorators much like ours). Again the imports are inside the function, because it will run in a
# process of its own: `sim_client_sessions` writes it into a script that ends with
# `notes().run("stdio")`, starts that script — twice, at the same time: one process per era —
# and connects the **simulator's** `Client` to its
# stdin and stdout. The client's end of the pipe records every line, so this trace is seen from the
# client's side — including the process being spawned and, at the end, exiting.

# %%
def notes():
    """A small server built with the official SDK."""
    from mcp.server.mcpserver import MCPServer

    mcp = MCPServer("sdk-notes", version="1.0.0")

    @mcp.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @mcp.resource("notes://readme", mime_type="text/plain")
    def readme() -> str:
        """The read-me note."""
        return "Hello from the SDK server."

    return mcp


# %% [markdown]
# The simulated client will call `add(2, 3)` on it. Before it runs, a question about the SDK, not
# about the spec:

# %%
ask("12-sdk-server-above-answers")

# %%
from mcp_sim.bridge.notebook import sim_client_sessions


async def use_notes(client):
    """What the simulator's client does (its results are plain dicts)."""
    tools = [t["name"] for t in await client.list_all_tools()]
    total = await client.call_tool("add", {"a": 2, "b": 3})
    note = await client.read_resource("notes://readme")
    return {"tools": tools, "add": total["structuredContent"], "readme": note["contents"][0]["text"]}


sim_runs = sim_client_sessions(notes, eras=("legacy", "modern"), steps=use_notes)
for era, run in sim_runs.items():
    print(f"{era:7} {run.protocol_version}  {run.seen}")
TraceTable(steady(sim_runs["modern"].trace, title="the simulated client drives an SDK server, 2026-07-28"))

# %% [markdown]
# The first and last rows are not JSON-RPC: they are the bridge noting that it **spawned** the
# process and that the process **exited with code 0** after its stdin was closed. That is the
# shutdown the spec recommends — a should, not a must: [[rule stdio.shutdown]]
# and the server's half, [[ref stdio.modern.exit-on-eof]]. A server that ignored the closed
# stdin would have got SIGTERM, then SIGKILL; that escalation is POSIX, and on Windows a client uses
# `TerminateProcess` or a Job Object instead.
# The process id is masked here because it differs on every run.
#
# Step through the legacy session with the player: the `initialize` exchange, the SDK server's
# capabilities, then the calls.

# %%
from mcp_sim.widgets.player import play

play(steady(sim_runs["legacy"].trace, title="the simulated client drives an SDK server, legacy era"))

# %% [markdown]
# The `add` result above carries `structuredContent: {"result": 5}` and the same value as text: that
# is the SDK's own habit (it derives an output schema from the function's `int` return type), not
# something the spec asks of a tool without a declared output schema.
#
# One more SDK habit worth knowing: its `DiscoverResult` lists only `2026-07-28` in
# `supportedVersions`, although it answers `initialize` too. The simulator's dual-era servers list
# every version they serve. The spec leaves this open: [[rule realwire.supported-versions-dual-era]]

# %% [markdown]
# ## Real HTTP on the loopback interface
#
# Streamable HTTP works the same way. `sdk_client_over_http` serves the course's weather server
# on `http://127.0.0.1:<port>/mcp` — port 0 asks the operating system for any free port — and lets
# the SDK's client post to it. The endpoint runs inside this notebook's Python process (on the
# helper's own event loop); when the cell ends, it stops and the port is closed again. The port
# number changes from run to run, so it is masked below.

# %%
from mcp_sim.bridge.notebook import sdk_client_over_http
from mcp_sim.scenarios import weather


async def ask_forecast(client):
    forecast = await client.call_tool("get_forecast", {"city": "Oslo", "days": 2})
    return {"forecast": forecast.content[0].text}


http_run = sdk_client_over_http(weather.build(), mode="auto", steps=ask_forecast)
print("the SDK negotiated", http_run.protocol_version, "and saw", http_run.seen)
print("port closed again after the cell:", http_run.extra["port_closed"])
for event in steady(http_run.trace):
    if event.kind == "request":
        headers = event.framing["http"]["request"]["headers"]
        mcp_headers = {k: v for k, v in headers.items() if k.startswith("mcp-")}
        print(f"POST  {event.method:16} {mcp_headers}")
    elif event.kind == "response":
        print(f"  ←   {event.framing['http']['response']['status']} {event.framing['http']['response']['content_type']}")
    else:
        print(f"      ({event.text})")

# %% [markdown]
# Each request was its own POST carrying `Mcp-Method` (and `Mcp-Name` for a tool call) — some of
# the 2026-07-28 rules from chapter 06, checked here by a real client against a real socket. Only
# those headers and the answers' status and content type are shown; the other status codes (`202`,
# `405` for a GET, `400` with `-32020` for a header mismatch) and the `Origin` check are not
# exercised by this run: chapter 06 shows them in simulation. Notice
# the `tools/list` after the call: the SDK fetched the tool list by itself, to learn the tool's
# output schema. Nobody asked for it in `ask_forecast`; a real client has habits of its own.
#
# Try `mode="legacy"` yourself: you will see the `Mcp-Session-Id` header, the GET stream the SDK
# opens next to its POSTs, and the DELETE that ends the session. The exact order of that GET among
# the other requests depends on timing — which is the next topic.
#
# ### A local HTTP server is reachable by more than your client
#
# A server on `127.0.0.1` can still be reached by every process on the machine and, through DNS
# rebinding, by a web page in the user's browser. The spec's defences, for both eras:
#
# [[rule security.http.origin-validate]]
#
# [[rule http.bind-localhost]]
#
# [[rule security.http.authenticate]]
#
# `mcp-sim serve --transport http` binds to 127.0.0.1 and refuses an `Origin` it was not told to
# allow (`--allow-origin`); it asks for no token, which is fine for a course and not for a server you
# leave running. Chapter 10's
# `dns-rebinding` lab plays the attack against a server that skips the check.

# %%
ask("12-real-stdio-server-prints")

# %% [markdown]
# ## Simulation and reality
#
# The same server code ran in every cell above, yet a real run differs from a simulated one in ways
# that matter:
#
# | | simulation | real wire |
# |---|---|---|
# | time | a **virtual clock**: latencies are chosen, a run takes no real time | the **wall clock**: times are measured, in milliseconds since the recorder started |
# | repeatability | same seed, same trace, byte for byte | process ids, ports, session ids, timings and the interleaving of concurrent messages change every run |
# | failures | injected on purpose (drop, delay, crash) and replayable | whatever happens: a slow start, a crash, a stray `print` on stdout, a port in use — not replayable |
# | processes | none: both ends live in one event loop | real processes to start, wait for, and stop (close stdin → SIGTERM → SIGKILL) |
# | what the trace sees | every message at every layer, plus user, host and model | only what crossed *this* end's pipe or socket (plus the server's stderr lines): not the other side's state, not its reasons, not messages it never sent |
#
# Compare the clocks: the same greeter run twice in the simulator, and the two real runs from above.

# %%
import anyio

from mcp_sim.bridge.notebook import real_times
from mcp_sim.roles.client import Client
from mcp_sim.roles.server_session import serve
from mcp_sim.sim.world import Simulation
from mcp_sim.transports.faults import Faults, faulty_memory_link


def simulated_greeting(seed: int) -> Simulation:
    """The greeter in the simulator, on an in-memory link with 5 ms of (virtual) latency each way."""
    sim = Simulation(seed=seed)

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            to_server, server_end = faulty_memory_link(sim, "greeter", Faults(latency=0.005))
            tg.start_soon(serve, build(), server_end)
            client = Client("explorer", era="legacy")
            await client.connect(to_server, tg)
            await client.call_tool("greet", {"name": "Ada"})
            await client.close()

    sim.run(main)
    return sim


first, second = simulated_greeting(1), simulated_greeting(1)
print("simulated: virtual times", [e.t_ms for e in first.recorder if e.message is not None])
print("simulated: two runs, identical traces:", list(first.recorder) == list(second.recorder))
legacy_times, modern_times = real_times(legacy_run.trace), real_times(modern_run.trace)
print("real: times measured, increasing:", legacy_times == sorted(legacy_times) and legacy_times[-1] > 0)
print("real: the two runs' times coincide:", legacy_times[:6] == modern_times[:6])

# %% [markdown]
# The simulated times are the 5 ms latencies we chose, added up on the virtual clock, and a second run with the same seed
# reproduces them exactly. The real times are whatever the machine took — printing them here would
# make this page different on every run, so we only print facts about them. And a real trace only
# sees one end: [[rule realwire.trace-shows-one-end]]

# %% [markdown]
# ## From the command line
#
# The same bridge is a command:
#
# - `mcp-sim serve greeter_module:build` serves any simulated server over stdio — give this command
#   to Claude Desktop, the MCP Inspector or an SDK client; `--transport http --port 8000` serves
#   Streamable HTTP on 127.0.0.1 instead, `--revision` pins one era, `--trace FILE.jsonl` saves the
#   traffic;
# - `mcp-sim connect -- python server.py` (or `--url http://127.0.0.1:8000/mcp`) drives any real
#   server with the simulated client, prints what it offers and what your `--call`s returned, and
#   saves the trace with `--trace`; `mcp-sim show FILE.jsonl --html page.html` draws it.
#
# From Python, `mcp_sim.bridge.RealServer` and `connect_real` do what `mcp-sim connect` does, for
# scripts and tests.

# %% [markdown]
# ## Checking a server for real: `mcp-sim check`
#
# Every client in this chapter was polite: it sent well-formed requests, one at a time, and waited.
# Real clients and real pipes are not always like that. `mcp-sim check` puts a real server under a
# standard **workload** — the session opened in each era (with a version nobody supports, too), every
# list followed page by page and then with a cursor nobody issued, each tool called with good
# arguments, without its required ones and by a name nobody has, reads, prompts, ping, an unknown
# method, cancellation, concurrent calls — and a seeded **nemesis**: pauses in the middle of a line,
# the same request twice, an id reused while the first is in flight, lines that are not JSON, not
# UTF-8 or not JSON-RPC, a line of a megabyte, the client hanging up mid-call, and (on the command
# line, by default) the process killed and started again. Checkers then read the recorded trace, and
# each broken rule becomes a finding that cites its rulebook id and strength. The command's exit
# status is 1 exactly when a rule of must strength is broken; findings at should or may strength are advice.
#
# From Python, `check_servers` (in `mcp_sim/bridge/notebook.py`) hands servers written in this
# notebook to the same `run_check` the command uses. Our greeter from the top of the chapter is
# written into a module and served by `mcp-sim serve`, as before — but now the checker starts it:
# one process per era plus a second one for the probes that need a fresh process, all stopped before
# the cell ends. A few choices keep this cell short and its output the same on every run: the
# nemesis leaves out the kill and restart, the seed puts its first action after the plain steps,
# each request may take 30 seconds before the checker calls it unanswered
# [[ref check.request-answered]], and a process may take 20 seconds to exit once its stdin is
# closed before it counts as not exiting [[ref stdio.modern.exit-on-eof]]. Those limits are the
# checker's choice (the command line's are 10 and 2 seconds), generous here on purpose: on a busy
# machine even a Python process's start and exit take seconds.

# %%
from mcp_sim.bridge.check import CheckOptions
from mcp_sim.bridge.notebook import check_servers

nemesis = ("delay", "duplicate", "reuse", "malformed", "oversized", "hangup")  # the default, minus restart
options = CheckOptions(nemesis=nemesis, seed=34, deadline=30.0, grace=20.0)
greeter_check = check_servers(simulated={"greeter": build}, options=options)["greeter"]
print(greeter_check.findings_text())

# %% [markdown]
# No finding in either era: the simulator's `Server` keeps every rule the checkers know, for the
# learner's own tools too. Step through the start of the 2026-07-28 run — up to the nemesis's first
# action; after that the order of frames depends on timing. Look for the request offering a version
# nobody supports, refused with `-32022` [[ref versioning.unsupported-version-error]]; the cursor
# nobody issued, refused with `-32602` [[ref pagination.invalid-cursor-32602]]; and `greet` called
# without its `name`, answered with a result flagged `isError` after the server validated it
# [[ref tools.servers-validate-inputs]].

# %%
play(steady(greeter_check.before_nemesis("modern")))

# %% [markdown]
# On the command line the same check is `mcp-sim check -- python -m mcp_sim.cli serve
# greeter_module:build`, with `--html page.html` for a page that needs no kernel and no network: the
# findings by rule and era, each linked to its step in this same trace player and to its row in the
# sequence diagram. `--json` writes the report, `--trace` the recorded run.
#
# Now the server the SDK wrote, `notes` from above, under the same workload and nemesis. One of the
# nemesis's lines is not JSON at all:

# %%
ask("12-sdk-server-unreadable-line")

# %%
sdk_check = check_servers(sdk={"sdk_notes": notes}, options=options)["sdk_notes"]
print(sdk_check.findings_text())

# %% [markdown]
# No rule of must strength is broken, in either era: the official SDK's server passes. The findings at
# should strength are real,
# and each says what the SDK does today:
#
# - `check.malformed-frame-answered`: the lines that are not JSON, not UTF-8 or not a JSON-RPC
#   request got no error; the SDK logs them on stderr and goes on serving
#   [[ref check.malformed-frame-answered]].
# - `pagination.invalid-cursor-32602`: a cursor the SDK never issued was served as if it were the
#   first page [[ref pagination.invalid-cursor-32602]].
# - `tools.unknown-tool-protocol-error`: a call of a tool nobody has got a result with `isError`, not
#   a JSON-RPC error [[ref tools.unknown-tool-protocol-error]].
# - `resources.not-found-legacy`: in 2025-11-25 a missing resource got `-32602`, the code
#   2026-07-28 requires [[ref resources.not-found-modern]], where the legacy era recommends `-32002`
#   [[ref resources.not-found-legacy]].
# - `check.prompts-standard-errors`: an unknown prompt got the code `0` in one era and `-32603` in the
#   other, not `-32602` [[ref check.prompts-standard-errors]].
#
# A should leaves room for a reason, and a client must cope either way; that is why they do not fail
# the check. But where two servers differ on a should, a client written against one is surprised by
# the other — which is what the table is for.

# %% [markdown]
# ## Recap
#
# - `mcp-sim serve` turns a simulator `Server` into a real MCP server: stdout carries protocol only
#   [[ref stdio.stdout-only-messages]], logs go to stderr [[ref stdio.stderr-for-logs]],
#   and the process exits when its stdin closes.
# - The official Python SDK's client talked to it over real stdio in both eras: `initialize` in
#   legacy mode, `server/discover` and per-request `_meta` in 2026-07-28.
# - The simulator's `Client` drove a server written with the SDK, in both eras, and shut its
#   process down the way the spec recommends (close stdin, wait, then force).
# - The 2026-07-28 request headers hold on a real loopback HTTP socket (`Mcp-Method`, `Mcp-Name`, one
#   POST per request); a local HTTP server validates `Origin`, binds to 127.0.0.1 and authenticates.
# - The bridge records real traffic in a recorder on the wall clock, so the table, the diagram and
#   the player work unchanged; to print it reproducibly, mask what the real world changes (times,
#   process ids, ports, session ids, paths).
# - A real trace shows only what crossed one end's wire; a simulation shows everything and replays.
# - `mcp-sim check` drives any real server with a workload under a seeded nemesis, in both eras, and
#   reports each broken rule by id and strength; the greeter broke none, the SDK's server broke no
#   must and a handful of shoulds (silence on unreadable lines, a result or a code other than the
#   recommended error).
#
# **Exercises:** `ex12_capstone`, the course's capstone — your own server, driven by the official SDK
# over real stdio in both eras, and your Host policy against the security labs' attacks. For practice with
# the stdio rules this chapter relied on, see `ex06_stdio_framer` and `ex06_diagnose_stdout`.
#
# [[rules-table]]
