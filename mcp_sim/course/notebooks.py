"""Build the course notebooks from their sources, execute them, and save them with outputs.

Each chapter is written as a plain Python file in jupytext's "percent" format under
``notebooks/src/``: ``# %% [markdown]`` starts a text cell (its lines begin with ``# ``), ``# %%``
starts a code cell. Plain files diff and review well, and ``jupytext`` (which reads them here) is
also what a learner uses to pair a notebook with a script. The executed ``.ipynb`` next to each
source is what learners open and what nbval re-runs in CI, comparing every output with the
committed one.

Run ``python -m mcp_sim.course.notebooks`` to rebuild every notebook (or name some).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import jupytext
import nbformat
from nbclient import NotebookClient

from mcp_sim.protocol import rulebook

PROJECT_ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = PROJECT_ROOT / "notebooks"
SOURCES = NOTEBOOKS / "src"

RULES_TABLE = "[[rules-table]]"
"""Where a chapter's source asks for its generated "rules this chapter taught" table."""


def render_markdown(text: str, chapter: str) -> str:
    """A markdown cell as the learner reads it: each ``[[rule ID]]`` / ``[[ref ID]]`` becomes the rule
    with its strength and a link to its source, and ``[[rules-table]]`` the table of every rule the
    rulebook files under this chapter. The rules' words come from the rulebook, never from the cell."""
    if RULES_TABLE in text:
        text = text.replace(RULES_TABLE, rulebook.table(rulebook.select(chapter=chapter)))
    return rulebook.expand(text, "markdown")


def read_cells(text: str) -> list[nbformat.NotebookNode]:
    """The cells of a percent-format source, as jupytext (the format's own tool) reads them."""
    return list(jupytext.reads(text, fmt="py:percent").cells)


def build_notebook(source: Path) -> nbformat.NotebookNode:
    """An unexecuted notebook from a percent-format source file."""
    nb = nbformat.v4.new_notebook()
    nb.metadata = {
        "kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"},
        "language_info": {"name": "python"},
    }
    for i, cell in enumerate(read_cells(source.read_text(encoding="utf-8"))):
        if cell.cell_type == "markdown":
            node = nbformat.v4.new_markdown_cell(render_markdown(cell.source, source.stem[:2]))
        else:
            node = nbformat.v4.new_code_cell(cell.source)
        node["id"] = f"{source.stem[:2]}-{i:03d}"  # stable ids keep diffs quiet
        tags = cell.metadata.get("tags")
        if tags:
            node.metadata["tags"] = list(tags)
        nb.cells.append(node)
    return nb


def execute(nb: nbformat.NotebookNode, *, timeout: int = 120) -> nbformat.NotebookNode:
    """Run every cell in a fresh kernel, in the notebooks folder, and keep the outputs.

    The widgets' last state is saved in the notebook's metadata (``widgets``): a page that draws
    widgets from saved state (``jupyter nbconvert --to html``, nbviewer, a trusted notebook in
    JupyterLab) shows every player, question and grader panel as the run left it. Where widgets cannot
    run (GitHub, a freshly cloned, untrusted notebook), each output's static HTML copy stands in."""
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=False, store_widget_state=True,
                            resources={"metadata": {"path": str(NOTEBOOKS)}})
    client.execute()
    return nb


def target_for(source: Path) -> Path:
    return NOTEBOOKS / f"{source.stem}.ipynb"


def build(names: list[str] | None = None, *, run: bool = True) -> list[Path]:
    """Build (and by default execute) the notebooks whose source stems start with one of ``names``."""
    written = []
    for source in sorted(SOURCES.glob("*.py")):
        if names and not any(source.stem.startswith(n) for n in names):
            continue
        nb = build_notebook(source)
        if run:
            nb = execute(nb)
        target = target_for(source)
        nbformat.write(nb, target)
        written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mcp_sim.course.notebooks", description=__doc__)
    parser.add_argument("names", nargs="*", help="notebook name prefixes, e.g. 00 03")
    parser.add_argument("--no-run", action="store_true", help="write the notebooks without executing them")
    args = parser.parse_args(argv)
    for path in build(args.names or None, run=not args.no_run):
        sys.stderr.write(f"wrote {path.relative_to(PROJECT_ROOT)}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
