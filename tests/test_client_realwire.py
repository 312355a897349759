"""The simulator's client against real peers over the real wire: loopback HTTP servers that refuse,
real stdio servers pinned to older revisions, task-augmented tool calls, and elicitation answers
that keep to the requested schema."""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mcp_sim.bridge.real import connect_real
from mcp_sim.transports.base import RequestRefused

# --- 1. an HTTP layer that refuses: one request, one clear error -------------------------------------


class Refusing:
    """A loopback HTTP server that answers every request with ``status`` and an OAuth-style JSON body
    (not a JSON-RPC message), counting what it was sent."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        self.status = status
        self.body = json.dumps(body).encode()
        self.requests: list[tuple[str, bytes]] = []

    @contextmanager
    def running(self) -> Iterator[str]:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                outer.requests.append((self.command, self.rfile.read(length) if length else b""))
                self.send_response(outer.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(outer.body)))
                if outer.status == 401:
                    self.send_header("WWW-Authenticate", 'Bearer error="invalid_token"')
                self.end_headers()
                self.wfile.write(outer.body)

            do_POST = do_GET = do_DELETE = _answer

            def log_message(self, format: str, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}/mcp"
        finally:
            server.shutdown()
            server.server_close()

    @property
    def posts(self) -> list[dict[str, Any]]:
        return [json.loads(body) for command, body in self.requests if command == "POST"]


def leaves(group: BaseExceptionGroup[Any]) -> list[Any]:
    """The exceptions inside a (nested) exception group."""
    out: list[Any] = []
    for exc in group.exceptions:
        out.extend(leaves(exc) if isinstance(exc, BaseExceptionGroup) else [exc])
    return out


REFUSALS = [
    (401, {"error": "invalid_token", "error_description": "the token expired"}, "HTTP 401: invalid_token"),
    (403, {"error": "insufficient_scope"}, "HTTP 403: insufficient_scope"),
    (500, {"message": "upstream unavailable"}, "HTTP 500: upstream unavailable"),
]


@pytest.mark.parametrize("era", ["auto", "legacy", "modern"])
@pytest.mark.parametrize(("status", "body", "said"), REFUSALS)
def test_an_http_refusal_is_one_request_and_one_clear_error(era: str, status: int, body: dict[str, Any],
                                                            said: str) -> None:
    refusing = Refusing(status, body)

    caught: list[RequestRefused] = []

    async def main() -> None:
        with anyio.fail_after(10):
            try:
                async with connect_real(url, era=era, probe_timeout=5.0):  # type: ignore[arg-type]
                    pass
            except* RequestRefused as group:
                caught.extend(leaves(group))

    with refusing.running() as url:
        started = time.monotonic()
        anyio.run(main)
        took = time.monotonic() - started
    assert len(caught) == 1 and said in str(caught[0]) and caught[0].status == status
    first = {"auto": "server/discover", "modern": "server/discover", "legacy": "initialize"}[era]
    assert [m.get("method") for m in refusing.posts] == [first]  # exactly one request, never answered
    assert took < 2.0  # the probe did not wait out its 5 s


# --- 2. older revisions: accepted, and kept to -------------------------------------------------------


def client_messages(events: list[Any]) -> list[dict[str, Any]]:
    return [e.message for e in events if e.message is not None and e.sender.startswith("client/")]


@pytest.mark.parametrize("revision", ["2024-11-05", "2025-03-26"])
def test_a_server_pinned_to_an_older_revision_is_accepted_and_its_rules_kept(revision: str) -> None:
    """``mcp-sim serve --revision`` over a real pipe answers ``initialize`` with an older revision: the
    client accepts it, declares only what that revision defines (no elicitation before 2025-06-18), so
    the server never asks, and every message the client sends is valid for that revision's schema."""
    from sim_server import env_with_tests, serve_argv

    from mcp_sim.protocol.schema import find_spec_dir, schema_errors

    seen: dict[str, Any] = {}

    async def main() -> None:
        with anyio.fail_after(30):
            async with connect_real(serve_argv("--revision", revision), env=env_with_tests(),
                                    probe_timeout=5.0) as session:
                client = session.client
                seen["version"] = client.protocol_version
                seen["era"] = client.era
                seen["tools"] = {t["name"] for t in await client.list_all_tools()}
                seen["forecast"] = await client.call_tool("get_forecast", {"city": "Oslo"})
                seen["confirm"] = await client.call_tool("confirm_delete", {"name": "draft"})
        seen["events"] = list(session.recorder.events)

    anyio.run(main)
    assert (seen["era"], seen["version"]) == ("legacy", revision)
    assert {"get_forecast", "confirm_delete"} <= seen["tools"]
    assert "Oslo" in seen["forecast"]["content"][0]["text"]
    sent = client_messages(seen["events"])
    initialize = next(m for m in sent if m.get("method") == "initialize")
    assert initialize["params"]["protocolVersion"] == "2025-11-25"  # offered: the newest; answered: older
    # After negotiation the client keeps to the older revision: it has no elicitation, so the user is
    # never asked and no ElicitResult goes back, whatever the server tries.
    assert not any("action" in (m.get("result") or {}) for m in sent)
    assert "kept draft" in seen["confirm"]["content"][0]["text"] or seen["confirm"].get("isError")
    if find_spec_dir() is not None:
        for message in sent:
            if message.get("method") in ("server/discover", "initialize"):
                continue  # the probe (2026-07-28 by design) and the offer (the newest legacy revision)
            assert schema_errors(message, revision, "JSONRPCMessage") == [], message
