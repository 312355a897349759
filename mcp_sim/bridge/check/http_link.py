"""The checker's end of a real Streamable HTTP endpoint (``mcp-sim check --url``), chapter 12.

Over HTTP each message is one POST, and the era's headers (``MCP-Protocol-Version``, ``Mcp-Method``
and ``Mcp-Name`` in 2026-07-28; ``Mcp-Session-Id`` in a legacy session) are part of speaking
correctly, so an :class:`HttpProbeLink` hands each frame of the workload to the bridge's own
:class:`~mcp_sim.bridge.http_client.HttpClientStream`, which sets them, reads a JSON or SSE answer
and records both ends, exactly as ``mcp-sim connect --url`` does. The workload, the marks and the
checkers are the stdio ones.

The nemesis needs what that stream cannot do: post bytes that are no JSON-RPC message, send a body
slowly, hang up a POST mid-call. :meth:`HttpProbeLink.post_raw` does it on a client of its own,
with the headers the session's stream would have set, and records the body as the client's frame
and each thing that came back — a JSON-RPC body, a status without one, a failure — as the server's,
with ``framing["http"]["post_seq"]`` naming the frame it answers: HTTP pairs each answer with its
POST, so the checkers (:mod:`.http_nemesis`) need no guessing by id.

A request the stream could not deliver at all (the server refused the connection, or dropped it) is
recorded too (``check:http-refused``); when nobody listens any more (``check:http-down``) the link
counts as dead, like a stdio process that ended, and sends nothing more. There is no process to
kill: ``restart`` is stdio's only (``mcp-sim check --url`` did not start the server). The 2026-07-28
version probes of the stdio workload are left out too: over HTTP the version travels in headers as
well, and :mod:`mcp_sim.bridge.check.http_probes` probes it there, with the statuses of each era.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from typing import Any, Final, cast

import anyio
import httpx

from mcp_sim.bridge.check.link import ProbeLink, _key
from mcp_sim.bridge.http_client import HttpClientStream, is_jsonrpc_answer, open_http
from mcp_sim.bridge.recording import stamp
from mcp_sim.trace.event import TraceEvent
from mcp_sim.trace.recorder import Recorder
from mcp_sim.transports import http as H
from mcp_sim.transports.base import MessageStream, RequestRefused
from mcp_sim.transports.sse import SseParser
from mcp_sim.wire.jsonrpc import InvalidMessage, JSONRPCMessage, decode, parse_object

HTTP_NEMESIS: Final = ("delay", "duplicate", "reuse", "malformed", "oversized", "hangup")
"""The nemesis actions that work over HTTP: all but ``restart`` (see the module docstring)."""

REFUSED_MARK = "check:http-refused"
DOWN_MARK = "check:http-down"


class _Noting:
    """The session's stream, with each refused request recorded before the link's reader skips it."""

    def __init__(self, stream: HttpClientStream, link: HttpProbeLink) -> None:
        self._stream = stream
        self._link = link

    async def receive(self) -> JSONRPCMessage | InvalidMessage:
        try:
            return await self._stream.receive()
        except RequestRefused as refused:
            self._link.note_refused(refused)
            raise

    async def send(self, message: JSONRPCMessage) -> None:
        await self._stream.send(message)


class HttpProbeLink(ProbeLink):
    """A :class:`ProbeLink` over Streamable HTTP: one session (legacy) or none (modern) per link."""

    transport = "http"

    def __init__(self, url: str, recorder: Recorder, name: str, *, deadline: float,
                 revision: str | None = None) -> None:
        super().__init__([url], recorder, name, deadline=deadline, revision=revision)
        self.url = url
        self._http: HttpClientStream | None = None
        self._raw: httpx.AsyncClient | None = None
        self._down = False

    async def start(self) -> None:
        stack = AsyncExitStack()
        self._http = await stack.enter_async_context(
            open_http(self.url, name=self.name, recorder=self.recorder, timeout=self.deadline + 5))
        self._raw = await stack.enter_async_context(httpx.AsyncClient(timeout=httpx.Timeout(self.deadline)))
        group = await stack.enter_async_context(anyio.create_task_group())
        stack.callback(group.cancel_scope.cancel)
        group.start_soon(self._serve_server_requests, cast(MessageStream, _Noting(self._http, self)))
        self._stack = stack

    async def stop(self) -> None:
        stack, self._stack = self._stack, None
        if stack is not None:
            await stack.aclose()
        self._http = self._raw = None

    async def kill(self) -> None:
        """There is no process to kill over HTTP: the link is closed and opened again."""
        await self.stop()

    @property
    def alive(self) -> bool:
        return self._stack is not None and not self._down

    def note_death(self) -> None:
        """A server behind a URL is not this checker's process: its death shows as refused requests."""

    def note_refused(self, refused: RequestRefused) -> None:
        """Record a request the session's stream could not deliver; a refused connection means nobody
        listens any more. A refusal also ends the wait for that request's answer."""
        down = "ConnectError" in str(refused)
        event = self._record_server(f"check: {refused}", framing={"http": {"refused": {
            "id": refused.request_id, "status": refused.status}}},
            marks=(REFUSED_MARK, DOWN_MARK) if down else (REFUSED_MARK,))
        if event is not None:
            self._responses.setdefault(_key(refused.request_id), []).append(event)
        self._down = self._down or down

    def _record_server(self, text: str, *, framing: dict[str, Any], marks: tuple[str, ...] = ()) -> TraceEvent | None:
        return self.recorder.record_event(kind="transport", link=self.name, sender=f"server/{self.name}",
                                          receiver=f"client/{self.name}", transport="http", text=text,
                                          framing=framing, marks=marks)

    async def send_line(self, text: str, *marks: str) -> TraceEvent | None:
        decoded = decode(text)
        if self._http is None or self._down or isinstance(decoded, InvalidMessage) or not isinstance(decoded, tuple):
            return None  # only JSON-RPC messages can be posted through the client stream
        if not self._http.cancels_by_closing(decoded):
            # (a cancel the stream does not post, hanging the request's POST up instead, makes no frame
            # for the marks, which would otherwise land on the next one)
            self.recorder.mark_next(*marks)
        try:
            await self._http.send(decoded)
        except Exception:
            return None
        return self.recorder.events[-1]

    async def send_bytes(self, data: bytes, *marks: str) -> TraceEvent | None:
        return await self.post_raw(data, *marks)

    async def send_split(self, text: str, cut: int, pause: float, *marks: str) -> TraceEvent | None:
        return await self.post_raw(text.encode("utf-8"), *marks, cut=cut, pause=pause)

    # -- raw POSTs (the nemesis) ---------------------------------------------------------------------
    def headers_like(self, like: dict[str, Any] | None) -> dict[str, str]:
        """The headers the session's stream would put on the POST of the message ``like`` (the one a
        raw body pretends to be): the session id and version (legacy), the method headers (modern)."""
        assert self._http is not None
        message = parse_object(like or {"jsonrpc": "2.0", "method": "notifications/mcp-sim-check"})
        if isinstance(message, InvalidMessage):
            message = parse_object({"jsonrpc": "2.0", "method": "notifications/mcp-sim-check"})
        return self._http.headers_for(message)  # type: ignore[arg-type]

    async def post_raw(self, body: bytes, *marks: str, like: dict[str, Any] | None = None, cut: int | None = None,
                       pause: float = 0.0, hang_up_after: float | None = None) -> TraceEvent | None:
        """POST ``body`` as it is, with the headers of ``like``; record it and what came back.

        ``cut``: send the body in two pieces, ``pause`` seconds apart (chunked). ``hang_up_after``:
        close the connection that many seconds after the body is sent, on a client of its own, with
        whatever the server was doing for it still in flight. Returns the frame's event."""
        if self._http is None or self._raw is None or self._down:
            return None
        headers = self.headers_like(like)
        pieces = [body] if cut is None else [body[:max(1, min(cut, len(body) - 1))],
                                             body[max(1, min(cut, len(body) - 1)):]]
        framing: dict[str, Any] = {"request": {"method": "POST", "url": self.url,
                                               "headers": H.shown_headers(headers), "bytes": len(body)}}
        if cut is not None:
            framing["request"]["pieces"] = [len(p) for p in pieces]
        event = self.recorder.record_message(
            link=self.name, sender=f"client/{self.name}", receiver=f"server/{self.name}",
            raw=body.decode("utf-8", errors="replace"), revision=self.revision, transport="http",
            framing={"http": framing}, marks=marks, t_ms=stamp(self.recorder))
        if event is None:
            return None
        sent = anyio.Event()

        async def content() -> AsyncIterator[bytes]:
            for index, piece in enumerate(pieces):
                if index:
                    await anyio.sleep(pause)
                yield piece
            sent.set()

        expected = _request_ids(body)
        try:
            if hang_up_after is None:
                await self._exchange(self._raw, headers, content() if cut is not None else body, event.seq, expected)
                return event
            async with httpx.AsyncClient(timeout=httpx.Timeout(self.deadline)) as once:
                answered = False
                with anyio.move_on_after(self.deadline):
                    async with anyio.create_task_group() as group:
                        async def hang_up() -> None:
                            await sent.wait()
                            await anyio.sleep(hang_up_after)
                            group.cancel_scope.cancel()

                        group.start_soon(hang_up)
                        await self._exchange(once, headers, content(), event.seq, expected)
                        answered = True
                        group.cancel_scope.cancel()
                if not answered:
                    self._record_server(f"nemesis: the client hung up {round(hang_up_after * 1000)} ms after "
                                        "sending, with the request in flight",
                                        framing={"http": {"post_seq": event.seq, "hung_up": True}},
                                        marks=("nemesis:hung-up",))
        except httpx.HTTPError as exc:
            down = isinstance(exc, httpx.ConnectError)
            self._record_server(f"HTTP request failed: {type(exc).__name__}: {exc}".rstrip(": "),
                                framing={"http": {"post_seq": event.seq, "failed": type(exc).__name__}},
                                marks=(REFUSED_MARK, DOWN_MARK) if down else (REFUSED_MARK,))
            self._down = self._down or down
        return event

    async def _exchange(self, client: httpx.AsyncClient, headers: dict[str, str], content: Any, seq: int,
                        expected: int) -> None:
        """One POST and its answer: a JSON body, an SSE stream (read until the responses it owes have
        come), or a status with some other body; each recorded as the server's, tied to ``seq``."""
        async with client.stream("POST", self.url, content=content, headers=headers) as response:
            status = response.status_code
            content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
            head = {"status": status, "content_type": content_type}
            if content_type == H.EVENT_STREAM and 200 <= status < 300:
                parser, answers = SseParser(), 0
                async for line in response.aiter_lines():
                    sse = parser.feed_line(line.rstrip("\r"))
                    if sse is None or sse.event != "message" or not sse.data.strip():
                        continue
                    self._record_answer(sse.data, {"response": head, "post_seq": seq, "sse": {"event": "message"}})
                    answers += _answers_in(sse.data)
                    if answers >= max(1, expected):
                        return
                return
            text = (await response.aread()).decode("utf-8", errors="replace")
        framing = {"response": head, "post_seq": seq}
        if text.strip() and (is_jsonrpc_answer(text) or (200 <= status < 300 and _is_json(text))):
            self._record_answer(text, framing)
        else:
            self._record_server(f"HTTP {status} {text[:200]}".strip(), framing={"http": framing})

    def _record_answer(self, text: str, framing: dict[str, Any]) -> None:
        self.recorder.record_message(link=self.name, sender=f"server/{self.name}", receiver=f"client/{self.name}",
                                     raw=text, revision=self.revision, transport="http",
                                     framing={"http": framing}, t_ms=stamp(self.recorder))


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _request_ids(body: bytes) -> int:
    """How many responses a body asks for: the requests (members with an id and a method) in it."""
    try:
        value = json.loads(body)
    except ValueError:
        return 0
    items = value if isinstance(value, list) else [value]
    return sum(1 for item in items if isinstance(item, dict) and "method" in item and "id" in item)


def _answers_in(data: str) -> int:
    """How many responses (results or errors) one SSE event's data holds."""
    try:
        value = json.loads(data)
    except ValueError:
        return 0
    items = value if isinstance(value, list) else [value]
    return sum(1 for item in items if isinstance(item, dict) and ("result" in item or "error" in item))
