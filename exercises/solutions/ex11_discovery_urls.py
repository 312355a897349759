"""Reference solution for ex11_discovery_urls. Try the exercise before reading this."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

PRM = "/.well-known/oauth-protected-resource"
OAUTH = "/.well-known/oauth-authorization-server"
OIDC = "/.well-known/openid-configuration"

_PARAM = re.compile(r'([A-Za-z_]+)=(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))')


def _challenge(header: str) -> dict[str, str]:
    """The parameters of a Bearer challenge (empty for another scheme)."""
    scheme, _, rest = header.strip().partition(" ")
    if scheme.lower() != "bearer":
        return {}
    return {m.group(1): m.group(2) if m.group(2) is not None else m.group(3) for m in _PARAM.finditer(rest)}


def _split(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}", parts.path.rstrip("/")


def prm_urls(www_authenticate: str, server_url: str) -> list[str]:
    """Where to fetch the Server's Protected Resource Metadata, in the order to try."""
    named = _challenge(www_authenticate).get("resource_metadata")
    if named:
        return [named]
    origin, path = _split(server_url)
    if not path:
        return [f"{origin}{PRM}"]
    return [f"{origin}{PRM}{path}", f"{origin}{PRM}"]


def as_metadata_urls(issuer: str) -> list[str]:
    """Where to fetch the authorization server's metadata, in the order to try."""
    origin, path = _split(issuer)
    if not path:
        return [f"{origin}{OAUTH}", f"{origin}{OIDC}"]
    return [f"{origin}{OAUTH}{path}", f"{origin}{OIDC}{path}", f"{origin}{path}{OIDC}"]
