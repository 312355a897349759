""""Predict, then reveal": a question the learner answers before running the next cell.

The questions are data, one TOML file per chapter in ``mcp_sim/course/predictions/`` (``NN.toml``,
``[[question]]`` tables with the fields of :class:`Prediction`), so that a notebook cell holds only
``ask("NN-some-id")`` and no answer stands in the notebook above its question. :func:`ask` loads one.

A :class:`Prediction` asks one multiple-choice question. The learner picks an answer and presses
*Check*; the panel says whether it was right, in words (never colour alone), and explains why,
citing the spec rule. The logic lives in :meth:`Prediction.check`, which tests call directly; the
widget only binds buttons to it. Outside Jupyter the question prints as text.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from mcp_sim.protocol import rulebook


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
    """One question: ``choices`` in display order, ``answers`` every right one, ``why`` the explanation.

    ``answers`` holds *every* answer that complies: where the spec leaves a choice (a MAY, a SHOULD, or
    this simulator's own choice), each compliant answer is right, and the explanation says which one
    the simulator happens to make. ``wrong_because`` may explain, per wrong choice, the misconception
    behind it. ``why`` and ``wrong_because`` cite rules as ``[[ref ID]]`` / ``[[rule ID]]`` (see
    :func:`mcp_sim.protocol.rulebook.expand`); they are shown only after the learner has answered."""

    question: str
    choices: Sequence[str]
    answers: Sequence[str]
    why: str
    wrong_because: dict[str, str] = field(default_factory=dict)
    id: str = ""

    def __post_init__(self) -> None:
        if not self.answers:
            raise ValueError("a question needs at least one right answer")
        if any(a not in self.choices for a in self.answers):
            raise ValueError("every answer must be one of the choices")
        unknown = [c for c in self.wrong_because if c not in self.choices]
        if unknown:
            raise ValueError(f"wrong_because names {unknown}, which are not choices")

    @property
    def rules(self) -> list[str]:
        """The rule ids the explanations cite."""
        return rulebook.cited(" ".join([self.why, *self.wrong_because.values()]))

    def check(self, chosen: str) -> Verdict:
        if chosen not in self.choices:
            raise ValueError(f"{chosen!r} is not one of the choices")
        why = rulebook.expand(self.why)
        others = [a for a in self.answers if a != chosen]
        also = f" Also right: {'; '.join(repr(a) for a in others)}." if others else ""
        if chosen in self.answers:
            return Verdict(True, chosen, f"{why}{also}")
        extra = rulebook.expand(self.wrong_because.get(chosen, ""))
        return Verdict(False, chosen, f"{extra} {why}".strip())

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
            out.value = f"<b>{mark}</b> {self.explanation_html(radio.value)}"

        button.on_click(on_click)
        title = w.HTML(value=f"<b>Predict, then reveal:</b> {html.escape(self.question)}")
        return w.VBox([title, radio, button, out])

    def explanation_html(self, chosen: str) -> str:
        """The explanation for ``chosen`` as HTML, each cited rule with its strength and source link."""
        parts = []
        if chosen not in self.answers and self.wrong_because.get(chosen):
            parts.append(rulebook.expand(self.wrong_because[chosen], "html"))
        parts.append(rulebook.expand(self.why, "html"))
        others = [a for a in self.answers if a != chosen]
        if chosen in self.answers and others:
            parts.append("Also right: " + "; ".join(html.escape(repr(a)) for a in others) + ".")
        return " ".join(parts)

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


PREDICTIONS_DIR: Final = Path(__file__).resolve().parent / "predictions"


class UnknownQuestion(KeyError):
    """A question id that no predictions file defines."""


def load_questions(folder: Path = PREDICTIONS_DIR) -> dict[str, Prediction]:
    """Every question of the course by id. A file ``NN.toml`` holds chapter NN's questions, and each
    id starts with ``NN-``, so an id says which chapter asks it."""
    import tomllib

    questions: dict[str, Prediction] = {}
    for path in sorted(folder.glob("*.toml")):
        with path.open("rb") as fh:
            data = tomllib.load(fh)
        for raw in data.get("question", []):
            q = Prediction(question=raw["question"], choices=tuple(raw["choices"]), answers=tuple(raw["answers"]),
                           why=raw["why"], wrong_because=dict(raw.get("wrong_because", {})), id=raw["id"])
            if not q.id.startswith(f"{path.stem}-"):
                raise ValueError(f"{path.name}: question id {q.id!r} must start with {path.stem}-")
            if q.id in questions:
                raise ValueError(f"question {q.id!r} is defined twice")
            extra = set(raw) - {"id", "question", "choices", "answers", "why", "wrong_because"}
            if extra:
                raise ValueError(f"question {q.id!r}: unknown fields {sorted(extra)}")
            questions[q.id] = q
    return questions


def ask(question_id: str) -> Prediction:
    """The predict-then-reveal question ``question_id`` (e.g. ``"05-invalid-arguments"``), ready to
    display: the last expression of a notebook cell."""
    questions = load_questions()
    if question_id not in questions:
        raise UnknownQuestion(f"no question {question_id!r} in mcp_sim/course/predictions/")
    return questions[question_id]
