"""Drive JupyterLab in headless Chromium: open a notebook, Run All, read what the page shows.

Used by tests/test_browser.py. The notebooks are copied to a scratch folder first, so running them
in the browser (which autosaves) never touches the committed files.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Lab:
    url: str
    token: str
    root: Path


@contextlib.contextmanager
def jupyterlab(root: Path) -> Iterator[Lab]:
    """Start JupyterLab on a free loopback port serving ``root``; stop it afterwards."""
    port = free_port()
    token = "mcp-sim-browser-test"
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(root / ".jupyter"), JUPYTER_RUNTIME_DIR=str(root / ".runtime"))
    # Render every cell (no windowing, so off-screen outputs are in the page) and ask no news question.
    settings = root / ".settings"
    for plugin, values in {"@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
                           "@jupyterlab/apputils-extension/notification": {"fetchNews": "false"}}.items():
        folder, _, name = plugin.rpartition("/")
        (settings / folder).mkdir(parents=True, exist_ok=True)
        (settings / folder / f"{name}.jupyterlab-settings").write_text(json.dumps(values))
    cmd = [sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={port}", "--ServerApp.ip=127.0.0.1",
           f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
           "--LabApp.expose_app_in_browser=True", f"--LabApp.user_settings_dir={settings}", "--ServerApp.disable_check_xsrf=True", "--allow-root"]
    log = (root / "jupyterlab.log").open("w")
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("JupyterLab did not start: " + (root / "jupyterlab.log").read_text()[-2000:])
            time.sleep(0.5)
        yield Lab(url, token, root)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


_FIND_PANEL = """
(path) => {
  const app = window.jupyterapp;
  if (!app) return null;
  for (const w of app.shell.widgets('main')) {
    if (w.context && w.context.path === path && w.content && w.content.widgets) return w;
  }
  return null;
}
"""


def _js(body: str) -> str:
    """A page function of ``path`` with ``panel`` bound to that notebook's panel (or null)."""
    return f"(path) => {{ const panel = ({_FIND_PANEL})(path); {body} }}"


_READY = _js("return !!(panel && panel.sessionContext && panel.sessionContext.session "
             "&& panel.sessionContext.session.kernel && panel.sessionContext.session.kernel.status === 'idle');")
_RUN_ALL = _js("window.jupyterapp.shell.activateById(panel.id);"
               " return window.jupyterapp.commands.execute('notebook:run-all-cells');")
_DONE = _js("if (!panel || !panel.sessionContext.session || !panel.sessionContext.session.kernel) return false;"
            " const code = panel.content.widgets.filter(c => c.model.type === 'code'"
            " && c.model.sharedModel.getSource().trim());"
            " return code.length > 0 && code.every(c => c.model.executionCount !== null)"
            " && panel.sessionContext.session.kernel.status === 'idle';")
_CELLS = _js("return panel.content.widgets.map(c => ({type: c.model.type,"
             " count: c.model.type === 'code' ? c.model.executionCount : null,"
             " outputs: c.model.type === 'code' ? c.model.outputs.toJSON() : []}));")


def run_all(page: Any, lab: Lab, notebook: str, *, timeout_s: float = 120) -> list[dict[str, Any]]:
    """Open ``notebook`` (a fresh workspace, so no other document is restored), wait for its kernel,
    Run All, wait until every code cell ran; return the cells with their outputs."""
    page.goto(f"{lab.url}/lab/tree/{notebook}?reset&token={lab.token}", wait_until="domcontentloaded")
    page.wait_for_function(_READY, arg=notebook, timeout=timeout_s * 1000, polling=250)
    page.evaluate(_RUN_ALL, notebook)
    page.wait_for_function(_DONE, arg=notebook, timeout=timeout_s * 1000, polling=250)
    page.wait_for_timeout(800)  # let widget views render
    cells: list[dict[str, Any]] = page.evaluate(_CELLS, notebook)
    return cells


def error_outputs(cells: list[dict[str, Any]]) -> list[str]:
    """Every error output and stderr stream of the executed notebook, as text."""
    out = []
    for cell in cells:
        for o in cell["outputs"]:
            if o.get("output_type") == "error":
                out.append(f"{o.get('ename')}: {o.get('evalue')}")
            elif o.get("output_type") == "stream" and o.get("name") == "stderr":
                text = o.get("text")
                out.append("".join(text) if isinstance(text, list) else str(text))
    return out


def dump(cells: list[dict[str, Any]]) -> str:
    return json.dumps(cells, indent=1)[:4000]


OVERFLOW = """
() => {
  // Every element of every output area that is wider inside than it shows (scrollWidth > clientWidth):
  // a nested sideways scroll or clipped content. The explicit full-size views are left out.
  const found = [];
  let widest = 0;
  const cells = Array.from(document.querySelectorAll('.jp-Notebook .jp-Cell'));
  for (const area of document.querySelectorAll('.jp-OutputArea-output')) {
    const cell = cells.indexOf(area.closest('.jp-Cell'));
    widest = Math.max(widest, area.scrollWidth);
    for (const el of [area, ...area.querySelectorAll('*')]) {
      // A slider's handle hangs over the end of its track by design (ipywidgets' noUiSlider).
      if (el.closest('.mcp-sim-full-view') || el.closest('.noUi-base') || el.clientWidth === 0) continue;
      if (el.scrollWidth > el.clientWidth + 1) {
        const text = (el.innerText || el.textContent || '').trim().slice(0, 60);
        found.push({cell, tag: el.tagName.toLowerCase(), cls: String(el.className.baseVal ?? el.className).slice(0, 80),
                    scrollWidth: el.scrollWidth, clientWidth: el.clientWidth, text});
      }
    }
  }
  const area = document.querySelector('.jp-OutputArea-output');
  return {widest, outputWidth: area ? area.clientWidth : 0, overflowing: found};
}
"""
"""A page function: the widest output area's scroll width, the output width, and what overflows."""
