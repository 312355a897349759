"""The Streamable HTTP rules of both eras, as pure functions (course chapter 10), sans-IO.

Both the real HTTP endpoint (:mod:`mcp_sim.bridge.http_server`) and the real HTTP client
(:mod:`mcp_sim.bridge.http_client`) read their headers and status codes from here, so the two ends
agree by construction.

**Legacy** (2025-03-26 … 2025-11-25): one endpoint takes POST (every client message), GET (a stream
for server messages not tied to a request) and DELETE (end the session). ``initialize`` opens a
session whose id comes back in ``Mcp-Session-Id`` and must be sent on every later request, along
with ``MCP-Protocol-Version`` (2025-06-18+). JSON-RPC errors travel with status 200.

**Modern** (2026-07-28): POST only, no session. Every POST repeats in headers what its body says —
``MCP-Protocol-Version`` (= ``_meta`` protocolVersion), ``Mcp-Method`` (= ``method``) and, for the
three methods that name a thing, ``Mcp-Name`` (= ``params.name`` or ``params.uri``) — so proxies can
route without parsing JSON. A mismatch is ``400`` with ``-32020``. Errors map to statuses:
``-32601`` → 404, invalid params / missing capability / unsupported version → 400.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from mcp_sim.protocol import meta as M
from mcp_sim.protocol.errors import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    PARSE_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
    McpError,
)
from mcp_sim.protocol.revisions import LATEST
from mcp_sim.wire.jsonrpc import JSONRPCMessage, JSONRPCNotification, JSONRPCRequest

PROTOCOL_VERSION_HEADER: Final = "MCP-Protocol-Version"
SESSION_ID_HEADER: Final = "Mcp-Session-Id"
METHOD_HEADER: Final = "Mcp-Method"
NAME_HEADER: Final = "Mcp-Name"
JSON: Final = "application/json"
EVENT_STREAM: Final = "text/event-stream"

NAME_BEARING_METHODS: Final[Mapping[str, str]] = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}
"""Method → the ``params`` member a modern client mirrors into ``Mcp-Name``."""

MODERN_STATUS_FOR_ERROR: Final[Mapping[int, int]] = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    INVALID_PARAMS: 400,
    HEADER_MISMATCH: 400,
    MISSING_REQUIRED_CLIENT_CAPABILITY: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
    METHOD_NOT_FOUND: 404,
}
"""2026-07-28: the HTTP status for a JSON-RPC error code (anything else: 200)."""


def modern_status(code: int | None) -> int:
    """The status a 2026-07-28 endpoint answers with, for an error ``code`` (``None`` = a result)."""
    return 200 if code is None else MODERN_STATUS_FOR_ERROR.get(code, 200)


def message_version(message: JSONRPCMessage) -> str | None:
    """The protocol version a modern request names in ``params._meta`` (``None`` if it names none)."""
    params = getattr(message, "params", None)
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(M.PROTOCOL_VERSION) if isinstance(meta, dict) else None
    return version if isinstance(version, str) else None


def is_modern_version(version: str | None) -> bool:
    """True for a version string of the modern era (2026-07-28 or a later date)."""
    return version is not None and version >= LATEST


def name_of(message: JSONRPCRequest | JSONRPCNotification) -> str | None:
    """The value a modern client puts in ``Mcp-Name`` (``None`` for methods that name nothing)."""
    key = NAME_BEARING_METHODS.get(message.method)
    if key is None or not isinstance(message.params, dict):
        return None
    value = message.params.get(key)
    return value if isinstance(value, str) else None


def modern_request_headers(message: JSONRPCRequest | JSONRPCNotification, version: str) -> dict[str, str]:
    """The routing headers a 2026-07-28 client sends with ``message``."""
    headers = {PROTOCOL_VERSION_HEADER: version, METHOD_HEADER: message.method}
    name = name_of(message)
    if name is not None:
        headers[NAME_HEADER] = name
    return headers


def check_modern_headers(headers: Mapping[str, str], message: JSONRPCRequest | JSONRPCNotification) -> McpError | None:
    """Compare a modern POST's headers with its body; the ``-32020`` error to answer, or ``None``.

    ``headers`` must be case-insensitive (HTTP header names are)."""
    rule = ("2026-07-28 Streamable HTTP: MCP-Protocol-Version, Mcp-Method and (for tools/call, "
            "prompts/get, resources/read) Mcp-Name MUST be present and match the body; otherwise 400 "
            "with -32020.")

    def mismatch(what: str, data: dict[str, Any]) -> McpError:
        return McpError(HEADER_MISMATCH, f"Header mismatch: {what}", data, rule=rule, revision=LATEST)

    version = headers.get(PROTOCOL_VERSION_HEADER)
    body_version = message_version(message)
    if version is None:
        return mismatch(f"missing {PROTOCOL_VERSION_HEADER} header", {"header": PROTOCOL_VERSION_HEADER})
    if body_version is not None and version != body_version:
        return mismatch(f"{PROTOCOL_VERSION_HEADER} is {version!r} but _meta says {body_version!r}",
                        {"header": PROTOCOL_VERSION_HEADER, "headerValue": version, "bodyValue": body_version})
    method = headers.get(METHOD_HEADER)
    if method != message.method:
        what = f"missing {METHOD_HEADER} header" if method is None else \
            f"{METHOD_HEADER} is {method!r} but the body's method is {message.method!r}"
        return mismatch(what, {"header": METHOD_HEADER, "headerValue": method, "bodyValue": message.method})
    if message.method in NAME_BEARING_METHODS:
        expected = name_of(message)
        name = headers.get(NAME_HEADER)
        if expected is not None and name != expected:
            what = f"missing {NAME_HEADER} header" if name is None else \
                f"{NAME_HEADER} is {name!r} but the body names {expected!r}"
            return mismatch(what, {"header": NAME_HEADER, "headerValue": name, "bodyValue": expected})
    return None


def accepts(accept_header: str | None) -> tuple[bool, bool]:
    """(accepts JSON, accepts SSE) for an ``Accept`` header; wildcards count, a missing header
    accepts anything."""
    if not accept_header:
        return True, True
    types = {part.split(";")[0].strip().lower() for part in accept_header.split(",")}
    wildcard = "*/*" in types
    return (wildcard or JSON in types or "application/*" in types,
            wildcard or EVENT_STREAM in types or "text/*" in types)


LOCAL_HOSTS: Final = ("localhost", "127.0.0.1", "[::1]")


def origin_allowed(origin: str | None, allowed: tuple[str, ...] = ()) -> bool:
    """The DNS-rebinding defence: a browser page on another site must not reach a local server.

    No ``Origin`` (a non-browser client) is allowed; a loopback origin (any port) is allowed; so is
    any origin listed in ``allowed``. Anything else gets ``403``."""
    if origin is None:
        return True
    if origin in allowed:
        return True
    scheme, sep, rest = origin.partition("://")
    if not sep or scheme not in ("http", "https"):
        return False
    host = rest.split("/")[0]
    host = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    return host in LOCAL_HOSTS
