"""``mcp-sim rules``: the rulebook on the command line.

``mcp-sim rules`` prints every rule the course teaches as a short table (strength, id, revisions,
where it comes from); ``--chapter NN`` keeps a chapter's rules, ``--revision R`` the rules that hold in
revision R, ``--id ID`` shows one rule in full and ``--json`` prints them as data::

    {"rules": [{"id", "text", "strength", "revisions", "provenance", "source": {"page", "section",
                "url", ...}, "roles", "reason", ...}]}

The words come from :mod:`mcp_sim.protocol.rulebook`, the one place they live.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from mcp_sim.protocol import rulebook


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mcp-sim rules", description="List the rules the course teaches, each "
                                     "at its strength (MUST / SHOULD / MAY) with its source.")
    parser.add_argument("--chapter", metavar="NN", help="only the rules chapter NN teaches (e.g. 06)")
    parser.add_argument("--revision", metavar="R", choices=rulebook.RULE_REVISIONS,
                        help="only the rules that hold in revision R (e.g. 2026-07-28)")
    parser.add_argument("--id", metavar="ID", help="one rule, in full")
    parser.add_argument("--json", action="store_true", help="print the rules as JSON")
    return parser


def rules_command(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(list(argv))
    try:
        ids = [args.id] if args.id else None
        rules = rulebook.select(chapter=args.chapter, revision=args.revision, ids=ids)
    except rulebook.UnknownRule as exc:
        print(f"mcp-sim rules: {exc.args[0]}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({"rules": [r.as_json() for r in rules]}, indent=2, ensure_ascii=False))
        return 0
    if args.id:
        rule = rules[0]
        print(rule.cite())
        print(f"  holds in: {', '.join(rule.revisions)}; binds: {', '.join(rule.roles)}")
        for label, text in (("other era", rule.other_era), ("why a choice", rule.reason),
                            ("also compliant", rule.alternatives)):
            if text:
                print(f"  {label}: {text}")
        return 0
    width = max((len(r.id) for r in rules), default=2)
    for r in rules:
        print(f"{r.strength:10} {r.id:{width}}  {r.era_label:25} {r.where}")
    print(f"{len(rules)} rules")
    return 0
