"""Text meant for reading: HTML forms with plain-text twins, and a first hour that teaches.

Issue #28, items 5 and 7. Lab explanations, trace tables and long JSON display as HTML that wraps,
is left-aligned, fits a 900-pixel output and shows characters unescaped, each with a ``text/plain``
twin; no committed notebook shows a ``\\uXXXX`` escape. Chapter 00 opens with a story that takes
virtual time, lists the chapters from the outline, and every SEP number is explained where the
course (or a README) first shows it.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

import nbformat
import pytest

from mcp_sim.course import CHAPTERS
from mcp_sim.course.contents import Contents
from mcp_sim.course.notebooks import NOTEBOOKS, SOURCES, read_cells
from mcp_sim.scenarios import run_scenario
from mcp_sim.scenarios.security import LABS, run_lab
from mcp_sim.trace import Trace, TraceTable
from mcp_sim.trace.reading import JsonView, Prose

ROOT = Path(__file__).resolve().parents[1]
ESCAPE = re.compile(r"\\u[0-9a-fA-F]{4}")
LONG_URL = "https://auth.example/" + "very-long-path-segment-" * 8 + "?redirect_uri=https://client.example/callback"


def _bundle(obj: Any) -> dict[str, str]:
    bundle = obj._repr_mimebundle_()
    assert isinstance(bundle, dict)
    assert bundle.get("text/plain"), f"{type(obj).__name__} has no plain-text twin"
    assert bundle.get("text/html"), f"{type(obj).__name__} has no HTML form"
    return bundle


def _assert_readable_html(page: str) -> None:
    assert not ESCAPE.search(page), ESCAPE.search(page)
    assert "text-align:left" in page  # JupyterLab right-aligns HTML table cells unless told otherwise
    assert "overflow-wrap:anywhere" in page  # a URL or raw frame may break instead of widening the page
    assert "text-align:right" not in page.replace(" ", "")


# -- (5) reading as HTML -----------------------------------------------------------------------------

def test_json_view_is_unescaped_foldable_and_wraps() -> None:
    value = {"text": "Lisbon: day 1: fog, 22°C", "url": LONG_URL}
    bundle = _bundle(JsonView(value, title="a result"))
    page = bundle["text/html"]
    _assert_readable_html(page)
    assert "22°C" in page and "22°C" in bundle["text/plain"]
    assert page.startswith("<details") and " open" in page and "<summary" in page
    assert "white-space:pre-wrap" in page and "max-width:900px" in page
    assert json.loads(bundle["text/plain"].split("\n", 1)[1]) == value
    assert " open" not in JsonView(value, folded=True).to_html().split(">")[0]


def test_prose_wraps_at_spaces_in_text_and_anywhere_in_html() -> None:
    prose = Prose(["word " * 60 + LONG_URL], heading="Heading", facts=[("the fix", "refuse it " * 20)])
    bundle = _bundle(prose)
    _assert_readable_html(bundle["text/html"])
    text = bundle["text/plain"]
    assert LONG_URL in text.split("\n")  # a long word gets a line of its own, never cut
    assert all(len(line) <= 100 for line in text.splitlines() if line != LONG_URL)
    assert "<dt" in bundle["text/html"] and "the fix" in text


def test_trace_table_html_wraps_and_is_left_aligned_with_a_text_twin() -> None:
    trace = Trace.of(run_scenario("weather", revision="2026-07-28", transport="http", seed=1))
    table = TraceTable(trace)
    bundle = _bundle(table)
    page = bundle["text/html"]
    _assert_readable_html(page)
    assert bundle["text/plain"] == table.to_text()
    assert "max-width:900px" in page
    assert "/<wbr>" in page  # method names and routes wrap at their slashes, not mid-word
    for cell in re.findall(r"<td style='([^']*)'", page):
        assert "text-align:left" in cell


def test_weather_forecast_shows_degrees_unescaped() -> None:
    trace = Trace.of(run_scenario("weather", revision="2026-07-28", transport="stdio", seed=1))
    page = TraceTable(trace).to_html()
    assert not ESCAPE.search(page)


def test_lab_result_displays_as_readable_html_with_a_text_twin() -> None:
    result = run_lab("tool-shadowing", "vulnerable", seed=1)
    bundle = _bundle(result)
    _assert_readable_html(bundle["text/html"])
    assert result.verdict() in bundle["text/plain"]
    for label in ("why it worked", "the boundary", "the rule", "not covered"):
        assert label in bundle["text/plain"] and label in bundle["text/html"]
    _bundle(result.headline())


@pytest.mark.parametrize("config", ["vulnerable", "fixed"])
def test_lab_explanations_name_the_attacker_once(config: str) -> None:
    for name, lab in LABS.items():
        result = run_lab(name, config, seed=0)  # type: ignore[arg-type]
        assert result.explanation.count(lab.facts.attacker) == 1, (name, config)
        report = result.report()
        assert report.to_text().count(lab.facts.attacker[:40]) == 1, (name, config)


def _text_outputs(nb: nbformat.NotebookNode) -> list[tuple[int, str]]:
    found = []
    for i, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            texts = [output.get("text", "")]
            texts += [v for k, v in output.get("data", {}).items() if k.startswith("text/") and isinstance(v, str)]
            found += [(i, t) for t in texts if t]
    return found


NOTEBOOK_FILES = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOK_FILES, ids=lambda p: p.stem)
def test_no_notebook_shows_unicode_escapes(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    for i, text in _text_outputs(nb):
        match = ESCAPE.search(text)
        assert match is None, f"{path.name} cell {i}: {text[max(0, match.start() - 60):match.end() + 20]!r}"


# -- (7) onboarding --------------------------------------------------------------------------------

def _chapter_00_cells() -> list[Any]:
    return read_cells((SOURCES / "00_start_here.py").read_text(encoding="utf-8"))


def test_chapter_00_opens_with_a_story_that_takes_virtual_time() -> None:
    code = [c.source for c in _chapter_00_cells() if c.cell_type == "code"]
    call = re.search(r'run_scenario\("([^"]+)", revision="([^"]+)", seed=(\d+)\)', code[0])
    assert call is not None, "chapter 00's first code cell runs a story"
    name, revision, seed = call.group(1), call.group(2), int(call.group(3))
    trace = run_scenario(name, revision=revision, seed=seed)
    times = [e.t_ms for e in trace.events]
    assert times == sorted(times) and times[-1] > 1000
    assert len(set(times)) >= len(times) // 2, "most steps of the story happen at their own time"
    # the same messages as the complete call, only paced
    def flow(t: Any) -> list[tuple[str, str, str | None]]:
        return [(e.sender, e.kind, e.method) for e in t.events]

    assert flow(trace) == flow(run_scenario("complete-call", revision=revision, seed=seed))


def test_chapter_00_first_trace_in_the_committed_notebook_has_increasing_times() -> None:
    nb = nbformat.read(NOTEBOOKS / "00_start_here.ipynb", as_version=4)
    first = next(c for c in nb.cells if c.cell_type == "code")
    text = next(o["data"]["text/plain"] for o in first.outputs if "text/plain" in o.get("data", {}))
    times = [int(m.group(1)) for m in re.finditer(r"^\d+\s+(\d+) ms", text, flags=re.M)]
    assert len(times) > 10 and times == sorted(times) and times[-1] > times[0]


def test_chapter_list_is_the_outline() -> None:
    contents = Contents()
    assert [c.number for c in contents.rows] == [c.number for c in CHAPTERS if c.number != "00"]
    markdown = _bundle_markdown(contents)
    for chapter in CHAPTERS[1:]:
        assert f"[{chapter.number} · {chapter.title}]({chapter.notebook}.ipynb)" in markdown
        assert chapter.covers in str(contents)
    source = (SOURCES / "00_start_here.py").read_text(encoding="utf-8")
    assert "Contents()" in source and "| [01 · Roles]" not in source  # generated, not typed
    nb = nbformat.read(NOTEBOOKS / "00_start_here.ipynb", as_version=4)
    shown = [t for _, t in _text_outputs(nb) if "[01 · Roles](01_roles.ipynb)" in t]
    assert shown and shown[0] == contents.to_markdown()


def _bundle_markdown(contents: Contents) -> str:
    bundle = contents._repr_mimebundle_()
    assert bundle["text/plain"] and bundle["text/markdown"]
    return bundle["text/markdown"]


SEP = re.compile(r"SEP-(\d+)")
EXPLAINED = re.compile(r"SEP-(\d+) \(([^()]*)\)")


def _unexplained(text: str, seen: set[str]) -> list[str]:
    """SEP numbers in ``text`` that appear for the first time (not in ``seen``) without a
    parenthetical of at least four words right after them; ``seen`` is updated."""
    bad = []
    for m in SEP.finditer(text):
        number = m.group(1)
        if number in seen:
            continue
        seen.add(number)
        explained = EXPLAINED.match(text, m.start())
        if explained is None or len(explained.group(2).split()) < 4:
            bad.append(text[max(0, m.start() - 80):m.end() + 80])
    return bad


def test_every_sep_number_is_explained_where_the_course_first_shows_it() -> None:
    """In course order — each chapter's source, its predictions, then what its notebook displays —
    the first mention of each SEP number says what it is or what it changed."""
    seen: set[str] = set()
    bad: list[str] = []
    for chapter in CHAPTERS:
        source = SOURCES / f"{chapter.notebook}.py"
        if source.exists():
            bad += _unexplained(source.read_text(encoding="utf-8"), seen)
        predictions = ROOT / "mcp_sim" / "course" / "predictions" / f"{chapter.number}.toml"
        if predictions.exists():
            bad += _unexplained(json.dumps(tomllib.loads(predictions.read_text(encoding="utf-8")),
                                           ensure_ascii=False), seen)
        notebook = NOTEBOOKS / f"{chapter.notebook}.ipynb"
        if notebook.exists():
            for _, text in _text_outputs(nbformat.read(notebook, as_version=4)):
                bad += _unexplained(text, seen)
    assert not bad, bad


@pytest.mark.parametrize("readme", sorted((ROOT / "exercises").glob("*/README.md")), ids=lambda p: p.parent.name)
def test_every_sep_number_in_a_readme_is_explained_on_first_appearance(readme: Path) -> None:
    bad = _unexplained(" ".join(readme.read_text(encoding="utf-8").split()), set())
    assert not bad, bad
