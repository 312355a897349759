"""The client's half of MCP authorization: from a ``401`` to a token, and back to the MCP request.

An MCP client that gets ``401 Unauthorized`` from a Server does not give up, and it does not ask
the user for a password. It follows the trail the Server left:

1. **read the challenge** — ``WWW-Authenticate: Bearer resource_metadata="…", scope="…"``
   (:func:`parse_www_authenticate`);
2. **fetch the Protected Resource Metadata** (RFC 9728) from that URL — or, when the header names
   none, from the well-known URIs (with the endpoint's path first, then the root) — and check that
   its ``resource`` is the Server it is talking to (the same URI, or one it lies under: a root
   document names the whole origin); from then on that ``resource`` is what the client asks for.
   A server that names no metadata and answers ``404`` at both URIs predates 2025-06-18: the client
   then follows **2025-03-26** — the server's origin is the authorization server (its RFC 8414
   metadata at the root, else the default endpoints ``/authorize``, ``/token``, ``/register``), and
   it says so in ``steps`` and through ``notice``;
3. **discover the authorization server**: its RFC 8414 metadata, then the OpenID Connect discovery
   document, at the URIs the spec lists in that order (path insertion first); the document's
   ``issuer`` must be the one the URL was built from; refuse an AS that does not advertise PKCE
   ``S256`` (without ``code_challenge_methods_supported`` the AS does not support PKCE, and the
   client must refuse — except on 2025-03-26's default endpoints, where no document exists and that
   revision makes PKCE mandatory for every authorization server; the client sends ``S256`` there all
   the same);
4. **register**, in the order the spec recommends (a SHOULD, with conditions): a pre-registered
   ``client_id`` for this AS; else the client's **metadata document** URL as its ``client_id``, only
   when the AS advertises ``client_id_metadata_document_supported``; else Dynamic Client
   Registration, only when the AS has a ``registration_endpoint`` (in 2026-07-28 with an
   ``application_type``: ``native`` for a loopback redirect); the spec's fourth option, asking the
   user for client details, is not simulated: the client stops and says so;
5. **authorize** with PKCE (a fresh verifier, its ``S256`` challenge), a fresh ``state``, the
   ``resource`` parameter (RFC 8707) naming the Server, and the scopes the challenge asked for
   (else those the metadata lists; none at all when neither says); record the issuer, and check the
   redirect's ``state`` — and, under 2026-07-28's rules, its ``iss`` (RFC 9207: a present ``iss``
   must equal the recorded issuer exactly, and one the AS promised must be present) — before
   sending the code anywhere. 2025-11-25 has no rule about ``iss``: a client that follows
   ``revision="2025-11-25"`` does not look at it (a simulator choice; checking complies too);
6. **exchange the code** at the token endpoint (with the verifier and the same ``resource``),
   authenticating the way the AS asks (``none`` for a public client, else its secret by HTTP Basic
   or in the form);
7. retry the MCP request with ``Authorization: Bearer <token>``.

Later, ``401 invalid_token`` on an expired token → the **refresh** grant (no user involved); ``403
insufficient_scope`` → **step-up**: authorize again with the scopes the ``403`` names added to
those asked for before (but not when the token already carries them: asking again cannot help).

A client with no user behind it (a scheduled job, another service) cannot sign in at a browser.
MCP's **client-credentials extension** lets such a client, given :class:`MachineCredentials` out
of band, ask the token endpoint directly (``grant_type=client_credentials``), proving who it is
with its secret or a signed JWT (RFC 7523) instead of a user's consent. Discovery is unchanged;
the grant is used only when the client holds such credentials *and* the authorization server lists
``client_credentials`` in ``grant_types_supported`` — an ordinary client always runs the code flow.

Client registrations belong to one authorization server: when the metadata names another one, the
client registers anew there and never shows it the old ``client_id``.

:class:`OAuthClient` does all that over a :class:`~mcp_sim.security.oauth_web.Web` — the simulated
one (:class:`~mcp_sim.security.oauth_web.SimulatedWeb`) or the real network
(:mod:`mcp_sim.bridge.oauth_http`); the MCP request itself is the caller's
(:func:`with_authorization` retries it). Before every fetch of a URL it learned from a server or a
metadata document it calls ``url_guard`` (when set), which may refuse it
(:mod:`mcp_sim.security.url_safety` in the simulation, https-or-loopback on the real wire).
Failures raise :class:`OAuthFailed`, which names the rule that stopped the flow (a rulebook id).

``revision`` says whose rules the client follows where the eras differ: ``"2025-11-25"`` or
``"2026-07-28"``; ``None`` (the real wire's default) follows the newest, whose checks also comply
with the older revisions.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from types import EllipsisType
from typing import Any, TypeVar
from urllib.parse import quote, urlencode, urlsplit

import anyio

from mcp_sim.protocol.revisions import LATEST
from mcp_sim.security.oauth import AS_METADATA_PATH, FORM, OIDC_METADATA_PATH, PRM_PATH, read_form, s256
from mcp_sim.security.oauth_web import Web
from mcp_sim.transports.http import HttpResponse, HttpStatusError

__all__ = ["JWT_BEARER_ASSERTION", "MachineCredentials", "NoResourceMetadata", "OAuthClient", "OAuthFailed", "TokenSet",
           "metadata_urls", "parse_www_authenticate", "with_authorization"]

JWT_BEARER_ASSERTION = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
"""RFC 7523's ``client_assertion_type``: the client proves who it is with a JWT it signed."""

T = TypeVar("T")

_PARAM = re.compile(r'([A-Za-z_]+)=(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))')


def parse_www_authenticate(value: str) -> dict[str, str]:
    """The parameters of a ``Bearer`` challenge: ``{"resource_metadata": …, "scope": …, "error": …}``.
    An empty dict for any other scheme."""
    scheme, _, rest = value.strip().partition(" ")
    if scheme.lower() != "bearer":
        return {}
    return {m.group(1): m.group(2) if m.group(2) is not None else m.group(3) for m in _PARAM.finditer(rest)}


class OAuthFailed(Exception):
    """The flow stopped; ``rule`` says which rule stopped it (a rulebook id, or — from a ``url_guard``
    — the guard's own words), for the learner and the tests."""

    def __init__(self, reason: str, rule: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.rule = rule


class NoResourceMetadata(OAuthFailed):
    """The server names no Protected Resource Metadata and has none at the well-known URIs (both
    ``404``): what a 2025-03-26 server looks like, so :meth:`OAuthClient.authorize` applies that
    revision's rules instead of stopping."""


@dataclass
class TokenSet:
    """What the token endpoint gave: the access token (sent to the Server), when it expires on the
    virtual clock, its scopes, and the refresh token (sent only to the AS)."""

    access_token: str
    expires_at_ms: float
    scopes: frozenset[str]
    refresh_token: str | None = None


@dataclass(frozen=True)
class MachineCredentials:
    """What a client acting on its own behalf holds (no user, so no browser and no consent): the
    ``client_id`` its administrator registered, and how it proves it at the token endpoint — its
    ``client_secret``, or ``assertion``, which returns a short-lived JWT signed with the client's
    private key for an audience (the authorization server's issuer; RFC 7523 §2.2). ``issuer``,
    when given, is the one authorization server these credentials may be shown to: a secret sent
    to whichever server a (possibly malicious) MCP server names is a secret given away."""

    client_id: str
    client_secret: str | None = None
    assertion: Callable[[str], str] | None = None
    issuer: str | None = None


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def within(resource: str, server_url: str) -> bool:
    """Does the protected resource ``resource`` cover ``server_url``: the same URI, or one the server's
    URL lies under (same origin, a path prefix ending at a ``/``)?"""
    if resource == server_url:
        return True
    if _origin(resource) != _origin(server_url):
        return False
    base = urlsplit(resource).path.rstrip("/")
    return urlsplit(server_url).path.startswith(base + "/")


def basic_credentials(client_id: str, secret: str) -> str:
    """``Basic base64(id:secret)``, each part form-encoded first (RFC 6749 §2.3.1)."""
    pair = f"{quote(client_id, safe='')}:{quote(secret, safe='')}"
    return "Basic " + base64.b64encode(pair.encode()).decode("ascii")


def metadata_urls(issuer: str) -> list[str]:
    """Where to look for an authorization server's metadata, in the order MCP's spec gives: RFC 8414
    first, then OpenID Connect discovery (for an issuer with a path, both path-inserted forms and
    the path-appended OIDC form)."""
    origin, path = _origin(issuer), urlsplit(issuer).path.rstrip("/")
    if not path:
        return [f"{origin}{AS_METADATA_PATH}", f"{origin}{OIDC_METADATA_PATH}"]
    return [f"{origin}{AS_METADATA_PATH}{path}", f"{origin}{OIDC_METADATA_PATH}{path}",
            f"{origin}{path}{OIDC_METADATA_PATH}"]


@dataclass
class OAuthClient:
    """One MCP client's OAuth state for one MCP Server (``resource``, its canonical URI).

    ``participant`` names the client in the trace; ``redirect_uri`` is where the browser comes back
    (a loopback URL for a native Host); ``preregistered`` maps an issuer to a ``client_id`` obtained
    out of band. ``draw`` is the simulation's seeded generator of random hex (``Simulation.token``),
    ``clock_ms`` its virtual clock."""

    web: Web
    participant: str
    resource: str
    client_name: str
    redirect_uri: str
    draw: Callable[[], str]
    clock_ms: Callable[[], float]
    preregistered: dict[str, str] = field(default_factory=dict)
    client_secrets: dict[str, str] = field(default_factory=dict)
    """The secret of a pre-registered confidential client, by ``client_id``."""
    metadata_document: str | None = None
    """The https URL of this client's Client ID Metadata Document, if it publishes one."""
    browser: str = "browser"
    """The trace's name for the user's browser, which carries the authorization request."""
    application_type: str | None = None
    """What the client tells dynamic registration it is: ``"native"`` (an app on the user's machine,
    a loopback redirect) or ``"web"``. ``None`` follows the revision: 2026-07-28 requires one, so the
    client derives it from its redirect URI (loopback: ``"native"``, else ``"web"``); 2025-11-25 asks
    for none, so the legacy client leaves it out (the simulator's choice; sending it complies too)."""
    revision: str | None = None
    """The revision whose authorization rules the client follows where the eras differ (``iss``,
    ``application_type``); ``None``: the newest."""
    url_guard: Callable[[str], None] | None = None
    """Called before every fetch of a URL learned from a server or a metadata document; it raises
    (an :class:`OAuthFailed` naming the rule) to refuse one (see :mod:`mcp_sim.security.url_safety`)."""
    machine: MachineCredentials | None = None
    """Credentials for the client-credentials grant (a client with no user); ``None``: the code flow."""
    notice: Callable[[str], None] | None = None
    """Shown each line the user should see although nothing failed (stderr and the trace on the real
    wire); every such line is in ``steps`` too."""
    tokens: TokenSet | None = None
    client_id: str | None = None
    client_secret: str | None = None
    issuer: str | None = None
    """The authorization server ``client_id`` (and ``client_secret``) belong to."""
    resource_indicator: str | None = None
    """The ``resource`` the Protected Resource Metadata names (RFC 8707's parameter); ``resource``
    until it is read."""
    requested_scopes: frozenset[str] = frozenset()
    as_metadata: dict[str, Any] | None = None
    steps: list[str] = field(default_factory=list)
    """What the flow did, one line a step (for tests and notebooks)."""
    _flow: anyio.Lock | None = field(default=None, init=False, repr=False, compare=False)
    """One flow at a time (made on first use, inside the event loop)."""

    # -- entry points ------------------------------------------------------------------------------
    async def on_challenge(self, response: HttpResponse, carried: str | EllipsisType | None = ...) -> str:
        """React to a Server's ``401``/``403``: refresh, step up or authorize from scratch. Returns the
        access token to retry with; raises :class:`OAuthFailed` when no token can be had.

        ``carried`` is the access token the refused request carried (``None``: none). A refusal is
        judged against *that* token, not against the one the client holds now: with several calls in
        flight, another caller's flow may have replaced it meanwhile — with a token that has the
        scope, so this request only needs to be retried with it, or without it, so a step-up is still
        due. Concurrent challenges run one flow at a time, so the user is asked once. Without
        ``carried`` (``...``) the request is taken to have carried the current token."""
        if self._flow is None:
            self._flow = anyio.Lock()
        async with self._flow:
            return await self._answer_challenge(response, carried)

    async def _answer_challenge(self, response: HttpResponse, carried: str | EllipsisType | None) -> str:
        challenge = parse_www_authenticate(response.headers.get("WWW-Authenticate") or "")
        scope = challenge.get("scope")
        current = self.tokens
        replaced = current is not None and carried is not ... and carried != current.access_token
        if response.status == 403 and challenge.get("error") == "insufficient_scope":
            needed = set((scope or "").split())
            if replaced and current is not None and needed <= set(current.scopes):
                self.steps.append(f"step-up: another request already got a token with scope {scope!r}; "
                                  "retry with it")
                return current.access_token
            held = set(self.tokens.scopes) if self.tokens else set()
            if needed and needed <= held:
                raise OAuthFailed(f"the Server refuses scope {scope!r} although the token carries it: asking "
                                  "again for scopes already granted cannot help, so the client stops",
                                  "auth.step-up-retry-limit")
            self.steps.append(f"step-up: the Server needs scope {scope!r}")
            wanted = needed | held | set(self.requested_scopes)
            return await self.authorize(challenge, " ".join(sorted(wanted)))
        if response.status != 401:
            raise OAuthFailed(f"HTTP {response.status} is not an authorization challenge")
        if replaced and current is not None and current.expires_at_ms > self.clock_ms():
            self.steps.append("another request already got a new token: retry with it")
            return current.access_token
        if self.tokens is not None and self.tokens.refresh_token is not None:
            try:
                return await self.refresh()
            except OAuthFailed:
                self.steps.append("refresh failed: authorize again")
        return await self.authorize(challenge, scope)

    async def authorize(self, challenge: dict[str, str], scope: str | None) -> str:
        """Steps 2–6: discovery, registration, the code flow with PKCE, the token (or, for a client
        with no user at an authorization server that offers it, the client-credentials grant)."""
        try:
            prm: dict[str, Any] | None = await self._resource_metadata(challenge.get("resource_metadata"))
        except NoResourceMetadata:
            prm = None  # none named, none at the well-known URIs: a server older than 2025-06-18
        if prm is None:
            issuer = _origin(self.resource)
            meta = await self._legacy_as_metadata(issuer)
        else:
            servers = prm.get("authorization_servers") or []
            if not servers:
                raise OAuthFailed("the resource metadata names no authorization server",
                                  "auth.prm-names-authorization-server")
            if scope is None and prm.get("scopes_supported"):
                scope = " ".join(prm["scopes_supported"])  # no scope in the challenge: what the Server lists
            issuer = str(servers[0])  # several listed: the first (a simulator choice)
            meta = await self._as_metadata(issuer)
        resource = self.resource_indicator or self.resource
        if self._machine_grant(issuer, meta):
            return await self._client_credentials(issuer, scope, resource)
        if scope and "offline_access" in (meta.get("scopes_supported") or []) \
                and "offline_access" not in scope.split():
            scope += " offline_access"  # a MAY: the AS lists it, and the client would like a refresh token
        client_id = await self._client_id(issuer, meta)
        verifier = self.draw() + self.draw()  # 64 hex characters: within PKCE's 43–128
        state = self.draw()[:16]
        query = {"response_type": "code", "client_id": client_id, "redirect_uri": self.redirect_uri,
                 "code_challenge": s256(verifier), "code_challenge_method": "S256",
                 "resource": resource, "state": state, **({"scope": scope} if scope else {})}
        self.requested_scopes = frozenset((scope or "").split())
        expected_issuer = str(meta["issuer"])  # recorded beside the verifier and state of this request
        endpoint = str(meta["authorization_endpoint"])
        self._guard(endpoint)
        # The user's browser carries this request (the client opens it, the user signs in there).
        answer = await self.web.fetch(self.browser, "GET", f"{endpoint}?{urlencode(query)}")
        location = answer.headers.get("Location") if answer.status in (302, 303) else None
        if location is None:
            raise OAuthFailed(f"the authorization endpoint answered {answer.status_line()}: {answer.body} "
                              "(an authorization server never redirects to an unregistered redirect URI)",
                              "auth.exact-redirect-match")
        back = read_form(urlsplit(location).query)
        if back.get("state") != state:
            raise OAuthFailed("the redirect's state differs from the one sent", "auth.state")
        if self.checks_iss:
            self._check_iss(back, expected_issuer, meta)
        if "error" in back:
            raise OAuthFailed(f"{back['error']}: {back.get('error_description', '')} (the user or the "
                              "authorization server refused the request)")
        self.steps.append("the user authorised; the browser brings the code back")
        if not self.checks_iss and "iss" in back:
            self.steps.append("iss in the response is not checked: 2025-11-25 has no rule for it")
        return await self._token_request({"grant_type": "authorization_code", "code": back["code"],
                                          "redirect_uri": self.redirect_uri, "client_id": client_id,
                                          "code_verifier": verifier, "resource": resource})

    @property
    def follows_2026(self) -> bool:
        """Whether the client follows 2026-07-28's authorization rules (``revision`` that or ``None``)."""
        return self.revision is None or self.revision >= LATEST

    @property
    def checks_iss(self) -> bool:
        """RFC 9207's ``iss`` check is a 2026-07-28 rule; 2025-11-25 has none, and the legacy client
        follows its revision (a simulator choice: a legacy client that checks complies too)."""
        return self.follows_2026

    def registration_application_type(self) -> str | None:
        """The ``application_type`` of a Dynamic Client Registration request: the one given, else —
        under 2026-07-28, which requires one — ``native`` for a loopback redirect URI (an app on the
        user's machine), ``web`` otherwise; under 2025-11-25 none."""
        if self.application_type is not None:
            return self.application_type
        if not self.follows_2026:
            return None
        host = urlsplit(self.redirect_uri).hostname or ""
        return "native" if host in ("localhost", "127.0.0.1", "::1") else "web"

    @staticmethod
    def _check_iss(back: dict[str, str], expected_issuer: str, meta: dict[str, Any]) -> None:
        """RFC 9207 section 2.4 as 2026-07-28 applies it, before the code goes to any token endpoint:
        a present ``iss`` is compared with the recorded issuer as a plain string (no normalising), and
        a missing one is refused only when the metadata promised it. On a mismatch not even an
        ``error`` in the response is acted on."""
        if "iss" in back and back["iss"] != expected_issuer:
            raise OAuthFailed(f"the redirect names issuer {back['iss']!r}, not the recorded {expected_issuer!r} "
                              "(a possible mix-up): the code is not sent anywhere", "auth.iss-validate")
        if "iss" not in back and meta.get("authorization_response_iss_parameter_supported"):
            raise OAuthFailed("the redirect carries no iss although the authorization server promised one",
                              "auth.iss-validate")

    def _machine_grant(self, issuer: str, meta: dict[str, Any]) -> bool:
        """Client credentials apply only to a client given machine credentials (for this issuer, when
        they name one) at an authorization server that lists the grant."""
        return self.machine is not None and self.machine.issuer in (None, issuer) \
            and "client_credentials" in (meta.get("grant_types_supported") or [])

    async def _client_credentials(self, issuer: str, scope: str | None, resource: str) -> str:
        """The client-credentials grant: no browser, no code, no PKCE — one token request in which the
        client authenticates as itself (no refresh token either: it can simply ask again)."""
        assert self.machine is not None
        self.issuer, self.client_id, self.client_secret = issuer, self.machine.client_id, self.machine.client_secret
        self.requested_scopes = frozenset((scope or "").split())
        self.steps.append("no user: the client_credentials grant, the client authenticating as itself")
        return await self._token_request({"grant_type": "client_credentials", "client_id": self.machine.client_id,
                                          "resource": resource, **({"scope": scope} if scope else {})})

    async def refresh(self) -> str:
        """The refresh grant: a new access token without the user (the refresh token is rotated)."""
        if self.tokens is None or self.tokens.refresh_token is None or self.client_id is None:
            raise OAuthFailed("no refresh token")
        self.steps.append("the token expired: refresh it")
        return await self._token_request({"grant_type": "refresh_token", "refresh_token": self.tokens.refresh_token,
                                          "client_id": self.client_id,
                                          "resource": self.resource_indicator or self.resource})

    # -- the steps ---------------------------------------------------------------------------------
    def _guard(self, url: str) -> None:
        """Let ``url_guard`` refuse a URL the flow learned before anything is sent to it."""
        if self.url_guard is not None:
            self.url_guard(url)

    def _notice(self, line: str) -> None:
        """A step the user should see even when nothing fails (e.g. an old revision's rules applied)."""
        self.steps.append(line)
        if self.notice is not None:
            self.notice(line)

    async def _get_json(self, url: str) -> dict[str, Any] | None:
        return (await self._fetch_json(url))[1]

    async def _fetch_json(self, url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, Any] | None]:
        """``GET`` a JSON document: ``(status, the object or None)``."""
        self._guard(url)
        response = await self.web.fetch(self.participant, "GET", url,
                                        headers={"Accept": "application/json", **(headers or {})})
        if response.status != 200 or not response.body:
            return response.status, None
        try:
            data = json.loads(response.body)
        except ValueError:
            return response.status, None
        return response.status, data if isinstance(data, dict) else None

    async def _resource_metadata(self, url: str | None) -> dict[str, Any]:
        """The Protected Resource Metadata, checked. Raises :class:`NoResourceMetadata` when the
        challenge named none and both well-known URIs answered ``404`` (a server older than
        2025-06-18), :class:`OAuthFailed` for any other absence."""
        origin, path = _origin(self.resource), urlsplit(self.resource).path.rstrip("/")
        candidates = [url] if url else [f"{origin}{PRM_PATH}{path}", f"{origin}{PRM_PATH}"]
        statuses = []
        for candidate in candidates:
            status, document = await self._fetch_json(candidate)
            statuses.append(status)
            if document is not None:
                named = document.get("resource")
                if not isinstance(named, str) or not within(named, self.resource):
                    raise OAuthFailed(f"the metadata is for {named!r}, not {self.resource!r} (RFC 9728 section "
                                      "3.3: the document names the resource the client asked about)")
                self.resource_indicator = named  # sent exactly as published
                self.steps.append("read the Protected Resource Metadata")
                return document
        if url is None and statuses == [404, 404]:
            raise NoResourceMetadata("no Protected Resource Metadata found (since 2025-06-18 every protected "
                                     "server publishes it)", "auth.server-publishes-prm")
        raise OAuthFailed("no Protected Resource Metadata found", "auth.server-publishes-prm")

    async def _legacy_as_metadata(self, base: str) -> dict[str, Any]:
        """The 2025-03-26 rules, for a server that publishes no Protected Resource Metadata: the MCP
        server's origin (``base``, its URL without the path) is the authorization server. Its RFC 8414
        metadata is read at the root; when that is missing too (``404``), the client uses the default
        endpoints ``/authorize``, ``/token`` and ``/register`` under ``base``, as 2025-03-26 requires.

        Metadata that exists is held to the same rules as anywhere else (its ``issuer``, PKCE
        ``S256``). Only the default endpoints come without ``code_challenge_methods_supported``:
        there is no document to list it, and 2025-03-26 makes PKCE mandatory for every client and
        authorization server, so the client proceeds — always sending an ``S256`` challenge."""
        self._notice(f"no Protected Resource Metadata: following 2025-03-26, the MCP server's origin {base} "
                     "is the authorization server")
        url = f"{base}{AS_METADATA_PATH}"
        # 2025-03-26 asks for the revision on this request, so the server can answer by revision.
        status, document = await self._fetch_json(url, {"MCP-Protocol-Version": "2025-03-26"})
        if document is not None:
            return self._accept_as_metadata(document, base, url)
        if status != 404:
            raise OAuthFailed(f"no authorization server metadata for {base} (HTTP {status})",
                              "2025-03-26: only a server without metadata (404) gets the default endpoints.")
        self._notice(f"no authorization server metadata either: 2025-03-26's default endpoints {base}/authorize, "
                     f"{base}/token, {base}/register (PKCE S256 all the same: 2025-03-26 requires it)")
        self.as_metadata = {"issuer": base, "authorization_endpoint": f"{base}/authorize",
                            "token_endpoint": f"{base}/token", "registration_endpoint": f"{base}/register"}
        return self.as_metadata

    async def _as_metadata(self, issuer: str) -> dict[str, Any]:
        for url in metadata_urls(issuer):
            document = await self._get_json(url)
            if document is not None:
                return self._accept_as_metadata(document, issuer, url)
        raise OAuthFailed(f"no authorization server metadata for {issuer}", "auth.as-metadata-order")

    def _accept_as_metadata(self, document: dict[str, Any], issuer: str, url: str) -> dict[str, Any]:
        """Check an authorization server's metadata document (read at ``url``) and keep it."""
        if document.get("issuer") != issuer:
            raise OAuthFailed(f"the metadata at {url} names issuer {document.get('issuer')!r}, not {issuer!r}",
                              "auth.as-metadata-issuer-identical")
        if "S256" not in (document.get("code_challenge_methods_supported") or []) \
                and not self._machine_grant(issuer, document):  # no code, so no PKCE, in that grant
            raise OAuthFailed("the authorization server does not advertise PKCE S256 in "
                              "code_challenge_methods_supported", "auth.pkce-refuse-without-methods")
        self.as_metadata = document
        self.steps.append(f"discovered the authorization server at {url}")
        return document

    async def _client_id(self, issuer: str, meta: dict[str, Any]) -> str:
        if self.client_id is not None and self.issuer == issuer:
            return self.client_id
        if self.client_id is not None:
            self.steps.append("another authorization server: register there anew")
        self.issuer, self.client_secret = issuer, None
        if issuer in self.preregistered:
            self.client_id = self.preregistered[issuer]
            self.client_secret = self.client_secrets.get(self.client_id)
            self.steps.append("use the pre-registered client_id")
            return self.client_id
        if self.metadata_document is not None and meta.get("client_id_metadata_document_supported"):
            self.client_id = self.metadata_document
            self.steps.append("use the client's metadata document URL as its client_id")
            return self.client_id
        endpoint = meta.get("registration_endpoint")
        if not endpoint:
            raise OAuthFailed("no pre-registered client_id, no metadata document the server accepts, and no "
                              "registration endpoint: the user would have to enter client details",
                              "auth.registration-priority")
        asked = {"client_name": self.client_name, "redirect_uris": [self.redirect_uri],
                 "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
                 "token_endpoint_auth_method": "none"}
        application_type = self.registration_application_type()
        if application_type is not None:
            asked["application_type"] = application_type
        body = json.dumps(asked)
        self._guard(str(endpoint))
        answer = await self.web.fetch(self.participant, "POST", str(endpoint),
                                      headers={"Content-Type": "application/json"}, body=body)
        if answer.status not in (200, 201):
            raise OAuthFailed(f"registration refused: {answer.body}", "auth.dcr-application-type"
                              if self.follows_2026 else "auth.legacy.dcr-may")
        registered = json.loads(answer.body or "{}")
        self.client_id = str(registered["client_id"])
        secret = registered.get("client_secret")
        self.client_secret = secret if isinstance(secret, str) and secret else None
        self.steps.append("registered dynamically (RFC 7591)")
        return self.client_id

    def _client_authentication(self, fields: dict[str, str]) -> dict[str, str]:
        """How the client proves who it is at the token endpoint: a public client (no secret) only
        names itself; a confidential one sends its secret the way the AS lists first of the two
        (HTTP Basic when the AS names neither); a machine client that signs JWTs sends one when the AS
        lists ``private_key_jwt``. Returns the headers to add (``fields`` may change)."""
        methods = (self.as_metadata or {}).get("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
        signer = self.machine.assertion if self.machine is not None else None
        if signer is not None and "private_key_jwt" in methods and fields.get("grant_type") == "client_credentials":
            del fields["client_id"]  # the assertion's sub names the client (RFC 7523 §3)
            fields.update(client_assertion_type=JWT_BEARER_ASSERTION, client_assertion=signer(self.issuer or ""))
            return {}
        if self.client_secret is None or self.client_id is None:
            return {}
        usable = [m for m in methods if m in ("client_secret_basic", "client_secret_post", "none")]
        method = usable[0] if usable else "client_secret_basic"
        if method == "client_secret_post":
            fields["client_secret"] = self.client_secret
        elif method == "client_secret_basic":
            del fields["client_id"]  # Basic carries it
            return {"Authorization": basic_credentials(self.client_id, self.client_secret)}
        return {}

    async def _token_request(self, fields: dict[str, str]) -> str:
        assert self.as_metadata is not None or self.tokens is not None
        endpoint = str((self.as_metadata or {}).get("token_endpoint", ""))
        self._guard(endpoint)
        headers = {"Content-Type": FORM, **self._client_authentication(fields)}
        answer = await self.web.fetch(self.participant, "POST", endpoint, headers=headers, body=urlencode(fields))
        try:
            data = json.loads(answer.body or "{}")
        except ValueError:
            data = {}
        if answer.status != 200 or not isinstance(data, dict) or not isinstance(data.get("access_token"), str):
            said = data if isinstance(data, dict) else {}
            raise OAuthFailed(f"HTTP {answer.status}: {said.get('error')}: {said.get('error_description', '')} "
                              "(the token endpoint refused the grant)")
        scope = str(data.get("scope") or " ".join(sorted(self.requested_scopes)))
        self.tokens = TokenSet(data["access_token"], self.clock_ms() + 1000.0 * float(data.get("expires_in", 3600)),
                               frozenset(scope.split()), data.get("refresh_token"))
        self.steps.append(f"got an access token for {self.resource} (scope {data.get('scope', '')!r})")
        return self.tokens.access_token


async def with_authorization(oauth: OAuthClient, action: Callable[[str | None], Awaitable[T]], *,
                             attempts: int = 3) -> T:
    """Run the MCP ``action(token)`` with the token ``oauth`` holds (``None`` at first); on a
    ``401``/``403`` challenge get a new token from ``oauth`` and run ``action`` again with it.

    ``action`` decides what a retry means: a fresh connection with the token (a Client whose
    opening failed is spent: the Host makes a new one) or the same stream with ``stream.token``
    replaced (an established connection whose token expired)."""
    token = oauth.tokens.access_token if oauth.tokens is not None else None
    for _ in range(attempts - 1):
        try:
            return await action(token)
        except HttpStatusError as refused:
            if refused.status not in (401, 403):
                raise
            token = await oauth.on_challenge(refused.response, token)  # judged against the token it carried
    return await action(token)
