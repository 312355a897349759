"""Server-Sent Events, the streaming body of Streamable HTTP (course chapter 10), sans-IO.

An SSE stream is plain text: each event is a few ``field: value`` lines ended by a blank line. MCP
uses the ``message`` event, whose ``data`` is one JSON-RPC message::

    event: message
    data: {"jsonrpc":"2.0","method":"notifications/progress","params":{...}}

A line starting with ``:`` is a comment (a keep-alive). Legacy servers may add an ``id`` to each
event so a client can resume with ``Last-Event-ID``; 2026-07-28 dropped resumability. This module
only turns text into events and events into text; the HTTP code around it does the I/O.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SSEEvent:
    """One dispatched event."""

    data: str
    event: str = "message"
    id: str | None = None
    retry: int | None = None


def format_event(data: str, *, event: str = "message", id: str | None = None) -> bytes:
    """One event as bytes on the wire. ``data`` must not contain a newline (JSON text never does)."""
    head = f"id: {id}\n" if id is not None else ""
    return f"{head}event: {event}\ndata: {data}\n\n".encode()


def format_comment(text: str = "keep-alive") -> bytes:
    """A comment line: ignored by the client, it only keeps an idle connection open."""
    return f": {text}\n\n".encode()


class SSEParser:
    """Feed it lines (without their line ending); it returns each event when its blank line arrives."""

    def __init__(self) -> None:
        self._data: list[str] = []
        self._event = "message"
        self._id: str | None = None
        self._retry: int | None = None

    def feed_line(self, line: str) -> SSEEvent | None:
        if line == "":
            if not self._data:
                self._event, self._retry = "message", None
                return None
            event = SSEEvent("\n".join(self._data), self._event, self._id, self._retry)
            self._data, self._event, self._retry = [], "message", None
            return event
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value or "message"
        elif name == "id":
            self._id = value
        elif name == "retry" and value.isdigit():
            self._retry = int(value)
        return None
