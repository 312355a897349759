"""Exercise ex06_stdio_framer (chapter 06): newline framing of a stdio byte stream.

The learner writes the reading half of the stdio transport, sans-IO: ``feed(pending, chunk)`` takes
the bytes left over from the previous reads and the bytes of one new read, and returns the complete
messages that now end in a newline (decoded text) and the unfinished rest. The grader plays the pipe:
it records a real simulated stdio session with the notes server (:mod:`mcp_sim.scenarios.stdio_pitfalls`:
notes with accented letters, symbols, emoji and a Unicode line separator inside a JSON string), cuts
one of its pipes into reads the way an operating system might, and checks after every read that
exactly the messages completed so far came out. Every seed tries every kind of cutting; the seed
picks the revision, the pipe, the notes and where the cuts fall.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from typing import Any

import anyio
from hypothesis import strategies as st
from hypothesis.errors import FlakyFailure

from mcp_sim.grading.differential import Mismatch, differential
from mcp_sim.grading.model import Check, CheckContext, CheckFailed, Exercise, Hint
from mcp_sim.scenarios.stdio_pitfalls import notes_session
from mcp_sim.transports.stdio import Pipe

R_FRAME = "stdio.newline-delimited"  # a message is complete when its newline arrives, and only then
R_NEWLINE = "stdio.newline-delimited"
R_UTF8 = "transport.utf-8"
R_TAIL = "stdio.newline-delimited"

_REVISIONS = ("2025-06-18", "2025-11-25", "2026-07-28")
_SEPARATORS = ("\u2028", "\u2029", "\x85")
_BLANKS = (b"", b"\n", b"\r\n", b"\n\n", b"  \n", b"\t\r\n")


def _stream(ctx: CheckContext) -> list[str]:
    """The lines of one pipe of a recorded notes session (every one a message)."""
    revision = ctx.rng.choice(_REVISIONS)
    pipe = ctx.rng.choice(("stdout", "stdin"))
    lines = notes_session(ctx.rng.randrange(6), revision)
    return [line.text for line in lines if line.stream == pipe]


def _multibyte_cuts(data: bytes) -> list[int]:
    """Offsets that fall inside a multibyte UTF-8 character (between its lead and continuation bytes)."""
    return [i for i in range(1, len(data)) if 0x80 <= data[i] < 0xC0]


def _chunks(ctx: CheckContext, kind: str, lines: list[str]) -> tuple[list[bytes], list[str], bytes]:
    """The reads for ``kind``; the messages they complete; the bytes left unfinished at the end."""
    rng = ctx.rng
    ending = b"\r\n" if kind.startswith("CRLF") else b"\n"
    frames = [line.encode("utf-8") + ending for line in lines]
    if kind == "blank lines":  # every kind of blank line, on every seed
        padded: list[bytes] = []
        for number, frame in enumerate(frames):
            padded += [_BLANKS[number % len(_BLANKS)], frame]
        frames = [*padded, b"\n", *_BLANKS]
    tail = b""
    if kind == "stream cut mid-message":
        last = lines[-1].encode("utf-8")
        tail = last[:rng.randint(1, len(last) - 1)]
        frames, lines = [*frames[:-1], tail], lines[:-1]
    data = b"".join(frames)
    if kind in ("one message per read", "CRLF line endings", "blank lines", "stream cut mid-message"):
        return [f for f in frames if f], lines, tail
    if kind == "empty reads":
        halves = [(f[:len(f) // 2], f[len(f) // 2:]) for f in frames]  # an empty read while a message waits
        return [piece for a, b in halves for piece in (b"", a, b"", b)], lines, tail
    if kind in ("newline in the next read", "CRLF cut between CR and LF"):
        out: list[bytes] = []
        for frame in frames:
            out += [frame[:-1], frame[-1:]]
        return out, lines, tail
    if kind == "several messages per read" or kind == "line separator in a string":
        out, i = [], 0
        while i < len(frames):
            step = rng.randint(2, 4)
            out.append(b"".join(frames[i:i + step]))
            i += step
        return out, lines, tail
    if kind == "a character split across reads":
        inside = _multibyte_cuts(data)
        cuts = sorted(set(rng.sample(inside, min(len(inside), 12))))
    elif kind == "a message split across reads":
        ends = {i + 1 for i, b in enumerate(data) if b == 0x0A}
        cuts = sorted({rng.randrange(1, len(data)) for _ in range(len(frames) * 2)} - ends)
    else:  # random read sizes
        cuts, at = [], 0
        while True:
            at += rng.randint(1, 300)
            if at >= len(data):
                break
            cuts.append(at)
    bounds = [0, *cuts, len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds) if b > a], lines, tail


def _same(frame: Any, line: str) -> bool:
    if not isinstance(frame, str):
        return False
    try:
        return bool(json.loads(frame) == json.loads(line))
    except ValueError:
        return False


def _explain(frame: Any, line: str | None, early: str | None, read: bytes, kind: str) -> CheckFailed:
    """Why a frame is not the message that should have come out: name the mistake it looks like."""
    shown = repr(frame)[:160]
    if not isinstance(frame, str):
        return CheckFailed(f"feed() must return frames as str (decoded UTF-8 text); got {shown}.", R_UTF8)
    if frame.strip() == "":
        return CheckFailed(f"feed() returned the blank frame {shown}. A blank line between messages carries "
                           "nothing: skip it.", R_NEWLINE)
    if "\ufffd" in frame or (kind == "a character split across reads" and line is not None and frame != line):
        return CheckFailed(f"A frame came out as {shown}: a multibyte character was cut between two reads and "
                           "decoded in halves.", R_UTF8)
    if line is not None and frame and frame != line and frame in line:
        at = line.find(frame)
        before, after = line[at - 1:at], line[at + len(frame):at + len(frame) + 1]
        separator = next((s for s in _SEPARATORS if s in (before, after)), None)
        if separator is not None:
            return CheckFailed(f"The message {line[:100]!r}… came out in pieces, e.g. {shown}: it was split at "
                               f"{separator!r} inside a JSON string. Only the byte \\n ends a message "
                               "(str.splitlines() splits at more than that).", R_NEWLINE)
        return CheckFailed(f"Only part of a message came out: {shown}. The read {read[:80]!r}… ended in the middle "
                           "of it; keep the unfinished bytes until its newline arrives.", R_FRAME)
    if line is None and early is not None and (_same(frame, early) or (frame and frame in early)):
        return CheckFailed(f"feed() handed out {shown} before its newline arrived (the read was {read[-60:]!r}). "
                           "Until the newline comes, it is pending, however complete it looks.", R_TAIL)
    want = "nothing" if line is None else repr(line[:120])
    return CheckFailed(f"After the read {read[:80]!r}… feed() returned the frame {shown}, which is not the next "
                       f"message this read completes.", R_FRAME, case=kind, expected=want)


def drive(ctx: CheckContext, kind: str) -> None:
    """Feed the reads one by one; after each, exactly the messages completed so far must have come out."""
    lines = _stream(ctx)
    reads, messages, tail = _chunks(ctx, kind, lines)
    feed = ctx.function("feed")
    pending, data, done = b"", b"", 0
    if kind == "a pending the framer did not produce":  # another reader's leftovers: feed() keeps no state
        first = reads[0] if len(reads[0]) > 2 else b"".join(reads)
        cut = len(first) // 2
        pending = data = first[:cut]
        reads = [first[cut:], *reads[1:]] if len(reads[0]) > 2 else [first[cut:]]
    for read in reads:
        got = feed(pending, read)
        if not isinstance(got, (list, tuple)) or len(got) != 2 or not isinstance(got[0], (list, tuple)):
            raise CheckFailed(f"feed() must return [frames, pending] (a list of str and the bytes kept); got "
                              f"{got!r:.200}.", R_FRAME)
        frames, pending = list(got[0]), got[1]
        data += read
        complete = [ln for ln in data.split(b"\n")[:-1] if ln.strip()]
        should = len(complete) - done  # how many messages this read completed
        for number, frame in enumerate(frames):
            line = messages[done + number] if done + number < len(messages) and number < should else None
            if line is None or not _same(frame, line):
                early = messages[done + number] if done + number < len(messages) else None
                raise _explain(frame, line, early, read, kind)
        if len(frames) < should:
            missing = messages[done + len(frames)]
            late = (" It ended with its newline in this read, so it is complete now." if kind != "newline in the "
                    "next read" else " Its newline just arrived.")
            raise CheckFailed(f"The read {read[-80:]!r} completed the message {missing[:100]!r}… but feed() did "
                              f"not return it.{late}", R_FRAME)
        done += len(frames)
        rest = data[data.rfind(b"\n") + 1:]
        if pending != rest:
            raise CheckFailed(f"After the read {read[-60:]!r} feed() kept {pending!r:.100} as pending: not exactly the "
                              f"bytes after the last newline.{_why_pending(pending, rest)}", _pending_rule(pending, rest),
                              case=kind, expected=repr(rest[:120]))
    if tail and pending != tail:
        raise CheckFailed(f"The writer stopped in the middle of a message; {tail[:60]!r}… is all that arrived of it. "
                          f"It is no message, and it must still be pending (got {pending!r:.80}).", R_TAIL)


# --- generated: any messages, line endings, blank lines and cuts, against the simulator's own Pipe -----------

def pipe_lines(reads: list[bytes]) -> list[list[bytes]]:
    """The lines the simulator's :class:`~mcp_sim.transports.stdio.Pipe` completes with each read (without
    their ``\\n``): after each read, the bytes not yet framed go through a pipe that is then closed, and
    every line it hands its reader before the unfinished rest is one the read completed."""
    out: list[list[bytes]] = []

    async def main() -> None:
        rest = b""
        for read in reads:
            pipe = Pipe("stdout")
            pipe.feed(rest + read)
            pipe.close()
            lines = []
            while (line := await pipe.read_line()) is not None:
                lines.append(line)
            ended = (rest + read).endswith(b"\n")
            rest = b"" if ended or not lines else lines.pop()  # a last line without newline is still waiting
            out.append(lines)

    anyio.run(main)
    return out


_TEXT = st.text(st.sampled_from("ab é€😀\u2028\u2029\x85\r\n\"\\{}"), max_size=8)
_MESSAGE = st.builds(lambda rid, note: json.dumps({"jsonrpc": "2.0", "id": rid, "result": {"note": note}},
                                                  ensure_ascii=False), st.integers(1, 99), _TEXT)
_PIECE = st.tuples(_MESSAGE, st.sampled_from((b"\n", b"\r\n")), st.sampled_from((b"", b"\n", b"\r\n", b"  \n")))
_STREAMS = st.tuples(st.lists(_PIECE, min_size=1, max_size=4), st.booleans(),
                     st.lists(st.integers(0, 1 << 12), max_size=8))


@dataclass(frozen=True)
class Stream:
    """One generated stream: its reads, the messages each completes, the rest after each."""

    reads: tuple[bytes, ...]

    def __str__(self) -> str:
        return "reads " + ", ".join(repr(r) for r in self.reads)


def _stream_of(t: tuple[list[tuple[str, bytes, bytes]], bool, list[int]]) -> Stream:
    pieces, cut_last, cuts = t
    data = b"".join(blank + message.encode("utf-8") + ending for message, ending, blank in pieces)
    if cut_last:  # the writer stopped inside its last message
        data = data[:max(1, len(data) - 1 - len(pieces[-1][1]))]
    bounds = sorted(c % (len(data) + 1) for c in cuts)
    points = [0, *bounds, len(data)]
    return Stream(tuple(data[a:b] for a, b in itertools.pairwise(points)))


def _oracle_steps(stream: Stream) -> list[tuple[list[str], bytes]]:
    """After each read: the messages the simulator's Pipe completes (blank lines skipped, decoded), and the
    bytes still waiting for their newline."""
    steps, data = [], b""
    for read, lines in zip(stream.reads, pipe_lines(list(stream.reads)), strict=True):
        data += read
        steps.append(([ln.decode("utf-8") for ln in lines if ln.strip()], data[data.rfind(b"\n") + 1:]))
    return steps


_REPLACED = "\ufffd".encode()


def _pending_rule(pending: Any, rest: bytes) -> str:
    """A pending that was decoded (text, or bytes holding U+FFFD where the stream had none) broke UTF-8; any
    other wrong pending broke the framing."""
    decoded = isinstance(pending, str) or (isinstance(pending, bytes) and _REPLACED in pending and _REPLACED not in rest)
    return R_UTF8 if decoded else R_TAIL


def _why_pending(pending: Any, rest: bytes) -> str:
    if _pending_rule(pending, rest) == R_UTF8 and not isinstance(pending, str):
        return " A character the read cut in two was replaced (U+FFFD): keep the bytes undecoded until the newline."
    return ""


def check_generated(ctx: CheckContext, kind: str) -> None:
    feed = ctx.function("feed")

    def learner(stream: Stream) -> Any:
        answers, pending = [], b""
        for read, (_, rest) in zip(stream.reads, _oracle_steps(stream), strict=True):
            answers.append(feed(pending, read))
            pending = rest  # the right pending, whoever produced it: feed() keeps no state of its own
        return answers

    def compare(stream: Stream, got: Any, want: list[tuple[list[str], bytes]]) -> Mismatch | None:
        pending = b""
        for number, (answer, (frames, rest), read) in enumerate(zip(got, want, stream.reads, strict=True)):
            where = f"Read {number + 1} ({read!r:.120}) with pending {pending!r:.120}:"
            if not isinstance(answer, (list, tuple)) or len(answer) != 2 or not isinstance(answer[0], (list, tuple)):
                return Mismatch(f"{where} feed() must return [frames, pending]; got {answer!r:.200}.", R_FRAME)
            mine = [f.removesuffix("\r") if isinstance(f, str) else f for f in answer[0]]
            if mine != [f.removesuffix("\r") for f in frames]:
                rule = R_UTF8 if any(not isinstance(f, str) or "\ufffd" in f for f in mine) else \
                    R_NEWLINE if any(sep in f for f in frames for sep in _SEPARATORS) or len(mine) > len(frames) \
                    else R_FRAME
                return Mismatch(f"{where} feed() returned the frames {mine!r:.300}, which are not the messages this "
                                f"read completes.", rule, expected=repr(frames))
            if answer[1] != rest:
                return Mismatch(f"{where} feed() kept {answer[1]!r:.120} as pending: not the bytes after the last "
                                f"newline.{_why_pending(answer[1], rest)}", _pending_rule(answer[1], rest),
                                expected=repr(rest))
            pending = rest
        return None

    try:
        differential(ctx, _STREAMS.map(_stream_of), learner=learner, oracle=_oracle_steps, compare=compare,
                     describe=str, raises_rule=R_FRAME)
    except FlakyFailure as exc:  # the same reads answered two ways: feed() remembers something between calls
        raise CheckFailed("Fed the same reads twice, with the same pending each time, feed() answered differently: "
                          "it keeps state of its own between calls. Everything it may use is pending and chunk.",
                          R_TAIL, case=str(getattr(exc, "__notes__", [""])[-1])[:200]) from None


_FRAMING = ("one message per read", "several messages per read", "a message split across reads",
            "random read sizes")

EXERCISE = Exercise(
    id="ex06_stdio_framer",
    title="Newline framing of a stdio byte stream",
    chapter="06",
    summary="Turn the reads of a stdio pipe into messages: join the bytes, split only at \\n, decode complete lines, "
            "skip blank lines, and keep the unfinished tail for the next read.",
    rules=(R_NEWLINE, R_UTF8),
    functions=("feed",),
    checks=(
        Check("Every message comes out once, whole, when its newline arrives", R_FRAME, drive, _FRAMING,
              hint="Add the new read to the pending bytes first; then every \\n ends one message."),
        Check("Multibyte characters survive a cut between reads", R_UTF8, drive, ("a character split across reads",),
              hint="Decode a line only after you have cut it out of the joined bytes."),
        Check("Only \\n ends a message; blank lines are skipped", R_NEWLINE, drive,
              ("line separator in a string", "CRLF line endings", "CRLF cut between CR and LF", "blank lines"),
              hint="Split bytes at b'\\n' (not str.splitlines); ignore a line that is empty or only whitespace."),
        Check("An unfinished message waits, unchanged, for its newline", R_TAIL, drive,
              ("newline in the next read", "stream cut mid-message", "empty reads",
               "a pending the framer did not produce"),
              hint="What follows the last newline is pending: return it as it is, never as a message."),
        Check("Any stream frames like the simulator's pipe", R_FRAME, check_generated, ("generated",),
              hint="feed() is a pure function of pending + chunk: join, split at b'\\n', decode whole lines, "
                   "skip blank ones."),
    ),
    hints=(
        Hint("A read is just some bytes of the stream. Join pending + chunk, and only then look for newlines.", R_FRAME),
        Hint("bytes.split(b'\\n') gives the finished lines and, last, the unfinished rest; decode each finished line "
             "with UTF-8 and keep the rest as bytes.", R_UTF8),
        Hint("A finished line that is empty (or just '\\r') is no message; a JSON string may legally contain U+2028, "
             "which str.splitlines() would treat as a line break.", R_NEWLINE),
    ),
    forbidden=("mcp_sim.transports", "mcp_sim.wire", "mcp_sim.bridge"),
)
