"""``mcp-sim check``: put a real MCP server under a workload and a nemesis, in both eras, and say
which rules it keeps (course chapter 12).

    mcp-sim check [--era legacy|modern|both] [--workload NAME] [--nemesis LIST] [--seed N]
                  [--deadline S] [--json FILE] [--html FILE] [--trace FILE.jsonl] -- CMD ARG...

The terminal shows a progress line per step on stderr, then a short table of the findings by rule
and era on stdout. The exit status is ``1`` exactly when a rule of ``MUST`` strength is broken, ``0``
otherwise (``SHOULD`` and ``MAY`` findings are advice), and ``2`` when the command line is wrong or
the server cannot be started. With ``--url`` the server is a Streamable HTTP endpoint: the same
workload runs, with every nemesis action but ``restart`` (the server behind a URL is not this
command's process), then the header and status probes of each era.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import anyio

from mcp_sim.bridge.check.findings import CheckReport
from mcp_sim.bridge.check.nemesis import ACTIONS, DEFAULT_NEMESIS
from mcp_sim.bridge.check.run import CheckOptions, run_check
from mcp_sim.bridge.check.workloads import WORKLOADS


def check_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mcp-sim check", usage="mcp-sim check [options] (--url URL | -- CMD ARG...)",
        description="Check a real MCP server: drive it with a standard workload under a seeded nemesis, "
                    "in both eras, and report each broken rule with its rulebook id and strength.")
    parser.add_argument("--url", help="a Streamable HTTP endpoint (the workload, and every nemesis "
                                      "action but restart)")
    parser.add_argument("--era", choices=("legacy", "modern", "both"), default="both")
    parser.add_argument("--workload", choices=sorted(WORKLOADS), default="full")
    parser.add_argument("--nemesis", default=",".join(DEFAULT_NEMESIS),
                        help=f"comma-separated actions out of {','.join(ACTIONS)}; 'none' for none")
    parser.add_argument("--seed", type=int, default=0, help="the nemesis's seed (same seed, same schedule)")
    parser.add_argument("--deadline", type=float, default=10.0, help="seconds to wait for each answer")
    parser.add_argument("--json", metavar="FILE", help="write the report as JSON ('-' for stdout)")
    parser.add_argument("--html", metavar="FILE", help="write a page: findings linked to the sequence diagram")
    parser.add_argument("--trace", metavar="FILE.jsonl", help="save the recorded run as JSON Lines")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    return parser


def summary_table(report: CheckReport) -> str:
    """The short terminal table: one row per (rule, strength, era), then the verdict per era."""
    lines = []
    rows = report.by_rule()
    if rows:
        width = max(len(r) for r, *_ in rows)
        lines.append(f"{'rule':<{width}}  strength  era         count")
        lines += [f"{rule:<{width}}  {strength:<8}  {era:<10}  {count:>5}" for rule, strength, era, count in rows]
    else:
        lines.append("no findings")
    for era, summary in report.eras.items():
        if summary.skipped:
            lines.append(f"{era}: skipped — {summary.skipped}")
            continue
        verdict = "passed" if summary.passed else "FAILED (a MUST is broken)"
        counts = ", ".join(f"{n} {s}" for s, n in summary.findings.items() if n) or "no findings"
        lines.append(f"{era} ({summary.revision}): {verdict}; {summary.requests} requests; {counts}")
    lines.append("passed" if report.passed else "failed: a rule of MUST strength is broken")
    return "\n".join(lines)


def check_command(argv: Sequence[str]) -> int:
    """``mcp-sim check``: 0 passed, 1 a MUST is broken, 2 bad usage or the server would not run."""
    argv = list(argv)
    command: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, command = argv[:cut], argv[cut + 1:]
    parser = check_parser()
    args = parser.parse_args(argv)
    if bool(command) == bool(args.url):
        parser.print_usage(sys.stderr)
        sys.stderr.write("mcp-sim check: give either --url URL or -- CMD ARG...\n")
        return 2
    actions = tuple(a for a in args.nemesis.split(",") if a and a != "none")
    unknown = [a for a in actions if a not in ACTIONS]
    if unknown:
        sys.stderr.write(f"mcp-sim check: unknown nemesis action(s) {', '.join(unknown)}; "
                         f"known: {', '.join(ACTIONS)}\n")
        return 2
    eras = ("legacy", "modern") if args.era == "both" else (args.era,)
    options = CheckOptions(eras=eras, workload=args.workload, nemesis=actions, seed=args.seed,  # type: ignore[arg-type]
                           deadline=args.deadline)

    def progress(text: str) -> None:
        if not args.quiet:
            sys.stderr.write(f"mcp-sim check: {text}\n")

    try:
        report, trace = anyio.run(functools.partial(run_check, args.url or command, options, progress=progress))
    except (OSError, BaseExceptionGroup) as exc:
        # the eras run in a task group, which wraps what went wrong: name the first real cause
        leaf: BaseException = exc
        while isinstance(leaf, BaseExceptionGroup) and leaf.exceptions:
            leaf = leaf.exceptions[0]
        if not isinstance(leaf, OSError):
            raise
        sys.stderr.write(f"mcp-sim check: could not start or reach {args.url or ' '.join(command)}: {leaf}\n")
        return 2
    if args.trace:
        from mcp_sim.trace.jsonl import to_jsonl

        to_jsonl(trace, args.trace)
    if args.html:
        from mcp_sim.bridge.check.page import report_page

        Path(args.html).write_text(report_page(report, trace), encoding="utf-8", newline="\n")
    text = json.dumps(report.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"
    if args.json == "-":
        sys.stdout.write(text)
    else:
        if args.json:
            Path(args.json).write_text(text, encoding="utf-8", newline="\n")
        sys.stdout.write(summary_table(report) + "\n")
    return report.exit_code
