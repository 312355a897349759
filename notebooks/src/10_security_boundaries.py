# %% [markdown]
# # 10 · Security boundaries
#
# **What you will learn**
#
# - to draw the **trust map** of an MCP deployment: the user, the Host and its model, the Clients,
#   local and remote Servers, tenants, the authorization server and the machine underneath — and, for
#   every arrow, what the receiving side must check instead of believing;
# - to sort an attack by the **layer whose boundary it crosses**: roles (who decides), capabilities
#   (what a feature's messages may carry), transports (how the bytes arrive) and authorization (who
#   may use a token or a tenant's data);
# - to read a **security lab**: the same story run against a `vulnerable` and a `fixed` configuration
#   that differ in one value, the defence; the attack's messages marked in the trace; variants that a
#   narrow fix would miss; and a piece of legitimate work that must still succeed;
# - to say, for each fix, **which boundary it restores and what it leaves open** — no fix covers
#   everything, and the lab's own facts say what remains;
# - to run any lab yourself, from the explorer below or from a terminal.

# %% [markdown]
# ## The trust map
#
# Security in MCP is mostly about one question asked again and again: *when a message crosses from
# one party to another, who checks it?* A Server writes its tool descriptions, so to the Host they are
# claims, not facts. The model reads everything put in front of it, so it can be talked into things;
# it may only propose. A Client hands back state the Server gave it, so the Server must not believe
# that state came back unchanged. A token names the resource it was issued for — its audience — and
# that is exactly what a Server checks before accepting it [[ref auth.server-validates-audience]]: a genuine
# signature makes a token real, only the audience makes it meant for this Server.
#
# The map below draws those crossings. Each arrow carries something across a boundary, from the
# side that produces it to the side that must check it; the label says what crosses and what the
# check is, and the line style says which layer the boundary belongs to. The line under the title
# counts the labs in this chapter that attack each layer — it is read from the lab table when the
# cell runs, so it grows as labs are added.

# %%
from mcp_sim.scenarios.security import LABS, run_lab
from mcp_sim.scenarios.security_tour import TrustMap

TrustMap()

# %% [markdown]
# A few things the map makes visible:
#
# - **The host process is one box, the model inside it.** The model is not a separate trust domain:
#   whatever text reaches it — a tool description, a tool result, a web page — can steer it. That is
#   why the Host, not the model, decides which tools exist and asks the user before acting.
# - **Separate connections are not separate machines.** Every local Server runs on the user's machine
#   with the user's permissions unless something (a sandbox) says otherwise.
# - **A Server is the only one who can protect its own data.** The Host's approval happens on the
#   user's side; a Server that relies on it serves anybody who reaches it another way.
# - **Tokens travel through the client.** The user consents in the browser, at the authorization
#   server; the authorization server issues the token to the client, and the client presents it to the
#   one Server it was issued for, which checks its audience.

# %%
from mcp_sim.course.predict import ask

ask("10-weather-server-user-installed")

# %% [markdown]
# ## How a lab is built
#
# Every lab in this chapter is a short story played on the simulator's own Hosts, Clients and
# Servers, with names, amounts and paths drawn from a seeded generator. The attack and a piece of
# legitimate work run in the same world. The lab declares:
#
# - its **facts**: who attacks, what they control, what they are after, the mistake that lets them
#   in, the boundary that stops them, the fix, the rule behind it, and what the fix does **not**
#   cover;
# - one **defence value** per configuration. `vulnerable` and `fixed` run exactly the same story
#   with the same users, model and attacker; only this value differs, and the story never learns
#   which configuration it is in. The outcome is read from what the attacker actually obtained;
# - **variants**: the same lesson through another door (another field, another encoding, another
#   client), so that a fix aimed only at the first attack shows up as incomplete.
#
# Here is every lab, grouped by the layer its facts name:

# %%
from mcp_sim.scenarios.security_tour import LabTable, labs_by_layer

print("\n".join(f"{layer:14} {len(labs):2} labs: {', '.join(lab.name for lab in labs)}"
                for layer, labs in labs_by_layer().items()))

# %% [markdown]
# The four sections below take one layer each: first what its boundary is, then the layer's labs,
# then one lab in depth. Every in-depth lab runs with the same seed; change it and the names and
# amounts change, the lesson does not.

# %%
from mcp_sim.scenarios.security_tour import BoundaryCard, VariantTable, describe_defence
from mcp_sim.trace import SequenceDiagram, TraceTable
from mcp_sim.widgets.lab_explorer import play_lab

SEED = 1


def defences(name: str) -> None:
    """The one value that differs between the two configurations of lab ``name``."""
    for config, value in LABS[name].defences.items():
        print(f"{config:10} → {describe_defence(value)}")


# %% [markdown]
# ## Roles: who decides
#
# The roles layer is about *authority*. The user decides what should happen; the Host enforces that
# decision; the model only proposes; each Server speaks for itself alone. Attacks on this layer make
# one party's words count as another party's decision: a Server's description that the model takes as
# an order, an annotation that the Host takes as a guarantee, a tool name that one Server borrows from
# another, a definition that changes after the user looked at it. The spec's defences are the Host's:
# annotations of a Server it does not trust are not believed [[ref host.annotations-untrusted]],
# the user can see which tools are exposed [[ref host.show-exposed-tools]], colliding names are
# told apart [[ref host.disambiguate-tool-names]], and each sensitive call is confirmed with its
# arguments shown [[ref host.confirm-with-inputs]]. This simulator's Host also reviews the
# text of every definition before the model sees it. That review is **detection**, defence in depth:
#
# [[rule security.host.tool-review-is-detection]]

# %%
LabTable("roles")

# %% [markdown]
# ### In depth: tool shadowing
#
# Two Servers are connected: the user's own mail Server, and a weather Server the user added later.
# The weather Server is never called. It attacks through the text of its tool definition alone,
# which the Host places in the same model context as the mail tools. First, the vulnerable Host:

# %%
shadow = run_lab("tool-shadowing", "vulnerable", seed=SEED)
shadow

# %% [markdown]
# The lab marks the attack's own messages in the trace (**⚠ attack** on the diagram, `[attack]` in
# the table): the listing that delivers the weather Server's text, and the mail call that the text
# steered. The player opens on the first of them; step forward to the `send_email` call and look at its
# arguments.
#
# The Host *did* ask the user before that call, and its question showed the arguments — `cc` with the
# attacker's address included. The scripted user approved without reading them. That confirmation is
# the spec's own control [[ref host.confirm-with-inputs]], and the last one left when an
# instruction is reworded past any review of the text: it works only if it shows every argument and the
# user reads them.

# %%
play_lab(shadow)

# %%
defences("tool-shadowing")

# %%
ask("10-fixed-host-reviews-every")

# %%
shadow_fixed = run_lab("tool-shadowing", "fixed", seed=SEED)
display(shadow_fixed.headline())
TraceTable(shadow_fixed.attack_events(), title="The attack's messages against the fixed Host")

# %% [markdown]
# What the fix restores and what it leaves open, from the lab's facts. Note what the card says is not
# covered: an instruction reworded past the review's patterns. The lesson the course draws:
#
# [[rule security.host.tool-text-stays-with-its-server]]

# %%
BoundaryCard(shadow_fixed)

# %%
VariantTable("tool-shadowing", seed=SEED)

# %% [markdown]
# ## Capabilities: what a message may carry
#
# The capabilities layer is about *meaning*: each feature's messages carry data that the receiver
# will act on. The attacks here make the receiver believe something the message does not prove —
# that a `requestState` came back as the Server wrote it, that a form is the Host's confirmation, that
# a Client's capabilities are still what they were, that roots fence a Server in, that a cached list
# belongs to whoever asks next, that a sampling request fits a budget, that whoever holds a state
# handle (a tool argument in 2026-07-28) owns it. The defences sit with whoever acts on the data: the
# Server protects and binds its own state and makes repeated work idempotent, binds handles to their
# owner [[ref security.bp.state-handle-not-auth]], the Client enforces budgets and refuses secrets in
# forms [[ref elicitation.no-secrets-in-forms]] — reading every request it would answer as a form
# (whatever its `mode` says, unless exactly `"url"`) the way the user reads it: Unicode normalised,
# invisible characters dropped, look-alike letters and `camelCase` names undone. That guard is
# detection by vocabulary, since the rule binds the server. For URL mode the Client shows the full URL
# with its domain highlighted and never fetches it ahead [[ref security.elicitation.url-show-full]]
# [[ref security.elicitation.url-no-prefetch]]; and private caches are never shared across
# authorization contexts [[ref caching.private-not-shared]] (this simulator keys them by the
# grant, its own choice: [[ref security.cache.key-by-grant]]).

# %%
LabTable("capabilities")

# %% [markdown]
# ### In depth: requestState tampering
#
# A bank Server pays invoices in several rounds (multi-round-trip requests, chapter 04): it asks for
# the details, then for a confirmation, and keeps what it learned so far in `requestState`, which the
# Client carries back with each retry. The attacker sits on the client side — an extension, say — and
# can edit that string between rounds. It cannot read the bank's key. What the spec asks of the bank:
#
# - [[rule mrtr.state-attacker-controlled]]
# - [[rule mrtr.state-integrity]]
# - [[rule mrtr.state-bound]]
# - [[rule mrtr.state-single-use]]

# %%
tamper = run_lab("requeststate-tampering", "vulnerable", seed=SEED)
tamper

# %% [markdown]
# Every round is a `tools/call`; the last one carries the edited state. The sequence diagram marks the
# attack's rows on its left-hand lane:

# %%
SequenceDiagram(tamper.trace, title="requestState tampering, vulnerable")

# %%
defences("requeststate-tampering")

# %%
ask("10-bank-seals-requeststate-hmac")

# %%
tamper_fixed = run_lab("requeststate-tampering", "fixed", seed=SEED)
display(tamper_fixed.headline())
TraceTable(tamper_fixed.attack_events(), title="The same rounds against the sealing bank")

# %%
BoundaryCard(tamper_fixed)

# %%
VariantTable("requeststate-tampering", seed=SEED)

# %% [markdown]
# ## Transports: how the bytes arrive
#
# The transports layer is about *channels*: the pipes of a stdio child process, a port on
# `127.0.0.1`, the legacy `Mcp-Session-Id` that ties a stream to its session. A channel is only a
# boundary if it carries what it claims to and only the party it claims to. The attacks here slip
# something onto a channel that should not be there — a log line on stdout, a request from a web page
# to a local port, a guessed session id — or start a local Server whose command does more than it
# shows. The defences belong to whoever owns the channel: the Server keeps stdout for protocol
# messages [[ref stdio.stdout-only-messages]] and validates `Origin`
# [[ref security.http.origin-validate]]; legacy session ids are random and never authentication
# [[ref security.bp.legacy.session-not-auth]] (random in real use means a CSPRNG, Python's `secrets`;
# the simulation draws its ids from the seeded generator only so that a trace replays, and says so);
# the Host shows the exact command it is about to run [[ref security.bp.local-show-exact-command]],
# with warnings for shell operators and for code its environment loads (`NODE_OPTIONS=--require …`,
# `LD_PRELOAD`, `PYTHONPATH` …). Those warnings are detection: a package that is itself malicious
# raises none, which is what the sandbox is for [[ref security.bp.local-guardrails]]. `Origin` has a
# limit worth knowing:
#
# [[rule security.http.absent-origin-and-host]]

# %%
LabTable("transports")

# %% [markdown]
# ### In depth: stdout contamination on stdio
#
# Chapter 06 showed that a stdio Server's stdout belongs to the protocol. Here the mistake becomes an
# attack: the weather Server logs the city it was asked about — to stdout — and the attacker chooses
# the city name.

# %%
stdout = run_lab("stdio-stdout-contamination", "vulnerable", seed=SEED)
stdout

# %% [markdown]
# The rows marked **⚠ attack** start with the call that carries the poisoned city name. Look for the
# frame the client could not read and the responses it ignored after the forged one had been taken
# as the answer:

# %%
SequenceDiagram(stdout.trace, title="stdout contamination, vulnerable")

# %%
ask("10-attacker-s-city-name")

# %%
defences("stdio-stdout-contamination")
stdout_fixed = run_lab("stdio-stdout-contamination", "fixed", seed=SEED)
display(stdout_fixed.headline())
BoundaryCard(stdout_fixed)

# %%
VariantTable("stdio-stdout-contamination", seed=SEED)

# %% [markdown]
# ## Authorization: who may use what
#
# The authorization layer runs across the other three: it decides whose request this is and what it
# may touch. A token carries an issuer, a subject, scopes and an audience; an authorization code is
# good for whoever holds it; a consent screen records that one user let one client act; a tenant's
# data belongs to that tenant only. The attacks here move one of these outside its scope: a token
# presented to a Server it was not issued for, a code delivered to an address the attacker chose, a
# code handed to the wrong authorization server, a proxy that lets a stranger ride another user's
# consent, discovery URLs that send the client to addresses inside the network. Each defence is an
# exact check by the party that issues or accepts: audience equal to this Server, redirect URIs
# compared character for character (the port of a loopback address aside), the issuer checked on
# every response and a redirect URI per issuer, consent per client, every
# URL learned from a Server vetted before it is fetched — by the address the request reaches after
# every translation the network may apply (`[64:ff9b::a9fe:a9fe]`, NAT64's spelling of
# 169.254.169.254, is still the metadata service). The rules behind them:
# [[ref auth.server-validates-audience]] (audience), [[ref auth.exact-redirect-match]] (redirect URIs),
# [[ref auth.iss-validate]] (the issuer, a 2026-07-28 rule), [[ref auth.proxy-consent-per-client]]
# (consent) and [[ref security.bp.ssrf-block-private]] (URLs). (Chapter 11 follows OAuth for MCP step by
# step.)

# %%
LabTable("authorization")

# %% [markdown]
# ### In depth: redirect URI manipulation
#
# Chapter 11 follows the OAuth flow of an MCP client step by step, and its audience checks and the
# confused deputy. This lab attacks a step in the middle: the authorization server sends the
# authorization code to the client's `redirect_uri`, and this one compares that URI with the
# registered one loosely. The attacker knows the public client's `client_id`, builds an authorization
# link of their own — their own `redirect_uri`, their own PKCE challenge — and gets the user, who is
# signed in, to open it.

# %%
redirect = run_lab("redirect-uri-manipulation", "vulnerable", seed=SEED)
redirect

# %% [markdown]
# The OAuth exchanges are HTTP, not MCP, and the trace shows them as transport rows. The attack's
# rows are the link, the browser's trip to the authorization server and on to the attacker's page,
# the attacker redeeming the code, and the attacker's own MCP session with the user's files. The
# player opens on the first of them; filter it to one link, or *fork* it with `config="fixed"`:

# %%
play_lab(redirect)

# %%
ask("10-real-client-uses-pkce")

# %%
defences("redirect-uri-manipulation")
redirect_fixed = run_lab("redirect-uri-manipulation", "fixed", seed=SEED)
display(redirect_fixed.headline())
TraceTable(redirect_fixed.attack_events(), title="The same link against exact matching")

# %%
BoundaryCard(redirect_fixed)

# %%
VariantTable("redirect-uri-manipulation", seed=SEED)

# %% [markdown]
# ## Every lab, side by side
#
# One run per lab and configuration with the same seed; the columns say whether the attack worked or
# was stopped. Read the columns together: in every row the attack should work against `vulnerable`
# and be stopped by `fixed`, and the legitimate work should succeed under `fixed`. A row that breaks
# that pattern is a lab with something to say — or a bug.

# %%
lines = [f"{'layer / lab':36} {'vulnerable':11} {'fixed':8} legitimate work (fixed)"]
for layer, labs in labs_by_layer().items():
    lines.append(layer)
    for lab in labs:
        runs = {config: lab.run(config, SEED) for config in ("vulnerable", "fixed")}
        attack = {config: "worked" if r.succeeded else "stopped" for config, r in runs.items()}
        work = "succeeded" if runs["fixed"].legitimate else "FAILED"
        lines.append(f"  {lab.name:34} {attack['vulnerable']:11} {attack['fixed']:8} {work}")
print("\n".join(lines))

# %% [markdown]
# ## The lab explorer
#
# Pick any lab (the menu is grouped by layer and built from the lab table), a configuration, a variant
# and a seed. The panel shows the verdict, the explanation composed from the lab's facts, the defence
# value the run received, the attack's messages, the whole trace, the command that repeats the run in
# a terminal, and a trace player that opens on the first attack message. In the player, *fork this
# moment* with the option `config="fixed"` re-runs the same world with the fix and shows the
# difference.

# %%
ask("10-explorer-opening")

# %%
from mcp_sim.widgets.lab_explorer import lab_explorer

lab_explorer("annotations-trusted", config="vulnerable", seed=SEED)

# %% [markdown]
# The explorer opens on a run whose verdict says the legitimate work did **not** succeed. That is not
# a fix blocking too much: in this lab the legitimate work reads the notes *after* the attack, and the
# vulnerable Host let the lying tool delete them. Switch the configuration to `fixed` and both verdicts
# turn: the attack fails and the list of notes is complete. Under `fixed`, in every lab and variant, the
# legitimate work must still succeed — that is this course's test that a fix is not a wall.

# %% [markdown]
# ## Run the labs yourself
#
# The same runs are available from a terminal in the project folder:
#
# ```
# mcp-sim lab list                 # every lab with its layer and what goes wrong (--json for data)
# mcp-sim lab run NAME --config vulnerable|fixed [--seed N] [--variant V] [--trace FILE] [--json]
# ```
#
# `--trace FILE` saves the run's trace as JSON Lines, which the trace tools of earlier chapters read.
# The commands for the in-depth runs above, as the explorer writes them:

# %%
from mcp_sim.scenarios.security_tour import command_line

in_depth = ("tool-shadowing", "requeststate-tampering", "stdio-stdout-contamination", "redirect-uri-manipulation")
commands = [command_line(name, config, SEED) for name in in_depth for config in ("vulnerable", "fixed")]
commands.append(command_line("redirect-uri-manipulation", "fixed", SEED,
                             variant=next(iter(LABS["redirect-uri-manipulation"].variants)), trace="redirect.jsonl"))
print("\n".join(commands))

# %% [markdown]
# From Python, `run_lab(name, config, seed, variant=...)` returns the `LabResult` used throughout this
# notebook: `succeeded`, `legitimate`, `evidence`, `explanation`, `facts`, and `trace` with
# `attack_events()`.

# %% [markdown]
# ## Recap
#
# - Every boundary in MCP is a place where one party's output becomes another party's input. The
#   receiving side checks; it does not believe.
# - **Roles**: the Host decides what the model sees and asks the user in its own voice; Server text and
#   annotations are claims; the model only proposes.
# - **Capabilities**: a receiver acts only on what a message proves — sealed and bound state,
#   idempotent operations, budgets, caches keyed by their context, secrets never in forms.
# - **Transports**: a channel carries only what it claims to, for only its owner — stdout for
#   protocol messages, `Origin` checked on local HTTP (and `Host` where no `Origin` comes), legacy
#   session ids bound to their user, commands shown before they run.
# - **Reviews of text are detection.** The Host's review of tool text, sampling prompts and forms, and
#   its install dialog's warnings, stop the labs' phrasings; a reworded instruction passes. The spec's controls — untrusted annotations not
#   believed, exposed tools shown, calls confirmed with their arguments — stay necessary.
# - **Authorization**: a token is for one audience; consent is per client; every query stays in the
#   caller's tenant.
# - A lab's `vulnerable` and `fixed` differ in one value. Its variants test that the fix is as wide as
#   the lesson, its legitimate work that the fix is not a wall, and its facts say what the fix leaves
#   to another boundary.
#
# **The other best-practice sections.** Each has a lab in the authorization table above:
# `authorization-url-validation` (a scheme allowlist judged as a browser parses the URL, no shell:
# [[ref security.bp.auth-url-schemes]], [[ref security.bp.auth-url-allowlist]],
# [[ref security.bp.auth-url-sanitize]], [[ref security.bp.auth-url-no-shell]]);
# `localhost-redirect-impersonation` (a metadata document proves a domain, not the program on a
# loopback port; the spec's redirect host and warning inform the user
# [[ref auth.cimd-show-redirect-host]] [[ref auth.cimd-warn-localhost]], and the lab's fix is an
# attestation [[ref auth.cimd-attestation]]); `cimd-ssrf` (the authorization server guards its own
# fetch of a `client_id` URL [[ref auth.cimd-ssrf]]); `cimd-trust-policy` (which documents a protected
# server accepts [[ref auth.cimd-trust-policies]]); and `scope-minimization` (what a leaked token can
# do: [[ref security.sim-scope-least-privilege]], [[ref security.bp.scope-union]]). The honest
# authorization servers of these labs, and of the mix-up and deputy labs, keep a sign-in session per
# browser, show consent per client with its redirect host and refuse https redirect URIs in dynamic
# registration — a policy the spec leaves to the server [[ref auth.sim-registration-policy]] — so whose
# code they issue follows from which browser arrives, signed in as whom. Their redirect comparison is
# exact except for the port of a loopback IP literal, which RFC 8252 leaves free for native apps
# [[ref auth.sim-loopback-any-port]]. Stdio privilege escalation through a
# local proxy is the `proxy-spawn` variant of `local-server-compromise`
# ([[ref security.bp.stdio-proxy-restrictions]]), and the client's side of URL-mode elicitation is the
# lab `elicitation-url-handling`: the full URL shown [[ref security.elicitation.url-show-full]], never
# fetched ahead [[ref security.elicitation.url-no-prefetch]], opened only with consent
# [[ref security.elicitation.url-consent]] where neither client nor model can read it
# [[ref security.elicitation.url-open-securely]].
#
# The rules this chapter cited:
#
# [[rules-table]]
#
# ## Exercises
#
# Earlier exercises already practise some of these boundaries: sealing state in `ex04_seal_state`,
# keeping stdout clean in `ex06_diagnose_stdout`, and the Host's filter and approval in
# `ex09_host_policy`. This chapter's own exercises — reviewing a Server, authorizing a call, guarding
# against replays, checking `Origin`, checking a token's audience, and writing a sandbox policy — are
# listed here from the grader's registry; grade one with `grade("...")` from a notebook or
# `mcp-sim grade ...` from a terminal.

# %%
from mcp_sim.grading.exercises import EXERCISES

chapter_10 = [f"{exercise.id:26} {exercise.title}: grade(\"{exercise.id}\")"
              for exercise in EXERCISES.values() if exercise.chapter == "10"]
print("\n".join(chapter_10) or "No chapter 10 exercise is registered in this copy of the course yet.")
