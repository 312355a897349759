"""The committed notebooks: in step with their sources, executed, and built like a chapter should be.

nbval (configured in pyproject.toml) re-runs each notebook and compares its outputs; these tests
check what nbval cannot: that the committed cells are the sources' cells, that every code cell was
executed and kept its outputs, that nothing volatile or machine-specific leaked into them, and that
each chapter has goals, a recap, an exercise link, a widget and a predict-then-reveal question.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest

from mcp_sim.course import CHAPTERS
from mcp_sim.course.notebooks import SOURCES, build_notebook, read_cells, target_for
from mcp_sim.course.predict import Prediction

SOURCE_FILES = sorted(SOURCES.glob("*.py"))
ROOT = Path(__file__).resolve().parents[1]
EXERCISES = ROOT / "exercises"


def test_every_written_chapter_has_a_notebook_and_no_other() -> None:
    written = [c.number for c in CHAPTERS if c.status == "written"]
    assert written[:6] == ["00", "01", "02", "03", "04", "05"]
    assert [p.stem[:2] for p in SOURCE_FILES] == written
    assert [p.stem for p in SOURCE_FILES] == [c.notebook for c in CHAPTERS if c.status == "written"]
    for chapter in CHAPTERS:
        if chapter.status == "written":
            assert (ROOT / "notebooks" / f"{chapter.notebook}.ipynb").is_file(), chapter.notebook


def test_a_failed_check_points_to_the_notebook_that_exists() -> None:
    from mcp_sim.grading.result import CHAPTER_NOTEBOOKS

    for chapter in CHAPTERS:
        if chapter.status == "written":
            assert (ROOT / "notebooks" / f"{CHAPTER_NOTEBOOKS[chapter.number]}.ipynb").is_file()


def test_percent_format_is_read_by_jupytext() -> None:
    cells = read_cells("# %% [markdown]\n# # Title\n#\n# text\n# %%\nx = 1\n\n# %% tags=[\"a\"]\ny\n")
    assert [(c.cell_type, c.source, list(c.metadata.get("tags", []))) for c in cells] == [
        ("markdown", "# Title\n\ntext", []),
        ("code", "x = 1", []),
        ("code", "y", ["a"]),
    ]


@pytest.mark.parametrize("source", SOURCE_FILES, ids=lambda p: p.stem)
def test_built_cells_keep_ids_and_tags(source: Path) -> None:
    nb = build_notebook(source)
    assert [c["id"] for c in nb.cells] == [f"{source.stem[:2]}-{i:03d}" for i in range(len(nb.cells))]
    assert "jupytext" not in nb.metadata  # the notebook is the course's, not a paired file's


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
    assert "ask(" in code, "each chapter asks at least one predict-then-reveal question"
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    widgets = [o for o in outputs if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    assert widgets, "each chapter has at least one interactive widget"
    named = set(re.findall(r"`(ex\d\d_[a-z_]+)`", markdown))
    if source.stem[:2] != "00":
        assert named, "each chapter links to its exercises"
    for exercise in named:
        assert (EXERCISES / exercise / "starter.py").is_file(), f"{exercise} is named but does not exist"


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


@pytest.mark.parametrize("source", SOURCE_FILES, ids=lambda p: p.stem)
def test_every_widget_shows_its_last_state_without_a_kernel(source: Path) -> None:
    # Pages that draw widgets from saved state (nbconvert's HTML, nbviewer, a trusted notebook) show
    # every player, question and grader panel where the run left it; pages that cannot run widgets
    # (GitHub, an untrusted notebook in JupyterLab) show the static HTML copy in the same bundle.
    nb = json.loads(target_for(source).read_text(encoding="utf-8"))
    state = nb["metadata"]["widgets"][WIDGET_STATE]["state"]
    views = [o["data"] for c in nb["cells"] if c["cell_type"] == "code" for o in c["outputs"]
             if WIDGET_VIEW in o.get("data", {})]
    assert views
    for data in views:
        model = state[data[WIDGET_VIEW]["model_id"]]
        assert model["model_name"].endswith("Model")
        static, text = ("".join(data.get(k, "")) for k in ("text/html", "text/plain"))
        assert static.startswith("<"), "a widget output without a static copy"
        assert text and "Box(" not in text, "the text form should say what the widget shows"


def test_a_prediction_shows_its_question_but_not_its_answer_without_a_kernel() -> None:
    question = Prediction(question="Which id does a notification carry?", choices=["1", "none", "null"],
                          answers=["none"], why="A notification has no id.")
    bundle = question._repr_mimebundle_()
    assert WIDGET_VIEW in bundle
    static = bundle["text/html"]
    assert static.count("<li>") == 3 and "Which id does a notification carry?" in static
    assert "A notification has no id." not in static  # predict first: the reveal needs the live panel
    assert bundle["text/plain"] == str(question) and "(b) none" in bundle["text/plain"]


def _readme_course_command() -> list[str]:
    """The ``jupyter lab …`` part of the README's first set-up command, as arguments."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```bash\n(.*?)```", readme, flags=re.S)
    commands = [line for block in blocks[:2] for line in block.splitlines() if line and not line.startswith("#")]
    assert len(commands) == 2, "the README starts with exactly two set-up commands"
    lab = commands[0].split("&&")[-1].strip()
    assert lab.startswith(".venv/bin/jupyter lab "), lab
    return ["jupyter", *shlex.split(lab)[1:]]  # the venv's jupyter, run by this interpreter


NOTE_URL = "import pathlib, sys; pathlib.Path(sys.argv[1]).write_text(sys.argv[2])"


@pytest.mark.slow
def test_readme_course_command_serves_the_project_and_opens_chapter_00(tmp_path: Path) -> None:
    # Run the README's command as written, adding only what a test needs: a free loopback port, a
    # known token, a private runtime folder, and a "browser" that only notes what it was asked to open.
    noted = tmp_path / "browser-was-asked-to-open.txt"
    browser = f"{shlex.quote(sys.executable)} -c {shlex.quote(NOTE_URL)} {shlex.quote(str(noted))} %s"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    args = [sys.executable, "-m", *_readme_course_command(), f"--ServerApp.port={port}", "--ServerApp.ip=127.0.0.1",
            "--IdentityProvider.token=readme", f"--ServerApp.browser={browser}", "--allow-root"]
    env = dict(os.environ, JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"), JUPYTER_CONFIG_DIR=str(tmp_path / "config"))
    with (tmp_path / "lab.log").open("w") as log:
        proc = subprocess.Popen(args, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/contents?token=readme",
                                                timeout=2) as resp:
                        root = json.load(resp)
                    break
                except OSError:
                    assert proc.poll() is None and time.monotonic() < deadline, (tmp_path / "lab.log").read_text()
                    time.sleep(0.3)
            names = {item["name"] for item in root["content"]}
            assert {"notebooks", "exercises", "README.md"} <= names, names
            while not noted.exists() and time.monotonic() < deadline:
                time.sleep(0.2)
            # JupyterLab hands the browser a local page that redirects to the notebook's address.
            page = urllib.request.urlopen(noted.read_text(encoding="utf-8").strip()).read().decode()
            assert f"http://127.0.0.1:{port}/lab/tree/notebooks/00_start_here.ipynb?" in page
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
