"""The checker's end of a real Streamable HTTP endpoint (``mcp-sim check --url``), chapter 12.

Over HTTP each message is one POST, and the era's headers (``MCP-Protocol-Version``, ``Mcp-Method``
and ``Mcp-Name`` in 2026-07-28; ``Mcp-Session-Id`` in a legacy session) are part of speaking
correctly, so an :class:`HttpProbeLink` hands each frame to the bridge's own
:class:`~mcp_sim.bridge.http_client.HttpClientStream`, which sets them, reads a JSON or SSE answer
and records both ends, exactly as ``mcp-sim connect --url`` does. The workload, the marks and the
checkers are the stdio ones.

What this link cannot do is write a frame that is not a JSON-RPC message (the client stream posts
messages, not bytes), kill the server, or hang up a pipe: the ``malformed``, ``delay``, ``hangup``
and ``restart`` nemesis actions are stdio's, and a check over HTTP leaves them out. The 2026-07-28
version probes of the stdio workload are left out too: over HTTP the version travels in headers as
well, and :mod:`mcp_sim.bridge.check.http_probes` probes it there, with the statuses of each era.
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from typing import Final

import anyio

from mcp_sim.bridge.check.link import ProbeLink
from mcp_sim.bridge.http_client import HttpClientStream, open_http
from mcp_sim.trace.event import TraceEvent
from mcp_sim.trace.recorder import Recorder
from mcp_sim.wire.jsonrpc import InvalidMessage, decode

HTTP_NEMESIS: Final = ("duplicate", "reuse", "oversized")
"""The nemesis actions that work over HTTP (see the module docstring)."""


class HttpProbeLink(ProbeLink):
    """A :class:`ProbeLink` over Streamable HTTP: one session (legacy) or none (modern) per link."""

    transport = "http"

    def __init__(self, url: str, recorder: Recorder, name: str, *, deadline: float,
                 revision: str | None = None) -> None:
        super().__init__([url], recorder, name, deadline=deadline, revision=revision)
        self.url = url
        self._http: HttpClientStream | None = None

    async def start(self) -> None:
        stack = AsyncExitStack()
        self._http = await stack.enter_async_context(
            open_http(self.url, name=self.name, recorder=self.recorder, timeout=self.deadline + 5))
        group = await stack.enter_async_context(anyio.create_task_group())
        stack.callback(group.cancel_scope.cancel)
        group.start_soon(self._serve_server_requests, self._http)
        self._stack = stack

    async def stop(self) -> None:
        stack, self._stack = self._stack, None
        if stack is not None:
            await stack.aclose()
        self._http = None

    async def kill(self) -> None:
        """There is no process to kill over HTTP: the link is closed and opened again."""
        await self.stop()

    @property
    def alive(self) -> bool:
        return self._stack is not None

    def note_death(self) -> None:
        """A server behind a URL is not this checker's process: its death shows as refused requests."""

    async def send_line(self, text: str, *marks: str) -> TraceEvent | None:
        decoded = decode(text)
        if self._http is None or isinstance(decoded, InvalidMessage) or not isinstance(decoded, tuple):
            return None  # only JSON-RPC messages can be posted through the client stream
        self.recorder.mark_next(*marks)
        try:
            await self._http.send(decoded)
        except Exception:
            return None
        return self.recorder.events[-1]

    async def send_bytes(self, data: bytes, *marks: str) -> TraceEvent | None:
        return None

    async def send_split(self, text: str, cut: int, pause: float, *marks: str) -> TraceEvent | None:
        return None
