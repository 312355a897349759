"""The nemesis over Streamable HTTP (``mcp_sim.bridge.check.http_nemesis``) and the HTTP check zoo.

The zoo (``tests/check_zoo/http_*.py``) is one plain-Python HTTP server, the correct twin, and
variants with one defect each: each defect must be reported under its rule, category and strength,
with the exit status that strength calls for, and the twin must report nothing in either era under the
whole HTTP nemesis. The judges themselves are also held to hand-made traces: every compliant answer
to a bad body passes, and each wrong one is reported at its rule's strength. The zoo cases start real
servers (marked ``slow``); the trace cases are fast.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_sim.bridge.check import CheckOptions, check_trace, eras_of_links, run_check
from mcp_sim.bridge.check.checkers import pair_responses
from mcp_sim.bridge.check.http_link import HTTP_NEMESIS
from mcp_sim.bridge.check.http_nemesis import check_http_nemesis
from mcp_sim.bridge.check.nemesis import ACTIONS, PAUSES_MS, schedule
from mcp_sim.bridge.check.workloads import WORKLOADS
from mcp_sim.protocol import rulebook
from mcp_sim.trace.jsonl import load_jsonl, to_jsonl
from mcp_sim.trace.recorder import Recorder

ZOO = Path(__file__).parent / "check_zoo"

# zoo file -> (era, nemesis actions, rule, category, strength)
EXPECTED: dict[str, tuple[str, tuple[str, ...], str, str, str]] = {
    "http_crash_on_bad_json": ("modern", ("malformed",), "check.http-server-keeps-serving", "robustness", "MUST"),
    "http_500_on_bad_json": ("legacy", ("malformed",), "check.http-client-fault-4xx", "errors", "SHOULD"),
    "http_batch_answer": ("legacy", ("malformed",), "jsonrpc.batches-only-2025-03-26", "framing", "MUST"),
    "http_dies_after_hangup": ("modern", ("hangup",), "check.http-server-keeps-serving", "robustness", "MUST"),
}


@contextmanager
def zoo_server(name: str) -> Iterator[str]:
    """Start ``tests/check_zoo/<name>.py`` on a free loopback port; yield its URL."""
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    process = subprocess.Popen([sys.executable, str(ZOO / f"{name}.py"), "--port", str(port)])
    try:
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.kill()
        process.wait()


def test_every_zoo_file_is_expected_and_names_a_real_rule_at_its_strength() -> None:
    assert {p.stem for p in ZOO.glob("http_*.py")} == {*EXPECTED, "http_twin"}
    for _era, _nemesis, rule, _category, strength in EXPECTED.values():
        assert rulebook.get(rule).strength.startswith(strength)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_http_defect_is_reported_with_its_rule_category_and_strength(name: str, tmp_path: Path) -> None:
    era, nemesis, rule, category, strength = EXPECTED[name]
    with zoo_server(name) as url:
        report, trace = anyio.run(run_check, url, CheckOptions(eras=(era,), workload="lifecycle",  # type: ignore[arg-type]
                                                               nemesis=nemesis, deadline=2.0))
    seen = {(f.rule, f.category, f.strength) for f in report.findings}
    assert (rule, category, strength) in seen, f"{name}: found {sorted(seen)}"
    assert report.exit_code == (1 if strength == "MUST" else 0)
    # the checkers read only the trace: a saved one, checked again, gives the same findings
    path = tmp_path / "run.jsonl"
    to_jsonl(trace, path)
    saved = load_jsonl(path)
    again = check_trace(saved, eras_of_links(saved), deadline=2.0)
    assert sorted(again, key=repr) == sorted(report.findings, key=repr)


@pytest.mark.slow
def test_the_http_twin_reports_nothing_in_both_eras_under_the_whole_http_nemesis() -> None:
    with zoo_server("http_twin") as url:
        report, trace = anyio.run(run_check, url, CheckOptions(workload="lifecycle", seed=5, deadline=2.0))
    assert report.findings == [], report.findings
    assert report.passed and set(report.nemesis) == set(HTTP_NEMESIS)
    marks = {m for e in trace for m in e.marks}
    assert {"expect:http:parse-error", "expect:http:invalid-request", "expect:http:batch", "expect:http:delayed",
            "expect:http:copy", "expect:http:oversized", "expect:http:hangup", "nemesis:hung-up"} <= marks
    # the slow tool was still running when the client hung up: the twin dropped its answer
    hung = [e for e in trace if "nemesis:hung-up" in e.marks]
    assert {e.link for e in hung} == {"http-legacy", "http-modern"}
    delayed = [e for e in trace if "expect:http:delayed" in e.marks]
    assert delayed and all(len(e.framing["http"]["request"]["pieces"]) == 2 for e in delayed)


def test_the_same_seed_gives_the_same_http_schedule_with_its_pauses() -> None:
    steps = [name for name, _ in WORKLOADS["full"]]
    actions = tuple(a for a in ACTIONS if a in HTTP_NEMESIS)
    assert "restart" not in actions and {"delay", "malformed", "hangup"} <= set(actions)
    first = schedule(actions, steps, seed=7, era="modern")
    assert first == schedule(actions, steps, seed=7, era="modern")
    assert first[-1].action == "hangup" and first[-1].after == len(steps)
    described = [p.describe("modern", steps) for p in first if p.action == "delay"]
    pause = PAUSES_MS[next(p.variant for p in first if p.action == "delay")]
    assert described and f"pause {pause} ms" in described[0]
    others = {tuple(p.describe("modern", steps) for p in schedule(actions, steps, seed=s, era="modern"))
              for s in range(8, 16)}
    assert len(others) > 1


# --- the judges, on hand-made traces ---------------------------------------------------------------

LINK = "http-legacy"


def _judge(frames: list[tuple[str, tuple[str, ...], list[dict[str, Any]]]], *, era: str = "legacy",
           revision: str = "2025-11-25") -> list[tuple[str, str, str]]:
    """Record each (body, marks, answers) POST and judge it. An answer is ``{"status": …, "body": …}``
    (a JSON-RPC body), ``{"status": …, "text": …}`` (another body) or ``{"failed": …}``."""
    recorder = Recorder()
    client, server = f"client/{LINK}", f"server/{LINK}"
    recorder.record_message(link=LINK, sender=client, receiver=server, transport="http",
                            raw='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}')
    recorder.record_message(link=LINK, sender=server, receiver=client, transport="http",
                            raw=json.dumps({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": revision}}))
    for body, marks, answers in frames:
        sent = recorder.record_message(link=LINK, sender=client, receiver=server, transport="http", raw=body,
                                       marks=marks)
        assert sent is not None
        for answer in answers:
            framing: dict[str, Any] = {"post_seq": sent.seq}
            if "failed" in answer:
                recorder.record_event(kind="transport", link=LINK, sender=server, receiver=client, transport="http",
                                      text="HTTP request failed", framing={"http": {**framing, **answer}})
                continue
            framing["response"] = {"status": answer["status"]}
            if "body" in answer:
                recorder.record_message(link=LINK, sender=server, receiver=client, transport="http",
                                        raw=answer["body"], framing={"http": framing})
            else:
                recorder.record_event(kind="transport", link=LINK, sender=server, receiver=client, transport="http",
                                      text=f"HTTP {answer['status']}", framing={"http": framing})
    run = pair_responses(LINK, era, list(recorder.events))
    return [(f.rule, f.category, f.strength) for f in check_http_nemesis(run, deadline_ms=2000)]


BAD = ("{not json", ("nemesis:malformed", "expect:http:parse-error"))
PARSE = '{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}'


@pytest.mark.parametrize("answer", [{"status": 400, "text": ""}, {"status": 400, "body": PARSE},
                                    {"status": 200, "body": PARSE}, {"status": 413, "text": "too big"}],
                         ids=["400-bare", "400-with-32700", "200-with-32700", "another-4xx"])
def test_every_compliant_refusal_of_an_unreadable_body_passes(answer: dict[str, Any]) -> None:
    assert _judge([(*BAD, [answer])]) == []


@pytest.mark.parametrize(("answer", "finding"), [
    ({"status": 500, "text": "boom"}, ("check.http-client-fault-4xx", "errors", "SHOULD")),
    ({"status": 400, "body": '{"jsonrpc":"2.0","error":{"code":-32603,"message":"oops"}}'},
     ("jsonrpc.standard-error-codes", "errors", "MUST")),
    ({"status": 200, "body": '{"jsonrpc":"2.0","id":1,"result":{}}'},
     ("check.malformed-frame-answered", "robustness", "SHOULD")),
    ({"status": 202, "text": ""}, ("check.malformed-frame-answered", "robustness", "SHOULD")),
    ({"failed": "ReadTimeout"}, ("check.malformed-frame-answered", "robustness", "SHOULD")),
], ids=["500", "wrong-code", "a-result", "accepted", "silence"])
def test_each_wrong_answer_to_an_unreadable_body_is_reported_at_its_rule_s_strength(
        answer: dict[str, Any], finding: tuple[str, str, str]) -> None:
    assert _judge([(*BAD, [answer])]) == [finding]


def test_a_body_that_is_not_utf8_may_be_refused_with_any_error_code() -> None:
    wrong_code = {"status": 400, "body": '{"jsonrpc":"2.0","error":{"code":-32603,"message":"bad bytes"}}'}
    assert _judge([("\ufffd(", ("expect:http:parse-error", "utf8"), [wrong_code])]) == []


BATCH = ('[{"jsonrpc":"2.0","id":5,"method":"ping"}]', ("nemesis:malformed", "expect:http:batch"))
ANSWERED = {"status": 200, "body": '{"jsonrpc":"2.0","id":5,"result":{}}'}


def test_a_batch_is_refused_in_2025_11_25_and_valid_in_2025_03_26() -> None:
    assert _judge([(*BATCH, [ANSWERED])]) == [("jsonrpc.batches-only-2025-03-26", "framing", "MUST")]
    assert _judge([(*BATCH, [{"status": 202, "text": ""}])]) == [("jsonrpc.batches-only-2025-03-26", "framing",
                                                                  "MUST")]
    assert _judge([(*BATCH, [{"status": 400, "text": ""}])]) == []
    assert _judge([(*BATCH, [ANSWERED])], revision="2025-03-26") == []


def test_a_slow_body_read_as_a_whole_too_early_is_a_framing_finding() -> None:
    body = '{"jsonrpc":"2.0","id":9,"method":"ping","params":{}}'
    marks = ("nemesis:delay", "delay:200ms", "expect:http:delayed")
    assert _judge([(body, marks, [{"status": 200, "body": '{"jsonrpc":"2.0","id":9,"result":{}}'}])]) == []
    assert _judge([(body, marks, [{"status": 400, "body": PARSE}])]) == [("check.request-answered", "framing", "MUST")]
    assert _judge([(body, marks, [{"failed": "ReadTimeout"}])]) == [("check.request-answered", "timing", "MUST")]


def test_a_copy_in_flight_may_go_unanswered_or_refused_but_not_with_a_5xx() -> None:
    body = '{"jsonrpc":"2.0","id":3,"method":"ping","params":{}}'
    first = (body, ("nemesis:duplicate", "expect:http:request"), [ANSWERED | {"body": body.replace(
        '"method":"ping","params":{}', '"result":{}')}])
    copy = ("nemesis:duplicate", "duplicate", "expect:http:copy")
    assert _judge([first, (body, copy, [])]) == []
    assert _judge([first, (body, copy, [{"status": 409, "text": "id in use"}])]) == []
    assert _judge([first, (body, copy, [{"status": 500, "text": "boom"}])]) == [
        ("check.http-client-fault-4xx", "errors", "SHOULD")]
    oversized = (body, ("nemesis:oversized", "expect:http:oversized"), [{"status": 413, "text": ""}])
    assert _judge([oversized]) == []
    assert _judge([(body, ("expect:http:oversized",), [{"failed": "RemoteProtocolError"}])]) == [
        ("check.request-answered", "timing", "MUST")]
