"""The course's table of contents, drawn from the outline (:data:`mcp_sim.course.CHAPTERS`).

Chapter 00 displays it instead of typing a list, so a chapter added to the outline appears there
without anyone remembering to update a page. In a notebook it is a Markdown table with a link to
each notebook (Markdown renders left-aligned in JupyterLab and on GitHub); ``str()`` is the same
list as plain text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mcp_sim.course import CHAPTERS, Chapter


@dataclass(frozen=True)
class Contents:
    """The chapters after ``after`` (chapter 00 lists what follows it), in outline order."""

    chapters: Sequence[Chapter] = CHAPTERS
    after: str = "00"

    @property
    def rows(self) -> list[Chapter]:
        return [c for c in self.chapters if c.number > self.after]

    def to_markdown(self) -> str:
        lines = ["| notebook | what it covers |", "|:---|:---|"]
        for c in self.rows:
            planned = " *(planned)*" if c.status == "planned" else ""
            lines.append(f"| [{c.number} · {c.title}]({c.notebook}.ipynb){planned} | {c.covers} |")
        return "\n".join(lines)

    def to_text(self) -> str:
        width = max((len(f"{c.number} · {c.title}") for c in self.rows), default=0)
        return "\n".join(f"{f'{c.number} · {c.title}':<{width}}  {c.covers}"
                         + ("  (planned)" if c.status == "planned" else "") for c in self.rows)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": self.to_text(), "text/markdown": self.to_markdown()}

    def __str__(self) -> str:
        return self.to_text()


__all__ = ["Contents"]
