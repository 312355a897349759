"""Every message the simulator moves is a real MCP message: each scenario, in each simulated revision,
over each transport, is checked message by message against the official schema of its revision —
the envelope against ``JSONRPCMessage`` and the body against the exact type the registry names for
its method (``CallToolRequest``, ``InputRequiredResult``, ``ToolListChangedNotification`` …)."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_sim.protocol.revisions import SIMULATED_VERSIONS, TASKS_EXTENSION_METHODS, get_revision
from mcp_sim.protocol.schema import find_spec_dir, schema_errors
from mcp_sim.scenarios import SCENARIOS, run_scenario

pytestmark = pytest.mark.skipif(find_spec_dir() is None,
                                reason="official MCP schemas not found (../shared/spec or MCP_SIM_SPEC_DIR)")

ENVELOPE_ONLY_TYPES = {"EmptyResult"}


def _body_type(message: dict[str, Any], method: str | None, revision: str) -> tuple[str, str, Any] | None:
    """(schema, type, instance) for the body of ``message``; ``None`` when only the envelope applies.

    ``schema`` is the revision's own schema, or ``ext-tasks`` for the 2026-07-28 tasks extension's
    results (the extension's schema defines them; its requests are checked as envelopes)."""
    rev = get_revision(revision)
    if "method" in message:
        name = message["method"]
        info = rev.requests.get(name) if "id" in message else None
        if info is not None:
            type_name = info.request_type
        elif "id" not in message and name in rev.notifications:
            type_name = rev.notifications[name].type_name
        elif rev.is_modern and (name in TASKS_EXTENSION_METHODS or name == "notifications/tasks"):
            return None
        else:
            raise AssertionError(f"{name} is not a {'request' if 'id' in message else 'notification'} "
                                 f"of revision {revision}")
        instance = message if rev.types_carry_envelope else \
            {k: v for k, v in message.items() if k in ("method", "params")}
        return revision, type_name, instance
    if "result" in message and method is not None:
        result = message["result"]
        extension = TASKS_EXTENSION_METHODS.get(method)
        if rev.is_modern and extension is not None:
            return "ext-tasks", extension.result_type, result
        if rev.is_modern and result.get("resultType") == "task":
            return "ext-tasks", "CreateTaskResult", result
        info = rev.requests.get(method)
        if info is None:
            return None
        if result.get("resultType") == "input_required":
            return revision, "InputRequiredResult", result
        if "task" in result and rev.has_tasks:  # a task-augmented request answered with its task
            return revision, "CreateTaskResult", result
        if info.result_type in ENVELOPE_ONLY_TYPES:
            return revision, "Result", result
        return revision, info.result_type, result
    return None


def _check_trace(events: Any, revision: str) -> int:
    checked = 0
    envelope = "JSONRPCMessage"
    for event in events:
        if event.kind not in ("request", "response", "error", "notification") or event.message is None:
            continue
        assert event.revision in (None, revision) or event.revision in SIMULATED_VERSIONS
        errors = schema_errors(event.message, revision, envelope)
        assert errors == [], f"#{event.seq} {event.caption}: {errors}"
        body = _body_type(event.message, event.method, revision)
        if body is not None:
            schema, type_name, instance = body
            errors = schema_errors(instance, schema, type_name)
            assert errors == [], f"#{event.seq} {event.caption} is not a valid {type_name} in {revision}: {errors}"
        checked += 1
    return checked


@pytest.mark.parametrize("transport", ["memory", "stdio", "http"])
@pytest.mark.parametrize("revision", SIMULATED_VERSIONS)
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_every_message_is_valid_for_its_revision(scenario: str, revision: str, transport: str) -> None:
    trace = run_scenario(scenario, revision=revision, transport=transport, seed=5)
    assert _check_trace(trace, revision) > 0


def test_the_checker_catches_a_wrong_message() -> None:
    """A message that only looks right must fail: ``resultType`` is required in 2026-07-28 results."""
    trace = run_scenario("handshake", revision="2026-07-28", seed=5)
    response = next(e for e in trace if e.kind == "response" and e.method == "tools/list")
    broken = {**response.message, "result": {k: v for k, v in response.message["result"].items()
                                             if k != "resultType"}}
    body = _body_type(broken, "tools/list", "2026-07-28")
    assert body is not None
    assert schema_errors(body[2], body[0], body[1]) != []
