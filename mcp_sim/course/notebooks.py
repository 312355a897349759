"""Build the course notebooks from their sources, execute them, and save them with outputs.

Each chapter is written as a plain Python file in "percent" format under ``notebooks/src/``:
``# %% [markdown]`` starts a text cell (its lines begin with ``# ``), ``# %%`` starts a code cell.
Plain files diff and review well; the executed ``.ipynb`` next to them is what learners open and
what nbval re-runs in CI, comparing every output with the committed one.

Run ``python -m mcp_sim.course.notebooks`` to rebuild every notebook (or name some).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

PROJECT_ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = PROJECT_ROOT / "notebooks"
SOURCES = NOTEBOOKS / "src"

_CELL_START = re.compile(r"^# %%(?P<kind> \[markdown\])?(?P<tags>\s+tags=\[(?P<taglist>[^\]]*)\])?\s*$")


def parse_percent(text: str) -> list[dict[str, Any]]:
    """Split a percent-format source into cells: ``{"cell_type", "source", "tags"}``."""
    cells: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    for line in text.splitlines():
        match = _CELL_START.match(line)
        if match:
            if current is not None:
                cells.append(current)
            tags = [t.strip().strip("'\"") for t in (match.group("taglist") or "").split(",") if t.strip()]
            current = {"cell_type": "markdown" if match.group("kind") else "code", "lines": [], "tags": tags}
            continue
        if current is None:
            continue  # text before the first cell marker (a module docstring, a licence line) is skipped
        if current["cell_type"] == "markdown":
            if line.startswith("# "):
                line = line[2:]
            elif line.startswith("#"):
                line = line[1:]
        current["lines"].append(line)
    if current is not None:
        cells.append(current)
    out = []
    for cell in cells:
        lines = cell.pop("lines")
        while lines and not lines[-1].strip():
            lines.pop()
        while lines and not lines[0].strip():
            lines.pop(0)
        cell["source"] = "\n".join(lines)
        out.append(cell)
    return out


def build_notebook(source: Path) -> nbformat.NotebookNode:
    """An unexecuted notebook from a percent-format source file."""
    nb = nbformat.v4.new_notebook()
    nb.metadata = {
        "kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"},
        "language_info": {"name": "python"},
    }
    for i, cell in enumerate(parse_percent(source.read_text(encoding="utf-8"))):
        if cell["cell_type"] == "markdown":
            node = nbformat.v4.new_markdown_cell(cell["source"])
        else:
            node = nbformat.v4.new_code_cell(cell["source"])
        node["id"] = f"{source.stem[:2]}-{i:03d}"  # stable ids keep diffs quiet
        if cell["tags"]:
            node.metadata["tags"] = cell["tags"]
        nb.cells.append(node)
    return nb


def execute(nb: nbformat.NotebookNode, *, timeout: int = 120) -> nbformat.NotebookNode:
    """Run every cell in a fresh kernel, in the notebooks folder, and keep the outputs."""
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=False, store_widget_state=False,
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
