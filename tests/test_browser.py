"""Every notebook, opened in JupyterLab in headless Chromium: Run All, no errors, widgets and diagrams
on screen, and a click in the trace player and in a grade result changes what is shown.

Every view fits a notebook's output at a 1280 × 800 window (no output area scrolls or clips sideways,
apart from the explicit "full size" views), and every fork button of a player shows an outcome.

Needs Debian's Chromium (``.ci/run`` installs it) and the ``playwright`` package (its own browser
download does not work here, so the system browser is launched by path). Screenshots are saved in
``test-artifacts/`` for a person to look at.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from browser import _READY, CHROMIUM_ARGS, OVERFLOW, error_outputs, find_chromium, jupyterlab, run_all

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(p.name for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
ARTIFACTS = ROOT / "test-artifacts"

chromium = find_chromium()
playwright = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(chromium is None, reason="no Chromium on this machine (.ci/run installs Debian's chromium)"),
]


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Any:
    work = tmp_path_factory.mktemp("course")
    shutil.copytree(ROOT / "notebooks", work / "notebooks", ignore=shutil.ignore_patterns("src", "*.json"))
    shutil.copytree(ROOT / "exercises", work / "exercises")
    with jupyterlab(work) as running:
        yield running


@pytest.fixture(scope="module")
def browser(lab: Any) -> Any:
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.mark.parametrize("notebook", NOTEBOOKS)
def test_notebook_runs_in_the_browser(lab: Any, browser: Any, notebook: str) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    try:
        cells = run_all(page, lab, f"notebooks/{notebook}")
        assert error_outputs(cells) == []
        assert all(c["count"] is not None for c in cells if c["type"] == "code"), "a code cell did not run"
        # Widgets rendered as live views (not the "Loading widget..." placeholder), diagrams as images.
        assert page.locator(".jp-OutputArea-output .widget-button, .jp-OutputArea-output .widget-radio").count() > 0
        assert page.locator(".jp-OutputArea-output .widget-html, .jp-OutputArea-output .widget-label").count() > 0
        diagrams = page.locator(".jp-OutputArea-output img[src^='data:image/svg+xml'], .jp-OutputArea-output svg")
        assert diagrams.count() > 0, "no diagram was rendered"
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"{Path(notebook).stem}.png"), full_page=False)
    finally:
        page.close()


@pytest.mark.parametrize("notebook", ["01_roles.ipynb", "04_when_the_server_needs_the_client.ipynb"])
def test_a_fresh_clone_shows_every_widget_before_anything_runs(lab: Any, browser: Any, notebook: str) -> None:
    # A notebook nobody has run on this machine is untrusted, so JupyterLab renders only safe outputs:
    # each player and question shows its static copy (where the committed run left it), never
    # "Loading widget..." or an empty box.
    fresh = f"notebooks/unopened-{notebook}"  # a copy no earlier test has run or autosaved
    shutil.copyfile(ROOT / "notebooks" / notebook, lab.root / fresh)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    try:
        page.goto(f"{lab.url}/lab/tree/{fresh}?reset&token={lab.token}", wait_until="domcontentloaded")
        page.wait_for_function(_READY, arg=fresh, timeout=120_000, polling=250)
        players = page.locator(".jp-OutputArea-output .mcp-sim-player-static")
        players.first.wait_for(timeout=30_000)
        assert "step 1 of" in _text(players.first)
        assert page.locator(".jp-OutputArea-output .mcp-sim-prediction").count() > 0
        assert page.get_by_text("Loading widget").count() == 0
        assert page.get_by_text("Error displaying widget").count() == 0
        ARTIFACTS.mkdir(exist_ok=True)
        players.first.scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / f"unopened-{Path(notebook).stem}.png"))
    finally:
        page.close()


def _text(locator: Any) -> str:
    return str(locator.inner_text())


def test_player_and_grader_respond_to_clicks(lab: Any, browser: Any) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    try:
        run_all(page, lab, "notebooks/00_start_here.ipynb")
        # The grader panel: "Show next hint" reveals one hint (tests/test_browser_hints.py clicks on
        # to the last).
        panel = page.locator(".mcp-sim-grader-panel").first
        assert page.locator(".mcp-sim-hint").count() == 0
        panel.get_by_role("button", name="Show next hint").click()
        page.locator(".mcp-sim-hint").first.wait_for(timeout=10_000)
        assert "Hint 1 of" in _text(panel)
        page.close()

        page = browser.new_page(viewport={"width": 1280, "height": 900})
        run_all(page, lab, "notebooks/01_roles.ipynb")
        forward = page.get_by_role("button", name="forward ▶").first
        player = forward.locator("xpath=ancestor::div[contains(@class,'widget-vbox')][1]")
        before = _text(player)
        forward.click()
        page.wait_for_timeout(400)
        after = _text(player)
        assert after != before
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "player-after-click.png"))
    finally:
        page.close()


FIT_VIEWPORT = {"width": 1280, "height": 800}


@pytest.mark.parametrize("notebook", NOTEBOOKS)
def test_every_view_fits_the_output_width(lab: Any, browser: Any, notebook: str) -> None:
    # Diagrams scale to the output (their full size one click away), widget rows wrap: nothing in an
    # output area is wider inside than it shows, so no nested sideways scroll and no clipped control.
    page = browser.new_page(viewport=FIT_VIEWPORT)
    try:
        run_all(page, lab, f"notebooks/{notebook}", timeout_s=300)  # a shared machine can be slow
        page.wait_for_timeout(500)
        found = page.evaluate(OVERFLOW)
        ARTIFACTS.mkdir(exist_ok=True)
        (ARTIFACTS / f"fit-{Path(notebook).stem}.json").write_text(json.dumps(found, indent=1))
        assert found["outputWidth"] > 0, "no output area on the page"
        assert found["overflowing"] == [], json.dumps(found["overflowing"][:8], indent=1)
    finally:
        page.close()


FORK_CHAPTERS = ["04_when_the_server_needs_the_client.ipynb", "05_what_servers_offer.ipynb", "06_transports.ipynb",
                 "07_change_and_caching.ipynb", "08_tasks.ipynb", "09_the_complete_call.ipynb",
                 "11_authorization.ipynb"]
"""The chapters whose players can re-run their story (they were given a runner)."""

_OUTCOMES = ("Outcome:", "Nothing to drop here", "Cannot fork")


@pytest.mark.parametrize("notebook", FORK_CHAPTERS)
def test_every_fork_button_shows_an_outcome(lab: Any, browser: Any, notebook: str) -> None:
    # In each player: fork at the first step (often the host acting: the player says what to change
    # instead), then one step on (a message: the re-run's outcome beside the original, even when it
    # ends in a timeout nothing caught). Nothing may fail silently.
    page = browser.new_page(viewport=FIT_VIEWPORT)
    try:
        run_all(page, lab, f"notebooks/{notebook}", timeout_s=300)
        players = page.locator(".mcp-sim-player:visible")
        forked = 0
        for i in range(players.count()):
            player = players.nth(i)
            player.get_by_text("Fork this moment").first.click()  # open the fold
            fork = player.get_by_role("button", name="fork and re-run")
            fork.wait_for(timeout=10_000)
            if fork.is_disabled():  # a player without a runner (a real-wire trace, a lab's stepper)
                continue
            forked += 1
            for move in (None, "forward ▶"):
                if move:
                    player.get_by_role("button", name=move).click()
                    page.wait_for_timeout(300)
                before = _text(player)
                fork.scroll_into_view_if_needed()
                fork.click()
                text = _changed_text(page, player, before)
                assert any(word in text for word in _OUTCOMES), text[-800:]
                assert "That did not work" not in text
        assert forked > 0, "no player with a runner in this chapter"
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"fork-{Path(notebook).stem}.png"), full_page=False)
    finally:
        page.close()


def _changed_text(page: Any, locator: Any, before: str, timeout_s: float = 20) -> str:
    """The locator's text once a click changed it (or, if it did not change, after ``timeout_s``: the
    same advice twice is an outcome too)."""
    deadline = time.monotonic() + timeout_s
    while True:
        text = _text(locator)
        if text != before or time.monotonic() > deadline:
            return text
        page.wait_for_timeout(250)
