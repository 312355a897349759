"""A real class: JupyterHub (PyPI ``jupyterhub``, npm ``configurable-http-proxy``) with the grading service.

The test starts the Hub from the project's own ``jupyterhub_config.py`` with three learners and an
instructor, starts each learner's own Jupyter server through the Hub's API, and submits **from inside
each learner's server** — code run in a kernel there, with the token the Hub gave that server — then
reads the gradebook as the instructor. It checks that the gradebook holds exactly the three learners'
results, graded on the instructor's side in the OS sandbox, and that no learner can read another's
submission, read the gradebook, or submit in someone else's name. The Hub is stopped after it.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "mcp_sim" / "grading" / "classroom" / "jupyterhub_config.py"
CHP = ROOT / ".ci" / "classroom" / "node_modules" / ".bin" / "configurable-http-proxy"
LEARNERS = ("ada", "grace", "alan")
TEACHER = "teacher"


def _missing() -> str:
    try:
        import jupyterhub  # noqa: F401
    except ImportError:
        return "jupyterhub is not installed (pip install -e '.[classroom]')"
    if not CHP.exists() and not shutil.which("configurable-http-proxy"):
        return "configurable-http-proxy is not installed (.ci/classroom.sh)"
    from mcp_sim.grading.isolation import IsolationUnavailable, check_available

    try:
        check_available()
    except IsolationUnavailable as exc:
        return str(exc)
    return ""


_WHY = _missing()
pytestmark = pytest.mark.skipif(bool(_WHY) and not os.environ.get("CI"), reason=_WHY)


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(what: str, ready: Any, timeout: float = 240.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.HTTPError):
            value = ready()
            if value:
                return value
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    here = tmp_path_factory.mktemp("hub")
    admin = secrets.token_hex(16)
    ports = {"MCP_SIM_HUB_PORT": _port(), "MCP_SIM_HUB_API_PORT": _port(), "MCP_SIM_PROXY_API_PORT": _port(),
             "MCP_SIM_SERVICE_PORT": _port()}
    env = {**os.environ, **{k: str(v) for k, v in ports.items()}, "MCP_SIM_HUB_DIR": str(here),
           "MCP_SIM_CLASS_USERS": ",".join(LEARNERS), "MCP_SIM_INSTRUCTORS": TEACHER, "MCP_SIM_GRADE_WORKERS": "2",
           "MCP_SIM_HUB_ADMIN_TOKEN": admin, "MCP_SIM_CHP": str(CHP) if CHP.exists() else "configurable-http-proxy",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    log = (here / "hub.log").open("wb")
    proc = subprocess.Popen([sys.executable, "-m", "jupyterhub", "-f", str(CONFIG)], cwd=here, env=env,
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{ports['MCP_SIM_HUB_PORT']}"
    api = httpx.Client(base_url=f"{base}/hub/api", headers={"Authorization": f"token {admin}"}, timeout=30.0)
    try:
        _wait("the hub", lambda: api.get("/").status_code == 200)
        _wait("the grading service", lambda: httpx.get(f"{base}/services/mcp-sim-grader/api/submissions",
                                                       timeout=5).status_code == 403)
        yield {"base": base, "api": api, "dir": here}
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()


def _token(hub: dict[str, Any], user: str, scopes: list[str]) -> str:
    api = hub["api"]
    if api.get(f"/users/{user}").status_code == 404:
        assert api.post(f"/users/{user}").status_code == 201
    reply = api.post(f"/users/{user}/tokens", json={"scopes": scopes, "note": "test"})
    assert reply.status_code == 201, reply.text
    return str(reply.json()["token"])


def _start_server(hub: dict[str, Any], user: str) -> None:
    api = hub["api"]
    if api.get(f"/users/{user}").status_code == 404:
        assert api.post(f"/users/{user}").status_code == 201
    assert api.post(f"/users/{user}/server").status_code in (201, 202)
    _wait(f"{user}'s server", lambda: api.get(f"/users/{user}").json().get("servers", {}).get("", {}).get("ready"))


def _run_in_kernel(hub: dict[str, Any], user: str, token: str, code: str) -> str:
    """Run ``code`` in a new kernel of ``user``'s own server; what it printed."""
    from tornado.httpclient import HTTPRequest
    from tornado.ioloop import IOLoop
    from tornado.websocket import websocket_connect

    base = f"{hub['base']}/user/{user}/api"
    headers = {"Authorization": f"token {token}"}
    kernel = httpx.post(f"{base}/kernels", headers=headers, json={"name": "python3"}, timeout=60)
    assert kernel.status_code == 201, kernel.text
    kernel_id = kernel.json()["id"]

    async def run() -> str:
        url = base.replace("http://", "ws://") + f"/kernels/{kernel_id}/channels"
        ws = await websocket_connect(HTTPRequest(url, headers=headers))
        msg_id = uuid.uuid4().hex
        ws.write_message(json.dumps({
            "header": {"msg_id": msg_id, "msg_type": "execute_request", "username": user,
                       "session": uuid.uuid4().hex, "version": "5.3"},
            "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
            "content": {"code": code, "silent": False, "store_history": False, "user_expressions": {},
                        "allow_stdin": False, "stop_on_error": True}}))
        out: list[str] = []
        while True:
            raw = await ws.read_message()
            assert raw is not None, "the kernel's channel closed"
            msg = json.loads(raw)
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind = msg["msg_type"]
            if kind == "stream":
                out.append(msg["content"]["text"])
            elif kind == "error":
                raise AssertionError("\n".join(msg["content"]["traceback"]))
            elif kind == "status" and msg["content"]["execution_state"] == "idle" and out:
                ws.close()
                return "".join(out)

    try:
        return str(IOLoop.current().run_sync(run, timeout=300))
    finally:
        httpx.delete(f"{base}/kernels/{kernel_id}", headers=headers, timeout=30)


def _submit_from_server(hub: dict[str, Any], user: str, exercise: str, source: str) -> dict[str, Any]:
    token = _token(hub, user, [f"access:servers!user={user}"])
    home = hub["dir"] / "home" / user
    home.mkdir(parents=True, exist_ok=True)
    (home / f"{exercise}.py").write_text(source, encoding="utf-8")
    code = ("import json, os\nfrom mcp_sim.grading.classroom.client import submit\n"
            f"print(json.dumps(submit({exercise!r}, file=os.path.expanduser('~/{exercise}.py'))))")
    return dict(json.loads(_run_in_kernel(hub, user, token, code).strip().splitlines()[-1]))


def test_three_learners_submit_from_their_servers_and_the_gradebook_has_exactly_their_results(
        hub: dict[str, Any]) -> None:
    from mcp_sim.grading.runner import reference_path

    good = reference_path("ex05_pagination").read_text(encoding="utf-8")
    wrong = good.replace("if end < len(items):", "if end <= len(items):")  # a nextCursor on the last page
    plans = {"ada": ("ex05_pagination", good, True), "grace": ("ex05_pagination", wrong, False),
             "alan": ("ex02_error_codes", reference_path("ex02_error_codes").read_text(encoding="utf-8"), True)}
    for user in LEARNERS:
        _start_server(hub, user)
    states = {user: _submit_from_server(hub, user, *plans[user][:2]) for user in LEARNERS}
    for user, state in states.items():
        assert state["status"] == "graded" and state["user"] == user, state
        assert state["passed"] is plans[user][2], state
        assert all("expected" not in c for c in state["result"]["checks"])  # no answers handed out
    teacher = _token(hub, TEACHER, ["access:services!service=mcp-sim-grader"])
    service = f"{hub['base']}/services/mcp-sim-grader"
    book = httpx.get(f"{service}/api/gradebook", headers={"Authorization": f"token {teacher}"}, timeout=30).json()
    assert sorted((r["user"], r["exercise"], r["passed"], r["attempts"]) for r in book) == sorted(
        (u, plans[u][0], plans[u][2], 1) for u in LEARNERS)
    csv = httpx.get(f"{service}/gradebook.csv", headers={"Authorization": f"token {teacher}"}, timeout=30).text
    assert csv.splitlines()[0].startswith("user,exercise,attempts,passed") and len(csv.splitlines()) == 4

    # one learner cannot read or change another's
    ada = _token(hub, "ada", ["access:services!service=mcp-sim-grader"])
    as_ada = {"Authorization": f"token {ada}"}
    graces = states["grace"]["id"]
    assert httpx.get(f"{service}/api/submissions/{graces}", headers=as_ada, timeout=30).status_code == 404
    assert [s["user"] for s in httpx.get(f"{service}/api/submissions", headers=as_ada, timeout=30).json()] == ["ada"]
    assert httpx.get(f"{service}/api/gradebook", headers=as_ada, timeout=30).status_code == 403
    forged = httpx.post(f"{service}/api/submissions", headers=as_ada, timeout=30,
                        json={"exercise": "ex05_pagination", "source": good, "user": "grace"})
    assert forged.status_code == 202
    mine = httpx.get(f"{service}/api/submissions/{forged.json()['id']}", headers=as_ada, timeout=30).json()
    assert mine["user"] == "ada"
    assert httpx.get(f"{service}/api/submissions", timeout=30).status_code == 403  # no token, no access
    # a token without the service's scope is refused by the Hub's check
    no_scope = _token(hub, "ada", ["read:users:name!user=ada"])
    assert httpx.get(f"{service}/api/submissions", headers={"Authorization": f"token {no_scope}"},
                     timeout=30).status_code == 403


def test_a_browser_signs_in_through_the_hubs_oauth(hub: dict[str, Any]) -> None:
    """A browser without a session is sent to the Hub's OAuth authorize endpoint with PKCE."""
    reply = httpx.get(f"{hub['base']}/services/mcp-sim-grader/", timeout=30, follow_redirects=False)
    assert reply.status_code == 302
    where = reply.headers["location"]
    assert "/hub/api/oauth2/authorize" in where and "code_challenge_method=S256" in where
    assert "client_id=service-mcp-sim-grader" in where
