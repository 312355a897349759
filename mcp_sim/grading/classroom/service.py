"""The class's grading service: a JupyterHub-managed web service that takes submissions and grades them.

JupyterHub starts it (``c.JupyterHub.services``, see ``jupyterhub_config.py`` beside this file) and
routes ``/services/mcp-sim-grader/`` to it. Who is asking always comes from the Hub:

* a request with ``Authorization: token …`` (``mcp-sim submit`` and the grader panel, run inside the
  learner's own server, send the ``$JUPYTERHUB_API_TOKEN`` the Hub gave that server) is identified by
  asking the Hub about the token (:class:`jupyterhub.services.auth.HubAuth`); the token must carry the
  scope ``access:services!service=mcp-sim-grader``;
* a browser is sent through the Hub's OAuth 2 flow (authorization code with PKCE) and then carries a
  session cookie of this service.

What each may do: a learner submits, and reads *their own* submissions and results (another learner's
id answers 404, as if it did not exist); an instructor (named in ``MCP_SIM_INSTRUCTORS``) also reads
the gradebook, as a page, JSON or CSV. Submissions go into the :class:`~.store.Store` and a pool of
workers grades them in the OS sandbox (:mod:`~.grader`), oldest first, one per worker at a time.

Routes (under the service prefix): ``GET /`` (a page: my results; the gradebook link for
instructors), ``POST /api/submissions`` ``{"exercise", "source"}`` → 202 ``{"id"}``,
``GET /api/submissions``, ``GET /api/submissions/{id}``, ``GET /api/gradebook``, ``GET /gradebook.csv``,
``GET /gradebook``, ``GET /oauth_callback``.
"""

from __future__ import annotations

import functools
import html
import os
import secrets
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlencode

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from mcp_sim.grading.classroom.grader import BadSubmission, grade_source, validate
from mcp_sim.grading.classroom.store import Store
from mcp_sim.grading.isolation import Isolation

SESSION_COOKIE = "mcp-sim-grader-session"


class Identity(Protocol):
    """Who a token or an OAuth code belongs to: the Hub (``HubOAuth``), or a stand-in in tests."""

    def user_for_token(self, token: str) -> str | None: ...

    def login_redirect(self, state: str, challenge: str) -> str: ...

    def token_for_code(self, code: str, verifier: str) -> str: ...

    def pkce(self) -> tuple[str, str]: ...


class HubIdentity:
    """Identity from JupyterHub, configured by the environment the Hub gives a managed service."""

    def __init__(self) -> None:
        from jupyterhub.services.auth import HubOAuth

        self.auth = HubOAuth(cache_max_age=60)

    def user_for_token(self, token: str) -> str | None:
        model = self.auth.user_for_token(token, use_cache=True, sync=True)
        if not model or model.get("kind", "user") != "user":
            return None
        # the token must carry this service's access scope (access:services!service=mcp-sim-grader)
        if not self.auth.check_scopes(self.auth.access_scopes, model):
            return None
        return str(model["name"])

    def login_redirect(self, state: str, challenge: str) -> str:
        query = urlencode({"state": state, "code_challenge": challenge, "code_challenge_method": "S256"})
        return f"{self.auth.login_url}&{query}"

    def token_for_code(self, code: str, verifier: str) -> str:
        return str(self.auth.token_for_code(code, code_verifier=verifier, sync=True))

    def pkce(self) -> tuple[str, str]:
        verifier, challenge, _ = self.auth.generate_pkce_code_challenge()
        return verifier, challenge


@dataclass
class Settings:
    """How the service runs; :meth:`from_environment` reads what JupyterHub and the config set."""

    database: str = "sqlite:///mcp-sim-grades.sqlite"
    prefix: str = "/"
    instructors: frozenset[str] = frozenset()
    workers: int = 2
    isolation: Isolation = "os"
    poll_seconds: float = 0.2
    _sessions: dict[str, str] = field(default_factory=dict)
    _states: dict[str, tuple[str, str]] = field(default_factory=dict)

    @classmethod
    def from_environment(cls) -> Settings:
        env = os.environ
        return cls(database=env.get("MCP_SIM_GRADES_DB", cls.database),
                   prefix=env.get("JUPYTERHUB_SERVICE_PREFIX", "/"),
                   instructors=frozenset(n for n in env.get("MCP_SIM_INSTRUCTORS", "").split(",") if n),
                   workers=int(env.get("MCP_SIM_GRADE_WORKERS", str(max(1, os.cpu_count() or 1)))))


def _learner_view(result: dict[str, Any] | None) -> dict[str, Any] | None:
    """A result as its learner sees it here: what was wrong and the rule, not the expected answers
    (those come with the last hint of self-study grading, one step at a time)."""
    if result is None:
        return None
    checks = [{k: v for k, v in c.items() if k != "expected"} for c in result.get("checks", [])]
    return {**{k: v for k, v in result.items() if k != "hints"}, "checks": checks}


def create_app(settings: Settings, identity: Identity, store: Store | None = None,
               grade: Callable[[str, str], dict[str, Any]] | None = None) -> Starlette:
    """The service as an ASGI application (run it with uvicorn; :func:`main` does)."""
    db = store or Store(settings.database)
    grade_one = grade or (lambda ex, src: grade_source(ex, src, isolation=settings.isolation))
    prefix = settings.prefix.rstrip("/")

    async def worker() -> None:
        while True:
            job = await anyio.to_thread.run_sync(db.claim)
            if job is None:
                await anyio.sleep(settings.poll_seconds)
                continue
            number, exercise, source = job
            try:
                result = await anyio.to_thread.run_sync(grade_one, exercise, source)
                await anyio.to_thread.run_sync(db.finish, number, result)
            except Exception as exc:  # a grader failure is recorded, never lost
                failure = {"problem": f"grading failed: {exc}", "checks": []}
                await anyio.to_thread.run_sync(functools.partial(db.finish, number, failure, error=True))

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        db.requeue_unfinished()
        async with anyio.create_task_group() as tg:
            for _ in range(settings.workers):
                tg.start_soon(worker)
            yield
            tg.cancel_scope.cancel()

    async def who(request: Request) -> str | None:
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() in ("token", "bearer") and token.strip():
            return await anyio.to_thread.run_sync(identity.user_for_token, token.strip())
        session = request.cookies.get(SESSION_COOKIE)
        return settings._sessions.get(session) if session else None

    def denied(request: Request) -> Response:
        if request.url.path.startswith(f"{prefix}/api/"):
            return JSONResponse({"error": "sign in through JupyterHub (a token with access to this service)"}, 403)
        state = secrets.token_urlsafe(16)
        verifier, challenge = identity.pkce()
        settings._states[state] = (verifier, str(request.url.path))
        return RedirectResponse(identity.login_redirect(state, challenge), 302)

    async def oauth_callback(request: Request) -> Response:
        state = request.query_params.get("state", "")
        code = request.query_params.get("code", "")
        if state not in settings._states or not code:
            return PlainTextResponse("OAuth state does not match; start again from the service's page.", 400)
        verifier, next_path = settings._states.pop(state)
        token = await anyio.to_thread.run_sync(identity.token_for_code, code, verifier)
        user = await anyio.to_thread.run_sync(identity.user_for_token, token)
        if user is None:
            return PlainTextResponse("JupyterHub did not identify you.", 403)
        session = secrets.token_urlsafe(32)
        settings._sessions[session] = user
        response = RedirectResponse(next_path or f"{prefix}/", 302)
        response.set_cookie(SESSION_COOKIE, session, httponly=True, samesite="lax", path=f"{prefix}/")
        return response

    async def submit(request: Request) -> Response:
        user = await who(request)
        if user is None:
            return denied(request)
        try:
            body = await request.json()
            exercise, source = validate(body.get("exercise"), body.get("source"))
        except (ValueError, AttributeError, BadSubmission) as exc:
            return JSONResponse({"error": str(exc) or "the body must be JSON"}, 400)
        number = await anyio.to_thread.run_sync(db.submit, user, exercise, source)
        return JSONResponse({"id": number, "status": "queued"}, 202)

    async def mine(request: Request) -> Response:
        user = await who(request)
        if user is None:
            return denied(request)
        rows = await anyio.to_thread.run_sync(db.for_user, user)
        return JSONResponse([r.summary() for r in rows])

    async def one(request: Request) -> Response:
        user = await who(request)
        if user is None:
            return denied(request)
        try:
            number = int(request.path_params["number"])
        except ValueError:
            return JSONResponse({"error": "no such submission"}, 404)
        row = await anyio.to_thread.run_sync(db.get, number)
        if row is None or row.user != user:  # another learner's submission does not exist for you
            return JSONResponse({"error": "no such submission"}, 404)
        return JSONResponse({**row.summary(), "result": _learner_view(row.result)})

    async def gradebook(request: Request) -> Response:
        user = await who(request)
        if user is None:
            return denied(request)
        if user not in settings.instructors:
            return JSONResponse({"error": "the gradebook is for the class's instructors"}, 403)
        book = await anyio.to_thread.run_sync(db.gradebook)
        if request.url.path.endswith(".csv"):
            return PlainTextResponse(db.gradebook_csv(), media_type="text/csv")
        if request.url.path.endswith("/api/gradebook"):
            return JSONResponse(book)
        head = "".join(f"<th>{html.escape(k)}</th>" for k in ("learner", "exercise", "attempts", "passed", "best"))
        body = "".join(f"<tr><td>{html.escape(r['user'])}</td><td>{html.escape(r['exercise'])}</td>"
                       f"<td>{r['attempts']}</td><td>{'yes' if r['passed'] else 'no'}</td>"
                       f"<td>{r['best_checks_passed']}/{r['checks_total']}</td></tr>" for r in book)
        return HTMLResponse(f"<h1>Gradebook</h1><p><a href='{prefix}/gradebook.csv'>CSV</a></p>"
                            f"<table><tr>{head}</tr>{body}</table>")

    async def home(request: Request) -> Response:
        user = await who(request)
        if user is None:
            return denied(request)
        rows = await anyio.to_thread.run_sync(db.for_user, user)
        items = []
        for r in rows:
            text = (r.status if r.status != "graded" else
                    f"{'✔ passed' if r.passed else '✘ failed'}, {r.checks_passed}/{r.checks_total} checks")
            items.append(f"<li>#{r.id} {html.escape(r.exercise)}: {html.escape(text)}</li>")
        extra = f"<p><a href='{prefix}/gradebook'>Gradebook</a></p>" if user in settings.instructors else ""
        return HTMLResponse(f"<h1>mcp-sim grader — {html.escape(user)}</h1>{extra}<ul>{''.join(items)}</ul>")

    routes = [Route(f"{prefix}/", home), Route(f"{prefix}/oauth_callback", oauth_callback),
              Route(f"{prefix}/api/submissions", submit, methods=["POST"]),
              Route(f"{prefix}/api/submissions", mine, methods=["GET"]),
              Route(f"{prefix}/api/submissions/{{number}}", one),
              Route(f"{prefix}/api/gradebook", gradebook), Route(f"{prefix}/gradebook", gradebook),
              Route(f"{prefix}/gradebook.csv", gradebook)]
    return Starlette(routes=routes, lifespan=lifespan)


def main() -> None:
    """Run the service where JupyterHub says (``$JUPYTERHUB_SERVICE_URL``): ``mcp-sim class serve``."""
    from urllib.parse import urlsplit

    import uvicorn

    where = urlsplit(os.environ.get("JUPYTERHUB_SERVICE_URL", "http://127.0.0.1:10101"))
    app = create_app(Settings.from_environment(), HubIdentity())
    uvicorn.run(app, host=where.hostname or "127.0.0.1", port=where.port or 10101, log_level="warning")


if __name__ == "__main__":
    main()
