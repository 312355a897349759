"""``mcp-sim check --url``: the same workload over real Streamable HTTP, against mcp-sim's own HTTP
server (``serve_http``, the bridge behind ``mcp-sim serve --transport http``) in both eras.

Every nemesis action but ``restart`` runs over HTTP (:mod:`mcp_sim.bridge.check.http_nemesis`: bodies
that are not JSON, not UTF-8 or a batch, a slow body, copies of an id in flight, a mebibyte, a hang-up
mid-call); the header and status probes of each era (:mod:`mcp_sim.bridge.check.http_probes`) run after
the workload. Slow: a real
socket and a real HTTP server (the last test reads a hand-made trace).
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from sim_server import build

from mcp_sim.bridge.check import CheckOptions, run_check
from mcp_sim.bridge.check.checkers import pair_responses
from mcp_sim.bridge.check.http_link import HTTP_NEMESIS
from mcp_sim.bridge.check.http_probes import check_http_probes
from mcp_sim.bridge.http_server import serve_http
from mcp_sim.trace.recorder import Recorder

pytestmark = pytest.mark.slow


def test_a_compliant_http_server_breaks_no_must_in_either_era() -> None:
    async def main() -> None:
        with anyio.fail_after(120):
            async with serve_http(build()) as handle:
                report, trace = await run_check(handle.url, CheckOptions(seed=2))
        musts = [f for f in report.findings if f.strength == "MUST"]
        assert musts == [], musts
        assert report.passed and set(report.nemesis) == set(HTTP_NEMESIS)
        assert set(HTTP_NEMESIS) == {"delay", "duplicate", "reuse", "malformed", "oversized", "hangup"}
        judged = {m for e in trace for m in e.marks if m.startswith("expect:http:")}
        assert {"expect:http:parse-error", "expect:http:invalid-request", "expect:http:batch",
                "expect:http:delayed", "expect:http:request", "expect:http:copy", "expect:http:oversized",
                "expect:http:hangup"} <= judged
        posts_by_seq = {e.seq: e for e in trace}
        answers = [(posts_by_seq[e.framing["http"]["post_seq"]], e.framing["http"].get("response", {}).get("status"))
                   for e in trace if (e.framing.get("http") or {}).get("post_seq") is not None]
        assert 400 in {status for _post, status in answers}
        # a bad body is refused with a 4xx, and so is a legacy copy of a used id: no POST meets a 5xx
        server_errors = [post for post, status in answers if isinstance(status, int) and status >= 500]
        assert server_errors == []
        copies = {p.seq for p, _status in answers if "expect:http:copy" in p.marks and p.link == "http-legacy"}
        assert copies and 400 in {status for p, status in answers if p.seq in copies}
        for era, summary in report.eras.items():
            assert summary.skipped is None, f"{era}: {summary.skipped}"
            assert summary.requests > 15
        posts = [e for e in trace if e.kind == "request" and e.transport == "http"]
        modern = [e for e in posts if e.link == "http-modern" and "nemesis:malformed" not in e.marks]
        assert modern and all(e.framing["http"]["request"]["headers"].get("Mcp-Method") == e.method
                              for e in modern)
        legacy = [e for e in posts if e.link == "http-legacy" and e.method != "initialize"]
        assert legacy and all("Mcp-Session-Id" in e.framing["http"]["request"]["headers"] for e in legacy)
        probes = {m for e in trace if e.link.endswith("-headers") for m in e.marks if m.startswith("expect:http:")}
        assert probes == {"expect:http:unsupported-version", "expect:http:header-mismatch",
                          "expect:http:unknown-method", "expect:http:origin", "expect:http:invalid-version",
                          "expect:http:missing-session", "expect:http:ended-session"}
        statuses = [(e.framing.get("http") or {}).get("response", {}).get("status") for e in trace
                    if e.link.endswith("-headers")]
        assert {400, 403, 404} <= set(statuses)

    anyio.run(main)


def test_a_wrong_status_for_a_probe_is_a_finding_at_the_rule_s_strength() -> None:
    recorder = Recorder()
    link = "http-modern-headers"
    recorder.record_message(link=link, sender=f"client/{link}", receiver=f"server/{link}", transport="http",
                            raw='{"jsonrpc":"2.0","id":4,"method":"server/discover","params":{}}',
                            marks=("expect:http:origin",))
    recorder.record_event(kind="transport", link=link, sender=f"server/{link}", receiver=f"client/{link}",
                          transport="http", text="HTTP 200", framing={"http": {"response": {"status": 200}}})
    recorder.record_message(link=link, sender=f"client/{link}", receiver=f"server/{link}", transport="http",
                            raw='{"jsonrpc":"2.0","id":5,"method":"nope","params":{}}',
                            marks=("expect:http:unknown-method",))
    recorder.record_message(link=link, sender=f"server/{link}", receiver=f"client/{link}", transport="http",
                            raw='{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"no"}}',
                            framing={"http": {"response": {"status": 404}}})
    findings = check_http_probes(pair_responses(link, "modern", list(recorder.events)))
    assert [(f.rule, f.strength, f.category, f.evidence["seq"]) for f in findings] == [
        ("http.origin-present-and-invalid-403", "MUST", "robustness", 1)]


def tasks_server() -> Any:
    """A simulated server whose first tool may run as a task (the tasks extension in 2026-07-28, the
    ``tasks`` capability in 2025-11-25)."""
    from mcp_sim.capabilities.context import Context
    from mcp_sim.roles.server import Server

    server = Server("tasks-over-http")

    @server.tool(task_support="optional")
    async def slow_compute(ctx: Context, seconds: float = 0.2) -> str:
        """Works for the given seconds; the server may run it as a task"""
        await ctx.sleep(seconds)
        return f"Computed after {seconds:g} seconds"

    return server


def test_tasks_run_over_http_in_both_eras() -> None:
    """The tasks workload over Streamable HTTP: a task created, polled to its end, its result fetched and a
    second one cancelled, in each era (in 2026-07-28 the link mirrors the task id in ``Mcp-Name``)."""

    async def main() -> None:
        with anyio.fail_after(120):
            async with serve_http(tasks_server()) as handle:
                report, trace = await run_check(handle.url, CheckOptions(seed=3, nemesis=()))
        assert [f for f in report.findings if f.strength == "MUST"] == []
        for link in ("http-legacy", "http-modern"):
            posts = [e for e in trace if e.link == link and e.kind == "request"]
            methods = {e.method for e in posts}
            assert {"tasks/get", "tasks/cancel"} <= methods, (link, sorted(m for m in methods if m))
            statuses = {(e.raw or "").split('"status":"')[1].split('"')[0] for e in trace
                        if e.link == link and e.kind == "response" and '"status":"' in (e.raw or "")}
            assert "completed" in statuses, (link, statuses)
            cancels = {json.loads(e.raw)["id"] for e in posts if e.method == "tasks/cancel"
                       and "expect:task-cancel" in e.marks}
            answers = [json.loads(e.raw) for e in trace if e.link == link and e.kind in ("response", "error")
                       and e.raw and json.loads(e.raw).get("id") in cancels]
            assert cancels and len(answers) == len(cancels) and all("result" in a for a in answers), (link, answers)
        server_errors = [e for e in trace if ((e.framing.get("http") or {}).get("response") or {}).get("status", 0) >= 500]
        assert server_errors == [], server_errors
        modern_gets = [e for e in trace if e.link == "http-modern" and e.kind == "request" and e.method == "tasks/get"]
        assert all(e.framing["http"]["request"]["headers"].get("Mcp-Name") == json.loads(e.raw)["params"]["taskId"]
                   for e in modern_gets)

    anyio.run(main)


def test_a_listen_over_http_is_acknowledged_then_closed() -> None:
    """2026-07-28 ``subscriptions/listen`` over Streamable HTTP: a POST whose SSE stream stays open; the
    acknowledgement arrives on it, and the cancel is the client closing that stream (no POST), whose marks
    land on no other frame."""
    from mcp_sim.scenarios import weather

    async def main() -> None:
        with anyio.fail_after(120):
            async with serve_http(weather.build()) as handle:
                report, trace = await run_check(handle.url, CheckOptions(seed=3, nemesis=(), eras=("modern",)))
        assert [f for f in report.findings if f.strength == "MUST"] == []
        modern = [e for e in trace if e.link == "http-modern"]
        listen = next(e for e in modern if e.kind == "request" and e.method == "subscriptions/listen")
        rid = json.loads(listen.raw)["id"]
        acks = [e for e in modern if e.method == "notifications/subscriptions/acknowledged"]
        assert acks and acks[0].seq > listen.seq
        closed = [e for e in modern if e.kind == "transport" and "cancelled" in e.marks and e.request_id == rid]
        assert closed and "closes the response stream" in (closed[0].text or "")
        assert not any("listen:close" in e.marks for e in modern), "a cancel that is no frame marked another one"

    anyio.run(main)
