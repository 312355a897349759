"""The browser-facing side of a realistic authorization server: who is signed in *in this browser*,
which client the user is asked about, and which clients may register which redirect URIs.

A bare :class:`~mcp_sim.security.oauth.OAuthAuthorizationServer` stands in for the whole sign-in
experience with one scripted person: whoever arrives at ``/authorize`` is that person, and that person
consents. That is enough to teach a client's flow, and not enough for a security lab: a real
authorization server issues a code only for the account signed in *in the browser that asked*, asks
its user about each client by name and redirect host, and decides by policy which redirect URIs a
client may register at all. :class:`FrontChannel` adds those three things when an AS is given one:

* **browser sessions** — a cookie per browser (``__Host-as``); a browser without a signed-in session
  gets a sign-in page, and its person can only sign in as themselves (:attr:`FrontChannel.accounts`);
* **consent per client, shown** — a consent page naming the client, its client id, the redirect URI
  and its host, with a warning for a redirect that only goes to this computer (rules
  ``auth.cimd-show-redirect-host`` and ``auth.cimd-warn-localhost``). The answer is remembered per
  account, client and redirect URI, as real servers remember consent;
* **registration policy** — :func:`open_registration` (any https or loopback redirect URI: what the
  bare AS does) or :func:`native_only_registration` (dynamic registration only for loopback redirects;
  a web client is registered by its developer or uses a Client ID Metadata Document on its own host,
  :func:`document_on_own_host`). Which policy to run is the server's choice (rule
  ``auth.sim-registration-policy``).

Pages are JSON, the way the simulated :class:`~mcp_sim.scenarios.security.authorization_labs.Browser`
reads them: ``{"login": {...}}`` and ``{"consent": {...}}``, each with the ``form`` to post and a
one-time ``ticket`` bound to the browser session it was shown to.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from mcp_sim.security.identity import User

__all__ = [
    "LOOPBACK_HOSTS",
    "FrontChannel",
    "RegistrationPolicy",
    "document_on_own_host",
    "is_loopback_redirect",
    "native_only_registration",
    "open_registration",
    "redirect_host",
]

SESSION_COOKIE = "__Host-as"
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")

RegistrationPolicy = Callable[[Collection[str]], str | None]
"""Which redirect URIs a dynamically registered client may have: the reason to refuse, or ``None``."""


def is_loopback_redirect(uri: str) -> bool:
    """``http`` on a loopback host: a native app's own local server."""
    parts = urlsplit(uri)
    return parts.scheme == "http" and parts.hostname in LOOPBACK_HOSTS


def redirect_host(uri: str) -> str:
    """The host a redirect URI delivers to, as a consent page shows it (never the ``user@`` part)."""
    return urlsplit(uri).hostname or ""


def open_registration(uris: Collection[str]) -> str | None:
    """Anyone may register any https or loopback redirect URI (OAuth 2.1's floor, and nothing more)."""
    bad = [u for u in uris if not (urlsplit(u).scheme == "https" or is_loopback_redirect(u))]
    return f"{bad[0]} is neither https nor a loopback URL" if bad else None


def native_only_registration(uris: Collection[str]) -> str | None:
    """Dynamic registration for native apps only (loopback redirect URIs). An https redirect URI
    delivers to a web site, and anyone could claim any site's address; such clients are registered by
    their developer or name themselves with a metadata document on their own host."""
    bad = [u for u in uris if not is_loopback_redirect(u)]
    return (f"{bad[0]} is not a loopback URL: web clients are pre-registered or use a Client ID Metadata "
            "Document on their own host") if bad else None


def document_on_own_host(client_id: str, document: dict[str, Any]) -> str | None:
    """A Client ID Metadata Document may list loopback redirect URIs and https ones on the document's
    own host only: the document proves control of that host and of nothing else."""
    host = urlsplit(client_id).hostname
    for uri in document.get("redirect_uris") or ():
        parts = urlsplit(str(uri))
        if not is_loopback_redirect(str(uri)) and not (parts.scheme == "https" and parts.hostname == host
                                                        and not parts.username):
            return f"redirect URI {uri} is not on the document's host {host}"
    return None


@dataclass
class FrontChannel:
    """Sign-in sessions per browser and consent per client, for one authorization server.

    ``accounts`` maps a login name to its password and the user it signs in; ``draw`` gives random hex
    (the simulation's generator) for session ids and tickets."""

    accounts: dict[str, tuple[str, User]]
    draw: Callable[[], str]
    issued: set[str] = field(default_factory=set)
    """Every session id this server handed out (a cookie it never set starts a new session)."""
    sessions: dict[str, User] = field(default_factory=dict)
    """Session id → the user signed in in that browser."""
    approved: set[tuple[str, str, str]] = field(default_factory=set)
    """(subject, client_id, redirect_uri) the users approved; remembered."""
    tickets: dict[str, tuple[str, dict[str, str]]] = field(default_factory=dict)
    """A page's one-time ticket → (the browser session it was shown to, the authorization request)."""
    pages: list[dict[str, Any]] = field(default_factory=list)
    """Every consent page shown, in order (what the user saw)."""

    @staticmethod
    def session_of(cookie_header: str | None) -> str:
        """The session id in a ``Cookie`` header, or ``""``."""
        for part in (cookie_header or "").split(";"):
            name, _, value = part.strip().partition("=")
            if name == SESSION_COOKIE:
                return value
        return ""

    def new_session(self) -> str:
        session = self.draw()[:24]
        self.issued.add(session)
        return session

    def set_cookie(self, session: str) -> str:
        return f"{SESSION_COOKIE}={session}; Secure; HttpOnly; SameSite=Lax; Path=/"

    def signed_in(self, user: User) -> str:
        """Sign ``user`` in on a new session ahead of the story (a browser that signed in earlier); the
        cookie value to give that browser (``name=value``)."""
        session = self.new_session()
        self.sessions[session] = user
        return f"{SESSION_COOKIE}={session}"

    def ticket(self, session: str, query: dict[str, str]) -> str:
        ticket = self.draw()[:20]
        self.tickets[ticket] = (session, dict(query))
        return ticket

    def take(self, ticket: str, session: str) -> dict[str, str] | None:
        """The request a ticket stands for, once, and only in the browser it was shown to."""
        owner, query = self.tickets.pop(ticket, ("", {}))
        return query if owner and owner == session else None

    def login_page(self, issuer: str, session: str, query: dict[str, str]) -> dict[str, Any]:
        return {"login": {"issuer": issuer, "form": "/login", "ticket": self.ticket(session, query)}}

    def sign_in(self, session: str, form: dict[str, str]) -> User | None:
        """Check the credentials posted from the sign-in page; on success the session is signed in."""
        password, user = self.accounts.get(form.get("username", ""), ("", None))
        if user is None or not password or form.get("password") != password:
            return None
        self.sessions[session] = user
        return user

    def consent_page(self, session: str, query: dict[str, str], *, client_id: str, client_name: str,
                     how: str, scopes: Collection[str]) -> dict[str, Any]:
        """What the user is shown before a code is issued to a client it has not approved yet: the
        client's name and id, where the code goes (the full redirect URI and, prominently, its host) and
        a warning when that is only this computer."""
        redirect_uri = query.get("redirect_uri", "")
        page = {"client_name": client_name, "client_id": client_id, "registered_by": how,
                "redirect_uri": redirect_uri, "redirect_host": redirect_host(redirect_uri),
                "scopes": sorted(scopes), "form": "/consent", "ticket": self.ticket(session, query)}
        if is_loopback_redirect(redirect_uri):
            page["warning"] = ("this sign-in sends you back to a program on this computer; approve only if you "
                               f"just started signing in to {client_name} here")
        self.pages.append({k: v for k, v in page.items() if k != "ticket"})
        return {"consent": page}
