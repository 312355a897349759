"""The grader panel: a grade result as an ipywidgets view (course exercises).

One row per check says PASSED or FAILED **in words and with an icon** — never with colour alone. A
failed row shows the rule that was broken, the case that broke it and what was wrong, never the right
answer; a learner's exception that broke several checks is shown once. Below the rows a "Show next
hint" button reveals the result's hint steps one at a time, from the failing check's own hint to the
expected answer for its case (last), so a learner takes only as much help as they need.

In a notebook: ``grade_panel("ex02_error_codes")`` grades and shows the panel, or build it from a
result: ``GraderPanel(grade("ex02_error_codes"))``. This module imports the grader, never the other way
round: a bare result shows itself as static HTML (hints in nested ``<details>``), which needs no kernel
and no widget state.
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as W

from mcp_sim.grading.classroom.client import NotInAClass, in_class, submit
from mcp_sim.grading.result import GradeResult, check_rows_html
from mcp_sim.grading.runner import grade


class GraderPanel(W.VBox):
    """An ipywidgets VBox: a headline, one row per check, and hints revealed one at a time."""

    def __init__(self, result: GradeResult, **kwargs: Any) -> None:
        self.result = result
        self.hints_shown = 0
        self.steps = result.hint_steps
        esc = html.escape
        header = W.HTML(f"<h4 style='margin:4px 0'>{esc(result.headline())}</h4>")
        rows: list[W.Widget] = []
        if result.problem:
            rows.append(W.HTML(f"<pre style='white-space:pre-wrap'>{esc(result.problem)}</pre>"))
        if result.load_error:
            rows.append(W.HTML(f"<b>Your file could not be loaded:</b><pre style='white-space:pre-wrap'>"
                               f"{esc(result.load_error)}</pre>"))
        if result.load_output:
            rows.append(W.HTML(f"<small>Printed while loading your file:</small><pre>{esc(result.load_output)}</pre>"))
        for check, row in zip(result.checks, check_rows_html(result), strict=True):
            box = W.HTML(f"<ul style='list-style:none;padding-left:0;margin:2px 0'>{row}</ul>")
            box.add_class(f"mcp-sim-{check.status}")
            rows.append(box)
        rows.extend(W.HTML(f"<small><b>Note:</b> {esc(n)}</small>") for n in result.notes)
        self.hint_box = W.VBox([])
        self.hint_box.add_class("mcp-sim-hints")
        self.hint_button = W.Button(description="Show next hint", icon="lightbulb-o",
                                    tooltip=f"Reveal hint 1 of {len(self.steps)}", layout=W.Layout(width="auto"))
        self.hint_button.add_class("mcp-sim-next-hint")
        self.hint_button.on_click(lambda _button: self.show_next_hint())
        footer: list[W.Widget] = []
        if self.steps:
            answer = "; the last gives the answer for the case above" if result.last_hint_gives_answer else ""
            footer = [W.HTML(f"<small>{len(self.steps)} hints, revealed one at a time{answer}.</small>"),
                      self.hint_button, self.hint_box]
        elif result.passed:
            footer = [W.HTML("<p>✔ All checks passed. Well done!</p>")]
        self.submit_status = W.HTML("")
        if in_class() and not result.reference:  # on a class's JupyterHub: hand it in for the real verdict
            button = W.Button(description="Submit to the class", icon="upload", layout=W.Layout(width="auto"),
                              tooltip="Send this exercise's file to your class's grader (graded on its side)")
            button.add_class("mcp-sim-submit")
            button.on_click(lambda _button: self.submit_to_class())
            footer = [*footer, button, self.submit_status]
        super().__init__([header, *rows, *footer], **kwargs)
        self.add_class("mcp-sim-grader-panel")

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None, **kwargs: Any) -> Any:
        """The live panel for Jupyter, with the result's static HTML (its hints folded in
        ``<details>``) and its text beside it, for every viewer that cannot run widgets."""
        bundle = dict(super()._repr_mimebundle_(**kwargs))
        return {**bundle, "text/html": self.result._repr_html_(), "text/plain": str(self.result)}

    def show_next_hint(self) -> str | None:
        """Reveal the next hint step; returns its text, or ``None`` when all are shown."""
        if self.hints_shown >= len(self.steps):
            return None
        self.hints_shown += 1
        text = self.steps[self.hints_shown - 1]
        total = len(self.steps)
        hint = W.HTML(f"<p>💡 <b>Hint {self.hints_shown} of {total}:</b> {html.escape(text)}</p>")
        hint.add_class("mcp-sim-hint")
        self.hint_box.children = (*self.hint_box.children, hint)
        if self.hints_shown >= total:
            self.hint_button.disabled = True
            self.hint_button.description = "No more hints"
        else:
            self.hint_button.tooltip = f"Reveal hint {self.hints_shown + 1} of {total}"
        return text


    def submit_to_class(self) -> dict[str, Any]:
        """Submit the exercise's file to the class's grading service and show its verdict here."""
        self.submit_status.value = "<small>Submitted; the class's grader is grading it…</small>"
        try:
            state = submit(self.result.exercise)
        except (NotInAClass, RuntimeError, OSError) as exc:
            self.submit_status.value = f"<small>Could not submit: {html.escape(str(exc))}</small>"
            return {"error": str(exc)}
        mark = "✔ passed" if state.get("passed") else f"✘ {state.get('status')}"
        self.submit_status.value = (f"<small>Submission #{state.get('id')}: {html.escape(mark)}, "
                                    f"{state.get('checks_passed')}/{state.get('checks_total')} checks — as your "
                                    f"class's grader judged it, in its sandbox.</small>")
        return state


def grade_panel(exercise_id: str, **options: Any) -> GraderPanel:
    """Grade ``exercise_id`` (the options of :func:`~mcp_sim.grading.runner.grade`) and show the
    result as a panel with a "Show next hint" button."""
    return GraderPanel(grade(exercise_id, **options))
