"""Access tokens bound to an audience, with scopes (spec: Authorization; Security Best Practices,
"Token Passthrough" and "Scope Minimization").

An MCP Server reached over HTTP is an OAuth **resource server**. The token a Client presents was
issued by an authorization server *for one resource* — its **audience** — and for a few **scopes**.
Two rules follow, and both are checked here:

* a Server MUST NOT accept a token that was not issued for it. Checking the signature, issuer and
  expiry is not enough: a token issued for another Server is a valid token, just not *for you*. A
  Server that skips the audience check lets any other Server its users talk to replay their tokens
  against it (and a Server that forwards the token it received to an upstream API — *token
  passthrough* — spreads the same mistake downstream);
* a token carries only the scopes the task needs. A broad token widens what a stolen one can do.

Tokens are opaque random strings drawn from the simulation's seeded generator and expire on the
virtual clock, so every run is reproducible. The authorization server keeps the table of issued
tokens; :meth:`AuthorizationServer.validate` is what a resource server's HTTP layer calls before any
MCP message is read, and it returns the :class:`~mcp_sim.transports.base.AuthInfo` the Server then
uses to authorise each operation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from mcp_sim.security.identity import AuthInfo, User


@dataclass(frozen=True)
class AccessToken:
    """An issued token and its claims (what an introspection endpoint would return)."""

    value: str
    subject: str
    tenant: str | None
    client_id: str
    audience: str
    """The resource (an MCP Server's canonical URI) this token may be used at, and only there."""
    scopes: frozenset[str]
    issued_at_ms: float
    expires_at_ms: float
    issuer: str

    def auth_info(self) -> AuthInfo:
        """The identity a Server sees once the token was accepted."""
        return AuthInfo(subject=self.subject, tenant=self.tenant, scopes=tuple(sorted(self.scopes)),
                        audience=self.audience, token=self.value, client_id=self.client_id)


class TokenRejected(Exception):
    """The resource server refused a token. ``status`` is the HTTP status it answers with: 401 for a
    missing, unknown, expired or wrong-audience token, 403 for a valid token lacking a scope."""

    def __init__(self, reason: str, *, status: int = 401, rule: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status
        self.rule = rule

    @property
    def www_authenticate(self) -> str:
        """The ``WWW-Authenticate`` header value a real server would send with the status."""
        error = "insufficient_scope" if self.status == 403 else "invalid_token"
        return f'Bearer error="{error}", error_description="{self.reason}"'


AUDIENCE_RULE = "auth.server-validates-audience"
"""The rulebook id of audience validation (a token issued for another resource is refused)."""
SCOPE_RULE = "auth.insufficient-scope-403"
"""The rulebook id of the ``403 insufficient_scope`` answer."""
INVALID_RULE = "auth.invalid-token-401"
"""The rulebook id of the ``401`` for a missing, unknown or expired token."""


@dataclass
class AuthorizationServer:
    """Issues and validates tokens. ``rng_token`` draws random hex (``Simulation.token``) and
    ``clock_ms`` reads the virtual clock (``Simulation.now_ms``)."""

    issuer: str
    rng_token: Callable[[], str]
    clock_ms: Callable[[], float]
    default_ttl_ms: float = 3_600_000.0
    issued: dict[str, AccessToken] = field(default_factory=dict)

    def issue(self, user: User, *, client_id: str, audience: str, scopes: Iterable[str],
              ttl_ms: float | None = None) -> AccessToken:
        """Issue a token for ``user`` acting through ``client_id``, usable at ``audience`` only."""
        now = self.clock_ms()
        token = AccessToken(value=f"at_{self.rng_token()}", subject=user.subject, tenant=user.tenant,
                            client_id=client_id, audience=audience, scopes=frozenset(scopes),
                            issued_at_ms=now, expires_at_ms=now + (ttl_ms or self.default_ttl_ms),
                            issuer=self.issuer)
        self.issued[token.value] = token
        return token

    def introspect(self, value: str | None) -> AccessToken | None:
        """The claims of an issued token, or ``None`` for a string this server never issued."""
        return self.issued.get(value) if value else None

    def validate(self, value: str | None, *, audience: str, required_scopes: Iterable[str] = (),
                 check_audience: bool = True) -> AuthInfo:
        """What a resource server does with ``Authorization: Bearer <value>``.

        Raises :class:`TokenRejected` unless the token is known, unexpired, issued for ``audience``
        and carries ``required_scopes``. ``check_audience=False`` is the vulnerable shortcut the
        token-passthrough lab shows: the token is genuine, so everything *looks* fine.
        """
        token = self.introspect(value)
        if token is None:
            raise TokenRejected("no valid bearer token", rule=INVALID_RULE)
        if self.clock_ms() >= token.expires_at_ms:
            raise TokenRejected("the token has expired", rule=INVALID_RULE)
        if check_audience and token.audience != audience:
            raise TokenRejected(f"the token was issued for {token.audience!r}, not for {audience!r}",
                                rule=AUDIENCE_RULE)
        missing = sorted(set(required_scopes) - token.scopes)
        if missing:
            raise TokenRejected(f"missing scope {' '.join(missing)}", status=403, rule=SCOPE_RULE)
        return token.auth_info()
