"""The plain-HTTP side of MCP authorization: discovery, registration and token requests on the
simulated network, recorded in the trace beside the MCP messages.

OAuth's exchanges are ordinary HTTP, not JSON-RPC: a client ``GET``s metadata documents, ``POST``s a
registration, sends the user's browser to an authorization endpoint and ``POST``s a form to a token
endpoint. Whatever carries them is a :class:`Web`: one method, ``fetch`` (send one request, get its
response), so the client's flow reads the same on either network. :class:`SimulatedWeb` carries
those exchanges between *sites* — objects with a sans-IO
``serve(request) -> response``, such as :class:`~mcp_sim.security.oauth.OAuthAuthorizationServer` or
an MCP Server's metadata endpoint (:class:`ResourceSite`) — after a latency on the virtual clock.

Every exchange becomes two trace events (``kind="transport"``, marked ``oauth``): the request and
its response, with the HTTP head in ``framing["http"]`` and the body in ``framing["body"]``. Secrets
are **redacted** in what the trace keeps — tokens, codes, PKCE verifiers, client secrets and
assertions, ``Authorization`` headers — because a trace is shown, saved and shared; the masking is
the HTTP layer's own (:func:`~mcp_sim.transports.http_redact.redact`,
:meth:`~mcp_sim.transports.http.HttpRequest.summary`), the same for MCP's requests and OAuth's.
The real network's :class:`Web` (:mod:`mcp_sim.bridge.oauth_http`) records with the same
:func:`record_exchange`, so a real flow and a simulated one look alike in the trace player.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlsplit

import anyio

from mcp_sim.sim.world import Simulation
from mcp_sim.trace.recorder import Recorder
from mcp_sim.transports.http import Headers, HttpRequest, HttpResponse
from mcp_sim.transports.http_redact import redact
from mcp_sim.transports.http_server import SimulatedHttpServer

__all__ = ["DocumentSite", "ResourceSite", "SimulatedWeb", "Site", "Web", "record_exchange", "redact"]


class Web(Protocol):
    """What an OAuth client needs of a network: one HTTP exchange at a time. ``sender`` names who
    sends it in the trace (the client itself, or the user's browser carrying the authorization
    request). Redirects are *not* followed: a ``302`` comes back as it is, because the client reads
    the authorization response from its ``Location``."""

    async def fetch(self, sender: str, method: str, url: str, *, headers: dict[str, str] | None = None,
                    body: str = "") -> HttpResponse: ...


class Site(Protocol):
    """Anything that answers HTTP requests without waiting: an authorization server, a metadata
    endpoint. ``participant`` names it in the trace (an attribute or a property)."""

    @property
    def participant(self) -> str: ...

    def serve(self, request: HttpRequest) -> HttpResponse: ...


@dataclass
class ResourceSite:
    """An MCP Server's HTTP endpoint seen as a web site: it answers the well-known metadata
    requests (:meth:`~mcp_sim.transports.http_server.SimulatedHttpServer.serve_metadata`), ``404``
    otherwise. (MCP requests themselves travel on the MCP transport, not here.)"""

    server: SimulatedHttpServer

    @property
    def participant(self) -> str:
        return self.server.participant

    def serve(self, request: HttpRequest) -> HttpResponse:
        return self.server.serve_metadata(request) or HttpResponse(404)


@dataclass
class DocumentSite:
    """A site that serves fixed JSON documents by path, e.g. a client's metadata document."""

    participant: str
    documents: dict[str, dict[str, Any]] = field(default_factory=dict)

    def serve(self, request: HttpRequest) -> HttpResponse:
        document = self.documents.get(request.path) if request.method == "GET" else None
        if document is None:
            return HttpResponse(404)
        return HttpResponse(200, Headers({"Content-Type": "application/json"}), json.dumps(document))


_REASONS = {200: "OK", 201: "Created", 302: "Found", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found"}


@dataclass
class SimulatedWeb:
    """The simulated network for OAuth's exchanges: sites by origin (``https://host``), a one-way
    ``latency`` in seconds of virtual time, and the trace."""

    sim: Simulation
    sites: dict[str, Site] = field(default_factory=dict)
    latency: float = 0.005
    link: str = "oauth"
    exchanges: list[tuple[HttpRequest, HttpResponse]] = field(default_factory=list)
    """Every exchange in order, unredacted (for tests; the trace keeps the redacted form)."""

    def add(self, origin: str, site: Site) -> None:
        """Serve ``site`` at ``origin`` (scheme and host, no path)."""
        self.sites[origin.rstrip("/")] = site

    async def fetch(self, sender: str, method: str, url: str, *, headers: dict[str, str] | None = None,
                    body: str = "") -> HttpResponse:
        """One HTTP exchange from participant ``sender`` to ``url``. An unknown host answers ``404``
        without a trace of the far side (as a failed DNS lookup would not reach anyone)."""
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        request = HttpRequest(method, target, Headers(headers or {}), body)
        site = self.sites.get(origin)
        receiver = site.participant if site is not None else f"web/{parts.netloc}"
        self._record(sender, receiver, request, None, origin)
        await anyio.sleep(self.latency)
        response = site.serve(request) if site is not None else HttpResponse(404)
        await anyio.sleep(self.latency)
        self._record(receiver, sender, request, response, origin)
        self.exchanges.append((request, response))
        return response

    def fetch_json_now(self, sender: str, url: str) -> dict[str, Any] | None:
        """A ``GET`` a sans-IO site makes while serving a request (an authorization server fetching
        a Client ID Metadata Document): recorded like any exchange, answered at once (its latency is
        part of the request being served). The JSON object, or ``None``."""
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        request = HttpRequest("GET", parts.path, Headers({"Accept": "application/json"}))
        site = self.sites.get(origin)
        receiver = site.participant if site is not None else f"web/{parts.netloc}"
        self._record(sender, receiver, request, None, origin)
        response = site.serve(request) if site is not None else HttpResponse(404)
        self._record(receiver, sender, request, response, origin)
        self.exchanges.append((request, response))
        try:
            data = json.loads(response.body) if response.status == 200 and response.body else None
        except ValueError:
            return None
        return data if isinstance(data, dict) else None

    def send_now(self, sender: str, method: str, url: str, *, headers: dict[str, str] | None = None,
                 body: str = "") -> HttpResponse:
        """Any request a sans-IO site makes while serving one (an MCP proxy redeeming a code at the
        authorization server behind it): recorded like :meth:`fetch`, answered at once."""
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        request = HttpRequest(method, parts.path + (f"?{parts.query}" if parts.query else ""),
                              Headers(headers or {}), body)
        site = self.sites.get(origin)
        receiver = site.participant if site is not None else f"web/{parts.netloc}"
        self._record(sender, receiver, request, None, origin)
        response = site.serve(request) if site is not None else HttpResponse(404)
        self._record(receiver, sender, request, response, origin)
        self.exchanges.append((request, response))
        return response

    def _record(self, sender: str, receiver: str, request: HttpRequest, response: HttpResponse | None,
                origin: str) -> None:
        record_exchange(self.sim.recorder, self.link, sender, receiver, request, response, origin)


def record_exchange(recorder: Recorder, link: str, sender: str, receiver: str, request: HttpRequest,
                    response: HttpResponse | None, origin: str, t_ms: float | None = None) -> None:
    """Record one half of an OAuth exchange (the request when ``response`` is ``None``, else the
    response) as a ``transport`` event marked ``oauth``, with every secret redacted."""
    if not recorder.enabled:
        return
    head = request.summary(origin=origin)
    shown_path = head["path"]
    framing: dict[str, Any] = {"http": {"request": head}}
    if response is None:
        text = f"{request.method} {origin}{shown_path}"
        body = redact(request.body, request.headers.get("Content-Type"))
    else:
        reason = _REASONS.get(response.status, response.reason)
        framing["http"]["response"] = {**response.summary(), "reason": reason}
        status = f"HTTP {response.status} {reason}".rstrip()
        text = f"{status} (to {request.method} {origin}{shown_path.partition('?')[0]})"
        body = redact(response.body, response.content_type)
    if body:
        framing["body"] = body
    recorder.record_event(kind="transport", link=link, sender=sender, receiver=receiver, text=text,
                          transport="http", framing=framing, marks=("oauth",), t_ms=t_ms)
