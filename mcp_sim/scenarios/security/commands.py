"""``mcp-sim lab``: the security labs from a terminal.

``mcp-sim lab list`` shows every lab of the table (:data:`~mcp_sim.scenarios.security.LABS`) under the
layer whose boundary its attack crosses, sorted by name within each layer, with a one-line summary
and its attack variants.
``mcp-sim lab run tool-poisoning --config vulnerable --seed 3 --variant title`` runs one attack and
says whether it worked, what the attacker obtained (or what stopped it), whether the user's own
legitimate work still succeeded, and why — the explanation names the attacker, what they control, the
boundary and what the fix does not cover. ``--trace FILE`` saves the run's trace as JSON Lines, which
``mcp-sim show FILE`` reads like any other trace.

Try the same seed against both configurations: only the defence differs, so the difference in the
outcome is the defence's doing. Both subcommands take ``--json`` for scripts.

:func:`lab_list` and :func:`lab_report` build the data; :func:`lab_command` is the command itself and
the only function here that writes to stdout.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from mcp_sim.scenarios.security import LABS, run_lab
from mcp_sim.security.lab import CONFIGS, LAYERS, LabResult


def lab_list() -> list[dict[str, Any]]:
    """One row per lab — name, layer, title, summary and the variant names — grouped by the layer
    whose boundary the attack crosses (in the course's order of layers) and sorted by name within
    each group, so a lab is found where its layer is."""
    order = {layer: i for i, layer in enumerate(LAYERS)}
    labs = sorted(LABS.items(), key=lambda item: (order[item[1].facts.layer], item[0]))
    return [{"name": name, "layer": lab.facts.layer, "title": lab.facts.title, "summary": lab.facts.summary,
             "variants": ["main", *lab.variants]} for name, lab in labs]


def lab_report(result: LabResult) -> dict[str, Any]:
    """What one run of a lab showed, as JSON-able data."""
    facts = result.facts
    return {"lab": result.lab, "title": facts.title, "layer": facts.layer, "config": result.config,
            "seed": result.seed, "variant": result.variant,
            "attack_succeeded": result.succeeded, "legitimate_succeeded": result.legitimate,
            "obtained": result.obtained if result.succeeded else "",
            "stopped_by": "" if result.succeeded else result.stopped_by,
            "evidence": result.evidence, "explanation": result.explanation,
            "threat_model": {"attacker": facts.attacker, "controls": facts.controls, "goal": facts.goal,
                             "boundary": facts.boundary, "not_covered": facts.not_covered},
            "rule": facts.rule, "rules": list(facts.rules), "attack_events": len(result.attack_events()), "events": len(result.trace.events)}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mcp-sim lab", description="List the security labs or run one attack.")
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = sub.add_parser("list", help="every lab: name, layer, summary, variants")
    listing.add_argument("--json", action="store_true", help="print the list as JSON")
    run = sub.add_parser("run", help="run one lab's attack against one configuration")
    run.add_argument("name", help="a lab name from `mcp-sim lab list`")
    run.add_argument("--config", required=True, choices=CONFIGS, help="which defence the lab runs with")
    run.add_argument("--seed", type=int, default=0, help="random seed: names, amounts, paths (default 0)")
    run.add_argument("--variant", default="main", help="another attack on the same lesson (see `lab list`)")
    run.add_argument("--trace", metavar="FILE.jsonl", help="save the run's trace as JSON Lines")
    run.add_argument("--json", action="store_true", help="print the result as JSON")
    return parser


def _out(text: str) -> None:
    """The command's output (this is the command line, not library code)."""
    sys.stdout.write(text + "\n")


def _error(text: str) -> int:
    sys.stderr.write(f"mcp-sim lab: {text}\n")
    return 2


def _print_list(rows: list[dict[str, Any]]) -> None:
    """A heading per layer (``roles: 9 labs``), then its labs indented: name, summary, variants."""
    width = max((len(r["name"]) for r in rows), default=0)
    layers = list(dict.fromkeys(r["layer"] for r in rows))
    for i, layer in enumerate(layers):
        group = [r for r in rows if r["layer"] == layer]
        _out(("" if i == 0 else "\n") + f"{layer}: {len(group)} lab{'s' if len(group) != 1 else ''}")
        for r in group:
            _out(f"  {r['name']:<{width}}  {r['summary']}")
            _out(f"  {'':<{width}}  variants: {', '.join(r['variants'])}")


def _print_report(report: dict[str, Any]) -> None:
    verdict = "SUCCEEDED" if report["attack_succeeded"] else "FAILED"
    _out(f"{report['title']} ({report['lab']}) — {report['config']}, seed {report['seed']}, "
         f"variant {report['variant']}")
    _out(f"attack: {verdict}")
    _out(f"  obtained: {report['obtained']}" if report["attack_succeeded"] else f"  stopped by: {report['stopped_by']}")
    _out(f"legitimate work: {'succeeded' if report['legitimate_succeeded'] else 'FAILED'}")
    _out("")
    _out(report["explanation"])


def lab_command(args: list[str]) -> int:
    """``mcp-sim lab list [--json]`` and ``mcp-sim lab run NAME --config vulnerable|fixed [--seed N]
    [--variant V] [--trace FILE] [--json]``. Returns 0, or 2 for a usage error or an unknown name."""
    try:
        ns = _parser().parse_args(args)
    except SystemExit as exc:  # argparse already printed the usage message
        return 0 if exc.code == 0 else 2
    if ns.action == "list":
        rows = lab_list()
        if ns.json:
            _out(json.dumps(rows, indent=2))
        else:
            _print_list(rows)
        return 0
    lab = LABS.get(ns.name)
    if lab is None:
        return _error(f"unknown lab {ns.name!r}; the labs are: {', '.join(LABS)}")
    if ns.variant != "main" and ns.variant not in lab.variants:
        return _error(f"lab {ns.name!r} has no variant {ns.variant!r}; it has: {', '.join(['main', *lab.variants])}")
    result = run_lab(ns.name, ns.config, ns.seed, ns.variant)
    report = lab_report(result)
    if ns.trace:
        from mcp_sim.trace.events import Trace
        from mcp_sim.trace.jsonl import to_jsonl

        trace = Trace(Trace.of(result.trace), title=f"{ns.name}, {ns.config}, seed {ns.seed}, {ns.variant}")
        to_jsonl(trace, ns.trace)
        report["trace_file"] = ns.trace
    if ns.json:
        _out(json.dumps(report, indent=2, default=str, ensure_ascii=False))
    else:
        _print_report(report)
        if ns.trace:
            _out(f"\nwrote {report['events']} events (JSON Lines) to {ns.trace}; read it with `mcp-sim show`")
    return 0
