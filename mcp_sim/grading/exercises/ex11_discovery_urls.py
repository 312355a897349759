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

from hypothesis import strategies as st

from mcp_sim.grading.differential import Mismatch
from mcp_sim.grading.exercises.generated import corners_then_generated
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


def _challenge(rng: Any, *, metadata: str | None, error: bool = False, scope: bool = True,
               at: str = "last") -> str:
    params = []
    if error:
        params.append('error="invalid_token"')
    if scope:
        params.append(f'scope="{rng.choice(("notes:read", "files:read files:write", "mcp"))}"')
    if metadata is not None:
        named = f'resource_metadata="{metadata}"'
        params.insert({"first": 0, "last": len(params), "middle": min(1, len(params))}[at], named)
    return "Bearer " + ", ".join(params) if params else "Bearer"


HEADER_KINDS = ("resource_metadata first", "resource_metadata after error and scope",
                "resource_metadata between error and scope", "resource_metadata on another host",
                "resource_metadata with a port", "resource_metadata with a query",
                "parameters without a space after the comma", "the scheme in lower case",
                "resource_metadata quoted inside another parameter")
WELL_KNOWN_KINDS = ("no resource_metadata, endpoint at /mcp", "no resource_metadata, an error, endpoint at /mcp",
                    "no resource_metadata, nested path", "no resource_metadata, endpoint at the root",
                    "an empty challenge", "trailing slash on the path", "an endpoint with a port",
                    "resource_metadata empty", "another scheme carrying resource_metadata",
                    "an unquoted parameter, no resource_metadata")
AS_KINDS = ("issuer without a path", "issuer with a path", "issuer with a nested path", "issuer with a trailing slash",
            "issuer with a port")


def _prm_case(rng: Any, kind: str) -> tuple[str, str]:
    host = rng.choice(_HOSTS)
    path = rng.choice(_PATHS)
    server = f"https://{host}{path}"
    named = f"https://{host}{PRM_PATH}{path}"
    if kind == "resource_metadata first":
        return _challenge(rng, metadata=named, error=True, at="first"), server
    if kind == "resource_metadata after error and scope":
        return _challenge(rng, metadata=named, error=True, at="last"), server
    if kind == "resource_metadata between error and scope":
        return _challenge(rng, metadata=named, error=True, at="middle"), server
    if kind == "resource_metadata on another host":
        return _challenge(rng, metadata=f"https://meta.{host}/{rng.choice(('prm.json', 'resource'))}"), server
    if kind == "resource_metadata with a port":
        return _challenge(rng, metadata=f"https://{host}:{rng.randint(8000, 9999)}{PRM_PATH}{path}"), server
    if kind == "resource_metadata with a query":
        return _challenge(rng, metadata=f"{named}?tenant={rng.choice(('acme', 't1'))}"), server
    if kind == "parameters without a space after the comma":
        return f'Bearer error="invalid_token",scope="mcp",resource_metadata="{named}"', server
    if kind == "the scheme in lower case":
        return f'bearer resource_metadata="{named}"', server
    if kind == "resource_metadata quoted inside another parameter":
        return (f'Bearer error_description="see resource_metadata=\\"https://evil.example/prm\\"", '
                f'resource_metadata="{named}"'), server
    if kind == "no resource_metadata, endpoint at /mcp":
        return _challenge(rng, metadata=None), f"https://{host}/mcp"
    if kind == "no resource_metadata, an error, endpoint at /mcp":
        return _challenge(rng, metadata=None, error=True), f"https://{host}/mcp"
    if kind == "no resource_metadata, nested path":
        return _challenge(rng, metadata=None), f"https://{host}{rng.choice(_PATHS[1:])}"
    if kind == "no resource_metadata, endpoint at the root":
        return _challenge(rng, metadata=None), f"https://{host}"
    if kind == "an empty challenge":
        return "Bearer", server
    if kind == "trailing slash on the path":
        return _challenge(rng, metadata=None, error=True), f"{server}/"
    if kind == "an endpoint with a port":
        return _challenge(rng, metadata=None), f"https://{host}:{rng.randint(8000, 9999)}{path}"
    if kind == "another scheme carrying resource_metadata":
        return f'Basic realm="mcp", resource_metadata="https://{host}/other/prm"', server
    if kind == "an unquoted parameter, no resource_metadata":
        return "Bearer error=invalid_token, scope=mcp", server
    if kind == "resource_metadata empty":
        return 'Bearer error="invalid_token", resource_metadata=""', server
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
    if kind == "issuer with a port":
        return f"https://{host}:{rng.randint(8000, 9999)}{rng.choice(('', *_TENANTS))}"
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


# --- generated: any challenge and endpoint, any issuer, against the simulator's client ------------------

@st.composite
def _prm_inputs(draw: st.DrawFn) -> tuple[str, str]:
    host = draw(st.sampled_from(_HOSTS)) + draw(st.sampled_from(("", ":8443")))
    path = draw(st.sampled_from(("", "/", *_PATHS, "/mcp/")))
    server = f"https://{host}{path}"
    named = draw(st.sampled_from((None, f"https://{host}{PRM_PATH}{path.rstrip('/')}", "https://meta.example:9443/p?x=1",
                                  "")))
    params = ['error="invalid_token"', 'scope="mcp files:read"', 'error_description="resource_metadata=\\"x\\""']
    chosen = draw(st.lists(st.sampled_from(params), unique=True, max_size=3))
    if named is not None:
        chosen.insert(draw(st.integers(0, len(chosen))), f'resource_metadata="{named}"')
    scheme = draw(st.sampled_from(("Bearer", "bearer", "BEARER")))
    separator = draw(st.sampled_from((", ", ",", " , ")))
    return (f"{scheme} {separator.join(chosen)}" if chosen else scheme), server


_AS_INPUTS = st.tuples(st.sampled_from(_ISSUERS), st.sampled_from(("", ":8443")),
                       st.sampled_from(("", "/", *_TENANTS, "/acme/"))).map(lambda t: f"https://{t[0]}{t[1]}{t[2]}")


def _same_list(rule: str) -> Any:
    def compare(case: Any, got: Any, want: list[str]) -> Mismatch | None:
        if isinstance(got, list) and got == want:
            return None
        return Mismatch(f"Your list {got!r} is not the list of URLs a client tries, in order.", rule,
                        expected=str(want))
    return compare


def check_generated_prm(ctx: CheckContext, kind: str) -> None:
    corners = [_prm_case(ctx.rng, k) for k in ("the scheme in lower case", "parameters without a space after the comma",
                                                "an endpoint with a port")]
    corners_then_generated(ctx, corners, _prm_inputs(), learner=lambda c: ctx.function("prm_urls")(*c),
                           oracle=lambda c: expected_prm_urls(*c), compare=_same_list(R_HEADER),
                           describe=lambda c: f"prm_urls({c[0]!r}, {c[1]!r})")


def check_generated_as(ctx: CheckContext, kind: str) -> None:
    corners_then_generated(ctx, [_as_case(ctx.rng, "issuer with a port")], _AS_INPUTS, learner=lambda c: ctx.function("as_metadata_urls")(c),
                           oracle=metadata_urls, compare=_same_list(R_AS),
                           describe=lambda c: f"as_metadata_urls({c!r})")


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
        Check("Any challenge and endpoint: the client's list", R_HEADER, check_generated_prm, ("generated",),
              hint="Parse the challenge as RFC 7235 does (scheme in any case, parameters in any order and spacing); "
                   "without resource_metadata, keep the endpoint's port.", seeds=1),
        Check("Any issuer: the client's list", R_AS, check_generated_as, ("generated",),
              hint="Origin (with its port) and path; the well-known part goes between them, then OIDC appended.", seeds=1),
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
