"""The security chapter's lab explorer and its guide to the lab table (mcp_sim.widgets.lab_explorer,
mcp_sim.scenarios.security_tour): everything is read from the lab table, so a new lab appears in
every menu, table and count without a change; every sentence comes from a real run or the lab's facts."""

from __future__ import annotations

import dataclasses
import re
from types import MappingProxyType

import pytest

from mcp_sim.scenarios.security import LABS, run_lab
from mcp_sim.scenarios.security_tour import (
    CROSSINGS,
    PARTIES,
    BoundaryCard,
    LabTable,
    TrustMap,
    VariantTable,
    command_line,
    describe_defence,
    lab_trace,
    labs_by_layer,
    verdict,
)
from mcp_sim.security.lab import LAYERS
from mcp_sim.widgets.lab_explorer import LabExplorer, lab_explorer, lab_menu, play_lab, result_html
from mcp_sim.widgets.player import Change

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
NAME = "token-passthrough"


def with_new_lab() -> MappingProxyType:
    """The lab table plus one lab nobody has written about: a copy of a lab under a new name."""
    base = LABS[NAME]
    extra = dataclasses.replace(base, name="brand-new-lab",
                                facts=dataclasses.replace(base.facts, title="A brand-new lab"))
    return MappingProxyType({**LABS, extra.name: extra})


# --- the guide to the lab table ---------------------------------------------------------------------

def test_labs_by_layer_holds_every_lab_once_in_course_order() -> None:
    grouped = labs_by_layer()
    assert list(grouped) == list(LAYERS)
    names = [lab.name for group in grouped.values() for lab in group]
    assert sorted(names) == sorted(LABS)
    for layer, group in grouped.items():
        assert all(lab.facts.layer == layer for lab in group)


def test_a_new_lab_appears_in_every_table_menu_and_count() -> None:
    labs = with_new_lab()
    layer = labs["brand-new-lab"].facts.layer
    assert "brand-new-lab" in LabTable(layer, labs).names
    assert "brand-new-lab" in LabTable(None, labs).names
    assert ("brand-new-lab" in dict((v, k) for k, v in lab_menu(labs)))
    assert TrustMap(labs).counts[layer] == TrustMap().counts[layer] + 1
    explorer = LabExplorer("brand-new-lab", labs=labs, seed=2)
    assert explorer.result.lab == "brand-new-lab" and explorer.lab.value == "brand-new-lab"


def test_lab_table_rows_come_from_the_facts() -> None:
    table = LabTable("authorization")
    assert table.names == [lab.name for lab in labs_by_layer()["authorization"]]
    for row in table.rows:
        lab = LABS[row[0]]
        assert row[1:4] == (lab.facts.layer, lab.facts.title, lab.facts.summary)
        assert row[4].split(", ") == ["main", *lab.variants]
    assert ">Labs that cross the authorization boundary (who may use" in table._repr_html_()
    assert str(table).splitlines()[0].startswith("lab")


def test_trust_map_draws_every_party_and_crossing_with_its_layer() -> None:
    trust = TrustMap()
    dot = trust.dot_source()
    for party in PARTIES:
        assert f"\t{party.key} [" in dot
    for crossing in CROSSINGS:
        forward, upward = (re.search(rf'\t{a} -> {b} \[label="{re.escape(crossing.carries)}[^"]*\[{crossing.layer}\]"'
                                     r"([^\]]*)\]", dot)
                           for a, b in ((crossing.source, crossing.target), (crossing.target, crossing.source)))
        assert (forward is None) != (upward is None), crossing
        attributes = (forward or upward).group(1)  # type: ignore[union-attr]
        assert ("dir=back" in attributes) == (upward is not None)  # drawn upwards, the arrow still points at the checker
    assert {c.layer for c in CROSSINGS} == set(LAYERS), "every layer has a boundary on the map"
    text = trust.to_text()
    for layer in LAYERS:
        assert f"{layer}: " in text and f"{trust.counts[layer]} lab(s)" in text
    assert trust.description().startswith("Boundaries:")
    assert repr(trust).startswith("<TrustMap ")  # stable text form, no address
    svg = trust.to_svg()
    if svg is not None:  # graphviz-pure is a dependency; the text form stands in without it
        assert svg.lstrip().startswith("<svg") and "Trust map" in svg


def test_verdict_and_boundary_card_read_the_run_and_the_facts() -> None:
    vulnerable, fixed = run_lab(NAME, "vulnerable", 1), run_lab(NAME, "fixed", 1)
    assert "the attack SUCCEEDED" in verdict(vulnerable) and "the attack FAILED" in verdict(fixed)
    assert f"{len(fixed.attack_events())} of {len(fixed.trace.events)} events" in verdict(fixed)
    card = BoundaryCard(fixed)
    facts = LABS[NAME].facts
    assert dict(card.rows()) == {"layer": facts.layer, "attacker": facts.attacker, "they control": facts.controls,
                                 "they want": facts.goal, "the mistake": facts.mistake, "the boundary": facts.boundary,
                                 "the fix": facts.fix, "the rule": facts.rule_cited(), "not covered": facts.not_covered}
    assert facts.not_covered in str(card) and "not covered" in card._repr_html_()
    assert all(rule_id in card.rows()[7][1] for rule_id in facts.rules)  # the rules, cited by id


def test_variant_table_runs_every_variant_in_both_configurations() -> None:
    table = VariantTable(NAME, seed=3)
    lab = LABS[NAME]
    assert [row[0] for row in table.rows] == ["main", *lab.variants]
    assert len(table.results) == 2 * (1 + len(lab.variants))
    for (variant, config), result in table.results.items():
        assert (result.variant, result.config, result.seed) == (variant, config, 3)
    for row in table.rows:  # the words are the runs' outcomes
        assert row[2] == ("attack succeeded" if table.results[row[0], "vulnerable"].succeeded else "attack stopped")
        assert row[3] == ("attack succeeded" if table.results[row[0], "fixed"].succeeded else "attack stopped")


def test_describe_defence_names_the_one_difference_without_addresses() -> None:
    for lab in LABS.values():
        for value in lab.defences.values():
            words = describe_defence(value)
            assert " at 0x" not in words and words.startswith(type(value).__name__)
    seal = LABS["requeststate-tampering"].defences
    assert describe_defence(seal["vulnerable"]) != describe_defence(seal["fixed"])

    @dataclasses.dataclass
    class Defence:
        check: object
        names: tuple[str, ...] = ("a",)
        limit: int = 3

    def strict() -> None: ...

    assert describe_defence(Defence(strict)) == "Defence(check=strict, names=['a'], limit=3)"


def test_command_line_matches_the_lab_command() -> None:
    assert command_line("dns-rebinding") == "mcp-sim lab run dns-rebinding --config vulnerable --seed 0"
    assert command_line("dns-rebinding", "fixed", 4, "null-origin", trace="run.jsonl") == (
        "mcp-sim lab run dns-rebinding --config fixed --seed 4 --variant null-origin --trace run.jsonl")


def test_lab_trace_is_the_runs_recorder() -> None:
    assert [e.seq for e in lab_trace(NAME, "fixed", 2)] == [e.seq for e in run_lab(NAME, "fixed", 2).trace.events]


# --- the explorer -------------------------------------------------------------------------------------

def test_menu_lists_every_lab_grouped_by_layer() -> None:
    menu = lab_menu()
    assert sorted(name for _, name in menu) == sorted(LABS)
    layers = [label.split(" · ")[0] for label, _ in menu]
    assert layers == sorted(layers, key=LAYERS.index)


def test_explorer_runs_at_once_and_its_static_copy_shows_the_run() -> None:
    explorer = lab_explorer(NAME, config="vulnerable", seed=1)
    result = explorer.result
    assert (result.lab, result.config, result.seed, result.variant) == (NAME, "vulnerable", 1, "main")
    static = explorer.static_html()
    assert static.startswith("<div class='mcp-sim-lab-explorer-static'>")
    for part in (verdict(result), "The attack&#x27;s messages", command_line(NAME, "vulnerable", 1),
                 describe_defence(LABS[NAME].defences["vulnerable"])):
        assert part.replace("'", "&#x27;") in static or part in static
    assert not re.search(r" at 0x[0-9a-f]{6,}", static)
    bundle = explorer._repr_mimebundle_()
    assert WIDGET_VIEW in bundle and bundle["text/html"] == static
    assert bundle["text/plain"] == f"Lab explorer — {verdict(result)}"


def test_controls_rerun_the_lab() -> None:
    explorer = LabExplorer(NAME, seed=1)
    explorer.config.value = "fixed"
    assert explorer.result.config == "fixed" and not explorer.result.succeeded
    variant = next(iter(LABS[NAME].variants))
    explorer.variant.value = variant
    assert explorer.result.variant == variant and "variant " + variant in explorer.output.value
    explorer.seed.value = 7
    explorer.run_button.click()
    assert explorer.result.seed == 7
    other = next(name for name in LABS if name != NAME and LABS[name].variants)
    explorer.lab.value = other  # a new lab starts from its main variant, with its own variant menu
    assert (explorer.result.lab, explorer.result.variant) == (other, "main")
    assert [value for _, value in explorer.variant.options] == ["main", *LABS[other].variants]
    assert explorer.config.value == "fixed" and explorer.result.config == "fixed"


def test_rerun_from_code_moves_the_controls() -> None:
    explorer = LabExplorer(NAME)
    result = explorer.rerun(lab="dns-rebinding", config="fixed", seed=3, variant="null-origin")
    assert (result.lab, result.config, result.seed, result.variant) == ("dns-rebinding", "fixed", 3, "null-origin")
    assert (explorer.lab.value, explorer.config.value, explorer.seed.value, explorer.variant.value) == (
        "dns-rebinding", "fixed", 3, "null-origin")
    assert explorer.player.state.trace.events[0].seq == result.trace.events[0].seq


def test_result_html_says_when_nothing_is_marked() -> None:
    result = run_lab(NAME, "fixed", 1)
    result.trace.events[:] = [dataclasses.replace(e, marks=()) for e in result.trace.events]
    assert "No message of this run is marked attack." in result_html(result, LABS[NAME].defences["fixed"])


@pytest.mark.parametrize("config", ["vulnerable", "fixed"])
def test_play_lab_opens_on_the_first_attack_message_and_forks_into_the_other_configuration(config: str) -> None:
    result = run_lab(NAME, config, 1)  # type: ignore[arg-type]
    player = play_lab(result)
    assert player.state.current is not None and player.state.current.seq == result.attack_events()[0].seq
    other = "fixed" if config == "vulnerable" else "vulnerable"
    fork = player.state.fork(Change.option("config", other))
    assert [e.seq for e in fork.forked] == [e.seq for e in run_lab(NAME, other, 1).trace.events]  # type: ignore[arg-type]
