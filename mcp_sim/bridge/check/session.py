"""One era's conversation with a real server, spoken by hand: the legacy handshake or the modern
per-request ``_meta`` (course chapters 03 and 12).

The two eras open differently. A legacy session sends ``initialize`` with the version it offers,
reads the server's version, capabilities and name from the answer, then sends
``notifications/initialized``; every later request rides on that state. A modern (2026-07-28)
session asks ``server/discover`` once for the server's versions and capabilities, and then every
request carries the protocol version, the client's capabilities and its name in ``params._meta`` —
there is no connection state to rely on.

:class:`EraSession` hides that difference from the workloads: ``await session.call(method, params)``
adds whatever the era needs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from mcp_sim.bridge.check.link import ProbeLink
from mcp_sim.protocol.revisions import LATEST_LEGACY, MODERN_VERSIONS

CheckEra = Literal["legacy", "modern"]
MODERN_VERSION = MODERN_VERSIONS[-1]
UNSUPPORTED_VERSION = "1999-01-01"
"""A version no server supports: the probe of version negotiation."""

STARTUP_SECONDS = 60.0
"""How long the first request of a process may wait: it waits for the server to start, too (an SDK
server importing its dependencies on a busy machine can take many seconds)."""

CLIENT_INFO = {"name": "mcp-sim-check", "version": "0.1.0"}
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"


def request_meta(version: str = MODERN_VERSION) -> dict[str, Any]:
    """The ``_meta`` every 2026-07-28 request carries: version, client capabilities, client name."""
    return {VERSION_KEY: version, CAPABILITIES_KEY: {},
            "io.modelcontextprotocol/clientInfo": dict(CLIENT_INFO)}


def initialize_params(version: str = LATEST_LEGACY) -> dict[str, Any]:
    return {"protocolVersion": version, "capabilities": {}, "clientInfo": dict(CLIENT_INFO)}


@dataclass
class EraSession:
    """The era-specific half of a conversation on one :class:`ProbeLink`."""

    link: ProbeLink
    era: CheckEra
    revision: str | None = None
    """The revision agreed (legacy: the server's answer to ``initialize``; modern: 2026-07-28)."""
    capabilities: dict[str, Any] = field(default_factory=dict)
    opened: bool = False
    tools: list[dict[str, Any]] = field(default_factory=list)
    resources: list[dict[str, Any]] = field(default_factory=list)
    prompts: list[dict[str, Any]] = field(default_factory=list)
    """What the lists found, for the steps after them."""

    def params(self, params: dict[str, Any] | None = None, *, version: str | None = None) -> dict[str, Any]:
        """``params`` with what the era needs added (modern: the per-request ``_meta``)."""
        out = dict(params or {})
        if self.era == "modern":
            out["_meta"] = {**request_meta(version or MODERN_VERSION), **out.get("_meta", {})}
        return out

    async def call(self, method: str, params: dict[str, Any] | None = None, *marks: str,
                   wait: bool = True, request_id: Any = None) -> dict[str, Any] | None:
        """Send ``method`` with the era's additions; the response (or ``None``)."""
        return await self.link.request(method, self.params(params), *marks, wait=wait, request_id=request_id)

    async def open(self) -> bool:
        """Open the session the era's way; ``False`` when the server does not speak this era."""
        if self.era == "legacy":
            answer = await self.link.request("initialize", initialize_params(), "expect:initialize", "opening",
                                             timeout=STARTUP_SECONDS)
            result = (answer or {}).get("result")
            if not isinstance(result, dict):
                return False
            version = result.get("protocolVersion")
            self.revision = version if isinstance(version, str) else LATEST_LEGACY
            self.link.set_revision(self.revision)
            caps = result.get("capabilities")
            self.capabilities = caps if isinstance(caps, dict) else {}
            await self.link.notify("notifications/initialized", None, "expect:no-response")
        else:
            answer = await self.link.request("server/discover", self.params(), "expect:discover", "opening",
                                             timeout=STARTUP_SECONDS)
            result = (answer or {}).get("result")
            if not isinstance(result, dict):
                return False
            self.revision = MODERN_VERSION
            caps = result.get("capabilities")
            self.capabilities = caps if isinstance(caps, dict) else {}
        self.opened = True
        return True

    def offers(self, capability: str) -> bool:
        return isinstance(self.capabilities.get(capability), dict)

    async def alive_probe(self, *marks: str) -> dict[str, Any] | None:
        """A cheap request the server must answer: ``ping`` (legacy) or ``server/discover`` (modern)."""
        method = "ping" if self.era == "legacy" else "server/discover"
        return await self.call(method, None, "expect:result", "probe:alive", *marks)


def example_value(schema: Any) -> Any:
    """A plain value that fits a JSON Schema property (default, first enum option, or by type)."""
    if not isinstance(schema, dict):
        return "check"
    if "default" in schema:
        return schema["default"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) and kind else kind
    return {"integer": 1, "number": 1, "boolean": True, "array": [], "object": {}, "null": None}.get(
        kind if isinstance(kind, str) else "", "check")


def example_arguments(input_schema: Any) -> dict[str, Any]:
    """Arguments for a tool: every required property with an :func:`example_value`."""
    if not isinstance(input_schema, dict):
        return {}
    found_props, found_required = input_schema.get("properties"), input_schema.get("required")
    props: dict[str, Any] = found_props if isinstance(found_props, dict) else {}
    required: list[Any] = found_required if isinstance(found_required, list) else []
    return {name: example_value(props.get(name)) for name in required if isinstance(name, str)}
