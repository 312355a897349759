"""The lab ``scope-minimization``: a leaked token is worth what its scopes are worth.

Tokens leak — from a log line, a crash dump, a proxy's memory — and no lab can promise they never do.
What a design controls is what a leaked token *can do* (Security Best Practices, "Scope
Minimization"). A Server that publishes every scope in ``scopes_supported`` and names its whole catalog
in every challenge, and a client that asks for all of it up front, give every token the power of the
most dangerous tool. The fix is progressive least privilege on both sides: the Server publishes only
baseline scopes and names in each challenge only what the refused operation needs; the client asks
for what the challenge names (or, with no scope named, for what is published, as the Scope Selection
Strategy says) and, when it must step up, for the union with what it held (rule
``security.bp.scope-union``). The simulator's version of that design is rule
``security.sim-scope-least-privilege``.

The files Server is a real :class:`~mcp_sim.roles.server.Server` whose tools check the caller's scopes
(with the hierarchy: ``files:*`` implies every ``files:`` scope, rule ``auth.scope-hierarchy``); the
challenges are recorded as notes with the ``WWW-Authenticate`` line a real Server would send; the
token table issues what the client asked for (the user approved the request as shown).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from mcp_sim.capabilities.context import Context
from mcp_sim.roles.server import Server
from mcp_sim.security.identity import User, pick_distinct, pick_name
from mcp_sim.security.lab import Lab, LabContext, LabFacts, Outcome
from mcp_sim.security.tokens import AuthorizationServer, TokenRejected

__all__ = ["LABS", "ScopeDesign", "ask_everything", "ask_what_is_named", "challenge_catalog",
           "challenge_needed", "publish_baseline", "publish_catalog"]

Scopes = tuple[str, ...]
NEEDS: Final = {"list_files": "files:read", "write_file": "files:write", "share_all": "files:admin"}


def holds(scopes: frozenset[str] | tuple[str, ...], needed: str) -> bool:
    """Whether ``scopes`` allow ``needed``, with the hierarchy: ``files:*`` implies every ``files:`` scope."""
    return needed in scopes or f"{needed.split(':')[0]}:*" in scopes


@dataclass(frozen=True)
class ScopeDesign:
    """The scope design of the Server and its client: what the Server ``publish``es in
    ``scopes_supported`` (from its catalog), which scopes it names in a ``challenge`` for an operation
    that needs one scope, and what the client ``ask``s for given the challenged scopes, the published
    ones and what it holds already."""

    publish: Callable[[Scopes], Scopes]
    challenge: Callable[[str, Scopes], Scopes]
    ask: Callable[[Scopes, Scopes, frozenset[str]], frozenset[str]]


def publish_catalog(catalog: Scopes) -> Scopes:
    """The mistake: every scope the Server has, in scopes_supported."""
    return catalog


def publish_baseline(catalog: Scopes) -> Scopes:
    """Only the low-risk baseline (reading)."""
    return tuple(s for s in catalog if s.endswith(":read"))


def challenge_catalog(needed: str, catalog: Scopes) -> Scopes:
    """The mistake: the whole catalog in every challenge."""
    return catalog


def challenge_needed(needed: str, catalog: Scopes) -> Scopes:
    """Only what the refused operation needs (the section's minimum approach)."""
    return (needed,)


def ask_everything(challenged: Scopes, published: Scopes, held: frozenset[str]) -> frozenset[str]:
    """The mistake: everything published and challenged, up front, to avoid a second prompt."""
    return frozenset(published) | frozenset(challenged) | held


def ask_what_is_named(challenged: Scopes, published: Scopes, held: frozenset[str]) -> frozenset[str]:
    """The challenge's scopes (or, when it names none, the published ones), plus what the client held."""
    return frozenset(challenged or published) | held


SCOPES = LabFacts(
    layer="authorization",
    summary="A leaked access token can do everything because every scope was granted up front.",
    title="Scope minimization",
    attacker="someone who obtained one of the client's access tokens (a log line, a crash dump, local interception)",
    controls="the leaked bearer token, which they present to the files Server directly",
    goal="the files Server's most dangerous operation: sharing every file publicly",
    mistake=("the Server published its whole catalog in scopes_supported and in every challenge, and the client "
             "asked for all of it at the first sign-in, so every token it held carried files:admin"),
    boundary="progressive least privilege: the Server's published scopes and challenges, and the client's requests",
    fix=("the Server publishes only the read scope and names in each challenge only the scope the refused "
         "operation needs; the client asks for exactly that (or for what is published when a challenge names "
         "none) and, on step-up, for the union with what it held"),
    rule=("a token carries the scopes of the work done so far: start from the baseline, step up per operation, "
          "ask for the union."),
    rules=("security.sim-scope-least-privilege", "security.bp.scope-union", "auth.scope-selection-order",
           "auth.scope-hierarchy", "security.bp.scope-subset"),
    not_covered=("the leak itself and how long a leaked token lasts (storage, short lifetimes and rotation are "
                 "other controls: auth.short-lived-tokens, auth.refresh-rotation), what the "
                 "leaked token may still do within its scopes (a token stolen after a write step-up still "
                 "writes), an authorization server that grants more than was asked, and revocation"),
    roles=("The files Server is the simulator's own Server, its tools checking the caller's scopes; the client's "
           "scope choices and the challenges are written in the lab, the challenges recorded as notes; the token "
           "table is the simulator's AuthorizationServer."),
)


@dataclass
class _Files:
    """The files Server's state: files, and what was done (read back for the outcome)."""

    files: list[str]
    done: list[str] = field(default_factory=list)


def files_server(state: _Files) -> Server:
    server = Server("files", version="1.0.0", per_caller=True)

    def allowed(call: Context, tool: str) -> bool:
        return call.auth is not None and holds(call.auth.scopes, NEEDS[tool])

    @server.tool(annotations={"readOnlyHint": True})
    def list_files(call: Context) -> str:
        """The caller's files."""
        return "\n".join(state.files) if allowed(call, "list_files") else "insufficient_scope files:read"

    @server.tool()
    def write_file(call: Context, name: str) -> str:
        """Write one file."""
        if not allowed(call, "write_file"):
            return "insufficient_scope files:write"
        state.done.append(f"wrote {name}")
        return "written"

    @server.tool(annotations={"destructiveHint": True})
    def share_all(call: Context) -> str:
        """Share every file publicly."""
        if not allowed(call, "share_all"):
            return "insufficient_scope files:admin"
        state.done.append(f"shared {len(state.files)} files publicly")
        return "shared"

    return server


async def scope_story(ctx: LabContext, defence: ScopeDesign) -> Outcome:
    sim, rng = ctx.sim, ctx.rng
    user = User(pick_name(rng, "user"), pick_name(rng, "tenant"))
    resource = "https://files.example/mcp"
    catalog: Scopes = ("files:read", "files:write", "files:admin") + (("files:*",) if ctx.variant == "wildcard" else ())
    table = AuthorizationServer("https://login.example", lambda: sim.token(16), sim.now_ms)
    state = _Files([f"{w}-{rng.randint(2019, 2026)}.pdf" for w in pick_distinct(rng, "server", rng.randint(2, 4))])
    server = files_server(state)
    published = defence.publish(catalog)
    held: frozenset[str] = frozenset()
    tokens: list[str] = []

    async def call(token: str | None, tool: str, args: dict[str, str], who: str) -> str:
        try:
            auth = table.validate(token, audience=resource)
        except TokenRejected:
            return "rejected"
        async with ctx.client(f"files-{who}-{len(tokens)}", server, auth=auth, client_name=who) as client:
            return str((await client.call_tool(tool, args))["content"][0]["text"])

    async def authorized(tool: str, args: dict[str, str]) -> str:
        """The client's call, stepping up when the Server challenges it."""
        nonlocal held
        answer = await call(tokens[-1] if tokens else None, tool, args, "client")
        if answer == "rejected" or answer.startswith("insufficient_scope"):
            first = not tokens
            named = () if first and ctx.variant == "no-challenge-scope" else defence.challenge(NEEDS[tool], catalog)
            status = "401" if first else "403 insufficient_scope"
            scope = f', scope="{" ".join(named)}"' if named else ""
            ctx.note("server/files", "client", f"HTTP {status}, WWW-Authenticate: Bearer resource_metadata="
                     f'"https://files.example/.well-known/oauth-protected-resource/mcp"{scope}')
            held = defence.ask(named, published, held)
            token = table.issue(user, client_id="desk", audience=resource, scopes=held)
            ctx.note("authorization server", "client", f"issues a token for {' '.join(sorted(held))}")
            tokens.append(token.value)
            answer = await call(token.value, tool, args, "client")
        return answer

    # The legitimate work: the user lists their files, then writes one.
    listed = await authorized("list_files", {})
    name = f"{pick_name(rng, 'server')}-notes.txt"
    wrote = await authorized("write_file", {"name": name})

    # The attack: one of the client's tokens leaks; the attacker calls the most dangerous tool with it.
    leaked = tokens[-1] if ctx.variant == "after-step-up" else tokens[0]
    scopes = sorted(table.issued[leaked].scopes)
    with ctx.attack():
        ctx.note("log file", "attacker", "a debug log line holds the client's bearer token", attack=True)
        answer = await call(leaked, "share_all", {}, "attacker")
    shared = [d for d in state.done if d.startswith("shared")]
    return Outcome(
        succeeded=bool(shared),
        evidence={"published": list(published), "leaked_token_scopes": scopes, "answer": answer,
                  "tokens_issued": len(tokens), "variant": ctx.variant},
        legitimate=listed == "\n".join(state.files) and wrote == "written",
        obtained=f"with a token for {' '.join(scopes)} it {'; '.join(shared)}",
        stopped_by=f"the leaked token carried only {' '.join(scopes)}; the Server answered {answer!r}",
    )


LABS: Final = (
    Lab("scope-minimization", SCOPES, scope_story,
        {"vulnerable": ScopeDesign(publish_catalog, challenge_catalog, ask_everything),
         "fixed": ScopeDesign(publish_baseline, challenge_needed, ask_what_is_named)},
        {"after-step-up": "the token that leaks is the one the client got after stepping up to write",
         "wildcard": "the catalog also has files:*, which implies every files: scope",
         "no-challenge-scope": "the Server's first challenge names no scope, so the client falls back to "
                               "scopes_supported"}),
)
"""The labs of this module."""
