"""Labs about *who* is calling: multi-tenant Servers and the caller's authorization context.

* ``host-approval-not-authorization`` — the Server trusts that a Host asked its user; another caller
  never asks anybody and reads another tenant's statement (rule tools.servers-validate-inputs);
* ``list-cache-shared`` — a gateway's list cache serves one authorization context the tool list made
  for another: the same user's narrowly scoped client gets the list of the fully scoped one (spec
  2026-07-28 caching: ``cacheScope: "private"`` MUST NOT be shared across authorization contexts);
* ``state-handle-hijacking`` — a guessable, unbound state handle lets one user read another's draft
  (Security Best Practices, State Handle Hijacking);
* ``token-passthrough`` — a Server accepts a token issued for a different Server (audience) and acts
  as the victim (Security Best Practices, Token Passthrough).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, TypedDict

from mcp_sim.capabilities.context import Context
from mcp_sim.protocol.errors import McpError
from mcp_sim.protocol.revisions import LATEST
from mcp_sim.roles.cache import AuthorizationContext, ListCache
from mcp_sim.roles.client import Client
from mcp_sim.roles.host import Host
from mcp_sim.roles.model import ScriptedModel, ToolRule
from mcp_sim.roles.server import Server
from mcp_sim.roles.user import ScriptedUser
from mcp_sim.security.authorization import AccessDenied, authorize
from mcp_sim.security.host_policy import ApprovalPolicy
from mcp_sim.security.identity import AuthInfo, Directory, User, pick_name
from mcp_sim.security.lab import Lab, LabContext, LabFacts, Outcome, server_main
from mcp_sim.security.oauth import protected_resource_metadata
from mcp_sim.security.tokens import AuthorizationServer, TokenRejected
from mcp_sim.sim.world import Simulation
from mcp_sim.transports.base import TransportClosed
from mcp_sim.transports.http_server import SimulatedHttpServer


class DraftHandle(TypedDict):
    handle: str


class Balance(TypedDict):
    account: str
    balance: int
    currency: str

# --------------------------------------------------------------------------------------------------
# Host approval is not Server authorization
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Account:
    """One account in the finance Server's books: whose it is and what is on it."""

    number: str
    tenant: str
    owner: str
    entries: tuple[int, ...]


@dataclass(frozen=True)
class ServerChecks:
    """What the Server checks on every call before it touches an account (raises :class:`AccessDenied`)."""

    check: Callable[[AuthInfo | None, Account], None]


def check_nothing(auth: AuthInfo | None, account: Account) -> None:
    """The mistake: "the Host asked its user", so the Server checks nothing itself."""


def check_everything(auth: AuthInfo | None, account: Account) -> None:
    """The fix: identity, scope, tenant and ownership, from the caller's authenticated identity."""
    authorize(auth, "get_balance", scopes=("finance:read",), tenant=account.tenant, owner=account.owner)


APPROVAL = LabFacts(
    layer="roles",
    summary="A Server that relies on the Host's approval serves anybody who calls it directly.",
    title="Host approval mistaken for Server authorization",
    attacker="another caller of the same finance Server, through a client of their own",
    controls="their own valid token (their tenant, their scopes) and every argument they send; no Host, no dialog",
    goal="another user's account statement",
    mistake=("the Server assumed every call had been confirmed by a user in a Host, so it checked nothing "
             "itself; a caller that is not that Host never shows anybody a confirmation dialog"),
    boundary="the Server's per-operation authorization (identity, scope, tenant, object ownership)",
    fix=("on every call the Server takes the caller from ctx.auth (set by the transport) and checks the token's "
         "scope (finance:read), the account's tenant and the account's owner before reading anything, whatever "
         "the arguments say"),
    rule=("the Host's confirmation does not replace the server's own checks: the server verifies the caller, "
          "the scope, the tenant and the object's owner on every call."),
    rules=("tools.servers-validate-inputs", "security.bp.verify-every-request"),
    not_covered="a stolen token of the account's owner (that is the authorization server's and the client's "
                "problem) and what the owner's own Host lets its model do",
    roles="Host, Client, ScriptedModel and ScriptedUser are the simulator's own, and so is the finance Server; "
          "the defence is the check its handler runs (mcp_sim.security.authorization.authorize).",
)


def finance_server(books: dict[str, Account], checks: ServerChecks) -> Server:
    server = Server("finance", version="1.0.0", title="Finance", per_caller=True)

    @server.tool(annotations={"readOnlyHint": True})
    def get_balance(account: str, call: Context) -> Balance:
        """The balance of one account."""
        record = books.get(account)
        if record is None:
            raise KeyError(f"no account {account}")
        checks.check(call.auth, record)
        return {"account": account, "balance": sum(record.entries), "currency": "EUR"}

    return server


async def approval_story(ctx: LabContext, defence: ServerChecks) -> Outcome:
    rng = ctx.rng
    directory = Directory.random(rng, tenants=2, users_per_tenant=2)
    users = list(directory.users.values())
    victim = users[0]
    books: dict[str, Account] = {}
    for owner in users:
        number = f"{owner.tenant.split('-')[0].upper()}-{rng.randint(100, 999)}"
        books[number] = Account(number, owner.tenant, owner.subject,
                                (rng.randint(1_000, 90_000), -rng.randint(10, 900)))
    victim_acct = next(n for n, a in books.items() if a.owner == victim.subject)
    balance = sum(books[victim_acct].entries)
    server = finance_server(books, defence)
    # main: a user of another tenant; same-tenant: a colleague of the victim; missing-scope: a client the
    # victim authorised for their profile only, holding the victim's own identity.
    callers = {"main": AuthInfo(users[2].subject, users[2].tenant, scopes=("finance:read",)),
               "same-tenant": AuthInfo(users[1].subject, users[1].tenant, scopes=("finance:read",)),
               "missing-scope": AuthInfo(victim.subject, victim.tenant, scopes=("profile",), client_id="app")}
    attacker = callers[ctx.variant]

    # The victim, the legitimate way: through a Host that asks its user first.
    model = ScriptedModel([ToolRule(r"balance of (?P<acct>[A-Z]+-\d+)", "get_balance", {"account": "{acct}"})])
    host = Host(model=model, user=ScriptedUser(approvals=[True]), approval_policy=ApprovalPolicy("always"),
                sim=ctx.sim)
    async with host:
        await host.add_server("finance", server, revision=LATEST,
                              auth=AuthInfo(victim.subject, victim.tenant, scopes=("finance:read",)))
        own = await host.chat(f"What is the balance of {victim_acct}?")

    with ctx.attack(links=("finance-direct",)):
        async with ctx.client("finance-direct", server, auth=attacker) as client:
            result = await client.call_tool("get_balance", {"account": victim_acct})
    obtained = result.get("structuredContent") if not result.get("isError") else None
    refusal = result["content"][0]["text"] if result.get("isError") else ""
    return Outcome(
        succeeded=obtained is not None and obtained.get("balance") == balance,
        evidence={"victim": victim.subject, "victim_tenant": victim.tenant, "attacker": attacker.subject,
                  "attacker_tenant": attacker.tenant, "attacker_scopes": list(attacker.scopes), "account": victim_acct,
                  "victim_saw": own, "attacker_got": obtained, "refusal": refusal, "variant": ctx.variant},
        legitimate=str(balance) in own,
        obtained=(f"({attacker.subject} of {attacker.tenant}, scopes {' '.join(attacker.scopes)}) read account "
                  f"{victim_acct} of {victim.subject}: balance {balance} EUR"),
        stopped_by=f"the finance Server checked the caller's token against the account and answered: {refusal}",
    )


# --------------------------------------------------------------------------------------------------
# A list cache shared across authorization contexts
# --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CacheKeying:
    """The gateway's list cache, built on the virtual clock."""

    cache: Callable[[Callable[[], float]], ListCache]


class UserKeyedCache(ListCache):
    """The narrow key: private entries filed by subject and tenant only, so every client and every grant
    of the same user shares them."""

    @staticmethod
    def _narrow(auth: AuthorizationContext) -> AuthorizationContext:
        return AuthorizationContext(auth.subject, auth.tenant)

    def get(self, server: str, auth: AuthorizationContext, method: str, key: str | None) -> dict[str, Any] | None:
        return super().get(server, self._narrow(auth), method, key)

    def put(self, server: str, auth: AuthorizationContext, method: str, key: str | None,
            result: dict[str, Any], *, mrtr_retry: bool = False) -> bool:
        return super().put(server, self._narrow(auth), method, key, result, mrtr_retry=mrtr_retry)


class GrantKeyedCache(UserKeyedCache):
    """A less narrow key that is still too narrow: subject, tenant and scopes, but not the client or
    the audience."""

    @staticmethod
    def _narrow(auth: AuthorizationContext) -> AuthorizationContext:
        return AuthorizationContext(auth.subject, auth.tenant, auth.scopes)


CACHE = LabFacts(
    layer="capabilities",
    summary="A cached tool list made for one grant is served to another client or grant.",
    title="List cache shared across authorization contexts",
    attacker="a third-party app the user authorised with a narrow grant, sharing the user's gateway",
    controls="its own client id and its own (narrow) token; it asks the gateway for the tool list",
    goal="the tool list — and the data in it — made for the user's fully privileged client",
    mistake=("the gateway keyed private cache entries by user and tenant only, so a list made for one client and "
             "grant of the user was served to another client or grant of the same user"),
    boundary="the cache key: the whole authorization context of every private entry",
    fix=("private entries are keyed by subject, tenant, client id, scopes and audience together "
         "(AuthorizationContext.of), so a list is only ever served to the exact grant it was made for (this "
         "simulator's reading of an authorization context; the spec's example, one cache per access token, is "
         "stricter)"),
    rule=("a private cached list is never served across authorization contexts; the spec's own example asks "
          "for one cache per access token, and this simulator keys by the grant instead (its choice)."),
    rules=("caching.private-not-shared", "security.cache.key-by-grant",
           "caching.scope-is-not-access-control"),
    not_covered=("a server that labels a caller-dependent list \"public\" (its own bug), and calls: the Server must "
                 "still check scopes on tools/call whatever list a client saw"),
    roles="Real Clients sharing one ListCache (the simulator's own, mcp_sim.roles.cache) and the simulator's Server "
          "with grant-dependent tools (visible=); the narrow cache is a ListCache subclass.",
)


async def cache_story(ctx: LabContext, defence: CacheKeying) -> Outcome:
    rng = ctx.rng
    directory = Directory.random(rng, tenants=2)
    user, outsider = list(directory.users.values())
    account = f"DE{rng.randint(10**15, 10**16 - 1)}"
    hr = Server("hr", version="1.0.0")

    @hr.tool(annotations={"readOnlyHint": True})
    def list_employees() -> list[str]:
        """Employees of your organisation."""
        return []

    def export() -> str:
        return "exported"

    hr_uri = "https://hr.example/mcp"

    def may_export(auth: AuthInfo | None) -> bool:
        """The admin tool is offered to the tenant's admins, through the first-party IDE, with a token for
        this server — the list depends on every part of the grant."""
        return auth is not None and auth.tenant == user.tenant and "hr:admin" in auth.scopes \
            and auth.client_id == "ide" and auth.audience == hr_uri

    hr.add_tool(export, name="export_payroll", description=f"Export {user.tenant}'s payroll to account {account}.",
                visible=may_export)
    full = AuthInfo(user.subject, user.tenant, scopes=("hr:read", "hr:admin"), client_id="ide", audience=hr_uri)
    second = {"main": AuthInfo(user.subject, user.tenant, scopes=("hr:read",), client_id="calendar-app",
                               audience=hr_uri),
              "other-scopes": AuthInfo(user.subject, user.tenant, scopes=("hr:read",), client_id="ide",
                                       audience=hr_uri),
              "other-client": AuthInfo(user.subject, user.tenant, scopes=full.scopes, client_id="calendar-app",
                                       audience=hr_uri),
              "other-audience": AuthInfo(user.subject, user.tenant, scopes=full.scopes, client_id="ide",
                                         audience="https://reports.example/mcp"),
              "other-tenant": AuthInfo(outsider.subject, outsider.tenant, scopes=("hr:read",),
                                       client_id="calendar-app", audience=hr_uri)}[ctx.variant]
    cache = defence.cache(ctx.sim.now)
    seen: list[list[str]] = []
    for i, auth in enumerate((full, second)):
        stream = ctx.serve("hr", hr, auth=auth)
        client = Client("gateway", era="modern", versions=(LATEST,), cache=cache, auth=auth, sim=ctx.sim)
        await client.connect(stream, ctx.tg)
        hits = cache.hits
        with ctx.attack(links=("hr",)) if i == 1 else _nothing():
            seen.append([t["name"] + ": " + t.get("description", "") for t in await client.list_all_tools()])
            if i == 1 and cache.hits > hits:
                ctx.note("client/hr", "host", f"tools/list for {AuthorizationContext.of(auth)} answered from the "
                         f"cache entry stored for {AuthorizationContext.of(full)}", attack=True)
        await client.close()
    leaked = [t for t in seen[1] if account in t]
    return Outcome(
        succeeded=bool(leaked),
        evidence={"first": str(AuthorizationContext.of(full)), "second": str(AuthorizationContext.of(second)),
                  "second_saw": seen[1], "leaked": leaked, "cache_keys": [str(k[1]) for k in cache.keys()],
                  "variant": ctx.variant},
        legitimate=any(account in t for t in seen[0]),
        obtained=(f"({AuthorizationContext.of(second)}) was shown the export_payroll tool and account {account}, "
                  f"made for {AuthorizationContext.of(full)}"),
        stopped_by=(f"the cache held {len(cache.keys())} separate entries "
                    f"({'; '.join(str(k[1]) for k in cache.keys())}), and the second caller was sent its own list"),
    )


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


# --------------------------------------------------------------------------------------------------
# State handle hijacking (2026-07-28)
# --------------------------------------------------------------------------------------------------

@dataclass
class HandleRecord:
    text: str
    principal: tuple[str | None, str | None, str | None]
    """(subject, tenant, client id) of the caller that created it."""
    expires: float


class HandlePolicy:
    """How the drafts Server mints handles and decides who may use one."""

    def mint(self, sim: Simulation) -> str:
        raise NotImplementedError

    def check(self, auth: AuthInfo | None, record: HandleRecord, now: float) -> None:
        raise NotImplementedError


class SequentialHandles(HandlePolicy):
    """The mistake: handles count up, and holding one is permission to use it."""

    def mint(self, sim: Simulation) -> str:
        return f"draft-{sim.next_number('draft')}"

    def check(self, auth: AuthInfo | None, record: HandleRecord, now: float) -> None:
        return None


def principal_of(auth: AuthInfo | None) -> tuple[str | None, str | None, str | None]:
    return (auth.subject, auth.tenant, auth.client_id) if auth else (None, None, None)


class BoundHandles(HandlePolicy):
    """The fix: long random handles, an expiry, and every use checked against the full principal that
    created the handle — subject, tenant and client."""

    def mint(self, sim: Simulation) -> str:
        return f"draft_{sim.token(16)}"

    def check(self, auth: AuthInfo | None, record: HandleRecord, now: float) -> None:
        subject, tenant, client_id = record.principal
        authorize(auth, "read_draft", tenant=tenant, owner=subject)
        if principal_of(auth) != record.principal:
            raise AccessDenied("ownership", f"the handle was issued to client {client_id!r}, not to this one")
        if now >= record.expires:
            raise PermissionError("this handle has expired")


@dataclass(frozen=True)
class Handles:
    policy: HandlePolicy


HANDLES = LabFacts(
    layer="capabilities",  # a 2026 state handle is a tool argument, not part of the transport
    summary="A guessable or leaked state handle lets another caller take over a user's state.",
    title="State-handle hijacking",
    attacker="another caller of the same Server — a neighbour in the tenant, or another client holding a handle",
    controls="their own valid token, and any handle they can guess or find (a log line, a shared link)",
    goal="a draft another user stored behind a state handle",
    mistake=("the Server minted sequential state handles and treated possession of a handle as permission, "
             "so a neighbour's handle could be guessed, and a leaked one used by anybody"),
    boundary="the Server's binding of each state handle to the full principal that created it",
    fix=("handles are long random strings with an expiry, and every use checks that the caller is the principal "
         "the handle was minted for: the same subject, tenant and client"),
    rule=("holding a state handle is not authentication: handles are random, may expire, and are bound to the "
          "user who created them."),
    rules=("security.bp.state-handle-not-auth", "security.bp.state-handle-random", "security.bp.state-handle-bind",
           "security.bp.verify-every-request"),
    not_covered="the owner's own client being compromised (it is the principal), and handles that are meant to "
                "be shared (they need an explicit grant)",
    roles="Real Clients and the simulator's own Server (ctx.auth); state handles are passed as tool arguments.",
)


async def handle_story(ctx: LabContext, defence: Handles) -> Outcome:
    rng = ctx.rng
    directory = Directory.random(rng, tenants=2, users_per_tenant=2)
    users = list(directory.users.values())
    victim = users[0]
    secret = f"merger with {pick_name(rng, 'tenant')} at {rng.randint(20, 90)} EUR/share"
    drafts: dict[str, HandleRecord] = {}
    for _ in range(rng.randint(0, 4)):  # other users' drafts before ours
        ctx.sim.next_number("draft")
    policy = defence.policy
    server = Server("drafts", version="1.0.0", per_caller=True)

    @server.tool()
    def create_draft(text: str, call: Context) -> DraftHandle:
        """Store a draft; returns its handle."""
        handle = policy.mint(ctx.sim)
        drafts[handle] = HandleRecord(text, principal_of(call.auth), call.now() + 600)
        return {"handle": handle}

    @server.tool(annotations={"readOnlyHint": True})
    def read_draft(handle: str, call: Context) -> str:
        """Read a draft by its handle."""
        record = drafts.get(handle)
        if record is None:
            raise KeyError("no such draft")
        policy.check(call.auth, record, call.now())
        return record.text

    victim_auth = AuthInfo(victim.subject, victim.tenant, client_id="editor")
    async with ctx.client("drafts", server, auth=victim_auth) as mine:
        victim_handle = (await mine.call_tool("create_draft", {"text": secret}))["structuredContent"]["handle"]
        reread = (await mine.call_tool("read_draft", {"handle": victim_handle}))["content"][0]["text"]
    attacker = {"main": AuthInfo(users[1].subject, users[1].tenant, client_id="editor"),
                "other-client": AuthInfo(victim.subject, victim.tenant, client_id="browser-extension"),
                "other-tenant": AuthInfo(victim.subject, users[2].tenant, client_id="editor")}[ctx.variant]
    stolen: list[str] = []
    refusals: list[str] = []
    async with ctx.client("drafts-attacker", server, auth=attacker) as theirs:
        own = (await theirs.call_tool("create_draft", {"text": "hello"}))["structuredContent"]["handle"]
        # Guess the neighbours of our own handle (the format says how), then try the leaked handle.
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
        evidence={"victim": str(AuthorizationContext.of(victim_auth)), "attacker": str(AuthorizationContext.of(attacker)),
                  "victim_handle": victim_handle, "guesses": guesses, "stolen": stolen, "refusals": refusals,
                  "variant": ctx.variant},
        legitimate=reread == secret,
        obtained=f"({AuthorizationContext.of(attacker)}) read {victim.subject}'s draft \"{secret}\"",
        stopped_by=f"{len(refusals)} attempts were refused: " + "; ".join(sorted(set(refusals))),
    )


# --------------------------------------------------------------------------------------------------
# Token passthrough / audience validation
# --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class AudienceCheck:
    """Whether the resource server checks that a token was issued for it."""

    check_audience: bool


ISSUES_URI: Final = "https://issues.example/mcp"
ISSUES_METADATA_URL: Final = "https://issues.example/.well-known/oauth-protected-resource/mcp"
"""Where the issues Server's 401 points and where it serves its Protected Resource Metadata: RFC 9728
§3.1 puts the well-known path between the host and the resource's path (``/mcp``)."""


def issues_endpoint(sim: Simulation, tg: Any, issues: Server, validate: Callable[[str], AuthInfo | None],
                    issuer: str) -> SimulatedHttpServer:
    """The issues Server behind its HTTP layer (the resource server): tokens checked by ``validate``,
    and its Protected Resource Metadata served, without a token, exactly where its 401 points."""
    return SimulatedHttpServer(sim, tg, "issues", server_main(issues), versions=[LATEST], token_validator=validate,
                               resource_metadata=ISSUES_METADATA_URL,
                               protected_resource=protected_resource_metadata(ISSUES_URI, [issuer], ("issues:read",)))


PASSTHROUGH = LabFacts(
    layer="authorization",
    summary="A Server accepts a token made for another audience and passes it upstream.",
    title="Token passthrough (audience not validated)",
    attacker="a malicious MCP server the victim also uses",
    controls="every token the victim's client sends it, and its own MCP client to other servers",
    goal="the victim's private issues on another MCP server",
    mistake=("the issues Server checked that the bearer token was genuine and unexpired but not that it was "
             "issued for the issues Server, so a token the victim sent to a different Server worked there too"),
    boundary="audience validation at the resource server (the MCP Server's HTTP layer)",
    fix=("the issues Server accepts only tokens whose audience is exactly its own canonical URI (no prefix or "
         "host-only match) and answers 401 otherwise"),
    rule=("a server accepts only tokens issued for itself — their audience names it — and never passes a "
          "client's token on."),
    rules=("auth.server-validates-audience",),
    not_covered="a token stolen for the issues Server itself, and a client that sends tokens to the wrong server "
                "(the client must bind each token to its resource, RFC 8707)",
    roles="A real Client over the simulator's Streamable HTTP transport, whose token_validator is "
          "mcp_sim.security.tokens; the issues Server is the simulator's own.",
)


async def passthrough_story(ctx: LabContext, defence: AudienceCheck) -> Outcome:
    rng = ctx.rng
    directory = Directory.random(rng, tenants=1)
    victim: User = next(iter(directory.users.values()))
    evil = pick_name(rng, "server")
    issues_uri = ISSUES_URI
    evil_uri = {"main": f"https://{evil}.example/mcp", "prefix-audience": f"{issues_uri}.{evil}.example/mcp",
                "sibling-path": "https://issues.example/mcp-uploads"}[ctx.variant]
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
            return auth_server.validate(value, audience=issues_uri, check_audience=defence.check_audience)
        except TokenRejected as exc:
            rejections.append(f"HTTP {exc.status}: {exc.reason}")
            return None

    http = issues_endpoint(ctx.sim, ctx.tg, issues, validate, auth_server.issuer)

    async def list_with(token: str, link: str, name: str) -> tuple[list[str], str]:
        client = Client(name, era="modern", versions=(LATEST,), sim=ctx.sim, timeout=5.0)
        try:
            await client.connect(http.connect(link, token=token, revision=LATEST), ctx.tg)
            result = await client.call_tool("list_issues", {})
            return [line for line in result["content"][0]["text"].splitlines() if line.startswith("SEC-")], ""
        except (McpError, TransportClosed) as exc:
            return [], "; ".join(rejections) or str(exc)
        finally:
            await client.close()

    # The victim's own client, with a token issued for the issues server: the legitimate use.
    own = auth_server.issue(victim, client_id="victim-host", audience=issues_uri, scopes=("issues:read",))
    mine, _ = await list_with(own.value, "issues-victim", "victim-host")
    # The victim's Host obtained a token for the other server and sent it there, as it should.
    token = auth_server.issue(victim, client_id="victim-host", audience=evil_uri, scopes=("issues:read", "profile"))
    ctx.note(f"client/{evil}", f"server/{evil}", f"POST {evil_uri} with Authorization: Bearer {token.value[:10]}…")
    # The malicious server replays it against the issues server, as an MCP client of its own.
    with ctx.attack(links=("issues",)):
        ctx.note(f"server/{evil}", "server/issues", f"POST {issues_uri} with the victim's bearer token", attack=True)
        got, rejected = await list_with(token.value, "issues", evil)
    return Outcome(
        succeeded=bool(got) and set(got) == set(private),
        evidence={"victim": victim.subject, "token_audience": token.audience, "presented_to": issues_uri,
                  "obtained": got, "rejected": rejected, "variant": ctx.variant},
        legitimate=set(mine) == set(private),
        obtained=f"replayed a token issued for {evil_uri} at {issues_uri} and read {len(got)} private issue(s)",
        stopped_by=f"the issues Server answered {rejected}",
    )


LABS: Final = (
    Lab("host-approval-not-authorization", APPROVAL, approval_story,
        {"vulnerable": ServerChecks(check_nothing), "fixed": ServerChecks(check_everything)},
        {"same-tenant": "a colleague in the victim's own tenant asks for the victim's account",
         "missing-scope": "a client the victim authorised for their profile only asks, with the victim's identity"}),
    Lab("list-cache-shared", CACHE, cache_story,
        {"vulnerable": CacheKeying(UserKeyedCache), "fixed": CacheKeying(ListCache)},
        {"other-scopes": "the same client of the same user, with a narrower grant",
         "other-client": "the same user and the same scopes, through another client",
         "other-audience": "the same user, client and scopes, with a token for another resource",
         "other-tenant": "a user of another tenant on the same gateway"}),
    Lab("state-handle-hijacking", HANDLES, handle_story,
        {"vulnerable": Handles(SequentialHandles()), "fixed": Handles(BoundHandles())},
        {"other-client": "the victim's own identity through another client (a browser extension)",
         "other-tenant": "a user with the victim's subject name in another tenant"}),
    Lab("token-passthrough", PASSTHROUGH, passthrough_story,
        {"vulnerable": AudienceCheck(False), "fixed": AudienceCheck(True)},
        {"prefix-audience": "the token's audience starts with the issues server's URI",
         "sibling-path": "the token is for another resource on the same host"}),
)
"""The labs of this module, in the order the course presents them."""
