"""The grader panel: a grade result as an ipywidgets view (course exercises).

One row per check says PASSED or FAILED **in words and with an icon** — never with colour alone — and
shows the explanation and the spec rule. Below the rows, a "Show next hint" button reveals the
exercise's hints one at a time, from the gentlest to the most specific, so a learner takes only as
much help as they need.

Build it from a result: ``GraderPanel(grade("ex02_error_codes"))``. This module imports the grader,
never the other way round: a bare result shows itself as static HTML (hints in ``<details>``), which
needs no kernel and no widget state.
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as W

from mcp_sim.grading.result import GradeResult, check_row_html


class GraderPanel(W.VBox):
    """An ipywidgets VBox: a headline, one row per check, and hints revealed one at a time."""

    def __init__(self, result: GradeResult, **kwargs: Any) -> None:
        self.result = result
        self.hints_shown = 0
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
        rows.extend(self._row(c, result.chapter) for c in result.checks)
        rows.extend(W.HTML(f"<small><b>Note:</b> {esc(n)}</small>") for n in result.notes)
        self.hint_box = W.VBox([])
        self.hint_button = W.Button(description="Show next hint", icon="lightbulb-o",
                                    tooltip="Reveal one more hint", layout=W.Layout(width="auto"))
        self.hint_button.on_click(lambda _button: self.show_next_hint())
        footer: list[W.Widget] = []
        if result.hints and not result.passed:
            footer = [self.hint_button, self.hint_box]
        elif result.passed:
            footer = [W.HTML("<p>✔ All checks passed. Well done!</p>")]
        super().__init__([header, *rows, *footer], **kwargs)
        self.add_class("mcp-sim-grader-panel")

    @staticmethod
    def _row(check: Any, chapter: str) -> W.Widget:
        box = W.HTML(f"<ul style='list-style:none;padding-left:0;margin:2px 0'>{check_row_html(check, chapter)}</ul>")
        box.add_class(f"mcp-sim-{check.status}")
        return box

    def show_next_hint(self) -> str | None:
        """Reveal the next hint; returns its text, or ``None`` when all are shown."""
        if self.hints_shown >= len(self.result.hints):
            return None
        self.hints_shown += 1
        text = self.result.hint(self.hints_shown)
        total = len(self.result.hints)
        self.hint_box.children = (*self.hint_box.children,
                                  W.HTML(f"<p>💡 <b>Hint {self.hints_shown} of {total}:</b> {html.escape(text)}</p>"))
        if self.hints_shown >= total:
            self.hint_button.disabled = True
            self.hint_button.description = "No more hints"
        return text
