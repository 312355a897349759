"""The grader panel in a real JupyterLab (headless Chromium): a failed exercise shows the rule and
the case but no hint and no answer; each click on "Show next hint" reveals exactly one more hint, and
only the last gives the expected answer; then the button says there are no more.

Needs Debian's Chromium and the ``playwright`` package, like tests/test_browser.py (whose helpers in
tests/browser.py it uses). The notebook is written into a scratch folder, so nothing committed is run
or autosaved.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import nbformat
import pytest
from browser import CHROMIUM_ARGS, error_outputs, find_chromium, jupyterlab, run_all

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"
# Right about parse errors and invalid requests, wrong (-32600) about everything else: every failure
# after the first two checks is a wrong answer, so the last hint is the expected code.
WRONG = '''import json


def choose_error_code(line, server):
    try:
        json.loads(line)
    except ValueError:
        return -32700
    return -32600
'''
CELL = '''from mcp_sim.widgets.grader_panel import grade_panel

panel = grade_panel("ex02_error_codes", file="wrong_error_codes.py", record=False)
panel'''

chromium = find_chromium()
playwright = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(chromium is None, reason="no Chromium on this machine (.ci/run installs Debian's chromium)"),
]


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Any:
    work = tmp_path_factory.mktemp("hints")
    (work / "wrong_error_codes.py").write_text(WRONG, encoding="utf-8")
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(CELL)]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, work / "hints.ipynb")
    with jupyterlab(work) as running:
        yield running
    shutil.rmtree(work, ignore_errors=True)


def test_show_next_hint_reveals_the_hints_one_by_one(lab: Any) -> None:
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        try:
            cells = run_all(page, lab, "hints.ipynb")
            assert error_outputs(cells) == []
            panel = page.locator(".mcp-sim-grader-panel").first
            panel.wait_for(timeout=30_000)
            text = panel.inner_text()
            # the first failure: the rule and the case, what the code did; no hint, no answer
            assert "FAILED" in text and "Rule broken:" in text and "Case" in text
            assert "Your function returned -32600." in text
            assert "Hint 1 of" not in text and "The answer" not in text
            button = panel.get_by_role("button", name="Show next hint")
            hints = panel.locator(".mcp-sim-hint")
            assert hints.count() == 0
            total = None
            n = 0
            while total is None or n < total:
                button.click()
                n += 1
                page.wait_for_function(
                    "n => document.querySelectorAll('.mcp-sim-grader-panel .mcp-sim-hint').length === n",
                    arg=n, timeout=10_000)
                shown = hints.all_inner_texts()
                assert len(shown) == n, "one click, one more hint"
                if total is None:
                    total = int(shown[0].split(" of ", 1)[1].split(":", 1)[0])
                    assert total >= 3
                assert f"Hint {n} of {total}:" in shown[-1]
                if n < total:
                    assert not any("The answer" in s for s in shown), "the answer came before the last hint"
            assert "The answer" in shown[-1] and "-32601" in shown[-1]
            assert panel.get_by_role("button", name="No more hints").is_disabled()
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "grader-panel-hints.png"), full_page=True)
        finally:
            page.close()
            browser.close()
