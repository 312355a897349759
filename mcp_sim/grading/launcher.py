"""The capstone's launcher: a learner's server as a real stdio MCP server, under the grader's rules.

The capstone (exercise ``ex12_capstone``) grades a learner's *server* the way a real client meets it:
the grader starts this file as its own program, ``python -I .../launcher.py CONFIG``,
and the official ``mcp`` SDK's client talks to it over the process's stdin and stdout. This side

1. reads its configuration (a JSON file the grader wrote): the learner's file, the rules of the
   exercise, the identity of the caller and the data to serve;
2. reserves the real stdout for protocol lines — anything else written to file descriptor 1 (a
   ``print``, a library, C code) lands in a capture file the grader reads afterwards, because on stdio
   a server must write nothing but MCP messages to stdout;
3. installs the same import and file hooks as the learner process of every other exercise
   (:class:`~mcp_sim.grading.sandbox.Guard`: no solutions, no grader, no writes outside the scratch
   folder, no other programs), then loads the learner's file and calls ``build_server(expenses)``;
4. serves that :class:`~mcp_sim.roles.server.Server` with the bridge's
   :class:`~mcp_sim.bridge.stdio.StdioServerStream`, the configured caller attached to the connection
   (on stdio the caller is the process's configured identity), until the client closes stdin;
5. saves every line it read and wrote as a trace (JSON Lines), which the grader checks against the
   official schema of the negotiated revision.

When the learner's file cannot be loaded, or ``build_server`` fails, the reason is written to stderr
in the learner's terms (their own lines only) and the process exits with :data:`LOAD_FAILED`; the
grader shows that message instead of an SDK connection error.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Final, NoReturn

LOAD_FAILED: Final = 3
"""Exit code: the learner's server could not be built (the reason is on stderr)."""
READY_MARK: Final = "mcp-sim-capstone: loaded"
"""Written to stderr once the learner's server is built, before serving."""


def _fail(message: str) -> NoReturn:
    sys.stderr.write(message.rstrip("\n") + "\n")
    sys.stderr.flush()
    os._exit(LOAD_FAILED)


def _sandbox() -> tuple[Any, Any]:
    """The learner-side guard and its error teller, loaded from ``sandbox.py`` beside this file (the
    grader runs this file by its path): importing ``mcp_sim.grading.sandbox`` would first import the
    grading package, every exercise's grader with it, which costs a second at each server start."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("mcp_sim_learner_sandbox", Path(__file__).with_name("sandbox.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Guard, module.describe_exception


def main(argv: list[str]) -> int:
    """Serve the learner's server as configured in ``argv[0]`` (a JSON file); the exit code."""
    config: dict[str, Any] = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    # Everything the process writes is opened before the hooks go in: afterwards only the scratch
    # folder is writable, and the learner's code must not reach these files by accident.
    wire = os.fdopen(os.dup(1), "wb", buffering=0)
    if config.get("stdout_capture"):  # without it stdout stays the wire, as a plain server's (mcp-sim check)
        captured = os.open(config["stdout_capture"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(captured, 1)
        os.close(captured)
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    trace_path = Path(config["trace"])

    import anyio

    # Checking a tool's arguments needs jsonschema (without its slow optional IRI checker: see
    # import_jsonschema), imported before the hooks: importing under them is slower.
    from mcp_sim.protocol.schema import import_jsonschema

    import_jsonschema()

    from mcp_sim.bridge.recording import WallClockRecorder
    from mcp_sim.bridge.stdio import StdioServerStream
    Guard, describe_exception = _sandbox()
    from mcp_sim.roles.server import Server
    from mcp_sim.roles.server_session import serve
    from mcp_sim.security.identity import AuthInfo
    from mcp_sim.trace.jsonl import dumps_jsonl
    from mcp_sim.transports.base import LinkInfo

    guard = Guard(config)
    learner = guard.learner
    sys.path.insert(0, str(learner.parent))
    guard.install()
    import importlib.util

    try:
        spec = importlib.util.spec_from_file_location("learner", learner)
        if spec is None or spec.loader is None:
            _fail(f"{guard.display} is not a Python file the grader can load.")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        build = getattr(module, "build_server", None)
        if not callable(build):
            _fail(f"{guard.display} has no function build_server(expenses); keep the name the starter uses.")
        server = build([dict(e) for e in config["expenses"]])
    except BaseException as exc:  # the learner's mistake, told in their terms
        _fail(describe_exception(exc, learner, guard.display))
    if not isinstance(server, Server):
        _fail(f"build_server() returned {type(server).__name__}, not the simulator's Server "
              f"(mcp_sim.roles.server.Server).")
    sys.stderr.write(READY_MARK + "\n")
    sys.stderr.flush()

    recorder = WallClockRecorder()
    info = LinkInfo(name=server.name, transport="stdio", client=f"client/{server.name}",
                    server=f"server/{server.name}")
    stream = StdioServerStream(info, recorder=recorder, stdin=sys.stdin.buffer, stdout=wire,
                               auth=AuthInfo(str(config["caller"])))

    async def run() -> None:
        await serve(server, stream)

    try:
        anyio.run(run)
    finally:
        sys.stdout.flush()
        with trace_path.open("w", encoding="utf-8") as out:
            out.write(dumps_jsonl(recorder.events))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
