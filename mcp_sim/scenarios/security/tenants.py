"""Labs about *who* is calling: multi-tenant Servers and the caller's authorization context.

* ``host-approval-not-authorization`` — the Server trusts that a Host asked its user; another caller
  never asks anybody and reads another tenant's statement (course 5.2.3);
* ``list-cache-shared`` — a gateway's list cache serves tenant B the tool list made for tenant A
  (spec 2026-07-28 caching: ``cacheScope: "private"`` MUST NOT be shared across authorization contexts);
* ``state-handle-hijacking`` — a guessable, unbound state handle lets one user read another's draft
  (Security Best Practices, State Handle Hijacking);
* ``token-passthrough`` — a Server accepts a token issued for a different Server (audience) and acts
  as the victim (Security Best Practices, Token Passthrough).
"""

from __future__ import annotations

from typing import Any, Final, TypedDict

import mcp_sim.scenarios.finance as finance
from mcp_sim.capabilities.context import Context
from mcp_sim.protocol.errors import McpError
from mcp_sim.protocol.revisions import LATEST
from mcp_sim.roles.cache import ANONYMOUS, AuthorizationContext, ListCache
from mcp_sim.roles.client import Client
from mcp_sim.roles.host import Host
from mcp_sim.roles.model import ScriptedModel, ToolRule
from mcp_sim.roles.server import Server
from mcp_sim.roles.user import ScriptedUser
from mcp_sim.security.authorization import authorize
from mcp_sim.security.host_policy import ApprovalPolicy
from mcp_sim.security.identity import AuthInfo, Directory, pick_name
from mcp_sim.security.lab import Lab, LabContext, LabFacts, Outcome, server_main
from mcp_sim.security.tokens import AuthorizationServer, TokenRejected
from mcp_sim.transports.base import TransportClosed
from mcp_sim.transports.http_server import SimulatedHttpServer


class DraftHandle(TypedDict):
    handle: str

# --------------------------------------------------------------------------------------------------
# Host approval is not Server authorization
# --------------------------------------------------------------------------------------------------

APPROVAL = LabFacts(
    title="Host approval mistaken for Server authorization",
    attacker="a user of another tenant calling the Server through their own client",
    goal="another tenant's account statement",
    mistake=("the Server assumed every call had been confirmed by a user in a Host, so it checked nothing "
             "itself; a caller that is not that Host never shows anybody a confirmation dialog"),
    boundary="the Server's per-operation authorization (identity, scope, tenant, object ownership)",
    fix=("the Server derives the tenant from the caller's authenticated identity (ctx.auth, set by the transport) "
         "on every call and looks accounts up only inside that tenant's books, whatever the arguments say"),
    rule=("Host confirmation cannot replace Server permission checks: the Server should verify identity, "
          "scopes, tenant and object ownership for each operation (course 5.2.3)."),
    roles="Host, Client, ScriptedModel and ScriptedUser are the simulator's own; the fixed finance Server is the "
          "ready-made one (mcp_sim.scenarios.finance, tenant from ctx.auth); the vulnerable one is the same tools "
          "written on the simulator's Server without the checks.",
)


def trusting_finance(ledgers: dict[str, dict[str, list[int]]]) -> Server:
    """The mistake: the finance tools written as if "the Host asked its user" — an account is looked up
    in every tenant's books, and nothing asks who is calling."""
    server = Server("finance", version="1.0.0", title="Finance", per_caller=True)

    @server.tool(annotations={"readOnlyHint": True})
    def get_balance(account: str) -> finance.Balance:
        """The balance of one account."""
        for accounts in ledgers.values():
            if account in accounts:
                return {"account": account, "balance": sum(accounts[account]), "currency": "EUR"}
        raise KeyError(f"no account {account}")

    return server


async def approval_story(ctx: LabContext) -> Outcome:
    rng = ctx.rng
    directory = Directory.random(rng, tenants=2)
    victim, attacker = list(directory.users.values())
    ledgers: dict[str, dict[str, list[int]]] = {}
    for owner in (victim, attacker):
        account = f"{owner.tenant.split('-')[0].upper()}-{rng.randint(100, 999)}"
        ledgers[owner.tenant] = {account: [rng.randint(1_000, 90_000), -rng.randint(10, 900)]}
    victim_acct = next(iter(ledgers[victim.tenant]))
    balance = sum(ledgers[victim.tenant][victim_acct])
    server = finance.build(ledgers) if ctx.fixed else trusting_finance(ledgers)

    def identity(user: Any) -> AuthInfo:
        return AuthInfo(subject=user.subject, tenant=user.tenant, scopes=("finance:read",))

    # The victim, the legitimate way: through a Host that asks its user first.
    model = ScriptedModel([ToolRule(r"balance of (?P<acct>[A-Z]+-\d+)", "get_balance", {"account": "{acct}"})])
    host = Host(model=model, user=ScriptedUser(approvals=[True]), approval_policy=ApprovalPolicy("always"),
                sim=ctx.sim)
    async with host:
        await host.add_server("finance", server, revision=LATEST, auth=identity(victim))
        own = await host.chat(f"What is the balance of {victim_acct}?")

    # The attacker: their own client, a valid token of their own tenant, no Host, no dialog.
    with ctx.attack(links=("finance-direct",)):
        async with ctx.client("finance-direct", server, auth=identity(attacker)) as client:
            result = await client.call_tool("get_balance", {"account": victim_acct})
    obtained = result.get("structuredContent") if not result.get("isError") else None
    refusal = result["content"][0]["text"] if result.get("isError") else ""
    return Outcome(
        succeeded=obtained is not None and obtained.get("balance") == balance,
        evidence={"victim": victim.subject, "victim_tenant": victim.tenant, "attacker": attacker.subject,
                  "attacker_tenant": attacker.tenant, "account": victim_acct, "victim_saw": own,
                  "attacker_got": obtained, "refusal": refusal},
        obtained=(f"({attacker.subject} of {attacker.tenant}) read account {victim_acct} of {victim.tenant}: "
                  f"balance {balance} EUR"),
        stopped_by=(f"the finance Server looked {victim_acct} up in {attacker.tenant}'s books only (the tenant of "
                    f"the caller's token) and answered: {refusal}"),
    )


# --------------------------------------------------------------------------------------------------
# A list cache shared across tenants
# --------------------------------------------------------------------------------------------------

CACHE = LabFacts(
    title="List cache shared across tenants",
    attacker="a user of another tenant on the same gateway Host",
    goal="the tool list made for another tenant",
    mistake=("the gateway's cache keyed tools/list by server and method only, and the Server labelled a "
             "tenant-specific list cacheScope \"public\", so the first tenant's list was served to the next"),
    boundary="the cache key: the authorization context, honoured for every \"private\" entry",
    fix=("the Server marks a list that depends on the caller cacheScope \"private\", and the cache keys such "
         "entries by the caller's subject and tenant, so each tenant only ever sees its own list"),
    rule=("Caches must be isolated by authorization context: \"private\" caches MUST NOT be shared across "
          "authorization contexts (spec 2026-07-28, caching; course 5.3.1)."),
    roles="Two real Clients sharing one ListCache (the simulator's own, mcp_sim.roles.cache) and the simulator's "
          "Server with per-tenant tools (visible=); the vulnerable cache is a ListCache subclass that ignores the "
          "context, and the vulnerable Server a Server subclass that says its tool list is the same for everyone.",
)


class ContextBlindCache(ListCache):
    """The mistake: a cache that files every entry under one key for everybody."""

    def get(self, server: str, auth: AuthorizationContext, method: str, key: str | None) -> dict[str, Any] | None:
        return super().get(server, ANONYMOUS, method, key)

    def put(self, server: str, auth: AuthorizationContext, method: str, key: str | None,
            result: dict[str, Any], *, mrtr_retry: bool = False) -> bool:
        return super().put(server, ANONYMOUS, method, key, result, mrtr_retry=mrtr_retry)


class MislabelledServer(Server):
    """The mistake on the server side: its tool list depends on the tenant, but it says otherwise, so
    ``tools/list`` goes out with ``cacheScope: "public"``."""

    def tools_depend_on_caller(self) -> bool:
        return False


async def cache_story(ctx: LabContext) -> Outcome:
    rng = ctx.rng
    directory = Directory.random(rng, tenants=2)
    first, second = list(directory.users.values())
    payroll = {u.tenant: f"DE{rng.randint(10**15, 10**16 - 1)}" for u in (first, second)}

    hr = Server("hr", version="1.0.0") if ctx.fixed else MislabelledServer("hr", version="1.0.0")

    @hr.tool(annotations={"readOnlyHint": True})
    def list_employees() -> list[str]:
        """Employees of your organisation."""
        return []

    for tenant, account in payroll.items():
        def export(tenant: str = tenant) -> str:
            return f"exported {tenant}'s payroll"

        hr.add_tool(export, name=f"export_payroll_{tenant.replace('-', '_')}",
                    description=f"Export {tenant}'s payroll to account {account}.",
                    visible=lambda auth, t=tenant: auth is not None and auth.tenant == t)
    cache = ListCache(ctx.sim.now) if ctx.fixed else ContextBlindCache(ctx.sim.now)
    seen: dict[str, list[str]] = {}
    for i, user in enumerate((first, second)):
        auth = AuthInfo(subject=user.subject, tenant=user.tenant, scopes=("hr:read",))
        stream = ctx.serve("hr", hr, auth=auth)
        client = Client("gateway", era="modern", versions=(LATEST,), cache=cache, auth=auth, sim=ctx.sim)
        await client.connect(stream, ctx.tg)
        hits = cache.hits
        with ctx.attack(links=("hr",)) if i == 1 else _nothing():
            seen[user.tenant] = [t["name"] + ": " + t.get("description", "") for t in await client.list_all_tools()]
            if i == 1 and cache.hits > hits:
                ctx.note("client/hr", "host", f"tools/list for {user.subject}@{user.tenant} answered from the cache "
                         f"entry stored for {first.subject}@{first.tenant}", attack=True)
        await client.close()
    leaked = [t for t in seen[second.tenant] if payroll[first.tenant] in t]
    return Outcome(
        succeeded=bool(leaked),
        evidence={"first_tenant": first.tenant, "second_tenant": second.tenant, "second_saw": seen[second.tenant],
                  "leaked": leaked, "cache_keys": [str(k[1]) for k in cache.keys()]},
        obtained=f"({second.tenant}) was shown {first.tenant}'s payroll tool and account {payroll[first.tenant]}",
        stopped_by=(f"the cache held {len(cache.keys())} separate entries "
                    f"({', '.join(str(k[1]) for k in cache.keys())}), and {second.tenant} was sent its own list"),
    )


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


# --------------------------------------------------------------------------------------------------
# State handle hijacking (2026-07-28)
# --------------------------------------------------------------------------------------------------

HANDLES = LabFacts(
    title="State-handle hijacking",
    attacker="another user of the same Server",
    goal="a draft another user stored behind a state handle",
    mistake=("the Server minted sequential state handles and treated possession of a handle as permission, "
             "so a neighbour's handle could be guessed and used by anybody"),
    boundary="the Server's binding of each state handle to the authenticated user who created it",
    fix=("handles are long random strings with an expiry, and every use checks that the caller is the "
         "user the handle was minted for"),
    rule=("Possession of a state handle is not authentication: use random handles, expire them, and bind "
          "them to the authenticated user (Security Best Practices, State Handle Hijacking, 2026-07-28)."),
    roles="Real Clients and the simulator's own Server (ctx.auth); state handles are passed as tool arguments.",
)


async def handle_story(ctx: LabContext) -> Outcome:
    rng = ctx.rng
    directory = Directory.random(rng, tenants=1, users_per_tenant=2)
    victim, attacker = list(directory.users.values())
    secret = f"merger with {pick_name(rng, 'tenant')} at {rng.randint(20, 90)} EUR/share"
    drafts: dict[str, dict[str, Any]] = {}
    for _ in range(rng.randint(0, 4)):  # other users' drafts before ours
        ctx.sim.next_number("draft")

    server = Server("drafts", version="1.0.0", per_caller=True)

    @server.tool()
    def create_draft(text: str, call: Context) -> DraftHandle:
        """Store a draft; returns its handle."""
        handle = f"draft_{ctx.sim.token(16)}" if ctx.fixed else f"draft-{ctx.sim.next_number('draft')}"
        owner = call.auth.subject if call.auth else None
        drafts[handle] = {"text": text, "owner": owner, "expires": call.now() + 600}
        return {"handle": handle}

    @server.tool(annotations={"readOnlyHint": True})
    def read_draft(handle: str, call: Context) -> str:
        """Read a draft by its handle."""
        draft = drafts.get(handle)
        if draft is None:
            raise KeyError("no such draft")
        if ctx.fixed:
            authorize(call.auth, "read_draft", owner=draft["owner"])
            if call.now() >= draft["expires"]:
                raise PermissionError("this handle has expired")
        return str(draft["text"])

    async with ctx.client("drafts", server, auth=AuthInfo(victim.subject, victim.tenant)) as mine:
        victim_handle = (await mine.call_tool("create_draft", {"text": secret}))["structuredContent"]["handle"]
    stolen: list[str] = []
    refusals: list[str] = []
    async with ctx.client("drafts-attacker", server, auth=AuthInfo(attacker.subject, attacker.tenant)) as theirs:
        own = (await theirs.call_tool("create_draft", {"text": "hello"}))["structuredContent"]["handle"]
        # Guess the neighbours of our own handle, then try a handle leaked in a shared log line.
        guesses = []
        if own.startswith("draft-"):
            n = int(own.split("-")[1])
            guesses = [f"draft-{i}" for i in range(max(1, n - 3), n)]
        else:
            guesses = [f"draft_{ctx.sim.token(16)}" for _ in range(3)]
        with ctx.attack(links=("drafts-attacker",)):
            for handle in [*guesses, victim_handle]:
                result = await theirs.call_tool("read_draft", {"handle": handle})
                text = result["content"][0]["text"]
                (refusals if result.get("isError") else stolen).append(text)
    return Outcome(
        succeeded=secret in stolen,
        evidence={"victim": victim.subject, "attacker": attacker.subject, "victim_handle": victim_handle,
                  "guesses": guesses, "stolen": stolen, "refusals": refusals},
        obtained=f"({attacker.subject}) read {victim.subject}'s draft \"{secret}\"",
        stopped_by=f"{len(refusals)} attempts were refused: " + "; ".join(sorted(set(refusals))),
    )


# --------------------------------------------------------------------------------------------------
# Token passthrough / audience validation
# --------------------------------------------------------------------------------------------------

PASSTHROUGH = LabFacts(
    title="Token passthrough (audience not validated)",
    attacker="a malicious MCP server the victim also uses",
    goal="the victim's private issues on another MCP server",
    mistake=("the issues Server checked that the bearer token was genuine and unexpired but not that it was "
             "issued for the issues Server, so a token the victim sent to a different Server worked there too"),
    boundary="audience validation at the resource server (the MCP Server's HTTP layer)",
    fix="the issues Server accepts only tokens whose audience is its own canonical URI and answers 401 otherwise",
    rule=("MCP servers MUST NOT accept any tokens that were not explicitly issued for the MCP server "
          "(Security Best Practices, Token Passthrough)."),
    roles="A real Client over the simulator's Streamable HTTP transport, whose token_validator is "
          "mcp_sim.security.tokens; the issues Server is the simulator's own.",
)


async def passthrough_story(ctx: LabContext) -> Outcome:
    rng = ctx.rng
    directory = Directory.random(rng, tenants=1)
    victim = next(iter(directory.users.values()))
    evil = pick_name(rng, "server")
    issues_uri, evil_uri = "https://issues.example/mcp", f"https://{evil}.example/mcp"
    auth_server = AuthorizationServer("https://login.example", lambda: ctx.sim.token(16), ctx.sim.now_ms)
    private = [f"SEC-{rng.randint(100, 999)}: {pick_name(rng, 'server')} credentials rotated" for _ in range(2)]

    issues = Server("issues", version="1.0.0", per_caller=True)

    @issues.tool(annotations={"readOnlyHint": True})
    def list_issues(call: Context) -> str:
        """Your private issues."""
        authorize(call.auth, "list_issues", scopes=("issues:read",))
        assert call.auth is not None
        return "\n".join(private) if call.auth.subject == victim.subject else "(none)"

    rejections: list[str] = []

    def validate(value: str) -> AuthInfo | None:
        """The resource server's token check, in the HTTP layer in front of the MCP Server."""
        try:
            return auth_server.validate(value, audience=issues_uri, check_audience=ctx.fixed)
        except TokenRejected as exc:
            rejections.append(f"HTTP {exc.status}: {exc.reason}")
            return None

    http = SimulatedHttpServer(ctx.sim, ctx.tg, "issues", server_main(issues), versions=[LATEST],
                               token_validator=validate, resource_metadata=f"{issues_uri}/.well-known")

    # The victim's Host obtained a token for the other server and sent it there, as it should.
    token = auth_server.issue(victim, client_id="victim-host", audience=evil_uri,
                              scopes=("issues:read", "profile"))
    ctx.note(f"client/{evil}", f"server/{evil}", f"POST {evil_uri} with Authorization: Bearer {token.value[:10]}…")
    # The malicious server replays it against the issues server, as an MCP client of its own.
    got: list[str] = []
    rejected = ""
    with ctx.attack(links=("issues",)):
        ctx.note(f"server/{evil}", "server/issues", f"POST {issues_uri} with the victim's bearer token", attack=True)
        client = Client(evil, era="modern", versions=(LATEST,), sim=ctx.sim, timeout=5.0)
        try:
            await client.connect(http.connect("issues", token=token.value, revision=LATEST), ctx.tg)
            result = await client.call_tool("list_issues", {})
            got = [line for line in result["content"][0]["text"].splitlines() if line.startswith("SEC-")]
        except (McpError, TransportClosed) as exc:
            rejected = "; ".join(rejections) or str(exc)
        await client.close()
    return Outcome(
        succeeded=bool(got) and set(got) == set(private),
        evidence={"victim": victim.subject, "token_audience": token.audience, "presented_to": issues_uri,
                  "obtained": got, "rejected": rejected},
        obtained=f"replayed a token issued for {evil_uri} at {issues_uri} and read {len(got)} private issue(s)",
        stopped_by=f"the issues Server answered {rejected}",
    )


LABS: Final = (
    Lab("host-approval-not-authorization", APPROVAL, approval_story),
    Lab("list-cache-shared", CACHE, cache_story),
    Lab("state-handle-hijacking", HANDLES, handle_story),
    Lab("token-passthrough", PASSTHROUGH, passthrough_story),
)
"""The labs of this module, in the order the course presents them."""
