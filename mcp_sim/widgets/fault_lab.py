"""The fault lab widget: pick a fault, run the calls again, read what the client did (course chapter 06).

The controls choose an :class:`~mcp_sim.scenarios.fault_lab.Experiment` — which fault, how much, the
transport, the revision, the seed, how many concurrent calls and their timeout — and **Run** replays
the world with it. The panel shows the one-line summary (every request ended visibly, or which did
not), each call's outcome with the request ids that carried it, the moments where something broke or
was repaired (drops, timeouts, ``notifications/cancelled``, retries with new ids, ``Last-Event-ID``
resumption, restarts), the whole trace, and a trace player to step through it.

All the logic is in :mod:`mcp_sim.scenarios.fault_lab`; this module only binds controls to it. Like the
trace player, the lab has a static copy (:meth:`FaultLab.static_html`) for every viewer that cannot
run widgets, so a page on GitHub still shows the last run.
"""

from __future__ import annotations

import html
from dataclasses import replace
from typing import Any

from mcp_sim.scenarios.fault_lab import FAULT_KINDS, Experiment, LabRun, run_fault_experiment
from mcp_sim.trace.table import TraceTable
from mcp_sim.widgets.player import TracePlayer

__all__ = ["FaultLab", "fault_lab"]

_UNITS = {"none": "(no amount)", "seconds": "seconds of delay", "probability": "probability per message",
          "frame": "message number after the opening"}


def outcomes_html(run: LabRun) -> str:
    """Each call's outcome as an HTML table: call, outcome, request ids (a retry is a new id), detail."""
    esc = html.escape
    rows = "".join(
        f"<tr><th scope='row'>{esc(c.call)}</th><td>{esc(c.outcome)}</td>"
        f"<td>{esc(', '.join(str(i) for i in c.request_ids) or '—')}</td><td>{esc(c.detail)}</td></tr>"
        for c in run.calls)
    endings = "".join(f"<li>request {esc(str(rid))}: {esc(ending)}</li>" for rid, ending in run.endings.items())
    return (f"<table class='mcp-sim-fault-outcomes'><caption>Each call's one outcome</caption><thead><tr>"
            f"<th scope='col'>call</th><th scope='col'>outcome</th><th scope='col'>request ids</th>"
            f"<th scope='col'>detail</th></tr></thead><tbody>{rows}</tbody></table>"
            f"<p>How each <code>tools/call</code> request ended, read from the trace:</p><ul>{endings}</ul>")


def run_html(run: LabRun) -> str:
    """The whole result of one run, as HTML: summary, outcomes, highlights, and the full trace folded."""
    esc = html.escape
    highlights = run.highlights()
    moments = (TraceTable(highlights, title="What broke and what repaired it").to_html() if highlights
               else "<p>Nothing broke: no fault fired in this run.</p>")
    return (f"<p><b>{esc(run.experiment.describe())}</b></p>"
            f"<p role='status'>{esc(run.summary())}</p>{outcomes_html(run)}{moments}"
            f"<details><summary>The whole trace ({len(run.events)} events)</summary>"
            f"{TraceTable(run.recorder, title='Fault lab').to_html()}</details>")


class FaultLab:
    """An ipywidgets fault lab. It runs ``experiment`` at once, so even its static copy has a result;
    :meth:`rerun` (or the **Run** button) replays the world with changed settings."""

    def __init__(self, experiment: Experiment | None = None) -> None:
        import ipywidgets as w

        # Rows wrap rather than clip, and nothing is wider than the output it sits in.
        wrap = w.Layout(flex_flow="row wrap", align_items="center", max_width="100%")
        fill = w.Layout(max_width="100%")

        self.experiment = experiment or Experiment()
        self.run: LabRun = run_fault_experiment(self.experiment)
        e = self.experiment
        self.fault = w.Dropdown(options=list(FAULT_KINDS), value=e.fault, description="fault")
        self.amount = w.FloatText(value=self._amount(e), description="amount", layout=w.Layout(width="200px"))
        self.unit = w.Label(value=_UNITS[e.kind.unit])
        self.what = w.HTML(value=f"<i>{html.escape(e.kind.what)}</i>")
        self.transport = w.ToggleButtons(options=["memory", "stdio", "http"], value=e.transport,
                                         description="transport")
        self.revision = w.ToggleButtons(options=["2025-11-25", "2026-07-28"], value=e.revision,
                                        description="revision")
        self.seed = w.BoundedIntText(value=e.seed, min=0, max=10_000, description="seed", layout=w.Layout(width="200px"))
        self.calls = w.IntSlider(value=e.calls, min=1, max=8, description="calls")
        self.timeout = w.BoundedFloatText(value=e.timeout, min=0.1, max=60, step=0.5, description="timeout (s)",
                                          layout=w.Layout(width="200px"))
        self.run_button = w.Button(description="Run", icon="play", tooltip="run the calls again with these faults")
        self.output = w.HTML(value=run_html(self.run))
        self.player = TracePlayer(self.run.recorder)
        self.stepper = w.Accordion(children=[w.Box([self.player.widget], layout=fill)], layout=fill)
        self.stepper.set_title(0, "Step through this run's trace")
        self.widget = w.VBox([
            w.HBox([self.fault, self.amount, self.unit], layout=wrap), self.what,
            self.transport, self.revision,
            w.HBox([self.seed, self.calls, self.timeout, self.run_button], layout=wrap),
            self.output, self.stepper,
        ], layout=fill)
        self.fault.observe(self._on_fault, names="value")
        self.run_button.on_click(lambda _: self.run_from_controls())

    @staticmethod
    def _amount(e: Experiment) -> float:
        return float(e.kind.default if e.amount is None else e.amount)

    # -- actions (also callable from code) ---------------------------------------------------------
    def rerun(self, **changes: Any) -> LabRun:
        """Run again with some settings changed, e.g. ``lab.rerun(fault="crash", transport="stdio")``."""
        if "fault" in changes and "amount" not in changes:
            changes["amount"] = None  # a new fault starts from its own default amount
        self.experiment = replace(self.experiment, **changes)
        self.run = run_fault_experiment(self.experiment)
        self.output.value = run_html(self.run)
        self.player = TracePlayer(self.run.recorder)
        self.stepper.children[0].children = [self.player.widget]
        return self.run

    def run_from_controls(self) -> LabRun | None:
        """Read the controls, run, and show the result (or say why the settings cannot run)."""
        try:
            return self.rerun(fault=self.fault.value, amount=float(self.amount.value),
                              transport=self.transport.value, revision=self.revision.value,
                              seed=int(self.seed.value), calls=int(self.calls.value),
                              timeout=float(self.timeout.value))
        except ValueError as exc:
            self.output.value = f"<p role='alert'>Cannot run: {html.escape(str(exc))}</p>"
            return None

    def _on_fault(self, change: dict[str, Any]) -> None:
        kind = FAULT_KINDS[change["new"]]
        self.amount.value = float(kind.default)
        self.unit.value = _UNITS[kind.unit]
        self.what.value = f"<i>{html.escape(kind.what)}</i>"

    # -- display ------------------------------------------------------------------------------------
    def to_text(self) -> str:
        """The last run in words: what a terminal or a text-only viewer shows."""
        return f"Fault lab — {self.experiment.describe()}\n{self.run.summary()}"

    def static_html(self) -> str:
        """The lab without its controls: the settings and the result of the last run."""
        return (f"<div class='mcp-sim-fault-lab-static'><p><b>Fault lab</b> (a static copy: run the cell to "
                f"change the faults and run again)</p>{run_html(self.run)}</div>")

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """The live widget for Jupyter, with the static copy and a line of text beside it."""
        bundle = dict(self.widget._repr_mimebundle_())
        bundle["text/html"] = self.static_html()
        bundle["text/plain"] = self.to_text()
        return bundle


def fault_lab(**settings: Any) -> FaultLab:
    """``fault_lab(fault="drop", transport="stdio")``: a lab that has already run those settings once."""
    return FaultLab(Experiment(**settings))
