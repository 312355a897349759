"""What grading returns: one :class:`CheckResult` per check, gathered in a :class:`GradeResult`.

A result is plain data that crosses the process boundary as JSON (:meth:`GradeResult.to_dict` /
:meth:`GradeResult.from_dict`) and shows itself three ways:

* ``str(result)`` — plain text for a terminal;
* ``result._repr_html_()`` — HTML for a notebook, GitHub or a static rendering, hints folded one per
  ``<details>`` so each opens the next (no kernel needed).

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

Status = Literal["passed", "failed", "error", "timeout"]

ICONS: Final[dict[str, str]] = {"passed": "✔", "failed": "✘", "error": "✘", "timeout": "⏱"}
MAX_PRINTED_LINES: Final = 12
"""How many lines of a check's captured output the text form shows."""
CHAPTER_NOTEBOOKS: Final[dict[str, str]] = {c.number: c.notebook for c in CHAPTERS}
"""The notebook that teaches each chapter (a failure points the learner there), from the course outline."""
WORDS: Final[dict[str, str]] = {"passed": "PASSED", "failed": "FAILED", "error": "ERROR",
                                 "timeout": "TIME LIMIT"}


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

    @property
    def passed(self) -> bool:
        return self.status == "passed"

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

    def hint(self, n: int = 1) -> str:
        """The ``n``-th hint (1-based); hints grow more specific as ``n`` grows."""
        if not self.hints:
            return "No hints for this exercise."
        return self.hints[min(max(n, 1), len(self.hints)) - 1]

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

    def to_text(self, hints: int = 1) -> str:
        """Plain text for a terminal, with the first ``hints`` hints when the exercise is not passed."""
        lines = [self.headline()]
        if self.problem:
            lines += ["", _indent(self.problem, "  ")]
        if self.load_error:
            lines += ["", "  Your file could not be loaded:", _indent(self.load_error, "    ")]
        if self.load_output:
            lines += ["  Printed while loading your file:", _indent(self.load_output.rstrip(), "    | ")]
        previous = None
        for c in self.checks:
            lines.append(f"  {c.label():<12} {c.name}")
            if not c.passed:
                if c.explanation == previous:
                    lines.append("      (same problem as above)")
                else:
                    lines.append(_indent(c.explanation, "      "))
                    if c.seed is not None:
                        lines.append(f"      (case seed {c.seed}{', kind ' + repr(c.kind) if c.kind else ''})")
                previous = c.explanation
                lines.append(f"      Rule broken: {c.rule}")
                lines.append(f"      Read: {self.chapter_pointer}")
                if c.hint:
                    lines.append(f"      Hint: {c.hint}")
            if c.output:
                printed = c.output.rstrip().splitlines()
                lines.append("      Your code printed:")
                lines.append(_indent("\n".join(printed[:MAX_PRINTED_LINES]), "      | "))
                if len(printed) > MAX_PRINTED_LINES:
                    lines.append(f"      | … ({len(printed) - MAX_PRINTED_LINES} more lines)")
        for note in self.notes:
            lines.append(_indent(f"Note: {note}", "  "))
        if not self.passed and self.hints:
            shown = max(1, min(hints, len(self.hints)))
            for n in range(1, shown + 1):
                lines.append(f"  Hint {n} of {len(self.hints)}: {self.hints[n - 1]}")
            if shown < len(self.hints):
                lines.append(f"  (More hints: result.hint({shown + 1}) in Python, or `mcp-sim grade "
                             f"{self.exercise} --hints {shown + 1}`.)")
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


def check_row_html(c: CheckResult, chapter: str = "") -> str:
    """One check as HTML: status word + icon, the check's name, explanation and rule."""
    esc = html.escape
    body = ""
    if not c.passed:
        kind = f", kind {esc(repr(c.kind))}" if c.kind else ""
        seed = f" <small>(case seed {c.seed}{kind})</small>" if c.seed is not None else ""
        body += f"<pre style='white-space:pre-wrap;margin:4px 0'>{esc(c.explanation)}</pre>{seed}"
        if c.hint:
            body += f"<div><b>Hint:</b> {esc(c.hint)}</div>"
        body += f"<div><small><b>Rule broken:</b> {esc(c.rule)}</small></div>"
        if chapter:
            body += f"<div><small><b>Read:</b> {esc(chapter_pointer(chapter))}</small></div>"
    else:
        body += f"<div>{esc(c.explanation)}</div>"
        body += f"<div><small><b>Rule:</b> {esc(c.rule)}</small></div>"
    if c.output:
        body += f"<div><small>Your code printed:</small><pre style='margin:2px 0'>{esc(c.output)}</pre></div>"
    return (f"<li class='mcp-sim-check mcp-sim-{c.status}'><b>{esc(c.label())}</b> — {esc(c.name)}"
            f"{body}</li>")


def render_html(result: GradeResult) -> str:
    """The whole result as static HTML; hints sit in nested ``<details>`` so each opens the next."""
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
    parts.extend(check_row_html(c, result.chapter) for c in result.checks)
    parts.append("</ul>")
    parts.extend(f"<p><small><b>Note:</b> {esc(n)}</small></p>" for n in result.notes)
    if not result.passed and result.hints:
        nested = ""
        for i, text in reversed(list(enumerate(result.hints, 1))):
            nested = f"<details><summary>Show hint {i} of {len(result.hints)}</summary><p>{esc(text)}</p>{nested}</details>"
        parts.append(nested)
    parts.append("</div>")
    return "".join(parts)
