"""No secret in any trace: every authorization story and every security lab that carries tokens,
exported as JSON Lines and as HTML, never shows an issued token, code, PKCE verifier, client secret
or client assertion.

The secrets are not guessed: the test collects the real values from the simulated parties as the runs
make them — every token the token tables issue, every exchange the simulated web carried (kept there
unredacted), every ``Authorization`` header an MCP request went out with — so it cannot pass by
looking for the wrong strings. Each run must yield secrets, and the collection as a whole must hold
every kind (an access token, a refresh token, a code, a verifier), else the test fails.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from mcp_sim.scenarios.authorization_story import ERAS, STORIES, run_authorization_story
from mcp_sim.scenarios.security import LABS, run_lab
from mcp_sim.security.lab import CONFIGS
from mcp_sim.security.oauth_web import SimulatedWeb
from mcp_sim.security.tokens import AccessToken, AuthorizationServer
from mcp_sim.trace import trace_page
from mcp_sim.trace.jsonl import dumps_jsonl
from mcp_sim.trace.page import trace_html
from mcp_sim.trace.recorder import Recorder
from mcp_sim.transports.http import Headers, HttpExchange, HttpRequest, HttpResponse

SECRET_NAMES = ("access_token", "refresh_token", "id_token", "code", "code_verifier", "client_secret",
                "client_assertion", "assertion")
"""The fields a secret travels in, named here independently of the code under test."""

TOKEN_LABS = ("confused-deputy", "redirect-uri-manipulation", "as-mix-up", "ssrf-metadata-discovery",
              "session-hijacking", "token-passthrough", "localhost-redirect-impersonation", "cimd-trust-policy",
              "cimd-ssrf", "authorization-url-validation", "scope-minimization")
"""The security labs whose runs carry bearer tokens or run an OAuth flow."""


SECRETLESS_STORIES = frozenset({"no-s256", "bad-redirect", "user-refuses"})
"""Stories whose flow stops before anything secret is sent (the verifier stays with the client)."""


class Witness:
    """What the simulated parties really exchanged: secret values by kind."""

    def __init__(self) -> None:
        self.found: dict[str, set[str]] = {}
        self.webs: list[SimulatedWeb] = []

    def add(self, kind: str, value: Any) -> None:
        # Very short values could match innocently (and no party issues them); none is dropped silently
        # in practice, since the issued ones are 16+ random hex digits behind a prefix.
        if isinstance(value, str) and len(value) >= 8:
            self.found.setdefault(kind, set()).add(value)

    def fields(self, text: str | None, content_type: str | None = None) -> None:
        if not text:
            return
        if (content_type or "").startswith("application/json"):
            try:
                data = json.loads(text)
            except ValueError:
                return
            if isinstance(data, dict):
                for name in SECRET_NAMES:
                    self.add(name, data.get(name))
            return
        query = urlsplit(text).query if "?" in text else text
        for name, values in parse_qs(query, keep_blank_values=True).items():
            if name in SECRET_NAMES:
                for value in values:
                    self.add(name, value)

    def headers(self, headers: Headers) -> None:
        value = headers.get("Authorization")
        if value:
            scheme, _, credentials = value.partition(" ")
            self.add(f"authorization ({scheme})", credentials or value)
            if scheme.lower() == "basic":
                try:
                    _, _, secret = base64.b64decode(credentials).decode().partition(":")
                except (binascii.Error, UnicodeDecodeError):
                    secret = ""
                self.add("client_secret", secret)
        self.fields(headers.get("Location"))

    def request(self, request: HttpRequest) -> None:
        self.fields(request.path)
        self.fields(request.body, request.headers.get("Content-Type"))
        self.headers(request.headers)

    def response(self, response: HttpResponse) -> None:
        self.fields(response.body, response.content_type)
        self.headers(response.headers)

    def collect_webs(self) -> None:
        for web in self.webs:
            for request, response in web.exchanges:
                self.request(request)
                self.response(response)

    def values(self) -> set[str]:
        return set().union(*self.found.values()) if self.found else set()


@pytest.fixture
def witness(monkeypatch: pytest.MonkeyPatch) -> Iterator[Witness]:
    """Watch the parties: token tables as they issue, webs as they are made, MCP requests as they go."""
    seen = Witness()
    issue, web_init, exchange_init = AuthorizationServer.issue, SimulatedWeb.__init__, HttpExchange.__init__

    def issuing(self: AuthorizationServer, *args: Any, **kwargs: Any) -> AccessToken:
        token = issue(self, *args, **kwargs)
        seen.add("access_token", token.value)
        return token

    def making_web(self: SimulatedWeb, *args: Any, **kwargs: Any) -> None:
        web_init(self, *args, **kwargs)
        seen.webs.append(self)

    def opening(self: HttpExchange, link: Any, request: HttpRequest) -> None:
        exchange_init(self, link, request)
        seen.request(request)

    monkeypatch.setattr(AuthorizationServer, "issue", issuing)
    monkeypatch.setattr(SimulatedWeb, "__init__", making_web)
    monkeypatch.setattr(HttpExchange, "__init__", opening)
    yield seen


def exports(recorder: Recorder) -> dict[str, str]:
    """Every way a trace leaves the simulator as text: JSON Lines, JSON, the HTML view, the HTML page."""
    trace = recorder.trace()
    return {"jsonl": dumps_jsonl(recorder.events), "json": json.dumps(trace.to_json()),
            "html": trace_html(recorder), "page": trace_page(trace)}


def assert_no_secret(witness: Witness, recorder: Recorder, run: str, *, expect_secrets: bool = True) -> None:
    witness.collect_webs()
    secrets = witness.values()
    if expect_secrets:
        assert secrets, f"{run}: no secret was collected, so the check would prove nothing"
    for form, text in exports(recorder).items():
        leaked = sorted(s for s in secrets if s in text)
        assert not leaked, f"{run}: the {form} export shows {len(leaked)} secret(s), e.g. {leaked[0]!r}"


def _each_story() -> list[tuple[str, str]]:
    return [(story, era) for story in STORIES for era in ERAS]


@pytest.mark.parametrize(("story", "era"), _each_story())
def test_no_secret_in_an_authorization_story_trace(witness: Witness, story: str, era: str) -> None:
    run = run_authorization_story(story, era)
    assert_no_secret(witness, run.recorder, f"story {story} ({era})", expect_secrets=story not in SECRETLESS_STORIES)


def _each_lab_run() -> list[tuple[str, str, str]]:
    return [(name, config, variant) for name in TOKEN_LABS for config in CONFIGS
            for variant in ("main", *LABS[name].variants)]


@pytest.mark.parametrize(("lab", "config", "variant"), _each_lab_run())
def test_no_secret_in_a_token_lab_trace(witness: Witness, lab: str, config: str, variant: str) -> None:
    result = run_lab(lab, config, 0, variant)  # type: ignore[arg-type]
    assert_no_secret(witness, result.trace, f"lab {lab} ({config}, {variant})")


def test_the_collection_holds_every_kind_of_secret(witness: Witness) -> None:
    """The witness is not blind: the stories together issue every kind of secret the trace must hide,
    and the MCP requests' bearer tokens are among them."""
    for story in ("first-call", "expired-refresh", "metadata-document"):
        for era in ERAS:
            run_authorization_story(story, era)
    witness.collect_webs()
    kinds = set(witness.found)
    assert {"access_token", "refresh_token", "code", "code_verifier", "authorization (Bearer)"} <= kinds, kinds
    issued = witness.found["access_token"]
    assert witness.found["authorization (Bearer)"] & issued


def test_the_first_call_story_shows_the_token_masked(witness: Witness) -> None:
    """The course's own example: the retried MCP request's ``Authorization`` header is in the trace,
    masked, and the code and verifier on OAuth's exchanges are masked too."""
    run = run_authorization_story("first-call")
    heads = [e.framing["http"]["request"]["headers"] for e in run.recorder.events
             if e.kind == "request" and isinstance(e.framing.get("http"), dict)]
    assert "Bearer at_REDACTED" in {h.get("Authorization") for h in heads}
    bodies = " ".join(str(e.framing.get("body", "")) + (e.text or "") for e in run.recorder.events)
    assert "code=code_REDACTED" in bodies and "code_verifier=REDACTED" in bodies



def test_browser_session_cookies_and_passwords_are_masked_where_exchanges_are_recorded() -> None:
    """A browser's sign-in and session cookies (the labs' front channels) never reach a trace either."""
    from mcp_sim.transports.http_redact import redact, shown_headers

    shown = shown_headers({"Cookie": "as-session=s3cr3t-session-id; theme=dark",
                           "Set-Cookie": "as-session=n3w-s3cr3t; Path=/; HttpOnly; SameSite=Lax"})
    assert shown["Cookie"] == "as-session=REDACTED; theme=REDACTED"
    assert shown["Set-Cookie"] == "as-session=REDACTED; Path=/; HttpOnly; SameSite=Lax"
    assert "s3cr3t" not in json.dumps(shown)
    form = redact("username=ada&password=correct-horse-battery")
    assert form is not None and "correct-horse" not in form and "username=ada" in form
    body = redact(json.dumps({"username": "ada", "password": "correct-horse-battery"}), "application/json")
    assert body is not None and "correct-horse" not in body
