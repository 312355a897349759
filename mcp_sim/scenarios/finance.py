"""Multi-tenant finance data: answers depend on who asks (course chapters 07 and 09).

The caller's tenant comes from ``ctx.auth`` (the token the transport validated), never from an
argument the model could change. Because every answer depends on the caller, the server is
``per_caller``: its 2026-07-28 list and read results say ``cacheScope: "private"``. ``transfer`` is
visible only to callers with the ``finance:write`` scope, and ``export_statement`` is a long job that
may run as a task.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypedDict

from mcp_sim.capabilities.context import Context
from mcp_sim.roles.server import Server
from mcp_sim.security.identity import AuthInfo

LEDGERS: dict[str, dict[str, list[int]]] = {
    "acme": {"ACME-001": [1000, -250, 75], "ACME-002": [5000]},
    "globex": {"GLX-001": [300, 300, -120]},
}


class Balance(TypedDict):
    account: str
    balance: int
    currency: str


def _tenant(ctx: Context) -> str:
    if ctx.auth is None or ctx.auth.tenant is None:
        raise PermissionError("this server needs an authenticated caller with a tenant")
    return ctx.auth.tenant


def _can_write(auth: AuthInfo | None) -> bool:
    return auth is not None and "finance:write" in auth.scopes


def build(ledgers: Mapping[str, Mapping[str, Sequence[int]]] | None = None) -> Server:
    """A fresh finance server over a copy of ``ledgers`` (tenant → account → entries; default
    :data:`LEDGERS`). Each build has its own copy, so runs never share money."""
    books: dict[str, dict[str, list[int]]] = {
        tenant: {a: list(e) for a, e in accounts.items()}
        for tenant, accounts in (LEDGERS if ledgers is None else ledgers).items()}
    server = Server("finance", version="1.0.0", title="Finance", per_caller=True,
                    instructions="Accounts of the caller's own company only.")

    def account_of(ctx: Context, account: str) -> list[int]:
        entries = books.get(_tenant(ctx), {}).get(account)
        if entries is None:
            raise KeyError(f"no account {account} for your company")
        return entries

    @server.tool(annotations={"readOnlyHint": True})
    def list_accounts(ctx: Context) -> list[str]:
        """The accounts of your company."""
        return sorted(books.get(_tenant(ctx), {}))

    @server.tool(annotations={"readOnlyHint": True})
    def get_balance(account: str, ctx: Context) -> Balance:
        """The balance of one account."""
        return {"account": account, "balance": sum(account_of(ctx, account)), "currency": "EUR"}

    @server.tool(annotations={"destructiveHint": True}, visible=_can_write)
    async def transfer(source: str, target: str, amount: int, ctx: Context) -> str:
        """Move money between two of your accounts (asks the user to confirm)."""
        if amount <= 0:
            raise ValueError("amount must be positive")
        answer = await ctx.elicit(f"Transfer {amount} EUR from {source} to {target}?",
                                  {"type": "object", "properties": {"confirm": {"type": "boolean"}},
                                   "required": ["confirm"]})
        if answer.get("action") != "accept" or not (answer.get("content") or {}).get("confirm"):
            return "transfer cancelled by the user"
        account_of(ctx, source).append(-amount)
        account_of(ctx, target).append(amount)
        return f"moved {amount} EUR from {source} to {target}"

    @server.tool(annotations={"readOnlyHint": True}, task_support="optional")
    async def export_statement(account: str, ctx: Context) -> str:
        """Build a statement of every entry (slow: a few simulated seconds per entry)."""
        entries = account_of(ctx, account)
        lines = []
        for n, amount in enumerate(entries, start=1):
            await ctx.sleep(5)
            await ctx.report_progress(n, len(entries))
            lines.append(f"{n}. {amount:+d} EUR")
        return f"Statement of {account}\n" + "\n".join(lines)

    @server.resource_template("finance://accounts/{account}", mime_type="application/json", per_caller=True)
    def account(account: str, ctx: Context) -> Balance:
        """One account of your company."""
        return {"account": account, "balance": sum(account_of(ctx, account)), "currency": "EUR"}

    return server
