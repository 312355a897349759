"""Predict, then reveal: the questions are data, every compliant answer is accepted, and no notebook
gives a question's answer away above it — not in a cell's source, not in markdown, not in an output.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import nbformat
import pytest

from mcp_sim.course.predict import Prediction, ask, load_questions
from mcp_sim.protocol import rulebook

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
QUESTIONS = load_questions()
ASK = re.compile(r"""\bask\(\s*["']([^"']+)["']\s*\)""")


def _norm(text: str) -> str:
    text = re.sub(r"<[^>]+>", " ", html.unescape(text))
    text = re.sub(r"[`*_]", "", text)
    return re.sub(r"\s+", " ", text).strip().lower()


def _cell_texts(cell: nbformat.NotebookNode) -> list[str]:
    """What a reader sees of a cell: its source and, for code, its text and HTML outputs."""
    texts = [cell.source]
    for out in cell.get("outputs", []):
        if "text" in out:
            texts.append(out["text"] if isinstance(out["text"], str) else "".join(out["text"]))
        for key in ("text/plain", "text/html", "text/markdown"):
            value = out.get("data", {}).get(key)
            if value:
                texts.append(value if isinstance(value, str) else "".join(value))
    return texts


def test_questions_are_data_and_notebooks_only_ask_them() -> None:
    assert len(QUESTIONS) >= 30
    for source in sorted((ROOT / "notebooks" / "src").glob("*.py")):
        text = source.read_text(encoding="utf-8")
        assert "Prediction(" not in text, f"{source.name}: a question written in the notebook; put it in "
        "mcp_sim/course/predictions/"
        for qid in ASK.findall(text):
            assert qid in QUESTIONS, f"{source.name} asks {qid!r}, which no predictions file defines"
            assert qid.startswith(source.stem[:2] + "-"), f"{source.name} asks another chapter's question {qid}"


def test_every_question_is_asked_once() -> None:
    asked: list[str] = []
    for source in sorted((ROOT / "notebooks" / "src").glob("*.py")):
        asked += ASK.findall(source.read_text(encoding="utf-8"))
    assert sorted(asked) == sorted(QUESTIONS), "each question is asked exactly once"


def giveaways(nb: nbformat.NotebookNode, questions: dict[str, Prediction] = QUESTIONS) -> list[str]:
    """Every question of ``nb`` whose answer or explanation a reader has already seen above it."""
    above: list[str] = []
    problems = []
    for cell in nb.cells:
        for qid in ASK.findall(cell.source) if cell.cell_type == "code" else []:
            q = questions[qid]
            seen = _norm(" ".join(above))
            choices = [_norm(c) for c in q.choices]
            # Where every choice complies, no text above can single the right one out.
            for answer in q.answers if set(q.answers) != set(q.choices) else ():
                a = _norm(answer)
                # An answer is given away when it stands above and the wrong choices do not (when all
                # of them stand above, the text above does not single one out).
                if len(a) >= 4 and a in seen and not all(c in seen for c in choices):
                    problems.append(f"{qid}: its answer {answer!r} stands above the question")
            first = _norm(rulebook.expand(q.why)).split(". ")[0]
            if len(first) >= 40 and first in seen:
                problems.append(f"{qid}: its explanation stands above the question")
        above += _cell_texts(cell)
    return problems


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_answer_stands_above_its_question(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    assert any(ASK.search(c.source) for c in nb.cells if c.cell_type == "code"), "the notebook asks no question"
    problems = giveaways(nb)
    assert not problems, problems


def test_the_scan_finds_an_answer_in_markdown_and_in_an_output_above() -> None:
    q = Prediction(question="Which code?", choices=["-32002 not found", "-32602 invalid params"],
                   answers=["-32602 invalid params"], why="A 2026-07-28 server answers a missing resource "
                   "with invalid params, not with the old code.", id="99-code")
    qs = {"99-code": q}
    ask_cell = nbformat.v4.new_code_cell('ask("99-code")')
    told = nbformat.v4.new_markdown_cell("The server answers with a code, `-32602` or another.")
    assert giveaways(nbformat.v4.new_notebook(cells=[told, ask_cell]), qs) == []  # not the whole answer text
    told.source = "It answered -32602 invalid params."
    assert giveaways(nbformat.v4.new_notebook(cells=[told, ask_cell]), qs)
    shown = nbformat.v4.new_code_cell("run()")
    shown.outputs = [nbformat.v4.new_output("stream", name="stdout", text="error: -32602 Invalid params\n")]
    assert giveaways(nbformat.v4.new_notebook(cells=[shown, ask_cell]), qs)
    assert giveaways(nbformat.v4.new_notebook(cells=[ask_cell, shown]), qs) == []  # below is the reveal
    both = nbformat.v4.new_markdown_cell("Either -32002 not found or -32602 invalid params.")
    assert giveaways(nbformat.v4.new_notebook(cells=[both, ask_cell]), qs) == []


def test_the_ask_cell_shows_the_question_and_no_answer() -> None:
    for q in QUESTIONS.values():
        bundle = q._repr_mimebundle_()
        static = _norm(bundle["text/html"])
        assert _norm(q.question) in static
        assert _norm(rulebook.expand(q.why))[:60] not in static


def test_every_compliant_answer_is_accepted_and_the_explanation_names_the_others() -> None:
    q = Prediction(question="After its ttl, what may a server answer to tasks/get?",
                   choices=["the task, still there", "the task, failed", "-32602 unknown task", "a crash"],
                   answers=["the task, still there", "the task, failed", "-32602 unknown task"],
                   why="After the ttl a server may delete the task or mark it failed, or keep it.")
    for answer in q.answers:
        verdict = q.check(answer)
        assert verdict.correct
        assert all(repr(other) in verdict.explanation for other in q.answers if other != answer)
    assert not q.check("a crash").correct
    with pytest.raises(ValueError):
        Prediction(question="?", choices=["a"], answers=["b"], why="")


def test_explanations_render_their_rules() -> None:
    cited = [q for q in QUESTIONS.values() if q.rules]
    assert cited
    for q in cited:
        for choice in q.choices:
            text = q.check(choice).explanation
            assert "[[" not in text
            html_text = q.explanation_html(choice)
            shown = rulebook.cited(q.why) + (rulebook.cited(q.wrong_because.get(choice, ""))
                                              if choice not in q.answers else [])
            for rid in shown:
                rule = rulebook.get(rid)
                assert rule.strength in html_text and (not rule.url or rule.url in html_text), (q.id, rid)


def test_ask_names_an_unknown_question() -> None:
    with pytest.raises(KeyError, match="no question 'zz-nothing'"):
        ask("zz-nothing")
