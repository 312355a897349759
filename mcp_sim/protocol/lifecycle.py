"""The lifecycle of both eras, as tables (course chapter 03).

Everything that affects the legacy lifecycle's transitions lives in :data:`LEGACY_TRANSITIONS` and
:data:`LEGACY_ALLOWED`; :class:`LegacyLifecycle` only looks things up there. This file does not know
whether it runs in a client or a server, and it does no I/O: it is told which messages were sent and
received and answers what happens next. The diagram the learner sees is drawn from the same tables.

**Legacy era** (≤ 2025-11-25): the client sends ``initialize`` with the newest version it speaks and
its capabilities; the server answers with the same version if it supports it, otherwise with its own
newest one; the client disconnects if it cannot speak that version; otherwise it sends
``notifications/initialized`` and normal operation begins.

**Modern era** (2026-07-28): there is no handshake. Each request carries its version and the
client's capabilities in ``params._meta``; :func:`check_modern_request` is the whole "negotiation",
run on every request. A server that needs a capability the client did not declare on *this* request
answers ``-32021``; a version it does not speak, ``-32022`` with the versions it does.

**Era detection**: a client that does not know a server's era probes with ``server/discover``. A
``DiscoverResult`` or a recognised modern error means modern; any other error, or a timeout, means
legacy, and the client falls back to ``initialize`` (:func:`era_from_discover_reply`).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, NamedTuple

from mcp_sim.protocol import meta as M
from mcp_sim.protocol.errors import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
    McpError,
)
from mcp_sim.protocol.revisions import LATEST, REVISIONS, Era, get_revision

Role = Literal["client", "server"]


class LegacyState(enum.Enum):
    """The states of a legacy (stateful) MCP connection."""

    NOT_STARTED = "not started"
    INITIALIZING = "initializing"
    """``initialize`` sent, no answer yet."""
    INITIALIZED = "initialized"
    """The server answered ``initialize``; the client has not yet sent ``notifications/initialized``."""
    OPERATING = "operating"
    CLOSED = "closed"


S = LegacyState

# Events are the names of what crossed the connection: a method, "<method> result"/"<method> error"
# for a response, or "close" for the end of the transport.
LEGACY_TRANSITIONS: Final[Mapping[tuple[LegacyState, str], LegacyState]] = {
    (S.NOT_STARTED, "initialize"): S.INITIALIZING,
    (S.INITIALIZING, "initialize result"): S.INITIALIZED,
    (S.INITIALIZING, "initialize error"): S.CLOSED,
    (S.INITIALIZED, "notifications/initialized"): S.OPERATING,
    (S.INITIALIZED, "version rejected"): S.CLOSED,
    **{(state, "close"): S.CLOSED for state in LegacyState},
}

# What each side may send in each state. "*" means any method its revision allows. The rules come
# from the spec's lifecycle page: before the server has answered initialize the client SHOULD send
# nothing but pings; before notifications/initialized the server SHOULD send nothing but pings and
# log messages. The cancellation page adds that initialize MUST NOT be cancelled, so while it is the
# one request in flight the client has nothing it may send notifications/cancelled about.
LEGACY_ALLOWED: Final[Mapping[LegacyState, Mapping[Role, frozenset[str]]]] = {
    S.NOT_STARTED: {"client": frozenset({"initialize"}), "server": frozenset()},
    S.INITIALIZING: {"client": frozenset({"ping"}),
                     "server": frozenset({"ping", "notifications/message"})},
    S.INITIALIZED: {"client": frozenset({"notifications/initialized", "ping"}),
                    "server": frozenset({"ping", "notifications/message"})},
    S.OPERATING: {"client": frozenset({"*"}), "server": frozenset({"*"})},
    S.CLOSED: {"client": frozenset(), "server": frozenset()},
}

LEGACY_RULES: Final[Mapping[LegacyState, str]] = {
    S.NOT_STARTED: "The initialization phase MUST be the first interaction between client and server.",
    S.INITIALIZING: "The client SHOULD NOT send requests other than pings before the server has responded "
                    "to the initialize request, and the initialize request MUST NOT be cancelled; the server "
                    "SHOULD NOT send requests other than pings and logging before receiving the initialized "
                    "notification.",
    S.INITIALIZED: "After a successful initialize response the client MUST send an initialized notification "
                   "before normal operations; the server SHOULD NOT send requests other than pings and "
                   "logging before receiving it.",
    S.OPERATING: "Both parties use only capabilities that were successfully negotiated.",
    S.CLOSED: "Nothing may be sent after the connection is closed.",
}


class LifecycleViolation(McpError):
    """A message sent in a state where the lifecycle does not allow it."""


@dataclass
class LegacyLifecycle:
    """A legacy connection's lifecycle, seen from one side. Feed it every message in both directions."""

    role: Role
    state: LegacyState = LegacyState.NOT_STARTED

    def allowed(self, side: Role | None = None) -> frozenset[str]:
        return LEGACY_ALLOWED[self.state][side or self.role]

    def may_send(self, method: str, side: Role | None = None) -> bool:
        allowed = LEGACY_ALLOWED[self.state][side or self.role]
        return method in allowed or "*" in allowed

    def check_send(self, method: str, side: Role | None = None) -> None:
        """Raise :class:`LifecycleViolation` if ``side`` may not send ``method`` now."""
        who = side or self.role
        allowed = LEGACY_ALLOWED[self.state][who]
        if method not in allowed and "*" not in allowed:
            raise LifecycleViolation(
                -32600, f"the {who} may not send {method} while the connection is {self.state.value}",
                rule=LEGACY_RULES[self.state])

    def on_event(self, event: str) -> LegacyState:
        """Apply an event (a method name, ``"initialize result"``, ``"close"`` …); unknown pairs keep
        the state, as a table-driven machine should: the table is the whole truth."""
        self.state = LEGACY_TRANSITIONS.get((self.state, event), self.state)
        return self.state


def legacy_state_table() -> list[tuple[str, str, str]]:
    """(from, event, to) rows, for drawing the state diagram. ``close`` is shown once, from any state."""
    rows = [(a.value, ev, b.value) for (a, ev), b in LEGACY_TRANSITIONS.items() if ev != "close"]
    rows.append(("any", "close", S.CLOSED.value))
    return rows


# --- legacy version negotiation -------------------------------------------------------------------

def negotiate_version(requested: str, supported: Iterable[str]) -> str:
    """What a legacy server answers to ``initialize``: the requested version if it supports it,
    otherwise the newest version it supports. (The client then decides whether it can accept.)"""
    versions = [v for v in supported if v in REVISIONS and get_revision(v).era == "legacy"]
    if not versions:
        raise ValueError("a legacy server must support at least one legacy revision")
    if requested in versions:
        return requested
    return max(versions)


def client_accepts(server_version: str, client_supported: Iterable[str]) -> bool:
    """A legacy client accepts the server's answer only if it speaks that version; otherwise it
    SHOULD disconnect."""
    return server_version in set(client_supported)


# --- the modern era: every request negotiates -----------------------------------------------------

class ModernRequestMeta(NamedTuple):
    """What a modern server learns from one request's ``_meta`` (an immutable record: one is made for
    every modern request, and a named tuple is the cheapest immutable thing Python makes)."""

    protocol_version: str
    client_capabilities: dict[str, Any]
    client_info: dict[str, Any] | None = None
    log_level: str | None = None
    progress_token: str | int | None = None


def check_modern_request(params: Mapping[str, Any] | None, supported: Iterable[str]) -> ModernRequestMeta:
    """Validate the per-request ``_meta`` of a 2026-07-28 request. Raises :class:`McpError`:

    * ``-32602`` when ``_meta``, its protocol version or its client capabilities are missing;
    * ``-32022`` with ``data.requested``/``data.supported`` when the version is not supported.
    """
    if not isinstance(supported, (list, tuple)):
        supported = list(supported)
    meta = (params or {}).get("_meta")
    if isinstance(meta, dict):
        # The common case, checked without building anything: both keys there, well typed, spoken.
        version, caps = meta.get(M.PROTOCOL_VERSION), meta.get(M.CLIENT_CAPABILITIES)
        if type(version) is str and isinstance(caps, dict) and version in supported:
            progress = meta.get(M.PROGRESS_TOKEN)
            return ModernRequestMeta(version, dict(caps), meta.get(M.CLIENT_INFO), meta.get(M.LOG_LEVEL),
                                     progress if isinstance(progress, (str, int)) else None)
    supported = list(supported)
    rule = ("Every 2026-07-28 request MUST carry io.modelcontextprotocol/protocolVersion and "
            "io.modelcontextprotocol/clientCapabilities in params._meta.")
    if not isinstance(meta, Mapping):
        raise McpError(INVALID_PARAMS, "Invalid params: missing params._meta", {"missing": list(M.REQUIRED_REQUEST_KEYS)},
                       rule=rule, revision=LATEST)
    missing = [k for k in M.REQUIRED_REQUEST_KEYS if k not in meta]
    if missing:
        raise McpError(INVALID_PARAMS, f"Invalid params: missing {', '.join(missing)} in _meta",
                       {"missing": missing}, rule=rule, revision=LATEST)
    version = meta[M.PROTOCOL_VERSION]
    caps = meta[M.CLIENT_CAPABILITIES]
    if not isinstance(version, str) or not isinstance(caps, Mapping):
        raise McpError(INVALID_PARAMS, "Invalid params: protocolVersion must be a string and clientCapabilities "
                       "an object", rule=rule, revision=LATEST)
    if version not in supported:
        raise unsupported_version(version, supported)
    progress = meta.get(M.PROGRESS_TOKEN)
    return ModernRequestMeta(version, dict(caps), meta.get(M.CLIENT_INFO), meta.get(M.LOG_LEVEL),
                             progress if isinstance(progress, (str, int)) else None)


def unsupported_version(requested: str, supported: Iterable[str]) -> McpError:
    return McpError(UNSUPPORTED_PROTOCOL_VERSION, f"Unsupported protocol version: {requested}",
                    {"requested": requested, "supported": sorted(supported)},
                    rule="A server that does not support the request's protocol version answers -32022 with the "
                         "versions it supports; the client retries with a mutually supported one.",
                    revision=LATEST)


def has_capability(capabilities: Mapping[str, Any] | None, path: str) -> bool:
    """True when ``capabilities`` declares ``path`` (``"elicitation"``, ``"resources.subscribe"`` …).

    A dotted path names a flag or sub-object: ``resources.subscribe`` is declared by
    ``{"resources": {"subscribe": true}}``; a bare name by the key being present. In 2025-11-25 and
    later, ``elicitation: {}`` with no sub-keys means form mode only."""
    node: Any = capabilities or {}
    parts = path.split(".")
    for i, part in enumerate(parts):
        if not isinstance(node, Mapping) or part not in node:
            if parts[:1] == ["elicitation"] and parts[1:] == ["form"] and i == 1 and isinstance(node, Mapping) \
                    and not node:
                return True  # empty elicitation object = form mode
            return False
        node = node[part]
    return node is not False and node is not None


def capability_object(path: str) -> dict[str, Any]:
    """``"elicitation.url"`` → ``{"elicitation": {"url": {}}}``, for ``data.requiredCapabilities``."""
    parts = path.split(".")
    out: dict[str, Any] = {}
    node = out
    for part in parts[:-1]:
        node[part] = {}
        node = node[part]
    node[parts[-1]] = {}
    return out


def require_client_capability(meta: ModernRequestMeta, path: str) -> None:
    """Raise ``-32021`` unless *this request* declared client capability ``path``. A modern server
    MUST NOT infer capabilities from earlier requests."""
    if not has_capability(meta.client_capabilities, path):
        raise McpError(MISSING_REQUIRED_CLIENT_CAPABILITY, f"Missing required client capability: {path}",
                       {"requiredCapabilities": capability_object(path)},
                       rule="A 2026-07-28 server that needs a client capability the request did not declare "
                            "answers -32021 with data.requiredCapabilities.", revision=LATEST)


# --- era detection ----------------------------------------------------------------------------

MODERN_ERROR_CODES: Final = frozenset({HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY,
                                       UNSUPPORTED_PROTOCOL_VERSION})


def era_from_discover_reply(reply: Mapping[str, Any] | None) -> Era:
    """Decide a server's era from its answer to a ``server/discover`` probe (``None`` = timeout).

    A ``DiscoverResult`` (a result with ``supportedVersions``) or a recognised modern error
    (``-32020``/``-32021``/``-32022``) means modern; anything else — ``-32601`` from a legacy server, a
    ``-32600`` "not initialized", a timeout — means legacy. The spec tells clients not to key on one
    particular code, so every unrecognised answer falls back to legacy."""
    if reply is None:
        return "legacy"
    result = reply.get("result")
    if isinstance(result, Mapping) and "supportedVersions" in result:
        return "modern"
    error = reply.get("error")
    if isinstance(error, Mapping) and error.get("code") in MODERN_ERROR_CODES:
        return "modern"
    return "legacy"


def era_from_http_probe(status: int, body: Mapping[str, Any] | None) -> Era:
    """The HTTP form of detection: a modern request answered 200 with a result, or 400 with a
    recognised modern JSON-RPC error, means modern; any other 4xx means legacy."""
    if status == 200 and body is not None:
        return era_from_discover_reply(body)
    if status == 400 and body is not None and era_from_discover_reply(body) == "modern":
        return "modern"
    return "legacy"
