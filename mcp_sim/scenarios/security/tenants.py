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

from typing import Any

from mcp_sim.protocol.revisions import LATEST
from mcp_sim.roles.cache import ANONYMOUS, AuthorizationContext, ListCache
from mcp_sim.roles.client import Client
from mcp_sim.roles.host import ApprovalPolicy, Host
from mcp_sim.roles.model import ScriptedModel, ToolRule
from mcp_sim.roles.user import ScriptedUser
from mcp_sim.security.authorization import AuditLog, authorize
from mcp_sim.security.identity import Directory, pick_name
from mcp_sim.security.lab import LabContext, LabFacts, Outcome, register
from mcp_sim.security.lab_server import LabServer, ToolContext, text_result, tool_definition
from mcp_sim.security.tokens import AuthorizationServer, TokenRejected
from mcp_sim.transports.base import AuthInfo

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
    fix=("the Server checks, on every call and from the caller's authenticated identity, the token's "
         "scope, the account's tenant and its owner before reading anything"),
    rule=("Host confirmation cannot replace Server permission checks: the Server should verify identity, "
          "scopes, tenant and object ownership for each operation (course 5.2.3)."),
    roles="Host, Client, ScriptedModel and ScriptedUser are the simulator's own; the finance Server is a LabServer.",
)


@register("host-approval-not-authorization", APPROVAL)
async def approval_story(ctx: LabContext) -> Outcome:
    rng = ctx.rng
    directory = Directory.random(rng, tenants=2)
    victim, attacker = list(directory.users.values())
    accounts: dict[str, dict[str, Any]] = {}
    for owner in (victim, attacker):
        acct = f"acct-{rng.randint(1000, 9999)}"
        accounts[acct] = {"tenant": owner.tenant, "owner": owner.subject,
                          "balance": rng.randint(1_000, 90_000), "holder": owner.subject}
    victim_acct = next(a for a, v in accounts.items() if v["owner"] == victim.subject)
    audit = AuditLog()

    def get_statement(call: ToolContext) -> dict[str, Any]:
        acct_id = str(call.arguments.get("account_id"))
        acct = accounts.get(acct_id)
        if acct is None:
            return text_result(f"no account {acct_id}", is_error=True)
        if ctx.fixed:
            authorize(call.auth, "get_statement", scopes=("statements:read",), tenant=acct["tenant"],
                      owner=acct["owner"], audit=audit)
        return text_result(f"{acct_id}: balance {acct['balance']} EUR, holder {acct['holder']}",
                           structured={"account": acct_id, **acct})

    finance = LabServer("finance")
    finance.add_tool(tool_definition("get_statement", "The statement of one of your accounts.",
                                     {"account_id": {"type": "string"}}, required=("account_id",),
                                     annotations={"readOnlyHint": True}), get_statement)

    def identity(user: Any) -> AuthInfo:
        return AuthInfo(subject=user.subject, tenant=user.tenant, scopes=("statements:read",))

    # The victim, the legitimate way: through a Host that asks its user first.
    model = ScriptedModel([ToolRule(r"statement for (?P<acct>acct-\d+)", "get_statement", {"account_id": "{acct}"})])
    host = Host(model=model, user=ScriptedUser(approvals=[True]), approval_policy=ApprovalPolicy("always"),
                sim=ctx.sim)
    async with host:
        await host.add_server("finance", finance.main, revision=LATEST, auth=identity(victim))
        own = await host.chat(f"Show me the statement for {victim_acct}")

    # The attacker: their own client, a valid token of their own tenant, no Host, no dialog.
    with ctx.attack(links=("finance-direct",)):
        async with ctx.client("finance-direct", finance.main, auth=identity(attacker)) as client:
            result = await client.call_tool("get_statement", {"account_id": victim_acct})
    obtained = result.get("structuredContent") if not result.get("isError") else None
    denied = audit.denied()
    return Outcome(
        succeeded=obtained is not None and obtained.get("balance") == accounts[victim_acct]["balance"],
        evidence={"victim": victim.subject, "victim_tenant": victim.tenant, "attacker": attacker.subject,
                  "attacker_tenant": attacker.tenant, "account": victim_acct, "victim_saw": own,
                  "attacker_got": obtained, "denied": [d.detail for d in denied]},
        obtained=(f"({attacker.subject} of {attacker.tenant}) read statement {victim_acct} of {victim.tenant}: "
                  f"balance {accounts[victim_acct]['balance']} EUR"),
        stopped_by="; ".join(f"the {d.check} check refused: {d.detail}" for d in denied),
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
    roles="Two real Clients sharing one ListCache (the simulator's own, mcp_sim.roles.cache); the vulnerable "
          "cache is a ListCache subclass that ignores the context; the Server is a LabServer.",
)


class ContextBlindCache(ListCache):
    """The mistake: a cache that files every entry under one key for everybody."""

    def get(self, server: str, auth: AuthorizationContext, method: str, key: str | None) -> dict[str, Any] | None:
        return super().get(server, ANONYMOUS, method, key)

    def put(self, server: str, auth: AuthorizationContext, method: str, key: str | None,
            result: dict[str, Any], *, mrtr_retry: bool = False) -> bool:
        return super().put(server, ANONYMOUS, method, key, result, mrtr_retry=mrtr_retry)


@register("list-cache-shared", CACHE)
async def cache_story(ctx: LabContext) -> Outcome:
    rng = ctx.rng
    directory = Directory.random(rng, tenants=2)
    first, second = list(directory.users.values())
    payroll = {u.tenant: f"DE{rng.randint(10**15, 10**16 - 1)}" for u in (first, second)}

    def tools_for(auth: AuthInfo | None) -> list[dict[str, Any]]:
        tenant = auth.tenant if auth else None
        common = [tool_definition("list_employees", "Employees of your organisation.")]
        if tenant in payroll:
            slug = tenant.replace("-", "_")
            common.append(tool_definition(f"export_payroll_{slug}",
                                          f"Export {tenant}'s payroll to account {payroll[tenant]}."))
        return common

    hr = LabServer("hr", cache_scope="private" if ctx.fixed else "public", list_for=tools_for)
    cache = ListCache(ctx.sim.now) if ctx.fixed else ContextBlindCache(ctx.sim.now)
    seen: dict[str, list[str]] = {}
    for i, user in enumerate((first, second)):
        auth = AuthInfo(subject=user.subject, tenant=user.tenant, scopes=("hr:read",))
        stream = ctx.serve("hr", hr.main, auth=auth)
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
    roles="Real Clients; the drafts Server is a LabServer (state handles passed as tool arguments).",
)


@register("state-handle-hijacking", HANDLES)
async def handle_story(ctx: LabContext) -> Outcome:
    rng = ctx.rng
    directory = Directory.random(rng, tenants=1, users_per_tenant=2)
    victim, attacker = list(directory.users.values())
    secret = f"merger with {pick_name(rng, 'tenant')} at {rng.randint(20, 90)} EUR/share"
    drafts: dict[str, dict[str, Any]] = {}
    for _ in range(rng.randint(0, 4)):  # other users' drafts before ours
        ctx.sim.next_number("draft")

    def create_draft(call: ToolContext) -> dict[str, Any]:
        handle = f"draft_{ctx.sim.token(16)}" if ctx.fixed else f"draft-{ctx.sim.next_number('draft')}"
        owner = call.auth.subject if call.auth else None
        drafts[handle] = {"text": call.arguments.get("text", ""), "owner": owner, "expires": call.now_ms + 600_000}
        return text_result(handle, structured={"handle": handle})

    def read_draft(call: ToolContext) -> dict[str, Any]:
        draft = drafts.get(str(call.arguments.get("handle")))
        if draft is None:
            return text_result("no such draft", is_error=True)
        if ctx.fixed:
            authorize(call.auth, "read_draft", owner=draft["owner"])
            if call.now_ms >= draft["expires"]:
                return text_result("this handle has expired", is_error=True)
        return text_result(draft["text"])

    server = LabServer("drafts")
    server.add_tool(tool_definition("create_draft", "Store a draft; returns its handle.",
                                    {"text": {"type": "string"}}), create_draft)
    server.add_tool(tool_definition("read_draft", "Read a draft by its handle.",
                                    {"handle": {"type": "string"}}), read_draft)

    async with ctx.client("drafts", server.main, auth=AuthInfo(victim.subject, victim.tenant)) as mine:
        victim_handle = (await mine.call_tool("create_draft", {"text": secret}))["structuredContent"]["handle"]
    stolen: list[str] = []
    refusals: list[str] = []
    async with ctx.client("drafts-attacker", server.main, auth=AuthInfo(attacker.subject, attacker.tenant)) as theirs:
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
    roles="The token check is mcp_sim.security.tokens, applied where the HTTP layer would apply it; the MCP "
          "exchange is a real Client over a memory link to a LabServer.",
)


@register("token-passthrough", PASSTHROUGH)
async def passthrough_story(ctx: LabContext) -> Outcome:
    rng = ctx.rng
    directory = Directory.random(rng, tenants=1)
    victim = next(iter(directory.users.values()))
    evil = pick_name(rng, "server")
    issues_uri, evil_uri = "https://issues.example/mcp", f"https://{evil}.example/mcp"
    auth_server = AuthorizationServer("https://login.example", lambda: ctx.sim.token(16), ctx.sim.now_ms)
    private = [f"SEC-{rng.randint(100, 999)}: {pick_name(rng, 'server')} credentials rotated" for _ in range(2)]

    def list_issues(call: ToolContext) -> dict[str, Any]:
        authorize(call.auth, "list_issues", scopes=("issues:read",))
        assert call.auth is not None
        return text_result("\n".join(private) if call.auth.subject == victim.subject else "")

    issues = LabServer("issues")
    issues.add_tool(tool_definition("list_issues", "Your private issues."), list_issues)

    # The victim's Host obtained a token for the other server and sent it there, as it should.
    token = auth_server.issue(victim, client_id="victim-host", audience=evil_uri,
                              scopes=("issues:read", "profile"))
    ctx.note(f"client/{evil}", f"server/{evil}", f"POST {evil_uri} with Authorization: Bearer {token.value[:10]}…")
    # The malicious server replays it against the issues server.
    got: list[str] = []
    rejected = ""
    with ctx.attack(links=("issues",)):
        ctx.note(f"server/{evil}", "server/issues", f"POST {issues_uri} with the victim's bearer token", attack=True)
        try:
            auth = auth_server.validate(token.value, audience=issues_uri, check_audience=ctx.fixed)
        except TokenRejected as exc:
            rejected = f"HTTP {exc.status}: {exc.reason}"
            ctx.note("server/issues", f"server/{evil}", rejected + f" ({exc.www_authenticate})", attack=True)
        else:
            async with ctx.client("issues", issues.main, auth=auth, client_name=evil) as client:
                result = await client.call_tool("list_issues", {})
                got = [line for line in result["content"][0]["text"].splitlines() if line]
    return Outcome(
        succeeded=bool(got) and set(got) == set(private),
        evidence={"victim": victim.subject, "token_audience": token.audience, "presented_to": issues_uri,
                  "obtained": got, "rejected": rejected},
        obtained=f"replayed a token issued for {evil_uri} at {issues_uri} and read {len(got)} private issue(s)",
        stopped_by=f"the issues Server answered {rejected}",
    )

