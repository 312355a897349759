"""A simulated OAuth 2.1 authorization server, as MCP's Authorization spec uses one (2025-11-25 and
2026-07-28; this server behaves the same in both eras — the eras differ in what they ask of the
*client*: see :mod:`mcp_sim.security.oauth_client` and the rulebook's ``auth.*`` rules).

An MCP Server reached over HTTP does not issue tokens itself: it points its clients at an
**authorization server** (AS) and only checks the tokens that AS issued. This module is that AS,
sans-IO: :meth:`OAuthAuthorizationServer.serve` takes one :class:`~mcp_sim.transports.http.HttpRequest`
and returns one :class:`~mcp_sim.transports.http.HttpResponse`, on the simulation's virtual clock and
seeded generator. Moving those objects between parties (and recording them) is
:mod:`mcp_sim.security.oauth_web`'s job; the client's half of the dance is
:mod:`mcp_sim.security.oauth_client`.

What it serves:

* **metadata** — ``GET /.well-known/oauth-authorization-server`` (RFC 8414) and the OpenID Connect
  discovery document ``GET /.well-known/openid-configuration``. Which of the two an AS offers is its
  choice (``discovery``); a client tries them in the order the spec gives.
* **client registration** — clients known in advance (``preregister``); **Client ID Metadata
  Documents** (2025-11-25 onward): the ``client_id`` *is* an https URL, and the AS fetches the JSON
  document there to learn the client's name and redirect URIs (``client_documents``); and Dynamic
  Client Registration (RFC 7591, ``POST /register``), which the 2026-07-28 revision deprecates in
  favour of those documents.
* **the authorization endpoint** — ``GET /authorize``: the user's browser arrives here. The AS
  checks the ``redirect_uri`` *exactly* against the registered ones (before anything else: an AS
  must never redirect to an unregistered address; ``redirect_match`` holds that comparison, so a
  security lab can show what a looser one lets through), demands PKCE with ``S256`` (``plain`` is
  refused), asks the signed-in user (a scripted :class:`ScriptedUser`), and redirects back with a
  one-time ``code``, the client's ``state`` and its own ``iss`` (RFC 9207; a 2026-07-28 SHOULD).
* **the token endpoint** — ``POST /token`` (form-encoded): ``authorization_code`` (the verifier must
  hash to the challenge; the ``resource`` must be the one authorised) and ``refresh_token``
  (rotated on every use). The ``resource`` parameter (RFC 8707) becomes the token's **audience**, so
  the token works at that one MCP Server only.

By default whoever arrives at ``/authorize`` is the one scripted :class:`ScriptedUser`, who answers
without a page — enough to follow a client's flow. A security lab gives the server a
:class:`~mcp_sim.security.oauth_front.FrontChannel` instead (``front=``): a sign-in session per browser,
a consent page per client naming where the code goes, and a registration policy (``registration=``,
``document_policy=``), so whose code it issues follows from which browser asked, signed in as whom.
Redirect URIs match exactly except the port of a loopback IP literal (:func:`loopback_any_port_match`,
RFC 8252 section 7.3; rule ``auth.sim-loopback-any-port``).

Tokens themselves are issued and validated by :class:`~mcp_sim.security.tokens.AuthorizationServer`
(the token table), which this class wraps: a resource server calls ``tokens.validate``.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import parse_qs, urlencode, urlsplit

from mcp_sim.security.identity import User
from mcp_sim.security.oauth_front import FrontChannel, RegistrationPolicy, open_registration
from mcp_sim.security.tokens import AuthorizationServer
from mcp_sim.transports.http import JSON, Headers, HttpRequest, HttpResponse

__all__ = [
    "AS_METADATA_PATH",
    "FORM",
    "OIDC_METADATA_PATH",
    "PRM_PATH",
    "OAuthAuthorizationServer",
    "RedirectMatch",
    "RegisteredClient",
    "ScriptedUser",
    "exact_redirect_match",
    "form_body",
    "json_response",
    "loopback_any_port_match",
    "protected_resource_metadata",
    "read_form",
    "s256",
]

AS_METADATA_PATH = "/.well-known/oauth-authorization-server"
"""RFC 8414: where an authorization server publishes its metadata."""
OIDC_METADATA_PATH = "/.well-known/openid-configuration"
"""OpenID Connect Discovery 1.0: the same kind of document, under the OpenID name."""
PRM_PATH = "/.well-known/oauth-protected-resource"
"""RFC 9728: where a resource server (an MCP Server) publishes its Protected Resource Metadata."""
FORM = "application/x-www-form-urlencoded"

Discovery = Literal["oauth", "oidc"]
RedirectMatch = Callable[[str, Collection[str]], bool]
"""How an authorization server compares the ``redirect_uri`` of a request with a client's registered
ones: ``match(asked, registered) -> bool``."""


def exact_redirect_match(asked: str, registered: Collection[str]) -> bool:
    """OAuth 2.1's rule: the ``redirect_uri`` equals a registered one, character for character.

    Anything looser — a prefix, a pattern, "same host" — lets an attacker pick an address that passes
    the comparison but delivers the code elsewhere (``https://app.example@evil.example/``, a lookalike
    host, a page on the same host that someone else controls)."""
    return asked in registered


LOOPBACK_LITERALS = ("127.0.0.1", "::1")


def _without_port(uri: str) -> tuple[str, str, str, str, str] | None:
    """``uri`` with its port dropped, when it is ``http`` on a loopback IP literal with no ``user@``."""
    parts = urlsplit(uri)
    try:
        parts.port  # noqa: B018 - a malformed port is not a loopback redirect at all
    except ValueError:
        return None
    if parts.scheme != "http" or parts.hostname not in LOOPBACK_LITERALS or parts.username is not None \
            or parts.password is not None:
        return None
    return (parts.scheme, parts.hostname, parts.path, parts.query, parts.fragment)


def loopback_any_port_match(asked: str, registered: Collection[str]) -> bool:
    """Exact matching, except the *port* of a loopback IP literal (RFC 8252 section 7.3, carried into
    OAuth 2.1): a native app cannot know ahead of time which port the operating system will give its
    local server, so ``http://127.0.0.1:{any}/callback`` (and ``http://[::1]:{any}/...``) matches a
    registered ``http://127.0.0.1/callback`` or one registered with another port. Everything else —
    scheme, host, path, query — stays exact, and the name ``localhost`` is matched exactly, port
    included (rule ``auth.sim-loopback-any-port``: RFC 8252 section 8.3 does not recommend the name)."""
    if asked in registered:
        return True
    key = _without_port(asked)
    return key is not None and any(_without_port(uri) == key for uri in registered)


def s256(verifier: str) -> str:
    """The PKCE ``S256`` code challenge of ``verifier``: BASE64URL(SHA-256(verifier)), unpadded.

    The client keeps the verifier and sends only this hash with the authorization request; at the
    token endpoint it reveals the verifier. Someone who intercepted the code (but not the verifier)
    cannot redeem it."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def form_body(fields: Mapping[str, str]) -> str:
    """``application/x-www-form-urlencoded``, the body format of OAuth's token endpoint."""
    return urlencode(dict(fields))


def read_form(text: str) -> dict[str, str]:
    """The fields of a form body or query string (one value per name; empty values kept)."""
    return {name: values[0] for name, values in parse_qs(text, keep_blank_values=True).items()}


def json_response(status: int, body: Mapping[str, Any], headers: Mapping[str, str] | None = None) -> HttpResponse:
    """A JSON response; OAuth forbids caching anything that may carry a token."""
    head = Headers({"Content-Type": JSON, "Cache-Control": "no-store"})
    for name, value in (headers or {}).items():
        head[name] = value
    return HttpResponse(status, head, json.dumps(dict(body)))


def protected_resource_metadata(resource: str, authorization_servers: Collection[str],
                                scopes_supported: Collection[str] = ()) -> dict[str, Any]:
    """An MCP Server's Protected Resource Metadata (RFC 9728): which resource it is (its canonical
    URI, the audience its tokens must name) and which authorization servers issue those tokens."""
    document: dict[str, Any] = {"resource": resource, "authorization_servers": list(authorization_servers)}
    if scopes_supported:
        document["scopes_supported"] = list(scopes_supported)
    document["bearer_methods_supported"] = ["header"]
    return document


def _error(status: int, error: str, description: str) -> HttpResponse:
    return json_response(status, {"error": error, "error_description": description})


@dataclass(frozen=True)
class RegisteredClient:
    """A client the AS knows: its id, name and the redirect URIs it may use (matched exactly)."""

    client_id: str
    client_name: str
    redirect_uris: tuple[str, ...]
    how: Literal["pre-registered", "dynamic", "metadata document"] = "pre-registered"


@dataclass
class ScriptedUser:
    """The person at the browser: who is signed in at the AS and what they answer on the consent
    screen. ``refuses`` names the clients (by ``client_name``) this user will not authorise."""

    user: User
    refuses: frozenset[str] = frozenset()

    def consents(self, client: RegisteredClient, scopes: Collection[str]) -> bool:
        return client.client_name not in self.refuses


@dataclass
class _Grant:
    """What a code or refresh token stands for: who authorised which client, for what and where."""

    client_id: str
    subject: User
    scopes: frozenset[str]
    resource: str
    redirect_uri: str = ""
    code_challenge: str = ""
    expires_at_ms: float = 0.0


@dataclass
class OAuthAuthorizationServer:
    """A simulated OAuth 2.1 authorization server at ``issuer`` (an https URL without a path).

    ``tokens`` is the token table (it issues and validates access tokens); ``user`` is who signs in
    at the browser; ``resources`` are the MCP Servers' canonical URIs this AS issues tokens for;
    ``discovery`` the metadata documents it publishes; ``dynamic_registration`` whether
    ``POST /register`` is open."""

    issuer: str
    tokens: AuthorizationServer
    user: ScriptedUser
    resources: tuple[str, ...]
    scopes_supported: tuple[str, ...] = ()
    discovery: tuple[Discovery, ...] = ("oauth", "oidc")
    dynamic_registration: bool = True
    access_ttl_ms: float = 3_600_000.0
    code_ttl_ms: float = 60_000.0
    client_documents: Callable[[str], dict[str, Any] | None] | None = None
    """Fetches a Client ID Metadata Document by its URL (``None``: such client ids are not accepted)."""
    redirect_match: RedirectMatch = loopback_any_port_match
    """How a request's ``redirect_uri`` is compared with the registered ones (exact, as OAuth 2.1 says,
    with the loopback port free as RFC 8252 section 7.3 requires)."""
    sends_iss: bool = True
    """Whether the authorization response carries ``iss`` (RFC 9207; older servers do not)."""
    front: FrontChannel | None = None
    """Browser sessions and consent pages (:mod:`mcp_sim.security.oauth_front`). ``None``: every browser
    is :attr:`user`, who answers without a page — enough for a client's flow, not for a security lab."""
    registration: RegistrationPolicy = open_registration
    """Which redirect URIs ``POST /register`` accepts (the server's policy)."""
    document_policy: Callable[[str, dict[str, Any]], str | None] | None = None
    """A trust policy for Client ID Metadata Documents: ``(client_id, document)`` → why it is refused."""
    token_auth: Callable[[RegisteredClient, dict[str, str]], str | None] | None = None
    """An extra check of the client at the token endpoint (e.g. a key its metadata document names)."""
    clients: dict[str, RegisteredClient] = field(default_factory=dict)
    _codes: dict[str, _Grant] = field(default_factory=dict)
    _refresh: dict[str, _Grant] = field(default_factory=dict)

    @property
    def participant(self) -> str:
        """How the trace names this AS: ``authorization server (<host>)``."""
        return f"authorization server ({urlsplit(self.issuer).netloc})"

    @property
    def _draw(self) -> Callable[[], str]:
        return self.tokens.rng_token

    # -- what the AS publishes -------------------------------------------------------------------
    def metadata(self) -> dict[str, Any]:
        """The RFC 8414 document. ``code_challenge_methods_supported`` matters most to MCP: when it is
        missing the server does not support PKCE, and a client refuses to proceed (rule
        ``auth.pkce-refuse-without-methods``)."""
        document: dict[str, Any] = {
            "issuer": self.issuer,
            "authorization_endpoint": f"{self.issuer}/authorize",
            "token_endpoint": f"{self.issuer}/token",
        }
        if self.dynamic_registration:
            document["registration_endpoint"] = f"{self.issuer}/register"
        if self.client_documents is not None:
            document["client_id_metadata_document_supported"] = True
        if self.scopes_supported:
            document["scopes_supported"] = list(self.scopes_supported)
        document.update({
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_methods_supported": ["none"],
            "code_challenge_methods_supported": ["S256"],
            "authorization_response_iss_parameter_supported": self.sends_iss,
        })
        return document

    def preregister(self, client_name: str, redirect_uris: Collection[str]) -> RegisteredClient:
        """Register a client out of band (by its developer, ahead of time)."""
        client = RegisteredClient(f"client_{self._draw()[:12]}", client_name, tuple(redirect_uris))
        self.clients[client.client_id] = client
        return client

    # -- the front door ----------------------------------------------------------------------------
    def serve(self, request: HttpRequest) -> HttpResponse:
        """Answer one HTTP request (sans-IO: no waiting, no network)."""
        path, _, query = request.path.partition("?")
        if request.method == "GET" and path == AS_METADATA_PATH and "oauth" in self.discovery:
            return json_response(200, self.metadata())
        if request.method == "GET" and path == OIDC_METADATA_PATH and "oidc" in self.discovery:
            oidc = {**self.metadata(), "subject_types_supported": ["public"],
                    "id_token_signing_alg_values_supported": ["RS256"]}
            return json_response(200, oidc)
        if request.method == "POST" and path == "/register" and self.dynamic_registration:
            return self._register(request)
        if self.front is not None and path in ("/authorize", "/login", "/consent"):
            return self._front_door(request, path, query, self.front)
        if request.method == "GET" and path == "/authorize":
            return self._authorize(read_form(query))
        if request.method == "POST" and path == "/token":
            if not (request.headers.get("Content-Type") or "").startswith(FORM):
                return _error(400, "invalid_request", f"the token endpoint reads {FORM} bodies")
            return self._token(read_form(request.body))
        return HttpResponse(404)

    # -- Dynamic Client Registration (RFC 7591) ------------------------------------------------------
    def _register(self, request: HttpRequest) -> HttpResponse:
        try:
            asked = json.loads(request.body or "{}")
        except ValueError:
            asked = None
        uris = asked.get("redirect_uris") if isinstance(asked, dict) else None
        if not isinstance(uris, list) or not uris or not all(isinstance(u, str) for u in uris):
            return _error(400, "invalid_redirect_uri", "redirect_uris must be a non-empty list of URIs")
        refused = self.registration(uris)
        if refused is not None:
            return _error(400, "invalid_redirect_uri", refused)
        assert isinstance(asked, dict)
        client = RegisteredClient(f"client_{self._draw()[:12]}", str(asked.get("client_name", "")),
                                  tuple(uris), how="dynamic")
        self.clients[client.client_id] = client
        kind = asked.get("application_type")  # echoed as registered (RFC 7591 section 3.2.1)
        return json_response(201, {"client_id": client.client_id, "client_name": client.client_name,
                                   "redirect_uris": list(client.redirect_uris),
                                   "grant_types": ["authorization_code", "refresh_token"],
                                   "response_types": ["code"], "token_endpoint_auth_method": "none",
                                   **({"application_type": kind} if isinstance(kind, str) else {})})

    # -- Client ID Metadata Documents ----------------------------------------------------------------
    def _client(self, client_id: str) -> RegisteredClient | None:
        """A known client, or — for an https ``client_id`` — the one its metadata document describes.
        The document must name itself: its ``client_id`` equals the URL it was fetched from."""
        if client_id in self.clients or self.client_documents is None:
            return self.clients.get(client_id)
        parts = urlsplit(client_id)
        if parts.scheme != "https" or not parts.path.strip("/"):
            return None
        document = self.client_documents(client_id)
        if not isinstance(document, dict) or document.get("client_id") != client_id:
            return None
        uris = document.get("redirect_uris")
        if not isinstance(uris, list) or not all(isinstance(u, str) for u in uris):
            return None
        if self.document_policy is not None and self.document_policy(client_id, document) is not None:
            return None
        return RegisteredClient(client_id, str(document.get("client_name", "")), tuple(uris), how="metadata document")

    # -- the authorization endpoint ----------------------------------------------------------------
    def _front_door(self, request: HttpRequest, path: str, query: str, front: FrontChannel) -> HttpResponse:
        """``/authorize``, ``/login`` and ``/consent`` with browser sessions: the code is for whoever is
        signed in *in this browser*, after that user approved this client and redirect URI."""
        session = front.session_of(request.headers.get("Cookie"))
        fresh = session not in front.issued
        session = front.new_session() if fresh else session
        if request.method == "GET" and path == "/authorize":
            response = self._authorize(read_form(query), session)
        elif request.method == "POST" and path in ("/login", "/consent"):
            form = read_form(request.body)
            q = front.take(form.get("ticket", ""), session)
            if q is None:
                response = _error(400, "invalid_request", "this page was not shown to this browser")
            elif path == "/login" and front.sign_in(session, form) is None:
                response = json_response(200, front.login_page(self.issuer, session, q))
            elif path == "/consent" and form.get("approve") != "yes":
                response = self._authorize(q, session, declined=True)
            else:
                user = front.sessions.get(session)
                if path == "/consent" and user is not None:
                    front.approved.add((user.subject, q.get("client_id", ""), q.get("redirect_uri", "")))
                response = self._authorize(q, session)
        else:
            response = HttpResponse(404)
        if fresh:
            response.headers["Set-Cookie"] = front.set_cookie(session)
        return response

    def _authorize(self, q: dict[str, str], session: str | None = None, declined: bool = False) -> HttpResponse:
        """Errors about the client or its redirect URI are shown to the user (400), never redirected:
        redirecting to an unverified address would hand the code to whoever owns it. Every later
        error goes back to the (now trusted) redirect URI as ``error=…``."""
        client = self._client(q.get("client_id", ""))
        if client is None:
            return _error(400, "invalid_client", "unknown client_id")
        redirect_uri = q.get("redirect_uri", "")
        if not self.redirect_match(redirect_uri, client.redirect_uris):
            return _error(400, "invalid_request",
                          f"redirect_uri {redirect_uri!r} is not registered for this client (exact match)")
        state = q.get("state")

        def back(**fields: str) -> HttpResponse:
            out = {**fields, **({"state": state} if state is not None else {})}
            if self.sends_iss:
                out["iss"] = self.issuer
            return HttpResponse(302, Headers({"Location": f"{redirect_uri}?{urlencode(out)}"}))

        if q.get("response_type") != "code":
            return back(error="unsupported_response_type", error_description="only response_type=code")
        method, challenge = q.get("code_challenge_method"), q.get("code_challenge")
        if not challenge:
            return back(error="invalid_request", error_description="PKCE is required: send code_challenge")
        if method != "S256":
            return back(error="invalid_request",
                        error_description=f"code_challenge_method {method or '(none)'} refused: only S256")
        resource = q.get("resource", "")
        if resource not in self.resources:
            return back(error="invalid_target", error_description=f"unknown resource {resource!r}")
        scopes = frozenset(q.get("scope", "").split())
        unknown = sorted(scopes - set(self.scopes_supported)) if self.scopes_supported else []
        if unknown:
            return back(error="invalid_scope", error_description=f"unknown scope {' '.join(unknown)}")
        if self.front is None:
            subject: User | None = self.user.user if self.user.consents(client, scopes) else None
        else:
            subject = self.front.sessions.get(session or "")
            if subject is None:
                return json_response(200, self.front.login_page(self.issuer, session or "", q))
            if declined:
                subject = None
            elif (subject.subject, client.client_id, redirect_uri) not in self.front.approved:
                return json_response(200, self.front.consent_page(
                    session or "", q, client_id=client.client_id, client_name=client.client_name, how=client.how,
                    scopes=scopes))
        if subject is None:
            return back(error="access_denied", error_description="the user refused the request")
        code = f"code_{self._draw()}"
        self._codes[code] = _Grant(client.client_id, subject, scopes, resource, redirect_uri, challenge,
                                   self.tokens.clock_ms() + self.code_ttl_ms)
        return back(code=code)

    # -- the token endpoint -------------------------------------------------------------------------
    def _token(self, f: dict[str, str]) -> HttpResponse:
        grant_type = f.get("grant_type")
        if grant_type == "authorization_code":
            grant = self._codes.pop(f.get("code", ""), None)  # one use only, even when it fails below
            if grant is None or self.tokens.clock_ms() >= grant.expires_at_ms:
                return _error(400, "invalid_grant", "unknown, used or expired authorization code")
            if f.get("client_id") != grant.client_id or f.get("redirect_uri") != grant.redirect_uri:
                return _error(400, "invalid_grant", "client_id or redirect_uri differ from the authorization request")
            if s256(f.get("code_verifier", "")) != grant.code_challenge:
                return _error(400, "invalid_grant", "code_verifier does not match the code_challenge (PKCE)")
            client = self._client(grant.client_id) if self.token_auth is not None else None
            refused = self.token_auth(client, f) if self.token_auth is not None and client is not None else None
            if refused is not None or (self.token_auth is not None and client is None):
                return _error(401, "invalid_client", refused or "unknown client")
        elif grant_type == "refresh_token":
            grant = self._refresh.pop(f.get("refresh_token", ""), None)  # rotated: the old one is spent
            if grant is None or f.get("client_id") != grant.client_id:
                return _error(400, "invalid_grant", "unknown or already used refresh token")
            asked = set(f.get("scope", "").split())
            if asked - grant.scopes:
                return _error(400, "invalid_scope", "a refresh cannot widen the scopes the user granted")
        else:
            return _error(400, "unsupported_grant_type", f"grant_type {grant_type!r} is not supported")
        if f.get("resource", grant.resource) != grant.resource:
            return _error(400, "invalid_target", "resource differs from the one the user authorised")
        token = self.tokens.issue(grant.subject, client_id=grant.client_id, audience=grant.resource,
                                  scopes=grant.scopes, ttl_ms=self.access_ttl_ms)
        refresh = f"rt_{self._draw()}"
        self._refresh[refresh] = _Grant(grant.client_id, grant.subject, grant.scopes, grant.resource)
        return json_response(200, {"access_token": token.value, "token_type": "Bearer",
                                   "expires_in": int(self.access_ttl_ms // 1000),
                                   "scope": " ".join(sorted(grant.scopes)), "refresh_token": refresh})

