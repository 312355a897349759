"""What the authorization labs share: the user's browser, web sites that remember what they were sent,
and the MCP Server whose data an attacker is after.

* :class:`Browser` — a person's browser. It follows redirects, keeps one cookie per site (so an
  authorization server with browser sessions, :class:`~mcp_sim.security.oauth_front.FrontChannel`,
  knows who is signed in *in this browser*), signs its person in on a sign-in page with *their own*
  credentials, and on a consent page asks its person and posts the answer. Two browsers are two
  people: the attacker's browser is never signed in as the victim.
* :class:`LoggingSite` — a web server that remembers every request (where an attacker reads a code a
  redirect delivered), can serve JSON documents (a client's metadata document) and can send a browser
  that arrived without a code on to a next address (an attacker trying the next trick).
* :func:`private_files`, :func:`files_seen`, :func:`redeem` — the private files Server, a call to it
  with a token, and a code redeemed at a token endpoint: what the attacker obtained is read from these.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit

from mcp_sim.capabilities.context import Context
from mcp_sim.roles.server import Server
from mcp_sim.security.identity import User, pick_distinct
from mcp_sim.security.lab import LabContext
from mcp_sim.security.oauth import FORM, form_body, read_form
from mcp_sim.security.oauth_web import SimulatedWeb
from mcp_sim.security.tokens import AuthorizationServer, TokenRejected
from mcp_sim.transports.http import Headers, HttpRequest, HttpResponse

__all__ = ["Browser", "LoggingSite", "files_seen", "last_refusal", "origin", "private_files", "redeem"]


def origin(url: str) -> str:
    """``scheme://host[:port]`` of ``url``, without any user information."""
    parts = urlsplit(url)
    port = f":{parts.port}" if parts.port else ""
    host = f"[{parts.hostname}]" if parts.hostname and ":" in parts.hostname else parts.hostname
    return f"{parts.scheme}://{host}{port}"


def _never(page: dict[str, Any]) -> bool:
    return False


def _nobody(page: dict[str, Any]) -> dict[str, str] | None:
    return None


@dataclass
class Browser:
    """A person's browser. It follows redirects, sends each site the cookie that site set, drops the
    ``user@`` part of a URL (the host is what follows the ``@``); on a sign-in page it posts what
    ``sign_in(page)`` gives (its person's own credentials, or ``None``: it stops there) and on a consent
    page it asks its person (``decide(page)``) and posts the answer."""

    web: SimulatedWeb
    name: str
    decide: Callable[[dict[str, Any]], bool] = _never
    cookies: dict[str, str] = field(default_factory=dict)
    sign_in: Callable[[dict[str, Any]], dict[str, str] | None] = _nobody
    answers: list[str] = field(default_factory=list)
    """What its person answered on consent pages, one line each."""

    async def open(self, url: str, *, hops: int = 12, stop_at: str | None = None) -> HttpResponse:
        """Open ``url`` and follow where it leads; the last response. With ``stop_at`` (an origin) the
        browser stops before a redirect to that site (its ``Location`` is in the returned response)."""
        method, body = "GET", ""
        response = HttpResponse(404)
        for _ in range(hops):
            site, parts = origin(url), urlsplit(url)
            url = urlunsplit((parts.scheme, site.split("//", 1)[1], parts.path or "/", parts.query, ""))
            headers = {"Cookie": self.cookies[site]} if site in self.cookies else {}
            if body:
                headers["Content-Type"] = FORM
            response = await self.web.fetch(self.name, method, url, headers=headers, body=body)
            cookie = response.headers.get("Set-Cookie")
            if cookie:
                self.cookies[site] = cookie.split(";")[0]
            location = response.headers.get("Location")
            if response.status in (302, 303) and location:
                url, method, body = urljoin(url, location), "GET", ""
                if stop_at is not None and origin(url) == stop_at:
                    return response
                continue
            page = response.json() if response.status == 200 and response.content_type == "application/json" else {}
            login = page.get("login") if isinstance(page, dict) else None
            if isinstance(login, dict):
                credentials = self.sign_in(login)
                if credentials is None:
                    return response
                url, method, body = urljoin(url, login["form"]), "POST", form_body({"ticket": login["ticket"],
                                                                                    **credentials})
                continue
            consent = page.get("consent") if isinstance(page, dict) else None
            if not isinstance(consent, dict):
                return response
            answer = "yes" if self.decide(consent) else "no"
            self.answers.append(f"{'approved' if answer == 'yes' else 'declined'} {consent.get('client_name')!r} "
                                f"(redirecting to {consent.get('redirect_uri')})")
            url, method, body = urljoin(url, consent["form"]), "POST", form_body({"ticket": consent["ticket"],
                                                                                  "approve": answer})
        return response


@dataclass
class LoggingSite:
    """A web server that answers every request with a plain page and remembers what it was sent —
    including any ``code`` a redirect delivered in the query. It also serves the JSON ``documents`` it
    holds (by path), and sends a browser that arrives without a code to the next of ``next_hops``."""

    participant: str
    received: list[str] = field(default_factory=list)
    documents: dict[str, dict[str, Any]] = field(default_factory=dict)
    next_hops: list[str] = field(default_factory=list)

    def serve(self, request: HttpRequest) -> HttpResponse:
        self.received.append(request.path)
        path, _, query = request.path.partition("?")
        if request.method == "GET" and path in self.documents:
            return HttpResponse(200, Headers({"Content-Type": "application/json"}), json.dumps(self.documents[path]))
        if self.next_hops and "code" not in read_form(query):
            return HttpResponse(302, Headers({"Location": self.next_hops.pop(0)}))
        return HttpResponse(200, Headers({"Content-Type": "text/plain"}), "thanks")

    def codes(self, under: str = "/") -> list[str]:
        """The authorization codes delivered to paths under ``under``."""
        found = [read_form(path.partition("?")[2]).get("code") for path in self.received if path.startswith(under)]
        return [code for code in found if code]


def private_files(ctx: LabContext, owner: User, name: str = "files") -> tuple[Server, list[str]]:
    """The MCP Server the attacker is after: its one tool lists the caller's private files (only the
    owner's token shows them)."""
    rng = ctx.rng
    files = [f"{word}-{rng.randint(2019, 2026)}.pdf" for word in pick_distinct(rng, "server", rng.randint(2, 4))]
    server = Server(name, version="1.0.0", per_caller=True)

    @server.tool(annotations={"readOnlyHint": True})
    def list_files(call: Context) -> str:
        """Your private files."""
        return "\n".join(files) if call.auth is not None and call.auth.subject == owner.subject else "(none)"

    return server, files


async def files_seen(ctx: LabContext, link: str, server: Server, table: AuthorizationServer, token: str | None,
                     audience: str, client_name: str) -> list[str]:
    """Call ``list_files`` on ``server`` with ``token`` (validated for ``audience``): the lines seen."""
    try:
        auth = table.validate(token, audience=audience)
    except TokenRejected:
        return []
    async with ctx.client(link, server, auth=auth, client_name=client_name) as client:
        text = (await client.call_tool("list_files", {}))["content"][0]["text"]
    return [line for line in str(text).splitlines() if line != "(none)"]


async def redeem(web: SimulatedWeb, sender: str, token_endpoint: str, fields: dict[str, str]) -> str | None:
    """POST an ``authorization_code`` grant; the access token, or ``None`` when refused."""
    answer = await web.fetch(sender, "POST", token_endpoint, headers={"Content-Type": FORM}, body=form_body(fields))
    return str(answer.json()["access_token"]) if answer.status == 200 else None


def last_refusal(web: SimulatedWeb, path: str) -> str | None:
    """The ``error: error_description`` of the last refused exchange to ``path`` on ``web`` (what the
    refusing server said, for :attr:`~mcp_sim.security.lab.Outcome.stopped_by`)."""
    for request, response in reversed(web.exchanges):
        if request.path.partition("?")[0] == path and response.status >= 400:
            try:
                body = json.loads(response.body or "{}")
            except ValueError:
                body = {}
            if isinstance(body, dict):
                return f"{response.status} {body.get('error', '')}: {body.get('error_description', '')}"
            return str(response.status)
    return None
