"""The official MCP conformance suite's *client* scenarios against ``mcp-sim connect``.

For a client scenario, ``@modelcontextprotocol/conformance`` starts a small test server, runs a command
it is given with that server's URL as the last argument (the scenario's name, revision and any
arguments it wants used are in ``MCP_CONFORMANCE_*`` environment variables) and scores what the
client did on the wire. Here the command is ``mcp-sim connect --conformance-scenario NAME --url``
(:mod:`mcp_sim.bridge.conformance_client`): the simulator's ordinary client, driven by a scripted
user that lists, calls, reads and gets what the scenario's server offers.

Every client scenario the installed suite lists is accounted for: asserted (:data:`ASSERTED`, and the
authorization ones :data:`AUTH_ASSERTED`, where the client answers the test server's ``401`` with the
real-wire OAuth flow of :mod:`mcp_sim.bridge.oauth_http`), or listed in :data:`NOT_ASSERTED` with
the reason it cannot pass. Like ``tests/test_conformance.py``, the suite runs only when ``.ci/conformance.sh`` installed
it: without it these tests skip locally and fail in CI (``CI=true``). The last tests check the client
fixes the scenarios led to, in-process and over a scripted loopback server, with no Node at all.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_conformance import NODE, SUITE, _wrap, require_suite

from mcp_sim.bridge.conformance_client import placeholder_arguments, planned_calls
from mcp_sim.bridge.real import connect_real
from mcp_sim.roles.client.param_headers import annotation_problem, encode_value, param_headers

ROOT = Path(__file__).resolve().parent.parent

ASSERTED = (
    "initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry", "request-metadata",
    "sep-2322-client-request-state", "http-standard-headers", "http-custom-headers", "http-invalid-tool-headers",
    "json-schema-ref-no-deref", "json-schema-2020-12-preservation",
)
"""The client scenarios ``mcp-sim connect`` must pass, every check of them."""

AUTH_ASSERTED = (
    "auth/metadata-default", "auth/metadata-var1", "auth/metadata-var2", "auth/metadata-var3", "auth/basic-cimd",
    "auth/scope-from-www-authenticate", "auth/scope-from-scopes-supported", "auth/scope-omitted-when-undefined",
    "auth/scope-step-up", "auth/scope-retry-limit", "auth/token-endpoint-auth-basic", "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none", "auth/pre-registration", "auth/resource-mismatch", "auth/offline-access-scope",
    "auth/offline-access-not-supported", "auth/authorization-server-migration", "auth/iss-supported",
    "auth/iss-not-advertised", "auth/iss-supported-missing", "auth/iss-wrong-issuer", "auth/iss-unexpected",
    "auth/iss-normalized", "auth/metadata-issuer-mismatch", "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback", "auth/client-credentials-basic", "auth/client-credentials-jwt",
)
"""The authorization scenarios: discovery (2025-03-26's, without Protected Resource Metadata, too), registration,
scopes, token endpoint authentication, iss checks, and the client-credentials extension (a secret or a signed
JWT assertion, no user)."""

SKILLS = ("the skills extension (SEP-2640, io.modelcontextprotocol/skills) is outside every revision the "
          "simulator models: its client cannot send skills/list (no revision defines it) and there is no Host "
          "that loads skills and checks their files' digests, sizes and frontmatter")
ENTERPRISE = ("enterprise-managed authorization (SEP-990) is an extension outside the core spec: the client would "
              "trade the user's ID token at the enterprise identity provider for an identity assertion grant (RFC "
              "8693 token exchange) and present that at the MCP authorization server with the JWT bearer grant (RFC "
              "7523); the client has no identity-provider role and implements neither grant")
DPOP = ("DPoP (SEP-1932, RFC 9449) is an extension outside the core spec: the client would hold a key pair, sign a "
        "fresh proof JWT for every token request and every MCP request, answer use_dpop_nonce challenges from the "
        "authorization server and the MCP server, and send Authorization: DPoP; the client sends Bearer tokens only")
WIF = ("workload identity federation (SEP-1933) is an extension outside the core spec: the client would present a "
       "JWT its platform issued about the workload as an RFC 7523 jwt-bearer authorization grant; the client's "
       "grants are the authorization code (with a user) and client credentials (a secret or its own signed "
       "assertion, no user), not a third party's token")
NOT_ASSERTED = {
    "auth/enterprise-managed-authorization": ENTERPRISE,
    "auth/dpop": DPOP,
    "auth/dpop-nonce": DPOP,
    "auth/wif-jwt-bearer": WIF,
    "sep-2640-client-no-prefetch": SKILLS,
    "sep-2640-client-verify-digest": SKILLS,
    "sep-2640-client-verify-size": SKILLS,
    "sep-2640-client-verify-frontmatter": SKILLS,
}
"""Client scenarios that cannot pass, each with its reason: not run (they would only add minutes)."""

SCENARIO_RUN_S = 180
CLIENT_TIMEOUT_MS = 60000
PARALLEL = max(2, min(4, os.cpu_count() or 2))


def client_command() -> str:
    """What the suite runs (through a shell, with the server URL appended)."""
    return (f'"{sys.executable}" -m mcp_sim.cli connect --conformance-scenario "$MCP_CONFORMANCE_SCENARIO" '
            f"--url")


def listed_client_scenarios() -> list[str]:
    out = subprocess.run([str(NODE), str(SUITE), "list"], capture_output=True, text=True, timeout=60).stdout
    section = out.split("Client scenarios", 1)[1].split("\n\n", 1)[0]
    return re.findall(r"^\s+- (\S+)", section, flags=re.MULTILINE)


def run_client_scenario(name: str, results: Path) -> tuple[int, list[dict[str, Any]], str]:
    """One scenario: the suite's exit code, its checks, its output."""
    out = results / name.replace("/", "_")
    out.mkdir(parents=True)
    proc = subprocess.run([str(NODE), str(SUITE), "client", "--command", client_command(), "--scenario", name,
                           "--timeout", str(CLIENT_TIMEOUT_MS), "-o", str(out)],
                          capture_output=True, text=True, timeout=SCENARIO_RUN_S, cwd=ROOT)
    found = sorted(out.rglob("checks.json"))  # an auth/… scenario writes one folder deeper
    checks = json.loads(found[0].read_text()) if found else []
    return proc.returncode, checks, proc.stdout + proc.stderr


def failures(checks: list[dict[str, Any]], status: str = "FAILURE") -> list[str]:
    return [f"{c.get('id')}: {c.get('errorMessage') or c.get('status')}" for c in checks if c.get("status") == status]


@pytest.mark.slow
def test_official_client_scenarios_pass(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    require_suite()
    listed = listed_client_scenarios()
    asserted = ASSERTED + AUTH_ASSERTED
    unaccounted = sorted(set(listed) - set(asserted) - set(NOT_ASSERTED))
    assert not unaccounted, f"the suite lists client scenarios this test does not account for: {unaccounted}"
    assert set(asserted) <= set(listed), f"asserted scenarios the suite no longer lists: {set(asserted) - set(listed)}"

    started = time.monotonic()
    with ThreadPoolExecutor(PARALLEL) as pool:
        runs = dict(zip(asserted, pool.map(lambda n: run_client_scenario(n, tmp_path), asserted), strict=True))
    took = time.monotonic() - started

    def mark(name: str) -> str:
        code, checks, _ = runs[name]
        ok = any(c.get("status") == "SUCCESS" for c in checks) and not failures(checks) \
            and not failures(checks, "WARNING") and code == 0
        return ("✓" if ok else "✗") + "\u00a0" + name

    passed = [n for n in asserted if mark(n)[0] == "✓"]
    auth_passed = [n for n in AUTH_ASSERTED if n in passed]
    lines = [f"conformance client: {len(passed)}/{len(asserted)} scenarios pass ({took:.0f} s), of them "
             f"{len(auth_passed)}/{len(AUTH_ASSERTED)} authorization (auth/…) scenarios"]
    lines += _wrap([mark(n) for n in asserted], "  ")
    for reason in dict.fromkeys(NOT_ASSERTED.values()):
        names = sorted(n for n, r in NOT_ASSERTED.items() if r == reason)
        lines += _wrap([f"not run: {', '.join(names)}: {reason}"], "  ")
    with capsys.disabled():
        sys.stdout.write("\n" + "\n".join(lines) + "\n")

    failed = {}
    for name in asserted:
        code, checks, output = runs[name]
        problems = failures(checks) + failures(checks, "WARNING")
        if not checks:
            problems.append(f"no checks recorded:\n{output[-2000:]}")
        elif code != 0:
            problems.append(f"the suite exited with {code}:\n{output[-2000:]}")
        if problems:
            failed[name] = problems
    assert not failed, json.dumps(failed, indent=1)


# --- the adapter's scripted user (no Node) -------------------------------------------------------------


def test_the_scripted_user_fills_required_arguments_and_follows_the_suites_plan() -> None:
    schema = {"type": "object", "required": ["a", "b", "mode", "n"],
              "properties": {"a": {"type": "number"}, "b": {"type": "string", "default": "x"},
                             "mode": {"enum": ["fast", "slow"]}, "n": {"type": "integer"}, "opt": {"type": "string"}}}
    assert placeholder_arguments(schema) == {"a": 1, "b": "x", "mode": "fast", "n": 1}
    tools = [{"name": "t", "inputSchema": schema}, {"name": "json_schema_echo", "inputSchema": {}},
             {"name": "json_schema_2020_12_tool", "inputSchema": {"$defs": {"a": {}}, "additionalProperties": False}}]
    given = {"toolCalls": [{"name": "t", "arguments": {"a": 3}}, {"name": "not_listed", "arguments": {}}]}
    assert planned_calls("any", tools, given) == [("t", {"a": 3})]
    assert planned_calls("json-schema-2020-12-preservation", tools, None) == [
        ("json_schema_echo", {"schema": {"$defs": {"a": {}}, "additionalProperties": False}})]
    assert [name for name, _ in planned_calls("tools_call", tools, None)] == [t["name"] for t in tools]


def test_machine_credentials_come_only_from_a_context_without_an_issuer() -> None:
    from mcp_sim.bridge.conformance_client import machine_credentials

    secret = machine_credentials({"name": "auth/client-credentials-basic", "client_id": "c", "client_secret": "s"})
    assert secret is not None and secret.client_secret == "s" and secret.assertion is None
    assert machine_credentials({"client_id": "c", "client_secret": "s", "issuer": "http://localhost:1"}) is None
    assert machine_credentials({"client_id": "c"}) is None and machine_credentials({}) is None
    key = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
    signed = machine_credentials({"client_id": "c", "private_key_pem": key, "signing_algorithm": "ES256"})
    assert signed is not None and signed.client_secret is None and signed.assertion is not None


def test_a_conformance_scenario_needs_a_url(capsys: pytest.CaptureFixture[str]) -> None:
    from mcp_sim.bridge.commands import connect_command

    assert connect_command(["--conformance-scenario", "tools_call", "--", sys.executable, "-c", "pass"]) == 1
    assert "--conformance-scenario needs --url" in capsys.readouterr().err


# --- x-mcp-header: the rules, and the real client keeping them ------------------------------------------


def test_x_mcp_header_annotations_are_checked() -> None:
    def schema(**props: Any) -> dict[str, Any]:
        return {"type": "object", "properties": props}

    assert annotation_problem(schema(region={"type": "string", "x-mcp-header": "Region"},
                                     n={"type": "integer", "x-mcp-header": "N"}, q={"type": "number"})) is None
    bad = [schema(v={"type": "string", "x-mcp-header": ""}), schema(v={"type": "object", "x-mcp-header": "V"}),
           schema(v={"type": "number", "x-mcp-header": "V"}), schema(v={"type": "null", "x-mcp-header": "V"}),
           schema(a={"type": "string", "x-mcp-header": "Id"}, b={"type": "string", "x-mcp-header": "ID"}),
           schema(v={"type": "string", "x-mcp-header": "My Region"}),
           schema(v={"type": "string", "x-mcp-header": "Region:1"}),
           schema(v={"type": "string", "x-mcp-header": "Région"}),
           schema(v={"type": "string", "x-mcp-header": "Region\t1"})]
    assert all(annotation_problem(s) for s in bad)


def test_header_values_are_plain_or_base64_and_null_is_omitted() -> None:
    assert encode_value(True) == "true" and encode_value(False) == "false" and encode_value(42) == "42"
    assert encode_value("us west 1") == "us west 1" and encode_value("") == ""
    assert encode_value(" padded ") == "=?base64?IHBhZGRlZCA=?="
    assert encode_value("Hello, 世界") == "=?base64?SGVsbG8sIOS4lueVjA==?="
    assert encode_value("a\nb") == "=?base64?YQpi?=" and encode_value(None) is None
    names = {"region": "Region", "verbose": "Verbose", "method": "Method"}
    assert param_headers(names, {"region": "eu", "verbose": None, "method": "m", "q": "x"}) == {
        "Mcp-Param-Region": "eu", "Mcp-Param-Method": "m"}


class Scripted:
    """A loopback MCP server written by hand, just enough for one behaviour: it records every HTTP
    request (method, headers, body) and answers from ``answer(method, body)``."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.requests: list[tuple[str, dict[str, str], dict[str, Any], float]] = []

    @contextmanager
    def running(self) -> Iterator[str]:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length)) if length else {}
                outer.requests.append((self.command, dict(self.headers.items()), body, time.monotonic()))
                outer.answer(self, body)

            do_POST = do_GET = do_DELETE = _handle

            def log_message(self, format: str, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}/mcp"
        finally:
            server.shutdown()
            server.server_close()


def send_json(handler: BaseHTTPRequestHandler, status: int, payload: Any, **headers: str) -> None:
    data = json.dumps(payload).encode() if payload is not None else b""
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    for name, value in headers.items():
        handler.send_header(name.replace("_", "-"), value)
    handler.end_headers()
    handler.wfile.write(data)


MODERN = "2026-07-28"
ANNOTATED_TOOLS = [
    {"name": "route", "inputSchema": {"type": "object", "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"}, "note": {"type": "string", "x-mcp-header": "Note"},
        "debug": {"type": "boolean", "x-mcp-header": "Debug"}, "query": {"type": "string"}}}},
    {"name": "broken", "inputSchema": {"type": "object", "properties": {
        "score": {"type": "number", "x-mcp-header": "Score"}}}},
]


def modern_answer(handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
    results: dict[str, Any] = {
        "server/discover": {"resultType": "complete", "supportedVersions": [MODERN], "capabilities": {"tools": {}},
                            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "scripted", "version": "1"}}},
        "tools/list": {"resultType": "complete", "tools": ANNOTATED_TOOLS},
        "tools/call": {"resultType": "complete", "content": [{"type": "text", "text": "ok"}]},
    }
    send_json(handler, 200, {"jsonrpc": "2.0", "id": body.get("id"), "result": results[body["method"]]})


def test_the_real_client_leaves_out_badly_annotated_tools_and_mirrors_the_good_ones() -> None:
    scripted = Scripted(modern_answer)
    seen: dict[str, Any] = {}

    async def main() -> None:
        with anyio.fail_after(30):
            async with connect_real(url, era="modern") as session:
                seen["tools"] = [t["name"] for t in await session.client.list_all_tools()]
                await session.client.call_tool("route", {"region": "eu-west", "note": " spaced", "debug": None,
                                                         "query": "q"})
                seen["events"] = [e.text or "" for e in session.recorder.events]

    with scripted.running() as url:
        anyio.run(main)
    assert seen["tools"] == ["route"]
    assert any("leaves out tool 'broken'" in text for text in seen["events"])
    call_headers = next(h for _, h, b, _ in scripted.requests if b.get("method") == "tools/call")
    params = {k.lower(): v for k, v in call_headers.items() if k.lower().startswith("mcp-param-")}
    assert params == {"mcp-param-region": "eu-west", "mcp-param-note": "=?base64?IHNwYWNlZA==?="}


# --- a legacy stream closed before its answer: wait the retry, then poll with Last-Event-ID ----------

RETRY_MS = 300


def polling_answer(handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
    session = {"Mcp_Session_Id": "s-1"}
    if handler.command == "DELETE":
        send_json(handler, 200, None)
    elif handler.command == "GET" and not handler.headers.get("Last-Event-ID"):
        send_json(handler, 405, None)  # no stream for unrelated messages
    elif handler.command == "GET":
        answer = {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "polled"}]}}
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Connection", "close")
        handler.end_headers()
        handler.wfile.write(f"id: e2\nevent: message\ndata: {json.dumps(answer)}\n\n".encode())
        handler.close_connection = True
    elif body.get("method") == "initialize":
        send_json(handler, 200, {"jsonrpc": "2.0", "id": body["id"], "result": {
            "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
            "serverInfo": {"name": "scripted", "version": "1"}}}, **session)
    elif body.get("method") == "tools/call":
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Connection", "close")
        handler.send_header("Mcp-Session-Id", "s-1")
        handler.end_headers()
        handler.wfile.write(f"id: e1\nretry: {RETRY_MS}\ndata: \n\n".encode())
        handler.wfile.flush()
        handler.close_connection = True  # a graceful close, before the answer
    else:
        send_json(handler, 202, None, **session)


def test_a_legacy_stream_closed_before_its_answer_is_polled_after_the_retry() -> None:
    scripted = Scripted(polling_answer)
    seen: dict[str, Any] = {}

    async def main() -> None:
        with anyio.fail_after(30):
            async with connect_real(url, era="legacy") as session:
                seen["result"] = await session.client.call_tool("slow", {})

    with scripted.running() as url:
        anyio.run(main)
    assert seen["result"]["content"][0]["text"] == "polled"
    call_at = next(t for m, _, b, t in scripted.requests if b.get("method") == "tools/call")
    polls = [(h, t) for m, h, _, t in scripted.requests if m == "GET" and h.get("Last-Event-ID")]
    assert len(polls) == 1 and polls[0][0]["Last-Event-ID"] == "e1"
    assert polls[0][1] - call_at >= RETRY_MS / 1000 * 0.9


def test_a_modern_stream_that_ends_without_an_answer_fails_the_request_at_once() -> None:
    def answer(handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        if body.get("method") != "tools/call":
            modern_answer(handler, body)
            return
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Connection", "close")
        handler.end_headers()
        handler.wfile.write(b": nothing to say\n\n")
        handler.close_connection = True

    from mcp_sim.transports.base import RequestRefused

    scripted = Scripted(answer)
    caught: list[BaseException] = []

    async def main() -> None:
        with anyio.fail_after(20):
            async with connect_real(url, era="modern", timeout=15) as session:
                try:
                    await session.client.call_tool("route", {})
                except RequestRefused as exc:
                    caught.append(exc)

    with scripted.running() as url:
        started = time.monotonic()
        anyio.run(main)
    assert caught and "ended without a response" in str(caught[0])
    assert time.monotonic() - started < 10
