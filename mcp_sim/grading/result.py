"""What grading returns: one :class:`CheckResult` per check, gathered in a :class:`GradeResult`.

A result is plain data that crosses the process boundary as JSON (:meth:`GradeResult.to_dict` /
:meth:`GradeResult.from_dict`) and shows itself three ways:

* ``str(result)`` — plain text for a terminal (``result.to_text(hints=N)`` adds the first N hints);
* ``result._repr_html_()`` — HTML for a notebook, GitHub or a static rendering, hints folded one per
  ``<details>`` so each opens the next (no kernel needed).

**Hints escalate.** A failure first shows only the rule that was broken, the case that broke it and
what the learner's code did, in words — never the right answer. Help comes one step at a time, when
asked for (:attr:`GradeResult.hint_steps`): the failing check's own hint (what to compare), then the
exercise's hints from the gentlest to the most specific, and last the expected answer for the case
shown. A learner's exception is shown once, however many checks it broke.

The interactive panel (:class:`mcp_sim.widgets.grader_panel.GraderPanel`) is built *from* a result;
this module never imports it, so the grader does not depend on the widgets.

Every status is said in words and with an icon, never with colour alone, and comes from a field —
never from the wording of a message. A failed check names the spec rule the answer broke and points
to the chapter that teaches it.
"""

from __future__ import annotations

import html
from dataclasses import asdict, dataclass
from typing import Any, Final, Literal

from mcp_sim.course import CHAPTERS
from mcp_sim.grading.model import cite_rule

Status = Literal["passed", "failed", "error", "timeout"]

ICONS: Final[dict[str, str]] = {"passed": "✔", "failed": "✘", "error": "✘", "timeout": "⏱"}
MAX_PRINTED_LINES: Final = 12
"""How many lines of a check's captured output the text form shows."""
CHAPTER_NOTEBOOKS: Final[dict[str, str]] = {c.number: c.notebook for c in CHAPTERS}
"""The notebook that teaches each chapter (a failure points the learner there), from the course outline."""
WORDS: Final[dict[str, str]] = {"passed": "PASSED", "failed": "FAILED", "error": "ERROR",
                                 "timeout": "TIME LIMIT"}



RAISED = "Your function raised an exception: "
"""How a generated check (:mod:`~mcp_sim.grading.differential`) begins a failure that was an exception."""
SMALLEST = "\nThe smallest input found that shows it: "

@dataclass(frozen=True)
class CheckResult:
    """The outcome of one check over its seeded cases.

    ``seed`` is the seed of the first failing case (``None`` when every case passed). Grading is
    deterministic: the same file and the same ``grade(..., seed=...)`` give the same cases."""

    name: str
    status: Status
    explanation: str
    rule: str
    cases: int = 0
    seed: int | None = None
    output: str = ""
    hint: str = ""
    kind: str = ""
    """The case kind that failed (each check tries a fixed list of kinds on every seed)."""
    case: str = ""
    """The failing input, as the check described it (shown with the failure)."""
    expected: str = ""
    """The right answer for that case: shown only as the last hint, never with the failure."""

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def where(self) -> str:
        """Which case failed: its seed and kind, e.g. ``seed 12, kind 'cut off'``."""
        if self.seed is None:
            return ""
        return f"seed {self.seed}" + (f", kind {self.kind!r}" if self.kind else "")

    def label(self) -> str:
        return f"{ICONS[self.status]} {WORDS[self.status]}"


@dataclass(frozen=True)
class GradeResult:
    """The grade of one exercise: every check's result, plus what happened while loading the file."""

    exercise: str
    title: str
    chapter: str
    file: str
    rules: tuple[str, ...]
    checks: tuple[CheckResult, ...]
    hints: tuple[str, ...]
    reference: bool = False
    load_error: str = ""
    load_output: str = ""
    problem: str = ""
    """A failure of the whole run (the overall time limit) rather than of a check."""
    problem_status: str = ""
    """``"timeout"`` or ``"error"`` when ``load_error`` or ``problem`` is set: the status is a field."""
    notes: tuple[str, ...] = ()
    """What the learner's code left behind that is not a failure: threads still running, files written."""

    @property
    def passed(self) -> bool:
        return bool(self.checks) and not self.load_error and not self.problem and all(
            c.passed for c in self.checks)

    @property
    def status(self) -> Status:
        if self.passed:
            return "passed"
        if (self.problem or self.load_error) and self.problem_status == "timeout":
            return "timeout"
        if self.load_error or self.problem:
            return "error"
        return "failed"

    @property
    def passed_count(self) -> int:
        return sum(c.passed for c in self.checks)

    @property
    def first_failure(self) -> CheckResult | None:
        return next((c for c in self.checks if not c.passed), None)

    @property
    def hint_steps(self) -> tuple[str, ...]:
        """The hints a learner can reveal, one at a time, from the gentlest to the answer itself.

        1. the first failing check's own hint: what to compare for the rule it broke;
        2. the exercise's hints, in order (each more specific than the one before);
        3. last, the right answer for the case the first failure shows — only when the check knows it.

        A passed exercise has none. The steps are computed from the result's fields, so the terminal,
        the static HTML and the panel reveal the same steps in the same order."""
        if self.passed:
            return ()
        first = self.first_failure
        steps: list[str] = []
        if first is not None and first.hint:
            steps.append(f"For “{first.name}”: {first.hint}")
        for text in self.hints:
            if text not in steps:
                steps.append(text)
        if first is not None and first.expected:
            steps.append(f"The answer for the case of “{first.name}” ({first.where()}): {first.expected}")
        return tuple(steps)

    @property
    def last_hint_gives_answer(self) -> bool:
        """Whether the last hint step is the expected answer (the first failure's check knows it)."""
        first = self.first_failure
        return bool(self.hint_steps) and first is not None and bool(first.expected)

    def hint(self, n: int = 1) -> str:
        """The ``n``-th hint step (1-based, see :attr:`hint_steps`); the last one gives the answer."""
        steps = self.hint_steps
        if not steps:
            return "No hints: every check passed." if self.passed else "No hints for this exercise."
        return steps[min(max(n, 1), len(steps)) - 1]

    def repeats(self) -> dict[int, int]:
        """Failed checks whose explanation (and case) is the same as an earlier one's — the same
        exception, most often: a function not written yet breaks every check: check index → index of
        the first. Each distinct explanation — and its traceback — is shown once."""
        first_seen: dict[tuple[str, str, str], int] = {}
        out: dict[int, int] = {}
        for i, c in enumerate(self.checks):
            if c.passed:
                continue
            key = (c.status, c.explanation, c.case)
            raised = c.explanation.partition(RAISED)[2].partition(SMALLEST)[0] if c.explanation.startswith(RAISED) \
                else ""
            if raised:  # a generated check that met the same exception: the same problem as a fixed case's
                key = ("error", raised, "")
            if key in first_seen:
                out[i] = first_seen[key]
            else:
                first_seen[key] = i
        return out

    # --- serialisation -------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["passed"] = self.passed
        out["status"] = self.status
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GradeResult:
        checks = tuple(CheckResult(**c) for c in data.get("checks", ()))
        return cls(exercise=data["exercise"], title=data["title"], chapter=data["chapter"], file=data["file"],
                   rules=tuple(data.get("rules", ())), checks=checks, hints=tuple(data.get("hints", ())),
                   reference=bool(data.get("reference", False)), load_error=data.get("load_error", ""),
                   load_output=data.get("load_output", ""), problem=data.get("problem", ""),
                   problem_status=data.get("problem_status", ""), notes=tuple(data.get("notes", ())))

    # --- plain text ----------------------------------------------------------------------------

    @property
    def chapter_pointer(self) -> str:
        """Where the course teaches this exercise's rules."""
        return chapter_pointer(self.chapter)

    def headline(self) -> str:
        what = "reference solution" if self.reference else self.file
        if self.checks:
            count = f"{self.passed_count}/{len(self.checks)} checks passed"
        else:
            count = "no checks ran"
        return f"{ICONS[self.status]} {WORDS[self.status]}  {self.exercise} — {self.title} ({what}): {count}"

    def to_text(self, hints: int = 0) -> str:
        """Plain text for a terminal, with the first ``hints`` hint steps when the exercise is not
        passed (none by default: the learner asks for them, ``mcp-sim grade EX --hints N``)."""
        lines = [self.headline()]
        if self.problem:
            lines += ["", _indent(self.problem, "  ")]
        if self.load_error:
            lines += ["", "  Your file could not be loaded:", _indent(self.load_error, "    ")]
        if self.load_output:
            lines += ["  Printed while loading your file:", _indent(self.load_output.rstrip(), "    | ")]
        repeats = self.repeats()
        for i, c in enumerate(self.checks):
            lines.append(f"  {c.label():<12} {c.name}")
            if not c.passed:
                lines.append(_indent(f"Rule broken: {cite_rule(c.rule)}", "      "))
                if i in repeats:
                    lines.append(f"      The same problem as “{self.checks[repeats[i]].name}” above.")
                else:
                    if c.case:
                        lines.append(f"      Case ({c.where()}):" if c.where() else "      Case:")
                        lines.append(_indent(c.case, "        "))
                    elif c.where():
                        lines.append(f"      (case {c.where()})")
                    lines.append(_indent(c.explanation, "      "))
                lines.append(f"      Read: {self.chapter_pointer}")
            if c.output:
                printed = c.output.rstrip().splitlines()
                lines.append("      Your code printed:")
                lines.append(_indent("\n".join(printed[:MAX_PRINTED_LINES]), "      | "))
                if len(printed) > MAX_PRINTED_LINES:
                    lines.append(f"      | … ({len(printed) - MAX_PRINTED_LINES} more lines)")
        for note in self.notes:
            lines.append(_indent(f"Note: {note}", "  "))
        steps = self.hint_steps
        if steps:
            shown = max(0, min(hints, len(steps)))
            for n in range(1, shown + 1):
                lines.append(_indent(f"Hint {n} of {len(steps)}: {steps[n - 1]}", "  "))
            if shown == 0:
                answer = " The last one gives the answer." if self.last_hint_gives_answer else ""
                lines.append(f"  {len(steps)} hints, none shown: `mcp-sim grade {self.exercise} --hints 1` shows the "
                             f"first (in Python: result.hint(1)).{answer}")
            elif shown < len(steps):
                lines.append(f"  (Next hint: `mcp-sim grade {self.exercise} --hints {shown + 1}`, or "
                             f"result.hint({shown + 1}) in Python.)")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()

    # --- HTML ----------------------------------------------------------------------------------

    def _repr_html_(self) -> str:
        return render_html(self)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return {"text/plain": str(self), "text/html": render_html(self)}


def chapter_pointer(chapter: str) -> str:
    """The notebook of chapter ``chapter`` (e.g. ``"04"``), as a path from the project folder."""
    return f"chapter {chapter}, notebooks/{CHAPTER_NOTEBOOKS.get(chapter, chapter)}.ipynb"


def _indent(text: str, prefix: str) -> str:
    return "\n".join(prefix + line for line in text.splitlines()) if text else ""


def check_row_html(c: CheckResult, chapter: str = "", same_as: str = "") -> str:
    """One check as HTML: status word + icon, the check's name; for a failure the rule broken, the case
    and what was wrong (or, when ``same_as`` names an earlier check with the same explanation, a
    pointer to it instead of a second copy). Never the check's hint or the expected answer: those are
    hint steps, revealed on request."""
    esc = html.escape
    body = ""
    if not c.passed:
        body += f"<div><b>Rule broken:</b> {esc(cite_rule(c.rule))}</div>"
        if same_as:
            body += f"<div class='mcp-sim-same'>The same problem as “{esc(same_as)}” above.</div>"
        else:
            where = f" <small>({esc(c.where())})</small>" if c.where() else ""
            if c.case:
                body += (f"<div><b>Case</b>{where}:<pre style='white-space:pre-wrap;margin:2px 0'>"
                         f"{esc(c.case)}</pre></div>")
            body += f"<pre style='white-space:pre-wrap;margin:4px 0'>{esc(c.explanation)}</pre>"
            if where and not c.case:
                body += f"<small>(case {esc(c.where())})</small>"
        if chapter:
            body += f"<div><small><b>Read:</b> {esc(chapter_pointer(chapter))}</small></div>"
    else:
        body += f"<div>{esc(c.explanation)}</div>"
        body += f"<div><small><b>Rule:</b> {esc(cite_rule(c.rule))}</small></div>"
    if c.output:
        body += f"<div><small>Your code printed:</small><pre style='margin:2px 0'>{esc(c.output)}</pre></div>"
    return (f"<li class='mcp-sim-check mcp-sim-{c.status}'><b>{esc(c.label())}</b> — {esc(c.name)}"
            f"{body}</li>")


def check_rows_html(result: GradeResult) -> list[str]:
    """Every check of ``result`` as HTML, each distinct explanation (and traceback) shown once."""
    repeats = result.repeats()
    return [check_row_html(c, result.chapter, result.checks[repeats[i]].name if i in repeats else "")
            for i, c in enumerate(result.checks)]


def render_html(result: GradeResult) -> str:
    """The whole result as static HTML; the hint steps sit in nested ``<details>``, each "Show next
    hint" opening one hint and the control for the next (no kernel or widget needed)."""
    esc = html.escape
    parts = [f"<div class='mcp-sim-grade'><h4>{esc(result.headline())}</h4>"]
    if result.problem:
        parts.append(f"<pre style='white-space:pre-wrap'>{esc(result.problem)}</pre>")
    if result.load_error:
        parts.append(f"<p><b>Your file could not be loaded:</b></p><pre style='white-space:pre-wrap'>"
                     f"{esc(result.load_error)}</pre>")
    if result.load_output:
        parts.append(f"<p>Printed while loading your file:</p><pre>{esc(result.load_output)}</pre>")
    parts.append("<ul style='list-style:none;padding-left:0'>")
    parts.extend(check_rows_html(result))
    parts.append("</ul>")
    parts.extend(f"<p><small><b>Note:</b> {esc(n)}</small></p>" for n in result.notes)
    steps = result.hint_steps
    nested = ""
    for i, text in reversed(list(enumerate(steps, 1))):
        nested = (f"<details><summary>Show next hint ({i} of {len(steps)})</summary>"
                  f"<p>💡 <b>Hint {i} of {len(steps)}:</b> {esc(text)}</p>{nested}</details>")
    parts.append(nested)
    parts.append("</div>")
    return "".join(parts)
