"""Stdio sessions, healthy and broken, recorded line by line (course chapter 06, stdio transport).

The stdio rules fit in three sentences: each message is one line of UTF-8 JSON ended by ``\\n``; the
server's stdout carries nothing but MCP messages (and the client's writes to stdin likewise); logs go
to stderr. This module runs small, real simulated sessions that keep or break those rules and hands
back what went through the pipes, in order, as :class:`StdioLine` s — the raw material of the
chapter-06 exercises on framing and on diagnosing a polluted stream.

* :func:`notes_session` — a healthy session with the notes server: notes whose text holds accented
  letters, symbols, an emoji and a Unicode LINE SEPARATOR (U+2028), written and read back. Every line
  on stdin and stdout is a message.
* :func:`pitfall_session` — the same kind of session with one :data:`PITFALLS` mistake in it: a
  handler that ``print``\\ s a debug line, prints a JSON log object, pretty-prints JSON (several lines),
  or — the healthy twin — logs to stderr as it should; or a client that writes a note of its own on
  the server's stdin.

Every run is seeded: the same seed gives the same lines.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Final, Literal

import anyio

import mcp_sim.scenarios.notes as notes
from mcp_sim.roles.client import Client
from mcp_sim.roles.context import Context
from mcp_sim.roles.server import Server
from mcp_sim.roles.server_session import serve
from mcp_sim.sim.world import Simulation
from mcp_sim.transports import MessageStream, open_link
from mcp_sim.transports.stdio import StdioClientStream

Stream = Literal["stdin", "stdout", "stderr"]

PITFALLS: Final = ("debug print", "json log on stdout", "pretty-printed json", "logs on stderr",
                   "client note on stdin")
"""The ways :func:`pitfall_session` can run. ``logs on stderr`` breaks nothing: stderr is the place."""

_WORDS: Final = ("Café au lait ☕", "20 °C in Zürich", "naïve résumé", "price: 12 €", "smile 😀",
                 "Ωmega and π", "Łódź → Kraków", "crème brûlée")
_SEPARATORS: Final = ("\u2028", "\u2029", "\x85")


@dataclass(frozen=True)
class StdioLine:
    """One line that went through a pipe: which pipe, and its text without the ending ``\\n``."""

    stream: Stream
    text: str

    def as_dict(self) -> dict[str, str]:
        return {"stream": self.stream, "text": self.text}


def note_texts(sim: Simulation) -> dict[str, str]:
    """Seeded note files whose texts need multibyte UTF-8, and one with a line separator inside."""
    rng = sim.random_for("notes")
    words = rng.sample(_WORDS, 3)
    separator = rng.choice(_SEPARATORS)
    return {f"{rng.choice(('trip', 'menu', 'plan'))}.md": f"{words[0]}; {words[1]}",
            "odd.md": f"line one{separator}still the same JSON string — {words[2]}"}


def _recorded_lines(sim: Simulation) -> list[StdioLine]:
    out = []
    for event in sim.recorder:
        stdio = event.framing.get("stdio")
        if stdio is not None:
            out.append(StdioLine(stdio["stream"], stdio["line"].removesuffix("\n")))
    return out


@functools.lru_cache(maxsize=64)
def notes_session(seed: int, revision: str = "2025-11-25") -> tuple[StdioLine, ...]:
    """A healthy stdio session with the notes server (``revision`` picks the era): the opening, for
    each seeded note a ``tools/call`` that writes a copy and one that reads it, and a
    ``resources/read``. (Remembered per seed and revision: the same run gives the same lines.)"""
    sim = Simulation(seed)
    files = note_texts(sim)

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            stream = await open_link(sim, tg, "notes", lambda s: serve(notes.build(files), s), transport="stdio",
                                     revision=revision)
            client = Client(era="modern" if revision >= "2026" else "legacy", versions=(revision,), sim=sim)
            await client.connect(stream, tg)
            for path, text in files.items():
                await client.call_tool("write_note", {"path": f"copy-of-{path}", "text": text})
                await client.call_tool("read_note", {"path": path})
            await client.read_resource(f"{notes.PREFIX}{next(iter(files))}")
            await client.close()
            await stream.aclose()

    sim.run(main)
    return tuple(_recorded_lines(sim))


def _pitfall_server(pitfall: str, sim: Simulation) -> Server:
    """A notes-like server whose ``read_note`` handler makes the mistake ``pitfall``."""
    rng = sim.random_for("pitfall")
    server = Server("notes", version="1.0.0", title="Notes")
    tree = note_texts(sim)

    @server.tool(annotations={"readOnlyHint": True})
    def read_note(path: str, ctx: Context) -> str:
        """The text of one note."""
        size = len(tree.get(path, ""))
        if pitfall == "debug print":
            ctx.stdout_raw(f"{rng.choice(('debug', 'DEBUG', 'trace'))}: reading {path} ({size} chars)\n")
        elif pitfall == "json log on stdout":
            ctx.stdout_raw(json.dumps({"level": "debug", "event": "read_note", "path": path}) + "\n")
        elif pitfall == "pretty-printed json":
            ctx.stdout_raw(json.dumps({"event": "read_note", "path": path, "size": size}, indent=2) + "\n")
        elif pitfall in ("logs on stderr", "client note on stdin"):
            ctx.stderr(f"{rng.choice(('ERROR', 'warning', 'info'))}: read_note {path} ({size} chars)")
        return tree.get(path, f"no note at {path}")

    return server


@functools.lru_cache(maxsize=128)
def pitfall_session(pitfall: str, seed: int, revision: str = "2025-11-25") -> tuple[StdioLine, ...]:
    """A stdio session with one mistake of :data:`PITFALLS` in it: the server announces itself on
    stderr, the client reads two notes, and the server's handler (or the client) writes what the
    pitfall says. The lines of all three pipes, in
    the order they were written (remembered per pitfall, seed and revision)."""
    if pitfall not in PITFALLS:
        raise ValueError(f"unknown pitfall {pitfall!r}; the pitfalls are {', '.join(PITFALLS)}")
    sim = Simulation(seed)
    server = _pitfall_server(pitfall, sim)
    paths = list(note_texts(sim))
    sim.random_for("order").shuffle(paths)

    async def program(stream: MessageStream) -> None:
        process = getattr(stream, "process", None)
        if process is not None:  # a well-behaved start-up banner: on stderr
            process.stderr_write(f"notes server 1.0.0 starting (pid {process.pid}, {revision})")
        await serve(server, stream)

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            stream = await open_link(sim, tg, "notes", program, transport="stdio", revision=revision)
            client = Client(era="modern" if revision >= "2026" else "legacy", versions=(revision,), sim=sim,
                            timeout=5.0)
            await client.connect(stream, tg)
            for number, path in enumerate(paths):
                if pitfall == "client note on stdin" and number == 1 and isinstance(stream, StdioClientStream):
                    await stream.send_raw(f"client: now reading {path}\n")  # the client breaks the rule
                await client.call_tool("read_note", {"path": path})
            await client.close()
            await stream.aclose()

    sim.run(main)
    return tuple(_recorded_lines(sim))


__all__ = ["PITFALLS", "StdioLine", "note_texts", "notes_session", "pitfall_session"]
