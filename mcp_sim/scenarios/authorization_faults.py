"""Authorization servers that misbehave in one way, for chapter 11's failure stories.

Each wraps an honest :class:`~mcp_sim.security.oauth.OAuthAuthorizationServer` and changes one thing
on the wire, so a story shows what the client does when that one thing is wrong: a redirect naming
another issuer (the 2026-07-28 ``iss`` check), or metadata without ``code_challenge_methods_supported``
(a client must then refuse, since it cannot tell that PKCE is supported).
"""

from __future__ import annotations

import json
from urllib.parse import urlencode

from mcp_sim.security.oauth import OAuthAuthorizationServer, read_form
from mcp_sim.transports.http import HttpRequest, HttpResponse


class OtherIssuer:
    """An authorization server whose redirects name issuer ``iss`` instead of its own."""

    def __init__(self, inner: OAuthAuthorizationServer, iss: str) -> None:
        self.inner, self.participant, self.iss = inner, inner.participant, iss

    def serve(self, request: HttpRequest) -> HttpResponse:
        response = self.inner.serve(request)
        location = response.headers.get("Location")
        if response.status == 302 and location:
            base, _, query = location.partition("?")
            fields = {**read_form(query), "iss": self.iss}
            response.headers["Location"] = f"{base}?{urlencode(fields)}"
        return response


class WithoutS256:
    """An authorization server whose published metadata omits ``code_challenge_methods_supported``."""

    def __init__(self, inner: OAuthAuthorizationServer) -> None:
        self.inner, self.participant = inner, inner.participant

    def serve(self, request: HttpRequest) -> HttpResponse:
        response = self.inner.serve(request)
        if request.path.startswith("/.well-known/") and response.status == 200:
            document = response.json()
            document.pop("code_challenge_methods_supported", None)
            response = HttpResponse(200, response.headers, json.dumps(document))
        return response
