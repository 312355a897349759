"""MCP authorization on the real network: the client's OAuth flow over real HTTP (course chapter 12).

The flow itself is :class:`~mcp_sim.security.oauth_client.OAuthClient`, the same code the simulated
chapters run. It only needs a :class:`~mcp_sim.security.oauth_web.Web` — something that sends one
HTTP request and hands back the response. :class:`RealWeb` is that, over httpx, recording every
exchange (secrets redacted) beside the MCP frames, so the trace player shows a real flow the way it
shows a simulated one.

What changes on a real network:

* **which URLs may be fetched** — a malicious server could point its metadata at an internal
  address; :func:`require_https_or_loopback` (the client's ``url_guard``) refuses every learned URL
  that is neither ``https`` nor on this machine (the spec's development exception);
* **randomness** — PKCE verifiers and ``state`` must be unguessable, so they come from
  :mod:`secrets`, not from a seeded generator (the simulation's determinism has no place here);
* **the user's consent** — the authorization request goes to the user's browser. When the
  authorization server redirects straight back (an already-signed-in user, a test server), the
  client reads the redirect itself. Otherwise :class:`RealWeb` prints the URL on stderr and waits
  for the browser to arrive at the loopback redirect URI (:class:`LoopbackCallback`).

A client with no user (``mcp-sim connect --client-credentials``) skips the browser altogether: it
holds :class:`~mcp_sim.security.oauth_client.MachineCredentials` — a secret, or a private key that
signs each token request's JWT assertion (:func:`private_key_jwt`).

:func:`open_oauth` puts it together for ``mcp-sim connect --url``: it yields the ``OAuthClient``,
whose ``on_challenge`` is the HTTP client stream's ``authorizer``.
"""

from __future__ import annotations

import secrets
import sys
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx

from mcp_sim.bridge.recording import stamp
from mcp_sim.security.oauth_client import MachineCredentials, OAuthClient, OAuthFailed
from mcp_sim.security.oauth_web import record_exchange
from mcp_sim.trace.recorder import Recorder
from mcp_sim.transports.http import Headers, HttpRequest, HttpResponse

__all__ = ["LOOPBACK_NAMES", "LoopbackCallback", "RealWeb", "open_oauth", "private_key_jwt",
           "require_https_or_loopback"]

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
DEFAULT_REDIRECT = "http://127.0.0.1:33418/callback"
"""Where the browser comes back: a loopback address, as a native application's redirect URI is."""
CALLBACK_WAIT_S = 300.0


def require_https_or_loopback(url: str) -> None:
    """The real-wire ``url_guard``: a URL learned from a server or a metadata document must be
    ``https``, or plain ``http`` to this machine (local development). Raises :class:`OAuthFailed`."""
    parts = urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return
    if parts.scheme == "http" and parts.hostname in LOOPBACK_NAMES:
        return
    raise OAuthFailed(f"refusing to fetch {url!r}: not https and not on this machine",
                      "Authorization endpoints MUST be served over https (loopback excepted for development).")


def private_key_jwt(client_id: str, private_key_pem: str, algorithm: str = "ES256",
                    lifetime_s: int = 300) -> Callable[[str], str]:
    """A signer of RFC 7523 client assertions: given the authorization server's identifier (the
    ``aud``), a JWT issued by and about the client itself (``iss`` = ``sub`` = ``client_id``), valid
    for ``lifetime_s`` seconds and never reused (a fresh ``jti``), signed with its private key. The
    authorization server checks it with the public key registered for the client; the key itself
    never leaves this machine, which is why the extension recommends it over a shared secret.

    Uses PyJWT (installed with the ``course`` extra), which needs ``cryptography`` for ``ES256``."""
    import jwt  # only a client that signs needs it

    def sign(audience: str) -> str:
        now = int(time.time())
        claims = {"iss": client_id, "sub": client_id, "aud": audience, "iat": now, "exp": now + lifetime_s,
                  "jti": secrets.token_hex(16)}
        return jwt.encode(claims, private_key_pem, algorithm=algorithm)

    return sign


@dataclass
class LoopbackCallback:
    """The loopback redirect URI for a browser that does not come straight back: print where the
    user should go, then serve one ``GET`` at the redirect URI and return the URL it arrived at."""

    redirect_uri: str
    wait_s: float = CALLBACK_WAIT_S

    async def __call__(self, authorization_url: str) -> str:
        parts = urlsplit(self.redirect_uri)
        sys.stderr.write(f"mcp-sim: open this address in a browser to authorise the client:\n  {authorization_url}\n")
        arrived: list[str] = []
        done = anyio.Event()

        async def handle(client: Any) -> None:
            async with client:
                head = (await client.receive(65536)).decode("latin-1")
                target = head.split(" ", 2)[1] if head.count(" ") >= 2 else "/"
                if urlsplit(target).path == parts.path and not arrived:
                    arrived.append(f"{parts.scheme}://{parts.netloc}{target}")
                    done.set()
                page = b"Authorised: you can close this window and return to mcp-sim."
                await client.send(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: "
                                  + str(len(page)).encode() + b"\r\nConnection: close\r\n\r\n" + page)

        listener = await anyio.create_tcp_listener(local_host=parts.hostname or "127.0.0.1", local_port=parts.port or 80)
        async with listener, anyio.create_task_group() as tg:
            tg.start_soon(listener.serve, handle)
            with anyio.move_on_after(self.wait_s):
                await done.wait()
            tg.cancel_scope.cancel()
        if not arrived:
            raise OAuthFailed(f"nobody came back to {self.redirect_uri} within {self.wait_s:.0f} s",
                              "The user must complete the authorization in the browser.")
        return arrived[0]


@dataclass
class RealWeb:
    """A :class:`~mcp_sim.security.oauth_web.Web` on the real network, recorded into ``recorder``.

    Redirects are never followed: a ``302`` is the authorization response itself. When the
    ``browser`` participant's request is answered with anything else (a sign-in page), the user
    has to act: ``callback`` (a :class:`LoopbackCallback`) shows them the URL and returns where the
    browser came back, which is handed to the flow as the redirect it would have been."""

    http: httpx.AsyncClient
    recorder: Recorder
    browser: str = "browser"
    callback: LoopbackCallback | None = None
    link: str = "oauth"
    exchanges: list[tuple[HttpRequest, HttpResponse]] = field(default_factory=list)
    """Every exchange in order, unredacted (for tests; the trace keeps the redacted form)."""

    async def fetch(self, sender: str, method: str, url: str, *, headers: dict[str, str] | None = None,
                    body: str = "") -> HttpResponse:
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        request = HttpRequest(method, parts.path + (f"?{parts.query}" if parts.query else ""),
                              Headers(headers or {}), body)
        receiver = f"web/{parts.netloc}"
        record_exchange(self.recorder, self.link, sender, receiver, request, None, origin, stamp(self.recorder))
        try:
            answer = await self.http.request(method, url, headers=headers, content=body.encode() if body else None,
                                             follow_redirects=False)
        except httpx.HTTPError as exc:
            raise OAuthFailed(f"{method} {url} failed: {type(exc).__name__}: {exc}",
                              "The authorization server must be reachable.") from exc
        response = HttpResponse(answer.status_code, Headers(answer.headers.items()), answer.text)
        record_exchange(self.recorder, self.link, receiver, sender, request, response, origin, stamp(self.recorder))
        self.exchanges.append((request, response))
        if sender == self.browser and response.status not in (302, 303) and self.callback is not None \
                and response.status < 400:
            came_back = await self.callback(url)
            return HttpResponse(302, Headers({"Location": came_back}))
        return response


@asynccontextmanager
async def open_oauth(server_url: str, *, recorder: Recorder, client_name: str = "mcp-sim",
                     redirect_uri: str = DEFAULT_REDIRECT, preregistered: Mapping[str, str] | None = None,
                     client_secrets: Mapping[str, str] | None = None, metadata_document: str | None = None,
                     interactive: bool = True, machine: MachineCredentials | None = None,
                     timeout: float = 30.0) -> AsyncIterator[OAuthClient]:
    """An :class:`OAuthClient` for the MCP server at ``server_url``, on the real network, for the
    duration of the block. ``preregistered`` maps an issuer to a ``client_id`` obtained out of band
    (``client_secrets`` its secret, for a confidential client); ``metadata_document`` is the https
    URL of this client's Client ID Metadata Document, if it publishes one; ``interactive``: wait
    for the user's browser when the authorization server does not redirect straight back;
    ``machine``: credentials for the client-credentials grant (a client with no user)."""
    async with httpx.AsyncClient(timeout=httpx.Timeout(timeout)) as http:
        web = RealWeb(http, recorder, callback=LoopbackCallback(redirect_uri) if interactive else None)
        yield OAuthClient(web, "client", server_url, client_name, redirect_uri,
                          draw=lambda: secrets.token_hex(16), clock_ms=lambda: time.time() * 1000.0,
                          preregistered=dict(preregistered or {}), client_secrets=dict(client_secrets or {}),
                          metadata_document=metadata_document, url_guard=require_https_or_loopback,
                          application_type="native",  # it runs on the user's machine
                          machine=machine, notice=lambda line: _notice(recorder, line))


def _notice(recorder: Recorder, line: str) -> None:
    """A line of the flow the user should see although nothing failed: on stderr and in the trace."""
    sys.stderr.write(f"mcp-sim: {line}\n")
    recorder.record_event(kind="log", link="oauth", sender="client", receiver="client", text=line,
                          t_ms=stamp(recorder))
