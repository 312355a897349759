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
    return notes_session(seed, revision) if kind == "healthy session" else pitfall_session(kind, seed, revision)


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
    bad = trace[want["index"]]
    if got is None:
        raise CheckFailed(f"Line {want['index']} on {bad['stream']}, {bad['text'][:100]!r}, is not a JSON-RPC message; "
                          f"diagnose() found nothing wrong.", rule)
    if got["index"] != want["index"]:
        blamed = trace[got["index"]] if 0 <= got["index"] < len(trace) else None
        more = ""
        if blamed is not None and blamed["stream"] == "stderr":
            more = " That line is on stderr, which is for logs."
        elif blamed is not None and got["index"] > want["index"]:
            more = " That line comes later: name the first line that broke the stream, not its consequences."
        raise CheckFailed(f"The first line that is not a JSON-RPC message is line {want['index']} on {bad['stream']}: "
                          f"{bad['text'][:100]!r}. diagnose() named line {got['index']}: {blamed!r:.160}.{more}", rule)
    if got.get("writer") != want["writer"]:
        raise CheckFailed(f"Line {want['index']} was written to {bad['stream']}, so the {want['writer']} wrote it; "
                          f"diagnose() said {got.get('writer')!r}.", rule)


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
              ("debug print", "json log on stdout", "pretty-printed json"),
              hint="Valid JSON is not enough: a message is an object with jsonrpc \"2.0\" and a method, or an id "
                   "with a result or an error."),
        Check("A line on stdin that is not a message is the client's fault", R_STDIN, check_diagnose,
              ("client note on stdin",),
              hint="stdin is written by the client, stdout by the server."),
        Check("stderr is for logs: sound sessions are sound", R_STDERR, check_diagnose,
              ("logs on stderr", "healthy session"),
              hint="Never judge stderr lines; and a JSON-RPC error reply is a message, not the culprit."),
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
