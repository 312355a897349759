"""Server-side authorization of every operation (course chapter 5.2.3: "Host confirmation cannot
replace Server permission checks").

The Host decides what the *model* may see and asks the *user* before sensitive calls. That protects
one user from their own model. It protects nobody from a *different* caller: another Host, a script
with a stolen token, a second tenant on the same gateway. Those callers never pass through your
Host's confirmation dialog. So the Server checks, on **every** operation and from the caller's
authenticated identity (:class:`~mcp_sim.transports.base.AuthInfo`), four things in order:

1. **identity** — is there an authenticated caller at all?
2. **scope** — does the caller's token allow this kind of operation?
3. **tenant** — does the object belong to the caller's tenant?
4. **ownership** — within the tenant, may this subject touch this object?

A failed check raises :class:`AccessDenied`, which names the check that failed and the rule behind
it; every decision is kept in an :class:`AuditLog`, because "who did what, allowed or not" is part of
the boundary too.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from mcp_sim.protocol.errors import McpError
from mcp_sim.security.identity import AuthInfo

Check = Literal["identity", "scope", "tenant", "ownership"]

ACCESS_DENIED: Final = -31003
"""An application error code for a refused operation outside a tool call. 2026-07-28 reserves
-32768…-32000 for JSON-RPC and MCP, so application errors live outside it. A refused *tool call* is
answered as a ``CallToolResult`` with ``isError: true`` instead, like any tool failure."""

RULES: Final[dict[Check, str]] = {
    "identity": "Every operation needs an authenticated caller; the Server never assumes one.",
    "scope": "The caller's token must carry the scope this operation needs (least privilege).",
    "tenant": "A caller may only touch objects of its own tenant, whatever its Host approved.",
    "ownership": "Within a tenant, a caller may only touch objects it owns or was granted.",
}


class AccessDenied(Exception):
    """The Server refused an operation; ``check`` says which of the four checks failed."""

    def __init__(self, check: Check, detail: str) -> None:
        super().__init__(f"access denied ({check}): {detail}")
        self.check = check
        self.detail = detail
        self.rule = RULES[check]

    def to_mcp_error(self) -> McpError:
        return McpError(ACCESS_DENIED, str(self), {"check": self.check}, rule=self.rule)

    def to_tool_result(self) -> dict[str, Any]:
        """The ``CallToolResult`` a tool returns for a refused call (``isError: true``)."""
        return {"resultType": "complete", "isError": True,
                "content": [{"type": "text", "text": str(self)}]}


@dataclass(frozen=True)
class Decision:
    """One authorization decision, for the audit log."""

    operation: str
    subject: str | None
    allowed: bool
    check: Check | None = None
    detail: str = ""


@dataclass
class AuditLog:
    decisions: list[Decision] = field(default_factory=list)

    def denied(self) -> list[Decision]:
        return [d for d in self.decisions if not d.allowed]


def authorize(auth: AuthInfo | None, operation: str, *, scopes: Iterable[str] = (), tenant: str | None = None,
              owner: str | None = None, audit: AuditLog | None = None) -> AuthInfo:
    """Run the four checks for ``operation``; return the caller's identity or raise :class:`AccessDenied`.

    ``tenant`` and ``owner`` describe the *object* being touched (``None`` = not tenant-scoped /
    no owner). Call this inside every handler, before reading or changing anything.
    """
    try:
        if auth is None or not auth.subject:
            raise AccessDenied("identity", f"{operation} needs an authenticated caller")
        missing = sorted(set(scopes) - set(auth.scopes))
        if missing:
            raise AccessDenied("scope", f"{operation} needs scope {' '.join(missing)}")
        if tenant is not None and auth.tenant != tenant:
            raise AccessDenied("tenant", f"the object belongs to tenant {tenant!r}, the caller to {auth.tenant!r}")
        if owner is not None and auth.subject != owner:
            raise AccessDenied("ownership", f"the object belongs to {owner!r}, not to {auth.subject!r}")
    except AccessDenied as denied:
        if audit is not None:
            audit.decisions.append(Decision(operation, auth.subject if auth else None, False, denied.check,
                                            denied.detail))
        raise
    if audit is not None:
        audit.decisions.append(Decision(operation, auth.subject, True))
    return auth
