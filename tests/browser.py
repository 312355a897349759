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
    cmd = [sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={port}", "--ServerApp.ip=127.0.0.1",
           f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
           "--LabApp.expose_app_in_browser=True", "--ServerApp.disable_check_xsrf=True", "--allow-root"]
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


_CELLS_JS = """
() => {
  const panel = window.jupyterapp.shell.currentWidget;
  if (!panel || !panel.content || !panel.content.widgets) return null;
  return panel.content.widgets.map(c => ({
    type: c.model.type,
    count: c.model.type === 'code' ? c.model.executionCount : null,
    outputs: c.model.type === 'code' ? c.model.outputs.toJSON() : [],
  }));
}
"""


def run_all(page: Any, lab: Lab, notebook: str, *, timeout_s: float = 120) -> list[dict[str, Any]]:
    """Open ``notebook``, wait for its kernel, Run All, wait until every code cell ran; return cells."""
    page.goto(f"{lab.url}/lab/tree/{notebook}?token={lab.token}", wait_until="domcontentloaded")
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell.currentWidget "
                           "&& window.jupyterapp.shell.currentWidget.sessionContext "
                           "&& window.jupyterapp.shell.currentWidget.sessionContext.session "
                           "&& window.jupyterapp.shell.currentWidget.sessionContext.session.kernel "
                           "&& window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status === 'idle'",
                           timeout=timeout_s * 1000)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_function(
        "() => { const p = window.jupyterapp.shell.currentWidget; const cells = p.content.widgets;"
        " const code = cells.filter(c => c.model.type === 'code' && c.model.sharedModel.getSource().trim());"
        " return code.length > 0 && code.every(c => c.model.executionCount !== null)"
        " && p.sessionContext.session.kernel.status === 'idle'; }",
        timeout=timeout_s * 1000, polling=250)
    page.wait_for_timeout(500)  # let widget views render
    cells: list[dict[str, Any]] = page.evaluate(_CELLS_JS)
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
