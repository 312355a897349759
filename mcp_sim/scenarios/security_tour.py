"""The security chapter's guide to the lab table: menus, maps and tables built from ``LABS`` (course
chapter 10).

Nothing here knows a particular lab. Every table, menu and count is read from
:data:`mcp_sim.scenarios.security.LABS` when it is drawn, so a lab added to that table appears in the
chapter without a change here; every sentence about a lab comes from its
:class:`~mcp_sim.security.lab.LabFacts` or from a run's :class:`~mcp_sim.security.lab.LabResult`.

* :class:`TrustMap` — who must check what from whom: the user, the Host and its model, the Clients,
  local and remote Servers, tenants, the authorization server and the local machine, with each
  boundary drawn in the style of its layer;
* :func:`labs_by_layer` and :class:`LabTable` — the labs grouped by the layer whose boundary they cross;
* :func:`verdict`, :class:`BoundaryCard` and :class:`VariantTable` — one run in a sentence, what the fix
  restores and leaves open, and every variant against both configurations;
* :func:`describe_defence` — the one value that differs between ``vulnerable`` and ``fixed``;
* :func:`command_line` and :func:`lab_trace` — the same run from a terminal, and as a trace for the
  trace player's *fork*.
"""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import graphviz

from mcp_sim.scenarios.security import LABS, run_lab
from mcp_sim.security.lab import CONFIGS, LAYERS, Config, Lab, LabResult, Layer
from mcp_sim.trace.graphviz_svg import GraphvizDiagram
from mcp_sim.trace.reading import CELL, LONG_CELL, TABLE
from mcp_sim.trace.recorder import Recorder

FONT = "Helvetica"

LAYER_WORDS: Mapping[Layer, str] = MappingProxyType({
    "roles": "who may decide: the user, the Host, its model and each Server",
    "capabilities": "what a feature's messages may carry and what the receiver may believe of them",
    "transports": "how bytes reach a peer: pipes, local ports, origins, handles",
    "authorization": "who may use a token, a consent or a tenant's data",
})
"""One line per layer, for tables and the map's legend."""

LAYER_LINES: Mapping[Layer, str] = MappingProxyType({"roles": "solid", "capabilities": "dashed",
                                                     "transports": "dotted", "authorization": "bold"})
"""Each layer's line style on the trust map (the label names the layer too: never style alone)."""


def labs_by_layer(labs: Mapping[str, Lab] = LABS) -> dict[Layer, list[Lab]]:
    """Every lab under the layer its facts name, layers in course order, labs in table order."""
    grouped: dict[Layer, list[Lab]] = {layer: [] for layer in LAYERS}
    for lab in labs.values():
        grouped[lab.facts.layer].append(lab)
    return grouped


# --------------------------------------------------------------------------------------------------
# The trust map
# --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Party:
    """One participant on the trust map, and the enclosure it sits in."""

    key: str
    label: str
    zone: str
    shape: str = "box"


@dataclass(frozen=True)
class Crossing:
    """Input that crosses a boundary: from ``source`` to ``target``, which must check ``check``."""

    source: str
    target: str
    carries: str
    check: str
    layer: Layer


PARTIES: tuple[Party, ...] = (
    Party("user", "User\n(a person)", "", "ellipse"),
    Party("host", "Host\npolicy, approvals", "host"),
    Party("model", "Model\nproposes, never runs", "host"),
    Party("clients", "Clients\none per Server", "host"),
    Party("local", "Local Server\nstdio child or localhost HTTP", "machine"),
    Party("machine", "Files, keys, environment", "machine", "folder"),
    Party("page", "A web page\nin the user's browser", "browser"),
    Party("third", "Third-party Server\n(anyone can publish one)", "internet"),
    Party("remote", "Remote MCP Server", "remote"),
    Party("tenants", "Tenants' data\nA | B", "remote", "cylinder"),
    Party("auth", "Authorization server", "internet"),
)
"""Who appears on the map. Zones: ``host`` (the host process) inside ``machine`` (the user's machine),
``browser``, ``internet`` and ``remote`` (a remote Server with its tenants)."""

CROSSINGS: tuple[Crossing, ...] = (
    Crossing("model", "host", "proposed calls", "policy, then the user", "roles"),
    Crossing("user", "host", "approvals", "the Host's own question only", "roles"),
    Crossing("third", "clients", "tool text and results", "claims: calls confirmed with arguments", "roles"),
    Crossing("clients", "remote", "requestState, handles, cached lists", "re-checked on return", "capabilities"),
    Crossing("remote", "clients", "sampling and form requests", "budgets, URL mode for secrets", "capabilities"),
    Crossing("local", "clients", "stdout bytes", "protocol messages only", "transports"),
    Crossing("page", "local", "requests from a browser", "Origin checked", "transports"),
    Crossing("local", "machine", "file and process access", "a sandbox, not good manners", "transports"),
    Crossing("user", "auth", "consent, in the browser", "per client, exact redirect URIs", "authorization"),
    Crossing("auth", "clients", "tokens", "issued for one resource", "authorization"),
    Crossing("clients", "remote", "bearer tokens", "audience must be this Server", "authorization"),
    Crossing("remote", "tenants", "queries", "the caller's own tenant only", "authorization"),
)
"""Every boundary on the map: what crosses it and what the receiving side must check."""

ZONES: Mapping[str, str] = MappingProxyType({
    "machine": "the user's machine",
    "host": "host process",
    "browser": "browser (another origin)",
    "internet": "the internet",
    "remote": "a remote MCP Server",
})


DEPTH: Mapping[str, int] = MappingProxyType({"": 0, "host": 1, "machine": 1, "browser": 1, "internet": 2,
                                             "remote": 2})
"""How far down the page each zone sits: the user on top, the user's machine, then the internet."""


class TrustMap(GraphvizDiagram):
    """Who must check what from whom. Each arrow carries input across a boundary; its label says what
    the receiving side must check. The legend counts the labs that attack each layer, read from
    ``labs`` when drawn."""

    title = "Trust map: what crosses each boundary, and who must check it"

    def __init__(self, labs: Mapping[str, Lab] = LABS) -> None:
        self.counts = {layer: len(group) for layer, group in labs_by_layer(labs).items()}

    def description(self) -> str:
        moves = "; ".join(f"{c.carries} go from {self._name(c.source)} to {self._name(c.target)}, "
                          f"which must check: {c.check} ({c.layer})" for c in CROSSINGS)
        return f"Boundaries: {moves}."

    @staticmethod
    def _name(key: str) -> str:
        return next(p.label for p in PARTIES if p.key == key).split("\n")[0]

    def legend(self) -> list[str]:
        """One line per layer: its line style and how many labs attack it."""
        return [f"{layer}: {LAYER_LINES[layer]} line, {self.counts[layer]} lab(s)" for layer in LAYERS]

    def graph(self) -> graphviz.Digraph:
        g = graphviz.Digraph("trust")
        key = " · ".join(f"{layer} {LAYER_LINES[layer]} ({self.counts[layer]} labs)" for layer in LAYERS)
        g.attr(rankdir="TB", fontname=FONT, fontsize="12", label=f"{self.title}\nline style = layer: {key}",
               labelloc="t", newrank="true", nodesep="0.5", ranksep="0.6")
        g.attr("node", shape="box", style="rounded", fontname=FONT, fontsize="11")
        g.attr("edge", fontname=FONT, fontsize="9")

        def place(graph: Any, zone: str) -> None:
            for party in PARTIES:
                if party.zone == zone:
                    graph.node(party.key, party.label, shape=party.shape)

        place(g, "")
        with g.subgraph(name="cluster_machine") as machine:
            machine.attr(label=ZONES["machine"], style="dashed")
            with machine.subgraph(name="cluster_host") as host:
                host.attr(label=ZONES["host"], style="bold")
                place(host, "host")
            place(machine, "machine")
            with machine.subgraph(name="cluster_browser") as browser:
                browser.attr(label=ZONES["browser"], style="dotted")
                place(browser, "browser")
        with g.subgraph(name="cluster_internet") as internet:
            internet.attr(label=ZONES["internet"], style="dashed")
            place(internet, "internet")
            with internet.subgraph(name="cluster_remote") as remote:
                remote.attr(label=ZONES["remote"], style="bold")
                place(remote, "remote")
        g.edge("host", "clients", label="owns (1:1)", color="gray40", fontcolor="gray25", arrowhead="none")
        zone = {party.key: party.zone for party in PARTIES}
        for c in CROSSINGS:
            label = f"{c.carries}\n→ {c.check}\n[{c.layer}]"
            if DEPTH[zone[c.source]] > DEPTH[zone[c.target]]:  # drawn upwards, so the internet stays below
                g.edge(c.target, c.source, label=label, style=LAYER_LINES[c.layer], dir="back")
            else:
                g.edge(c.source, c.target, label=label, style=LAYER_LINES[c.layer])
        return g

    def dot_source(self) -> str:
        return self.graph().source

    def to_text(self) -> str:
        lines = [self.title]
        lines += [f"  {self._name(c.source)} → {self._name(c.target)}: {c.carries}; must check: {c.check} "
                  f"[{c.layer}]" for c in CROSSINGS]
        return "\n".join([*lines, *(f"  {line}" for line in self.legend())])


# --------------------------------------------------------------------------------------------------
# Tables of labs
# --------------------------------------------------------------------------------------------------

def _html_table(caption: str, head: tuple[str, ...], rows: Sequence[tuple[str, ...]], css: str) -> str:
    """A table of sentences: every cell left-aligned and wrapping, so it fits the notebook's width."""
    esc = html.escape
    header = "".join(f"<th scope='col' style='{CELL}'>{esc(h)}</th>" for h in head)
    body = "".join(f"<tr><th scope='row' style='{CELL}'>" + esc(r[0]) + "</th>"
                   + "".join(f"<td style='{LONG_CELL}'>{esc(c)}</td>" for c in r[1:]) + "</tr>" for r in rows)
    return (f"<table class='{css}' style='{TABLE}'><caption style='text-align:left'>{esc(caption)}</caption>"
            f"<thead><tr>{header}</tr></thead><tbody>{body}</tbody></table>")


def _text_table(head: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> str:
    widths = [max(len(x) for x in col) for col in zip(head, *rows, strict=True)][:-1]

    def line(cells: tuple[str, ...]) -> str:
        return ("  ".join(c.ljust(w) for c, w in zip(cells[:-1], widths, strict=True)) + "  " + cells[-1]).rstrip()

    return "\n".join([line(head), *(line(r) for r in rows)])


class LabTable:
    """The labs of one layer (or all of them) as a table: name, title, what goes wrong, variants."""

    head = ("lab", "layer", "title", "what goes wrong", "variants")

    def __init__(self, layer: Layer | None = None, labs: Mapping[str, Lab] = LABS) -> None:
        self.layer = layer
        chosen = [lab for lab in labs.values() if layer is None or lab.facts.layer == layer]
        self.rows = [(lab.name, lab.facts.layer, lab.facts.title, lab.facts.summary,
                      ", ".join(["main", *lab.variants])) for lab in chosen]

    @property
    def names(self) -> list[str]:
        return [row[0] for row in self.rows]

    def _repr_html_(self) -> str:
        caption = (f"Labs that cross the {self.layer} boundary ({LAYER_WORDS[self.layer]})" if self.layer
                   else "Every lab")
        return _html_table(f"{caption}: {len(self.rows)}", self.head, self.rows, "mcp-sim-lab-table")

    def __str__(self) -> str:
        return _text_table(self.head, self.rows)

    __repr__ = __str__


def verdict(result: LabResult) -> str:
    """One run in one sentence: which configuration, whether the attack worked, whether the
    legitimate work still did, and how many of the trace's events belong to the attack
    (:meth:`LabResult.verdict`; ``result.headline()`` is the same sentence to display)."""
    return result.verdict()


@dataclass(frozen=True)
class BoundaryCard:
    """What a lab's fix restores and what it leaves open, read from the lab's facts."""

    result: LabResult

    def rows(self) -> list[tuple[str, str]]:
        f = self.result.facts
        return [("layer", f.layer), ("attacker", f.attacker), ("they control", f.controls), ("they want", f.goal),
                ("the mistake", f.mistake), ("the boundary", f.boundary), ("the fix", f.fix), ("the rule", f.rule_cited()),
                ("not covered", f.not_covered)]

    def _repr_html_(self) -> str:
        esc = html.escape
        body = "".join(f"<tr><th scope='row' style='{CELL};white-space:nowrap'>{esc(k)}</th>"
                       f"<td style='{LONG_CELL}'>{esc(v)}</td></tr>" for k, v in self.rows())
        return (f"<table class='mcp-sim-boundary' style='{TABLE}'><caption style='text-align:left'>"
                f"{esc(self.result.facts.title)}: the boundary</caption><tbody>{body}</tbody></table>")

    def __str__(self) -> str:
        return "\n".join(f"{k}: {v}" for k, v in self.rows())

    __repr__ = __str__


class VariantTable:
    """Every variant of one lab against both configurations, with the legitimate work's fate: the
    cases a fix narrower than the lesson would miss."""

    head = ("variant", "what it changes", "vulnerable", "fixed", "legitimate work (fixed)")

    def __init__(self, name: str, seed: int = 0, labs: Mapping[str, Lab] = LABS) -> None:
        lab = labs[name]
        self.name = name
        self.results: dict[tuple[str, Config], LabResult] = {
            (variant, config): lab.run(config, seed, variant) for variant in ("main", *lab.variants)
            for config in CONFIGS}
        self.rows = [(variant, lab.variants.get(variant, "the attack as first told"),
                      self._word(self.results[variant, "vulnerable"]), self._word(self.results[variant, "fixed"]),
                      "succeeded" if self.results[variant, "fixed"].legitimate else "FAILED")
                     for variant in ("main", *lab.variants)]

    @staticmethod
    def _word(result: LabResult) -> str:
        return "attack succeeded" if result.succeeded else "attack stopped"

    def _repr_html_(self) -> str:
        return _html_table(f"{self.name}: every variant, both configurations", self.head, self.rows,
                           "mcp-sim-variant-table")

    def __str__(self) -> str:
        return _text_table(self.head, self.rows)

    __repr__ = __str__


def describe_defence(value: Any) -> str:
    """A defence value in words: a dataclass as ``Type(field=…)`` with functions by name, so the one
    difference between ``vulnerable`` and ``fixed`` can be read (and no memory address shows)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = ", ".join(f"{f.name}={describe_defence(getattr(value, f.name))}"
                           for f in dataclasses.fields(value) if f.repr)
        return f"{type(value).__name__}({fields})"
    if callable(value):
        return str(getattr(value, "__name__", type(value).__name__))
    if isinstance(value, str | int | float | bool | type(None)):
        return repr(value)
    if isinstance(value, tuple | list | frozenset | set):
        return "[" + ", ".join(describe_defence(v) for v in value) + "]"
    return type(value).__name__


def command_line(name: str, config: Config = "vulnerable", seed: int = 0, variant: str = "main",
                 trace: str | None = None) -> str:
    """The terminal command that runs the same lab run: ``mcp-sim lab run NAME --config …``."""
    words = ["mcp-sim", "lab", "run", name, "--config", config, "--seed", str(seed)]
    if variant != "main":
        words += ["--variant", variant]
    if trace:
        words += ["--trace", trace]
    return " ".join(words)


def lab_trace(name: str, config: Config = "vulnerable", seed: int = 0, variant: str = "main") -> Recorder:
    """The trace of one lab run: a runner for the trace player, whose *fork* can change ``config``,
    ``seed`` or ``variant`` (``functools.partial(lab_trace, name)``)."""
    return run_lab(name, config, seed, variant).trace


__all__ = ["CROSSINGS", "LAYER_WORDS", "PARTIES", "BoundaryCard", "Crossing", "LabTable", "Party", "TrustMap",
           "VariantTable", "command_line", "describe_defence", "lab_trace", "labs_by_layer", "verdict"]
