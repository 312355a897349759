# %% [markdown]
# # 07 · Change and caching
#
# **What you will learn**
#
# - why a client's copy of a server's lists goes stale, and the three `list_changed` notifications
#   (tools, prompts, resources) that say so — without saying *what* changed;
# - what a Host does when it hears one: forget that server's tools at once and list them again;
# - how a client watches one resource: legacy `resources/subscribe` / `resources/unsubscribe` and
#   `notifications/resources/updated`, against the 2026-07-28 `subscriptions/listen` stream with its
#   acknowledgement and `subscriptionId`;
# - the two caching hints of 2026-07-28, `ttlMs` and `cacheScope`, and what they promise;
# - why a cache shared by several callers must be keyed by the caller's authorization context —
#   watched on the simulation's clock, hit by hit.

# %%
import json

from mcp_sim.course.predict import ask
from mcp_sim.protocol.comparison import ComparisonTable
from mcp_sim.protocol.revisions import comparison_table
from mcp_sim.scenarios.change import (
    CALLERS,
    TTL_MS,
    gateway_timeline,
    gateway_trace,
    host_relists,
    listen_in_detail,
    watch_a_note,
)
from mcp_sim.trace import TraceTable
from mcp_sim.trace.reading import JsonView

LEGACY, MODERN = "2025-11-25", "2026-07-28"


def sent(sim, method, kind=None):
    """The messages of one method in a run's trace (optionally of one kind: request, response …)."""
    return [e.message for e in sim.recorder if e.method == method and (kind is None or e.kind == kind)]


def show(message):
    display(JsonView(message))

# %% [markdown]
# ## Lists go stale
#
# A client lists a server's tools, prompts and resources so that its Host can offer them to the model
# and the user. But a server is a running program: a new version goes live, a plugin loads, a file
# appears. From that moment the client's copy is **stale**, and a model working from a stale list
# calls tools that are gone or misses new ones.
#
# MCP gives a client two ways to keep up, and this chapter is about both:
#
# 1. **being told** — the server sends a notification when a list, or one resource, changes;
# 2. **being told how long a copy stays good** — in 2026-07-28 every list result carries `ttlMs` (how
#    long it is fresh) and `cacheScope` (who else may be served the same copy).
#
# How the client gets told changed a lot between the eras. Here is every message involved, drawn from
# the simulator's registry of revisions:

# %%
CHANGE = {"resources/subscribe", "resources/unsubscribe", "subscriptions/listen",
          "notifications/tools/list_changed", "notifications/prompts/list_changed",
          "notifications/resources/list_changed", "notifications/resources/updated",
          "notifications/subscriptions/acknowledged"}
requests, notifications = comparison_table("requests"), comparison_table("notifications")
ComparisonTable("Change messages by revision", requests.columns,
                tuple(row for row in (*requests.rows, *notifications.rows) if row[0] in CHANGE))

# %% [markdown]
# The three `list_changed` notifications and `resources/updated` exist in every revision. What
# differs is how a client **asks** for them: legacy revisions use a request per resource
# (`resources/subscribe`), 2026-07-28 replaces it with one long-lived request that names everything
# the client wants to hear about (`subscriptions/listen`).

# %% [markdown]
# ## Legacy: the session hears about change
#
# In 2025-11-25 and earlier a connection is a **session** opened by `initialize`. A server that
# declared `listChanged` for tools, prompts or resources should send the matching `list_changed`
# notification to the session when that list changes — the client asked for nothing; declaring the
# capability was enough:
#
# [[rule change.legacy.list-changed-sent]]
#
# Over legacy Streamable HTTP such a notification answers no request, so it can only travel on an SSE
# stream the client opened with GET, which is optional on both sides [[ref http.legacy.get-stream-may]].
# Changes to one resource's **contents** are different: the client `resources/subscribe`s to its URI
# (the server must have declared `resources.subscribe`), and then hears `notifications/resources/updated`
# until it sends `resources/unsubscribe` [[ref change.legacy.resources-subscribe]]. The `uri` of an update
# may name a sub-resource of the one subscribed to [[ref change.updated-uri-may-be-sub-resource]].
#
# `watch_a_note` (in `mcp_sim/scenarios/change.py`) subscribes to `todo.md` on the notes server — and,
# by mistake, to a note that does not exist — then writes the note, deploys a new tool, unsubscribes
# and writes the note once more:

# %%
legacy_watch = watch_a_note(LEGACY)
TraceTable(legacy_watch.recorder)

# %% [markdown]
# Row by row: the session's capabilities were settled once, in `initialize`; subscribing to a URI the
# server does not have is refused with `-32002` (resource not found) — the simulator's choice, since
# 2025-11-25 defines that code only for reads [[ref change.legacy.subscribe-unknown-uri]]; the write produced
# `resources/updated`; the new tool produced `tools/list_changed` although nobody asked for it; after
# `resources/unsubscribe` the second write was silent. What the server declared in the handshake:

# %%
display(JsonView(sent(legacy_watch, "initialize", "response")[0]["result"]["capabilities"]))

# %% [markdown]
# And the two notifications, exactly as they travelled:

# %%
show(sent(legacy_watch, "notifications/resources/updated")[0])
show(sent(legacy_watch, "notifications/tools/list_changed")[0])

# %%
ask("07-server-sends-notifications-tools")

# %% [markdown]
# ## What a Host does on `list_changed`
#
# The notification reaches the Client, which passes it up to its Host. The course's Host
# (`mcp_sim/roles/host.py`, `_on_notification`) does two things, in this order:
#
# 1. it **forgets** that server's tools at once, so the model cannot be offered a stale definition
#    while the new list is on its way;
# 2. it **lists the server's tools again** — every page — and, if the Host reviews tool definitions,
#    the new ones are reviewed like the first ones were (a definition that *changed* is reviewed
#    again: chapter 10 shows why that matters).
#
# That order is this simulator's choice [[ref change.host-forgets-and-relists]]. The Client itself drops
# its cached copy of that list (`mcp_sim/roles/cache.py`, `on_notification`): `tools/list_changed`
# invalidates `tools/list`, `resources/updated` invalidates the cached read of that one URI, and
# `resources/list_changed` invalidates both `resources/list` and `resources/templates/list` — covering
# the templates is again the simulator's choice, the spec has no notification for them
# [[ref change.resources-list-changed-covers-templates]].
#
# `host_relists` plays it on the simulation's clock. The Host lists the notes server's tools at 0 s;
# at 5 s the server deploys `count_notes`; the Host looks at the list again before model turns at 6,
# 30 and 61 s. The table is written by the run: each row says what the Client's cache did and
# whether a request reached the server.

# %%
host_relists(LEGACY)

# %% [markdown]
# In 2025-11-25 the notification arrived at 5 s and the Host re-listed at once (with a review of the
# new definition). The cache column says `no ttlMs` on every row: a legacy result carries no caching
# hint, and **this simulator's** legacy client then keeps nothing, so every look costs a round trip.
# That is the simulator's conservative choice, not a property of the era:
#
# [[rule caching.sim-legacy-client-refetches]]
#
# The caching page itself says that without `ttlMs` a client should assume 0 *and rely on its own
# caching heuristics or notifications* [[ref caching.ttl-absent]]: a legacy client whose server declared
# `listChanged` may well keep its list until `list_changed` arrives.

# %%
TraceTable(host_relists(LEGACY).sim.recorder)

# %% [markdown]
# ## Modern: nothing arrives unless you listen
#
# 2026-07-28 has no session, so there is nobody to send a notification to "by default". A client that
# wants to hear about change sends **one request that does not end**: `subscriptions/listen`, whose
# `notifications` field (a `SubscriptionFilter`) opts in to each kind — `toolsListChanged`,
# `promptsListChanged`, `resourcesListChanged`, and `resourceSubscriptions`, a list of URIs that
# replaces `resources/subscribe`. Before reading on, predict:

# %%
ask("07-client-sends-subscriptions-listen")

# %% [markdown]
# What the stream promises:
#
# - the server's **first** message for that stream is `notifications/subscriptions/acknowledged`,
#   which repeats the part of the filter it will honour [[ref subscriptions.ack-first]]; on stdio that
#   order holds per stream, so other streams' messages may come before it [[ref subscriptions.ack-order-per-stream]];
# - every notification on the stream carries `_meta["io.modelcontextprotocol/subscriptionId"]`, the
#   `id` of the listen request, verbatim — that is how a client with several streams
#   [[ref subscriptions.several-streams]] tells them apart [[ref subscriptions.subscription-id]]
#   (request-scoped notifications such as progress and log messages never go on it);
# - the server sends nothing the filter did not ask for [[ref subscriptions.only-what-was-asked]];
# - the client ends the stream by cancelling the request [[ref subscriptions.client-ends-by-cancelling]];
#   after a reconnect it listens again [[ref subscriptions.listen-again-after-reconnect]].
#
# How a *server* ends a stream is where the spec disagrees with itself. The subscriptions page asks
# for a successful `subscriptions/listen` result [[ref subscriptions.server-graceful-result]]; the
# cancellation page (and the schema's `CancelledNotification`, for stdio) for `notifications/cancelled`
# naming the listen id [[ref subscriptions.server-cancelled-for-listen]]. This simulator sends the result
# only [[ref subscriptions.sim-server-end]]; a stream that closes with neither was dropped, and the
# client may reconnect [[ref subscriptions.reconnect-on-drop]].
#
# The same story as before, in 2026-07-28:

# %%
modern_watch = watch_a_note(MODERN)
TraceTable(modern_watch.recorder)

# %%
listen_request = sent(modern_watch, "subscriptions/listen", "request")[0]
show(listen_request)
show(sent(modern_watch, "notifications/subscriptions/acknowledged")[0])
show(sent(modern_watch, "notifications/resources/updated")[0])
show(sent(modern_watch, "notifications/cancelled")[0])

# %% [markdown]
# The listen request had id `2`; the acknowledgement and the `resources/updated` notification both
# carry `subscriptionId: 2`; the cancellation names request `2`; and the write after it went unheard.
# No `resources/subscribe` anywhere. Once the acknowledgement is in, the course's client reads the
# note once more, so that a change made before the stream took hold is not missed
# [[ref change.read-again-after-subscribing]].

# %% [markdown]
# ### Read the acknowledgement
#
# A server may honour **less** than the client asked for — it only sends kinds it declared in its
# capabilities, and the client should check [[ref subscriptions.client-checks-ack]]. `listen_in_detail` asks a `board` server, which declares `listChanged` but not
# `resources.subscribe`, for tool and prompt changes and for one resource; then opens a second stream
# for tools only, adds a tool, closes the second stream, adds a prompt, and finally shuts the
# subscriptions down from the server side.

# %%
detail = listen_in_detail()
first = sent(detail, "subscriptions/listen", "request")[0]
print("asked:       ", json.dumps(first["params"]["notifications"]))
print("acknowledged:", json.dumps(sent(detail, "notifications/subscriptions/acknowledged")[0]["params"]))
for method in ("notifications/tools/list_changed", "notifications/prompts/list_changed"):
    ids = [m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] for m in sent(detail, method)]
    print(f"{method} went to streams {ids}")
show(sent(detail, "subscriptions/listen", "response")[0])

# %% [markdown]
# `resourceSubscriptions` is missing from the acknowledgement: this client will never hear about
# `board://cards`, and only knows it because it read the acknowledgement instead of assuming. The new
# tool was announced once per stream, each copy tagged with its own stream's id; the new prompt only
# on the stream still open. The last message is the graceful end: a result, tagged with the id.

# %%
ask("07-acknowledgement-leaves-out-resourcesubscriptions")

# %% [markdown]
# ## Side by side
#
# | | legacy (≤ 2025-11-25) | modern (2026-07-28) |
# |---|---|---|
# | list changes | sent to the session, if the server declared `listChanged` (over HTTP: on a GET stream) | only on a listen stream that asked (`toolsListChanged` …) |
# | one resource's contents | `resources/subscribe` per URI; `resources/unsubscribe` | `resourceSubscriptions` in the listen filter |
# | how the client knows what it got | the result of `resources/subscribe` (or `-32002`) | the acknowledgement's `notifications` |
# | which notification is whose | the session's | `subscriptionId` = the listen request's id |
# | stopping | `resources/unsubscribe`, or closing the session | cancelling the listen request (stdio) or closing its stream (HTTP) |
# | caching hints on lists | none | `ttlMs` and `cacheScope` |
#
# Step through the course's ready-made `subscriptions` scenario in both eras. It also adds a prompt
# and a tool at once, so you can watch all three `list_changed` kinds and the Host's re-list.

# %%
from functools import partial

from mcp_sim.scenarios import run_scenario
from mcp_sim.widgets.player import play, side_by_side

rerun = partial(run_scenario, "subscriptions")
side_by_side(play(rerun(revision=LEGACY, seed=1), runner=rerun, options={"revision": LEGACY, "seed": 1}),
             play(rerun(revision=MODERN, seed=1), runner=rerun, options={"revision": MODERN, "seed": 1}))

# %% [markdown]
# ## Caching: `ttlMs` and `cacheScope`
#
# In 2026-07-28 the results of `tools/list`, `prompts/list`, `resources/list`,
# `resources/templates/list`, `resources/read` and `server/discover` carry two fields
# [[ref caching.hints-required]]:
#
# - **`ttlMs`** — how many milliseconds after receiving it the client may treat the result as fresh:
#   fresh while *now < received + ttlMs* [[ref caching.ttl-fresh]], and fetched again at the next need
#   once stale [[ref caching.refetch-when-stale]]. `0` means stale at once [[ref caching.ttl-zero]]; a
#   missing value (an older server) or a negative one counts as `0` [[ref caching.ttl-absent]]
#   [[ref caching.ttl-negative]]. It is a freshness hint, not a guarantee: the data may change before it
#   runs out [[ref caching.ttl-is-a-hint]]. Nor is it a polling timer [[ref caching.ttl-is-not-a-poll-interval]];
#   a client that polls anyway adds jitter and backs off [[ref caching.pollers-jitter-and-back-off]].
#   A client may fetch early when it has reason to (a call answered *method not found*)
#   [[ref caching.refetch-early-on-reason]] and may serve a stale copy when fetching fails
#   [[ref caching.stale-on-error]].
# - **`cacheScope`** — `"public"` when the answer is the same for every caller, so any cache (even a
#   shared gateway) may hand it to anyone [[ref caching.public-shared]] — even across tokens of an
#   authenticated endpoint, which the server must keep in mind [[ref caching.public-crosses-tokens]];
#   `"private"` when it depends on who asks, so it may only be reused within the same authorization
#   context [[ref caching.private-same-context]]: another token means another cache
#   [[ref caching.private-not-shared]]. Neither is access control [[ref caching.scope-is-not-access-control]].
#
# The key of a cached result is the method plus every param that changes the answer — the `cursor` of a
# page, the `uri` of a read, and possibly the capabilities a request declares in `_meta`
# [[ref caching.key-is-method-and-params]]. Each page is cached on its own [[ref caching.page-refetch-by-cursor]],
# all pages of one list share one scope [[ref caching.one-scope-for-all-pages]], and a cursor that stops
# working means every cached page of that list goes [[ref caching.invalid-cursor-discards-pages]]. A
# relevant `list_changed` or `updated` notification drops the entry early [[ref change.notification-invalidates-cache]].
# Results of a Multi Round-Trip retry are never cached [[ref caching.no-caching-mrtr-retries]].
#
# The finance server answers depend on the caller's tenant; the weather server's do not. Their
# `tools/list` results, as sent in the run below, without the tools:

# %%
modern_gateway = gateway_timeline(MODERN)
for name in ("finance", "weather"):
    result = next(e.message["result"] for e in modern_gateway.sim.recorder
                  if e.kind == "response" and e.method == "tools/list" and e.link == name)
    print(f"{name:8}", json.dumps({k: v for k, v in result.items() if k not in ("tools", "_meta")}))

# %% [markdown]
# Back to the Host of the previous section, now in 2026-07-28. Before running it, predict:

# %%
ask("07-2026-07-28-host")

# %%
not_listening = host_relists(MODERN, listen=False)
not_listening

# %%
listening = host_relists(MODERN)
listening

# %% [markdown]
# The same two runs drawn from the cache's own log, one character per virtual second (`S` stored,
# `H` hit, `R` dropped and fetched again, `━` fresh, `╌` past its `ttlMs`):

# %%
print(not_listening.cache.lanes())
print()
print(listening.cache.lanes())

# %% [markdown]
# Without listening, the model worked from a stale list for 56 seconds. With a listen stream the
# notification dropped the cached copy at 5 s, the Host re-listed, and the later looks cost nothing
# until the new copy's `ttlMs` runs out. The two mechanisms work together: the notification makes a
# change visible at once; `ttlMs` saves the round trips in between.

# %% [markdown]
# ## One cache, many callers
#
# A Host used by one person keeps one cache for all its servers (the server's name is part of every
# key). A **gateway** — one MCP front door for a
# whole organisation, or for many organisations — serves many users from one cache, and there
# `cacheScope` decides who may see whose answer. `gateway_timeline` runs three callers through one
# shared cache, each with a Client of their own carrying their own token:

# %%
for name, caller in CALLERS.items():
    print(f"{caller.label:20} subject={caller.auth.subject} tenant={caller.auth.tenant} scopes={caller.auth.scopes}")
print("ttlMs by server:", TTL_MS)

# %% [markdown]
# The finance server shows `transfer` only to tokens with `finance:write`, and its answers are
# private; the weather server's are public. Before reading the timeline, predict two rows:

# %%
ask("07-alice-tenant-acme-listed")

# %%
ask("07-12-s-alice-asks")

# %%
modern_gateway

# %% [markdown]
# Every row comes from the cache's own log on the virtual clock (`WatchedCache`, the Client's
# `ListCache` writing down each decision):
#
# - **0 s** — two misses; finance's list is filed under alice's context, weather's under *everyone*;
# - **5 s** — bob misses finance (alice's entry is private) but hits weather (public);
# - **10 s** — alice hits her own entry; **12 s** — the same alice with a stronger token misses and
#   gets a list with `transfer`, filed separately;
# - **25 s** and **31 s** — entries past their `ttlMs` are *expired*, dropped, and fetched again;
# - **40 s** — the finance server deploys a tool; the gateway's one listen stream hears
#   `tools/list_changed`, and the Client drops finance's lists **for every caller** — the server's
#   data changed, whoever asked;
# - **41 s** — bob's next look misses and sees the new tool.
#
# The same log as a diagram: one lane per cache entry — which server, and whose entry it is — against
# the virtual clock. Watch the stale stretches (`╌`): an entry past its `ttlMs` is still held, but the
# next lookup drops it instead of serving it.

# %%
modern_gateway.cache.lanes()

# %% [markdown]
# The cache's key, in the Client's cache module, is *(server, authorization context, method,
# cursor or URI)*; a public entry is filed with no context. What makes up the context is the
# simulator's choice [[ref caching.sim-context-key]]. These are the entries the run left, and
# the raw log behind the first two rows:

# %%
for key in modern_gateway.cache.keys():
    print(key.server, "|", key.context or "everyone", "|", key.method)
for event in modern_gateway.cache.events[:4]:
    print(event)

# %% [markdown]
# The same script in 2025-11-25: no `ttlMs`, and this simulator's legacy client stores nothing, so every
# look asks the server [[ref caching.sim-legacy-client-refetches]]; and `tools/list_changed` reaches all
# three finance sessions without anyone listening. The request counts below compare **this simulator's**
# two clients, not the two eras: a legacy client that kept its lists until `list_changed` would send
# about as few requests as the modern one.

# %%
legacy_gateway = gateway_timeline(LEGACY)
print(f"requests that reached a server (this simulator's clients): legacy {legacy_gateway.requests}, "
      f"modern {modern_gateway.requests}")
legacy_gateway

# %% [markdown]
# Play the gateway run. The `app` rows are the gateway's cache decisions; a hit is an `app` row with
# no MCP message after it. (Fork it to 2025-11-25 to see every look turn into a round trip.)

# %%
play(modern_gateway.sim.recorder, runner=gateway_trace, options={"revision": MODERN, "seed": 0})

# %% [markdown]
# ## Recap
#
# - `notifications/tools|prompts|resources/list_changed` say *that* a list changed, never how; the
#   client lists again, every page. `notifications/resources/updated` names one URI to read again.
# - A Host forgets a server's tools the moment it hears `tools/list_changed`, then re-lists and
#   reviews the new definitions; the Client drops the cached list.
# - Legacy: a server that declared `listChanged` should send `list_changed` to the session (over HTTP,
#   only while a GET stream is open); one resource is watched with `resources/subscribe` …
#   `resources/unsubscribe`. How long a legacy client keeps a list is its own choice; this simulator's
#   keeps none.
# - 2026-07-28: nothing arrives without `subscriptions/listen`. The acknowledgement comes first and
#   says what will be honoured; every notification carries `subscriptionId` = the listen request's id;
#   cancelling the request ends the stream; a server's own end is a `SubscriptionsListenResult` on one
#   page and `notifications/cancelled` on another (the spec is inconsistent; this simulator sends the result).
# - `ttlMs`: fresh while now < received + ttlMs; absent or negative = 0. `cacheScope`: `public` may be
#   shared with anyone, `private` only within one authorization context — the spec's example: another
#   access token, another cache; this simulator reads the context from the token's subject, tenant,
#   scopes, client and audience.
# - A notification drops cached entries for every caller; `ttlMs` saves round trips between changes.
#
# [[rules-table]]
#
# **Exercises:** `ex07_list_changed` (a client's handling of `list_changed`), `ex07_cache` (a cache
# that honours `ttlMs` and `cacheScope`, keyed on the caller) and `ex07_next_message` (the next
# message of a `subscriptions/listen` flow, played as client or server).
