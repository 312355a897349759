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
# - what 2026-07-28 adds to the same flow: `iss` validation, `application_type` in registration,
#   credentials bound to one authorization server, scope unions and hierarchies, refresh-token rules —
#   and a Client ID Metadata Document instead of (now deprecated) dynamic registration.

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
# not run any tools; it only issues tokens. Those are two roles even where one service plays both:
# the spec lets the AS be hosted with the resource server or run apart, as here.
#
# Authorization itself is optional [[ref auth.optional]], and a stdio server takes its credentials
# from its environment instead [[ref auth.stdio-uses-environment]]. The first story: the Host calls
# `read_notes` with no token at all. Before you run it:

# %%
from mcp_sim.course.predict import ask

ask("11-401-named-resource-metadata")

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
# The Server refuses the request before reading it: `401` [[ref auth.status-codes]] with a
# `WWW-Authenticate` header. The header names the URL of the Server's **Protected Resource
# Metadata** [[ref auth.server-prm-discovery-mechanism]] and the scope to ask for first
# [[ref auth.challenge-names-scope]].

# %%
refusal = next(e for e in modern.recorder.events if e.text == "HTTP 401 Unauthorized")
print(refusal.framing["http"]["response"]["headers"]["WWW-Authenticate"])

# %% [markdown]
# ### 2 · Protected Resource Metadata
#
# The document says which resource this is and which authorization server issues its tokens
# [[ref auth.prm-names-authorization-server]]. The client checks that `resource` is the Server it
# called: a document about some other resource is refused.
#
# [[rule auth.prm-discovery-order]]
#
# Had the `401` named no `resource_metadata`, the client would try
# `https://notes.example/.well-known/oauth-protected-resource/mcp`, then the root document
# (exercise `ex11_discovery_urls`). A document may list several authorization servers; which one to
# use is the client's choice [[rule auth.first-authorization-server]]

# %%
from mcp_sim.trace.reading import JsonView

display(JsonView(json.loads(body(steps[1]))))

# %% [markdown]
# ### 3 · The authorization server's metadata
#
# Next, the AS's own document (RFC 8414; the client would try OpenID Connect discovery if this one
# were missing, in the order [[ref auth.as-metadata-order]] gives, with path insertion for an issuer
# with a path). In 2026-07-28 its `issuer` must be exactly the one the client built the URL from
# [[ref auth.as-metadata-issuer-identical]]. The client reads the endpoints from it, and one field
# decides whether it goes on at all:
#
# [[rule auth.pkce-refuse-without-methods]]
#
# The field says which methods the AS supports; it does not promise that the AS enforces PKCE. The
# client, for its part, uses `S256` [[ref auth.pkce-s256]] (the `no-s256` story shows the refusal).

# %%
as_meta = json.loads(body(steps[3]))
for key in ("issuer", "authorization_endpoint", "token_endpoint", "registration_endpoint",
            "code_challenge_methods_supported", "authorization_response_iss_parameter_supported"):
    print(f"{key:48} {as_meta.get(key)}")

# %% [markdown]
# ### 4 · Registration: which client is this?
#
# The AS must know a client before it sends a user's browser back to it [[ref auth.client-id-first]].
# A client that supports every way has an order of preference, with conditions:
#
# [[rule auth.registration-priority]]
#
# So: an id **registered ahead of time** for this AS [[ref auth.preregistration-option]]; a **Client ID
# Metadata Document**, where the `client_id` *is* an https URL serving the client's name and redirect
# URIs (the AS fetches it) [[ref auth.cimd-support]]; **Dynamic Client Registration** (`POST /register`,
# RFC 7591), which 2026-07-28 deprecates [[ref auth.dcr-deprecated]]; and last, asking the user to type
# client details in (the simulated client stops there instead). This AS advertises no metadata
# documents, so the Host registers. In 2026-07-28 the request says what kind of application the Host is:
#
# [[rule auth.dcr-application-type]]
#
# The Host runs on Ada's machine with a loopback redirect, so `native` [[ref auth.dcr-native]]. The
# legacy run sends the same request without it [[rule auth.legacy.application-type-left-out]]

# %%
print("sent (2026-07-28):", body(steps[4]))
print("answered:         ", body(steps[5]))
legacy_steps = oauth_events(legacy)
print("sent (2025-11-25):", body(legacy_steps[4]))

# %% [markdown]
# ### 4b · A Client ID Metadata Document instead
#
# In the `metadata-document` story the AS advertises `client_id_metadata_document_supported`, and the
# Host publishes its document at `https://notes-host.example/oauth/client.json` — an https URL with a
# path [[ref auth.cimd-https-url]] naming at least `client_id`, `client_name` and `redirect_uris`
# [[ref auth.cimd-required-fields]]. The client checks the advertisement first
# [[ref auth.cimd-check-advertised]] and uses the URL as its `client_id`: there is no registration
# request. The AS fetches the document while it serves the authorization request, checks that it
# names itself and that the redirect URI is one it lists [[ref auth.cimd-as-validates]]:

# %%
cimd = run_authorization_story("metadata-document", "2026-07-28", seed=1)
for x in cimd.http_exchanges():
    if x.carries is None:
        print(f"{x.method:6} {x.url:66} {x.status}")
fetched = next(e for e in oauth_events(cimd) if e.sender.startswith("notes-host") and body(e))
print("\nthe document the AS read:", body(fetched))
print("client_id of the token:", next(iter(cimd.world.table.issued.values())).client_id)

# %% [markdown]
# ### 5 · The user's browser and the consent screen
#
# Now the Host opens the authorization endpoint in Ada's **browser** — a different participant: Ada
# signs in there and says yes or no. The request carries PKCE (`code_challenge`, method `S256`)
# [[ref auth.pkce]], a random `state` [[ref auth.state]], the scope the challenge named
# [[ref auth.scope-selection-order]], and `resource` [[ref auth.resource-parameter]]: the Server's
# canonical URI, which becomes the token's **audience**. The redirect URI is a loopback address:
# [[rule auth.loopback-ip-literal]]

# %%
authorize = steps[6].framing["http"]["request"]["path"]
for name, value in parse_qsl(urlsplit(authorize).query):
    print(f"{name:22} {value}")

# %% [markdown]
# The AS will send the browser back with a code and `iss`, its own name. Suppose the name were wrong:

# %%
ask("11-iss-mismatch")

# %% [markdown]
# The AS redirects the browser to the Host's loopback address with a one-time `code`, the same
# `state` (the Host checks it: a response to a request it never made is refused) and `iss`, the AS's
# name [[ref auth.as-sends-iss]]. What the client does with `iss` depends on the era:
#
# [[rule auth.iss-validate]]
#
# The comparison is exact [[ref auth.iss-exact-comparison]]. 2025-11-25 says nothing about `iss`,
# and this simulator's legacy client follows it: [[rule auth.legacy.iss-not-checked]]

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
# The Host sends the request again with `Authorization: Bearer …` — as it will on every later HTTP
# request [[ref auth.bearer-every-request]], never in a query string [[ref auth.no-token-in-query]]
# (the legacy Host opens its session again with the token; the modern one has no session). The
# Server checks the token (known, unexpired, issued **for it**, with the scope)
# [[ref auth.server-validates-tokens]] and the call goes through. Who holds what now? The
# authorization server's table says:

# %%
def who_holds(run):
    for token in run.world.table.issued.values():
        print(f"audience={token.audience:28} client={token.client_id:22} user={token.subject} "
              f"scopes={sorted(token.scopes)}")


who_holds(modern)

# %% [markdown]
# One token, for one audience. Ada never saw it (her browser only carried the code); the Server saw it,
# but it works at no other resource that checks the audience, as each must
# [[ref auth.server-validates-audience]]; the Host holds it and the refresh token, which only ever
# goes to the AS. The Host shows this Server only tokens from this Server's own AS
# [[ref auth.client-sends-only-its-as-tokens]].

# %% [markdown]
# ## Two eras: the same URLs, not the same rules
#
# Both runs make the same OAuth requests to the same URLs. The MCP around them differs: the legacy
# client opens with `initialize` (refused, then retried with the token), sends
# `notifications/initialized`, and ends its session with `DELETE`; the modern one opens with
# `server/discover` and has no session. And 2026-07-28 asks more of the same flow:
#
# - the client records the issuer and validates `iss` before the code goes anywhere
#   [[ref auth.record-issuer]] [[ref auth.iss-validate]] (2025-11-25: no rule);
# - dynamic registration is deprecated [[ref auth.dcr-deprecated]] and carries `application_type`
#   [[ref auth.dcr-application-type]];
# - registration state is kept per authorization server [[ref auth.state-per-authorization-server]],
#   and a changed authorization server means registering anew
#   [[ref auth.reregister-when-authorization-server-changes]];
# - the metadata's `issuer` must be identical to the one the URL was built from
#   [[ref auth.as-metadata-issuer-identical]];
# - step-up: the client asks for the union of old and challenged scopes [[ref auth.step-up-union]],
#   the server names all needed scopes in one challenge [[ref auth.all-scopes-in-one-challenge]] and
#   counts scope hierarchies [[ref auth.scope-hierarchy]];
# - refresh tokens: never assumed [[ref auth.no-refresh-assumption]]; `offline_access` may be asked
#   for when the AS lists it [[ref auth.offline-access]], and a server leaves it out of its challenges
#   [[ref auth.server-no-offline-access]].
#
# Two of these show on this wire: the registration body, and what each client does when the
# redirect names another issuer (the `iss-mismatch` story, which you predicted in step 5):

# %%
show(legacy)
same_urls = [x for x in legacy.http_exchanges() if x.carries is None and x.method != "DELETE"] == \
            [x for x in modern.http_exchanges() if x.carries is None]
print("\nOAuth requests to the same URLs in both eras:", same_urls)
print("registration bodies identical:", body(legacy_steps[4]) == body(steps[4]))
for era in ("2025-11-25", "2026-07-28"):
    mixed = run_authorization_story("iss-mismatch", era, seed=1)
    outcome = f"refused ({mixed.failure.rule})" if mixed.failure else f"redeemed the code: {mixed.results}"
    print(f"iss-mismatch {era}: {outcome}; token requests sent: {mixed.notes['token_requests']}")

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
# Each story below changes one thing. Two questions first:

# %%
ask("11-server-receives-token-whose")

# %%
ask("11-access-token-expired-hour")

# %% [markdown]
# Every line below is a real run; the last HTTP exchange that mattered and the outcome are read from it.

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
# notes server refuses it with `401 invalid_token` [[ref auth.invalid-token-401]] (its log says why),
# and the Client starts the flow for *this* server.

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
# Refusing `plain` is this AS's policy: [[rule auth.pkce-as-refuses-plain]]

# %%
for back in runs["pkce-refused"].notes["refused"]:
    print(back["error"], "—", back["error_description"], "| code in the answer:", "code" in back)

# %% [markdown]
# ### An unregistered redirect URI
#
# Here the Host's pre-registered client lists another redirect URI. The AS matches redirect URIs
# exactly [[ref auth.exact-redirect-match]], and it never redirects to an address it cannot vouch
# for — that would hand the code to whoever owns it. So it answers with an error page (`400`), not a
# redirect. (Redirect URIs are https or loopback [[ref auth.redirect-https-or-loopback]], and every
# AS endpoint is https [[ref auth.https-endpoints]].)

# %%
print(runs["bad-redirect"].http_exchanges()[-1][:3])
print(runs["bad-redirect"].failure.reason)

# %% [markdown]
# ### Expired token, missing scope, refusal
#
# - **Expired** (tokens live one second in this story): the Server answers `401 invalid_token`. This
#   AS issued a refresh token with the access token, so the Client uses it at the token endpoint — no
#   browser, no user — and the refresh token is rotated [[ref auth.refresh-rotation]]. An AS need not
#   issue one [[ref auth.no-refresh-assumption]]; without it, the Client would start the flow again.
# - **Missing scope**: the first token has `notes:read`; `write_note` needs `notes:write`. The Server
#   answers `403 insufficient_scope` naming the scopes [[ref auth.insufficient-scope-403]]; the Client
#   asks Ada again (*step-up*) [[ref auth.step-up]] for the challenged scopes together with those it
#   asked for before [[ref auth.step-up-union]], instead of asking for everything up front. It stops
#   rather than loop when a server refuses scopes the token already carries
#   [[ref auth.step-up-retry-limit]].
# - **Refusal**: Ada says no; the browser comes back with `error=access_denied` and there is no token.

# %%
for name in ("expired-refresh", "step-up"):
    for x in runs[name].http_exchanges():
        if x.status in (401, 403) and x.carries == "tools/call":
            print(f"{name:16} {x.status} {x.headers['WWW-Authenticate']}")
print("refresh token rotated:", runs["expired-refresh"].notes["refresh_rotated"])
print("scopes before/after step-up:", runs["step-up"].notes["scopes_before"], runs["step-up"].notes["scopes_after"])
print("user-refuses:", runs["user-refuses"].failure.reason)

# %% [markdown]
# ## Audience, and why a token is never passed on
#
# The notes server's `agenda` tool needs Ada's calendar, which lives behind another API. The easy
# mistake is to forward the token the Server received. That token's audience is the notes server: a
# careful API refuses it — and an API that accepted it would have no idea which client was really
# calling, which is exactly what the spec forbids: [[rule auth.no-token-passthrough]]

# %%
for name in ("token-passthrough", "own-upstream-token"):
    rows = runs[name].http_exchanges()
    start = next(i for i, x in enumerate(rows) if "calendar" in x.url)
    print(f"--- {name}: the tool answered {runs[name].results[1]!r}")
    for x in rows[start:]:
        if x.carries is None and x.method != "DELETE":
            said = x.headers.get("WWW-Authenticate") or x.headers.get("Location") or ""
            print(f"   {x.method:4} {x.url:58} {x.status}  {said}")

# %% [markdown]
# In the second story the notes server is an OAuth client **in its own right**
# [[ref auth.upstream-own-credentials]]: on the API's `401` it runs the same flow the Host ran — its
# own registration, Ada's consent for *it*, a token whose audience is the calendar API. A real server
# sends Ada to that authorization URL by URL-mode elicitation and checks that she is the one who
# completes it [[ref security.elicitation.same-user-completes]]; the story shortens that:
# [[rule auth.upstream-scripted-browser]]
#
# Two tokens now exist, each for one audience, each held by one party:

# %%
who_holds(runs["own-upstream-token"])
print("the calendar API's log of callers:", runs["own-upstream-token"].notes["calendar_accepted"])

# %% [markdown]
# ## The confused deputy
#
# A different setup: an **MCP proxy** in front of a third-party API. The proxy lets MCP clients
# register with it dynamically, but at the third party it uses **one static client id** for all of
# them. Once a user has consented to that id at the third party, the third party remembers (a cookie)
# and stops asking. An attacker registers their own client at the proxy with their own redirect URI
# and sends the user a link: the third party sees the familiar client id, skips consent, and the
# proxy — the deputy — hands *the attacker's* redirect URI a code for the user's account.

# %%
ask("11-confused-deputy-attack-check")

# %% [markdown]
# The fix is consent at the proxy itself, per client [[ref auth.proxy-consent-per-client]]: a registry of which clients the user approved,
# and a consent screen naming the client and its redirect URI before anything is forwarded. The
# security lab `confused-deputy` plays both configurations (its `explanation` tells the whole story,
# with the threat model; chapter 10 has every lab):

# %%
from mcp_sim.scenarios.authorization_story import confused_deputy

for config in ("vulnerable", "fixed"):
    lab = confused_deputy(config, seed=0)
    print(f"{config:10} the attack succeeded: {lab.succeeded}; the user's own work still done: {lab.legitimate}")

# %% [markdown]
# ## Recap
#
# - A Server over HTTP is an OAuth **resource server**: it answers `401` with `WWW-Authenticate`
#   pointing at its **Protected Resource Metadata**, which names the **authorization server**.
# - The client discovers the AS (RFC 8414, then OIDC, path insertion first), gets a client id (in the
#   recommended order: pre-registered; a Client ID Metadata Document when the AS advertises it; dynamic
#   registration when it has an endpoint; else the user types it in), and sends the user's browser to
#   `/authorize` with **PKCE `S256`**, `state` and **`resource`**; the code comes back to a registered
#   redirect URI only.
# - The token is bound to one **audience**. The Server checks it on every request: `401 invalid_token`
#   for unknown, expired or someone else's tokens, `403 insufficient_scope` (and a step-up) for too
#   little scope; an expired token is **refreshed** without the user — when a refresh token was issued.
# - A Server never forwards the token it got; for an upstream API it is a client itself and holds
#   its own token. A proxy with a static client id must ask for consent per client, or it becomes a
#   confused deputy.
# - 2025-11-25 and 2026-07-28 share the shape of this flow, not all its rules: 2026-07-28 adds the
#   `iss` check, `application_type` in (now deprecated) dynamic registration, credentials bound to one
#   AS, and rules for scope unions, hierarchies and refresh tokens.
#
# **Exercises:** `ex11_discovery_urls`, `ex11_token_check`, `ex11_pkce`.
#
# [[rules-table]]
