"""MCP authorization on the real wire: ``mcp-sim connect --url`` runs the OAuth flow against
``mcp-sim serve --auth-server builtin`` over loopback, and the endpoint applies the resource server's
rules (401 with the metadata and scope, 403 insufficient_scope, audience) on real HTTP.

The flow is the same :class:`~mcp_sim.security.oauth_client.OAuthClient` the simulated chapter runs;
here it goes over :class:`~mcp_sim.bridge.oauth_http.RealWeb` (httpx). The official conformance
suite's ``auth/…`` scenarios are in ``tests/test_conformance_client.py``.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sim_server import build, env_with_tests, serve_argv

from mcp_sim.bridge.commands import connect_command
from mcp_sim.bridge.http_auth import BuiltinAuthorization, builtin_authorization
from mcp_sim.bridge.http_server import HttpServerHandle, serve_http
from mcp_sim.bridge.oauth_http import LoopbackCallback, open_oauth, private_key_jwt, require_https_or_loopback
from mcp_sim.bridge.real import connect_real
from mcp_sim.bridge.recording import WallClockRecorder
from mcp_sim.security.identity import AuthInfo, User
from mcp_sim.security.oauth_client import OAuthFailed, within
from mcp_sim.trace.jsonl import load_jsonl
from mcp_sim.transports.base import RequestRefused

SCOPE = "notes:read"


def with_protected_endpoint(check: Callable[[HttpServerHandle, BuiltinAuthorization], Awaitable[None]],
                            scopes: tuple[str, ...] = (SCOPE,)) -> None:
    """Serve the test server with the built-in authorization server, run ``check``."""

    async def main() -> None:
        recorder = WallClockRecorder()
        setup, made = builtin_authorization(recorder, scopes)
        async with serve_http(build(), port=0, recorder=recorder, setup=setup) as handle:
            await check(handle, made[0])

    anyio.run(main)


# --- the guard and the resource rule (no network) ---------------------------------------------------------


@pytest.mark.parametrize("url", ["https://as.example.com/token", "http://localhost:9000/authorize",
                                 "http://127.0.0.1:8000/.well-known/oauth-authorization-server", "http://[::1]:80/x"])
def test_the_real_wire_guard_accepts_https_and_this_machine(url: str) -> None:
    require_https_or_loopback(url)


@pytest.mark.parametrize("url", ["http://as.example.com/token", "http://169.254.169.254/latest/meta-data",
                                 "ftp://127.0.0.1/x", "file:///etc/passwd", "https:///no-host"])
def test_the_real_wire_guard_refuses_plain_http_elsewhere(url: str) -> None:
    with pytest.raises(OAuthFailed) as refused:
        require_https_or_loopback(url)
    assert "https" in refused.value.rule


def test_a_resource_covers_its_own_url_and_the_urls_under_it() -> None:
    assert within("https://mcp.example.com/mcp", "https://mcp.example.com/mcp")
    assert within("https://mcp.example.com", "https://mcp.example.com/mcp")  # a root document
    assert within("https://mcp.example.com/tenant", "https://mcp.example.com/tenant/mcp")
    assert not within("https://mcp.example.com/mc", "https://mcp.example.com/mcp")  # not at a / boundary
    assert not within("https://evil.example.com/mcp", "https://mcp.example.com/mcp")
    assert not within("http://mcp.example.com/mcp", "https://mcp.example.com/mcp")


# --- the resource server's rules on real HTTP ------------------------------------------------------------


def test_the_endpoint_answers_401_403_and_checks_the_audience() -> None:
    async def check(handle: HttpServerHandle, auth: BuiltinAuthorization) -> None:
        origin = handle.url.rsplit("/mcp", 1)[0]
        metadata = f"{origin}/.well-known/oauth-protected-resource/mcp"
        table = auth.auth_server.tokens
        user = User("someone", "local")
        message = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}})

        async def post(token: str | None) -> httpx.Response:
            headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                       **({"Authorization": f"Bearer {token}"} if token else {})}
            return await http.post(handle.url, content=message, headers=headers)

        async with httpx.AsyncClient() as http:
            prm = await http.get(metadata)
            assert prm.status_code == 200 and prm.json() == {
                "resource": handle.url, "authorization_servers": [origin], "scopes_supported": [SCOPE],
                "bearer_methods_supported": ["header"]}
            bare = await post(None)
            assert bare.status_code == 401
            assert bare.headers["www-authenticate"] == f'Bearer resource_metadata="{metadata}", scope="{SCOPE}"'
            elsewhere = table.issue(user, client_id="c", audience="http://127.0.0.1:1/mcp", scopes=[SCOPE])
            wrong_audience = await post(elsewhere.value)  # a genuine token, for another server
            assert wrong_audience.status_code == 401
            assert wrong_audience.headers["www-authenticate"].startswith('Bearer error="invalid_token"')
            too_narrow = await post(table.issue(user, client_id="c", audience=handle.url, scopes=["other"]).value)
            assert too_narrow.status_code == 403
            assert too_narrow.headers["www-authenticate"] == (
                f'Bearer error="insufficient_scope", scope="{SCOPE}", resource_metadata="{metadata}"')
            served = await post(table.issue(user, client_id="c", audience=handle.url, scopes=[SCOPE]).value)
            assert served.status_code == 200 and "2025-11-25" in served.text

    with_protected_endpoint(check)


# --- the whole flow: mcp-sim connect against mcp-sim serve ------------------------------------------------


def _oauth_exchanges(trace_path: Path) -> list[tuple[str, str, int]]:
    """``(method, path, status)`` of each answered OAuth exchange in a saved trace, in order."""
    out = []
    for event in load_jsonl(trace_path).events:
        http = (event.framing or {}).get("http") or {}
        if "oauth" in event.marks and "response" in http:
            out.append((http["request"]["method"], http["request"]["path"].partition("?")[0],
                        http["response"]["status"]))
    return out


def test_connect_runs_the_oauth_flow_against_serve_with_the_builtin_server(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    proc = subprocess.Popen(serve_argv("--transport", "http", "--port", "0", "--auth-server", "builtin",
                                       "--required-scope", SCOPE),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env_with_tests())
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "127.0.0.1" in line, proc.stderr.read() if proc.stderr else line
        url = line.split()[-1]
        origin = url.rsplit("/mcp", 1)[0]
        assert f"built-in authorization server {origin}" in proc.stdout.readline()
        trace = tmp_path / "flow.jsonl"
        assert connect_command(["--url", url, "--no-browser", "--era", "legacy", "--trace", str(trace),
                                "--call", "shout", "--args", '{"text": "hi"}']) == 0
        out = capsys.readouterr().out
        assert "HI" in out and "registered dynamically (RFC 7591)" in out
        assert _oauth_exchanges(trace) == [
            ("GET", "/.well-known/oauth-protected-resource/mcp", 200),
            ("GET", "/.well-known/oauth-authorization-server", 200),
            ("POST", "/register", 201),
            ("GET", "/authorize", 302),
            ("POST", "/token", 200),
        ]
        events = load_jsonl(trace).events
        challenge = next(e for e in events if "auth" in e.marks)
        assert challenge.framing["http"]["response"]["headers"]["WWW-Authenticate"] == (
            f'Bearer resource_metadata="{origin}/.well-known/oauth-protected-resource/mcp", scope="{SCOPE}"')
        sent = [e.framing["http"]["request"]["headers"] for e in events
                if e.message is not None and (e.framing or {}).get("http", {}).get("request")]
        assert "Authorization" not in sent[0]  # the first initialize, refused with 401, then retried
        assert all(h.get("Authorization", "").startswith("Bearer ") for h in sent[1:])
        text = trace.read_text()
        assert "at_REDACTED" in text and "rt_REDACTED" in text  # the tokens never reach the saved trace
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)


def test_a_refusal_the_flow_cannot_resolve_ends_with_one_clear_error() -> None:
    """The endpoint rejects every token (as if the AS issued them for another audience): the client
    authorises, retries, tries once more, then fails the request — three POSTs, not a storm."""

    async def check(handle: HttpServerHandle, auth: BuiltinAuthorization) -> None:
        handle.endpoint.token_validator = lambda _token: None
        recorder = WallClockRecorder()
        refused = await _refusal(handle.url, recorder)
        assert "HTTP 401" in str(refused) and "authorization flow failed" not in str(refused)
        refusals = [e for e in handle.recorder.events if e.text and e.text.startswith("refused a request without")]
        assert len(refusals) == 3  # the first try and two retries, each after a flow (or a refresh)
        flows = [e for e in recorder.events if "auth" in e.marks and "run the authorization flow" in (e.text or "")]
        assert len(flows) == 2

    with_protected_endpoint(check)


def test_a_step_up_the_token_already_covers_is_refused_at_once() -> None:
    """A ``403 insufficient_scope`` for scopes the token already carries: asking again cannot help."""

    async def check(handle: HttpServerHandle, auth: BuiltinAuthorization) -> None:
        handle.endpoint.required_scopes = (SCOPE,)
        # The endpoint sees every genuine token as scope-less, so no token will ever be enough.
        handle.endpoint.token_validator = lambda token: None if auth.validate(token) is None else \
            AuthInfo("someone", scopes=())
        recorder = WallClockRecorder()
        refused = await _refusal(handle.url, recorder)
        assert "HTTP 403" in str(refused) and "although the token carries it" in str(refused)
        authorizations = [e for e in recorder.events if "oauth" in e.marks and e.text.startswith("GET")
                          and "/authorize?" in e.text]
        assert len(authorizations) == 1

    with_protected_endpoint(check)


async def _refusal(url: str, recorder: WallClockRecorder) -> RequestRefused:
    """Connect with the OAuth flow and list the tools; return the refusal that stopped it."""
    try:
        async with open_oauth(url, recorder=recorder, interactive=False) as oauth, \
                connect_real(url, era="legacy", recorder=recorder, timeout=10,
                             authorizer=oauth.on_challenge) as session:
            await session.client.list_all_tools()
    except BaseException as exc:  # the task groups wrap it: find it inside
        found = exc
        while isinstance(found, BaseExceptionGroup):
            found = found.exceptions[0]
        assert isinstance(found, RequestRefused), found
        return found
    raise AssertionError("the connection succeeded")


def test_the_loopback_callback_returns_where_the_browser_came_back() -> None:
    async def main() -> str:
        callback = LoopbackCallback("http://127.0.0.1:33419/callback", wait_s=10)
        arrived: list[str] = []

        async def wait() -> None:
            arrived.append(await callback("https://as.example.com/authorize?x=1"))

        async with anyio.create_task_group() as tg:
            tg.start_soon(wait)
            async with httpx.AsyncClient() as http:
                for _ in range(50):
                    try:
                        page = await http.get("http://127.0.0.1:33419/callback?code=abc&state=s1")
                        break
                    except httpx.ConnectError:
                        await anyio.sleep(0.05)
                assert page.status_code == 200 and "Authorised" in page.text
        return arrived[0]

    assert anyio.run(main) == "http://127.0.0.1:33419/callback?code=abc&state=s1"



# --- the official SDK's OAuth client against the same server -------------------------------------------


def test_the_official_sdk_client_authorizes_against_the_builtin_server() -> None:
    """The ``mcp`` SDK's own OAuth provider does the flow against ``serve_http`` with the built-in
    authorization server: discovery, registration, PKCE, the token, then the MCP calls."""
    httpx2 = pytest.importorskip("httpx2")
    from mcp import Client as SdkClient
    from mcp.client.auth import OAuthClientProvider
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.auth import (
        AuthorizationCodeResult,
        OAuthClientInformationFull,
        OAuthClientMetadata,
        OAuthToken,
    )

    class Memory:
        tokens: OAuthToken | None = None
        info: OAuthClientInformationFull | None = None

        async def get_tokens(self) -> OAuthToken | None:
            return self.tokens

        async def set_tokens(self, tokens: OAuthToken) -> None:
            self.tokens = tokens

        async def get_client_info(self) -> OAuthClientInformationFull | None:
            return self.info

        async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
            self.info = client_info

    async def check(handle: HttpServerHandle, auth: BuiltinAuthorization) -> None:
        came_back: list[str] = []

        async def browser(url: str) -> None:  # the AS redirects straight back: read where to
            async with httpx.AsyncClient() as http:
                came_back.append((await http.get(url)).headers["location"])

        async def callback() -> AuthorizationCodeResult:
            query = dict(httpx.URL(came_back[-1]).params)
            return AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))

        metadata = OAuthClientMetadata(client_name="sdk", redirect_uris=["http://127.0.0.1:33420/callback"],
                                       grant_types=["authorization_code", "refresh_token"], response_types=["code"],
                                       token_endpoint_auth_method="none", scope=SCOPE)
        provider = OAuthClientProvider(handle.url, metadata, Memory(), redirect_handler=browser,
                                       callback_handler=callback)
        with anyio.fail_after(30):
            async with httpx2.AsyncClient(auth=provider) as http, \
                    SdkClient(streamable_http_client(handle.url, http_client=http), mode="legacy") as client:
                listed = await client.list_tools()
                assert "shout" in [tool.name for tool in listed.tools]
        issued = auth.auth_server.tokens.issued.values()
        assert [t.audience for t in issued] == [handle.url] and all(SCOPE in t.scopes for t in issued)

    with_protected_endpoint(check)


def test_a_malformed_registration_answer_is_one_clear_error() -> None:
    """The authorization server answers registration with something that is not JSON: the request
    fails with the reason instead of the client crashing."""

    async def check(handle: HttpServerHandle, auth: BuiltinAuthorization) -> None:
        real_serve = auth.auth_server.serve

        def broken(request: Any) -> Any:
            answer = real_serve(request)
            if request.path.startswith("/register"):
                answer.body = "<html>oops</html>"
            return answer

        auth.auth_server.serve = broken  # type: ignore[method-assign]
        refused = await _refusal(handle.url, WallClockRecorder())
        assert "HTTP 401" in str(refused) and "JSONDecodeError" in str(refused)

    with_protected_endpoint(check)


def test_a_private_key_jwt_assertion_names_the_client_and_the_authorization_server() -> None:
    """RFC 7523 §2.2 / §3: ``iss`` and ``sub`` are the client, ``aud`` the authorization server, a
    short life and a fresh ``jti``; the public key verifies it (the private key never leaves)."""
    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    sign = private_key_jwt("svc", pem)
    first, second = sign("https://as.example.com"), sign("https://as.example.com")
    claims = jwt.decode(first, key.public_key(), algorithms=["ES256"], audience="https://as.example.com")
    assert claims["iss"] == claims["sub"] == "svc" and 0 < claims["exp"] - claims["iat"] <= 300
    assert jwt.decode(second, key.public_key(), algorithms=["ES256"], audience="https://as.example.com")["jti"] != \
        claims["jti"]
    with pytest.raises(jwt.InvalidAudienceError):
        jwt.decode(first, key.public_key(), algorithms=["ES256"], audience="https://other.example.com")


def test_connect_client_credentials_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--client-credentials`` needs the client's id and a secret or a key; with a key the secret is
    never used, and the credentials are bound to ``--issuer``."""
    from mcp_sim.bridge.commands import _machine_credentials, connect_parser

    url = "http://127.0.0.1:9/mcp"
    assert connect_command(["--url", url, "--client-credentials", "--client-id", "svc", "--issuer", url]) == 1
    assert "--client-credentials needs" in capsys.readouterr().err
    key = tmp_path / "key.pem"
    key.write_text(ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode())
    args = connect_parser().parse_args(["--url", url, "--client-credentials", "--client-id", "svc", "--issuer",
                                        "http://127.0.0.1:9", "--client-secret", "s", "--private-key", str(key)])
    machine = _machine_credentials(args)
    assert machine.client_id == "svc" and machine.issuer == "http://127.0.0.1:9" and machine.client_secret is None
    assert jwt.decode(machine.assertion("http://127.0.0.1:9"), options={"verify_signature": False})["sub"] == "svc"
    args = connect_parser().parse_args(["--url", url, "--client-credentials", "--client-id", "svc", "--issuer",
                                        "http://127.0.0.1:9", "--client-secret", "s"])
    assert _machine_credentials(args).client_secret == "s" and _machine_credentials(args).assertion is None


def test_a_2025_03_26_server_on_the_real_wire_is_announced_on_stderr_and_in_the_trace(
        capsys: pytest.CaptureFixture[str]) -> None:
    """A loopback server with no metadata at all: the client says it follows 2025-03-26, uses the
    default endpoints at the origin with PKCE S256, and gets its token."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from urllib.parse import parse_qs, urlencode, urlsplit

    from mcp_sim.transports.http import Headers, HttpResponse

    seen: list[tuple[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def _answer(self, status: int, body: dict[str, Any] | None = None, **headers: str) -> None:
            data = json.dumps(body).encode() if body is not None else b""
            self.send_response(status)
            for name, value in {"Content-Type": "application/json", "Content-Length": str(len(data)), **headers}.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            seen.append(("GET", self.path))
            if self.path.startswith("/authorize?"):
                query = {k: v[0] for k, v in parse_qs(urlsplit(self.path).query).items()}
                assert query["code_challenge_method"] == "S256" and query["code_challenge"]
                back = urlencode({"code": "c1", "state": query["state"]})
                self._answer(302, Location=f"{query['redirect_uri']}?{back}")
            else:
                self._answer(404)

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            seen.append(("POST", self.path))
            if self.path == "/register":
                self._answer(201, {"client_id": "old-client"})
            else:
                self._answer(200, {"access_token": "t1", "token_type": "Bearer", "expires_in": 60})

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"

    async def main() -> tuple[str, WallClockRecorder]:
        recorder = WallClockRecorder()
        async with open_oauth(f"{base}/mcp", recorder=recorder, interactive=False) as oauth:
            return await oauth.on_challenge(HttpResponse(401, Headers({"WWW-Authenticate": "Bearer"}))), recorder

    try:
        token, recorder = anyio.run(main)
    finally:
        server.shutdown()
        server.server_close()
    assert token == "t1"
    assert [(m, p.partition("?")[0]) for m, p in seen] == [
        ("GET", "/.well-known/oauth-protected-resource/mcp"), ("GET", "/.well-known/oauth-protected-resource"),
        ("GET", "/.well-known/oauth-authorization-server"), ("POST", "/register"), ("GET", "/authorize"),
        ("POST", "/token")]
    err = capsys.readouterr().err
    assert f"following 2025-03-26, the MCP server's origin {base} is the authorization server" in err
    assert "default endpoints" in err
    logs = [e.text for e in recorder.events if e.kind == "log"]
    assert len(logs) == 2 and all(line and "2025-03-26" in line for line in logs)
