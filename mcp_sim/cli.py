"""The ``mcp-sim`` command line.

``mcp-sim scenarios`` lists the ready-made worlds; ``mcp-sim run weather --revision 2026-07-28
--transport stdio --seed 7 --trace weather.jsonl --html weather.html`` runs one and saves its trace;
``mcp-sim show weather.jsonl`` prints a saved trace as a table (or exports it). ``grade``,
``progress``, ``serve``, ``connect`` and ``lab`` hand over to the grading and bridge packages and to
the security labs.

This module is the only place that prints: library code logs instead (on stdio, a stray print is
exactly the bug the course warns about).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from mcp_sim.protocol.revisions import REVISIONS

DELEGATES: dict[str, tuple[str, str, str]] = {
    "grade": ("mcp_sim.grading.commands", "grade_command", "check an exercise and explain what is wrong"),
    "progress": ("mcp_sim.grading.commands", "progress_command", "show which exercises you have solved"),
    "serve": ("mcp_sim.bridge.commands", "serve_command", "serve a simulated server to a real MCP client"),
    "connect": ("mcp_sim.bridge.commands", "connect_command", "connect a simulated client to a real MCP server"),
    "check": ("mcp_sim.bridge.check.command", "check_command",
              "check a real MCP server in both eras under a workload and a nemesis, rule by rule"),
    "lab": ("mcp_sim.scenarios.security.commands", "lab_command", "list the security labs or run one attack"),
    "rules": ("mcp_sim.course.rules", "rules_command", "list the rules the course teaches, with strength and source"),
    "class": ("mcp_sim.grading.classroom.commands", "class_command",
              "run the course for a class: release the learners' copy, serve the grading service"),
    "submit": ("mcp_sim.grading.classroom.commands", "submit_command",
               "submit an exercise to your class's grading service (on JupyterHub)"),
}
"""Subcommands implemented elsewhere: name → (module, function, help). Each function takes the
remaining arguments and returns an exit code."""

TRANSPORTS = ("memory", "stdio", "http")


def _load_scenarios() -> Any:
    """The scenario registry module, or ``None`` when it is not available."""
    try:
        module = importlib.import_module("mcp_sim.scenarios")
    except ImportError:
        return None
    if not hasattr(module, "run_scenario") or not hasattr(module, "SCENARIOS"):
        return None
    return module


def _describe(entry: Any) -> str:
    for attr in ("summary", "description", "title"):
        value = getattr(entry, attr, None)
        if isinstance(value, str) and value:
            return value.strip().splitlines()[0]
    if isinstance(entry, str):
        return entry
    doc = getattr(entry, "__doc__", None)
    return doc.strip().splitlines()[0] if isinstance(doc, str) and doc.strip() else ""


def scenarios_command(args: argparse.Namespace) -> int:
    """Print the names of the ready-made scenarios, one per line, with a short description."""
    module = _load_scenarios()
    if module is None:
        print("mcp-sim: the scenario registry (mcp_sim.scenarios) is not available yet", file=sys.stderr)
        return 2
    registry = module.SCENARIOS
    names = list(registry)
    width = max((len(str(n)) for n in names), default=0)
    for name in names:
        entry = registry[name] if isinstance(registry, Mapping) else name
        text = _describe(entry)
        print(f"{name!s:<{width}}  {text}".rstrip())
    return 0


def _write(path: str, text: str, what: str) -> None:
    Path(path).write_text(text, encoding="utf-8", newline="\n")
    print(f"wrote {what} to {path}")


def _export(trace: Any, args: argparse.Namespace) -> None:
    from mcp_sim.trace.jsonl import to_jsonl
    from mcp_sim.trace.mermaid import to_mermaid
    from mcp_sim.trace.page import trace_page
    from mcp_sim.trace.sequence import SequenceDiagram

    if getattr(args, "trace", None):
        to_jsonl(trace, args.trace)
        print(f"wrote {len(trace)} events (JSON Lines) to {args.trace}")
    if getattr(args, "html", None):
        _write(args.html, trace_page(trace), "the HTML page")
    if getattr(args, "mermaid", None):
        _write(args.mermaid, to_mermaid(trace), "the Mermaid diagram")
    if getattr(args, "svg", None):
        _write(args.svg, SequenceDiagram(trace).to_svg(), "the SVG sequence diagram")


def run_command(args: argparse.Namespace) -> int:
    """Run one scenario and save or print its trace."""
    from mcp_sim.trace.events import Trace
    from mcp_sim.trace.table import TraceTable

    module = _load_scenarios()
    if module is None:
        print("mcp-sim: the scenario registry (mcp_sim.scenarios) is not available yet", file=sys.stderr)
        return 2
    if args.scenario not in module.SCENARIOS:
        known = ", ".join(map(str, module.SCENARIOS)) or "none"
        print(f"mcp-sim: unknown scenario {args.scenario!r}; known: {known}", file=sys.stderr)
        return 2
    options = {k: v for k, v in (("revision", args.revision), ("transport", args.transport), ("seed", args.seed))
               if v is not None}
    result = module.run_scenario(args.scenario, **options)
    bits = [args.scenario, *(str(options[k]) for k in ("revision", "transport") if k in options)]
    trace = Trace(Trace.of(result), title=", ".join(bits))
    if not args.quiet:
        print(TraceTable(trace).to_text())
    _export(trace, args)
    return 0


def show_command(args: argparse.Namespace) -> int:
    """Print a saved JSON Lines trace as a table, or export it."""
    from mcp_sim.trace.jsonl import load_jsonl
    from mcp_sim.trace.table import TraceTable

    try:
        trace = load_jsonl(args.file)
    except (OSError, ValueError) as exc:
        print(f"mcp-sim: cannot read {args.file}: {exc}", file=sys.stderr)
        return 2
    if args.link or args.method:
        trace = trace.filter(link=args.link, method=args.method)
    trace.title = Path(args.file).name
    exporting = any(getattr(args, k, None) for k in ("html", "mermaid", "svg"))
    if not exporting or not args.quiet:
        print(TraceTable(trace).to_text())
    _export(trace, argparse.Namespace(html=args.html, mermaid=args.mermaid, svg=args.svg))
    return 0


def delegate(name: str, argv: Sequence[str]) -> int:
    """Hand ``argv`` to the function behind subcommand ``name``; a clear message if it is missing."""
    module_name, function_name, _ = DELEGATES[name]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise  # a real import error inside the module: show it, do not hide it
        print(f"mcp-sim {name}: not available ({module_name} is not installed)", file=sys.stderr)
        return 2
    function: Callable[[list[str]], int | None] | None = getattr(module, function_name, None)
    if function is None:
        print(f"mcp-sim {name}: not available ({module_name}.{function_name} is missing)", file=sys.stderr)
        return 2
    code = function(list(argv))
    return 0 if code is None else int(code)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mcp-sim", description="Simulate, trace and learn the Model Context "
                                                                 "Protocol.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.add_parser("scenarios", help="list the ready-made scenarios")

    run = sub.add_parser("run", help="run a scenario and save its trace")
    run.add_argument("scenario", help="a name from `mcp-sim scenarios`")
    run.add_argument("--revision", choices=list(REVISIONS), help="MCP revision (default: the scenario's)")
    run.add_argument("--transport", choices=TRANSPORTS, help="transport (default: the scenario's)")
    run.add_argument("--seed", type=int, help="random seed (same seed, same story)")
    run.add_argument("--quiet", action="store_true", help="do not print the trace table")
    _export_options(run, with_trace=True)

    show = sub.add_parser("show", help="print or export a saved trace (JSON Lines)")
    show.add_argument("file", help="a .jsonl trace written by `mcp-sim run --trace`")
    show.add_argument("--link", help="only this link")
    show.add_argument("--method", help="only this method")
    show.add_argument("--quiet", action="store_true", help="do not print the table when exporting")
    _export_options(show, with_trace=False)

    for name, (_, _, text) in DELEGATES.items():
        sub.add_parser(name, help=text, add_help=False)
    return parser


def _export_options(parser: argparse.ArgumentParser, *, with_trace: bool) -> None:
    if with_trace:
        parser.add_argument("--trace", metavar="FILE.jsonl", help="write the trace as JSON Lines")
    parser.add_argument("--html", metavar="FILE", help="write a standalone HTML page (diagram, table, JSON)")
    parser.add_argument("--mermaid", metavar="FILE", help="write a Mermaid sequenceDiagram")
    parser.add_argument("--svg", metavar="FILE", help="write the SVG sequence diagram")


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "scenarios": scenarios_command,
    "run": run_command,
    "show": show_command,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``mcp-sim``; returns the exit code."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list and args_list[0] in DELEGATES:
        return delegate(args_list[0], args_list[1:])
    parser = build_parser()
    args = parser.parse_args(args_list)
    if args.command is None:
        parser.print_help()
        return 2
    return COMMANDS[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
