"""``mcp-sim connect --conformance-scenario NAME --url URL``: the simulated client under the official suite.

The official conformance suite (``@modelcontextprotocol/conformance``) tests a *client* by starting a
small test server per scenario and running a command it is given, with the server's URL as the last
argument and the scenario's name in the environment (``MCP_CONFORMANCE_SCENARIO``). The test server
records what the client did and scores it: did it call the tool with numbers, did it fill an
elicitation's defaults, did it echo ``requestState``, did it wait as long as an SSE ``retry`` asked …

This module is the small adapter between the two: it connects the simulator's ordinary
:class:`~mcp_sim.roles.client.Client` (through :func:`~mcp_sim.bridge.real.connect_real`, exactly as
``mcp-sim connect`` does) and does what a scenario's user would ask of it. Nothing here is special
protocol code: every message on the wire is the client's own. The scenario only decides *which*
requests the "user" makes and with which arguments.

The revision comes from ``MCP_CONFORMANCE_PROTOCOL_VERSION`` (the suite sets it): 2026-07-28 means
the modern era (per-request ``_meta``, no handshake), an older date the legacy ``initialize``.

The authorization scenarios (``auth/…``) put the test server behind OAuth: the client answers the
``401`` with the real-wire OAuth flow (:mod:`mcp_sim.bridge.oauth_http`), as ``mcp-sim connect
--url`` does. Their test authorization server redirects straight back, so no browser is involved;
a scenario that pre-registers the client passes its ``client_id``, secret and issuer in the context,
and the client publishes the metadata document URL the suite expects (:data:`CLIENT_METADATA_URL`).
A context with a ``client_id`` and a secret or a private key but no issuer describes a client with
no user (:func:`machine_credentials`): it gets the client-credentials grant wherever the
authorization server offers it, and the code flow elsewhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp_sim.protocol.errors import McpError
from mcp_sim.protocol.revisions import REVISIONS
from mcp_sim.roles.client import ClientCallbacks, ClientEra
from mcp_sim.roles.client.elicitation import content_errors, placeholder_content
from mcp_sim.security.oauth_client import MachineCredentials
from mcp_sim.trace.recorder import Recorder

MODERN_VERSION = "2026-07-28"

CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
"""The Client ID Metadata Document URL the suite's authorization scenarios expect a client to use."""

ECHO_PLANS: dict[str, tuple[str, str, str]] = {
    # scenario -> (tool to call, its argument, the listed tool whose inputSchema is passed back verbatim)
    "json-schema-2020-12-preservation": ("json_schema_echo", "schema", "json_schema_2020_12_tool"),
}
"""Scenarios that check what the client kept of a listing: the client hands a tool's schema back."""


def machine_credentials(context: Mapping[str, Any]) -> MachineCredentials | None:
    """The credentials of a client acting on its own behalf, when the suite's context gives them: a
    ``client_id`` with a ``client_secret`` or a ``private_key_pem`` (and its ``signing_algorithm``),
    and no ``issuer`` (a pre-registered client for the code flow comes with one)."""
    client_id, secret, key = (context.get(k) for k in ("client_id", "client_secret", "private_key_pem"))
    if not isinstance(client_id, str) or "issuer" in context:
        return None
    if isinstance(key, str):
        from mcp_sim.bridge.oauth_http import private_key_jwt

        return MachineCredentials(client_id, assertion=private_key_jwt(
            client_id, key, str(context.get("signing_algorithm") or "ES256")))
    if isinstance(secret, str):
        return MachineCredentials(client_id, client_secret=secret)
    return None


def era_for(version: str | None) -> tuple[ClientEra, tuple[str, ...] | None]:
    """``(era, versions)`` for the revision the suite asks for: the client offers exactly that one."""
    if not version or version not in REVISIONS:
        return "auto", None
    return ("modern" if version >= MODERN_VERSION else "legacy"), (version,)


def placeholder_arguments(schema: Mapping[str, Any] | None) -> dict[str, Any]:
    """Arguments that satisfy a tool's ``inputSchema`` as simply as possible: each required property
    gets its default, else a value of its type (numbers ``1``, strings ``"test"``…)."""
    if not isinstance(schema, Mapping):
        return {}
    props = schema.get("properties") or {}
    out: dict[str, Any] = {}
    for name in schema.get("required") or []:
        prop = props.get(name) if isinstance(props, Mapping) else None
        prop = prop if isinstance(prop, Mapping) else {}
        if "default" in prop:
            out[name] = prop["default"]
        elif prop.get("enum"):
            out[name] = prop["enum"][0]
        else:
            kind = prop.get("type")
            out[name] = {"number": 1, "integer": 1, "boolean": True, "array": [], "object": {}}.get(
                kind if isinstance(kind, str) else "string", "test")
    return out


def planned_calls(scenario: str, tools: list[dict[str, Any]],
                  context: Mapping[str, Any] | None) -> list[tuple[str, dict[str, Any]]]:
    """The ``(tool, arguments)`` calls a scenario's user makes: the ones the suite spells out in its
    context (``toolCalls``), else an echo plan, else every listed tool with placeholder arguments."""
    listed = {t.get("name"): t for t in tools}
    given = (context or {}).get("toolCalls")
    if isinstance(given, list):
        return [(c["name"], dict(c.get("arguments") or {})) for c in given
                if isinstance(c, Mapping) and c.get("name") in listed]
    if scenario in ECHO_PLANS:
        tool, argument, source = ECHO_PLANS[scenario]
        if tool in listed and source in listed:
            return [(tool, {argument: listed[source].get("inputSchema")})]
    return [(t["name"], placeholder_arguments(t.get("inputSchema"))) for t in tools]


def conformance_callbacks() -> ClientCallbacks:
    """The Host the suite's scenarios expect: elicitations accepted with the form's own defaults
    (placeholders where a field has none), sampling answered with a fixed text, one root."""

    async def elicit(_server: str, params: dict[str, Any]) -> dict[str, Any]:
        if params.get("mode", "form") != "form":
            return {"action": "decline"}
        schema = params.get("requestedSchema")
        answer = placeholder_content(schema)
        if answer is None or content_errors(schema, answer):
            return {"action": "decline"}
        return {"action": "accept", "content": answer}

    async def sample(_server: str, _params: dict[str, Any]) -> dict[str, Any]:
        return {"role": "assistant", "content": {"type": "text", "text": "conformance answer"},
                "model": "mcp-sim-scripted", "stopReason": "endTurn"}

    async def roots(_server: str) -> list[dict[str, Any]]:
        return [{"uri": "file:///conformance", "name": "conformance"}]

    return ClientCallbacks(elicitation=elicit, sampling=sample, roots=roots)


async def _attempt(calls: list[dict[str, Any]], label: dict[str, Any], call: Any) -> None:
    try:
        calls.append({**label, "result": await call})
    except McpError as exc:
        calls.append({**label, "error": {"code": exc.code, "message": exc.message}})


async def run_scenario(scenario: str, url: str, *, version: str | None, recorder: Recorder,
                       context: Mapping[str, Any] | None = None, timeout: float = 30.0) -> dict[str, Any]:
    """Do what ``scenario`` expects of a client at ``url``; return a summary (what was called, what came
    back). Every scenario runs the same user: connect, list what the server offers, call the tools
    (:func:`planned_calls`), read every listed resource, get every listed prompt."""
    from mcp_sim.bridge.oauth_http import open_oauth
    from mcp_sim.bridge.real import connect_real

    era, versions = era_for(version)
    summary: dict[str, Any] = {"scenario": scenario, "calls": []}
    calls: list[dict[str, Any]] = summary["calls"]
    given = context or {}
    issuer, client_id, secret = (given.get(k) for k in ("issuer", "client_id", "client_secret"))
    known = isinstance(issuer, str) and isinstance(client_id, str)
    async with open_oauth(url, recorder=recorder, client_name="mcp-sim conformance client",
                          preregistered={issuer: client_id} if known else None,  # type: ignore[dict-item]
                          client_secrets={client_id: secret} if known and isinstance(secret, str) else None,  # type: ignore[dict-item]
                          metadata_document=CLIENT_METADATA_URL, interactive=False,
                          machine=machine_credentials(given), timeout=timeout) as oauth, \
            connect_real(url, era=era, versions=versions, recorder=recorder, timeout=timeout,
                         callbacks=conformance_callbacks(), authorizer=oauth.on_challenge) as session:
        summary["authorization"] = oauth.steps
        client = session.client
        summary.update(era=client.era, protocol_version=client.protocol_version)
        caps = client.server_capabilities or {}
        tools = await client.list_all_tools() if "tools" in caps else []
        summary["tools"] = [t.get("name") for t in tools]
        for name, arguments in planned_calls(scenario, tools, context):
            await _attempt(calls, {"tool": name, "arguments": arguments}, client.call_tool(name, arguments))
        if "resources" in caps:
            for resource in (await client.list_resources()).get("resources") or []:
                await _attempt(calls, {"read": resource["uri"]}, client.read_resource(resource["uri"]))
        if "prompts" in caps:
            for prompt in (await client.list_prompts()).get("prompts") or []:
                await _attempt(calls, {"prompt": prompt["name"]}, client.get_prompt(prompt["name"], {}))
    return summary
