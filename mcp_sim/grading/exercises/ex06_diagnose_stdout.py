"""Exercise ex06_diagnose_stdout (chapter 06): find the line that broke a stdio stream, and its writer.

The learner reads the recorded lines of a simulated stdio session — stdin, stdout and stderr, in the
order they were written — and names the first line on stdin or stdout that is not a JSON-RPC message,
with who wrote it (``diagnose``), or says the session is sound. The sessions come from
:mod:`mcp_sim.scenarios.stdio_pitfalls`: a handler that ``print`` s a debug line, prints a JSON log
object or pretty-prints JSON to stdout; a client that writes a note of its own on the server's stdin;
and the healthy twins — a server that logs to stderr (even lines saying ``ERROR``), a session whose
notes hold odd Unicode. The expected answer is what the simulator's own decoder rejects first. Every
seed tries every kind; the seed picks the revision, the notes and the wording.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st

from mcp_sim.grading.differential import Mismatch, differential
from mcp_sim.grading.model import Check, CheckContext, CheckFailed, Exercise, Hint
from mcp_sim.scenarios.stdio_pitfalls import StdioLine, notes_session, pitfall_session
from mcp_sim.wire.jsonrpc import InvalidMessage, decode

R_STDOUT = "stdio.stdout-only-messages"
R_STDIN = "stdio.stdin-only-messages"
R_STDERR = "stdio.stderr-for-logs"

_REVISIONS = ("2025-11-25", "2026-07-28")  # every line shown is valid against its revision's schema
WRITERS = {"stdout": "server", "stdin": "client"}


def culprit(lines: Sequence[StdioLine]) -> dict[str, Any] | None:
    """The first line on stdin/stdout the simulator's JSON-RPC decoder rejects, and who wrote it."""
    for index, line in enumerate(lines):
        if line.stream in WRITERS and isinstance(decode(line.text), InvalidMessage):
            return {"index": index, "writer": WRITERS[line.stream]}
    return None


def _session(ctx: CheckContext, kind: str) -> Sequence[StdioLine]:
    revision = ctx.rng.choice(_REVISIONS)
    seed = ctx.rng.randrange(12)
    if kind == "an error reply and a notification in a healthy session":
        lines = list(notes_session(seed, revision))
        lines[3:3] = [StdioLine("stdout", GOOD_LINES[0]), StdioLine("stdin", GOOD_LINES[1])]
        return lines
    if kind in _AT_THE_EDGES:  # the first line of all, or the last one: every line is judged
        lines = list(notes_session(seed, revision))
        stream, text, first = _AT_THE_EDGES[kind]
        lines.insert(0 if first else len(lines), StdioLine(stream, text))  # type: ignore[arg-type]
        return lines
    if kind in _TWO_BAD:  # two culprits: the first one written is the one to name
        lines = list(notes_session(seed, revision))
        for at, stream, text in _TWO_BAD[kind]:
            lines.insert(at, StdioLine(stream, text))  # type: ignore[arg-type]
        return lines
    return notes_session(seed, revision) if kind == "healthy session" else pitfall_session(kind, seed, revision)


_TWO_BAD = {"two bad lines, the client's first": ((3, "stdin", "note to self: retry later"),
                                                  (6, "stdout", "debug: got request")),
            "two bad lines, the server's first": ((3, "stdout", '{"level": "debug", "msg": "hi"}'),
                                                  (6, "stdin", "hello?"))}
_AT_THE_EDGES = {"a banner printed before the first message": ("stdout", "notes server ready", True),
                 "a goodbye on stdin as the last line": ("stdin", "bye", False)}


def check_diagnose(ctx: CheckContext, kind: str) -> None:
    lines = _session(ctx, kind)
    want = culprit(lines)
    trace = [line.as_dict() for line in lines]
    got, after = ctx.call_and_inspect("diagnose", [copy.deepcopy(trace)])
    if after[0] != trace:
        raise CheckFailed("diagnose() changed the lines it was given; read them, do not edit them.", R_STDERR)
    if got is not None and not (isinstance(got, dict) and isinstance(got.get("index"), int)):
        raise CheckFailed(f'diagnose() must return {{"index": <int>, "writer": "server"|"client"}} or None; got '
                          f"{got!r}.")
    if want is None:
        if got is not None:
            line = trace[got["index"]] if 0 <= got["index"] < len(trace) else None
            rule = R_STDERR
            why = (" It is on stderr, where logs belong, whatever they say." if line and line["stream"] == "stderr"
                   else " It is a JSON-RPC message." if line else "")
            raise CheckFailed(f"This session breaks no stdio rule, but diagnose() blamed line {got['index']}: "
                              f"{line!r}.{why}", rule)
        return
    rule = R_STDOUT if want["writer"] == "server" else R_STDIN
    expected = f"line {want['index']} ({trace[want['index']]['stream']}), writer {want['writer']!r}"
    if got is None:
        raise CheckFailed("A line on stdin or stdout of this session is not a JSON-RPC message; diagnose() found "
                          "nothing wrong.", rule, case=f"the session above ({len(trace)} lines)", expected=expected)
    if got["index"] != want["index"]:
        blamed = trace[got["index"]] if 0 <= got["index"] < len(trace) else None
        more = ""
        if blamed is not None and blamed["stream"] == "stderr":
            more = " That line is on stderr, which is for logs."
        elif blamed is not None and got["index"] > want["index"]:
            more = " Name the first line that broke the stream, not its consequences."
        raise CheckFailed(f"diagnose() named line {got['index']}: {blamed!r:.160}, which is not the first line on "
                          f"stdin or stdout that is no JSON-RPC message.{more}", rule,
                          case=f"the session above ({len(trace)} lines)", expected=expected)
    if got.get("writer") != want["writer"]:
        raise CheckFailed(f"diagnose() found line {want['index']} but said {got.get('writer')!r} wrote it: which "
                          f"pipe is it on, and who writes that pipe?", rule, case=f"line {want['index']}",
                          expected=expected)


# --- generated: bad lines of every kind anywhere, on any pipe, against the simulator's own decoder ----------

BAD_LINES = ("debug: entering handler", '{"level": "info", "msg": "started"}', "[1, 2, 3]", "42", '"text"',
             '{"jsonrpc": "1.0", "id": 1, "result": {}}', '{"jsonrpc": "2.0", "id": 5}', "{",
             '  "jsonrpc": "2.0",', "ERROR: disk full", "null", '{"jsonrpc": "2.0"}', '{"jsonrpc": "2.0", "method": 5}')
"""Lines that are no JSON-RPC message: text, JSON that is not an object, an object without "2.0", an id with
neither result nor error, a method that is no string, a piece of pretty-printed JSON."""

GOOD_LINES = ('{"jsonrpc": "2.0", "id": 99, "error": {"code": -32601, "message": "Method not found"}}',
              '{"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1}}')
"""Decoys: messages a session may hold that the notes sessions do not (an error reply, a notification)."""

_STREAM = st.sampled_from(("stdout", "stdin", "stderr"))
_SESSIONS = st.tuples(st.integers(0, 3), st.sampled_from(_REVISIONS),
                      st.lists(st.tuples(st.integers(0, 40), _STREAM, st.sampled_from(BAD_LINES + GOOD_LINES)),
                               max_size=3))


def inject(t: tuple[int, str, list[tuple[int, str, str]]]) -> list[StdioLine]:
    """A healthy notes session with the given lines put in at the given places."""
    seed, revision, extra = t
    lines = list(notes_session(seed, revision))
    for at, stream, text in extra:
        lines.insert(at % (len(lines) + 1), StdioLine(stream, text))  # type: ignore[arg-type]
    return lines


def check_every_bad_line(ctx: CheckContext, kind: str) -> None:
    """Each kind of line that is no message, alone in a healthy session, on the pipe the kind names."""
    stream = kind.removeprefix("each bad line on ")
    seed, revision = ctx.rng.randrange(4), ctx.rng.choice(_REVISIONS)
    for text in BAD_LINES:
        lines = inject((seed, revision, [(3, stream, text)]))
        want = culprit(lines)
        got = ctx.function("diagnose")([line.as_dict() for line in lines])
        if got != want:
            raise CheckFailed(f"Line 3 on {stream}, {text!r}, is no JSON-RPC message (and every other line on stdin "
                              f"and stdout is one); diagnose() reported {got!r}.",
                              R_STDOUT if stream == "stdout" else R_STDIN, case=f"{text!r} on {stream}",
                              expected=repr(want))


def check_generated(ctx: CheckContext, kind: str) -> None:
    def learner(t: tuple[int, str, list[tuple[int, str, str]]]) -> Any:
        return ctx.function("diagnose")([line.as_dict() for line in inject(t)])

    def compare(t: tuple[int, str, list[tuple[int, str, str]]], got: Any, want: Any) -> Mismatch | None:
        if got == want:
            return None
        lines = inject(t)
        if want is None:
            return Mismatch(f"diagnose() reported {got!r} for a session whose stdin and stdout lines are all "
                            f"JSON-RPC messages (the extra lines are on stderr).", R_STDERR, expected="None")
        bad = lines[want["index"]]
        return Mismatch(f"In this session the line {want['index']} on {bad.stream}, {bad.text!r}, is the first on "
                        f"stdin or stdout that is no JSON-RPC message; diagnose() reported {got!r}.",
                        R_STDOUT if want["writer"] == "server" else R_STDIN, expected=repr(want))

    differential(ctx, _SESSIONS, learner=learner, oracle=lambda t: culprit(inject(t)), compare=compare,
                 describe=lambda t: f"the notes session {t[0]} ({t[1]}) with {t[2] or 'nothing'} put in "
                                    f"(position, pipe, line)")


EXERCISE = Exercise(
    id="ex06_diagnose_stdout",
    title="Which line broke the stdio stream, and who wrote it?",
    chapter="06",
    summary="Read a stdio session's lines on stdin, stdout and stderr and name the first line on stdin or stdout "
            "that is not a JSON-RPC message, and its writer — or say the session is sound.",
    rules=(R_STDOUT, R_STDIN, R_STDERR),
    functions=("diagnose",),
    checks=(
        Check("A line on stdout that is not a message is the server's fault", R_STDOUT, check_diagnose,
              ("debug print", "json log on stdout", "pretty-printed json", "two bad lines, the server's first",
               "a banner printed before the first message"),
              hint="Valid JSON is not enough: a message is an object with jsonrpc \"2.0\" and a method, or an id "
                   "with a result or an error."),
        Check("A line on stdin that is not a message is the client's fault", R_STDIN, check_diagnose,
              ("client note on stdin", "two bad lines, the client's first", "a goodbye on stdin as the last line"),
              hint="stdin is written by the client, stdout by the server."),
        Check("stderr is for logs: sound sessions are sound", R_STDERR, check_diagnose,
              ("logs on stderr", "healthy session", "an error reply and a notification in a healthy session"),
              hint="Never judge stderr lines; and a JSON-RPC error reply is a message, not the culprit."),
        Check("Every kind of line that is no message is found", R_STDOUT, check_every_bad_line,
              ("each bad line on stdout", "each bad line on stdin"),
              hint="Valid JSON is not enough; nor is an object: it needs jsonrpc \"2.0\" and a method, or an id "
                   "with a result or an error."),
        Check("Any session is judged like the simulator's decoder", R_STDOUT, check_generated, ("generated",),
              hint="A message is an object with jsonrpc \"2.0\" and a method, or an id with a result or an error; "
                   "name the first line on stdin or stdout that is not one."),
    ),
    hints=(
        Hint("Only stdin and stdout carry protocol. Skip every stderr line.", R_STDERR),
        Hint("Try json.loads on each stdin/stdout line, then check the shape: a dict with \"jsonrpc\": \"2.0\" and "
             "either \"method\" or \"id\" with \"result\"/\"error\".", R_STDOUT),
        Hint("The first bad line is the cause; the -32700 or -32600 replies after it are the reader's reaction.",
             R_STDOUT),
    ),
    forbidden=("mcp_sim.wire", "mcp_sim.transports", "mcp_sim.scenarios"),
)
