"""A real MCP server behind OAuth, with a built-in authorization server (course chapter 12).

``mcp-sim serve SERVER --transport http --auth-server builtin`` protects the MCP endpoint the way
MCP's authorization spec asks of a resource server, and runs the simulated authorization server
(:class:`~mcp_sim.security.oauth.OAuthAuthorizationServer`, sans-IO) on the same loopback origin
over real HTTP, so a real client can do the whole dance on one machine:

* ``GET /.well-known/oauth-protected-resource/mcp`` (and at the root) — the Protected Resource
  Metadata (RFC 9728): this endpoint's URL as ``resource``, the built-in issuer as its
  authorization server, the scopes it knows;
* ``POST /mcp`` without a valid token → ``401`` with ``WWW-Authenticate: Bearer
  resource_metadata="…", scope="…"``; a token lacking a required scope → ``403
  insufficient_scope``; a token issued for another resource (its *audience*) → ``401``: a server
  never accepts a token that was not issued for it;
* the authorization server's metadata, ``/register``, ``/authorize``, ``/token`` — the simulated
  AS's own answers, byte for byte.

The built-in AS signs in one local user who consents to every request, so ``/authorize``
redirects straight back with a code: it teaches the protocol, it protects nothing (anyone who can
reach this loopback port can get a token). Tokens, codes and client ids are drawn from
:mod:`secrets`, time from the wall clock. Every exchange with it is recorded (secrets redacted)
in the server's trace, beside the MCP frames.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from mcp_sim.bridge.http_server import StreamableHTTPEndpoint
from mcp_sim.bridge.recording import stamp
from mcp_sim.security.identity import AuthInfo, User
from mcp_sim.security.oauth import (
    AS_METADATA_PATH,
    OIDC_METADATA_PATH,
    PRM_PATH,
    OAuthAuthorizationServer,
    ScriptedUser,
    json_response,
    protected_resource_metadata,
)
from mcp_sim.security.oauth_web import record_exchange
from mcp_sim.security.tokens import AuthorizationServer, TokenRejected
from mcp_sim.trace.recorder import Recorder
from mcp_sim.transports.http import Headers, HttpRequest, HttpResponse

__all__ = ["AUTH_SERVER_PATHS", "BuiltinAuthorization", "builtin_authorization", "describe"]

AUTH_SERVER_PATHS = frozenset({AS_METADATA_PATH, OIDC_METADATA_PATH, "/register", "/authorize", "/token"})
"""What the built-in authorization server answers on the MCP server's origin."""


@dataclass
class BuiltinAuthorization:
    """The resource server's rules and the built-in AS for the MCP endpoint at ``url``."""

    url: str
    recorder: Recorder
    scopes: tuple[str, ...] = ()
    """Scopes every request needs (asked for in the ``401`` challenge, listed in the metadata)."""
    user: User = field(default_factory=lambda: User("local-user", "local"))
    auth_server: OAuthAuthorizationServer = field(init=False)

    def __post_init__(self) -> None:
        parts = urlsplit(self.url)
        issuer = f"{parts.scheme}://{parts.netloc}"
        table = AuthorizationServer(issuer, lambda: secrets.token_hex(16), lambda: time.time() * 1000.0)
        self.auth_server = OAuthAuthorizationServer(issuer, table, ScriptedUser(self.user), (self.url,),
                                                    scopes_supported=self.scopes)

    @property
    def issuer(self) -> str:
        return self.auth_server.issuer

    @property
    def metadata_url(self) -> str:
        """Where the Protected Resource Metadata is: the well-known path with the endpoint's path."""
        return f"{self.issuer}{PRM_PATH}{urlsplit(self.url).path}"

    def validate(self, token: str) -> AuthInfo | None:
        """The endpoint's token check: known, unexpired and issued for *this* endpoint (audience).
        Scopes are checked by the endpoint itself, which answers ``403`` for a missing one."""
        try:
            return self.auth_server.tokens.validate(token, audience=self.url)
        except TokenRejected:
            return None

    def answer(self, request: HttpRequest) -> HttpResponse | None:
        """The metadata and authorization server requests, answered; ``None`` for anything else."""
        path = request.path.partition("?")[0]
        if path in (PRM_PATH, f"{PRM_PATH}{urlsplit(self.url).path}") and request.method == "GET":
            return json_response(200, protected_resource_metadata(self.url, [self.issuer], self.scopes))
        if path in AUTH_SERVER_PATHS:
            return self.auth_server.serve(request)
        return None

    def setup(self, url: str, endpoint: StreamableHTTPEndpoint, app: ASGIApp) -> ASGIApp:
        """For :func:`~mcp_sim.bridge.http_server.serve_http`: require tokens at the endpoint and put
        the metadata and the AS in front of it."""
        endpoint.token_validator = self.validate
        endpoint.required_scopes = self.scopes
        endpoint.resource_metadata = self.metadata_url

        async def front(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http" or not _is_ours(scope["path"]):
                await app(scope, receive, send)
                return
            body = b""
            while True:
                event = await receive()
                body += event.get("body", b"")
                if not event.get("more_body", False):
                    break
            query = scope.get("query_string", b"").decode("latin-1")
            headers = Headers((k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"])
            request = HttpRequest(scope["method"], scope["path"] + (f"?{query}" if query else ""), headers,
                                  body.decode("utf-8", errors="replace"))
            response = self.answer(request) or HttpResponse(404)
            self._record(request, response)
            raw = (response.body or "").encode()
            head = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in response.headers.to_dict().items()]
            head.append((b"content-length", str(len(raw)).encode()))
            await send({"type": "http.response.start", "status": response.status, "headers": head})
            await send({"type": "http.response.body", "body": raw})

        return front

    def _record(self, request: HttpRequest, response: HttpResponse) -> None:
        path = request.path.partition("?")[0]
        receiver = f"server/{endpoint_name(self.url)}" if path.startswith(PRM_PATH) else self.auth_server.participant
        for answer in (None, response):
            record_exchange(self.recorder, "oauth", "client" if answer is None else receiver,
                            receiver if answer is None else "client", request, answer, self.issuer,
                            stamp(self.recorder))


def _is_ours(path: str) -> bool:
    return path in AUTH_SERVER_PATHS or path.startswith(PRM_PATH)


def endpoint_name(url: str) -> str:
    return urlsplit(url).hostname or "server"


def builtin_authorization(recorder: Recorder, scopes: tuple[str, ...] = ()
                          ) -> tuple[Callable[[str, StreamableHTTPEndpoint, Any], Any], list[BuiltinAuthorization]]:
    """A ``setup`` for :func:`~mcp_sim.bridge.http_server.serve_http` that installs a
    :class:`BuiltinAuthorization` once the URL is known, and the list it will be put in (to reach
    the AS afterwards, e.g. in a test)."""
    made: list[BuiltinAuthorization] = []

    def setup(url: str, endpoint: StreamableHTTPEndpoint, app: Any) -> Any:
        made.append(BuiltinAuthorization(url, recorder, scopes))
        return made[-1].setup(url, endpoint, app)

    return setup, made


def describe(auth: BuiltinAuthorization) -> str:
    """One line for the user: where the AS is and what the endpoint asks for."""
    scopes = f", scopes {' '.join(auth.scopes)}" if auth.scopes else ""
    return f"mcp-sim: built-in authorization server {auth.issuer} (metadata {auth.metadata_url}{scopes})"

