"""The lab explorer: pick a lab, a configuration and a variant; read the outcome, the explanation and
the trace (course chapter 10).

The menu is built from :data:`mcp_sim.scenarios.security.LABS` when the explorer is made, grouped by
the layer each lab's facts name, so a new lab shows up without a change here. Every run is a real
run of the lab (:func:`~mcp_sim.scenarios.security.run_lab`); the panel shows what it returned: whether
the attack worked, whether the legitimate work still did, the explanation composed from the lab's
facts, the defence value the run was given, the attack's messages, the whole trace folded, the
command that repeats the run in a terminal, and a trace player that opens on the first message of
the attack.

Like the fault lab, the explorer has a static copy (:meth:`LabExplorer.static_html`): a page that
cannot run widgets (GitHub, an untrusted notebook) still shows the last run.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from functools import partial
from typing import Any

from mcp_sim.scenarios.security import LABS
from mcp_sim.scenarios.security_tour import command_line, describe_defence, lab_trace, labs_by_layer, verdict
from mcp_sim.security.lab import CONFIGS, Config, Lab, LabResult
from mcp_sim.trace.table import TraceTable
from mcp_sim.widgets.player import TracePlayer

__all__ = ["LabExplorer", "lab_explorer", "lab_menu", "play_lab", "result_html"]


def lab_menu(labs: Mapping[str, Lab] = LABS) -> list[tuple[str, str]]:
    """The explorer's menu: ``(label, name)`` for every lab, grouped by layer in course order."""
    return [(f"{layer} · {lab.name}", lab.name) for layer, group in labs_by_layer(labs).items() for lab in group]


def play_lab(result: LabResult) -> TracePlayer:
    """A trace player for one lab run, opened on the first message of the attack. Its *fork* re-runs
    the same lab: set the option ``config`` to ``"fixed"``, or change ``seed`` or ``variant``."""
    player = TracePlayer(result.trace, runner=partial(lab_trace, result.lab),
                         options={"config": result.config, "seed": result.seed, "variant": result.variant})
    attack = result.attack_events()
    if attack:
        player.state.jump_to_seq(attack[0].seq)
        player.jump(player.state.index)
    return player


def result_html(result: LabResult, defence: Any) -> str:
    """One run as HTML: verdict, explanation, the defence value, the attack's messages, the whole
    trace (folded) and the command that repeats it."""
    esc = html.escape
    attack = result.attack_events()
    marked = (TraceTable(attack, title="The attack's messages").to_html() if attack
              else "<p>No message of this run is marked attack.</p>")
    command = command_line(result.lab, result.config, result.seed, result.variant)
    return (f"<div role='status'>{result.report().to_html()}</div>"
            f"<p>Defence in this configuration: <code>{esc(describe_defence(defence))}</code></p>"
            f"{marked}"
            f"<details><summary>The whole trace ({len(result.trace.events)} events)</summary>"
            f"{TraceTable(result.trace, title=result.facts.title).to_html()}</details>"
            f"<p>In a terminal: <code>{esc(command)}</code></p>")


class LabExplorer:
    """An ipywidgets lab explorer. It runs its first lab at once, so even its static copy has a
    result; :meth:`rerun` (or any control) runs the lab again with changed settings."""

    def __init__(self, lab: str | None = None, config: Config = "vulnerable", seed: int = 0,
                 variant: str = "main", labs: Mapping[str, Lab] = LABS) -> None:
        import ipywidgets as w

        self.labs = labs
        menu = lab_menu(labs)
        self.name = lab or menu[0][1]
        self.result = self._run(self.name, config, seed, variant)
        self._updating = False
        self.lab = w.Dropdown(options=menu, value=self.name, description="lab",
                              layout=w.Layout(width="460px", max_width="100%"))
        self.config = w.ToggleButtons(options=list(CONFIGS), value=config, description="configuration")
        self.variant = w.Dropdown(options=self._variants(self.name), value=variant, description="variant",
                                  layout=w.Layout(width="460px", max_width="100%"))
        self.seed = w.BoundedIntText(value=seed, min=0, max=10_000, description="seed", layout=w.Layout(width="200px"))
        self.run_button = w.Button(description="Run", icon="play", tooltip="run the lab again with these settings")
        self.summary = w.HTML(value=self._summary_html())
        self.output = w.HTML(value=self._result_html())
        self.player = play_lab(self.result)
        # Rows wrap rather than clip, and nothing is wider than the output it sits in.
        fill = w.Layout(max_width="100%")
        self.stepper = w.Accordion(children=[w.Box([self.player.widget], layout=fill)], layout=fill)
        self.stepper.set_title(0, "Step through this run's trace")
        row = w.HBox([self.config, self.seed, self.run_button],
                     layout=w.Layout(flex_flow="row wrap", align_items="center", max_width="100%"))
        self.widget = w.VBox([self.lab, self.summary, row, self.variant, self.output, self.stepper], layout=fill)
        self.lab.observe(self._on_lab, names="value")
        for control in (self.config, self.variant):
            control.observe(self._on_control, names="value")
        self.run_button.on_click(lambda _: self.run_from_controls())

    def _run(self, name: str, config: Config, seed: int, variant: str) -> LabResult:
        return self.labs[name].run(config, seed, variant)

    def _variants(self, name: str) -> list[tuple[str, str]]:
        lab = self.labs[name]
        return [("main: the attack as first told", "main"),
                *((f"{key}: {what}", key) for key, what in lab.variants.items())]

    # -- actions (also callable from code) ---------------------------------------------------------
    def rerun(self, *, lab: str | None = None, config: Config | None = None, seed: int | None = None,
              variant: str | None = None) -> LabResult:
        """Run again with some settings changed, e.g. ``explorer.rerun(config="fixed")``. A new lab
        starts from its ``main`` variant unless one is given. The controls follow."""
        r = self.result
        name = lab or self.name
        variant = variant or ("main" if name != self.name else r.variant)
        self.result = self._run(name, config or r.config, r.seed if seed is None else seed, variant)
        self.name = name
        self._updating = True
        try:
            self.lab.value = name
            self.variant.options = self._variants(name)
            self.variant.value = self.result.variant
            self.config.value = self.result.config
            self.seed.value = self.result.seed
        finally:
            self._updating = False
        self.summary.value = self._summary_html()
        self.output.value = self._result_html()
        self.player = play_lab(self.result)
        self.stepper.children[0].children = [self.player.widget]
        return self.result

    def run_from_controls(self) -> LabResult:
        """Read the controls and run."""
        return self.rerun(lab=self.lab.value, config=self.config.value, seed=int(self.seed.value),
                          variant=self.variant.value)

    def _on_lab(self, change: dict[str, Any]) -> None:
        if not self._updating:
            self.rerun(lab=change["new"], variant="main")

    def _on_control(self, _change: dict[str, Any]) -> None:
        if not self._updating:
            self.run_from_controls()

    # -- display ------------------------------------------------------------------------------------
    def _summary_html(self) -> str:
        facts = self.result.facts
        return (f"<p><b>{html.escape(facts.title)}</b> ({html.escape(facts.layer)}): "
                f"{html.escape(facts.summary)}</p>")

    def _result_html(self) -> str:
        return result_html(self.result, self.labs[self.name].defences[self.result.config])

    def to_text(self) -> str:
        """The last run in words: what a terminal or a text-only viewer shows."""
        return f"Lab explorer — {verdict(self.result)}"

    def static_html(self) -> str:
        """The explorer without its controls: the settings and the result of the last run."""
        r = self.result
        return (f"<div class='mcp-sim-lab-explorer-static'><p><b>Lab explorer</b> (a static copy: run the cell "
                f"to pick another lab, configuration or variant) — lab <code>{html.escape(r.lab)}</code>, "
                f"configuration <code>{r.config}</code>, variant <code>{html.escape(r.variant)}</code>, seed "
                f"{r.seed}</p>{self._summary_html()}{self._result_html()}</div>")

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """The live widget for Jupyter, with the static copy and a line of text beside it."""
        bundle = dict(self.widget._repr_mimebundle_())
        bundle["text/html"] = self.static_html()
        bundle["text/plain"] = self.to_text()
        return bundle


def lab_explorer(lab: str | None = None, **settings: Any) -> LabExplorer:
    """``lab_explorer("token-passthrough", config="fixed", seed=1)``: an explorer that has already run
    those settings once."""
    return LabExplorer(lab, **settings)
