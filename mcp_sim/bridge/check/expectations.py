"""What each marked request was meant to get, checked against what it got (chapter 12).

The workload marks every request it sends with an ``expect:…`` label; this module holds one small
function per label. Each reads the request and its first response (paired by
:func:`~mcp_sim.bridge.check.checkers.pair_responses`) and returns findings citing the rule at stake
with its rulebook strength, so a ``SHOULD`` the server skips is reported as advice and only a broken
``MUST`` fails the check. A request left unanswered is reported once, by the correlation check. The task and listen
expectations live in :mod:`.tasks_checks`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mcp_sim.bridge.check.tasks_checks as tasks_checks
from mcp_sim.bridge.check.checkers import LinkRun, _code, _error, _finding, _result, _said
from mcp_sim.bridge.check.findings import Finding
from mcp_sim.protocol.revisions import LEGACY_VERSIONS
from mcp_sim.trace.event import TraceEvent

Expectation = Callable[[LinkRun, TraceEvent, dict[str, Any] | None], list[Finding]]
CAPABILITY_RULES = {"tools": "tools.capability-declared", "resources": "resources.capability-declared",
                    "prompts": "prompts.capability-declared"}


def counter_offer(run: LinkRun, request: TraceEvent, response: dict[str, Any] | None) -> list[Finding]:
    if response is None:
        return []
    version = (_result(response) or {}).get("protocolVersion")
    if version in LEGACY_VERSIONS:
        return []
    return [_finding(run, "lifecycle.server-counter-offers", "version",
                     f"initialize offering an unsupported version got {_said(response)} with version "
                     f"{version!r}, not a version the server supports", request.seq)]


def unsupported_version(run: LinkRun, request: TraceEvent, response: dict[str, Any] | None) -> list[Finding]:
    error = _error(response)
    if response is None or (error and error.get("code") == -32022
                            and isinstance((error.get("data") or {}).get("supported"), list)):
        return []
    return [_finding(run, "versioning.unsupported-version-error", "version",
                     f"a request naming version 1999-01-01 got {_said(response)}, not -32022 with "
                     "data.supported", request.seq)]


def meta_missing(run: LinkRun, request: TraceEvent, response: dict[str, Any] | None) -> list[Finding]:
    if response is None or _code(response) == -32602:
        return []
    return [_finding(run, "meta.missing-field-invalid-params", "lifecycle",
                     f"a request without _meta got {_said(response)}, not -32602", request.seq)]


def listing(run: LinkRun, request: TraceEvent, response: dict[str, Any] | None) -> list[Finding]:
    capability = next((m.split(":", 1)[1] for m in request.marks if m.startswith("capability:")), "")
    if "declared:yes" in request.marks and _code(response) == -32601:
        return [_finding(run, "check.declared-capability-served", "capabilities",
                         f"the server declares {capability} but refuses {request.method} as an unknown method",
                         request.seq)]
    result = _result(response)
    if "declared:no" in request.marks and result is not None and capability in CAPABILITY_RULES:
        items = [v for k, v in result.items() if isinstance(v, list) and v and k != "_meta"]
        if items:
            return [_finding(run, CAPABILITY_RULES[capability], "capabilities",
                             f"{request.method} lists {capability} the server never declared", request.seq)]
    return []


def subscription(run: LinkRun, request: TraceEvent, response: dict[str, Any] | None) -> list[Finding]:
    if _code(response) != -32601:
        return []
    return [_finding(run, "check.declared-capability-served", "capabilities",
                     f"the server declares resources.subscribe but refuses {request.method} as an unknown method",
                     request.seq)]


def bad_cursor(run: LinkRun, request: TraceEvent, response: dict[str, Any] | None) -> list[Finding]:
    if response is None or _code(response) == -32602:
        return []
    return [_finding(run, "pagination.invalid-cursor-32602", "errors",
                     f"a cursor the server never issued got {_said(response)}, not -32602", request.seq)]


def call(run: LinkRun, request: TraceEvent, response: dict[str, Any] | None) -> list[Finding]:
    if _code(response) == -32601:
        return [_finding(run, "check.declared-capability-served", "capabilities",
                         "tools/call of a listed tool was refused as an unknown method", request.seq)]
    return []


def invalid_arguments(run: LinkRun, request: TraceEvent, response: dict[str, Any] | None) -> list[Finding]:
    if response is None:
        return []
    if _error(response) is not None:
        return [] if _code(response) == -32602 else [_finding(
            run, "jsonrpc.standard-error-codes", "errors",
            f"a call without its required arguments got {_said(response)}, not -32602 (Invalid params)",
            request.seq)]
    if (_result(response) or {}).get("isError") is True:
        return []
    return [_finding(run, "tools.servers-validate-inputs", "errors",
                     "a call without its required arguments succeeded: the server did not validate "
                     "them against the tool's inputSchema", request.seq)]


def unknown_tool(run: LinkRun, request: TraceEvent, response: dict[str, Any] | None) -> list[Finding]:
    if response is None or _error(response) is not None:
        return []
    return [_finding(run, "tools.unknown-tool-protocol-error", "errors",
                     f"a call of a tool nobody has got {_said(response)}, not a JSON-RPC error", request.seq)]


def resource_not_found(run: LinkRun, request: TraceEvent, response: dict[str, Any] | None) -> list[Finding]:
    if response is None:
        return []
    modern = run.era == "modern"
    wanted = -32602 if modern else -32002
    if _code(response) == wanted:
        return []
    rule = "resources.not-found-modern" if modern else "resources.not-found-legacy"
    return [_finding(run, rule, "errors",
                     f"a read of a resource nobody has got {_said(response)}, not {wanted}", request.seq)]


def prompt_error(run: LinkRun, request: TraceEvent, response: dict[str, Any] | None) -> list[Finding]:
    if response is None or _code(response) == -32602:
        return []
    return [_finding(run, "check.prompts-standard-errors", "errors",
                     f"prompts/get with an unknown name or a missing required argument got {_said(response)}, "
                     "not -32602", request.seq)]


def method_not_found(run: LinkRun, request: TraceEvent, response: dict[str, Any] | None) -> list[Finding]:
    if response is None or _code(response) == -32601:
        return []
    return [_finding(run, "jsonrpc.standard-error-codes", "errors",
                     f"an unknown method got {_said(response)}, not -32601 (Method not found)", request.seq)]


def result(run: LinkRun, request: TraceEvent, response: dict[str, Any] | None) -> list[Finding]:
    if response is None or _result(response) is not None:
        return []
    if request.method == "ping":
        return [_finding(run, "check.ping-answered", "lifecycle", f"ping got {_said(response)}, not {{}}",
                         request.seq)]
    if request.method == "server/discover":
        return [_finding(run, "versioning.server-implements-discover", "lifecycle",
                         f"server/discover got {_said(response)}", request.seq)]
    return []


def malformed(run: LinkRun, request: TraceEvent, response: dict[str, Any] | None) -> list[Finding]:
    parse = "expect:parse-error" in request.marks
    if response is None:
        what = "an unreadable line" if parse else "a frame that is not a valid JSON-RPC request"
        return [_finding(run, "check.malformed-frame-answered", "robustness",
                         f"{what} got no error response", request.seq)]
    wanted = (-32700, -32600) if parse else (-32600,)
    if _error(response) is not None and (_code(response) in wanted or "utf8" in request.marks):
        return []  # a line that is not UTF-8 may be refused with any error: the code is not the point
    if _error(response) is None:
        return [_finding(run, "check.malformed-frame-answered", "robustness",
                         "an invalid frame was answered with a result, as if it were valid", request.seq)]
    return [_finding(run, "jsonrpc.standard-error-codes", "errors",
                     f"an invalid frame got {_said(response)}, not {' or '.join(map(str, wanted))}", request.seq)]


EXPECTATIONS: dict[str, Expectation] = {
    "expect:counter-offer": counter_offer, "expect:unsupported-version": unsupported_version,
    "expect:meta-missing": meta_missing, "expect:list": listing, "expect:subscription": subscription,
    "expect:bad-cursor": bad_cursor,
    "expect:call": call, "expect:invalid-arguments": invalid_arguments, "expect:unknown-tool": unknown_tool,
    "expect:resource-not-found": resource_not_found, "expect:prompt-error": prompt_error,
    "expect:method-not-found": method_not_found, "expect:result": result,
    "expect:parse-error": malformed, "expect:invalid-request": malformed,
    **tasks_checks.EXPECTATIONS,
}


def check_expectations(run: LinkRun) -> list[Finding]:
    """Every marked client frame on the link against its expectation; then what the link shows of
    each task's life and of each listen stream (:mod:`.tasks_checks`)."""
    out = tasks_checks.check_task_lives(run) + tasks_checks.check_listens(run)
    for e in run.events:
        if e.sender != f"client/{run.name}":
            continue
        for mark in e.marks:
            check = EXPECTATIONS.get(mark)
            if check is not None:
                answer = run.answer(e)
                out.extend(check(run, e, answer.message if answer is not None else None))
    return out
