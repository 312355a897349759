# %% [markdown]
# # 11 · Authorization
#
# **What you will learn**
#
# - how an MCP client gets from a `401 Unauthorized` to a working `tools/call`: the challenge, the
#   Protected Resource Metadata, the authorization server's metadata, registration, the user's
#   consent in the browser, the code, the token — each step as the simulator ran it;
# - **who holds which token**: the user, the Host and its Client, the authorization server, the MCP
#   Server and the API behind it — and who never sees which;
# - why PKCE (`S256`, never `plain`) and the `resource` parameter are there, and why a Server checks
#   the **audience** of every token;
# - why a Server never forwards the token it received to another API (*token passthrough*), and what
#   it does instead;
# - what each failure looks like on the wire: a token for another server, a refused PKCE request, an
#   unregistered redirect, an expired token, a missing scope, a user who says no;
# - the confused deputy: what goes wrong when an MCP proxy uses one static client id at a third party;
# - what changes between 2025-11-25 and 2026-07-28 — for authorization, very little.

# %% [markdown]
# ## The cast
#
# Over stdio a Server runs as the user's own process and gets its credentials from its environment.
# Over HTTP it is a service on the network, and MCP uses **OAuth 2.1** to decide who may call it. The
# deployment in `mcp_sim/scenarios/authorization_story.py` has five parties:
#
# | party | in the trace | what it holds |
# |---|---|---|
# | Ada, the user | `browser` | her login at the authorization server; she answers the consent screen |
# | the Host and its Client | `client/notes` | an access token **for the notes server** and a refresh token |
# | the authorization server (AS) | `authorization server (login.example)` | the table of every token it issued |
# | the notes MCP Server | `server/notes` | nothing of Ada's but the token it is shown; for the calendar, a token of its own |
# | the calendar API (upstream) | `calendar API (calendar.example)` | nothing: it checks the tokens it is shown |
#
# The Server does not issue tokens; it is a **resource server** that only checks them. The AS does
# not run any tools; it only issues tokens. Keeping those two jobs apart is the whole design.
#
# The first story: the Host calls `read_notes` with no token at all.

# %%
import json
from urllib.parse import parse_qsl, urlsplit

from mcp_sim.scenarios.authorization_story import STORIES, run_authorization_story
from mcp_sim.trace import SequenceDiagram

legacy = run_authorization_story("first-call", "2025-11-25", seed=1)
modern = run_authorization_story("first-call", "2026-07-28", seed=1)
print("tool result:", modern.results)
SequenceDiagram(modern.recorder, title="From the first 401 to a working tools/call (2026-07-28)")

# %% [markdown]
# Every row between the two `server/discover` requests is plain HTTP — OAuth is not JSON-RPC. The
# diagram draws those exchanges as arrows marked `⇄ OAuth HTTP`. Here they are as a list, with the
# headers that matter (`http_exchanges()` reads them back from the trace):

# %%
def show(run):
    """One line per HTTP exchange: method, URL, status, key headers, and the MCP message it carried."""
    for x in run.http_exchanges():
        carried = f"  [{x.carries}]" if x.carries else ""
        heads = "  ".join(f"{k}: {v}" for k, v in x.headers.items())
        print(f"{x.method:6} {x.url:66} {x.status}{carried}  {heads}")


show(modern)

# %% [markdown]
# ## Step by step
#
# A small helper finds the trace event that recorded a given part of the flow, so each step below
# shows what the simulator actually sent.

# %%
def oauth_events(run):
    return [e for e in run.recorder.events if "oauth" in e.marks]


def body(event):
    """The recorded body of an OAuth exchange (secrets already masked by the trace)."""
    return event.framing.get("body")


steps = oauth_events(modern)
for e in steps:
    print(f"#{e.seq:<3} {e.sender:38} → {e.receiver:38} {e.text[:60]}")

# %% [markdown]
# ### 1 · The challenge
#
# The Server refuses the request before reading it: `401` with a `WWW-Authenticate` header. The header
# names the URL of the Server's **Protected Resource Metadata** and the scope to ask for first.

# %%
refusal = next(e for e in modern.recorder.events if e.text == "HTTP 401 Unauthorized")
print(refusal.framing["http"]["response"]["headers"]["WWW-Authenticate"])

# %%
from mcp_sim.course.predict import ask

ask("11-401-named-resource-metadata")

# %% [markdown]
# ### 2 · Protected Resource Metadata
#
# The document says which resource this is and which authorization server issues its tokens. The
# client checks that `resource` is the Server it called: a document about some other resource is
# refused.

# %%
print(json.dumps(json.loads(body(steps[1])), indent=1))

# %% [markdown]
# ### 3 · The authorization server's metadata
#
# Next, the AS's own document (RFC 8414; the client would try OpenID Connect discovery if this one
# were missing). The client reads the endpoints from it, and one field decides whether it goes on at
# all: `code_challenge_methods_supported` must include `S256`, or the client cannot know PKCE is
# enforced and stops (the `no-s256` story).

# %%
as_meta = json.loads(body(steps[3]))
for key in ("issuer", "authorization_endpoint", "token_endpoint", "registration_endpoint",
            "code_challenge_methods_supported", "authorization_response_iss_parameter_supported"):
    print(f"{key:48} {as_meta.get(key)}")

# %% [markdown]
# ### 4 · Registration: which client is this?
#
# The AS must know a client before it sends a user's browser back to it. There are three ways, tried
# in this order: an id **registered ahead of time** for this AS; a **Client ID Metadata Document**,
# where the `client_id` *is* an https URL serving the client's name and redirect URIs (2025-11-25 on;
# the AS fetches it); or **Dynamic Client Registration** (`POST /register`, RFC 7591), which
# 2026-07-28 deprecates in favour of metadata documents. This Host has neither an id nor a document,
# so it registers:

# %%
print("sent:    ", body(steps[4]))
print("answered:", body(steps[5]))

# %% [markdown]
# ### 5 · The user's browser and the consent screen
#
# Now the Host opens the authorization endpoint in Ada's **browser** — a different participant: Ada
# signs in there and says yes or no. The request carries PKCE (`code_challenge`, method `S256`), a
# random `state`, the scope, and `resource`: the Server's canonical URI, which becomes the token's
# **audience**.

# %%
authorize = steps[6].framing["http"]["request"]["path"]
for name, value in parse_qsl(urlsplit(authorize).query):
    print(f"{name:22} {value}")

# %% [markdown]
# The AS redirects the browser to the Host's loopback address with a one-time `code`, the same
# `state` (the Host checks it: a response to a request it never made is refused) and `iss`, the AS's
# name (against mix-ups between authorization servers).

# %%
location = steps[7].framing["http"]["response"]["headers"]["Location"]
print(urlsplit(location)._replace(query="").geturl())
for name, value in parse_qsl(urlsplit(location).query):
    print(f"  {name:6} {value}")

# %% [markdown]
# ### 6 · The code becomes a token
#
# The Client itself (not the browser) posts the code to the token endpoint, with the **verifier**
# whose hash was the challenge, and the same `resource`. Whoever intercepted the code in the browser
# does not have the verifier. The answer holds the access token and a refresh token; the trace masks
# both (`at_REDACTED`, `rt_REDACTED`), because traces get shown and shared.

# %%
print("sent:    ", body(steps[8]))
print("answered:", body(steps[9]))

# %%
from mcp_sim.security.oauth import s256

form = dict(parse_qsl(body(steps[8])))  # the verifier is no secret any more: the code is spent
query = dict(parse_qsl(urlsplit(authorize).query))
print("S256(verifier) == challenge:", s256(form["code_verifier"]) == query["code_challenge"])

# %% [markdown]
# ### 7 · The retry
#
# The Host makes a new connection with `Authorization: Bearer …`; the Server checks the token (known,
# unexpired, issued **for it**, with the scope) and the call goes through. Who holds what now? The
# authorization server's table says:

# %%
def who_holds(run):
    for token in run.world.table.issued.values():
        print(f"audience={token.audience:28} client={token.client_id:22} user={token.subject} "
              f"scopes={sorted(token.scopes)}")


who_holds(modern)

# %% [markdown]
# One token, for one audience. Ada never saw it (her browser only carried the code); the Server saw it
# but cannot use it anywhere else; the Host holds it and the refresh token, which only ever goes to
# the AS.

# %% [markdown]
# ## Two eras, one flow
#
# The OAuth exchanges are identical in 2025-11-25 and 2026-07-28. Only the MCP around them differs:
# the legacy client opens with `initialize` (refused, then retried with the token), sends
# `notifications/initialized`, and ends its session with `DELETE`; the modern one opens with
# `server/discover` and has no session.

# %%
show(legacy)
same = [x for x in legacy.http_exchanges() if x.carries is None and x.method != "DELETE"] == \
       [x for x in modern.http_exchanges() if x.carries is None]
print("\nOAuth exchanges identical in both eras:", same)

# %% [markdown]
# Step through the flow yourself. The player's **http** view shows each exchange with its headers
# and (masked) body; the filters can narrow the trace to one link.

# %%
from functools import partial

from mcp_sim.scenarios.authorization_story import story_trace
from mcp_sim.widgets.player import play

play(modern.recorder, runner=partial(story_trace, "first-call"), options={"revision": "2026-07-28", "seed": 1})

# %% [markdown]
# ## When it goes wrong
#
# Each story below changes one thing. Every line is a real run; the last HTTP exchange that mattered
# and the outcome are read from it.

# %%
runs = {name: run_authorization_story(name, "2026-07-28", seed=1) for name in STORIES}
for name in ("wrong-audience", "pkce-refused", "no-s256", "bad-redirect", "expired-refresh", "step-up",
             "user-refuses"):
    run = runs[name]
    outcome = f"stopped: {run.failure.rule}" if run.failure else f"results: {run.results}"
    print(f"{name:16} {STORIES[name].description}\n{'':16} → {outcome}")

# %% [markdown]
# ### A token for another server
#
# The Client presents a genuine token from the same AS — issued for `https://other.example/mcp`. The
# notes server refuses it with `401 invalid_token` (its log says why), and the Client starts the flow
# for *this* server.

# %%
first = runs["wrong-audience"].http_exchanges()[0]
print(first.status, first.headers["WWW-Authenticate"])
print("server log:", runs["wrong-audience"].notes["rejections"])

# %% [markdown]
# ### PKCE refused
#
# A careless client sends the browser to `/authorize` with no challenge, then with `plain` (where the
# "challenge" is the verifier itself, so anyone who sees the request could redeem the code). The
# client and the redirect URI are known, so the AS sends the browser back — with an error and no code.

# %%
for back in runs["pkce-refused"].notes["refused"]:
    print(back["error"], "—", back["error_description"], "| code in the answer:", "code" in back)

# %% [markdown]
# ### An unregistered redirect URI
#
# Here the Host's pre-registered client lists another redirect URI. The AS matches redirect URIs
# exactly, and it must never redirect to an address it cannot vouch for — that would hand the code to
# whoever owns it. So it answers with an error page (`400`), not a redirect:

# %%
print(runs["bad-redirect"].http_exchanges()[-1][:3])
print(runs["bad-redirect"].failure.reason)

# %% [markdown]
# ### Expired token, missing scope, refusal
#
# - **Expired** (tokens live one second in this story): the Server answers `401 invalid_token`; the
#   Client uses its refresh token at the token endpoint — no browser, no user — and the refresh token
#   is rotated.
# - **Missing scope**: the first token has `notes:read`; `write_note` needs `notes:write`. The Server
#   answers `403 insufficient_scope` naming the scopes; the Client asks Ada again for the wider set
#   (*step-up*), instead of asking for everything up front.
# - **Refusal**: Ada says no; the browser comes back with `error=access_denied` and there is no token.

# %%
for name in ("expired-refresh", "step-up"):
    for x in runs[name].http_exchanges():
        if x.status in (401, 403) and x.carries == "tools/call":
            print(f"{name:16} {x.status} {x.headers['WWW-Authenticate']}")
print("refresh token rotated:", runs["expired-refresh"].notes["refresh_rotated"])
print("scopes before/after step-up:", runs["step-up"].notes["scopes_before"], runs["step-up"].notes["scopes_after"])
print("user-refuses:", runs["user-refuses"].failure.reason)

# %%
ask("11-access-token-expired-hour")

# %% [markdown]
# ## Audience, and why a token is never passed on
#
# The notes server's `agenda` tool needs Ada's calendar, which lives behind another API. The easy
# mistake is to forward the token the Server received. That token's audience is the notes server: a
# careful API refuses it — and an API that accepted it would have no idea which client was really
# calling, which is exactly what the spec's *token passthrough* rule forbids.

# %%
for name in ("token-passthrough", "own-upstream-token"):
    rows = runs[name].http_exchanges()
    start = next(i for i, x in enumerate(rows) if "calendar" in x.url)
    print(f"--- {name}: the tool answered {runs[name].results[1][:70]!r}")
    for x in rows[start:]:
        if x.carries is None and x.method != "DELETE":
            said = x.headers.get("WWW-Authenticate") or x.headers.get("Location") or ""
            print(f"   {x.method:4} {x.url:58} {x.status}  {said[:100]}")

# %% [markdown]
# In the second story the notes server is an OAuth client **in its own right**: on the API's `401` it
# runs the same flow the Host ran — its own registration, Ada's consent for *it*, a token whose
# audience is the calendar API. Two tokens now exist, each for one audience, each held by one party:

# %%
who_holds(runs["own-upstream-token"])
print("the calendar API's log of callers:", runs["own-upstream-token"].notes["calendar_accepted"])

# %%
ask("11-server-receives-token-whose")

# %% [markdown]
# ## The confused deputy
#
# A different setup: an **MCP proxy** in front of a third-party API. The proxy lets MCP clients
# register with it dynamically, but at the third party it uses **one static client id** for all of
# them. Once a user has consented to that id at the third party, the third party remembers (a cookie)
# and stops asking. An attacker registers their own client at the proxy with their own redirect URI
# and sends the user a link: the third party sees the familiar client id, skips consent, and the
# proxy — the deputy — hands *the attacker's* redirect URI a code for the user's account.
#
# The fix is consent at the proxy itself, per client: a registry of which clients the user approved,
# and a consent screen naming the client and its redirect URI before anything is forwarded. The
# security lab `confused-deputy` plays both configurations (its `explanation` tells the whole story,
# with the threat model; chapter 10 has every lab):

# %%
from mcp_sim.scenarios.authorization_story import confused_deputy

for config in ("vulnerable", "fixed"):
    lab = confused_deputy(config, seed=0)
    print(f"{config:10} the attack succeeded: {lab.succeeded}; the user's own work still done: {lab.legitimate}")

# %%
ask("11-confused-deputy-attack-check")

# %% [markdown]
# ## Recap
#
# - A Server over HTTP is an OAuth **resource server**: it answers `401` with `WWW-Authenticate`
#   pointing at its **Protected Resource Metadata**, which names the **authorization server**.
# - The client discovers the AS (RFC 8414, then OIDC), gets a client id (pre-registered, a Client ID
#   Metadata Document, or dynamic registration), and sends the user's browser to `/authorize` with
#   **PKCE `S256`**, `state` and **`resource`**; the code comes back to a registered redirect URI only.
# - The token is bound to one **audience**. The Server checks it on every request: `401 invalid_token`
#   for unknown, expired or someone else's tokens, `403 insufficient_scope` (and a step-up) for too
#   little scope; an expired token is **refreshed** without the user.
# - A Server never forwards the token it got; for an upstream API it is a client itself and holds
#   its own token. A proxy with a static client id must ask for consent per client, or it becomes a
#   confused deputy.
# - 2025-11-25 and 2026-07-28 share this flow; 2026-07-28 deprecates dynamic registration in favour
#   of metadata documents.
#
# **Exercises:** `ex11_discovery_urls`, `ex11_token_check`, `ex11_pkce`.
