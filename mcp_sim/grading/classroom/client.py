"""Submitting from the learner's side: ``mcp-sim submit EXERCISE`` and the grader panel's *Submit*.

Inside a learner's server on the class's JupyterHub, the Hub has put ``$JUPYTERHUB_API_TOKEN`` in the
environment, and the class's configuration ``$MCP_SIM_CLASS_URL`` (the grading service's address). A
submission sends the exercise's file as text; the service grades it on the instructor's side, in its
sandbox, and this side only waits for the verdict and shows it. Nothing here decides anything.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import httpx

from mcp_sim.grading.runner import starter_path


class NotInAClass(RuntimeError):
    """No grading service is configured here (self-study): the message says what to set."""


def in_class() -> bool:
    """Whether this is a learner's server on a class's JupyterHub (a grading service is configured)."""
    return bool(os.environ.get("MCP_SIM_CLASS_URL") and os.environ.get("JUPYTERHUB_API_TOKEN"))


def _where(url: str | None, token: str | None) -> tuple[str, str]:
    url = url or os.environ.get("MCP_SIM_CLASS_URL", "")
    token = token or os.environ.get("JUPYTERHUB_API_TOKEN", "")
    if not url or not token:
        raise NotInAClass("Submitting needs a class: run it in your server on the class's JupyterHub (which sets "
                          "MCP_SIM_CLASS_URL and JUPYTERHUB_API_TOKEN). For self-study, use `mcp-sim grade`.")
    return url.rstrip("/"), token


def submit(exercise: str, *, file: str | Path | None = None, url: str | None = None, token: str | None = None,
           wait: float = 600.0, poll: float = 0.5) -> dict[str, Any]:
    """Submit ``file`` (default: the exercise's starter) and wait up to ``wait`` seconds for the
    verdict; the submission as the service reports it (``status`` ``queued``/``grading`` if it was not
    graded in time)."""
    base, key = _where(url, token)
    source = Path(file or starter_path(exercise)).read_text(encoding="utf-8")
    headers = {"Authorization": f"token {key}"}
    with httpx.Client(timeout=30.0, headers=headers) as http:
        reply = http.post(f"{base}/api/submissions", json={"exercise": exercise, "source": source})
        if reply.status_code != 202:
            raise RuntimeError(f"the grading service refused the submission ({reply.status_code}): {reply.text[:300]}")
        number = reply.json()["id"]
        deadline = time.monotonic() + wait
        while True:
            state: dict[str, Any] = http.get(f"{base}/api/submissions/{number}").json()
            if state.get("status") in ("graded", "error") or time.monotonic() > deadline:
                return state
            time.sleep(poll)


def my_submissions(*, url: str | None = None, token: str | None = None) -> list[dict[str, Any]]:
    """This learner's submissions, newest first."""
    base, key = _where(url, token)
    reply = httpx.get(f"{base}/api/submissions", headers={"Authorization": f"token {key}"}, timeout=30.0)
    reply.raise_for_status()
    result: list[dict[str, Any]] = reply.json()
    return result
