"""The ``--html`` page of ``mcp-sim check`` carries the course's trace player for each era of the real
run, and each finding links to its step there (as well as to the diagram and the frame).

One real check (the zoo's ``cursor-ignored`` server: a SHOULD finding in each era) feeds every test.
The page is read as text (the players, the steps, the links, no external asset, the same bytes for
the same run) and, where Chromium and Playwright are installed, opened in a browser: a click on a
finding shows the player at that step, and its buttons and the diagram's rows step on from there.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_sim.bridge.check import CheckOptions, CheckReport, eras_of_links, run_check
from mcp_sim.bridge.check.page import report_page
from mcp_sim.trace.events import Trace

ZOO = Path(__file__).parent / "check_zoo" / "server.py"

pytestmark = pytest.mark.slow  # one real check: two eras of real processes


@pytest.fixture(scope="module")
def run() -> tuple[CheckReport, Trace]:
    options = CheckOptions(nemesis=("malformed",), deadline=5.0, grace=1.0)
    return anyio.run(run_check, [sys.executable, str(ZOO), "--defect", "cursor-ignored"], options)


@pytest.fixture(scope="module")
def page(run: tuple[CheckReport, Trace]) -> str:
    return report_page(*run)


def _player(page: str, era: str) -> str:
    start = page.index(f"id='player-{era}'")
    return page[start:page.index("</div></section>", page.index("class='mcp-sim-player-diagram'", start))]


def test_the_page_holds_a_player_for_each_era_with_a_step_per_event(run: tuple[CheckReport, Trace], page: str) -> None:
    trace = run[1]
    eras = eras_of_links(trace)
    assert set(eras.values()) == {"legacy", "modern"}
    for era in ("legacy", "modern"):
        player = _player(page, era)
        mine = [e.seq for e in trace if eras.get(e.link) == era]
        steps = [int(s) for s in re.findall(r"<section class='mcp-sim-step[^']*' id='p(\d+)'", player)]
        assert steps == mine, era  # every event of the era, in order, and nothing else
        assert f"step 1 of {len(mine)} · event #{mine[0]}" in player
        assert f"step {len(mine)} of {len(mine)} · event #{mine[-1]}" in player
        # the diagram is drawn once per player, every step's row in it
        assert player.count("<svg") == 1
        assert all(f'data-seq="{seq}"' in player for seq in mine)


def test_every_finding_links_to_its_own_step_in_its_era_s_player(run: tuple[CheckReport, Trace], page: str) -> None:
    report, trace = run
    assert {f.era for f in report.findings} == {"2025-11-25", "2026-07-28"}  # a finding in each era
    eras = eras_of_links(trace)
    for finding in report.findings:
        seq = finding.evidence["seq"]
        assert f"<a href='#p{seq}'>player</a>" in page
        player = _player(page, eras[finding.evidence["link"]])
        assert f"id='p{seq}' data-seq='{seq}'" in player
        step = player[player.index(f"id='p{seq}'"):]
        step = step[:step.index("</section>")]
        assert f"event #{seq} ·" in step  # the step shows the finding's own event
    targets = set(re.findall(r"href='#(p\d+)'", page))
    ids = set(re.findall(r"id='(p\d+)'", page))
    assert targets and targets <= ids  # no link of the page (findings, buttons, frames) goes nowhere


def test_each_step_s_buttons_go_to_its_neighbours(run: tuple[CheckReport, Trace], page: str) -> None:
    player = _player(page, "legacy")
    seqs = [int(s) for s in re.findall(r"<section class='mcp-sim-step[^']*' id='p(\d+)'", player)]
    for i in (0, 1, len(seqs) // 2, len(seqs) - 1):
        step = player[player.index(f"id='p{seqs[i]}'"):]
        step = step[:step.index("</nav>")]
        back = "<span aria-disabled='true'>◀ back</span>" if i == 0 else f"<a href='#p{seqs[i - 1]}'>◀ back</a>"
        ahead = ("<span aria-disabled='true'>forward ▶</span>" if i == len(seqs) - 1
                 else f"<a href='#p{seqs[i + 1]}'>forward ▶</a>")
        assert back in step and ahead in step, i


def test_the_page_needs_nothing_from_the_network_and_is_the_same_for_the_same_run(
        run: tuple[CheckReport, Trace], page: str) -> None:
    assert not re.search(r"<script[^>]*\bsrc=|<link\b|<img[^>]*\bsrc=['\"]?https?:|@import|url\(\s*['\"]?https?:",
                         page, re.IGNORECASE)
    assert "<script>" in page  # the player's few lines of script are inline
    assert report_page(*run) == page


def _browser() -> Any:
    from browser import CHROMIUM_ARGS, find_chromium

    found = find_chromium()
    if found is None:
        pytest.skip("no Chromium on this machine (.ci/run installs Debian's chromium)")
    sync = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    return sync, found, CHROMIUM_ARGS


def test_a_click_on_a_finding_shows_the_player_at_its_step(run: tuple[CheckReport, Trace], page: str,
                                                           tmp_path: Path) -> None:
    sync, chromium, args = _browser()
    report, trace = run
    eras = eras_of_links(trace)
    finding = next(f for f in report.findings if f.era == "2026-07-28")
    seq, era = finding.evidence["seq"], eras[finding.evidence["link"]]
    steps = [e.seq for e in trace if eras.get(e.link) == era]
    path = tmp_path / "check.html"
    path.write_text(page, encoding="utf-8")
    with sync.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=args)
        try:
            tab = browser.new_page(viewport={"width": 900, "height": 900})
            tab.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:")
                      else route.abort())  # offline: anything but the file itself fails
            tab.goto(path.as_uri())
            player = tab.locator(f"#player-{era}")
            # before any click the player stands at its first step
            assert "step 1 of" in player.locator(".mcp-sim-step:visible").inner_text()
            tab.locator(f"a[href='#p{seq}']", has_text="player").first.click()
            shown = player.locator(".mcp-sim-step:visible")
            assert shown.count() == 1 and shown.get_attribute("id") == f"p{seq}"
            assert f"event #{seq} ·" in shown.inner_text()
            assert shown.is_visible() and shown.bounding_box()["y"] < 900  # scrolled into view
            row = player.locator(f"g.mcpsim-row[data-seq='{seq}'] > rect.mcpsim-rowbg")
            assert row.evaluate("r => getComputedStyle(r).fill") == "rgb(255, 241, 168)"  # its row marked
            # the other era's player did not move
            other = tab.locator(f"#player-{'legacy' if era == 'modern' else 'modern'} .mcp-sim-step:visible")
            assert "step 1 of" in other.inner_text()
            # step on with the player's button, then back with a click on the diagram's row
            shown.get_by_role("link", name="forward ▶").click()
            after = player.locator(".mcp-sim-step:visible")
            following = steps[steps.index(seq) + 1]
            assert after.count() == 1 and after.get_attribute("id") == f"p{following}"
            assert f"step {steps.index(seq) + 2} of {len(steps)} · event #{following}" in after.inner_text()
            player.locator(f"g.mcpsim-row[data-seq='{seq}'] rect.mcpsim-rowbg").dispatch_event("click")
            tab.wait_for_function(f"location.hash === '#p{seq}'")
            assert player.locator(".mcp-sim-step:visible").get_attribute("id") == f"p{seq}"
        finally:
            browser.close()
