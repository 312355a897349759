"""Header and status probes of Streamable HTTP, in each era (``mcp-sim check --url``), chapter 12.

Over HTTP part of the protocol lives outside the JSON body: the status code, and headers the server
must read and hold against the body. These probes post by hand (plain ``httpx``, so a header can be
wrong on purpose), record each exchange in the trace — the request as the client's frame, the answer
as the server's, with its status in the framing — and mark each request ``expect:http:<probe>``; the
checks at the bottom read those pairs back from the trace like every other checker.

* 2026-07-28: a version nobody supports (400 with -32022), an ``Mcp-Method`` header that disagrees
  with the body (400 with -32020), a method nobody implements (404 with -32601);
* legacy: a request naming an unsupported ``MCP-Protocol-Version`` (400), one without the session id
  the server issued (400, a SHOULD), and one with a session the client has ended by ``DELETE`` (404);
* both: a foreign ``Origin`` (403).
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from mcp_sim.bridge.check.checkers import LinkRun, _finding, client_of, server_of
from mcp_sim.bridge.check.findings import Category, Finding
from mcp_sim.bridge.check.session import UNSUPPORTED_VERSION, initialize_params, request_meta
from mcp_sim.bridge.recording import WallClockRecorder, stamp
from mcp_sim.transports import http as H

MODERN = "2026-07-28"
FOREIGN_ORIGIN = "http://mcp-sim-check.invalid"


async def _post(http: httpx.AsyncClient, url: str, recorder: WallClockRecorder, link: str, body: dict[str, Any],
                headers: dict[str, str], mark: str) -> httpx.Response | None:
    """POST one JSON body with exactly ``headers``; record both ends."""
    text = json.dumps(body, separators=(",", ":"))
    headers = {"Accept": H.ACCEPT_BOTH, "Content-Type": H.JSON, **headers}
    recorder.record_message(link=link, sender=client_of(link), receiver=server_of(link), raw=text, transport="http",
                            framing={"http": {"request": {"method": "POST", "url": url, "headers": headers}}},
                            marks=(mark,), t_ms=stamp(recorder))
    try:
        response = await http.post(url, content=text, headers=headers)
    except httpx.HTTPError as exc:
        recorder.record_event(kind="transport", link=link, sender=server_of(link), receiver=client_of(link),
                              transport="http", text=f"HTTP request failed: {exc}")
        return None
    raw = response.text
    if raw.startswith("event:") or raw.startswith("data:") or raw.startswith("id:"):
        raw = next((line[5:].strip() for line in raw.splitlines() if line.startswith("data:") and line[5:].strip()),
                   "")
    framing = {"http": {"response": {"status": response.status_code,
                                     "content_type": response.headers.get("content-type", "")}}}
    try:
        json.loads(raw)
        recorder.record_message(link=link, sender=server_of(link), receiver=client_of(link), raw=raw,
                                transport="http", framing=framing, t_ms=stamp(recorder))
    except ValueError:
        recorder.record_event(kind="transport", link=link, sender=server_of(link), receiver=client_of(link),
                              transport="http", framing=framing,
                              text=f"HTTP {response.status_code} {raw[:200]}".rstrip())
    return response


async def probe_modern(url: str, recorder: WallClockRecorder, link: str) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        def headers(method: str, version: str = MODERN) -> dict[str, str]:
            return {H.MCP_PROTOCOL_VERSION: version, "Mcp-Method": method}

        await _post(http, url, recorder, link, {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {
            "_meta": request_meta(UNSUPPORTED_VERSION)}}, headers("tools/list", UNSUPPORTED_VERSION),
            "expect:http:unsupported-version")
        await _post(http, url, recorder, link, {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {
            "_meta": request_meta()}}, headers("prompts/list"), "expect:http:header-mismatch")
        await _post(http, url, recorder, link, {"jsonrpc": "2.0", "id": 3, "method": "mcp-sim-check/no-such-method",
                                                "params": {"_meta": request_meta()}},
                    headers("mcp-sim-check/no-such-method"), "expect:http:unknown-method")
        await _post(http, url, recorder, link, {"jsonrpc": "2.0", "id": 4, "method": "server/discover",
                                                "params": {"_meta": request_meta()}},
                    {**headers("server/discover"), "Origin": FOREIGN_ORIGIN}, "expect:http:origin")


async def probe_legacy(url: str, recorder: WallClockRecorder, link: str) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        opened = await _post(http, url, recorder, link, {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                                         "params": initialize_params()}, {}, "opening")
        if opened is None or opened.status_code != 200:
            return
        session = opened.headers.get(H.MCP_SESSION_ID)
        version = {H.MCP_PROTOCOL_VERSION: "2025-11-25"}
        with_session = {**version, **({H.MCP_SESSION_ID: session} if session else {})}
        await _post(http, url, recorder, link, {"jsonrpc": "2.0", "method": "notifications/initialized"},
                    with_session, "expect:no-response")
        await _post(http, url, recorder, link, {"jsonrpc": "2.0", "id": 2, "method": "ping"},
                    {**with_session, H.MCP_PROTOCOL_VERSION: UNSUPPORTED_VERSION}, "expect:http:invalid-version")
        await _post(http, url, recorder, link, {"jsonrpc": "2.0", "id": 3, "method": "ping"},
                    {**with_session, "Origin": FOREIGN_ORIGIN}, "expect:http:origin")
        if not session:
            return
        await _post(http, url, recorder, link, {"jsonrpc": "2.0", "id": 4, "method": "ping"}, version,
                    "expect:http:missing-session")
        deleted = await http.delete(url, headers=with_session)
        recorder.record_event(kind="transport", link=link, sender=client_of(link), receiver=server_of(link),
                              transport="http", text=f"DELETE session → {deleted.status_code}")
        if deleted.is_success:
            await _post(http, url, recorder, link, {"jsonrpc": "2.0", "id": 5, "method": "ping"}, with_session,
                        "expect:http:ended-session")


# --- the checks: each probe's request against the answer recorded after it ---------------------------

_WANTED: dict[str, tuple[int, int | None, str, Category, str]] = {
    "expect:http:unsupported-version": (400, -32022, "http.modern.unsupported-version-400", "version",
                                        "a POST naming version 1999-01-01 in header and _meta"),
    "expect:http:header-mismatch": (400, -32020, "http.modern.header-mismatch-400", "framing",
                                    "a POST whose Mcp-Method header disagrees with its body"),
    "expect:http:unknown-method": (404, -32601, "http.modern.unknown-method-404", "errors",
                                   "a POST of a method nobody has"),
    "expect:http:origin": (403, None, "http.origin-present-and-invalid-403", "robustness",
                           "a POST with a foreign Origin"),
    "expect:http:invalid-version": (400, None, "http.legacy.invalid-version-400", "version",
                                    "a POST with an unsupported MCP-Protocol-Version header"),
    "expect:http:missing-session": (400, None, "http.legacy.missing-session-400", "lifecycle",
                                    "a POST without the Mcp-Session-Id the server issued"),
    "expect:http:ended-session": (404, None, "http.legacy.ended-session-404", "lifecycle",
                                  "a POST with a session the client ended by DELETE"),
}
"""probe mark → (status, JSON-RPC code or None, rule, category, what was sent)."""


def check_http_probes(run: LinkRun) -> list[Finding]:
    """Each ``expect:http:*`` request against the status (and JSON-RPC code) of the answer after it."""
    out = []
    events = run.events
    for index, e in enumerate(events):
        wanted = next((_WANTED[m] for m in e.marks if m in _WANTED), None)
        if wanted is None or e.sender != client_of(run.name):
            continue
        status, code, rule, category, what = wanted
        answer = next((a for a in events[index + 1:] if a.sender == server_of(run.name)
                       and "response" in (a.framing.get("http") or {})), None)
        if answer is None:
            continue  # no answer at all: the request failed, recorded as such
        got = answer.framing["http"]["response"].get("status")
        got_code = ((answer.message or {}).get("error") or {}).get("code") if isinstance(answer.message, dict) else None
        if got != status or (code is not None and got_code != code):
            expected = f"{status}" + (f" with {code}" if code is not None else "")
            shown = f"{got}" + (f" with {got_code}" if got_code is not None else "")
            out.append(_finding(run, rule, category, f"{what} got HTTP {shown}, not {expected}", e.seq,
                                response_seq=answer.seq))
    return out
