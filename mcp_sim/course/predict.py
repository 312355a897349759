""""Predict, then reveal": a question the learner answers before running the next cell.

A :class:`Prediction` asks one multiple-choice question. The learner picks an answer and presses
*Check*; the panel says whether it was right, in words (never colour alone), and explains why,
citing the spec rule. The logic lives in :meth:`Prediction.check`, which tests call directly; the
widget only binds buttons to it. Outside Jupyter the question prints as text.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Verdict:
    correct: bool
    chosen: str
    explanation: str

    def __str__(self) -> str:
        head = "Correct." if self.correct else f"Not quite — you chose {self.chosen!r}."
        return f"{head} {self.explanation}"


@dataclass
class Prediction:
    """One question: ``choices`` in display order, ``answer`` the right one, ``why`` the explanation.

    ``wrong_because`` may explain, per wrong choice, the misconception behind it."""

    question: str
    choices: Sequence[str]
    answer: str
    why: str
    wrong_because: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.answer not in self.choices:
            raise ValueError("the answer must be one of the choices")

    def check(self, chosen: str) -> Verdict:
        if chosen not in self.choices:
            raise ValueError(f"{chosen!r} is not one of the choices")
        if chosen == self.answer:
            return Verdict(True, chosen, self.why)
        extra = self.wrong_because.get(chosen, "")
        return Verdict(False, chosen, f"{extra} {self.why}".strip())

    # -- display -------------------------------------------------------------------------------
    def __str__(self) -> str:
        lines = [f"Predict: {self.question}"]
        lines += [f"  ({chr(97 + i)}) {c}" for i, c in enumerate(self.choices)]
        return "\n".join(lines)

    def widget(self) -> Any:
        """An ipywidgets panel: radio buttons, a Check button and the verdict."""
        import ipywidgets as w

        radio = w.RadioButtons(options=list(self.choices), value=None, layout=w.Layout(width="auto"))
        button = w.Button(description="Check", icon="question", tooltip="Check your prediction")
        out = w.HTML(value="<i>Choose an answer, then press Check.</i>")

        def on_click(_: Any) -> None:
            if radio.value is None:
                out.value = "<i>Pick one of the answers first.</i>"
                return
            verdict = self.check(radio.value)
            mark = "✔ Correct." if verdict.correct else "✘ Not quite."
            out.value = f"<b>{mark}</b> {html.escape(verdict.explanation)}"

        button.on_click(on_click)
        title = w.HTML(value=f"<b>Predict, then reveal:</b> {html.escape(self.question)}")
        return w.VBox([title, radio, button, out])

    def static_html(self) -> str:
        """The question without its buttons: what a page that cannot run widgets shows (GitHub,
        ``jupyter nbconvert --to html``). The answer stays hidden there too: predict first."""
        items = "".join(f"<li>{html.escape(c)}</li>" for c in self.choices)
        return (f"<div class='mcp-sim-prediction'><p><b>Predict, then reveal:</b> {html.escape(self.question)}</p>"
                f"<ol type='a'>{items}</ol><p><i>Run the notebook to choose an answer and check it.</i></p></div>")

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """The live panel for Jupyter, with the static question and its text beside it."""
        bundle = dict(self.widget()._repr_mimebundle_())
        bundle["text/html"] = self.static_html()
        bundle["text/plain"] = str(self)
        return bundle
