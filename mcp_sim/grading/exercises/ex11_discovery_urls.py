"""Exercise ex11_discovery_urls (chapter 11): where a client looks after a ``401``.

The learner writes the two lists of URLs an MCP client tries on its way from a ``401`` to an
authorization server: ``prm_urls(www_authenticate, server_url)`` — where the Server's Protected
Resource Metadata (RFC 9728) is — and ``as_metadata_urls(issuer)`` — where the authorization
server's metadata is (RFC 8414, then OpenID Connect discovery), path-aware, in the spec's order.
The expected lists come from the simulator's own client: :func:`~mcp_sim.security.oauth_client.metadata_urls`
for the authorization server, and the client's well-known fallback for the Server (the same rule,
tested against ``OAuthClient`` in ``tests/test_exercises_ch11.py``). Every seed tries every case
kind; the seed picks hosts, paths and the header's other parameters.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from mcp_sim.grading.model import Check, CheckContext, CheckFailed, Exercise, Hint
from mcp_sim.security.oauth import PRM_PATH
from mcp_sim.security.oauth_client import metadata_urls, parse_www_authenticate

R_HEADER = "auth.prm-discovery-order"
"""The 401's resource_metadata URL, when there is one, is where the metadata is."""
R_WELL_KNOWN = "auth.prm-discovery-order"
"""Without it: the well-known URIs, the one with the endpoint's path inserted first, then the root."""
R_AS = "auth.as-metadata-order"
"""RFC 8414 then OpenID Connect, with path insertion (and OIDC's path appending last)."""

_HOSTS = ("notes.example", "mcp.acme.example", "tools.example.org", "api.example.net")
_ISSUERS = ("login.example", "auth.acme.example", "id.example.org", "accounts.example.net")
_PATHS = ("/mcp", "/api/mcp", "/v1/mcp", "/mcp/notes")
_TENANTS = ("/tenant1", "/acme", "/realms/main", "/oauth2/default")


def expected_prm_urls(www_authenticate: str, server_url: str) -> list[str]:
    """Where the simulator's client looks for Protected Resource Metadata, in order: the header's
    ``resource_metadata`` alone, else the path-aware well-known URI and the root one (once each)."""
    named = parse_www_authenticate(www_authenticate).get("resource_metadata")
    if named:
        return [named]
    parts = urlsplit(server_url)
    origin, path = f"{parts.scheme}://{parts.netloc}", parts.path.rstrip("/")
    return list(dict.fromkeys([f"{origin}{PRM_PATH}{path}", f"{origin}{PRM_PATH}"]))


def _challenge(rng: Any, *, metadata: str | None, error: bool = False, scope: bool = True) -> str:
    params = []
    if error:
        params.append('error="invalid_token"')
    if metadata is not None:
        params.append(f'resource_metadata="{metadata}"')
    if scope:
        params.append(f'scope="{rng.choice(("notes:read", "files:read files:write", "mcp"))}"')
    rng.shuffle(params)
    return "Bearer " + ", ".join(params) if params else "Bearer"


HEADER_KINDS = ("resource_metadata first", "resource_metadata after error and scope",
                "resource_metadata on another host")
WELL_KNOWN_KINDS = ("no resource_metadata, endpoint at /mcp", "no resource_metadata, nested path",
                    "no resource_metadata, endpoint at the root", "an empty challenge", "trailing slash on the path")
AS_KINDS = ("issuer without a path", "issuer with a path", "issuer with a nested path", "issuer with a trailing slash")


def _prm_case(rng: Any, kind: str) -> tuple[str, str]:
    host = rng.choice(_HOSTS)
    path = rng.choice(_PATHS)
    server = f"https://{host}{path}"
    if kind == "resource_metadata first":
        return f'Bearer resource_metadata="https://{host}{PRM_PATH}{path}"', server
    if kind == "resource_metadata after error and scope":
        named = f"https://{host}{PRM_PATH}{path}"
        return f'Bearer error="invalid_token", scope="notes:read", resource_metadata="{named}"', server
    if kind == "resource_metadata on another host":
        return _challenge(rng, metadata=f"https://meta.{host}/{rng.choice(('prm.json', 'resource'))}"), server
    if kind == "no resource_metadata, endpoint at /mcp":
        return _challenge(rng, metadata=None, error=rng.choice((True, False))), f"https://{host}/mcp"
    if kind == "no resource_metadata, nested path":
        return _challenge(rng, metadata=None), f"https://{host}{rng.choice(_PATHS[1:])}"
    if kind == "no resource_metadata, endpoint at the root":
        return _challenge(rng, metadata=None), f"https://{host}"
    if kind == "an empty challenge":
        return "Bearer", server
    if kind == "trailing slash on the path":
        return _challenge(rng, metadata=None, error=True), f"{server}/"
    raise KeyError(kind)


def _as_case(rng: Any, kind: str) -> str:
    host = rng.choice(_ISSUERS)
    if kind == "issuer without a path":
        return f"https://{host}"
    if kind == "issuer with a path":
        return f"https://{host}{rng.choice(_TENANTS[:2])}"
    if kind == "issuer with a nested path":
        return f"https://{host}{rng.choice(_TENANTS[2:])}"
    if kind == "issuer with a trailing slash":
        return f"https://{host}{rng.choice(_TENANTS)}/"
    raise KeyError(kind)


def _compare(got: Any, want: list[str], what: str, rule: str) -> None:
    if not isinstance(got, list) or not all(isinstance(u, str) for u in got):
        raise CheckFailed(f"{what}: return a list of URL strings; got {got!r}.", rule)
    if got != want:
        raise CheckFailed(f"{what}: your list {got} is not the list of URLs a client tries, in order.", rule,
                          case=what, expected=str(want))


def check_prm(ctx: CheckContext, kind: str) -> None:
    header, server = _prm_case(ctx.rng, kind)
    want = expected_prm_urls(header, server)
    got = ctx.function("prm_urls")(header, server)
    rule = R_HEADER if kind in HEADER_KINDS else R_WELL_KNOWN
    _compare(got, want, f"WWW-Authenticate: {header}\nfrom the Server at {server} ({kind})", rule)


def check_as(ctx: CheckContext, kind: str) -> None:
    issuer = _as_case(ctx.rng, kind)
    want = metadata_urls(issuer)
    got = ctx.function("as_metadata_urls")(issuer)
    _compare(got, want, f"The authorization server {issuer} ({kind})", R_AS)


EXERCISE = Exercise(
    id="ex11_discovery_urls",
    title="From a 401 to the authorization server's metadata: the URLs, in order",
    chapter="11",
    summary="Read resource_metadata from WWW-Authenticate or fall back to the well-known URIs (path first); then "
            "list the authorization server's metadata URLs in the spec's order, path-aware.",
    rules=(R_HEADER, R_AS),
    functions=("prm_urls", "as_metadata_urls"),
    checks=(
        Check("The header's resource_metadata is used as it is", R_HEADER, check_prm, HEADER_KINDS,
              hint="Parse the Bearer challenge's parameters (name=\"value\", comma-separated, any order)."),
        Check("Without it: the well-known URIs, path-aware first", R_WELL_KNOWN, check_prm, WELL_KNOWN_KINDS,
              hint="Insert /.well-known/oauth-protected-resource between the origin and the path; a root "
                   "endpoint has one URI only."),
        Check("Authorization server metadata: RFC 8414, then OIDC, path-aware", R_AS, check_as, AS_KINDS,
              hint="Split the issuer into origin and path (without a trailing slash) before building the URIs."),
    ),
    hints=(
        Hint("A 401 from an MCP Server says where to look next: WWW-Authenticate: Bearer resource_metadata=\"…\". "
             "When it is there, that one URL is the answer.", R_HEADER),
        Hint("Without it: origin + /.well-known/oauth-protected-resource + path, then origin + "
             "/.well-known/oauth-protected-resource. Drop a trailing slash from the path, and do not list the same "
             "URL twice.", R_WELL_KNOWN),
        Hint("Issuer https://a.example/t: https://a.example/.well-known/oauth-authorization-server/t, "
             "https://a.example/.well-known/openid-configuration/t, https://a.example/t/.well-known/openid-configuration. "
             "Without a path: the first two, without /t.", R_AS),
    ),
    forbidden=("mcp_sim.security",),
)
