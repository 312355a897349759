"""The revision registry (mcp_sim.protocol.revisions) agrees with each revision's official schema.

For every released revision: the request methods each side may send (the schema's ``ClientRequest`` and
``ServerRequest`` unions; in 2026-07-28 ``InputRequest`` for the server-to-client ones), the notification
methods (``ClientNotification``/``ServerNotification``), the type names the registry gives, the results
each side may send, and the capability fields.
"""

from __future__ import annotations

from typing import Any

import pytest

from mcp_sim.protocol.revisions import REVISIONS, TASKS_EXTENSION_METHODS, Revision
from mcp_sim.protocol.schema import definitions_key, find_spec_dir, load_schema

pytestmark = pytest.mark.skipif(find_spec_dir() is None,
                                reason="official MCP schemas not found (set MCP_SIM_SPEC_DIR)")

VERSIONS = list(REVISIONS)
C2S, S2C, BOTH = "client→server", "server→client", "both"


def _defs(version: str) -> dict[str, Any]:
    defs: dict[str, Any] = load_schema(version)[definitions_key(version)]
    return defs


def _method_const(body: dict[str, Any]) -> str | None:
    """The ``method`` constant of a request/notification definition (plain or ``allOf``-composed)."""
    const = body.get("properties", {}).get("method", {}).get("const")
    for part in body.get("allOf", []):
        const = part.get("properties", {}).get("method", {}).get("const") or const
    return const


def _union(version: str, name: str) -> dict[str, str]:
    """method → type name for the members of union ``name`` (empty when the schema lacks it).

    A union with a single member may be written inline (2026-07-28's ``ClientNotification`` is a copy
    of ``CancelledNotification``); then the type name is the union's own.
    """
    defs = _defs(version)
    if name not in defs:
        return {}
    union = defs[name]
    if "anyOf" in union:
        names = [ref["$ref"].split("/")[-1] for ref in union["anyOf"]]
    elif "$ref" in union:
        names = [union["$ref"].split("/")[-1]]
    else:
        return {_method_const(union) or "": name}
    return {_method_const(defs[n]) or "": n for n in names}


def _result_names(version: str, name: str) -> set[str]:
    defs = _defs(version)
    union = defs.get(name, {})
    refs = union.get("anyOf", [union] if "$ref" in union else [])
    return {ref["$ref"].split("/")[-1] for ref in refs}


def _registry_requests(rev: Revision, *directions: str, inside_input_requests: bool = False) -> set[str]:
    return {m for m, info in rev.requests.items()
            if info.direction in directions and info.only_inside_input_requests == inside_input_requests}


@pytest.mark.parametrize("version", VERSIONS)
def test_client_request_methods(version: str) -> None:
    rev = REVISIONS[version]
    assert _registry_requests(rev, C2S, BOTH) == set(_union(version, "ClientRequest"))


@pytest.mark.parametrize("version", VERSIONS)
def test_server_request_methods(version: str) -> None:
    rev = REVISIONS[version]
    assert _registry_requests(rev, S2C, BOTH) == set(_union(version, "ServerRequest"))
    # 2026-07-28: no ServerRequest; the same messages travel inside InputRequiredResult.inputRequests.
    assert _registry_requests(rev, S2C, BOTH, inside_input_requests=True) == set(_union(version, "InputRequest"))


@pytest.mark.parametrize("version", VERSIONS)
def test_notification_methods(version: str) -> None:
    rev = REVISIONS[version]
    client = {n for n, info in rev.notifications.items() if info.direction in (C2S, BOTH)}
    server = {n for n, info in rev.notifications.items() if info.direction in (S2C, BOTH)}
    assert client == set(_union(version, "ClientNotification"))
    assert server == set(_union(version, "ServerNotification"))


@pytest.mark.parametrize("version", VERSIONS)
def test_request_and_result_type_names_exist(version: str) -> None:
    defs = _defs(version)
    unions = {**_union(version, "ClientRequest"), **_union(version, "ServerRequest"),
              **_union(version, "InputRequest")}
    for method, info in REVISIONS[version].requests.items():
        assert info.request_type in defs, f"{method}: no {info.request_type} in {version}"
        assert info.result_type in defs, f"{method}: no {info.result_type} in {version}"
        assert _method_const(defs[info.request_type]) == method
        assert unions[method] == info.request_type


@pytest.mark.parametrize("version", VERSIONS)
def test_notification_type_names_exist(version: str) -> None:
    defs = _defs(version)
    for method, info in REVISIONS[version].notifications.items():
        assert info.type_name in defs, f"{method}: no {info.type_name} in {version}"
        assert _method_const(defs[info.type_name]) == method


@pytest.mark.parametrize("version", VERSIONS)
def test_result_types_are_in_the_result_unions(version: str) -> None:
    """What answers a client's request is a ServerResult, and the other way round (2026: InputResponse)."""
    server_results = _result_names(version, "ServerResult")
    client_results = _result_names(version, "ClientResult") | _result_names(version, "InputResponse")

    def in_union(name: str, union: set[str]) -> bool:
        return name in union or (name == "EmptyResult" and "Result" in union)

    for method, info in REVISIONS[version].requests.items():
        if info.direction in (C2S, BOTH):
            assert in_union(info.result_type, server_results), method
        if info.direction in (S2C, BOTH):
            assert in_union(info.result_type, client_results), method


def _capability_paths(defs: dict[str, Any], name: str) -> set[str]:
    """Dotted paths of the named sub-objects and flags of a capabilities definition."""
    paths: set[str] = set()

    def walk(prefix: str, body: dict[str, Any]) -> None:
        if "$ref" in body:
            body = defs[body["$ref"].split("/")[-1]]
        for key, sub in body.get("properties", {}).items():
            path = f"{prefix}{key}"
            paths.add(path)
            if key not in ("experimental", "extensions") and isinstance(sub, dict):
                walk(path + ".", sub)

    walk("", defs[name])
    return paths


@pytest.mark.parametrize("version", VERSIONS)
def test_capability_fields_exist(version: str) -> None:
    defs = _defs(version)
    rev = REVISIONS[version]
    client = _capability_paths(defs, "ClientCapabilities")
    server = _capability_paths(defs, "ServerCapabilities")
    assert set(rev.client_capabilities) <= client
    assert set(rev.server_capabilities) <= server
    # Every top-level capability of the schema is in the registry.
    assert {p for p in client if "." not in p} <= set(rev.client_capabilities)
    assert {p for p in server if "." not in p} <= set(rev.server_capabilities)


def test_tasks_extension_methods_exist_in_its_schema() -> None:
    defs = _defs("ext-tasks")
    for method, info in TASKS_EXTENSION_METHODS.items():
        assert info.request_type in defs and info.result_type in defs
        assert _method_const(defs[info.request_type]) == method


def _props(body: dict[str, Any]) -> dict[str, Any]:
    props = dict(body.get("properties", {}))
    for part in body.get("allOf", []):
        props.update(part.get("properties", {}))
    return props


@pytest.mark.parametrize("version", VERSIONS)
def test_the_registrys_predicates_agree_with_the_schema(version: str) -> None:
    """Each "does this revision have X" answer is read off the official schema of that revision."""
    defs, rev = _defs(version), REVISIONS[version]
    assert rev.types_carry_envelope == ("jsonrpc" in _props(defs["CallToolRequest"]))
    error = defs.get("JSONRPCErrorResponse") or defs["JSONRPCError"]
    assert rev.error_id_optional == ("id" not in error.get("required", []))
    assert rev.has_structured_tool_output == ("structuredContent" in _props(defs["CallToolResult"]))
    progress = {**_props(defs.get("ProgressNotificationParams", {})),
                **_props(_props(defs["ProgressNotification"]).get("params", {}))}
    assert rev.has_progress_message == ("message" in progress)
    assert rev.has_elicitation_modes == ("ElicitRequestURLParams" in defs)
    assert rev.has_tasks == ("Task" in defs)
