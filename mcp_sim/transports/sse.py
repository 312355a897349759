"""Server-Sent Events, the streaming half of Streamable HTTP (course chapter 06).

An SSE stream is a ``text/event-stream`` HTTP response that stays open. The server writes *events*,
each a few ``field: value`` lines ended by a blank line::

    id: 3-2
    event: message
    data: {"jsonrpc":"2.0","id":1,"result":{}}

MCP puts one JSON-RPC message in each event's ``data``. The other fields matter for resumption
(legacy Streamable HTTP, 2025-03-26 … 2025-11-25): ``id`` names the event so a client that lost the
connection can reconnect with ``GET`` and ``Last-Event-ID: <id>`` and get the events it missed on that
stream; ``retry`` tells the client how many milliseconds to wait before reconnecting. 2025-11-25 adds
the *priming event*: an event with an ``id`` and empty ``data``, sent first so that the client has a
cursor even before any message. The 2026-07-28 revision has no resumption at all: its events carry no
``id``, and a broken stream loses its request.

A line starting with ``:`` is a comment, which a client ignores: servers send one now and then to
keep an idle connection open.

This module is sans-IO and is the only SSE code in the package: :meth:`SseEvent.encode` writes an
event, :class:`SseParser` reads one line at a time (what a real HTTP client gets from the socket),
:func:`parse_sse` reads a whole body. The simulated transport and the real wire
(:mod:`mcp_sim.bridge`) both use them. :class:`SseStreamLog` is the simulated server's memory of one
stream: the events written so far, whether the stream has finished, and which connection (if any) is
currently reading it.

Why our own parser rather than a library's: the parsing rules are short and they are the lesson (a
learner reads what ``retry``, ``id`` and a blank line do); the simulated transport needs a parser
that is fed lines it makes itself, with no socket behind them; and the maintained client library,
``httpx-sse``, keeps its line decoder in a private module (``httpx_sse._decoders``), so using it
would tie the package to a name its authors may change at any release.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["SseEvent", "SseParser", "SseStreamLog", "comment", "parse_event_id", "parse_sse"]


@dataclass(frozen=True)
class SseEvent:
    """One SSE event. ``data`` is a JSON-RPC message's text (empty for a priming event)."""

    data: str
    id: str | None = None
    event: str | None = "message"
    retry: int | None = None

    def encode(self) -> str:
        """The event as it appears in the ``text/event-stream`` body (ending with a blank line)."""
        lines: list[str] = []
        if self.id is not None:
            lines.append(f"id: {self.id}")
        if self.event is not None:
            lines.append(f"event: {self.event}")
        if self.retry is not None:
            lines.append(f"retry: {self.retry}")
        lines.extend(f"data: {part}" for part in self.data.split("\n"))
        return "\n".join(lines) + "\n\n"

    def framing(self) -> dict[str, object]:
        """The fields shown in the trace (``framing["sse"]``)."""
        out: dict[str, object] = {}
        if self.id is not None:
            out["id"] = self.id
        if self.event is not None:
            out["event"] = self.event
        if self.retry is not None:
            out["retry"] = self.retry
        return out


def comment(text: str = "keep-alive") -> str:
    """A comment: ignored by the client, it only keeps an idle connection open."""
    return f": {text}\n\n"


class SseParser:
    """Reads an event stream one line at a time (without its line ending), as the HTML standard's
    event-stream interpretation does: :meth:`feed_line` returns each event when its blank line arrives.

    ``event`` defaults to ``message``; ``id`` is the *last event id* so far, which carries over to later
    events that name none (it is what a client sends back in ``Last-Event-ID`` to resume)."""

    def __init__(self) -> None:
        self._data: list[str] = []
        self._event = "message"
        self._id: str | None = None
        self._retry: int | None = None

    def feed_line(self, line: str) -> SseEvent | None:
        if line == "":
            if not self._data:  # nothing to dispatch (a block of comments, or an id alone)
                self._event, self._retry = "message", None
                return None
            event = SseEvent("\n".join(self._data), self._id, self._event, self._retry)
            self._data, self._event, self._retry = [], "message", None
            return event
        if line.startswith(":"):
            return None  # a comment (keep-alive)
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


def parse_sse(text: str) -> list[SseEvent]:
    """Parse a whole ``text/event-stream`` body into events (the client side of :meth:`SseEvent.encode`)."""
    parser = SseParser()
    lines = text.replace("\r\n", "\n").split("\n")
    return [event for event in map(parser.feed_line, [*lines, ""]) if event is not None]


def parse_event_id(event_id: str) -> tuple[int, int] | None:
    """Split a simulator event id ``"<stream>-<n>"`` into its stream number and event number."""
    stream, _, number = event_id.partition("-")
    if not stream.isdigit() or not number.isdigit():
        return None
    return int(stream), int(number)


Sink = Callable[[SseEvent], Any]


class SseStreamLog:
    """The server's record of one SSE stream of a legacy session (a POST's response stream or the
    ``GET`` stream), so that a client that lost the connection can resume where it left off.

    Event ids are ``"<stream number>-<event number>"``: unique within the session and telling the
    server which stream to resume, as the spec asks ("a per-stream cursor"). A stream of the
    2026-07-28 revision is not resumable: its events carry no id and are not kept.

    A session keeps every stream's log while it lives, so a log keeps what its events carried as
    plain ``(data, retry)`` pairs, frozen into a tuple once the stream is finished: tuples of text and
    numbers are objects Python's garbage collector stops tracking, so a long session's history costs
    nothing in its full passes. :meth:`event` rebuilds an event from its number.
    """

    __slots__ = ("_kept", "_on_finish", "_sink", "count", "delivered", "finished", "number", "resumable")

    def __init__(self, number: int, *, resumable: bool = True) -> None:
        self.number = number
        self.resumable = resumable
        self._kept: list[tuple[str, int | None]] | tuple[tuple[str, int | None], ...] = []
        """Event ``n``'s data and retry are ``_kept[n - 1]`` (a resumable stream only)."""
        self.count = 0
        self.finished = False
        self.delivered = 0
        """How many events were handed to a reader (the standalone stream replays the rest)."""
        self._sink: Sink | None = None
        self._on_finish: Callable[[], None] | None = None

    @property
    def attached(self) -> bool:
        return self._sink is not None

    def next_id(self) -> str | None:
        return f"{self.number}-{self.count + 1}" if self.resumable else None

    def event(self, n: int) -> SseEvent:
        """Event number ``n`` (from 1) of this resumable stream, as it was written."""
        data, retry = self._kept[n - 1]
        return SseEvent(data, f"{self.number}-{n}", "message", retry)

    def append(self, data: str, *, retry: int | None = None) -> SseEvent:
        """Write an event: kept for replay, and delivered now if a reader is attached."""
        self.count += 1
        event = SseEvent(data, f"{self.number}-{self.count}" if self.resumable else None, "message", retry)
        if isinstance(self._kept, list) and self.resumable:
            self._kept.append((data, retry))
        if self._sink is not None:
            self.delivered = self.count
            self._sink(event)
        return event

    def attach(self, sink: Sink, on_finish: Callable[[], None], *, after: int | None = None) -> list[SseEvent]:
        """A reader (re)connects. Returns the events it missed — after event number ``after``, or the
        never-delivered ones when ``after`` is ``None`` — for the caller to replay before new ones."""
        start = self.delivered if after is None else after
        missed = [self.event(n) for n in range(max(start, 0) + 1, len(self._kept) + 1)]
        self._sink = sink
        self._on_finish = on_finish
        self.delivered = self.count
        return missed

    def detach(self) -> None:
        """The reader went away (a cut connection). Legacy: not a cancellation; events keep being kept."""
        self._sink = None
        self._on_finish = None

    def finish(self) -> None:
        """The server closes the stream (after the response, for a POST's stream)."""
        self.finished = True
        self._kept = tuple(self._kept)  # nothing more will be written
        if self._on_finish is not None:
            on_finish = self._on_finish
            self.detach()
            on_finish()
