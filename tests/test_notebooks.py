"""The committed notebooks: in step with their sources, executed, and built like a chapter should be.

nbval (configured in pyproject.toml) re-runs each notebook and compares its outputs; these tests
check what nbval cannot: that the committed cells are the sources' cells, that every code cell was
executed and kept its outputs, that nothing volatile or machine-specific leaked into them, and that
each chapter has goals, a recap, an exercise link, a widget and a predict-then-reveal question.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest

from mcp_sim.course.notebooks import SOURCES, build_notebook, parse_percent, target_for

SOURCE_FILES = sorted(SOURCES.glob("*.py"))
EXERCISES = Path(__file__).resolve().parents[1] / "exercises"


def test_there_are_five_chapters() -> None:
    assert [p.stem[:2] for p in SOURCE_FILES] == ["00", "01", "02", "03", "04"]


def test_percent_format_parsing() -> None:
    cells = parse_percent("ignored\n# %% [markdown]\n# # Title\n#\n# text\n# %%\nx = 1\n\n# %% tags=[\"a\"]\ny\n")
    assert cells == [
        {"cell_type": "markdown", "source": "# Title\n\ntext", "tags": []},
        {"cell_type": "code", "source": "x = 1", "tags": []},
        {"cell_type": "code", "source": "y", "tags": ["a"]},
    ]


@pytest.mark.parametrize("source", SOURCE_FILES, ids=lambda p: p.stem)
def test_committed_notebook_matches_its_source(source: Path) -> None:
    committed = nbformat.read(target_for(source), as_version=4)
    fresh = build_notebook(source)
    assert [(c.cell_type, c.source) for c in committed.cells] == [(c.cell_type, c.source) for c in fresh.cells], (
        f"{target_for(source).name} is out of date: run `python -m mcp_sim.course.notebooks {source.stem[:2]}`")


@pytest.mark.parametrize("source", SOURCE_FILES, ids=lambda p: p.stem)
def test_committed_notebook_was_executed(source: Path) -> None:
    nb = nbformat.read(target_for(source), as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.execution_count is not None for c in code)
    counts = [c.execution_count for c in code]
    assert counts == list(range(1, len(code) + 1)), "cells must have run once, top to bottom, in a fresh kernel"
    for cell in code:
        for out in cell.outputs:
            assert out.output_type != "error", cell.source
            assert not (out.output_type == "stream" and out.name == "stderr"), f"stderr noise: {out.text[:200]}"


@pytest.mark.parametrize("source", SOURCE_FILES, ids=lambda p: p.stem)
def test_no_machine_paths_or_addresses_in_outputs(source: Path) -> None:
    text = target_for(source).read_text(encoding="utf-8")
    assert not re.search(r"/(root|home|tmp|work)/", text)
    assert not re.search(r" at 0x[0-9a-f]{6,}", text)


@pytest.mark.parametrize("source", SOURCE_FILES, ids=lambda p: p.stem)
def test_chapter_structure(source: Path) -> None:
    nb = nbformat.read(target_for(source), as_version=4)
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith(f"# {source.stem[:2]} ·")
    assert "What you will learn" in markdown or "In this notebook" in markdown
    assert "Recap" in markdown
    assert "Prediction(" in code, "each chapter asks at least one predict-then-reveal question"
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    widgets = [o for o in outputs if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    assert widgets, "each chapter has at least one interactive widget"
    named = set(re.findall(r"`(ex\d\d_[a-z_]+)`", markdown))
    if source.stem[:2] != "00":
        assert named, "each chapter links to its exercises"
    for exercise in named:
        assert (EXERCISES / exercise / "starter.py").is_file(), f"{exercise} is named but does not exist"


def test_widget_state_is_not_committed() -> None:
    # Widget views are stored as model ids that change every run; nbval skips them, and the saved
    # widget state (a large, volatile blob) is not kept in the notebook metadata.
    for source in SOURCE_FILES:
        meta = json.loads(target_for(source).read_text(encoding="utf-8"))["metadata"]
        assert "widgets" not in meta
