"""Exercise ex11_pkce (chapter 11): PKCE with S256, from both sides.

The learner writes the client's half — ``code_challenge(verifier)``, the ``S256`` challenge — and the
authorization server's two checks: ``authorize_error(params)``, what ``/authorize`` says about a
request's PKCE parameters (``plain`` and a missing method are refused), and
``verifier_matches(challenge, verifier)``, the token endpoint's check. Every expected answer comes
from the simulator's own authorization server (:class:`~mcp_sim.security.oauth.OAuthAuthorizationServer`),
asked over its sans-IO ``serve``: a real ``GET /authorize`` and a real ``POST /token``. Every seed
tries every case kind; the seed picks the verifiers.
"""

from __future__ import annotations

import copy
import string
from typing import Any
from urllib.parse import urlsplit

from hypothesis import strategies as st

from mcp_sim.grading.differential import Mismatch
from mcp_sim.grading.exercises.generated import corners_then_generated
from mcp_sim.grading.model import Check, CheckContext, CheckFailed, Exercise, Hint
from mcp_sim.security.identity import User
from mcp_sim.security.oauth import FORM, OAuthAuthorizationServer, ScriptedUser, form_body, read_form, s256
from mcp_sim.security.tokens import AuthorizationServer
from mcp_sim.transports.http import Headers, HttpRequest

R_S256 = "auth.pkce-s256"
"""Clients use the S256 method: code_challenge = BASE64URL(SHA-256(ASCII(code_verifier))), unpadded."""
R_PLAIN = "auth.pkce-as-refuses-plain"
"""This simulator's authorization server refuses a request without a challenge or with plain."""
R_VERIFY = "auth.pkce"
"""PKCE itself: the token endpoint checks the verifier against the stored challenge."""

RESOURCE = "https://notes.example/mcp"
REDIRECT = "http://127.0.0.1:8765/callback"
_UNRESERVED = string.ascii_letters + string.digits + "-._~"


def _verifier(rng: Any, length: int, alphabet: str = _UNRESERVED) -> str:
    return "".join(rng.choice(alphabet) for _ in range(length))


class _Authority:
    """The simulator's authorization server with one pre-registered client, asked directly."""

    def __init__(self, rng: Any) -> None:
        table = AuthorizationServer("https://login.example", lambda: f"{rng.getrandbits(128):032x}", lambda: 0.0)
        self.server = OAuthAuthorizationServer("https://login.example", table, ScriptedUser(User("ada", "acme")),
                                               resources=(RESOURCE,))
        self.client = self.server.preregister("notes-host", [REDIRECT])

    def authorize(self, pkce: dict[str, str]) -> dict[str, str]:
        query = {"response_type": "code", "client_id": self.client.client_id, "redirect_uri": REDIRECT,
                 "resource": RESOURCE, "state": "s", **pkce}
        answer = self.server.serve(HttpRequest("GET", f"/authorize?{form_body(query)}", Headers()))
        return read_form(urlsplit(answer.headers.get("Location") or "").query)

    def redeem(self, challenge: str, verifier: str) -> bool:
        code = self.authorize({"code_challenge": challenge, "code_challenge_method": "S256"})["code"]
        fields = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT,
                  "client_id": self.client.client_id, "code_verifier": verifier, "resource": RESOURCE}
        answer = self.server.serve(HttpRequest("POST", "/token", Headers({"Content-Type": FORM}), form_body(fields)))
        return answer.status == 200


CHALLENGE_KINDS = ("a 43-character verifier", "a 128-character verifier", "a verifier of hex digits",
                   "a challenge with '-' (base64's '+')", "a challenge with '_' (base64's '/')")
AUTHORIZE_KINDS = ("S256 with a challenge", "plain", "no method (it means plain)", "lower-case s256",
                   "a method but no challenge", "S256 with an empty challenge", "S384", "an empty method",
                   "neither parameter")
VERIFY_KINDS = ("the right verifier", "another verifier", "the challenge sent as the verifier",
                "the verifier with a trailing space", "the verifier in upper case", "an empty verifier",
                "the verifier without its last character", "the verifier with a character appended")


def _challenge_case(rng: Any, kind: str) -> str:
    if kind == "a 43-character verifier":
        return _verifier(rng, 43)
    if kind == "a 128-character verifier":
        return _verifier(rng, 128)
    if kind == "a verifier of hex digits":
        return _verifier(rng, 64, "0123456789abcdef")
    if kind.startswith("a challenge with"):
        needed = kind[len("a challenge with '")]  # each character of the URL-safe alphabet: a kind, not a draw
        while True:
            verifier = _verifier(rng, rng.randint(43, 80))
            if needed in s256(verifier):
                return verifier
    raise KeyError(kind)


def check_challenge(ctx: CheckContext, kind: str) -> None:
    verifier = _challenge_case(ctx.rng, kind)
    want = s256(verifier)
    got = ctx.function("code_challenge")(verifier)
    if got != want:
        raise CheckFailed(f"code_challenge() gave {got!r}, which is not the S256 challenge of this verifier "
                          f"({kind}).", R_S256, case=f"code_verifier {verifier!r}", expected=repr(want))


def _authorize_case(rng: Any, kind: str) -> dict[str, str]:
    challenge = s256(_verifier(rng, rng.randint(43, 96)))
    return {"S256 with a challenge": {"code_challenge": challenge, "code_challenge_method": "S256"},
            "plain": {"code_challenge": _verifier(rng, 50), "code_challenge_method": "plain"},
            "no method (it means plain)": {"code_challenge": challenge},
            "lower-case s256": {"code_challenge": challenge, "code_challenge_method": "s256"},
            "a method but no challenge": {"code_challenge_method": "S256"},
            "S256 with an empty challenge": {"code_challenge": "", "code_challenge_method": "S256"},
            "S384": {"code_challenge": challenge, "code_challenge_method": "S384"},
            "an empty method": {"code_challenge": challenge, "code_challenge_method": ""},
            "neither parameter": {}}[kind]


def check_authorize(ctx: CheckContext, kind: str) -> None:
    params = _authorize_case(ctx.rng, kind)
    back = _Authority(ctx.rng).authorize(params)
    want = back.get("error")
    got = ctx.function("authorize_error")(copy.deepcopy(params))
    if got != want:
        said = f"sends the browser back with error={want}" if want else "goes on to ask the user (no error)"
        raise CheckFailed(f"authorize_error() returned {got!r} for these PKCE parameters ({kind}); the simulated "
                          "authorization server answers otherwise.", R_PLAIN, case=f"PKCE parameters {params}",
                          expected=f"the authorization server {said}")


def _verify_case(rng: Any, kind: str) -> tuple[str, str]:
    verifier = _verifier(rng, rng.randint(43, 96), string.ascii_lowercase + string.digits + "-._~")
    challenge = s256(verifier)
    presented = {"the right verifier": verifier, "another verifier": _verifier(rng, len(verifier)),
                 "the challenge sent as the verifier": challenge,
                 "the verifier with a trailing space": verifier + " ",
                 "the verifier in upper case": verifier.upper(), "an empty verifier": "",
                 "the verifier without its last character": verifier[:-1],
                 "the verifier with a character appended": verifier + rng.choice("a0-~")}[kind]
    return challenge, presented


def check_verify(ctx: CheckContext, kind: str) -> None:
    challenge, presented = _verify_case(ctx.rng, kind)
    want = _Authority(ctx.rng).redeem(challenge, presented)
    got = ctx.function("verifier_matches")(challenge, presented)
    if got is not want:
        outcome = "issues the token" if want else "refuses the code (invalid_grant)"
        raise CheckFailed(f"verifier_matches() returned {got!r} ({kind}); the token endpoint decides otherwise.",
                          R_VERIFY, case=f"stored code_challenge {challenge!r}, presented code_verifier {presented!r}",
                          expected=f"the token endpoint {outcome}")


# --- generated: every pair of PKCE parameters; any verifier ---------------------------------------------

_CHALLENGES = {"absent": None, "empty": "", "an S256 challenge": s256("v" * 43), "a short string": "abc"}
_METHODS = {"absent": None, "empty": "", "S256": "S256", "s256": "s256", "plain": "plain", "S384": "S384",
            "S256 with a space": "S256 "}


def _pkce_params(challenge: str | None, method: str | None) -> dict[str, str]:
    return {k: v for k, v in (("code_challenge", challenge), ("code_challenge_method", method)) if v is not None}


def check_every_pair(ctx: CheckContext, kind: str) -> None:
    """The whole space of /authorize's PKCE parameters, every pair, against the authorization server."""
    authority = _Authority(ctx.rng)
    for challenge in _CHALLENGES.values():
        for method in _METHODS.values():
            params = _pkce_params(challenge, method)
            want = authority.authorize(params).get("error")
            got = ctx.function("authorize_error")(copy.deepcopy(params))
            if got != want:
                raise CheckFailed(f"authorize_error() returned {got!r} for these PKCE parameters; the simulated "
                                  "authorization server answers otherwise.", R_PLAIN, case=f"PKCE parameters {params}",
                                  expected=repr(want))


_VERIFIERS = st.text(alphabet=_UNRESERVED, min_size=43, max_size=128)
_PRESENTED = ("the verifier", "the challenge", "empty", "one character shorter", "one character longer",
              "upper case", "lower case", "with a space")


def _presented(verifier: str, how: str) -> str:
    return {"the verifier": verifier, "the challenge": s256(verifier), "empty": "",
            "one character shorter": verifier[:-1], "one character longer": verifier + "-",
            "upper case": verifier.upper(), "lower case": verifier.lower(), "with a space": " " + verifier}[how]


def check_generated(ctx: CheckContext, kind: str) -> None:
    verifier = _verifier(ctx.rng, 43)
    if kind == "any verifier's challenge":
        corners = [verifier, _verifier(ctx.rng, 128), ("-._~" * 11)[:43], _verifier(ctx.rng, 44, "-_")]
        corners_then_generated(ctx, corners, _VERIFIERS, learner=lambda v: ctx.function("code_challenge")(v),
                               oracle=s256, compare=lambda v, got, want: None if got == want else Mismatch(
                                   f"code_challenge() gave {got!r}, which is not the S256 challenge of this verifier.",
                                   R_S256, expected=repr(want)), describe=lambda v: f"code_verifier {v!r}")
        return
    authority = _Authority(ctx.rng)
    pairs = [(v, how) for v in (verifier, _verifier(ctx.rng, 96)) for how in _PRESENTED]
    corners_then_generated(ctx, pairs, st.tuples(_VERIFIERS, st.sampled_from(_PRESENTED)),
                 learner=lambda c: ctx.function("verifier_matches")(s256(c[0]), _presented(*c)),
                 oracle=lambda c: authority.redeem(s256(c[0]), _presented(*c)),
                 compare=lambda c, got, want: None if got is want else Mismatch(
                     f"verifier_matches() returned {got!r}; the token endpoint decides otherwise.", R_VERIFY,
                     expected="the token endpoint " + ("issues the token" if want else "refuses the code")),
                 describe=lambda c: f"stored code_challenge {s256(c[0])!r}, presented code_verifier "
                                    f"{_presented(*c)!r}", examples=25)


EXERCISE = Exercise(
    id="ex11_pkce",
    title="PKCE with S256: the challenge, the refusal of plain, the token endpoint's check",
    chapter="11",
    summary="Compute an S256 code challenge, say what /authorize answers to a request's PKCE parameters (plain and "
            "a missing method refused), and check a verifier against the stored challenge.",
    rules=(R_S256, R_PLAIN, R_VERIFY),
    functions=("code_challenge", "authorize_error", "verifier_matches"),
    checks=(
        Check("The S256 challenge of a verifier", R_S256, check_challenge, CHALLENGE_KINDS,
              hint="SHA-256 of the verifier's ASCII bytes, base64 with the URL-safe alphabet, '=' stripped."),
        Check("/authorize refuses plain and missing PKCE", R_PLAIN, check_authorize, AUTHORIZE_KINDS,
              hint="Only code_challenge_method exactly 'S256' with a non-empty code_challenge goes on."),
        Check("The token endpoint checks the verifier exactly", R_VERIFY, check_verify, VERIFY_KINDS,
              hint="Hash what was presented and compare with the stored challenge; nothing else proves anything."),
        Check("Every pair of PKCE parameters answers like /authorize", R_PLAIN, check_every_pair, ("every pair",),
              hint="Only code_challenge_method exactly 'S256' with a non-empty code_challenge goes on.", seeds=1),
        Check("Any verifier: the challenge and the token endpoint's verdict", R_S256, check_generated,
              ("any verifier's challenge", "any presented verifier"),
              hint="The S256 challenge of exactly the presented verifier, compared with the stored one.", seeds=1),
    ),
    hints=(
        Hint("The client keeps a random verifier secret and sends only its hash (the challenge); at the token "
             "endpoint it reveals the verifier. Someone who stole the code but not the verifier cannot redeem it.",
             R_VERIFY),
        Hint("code_challenge: base64.urlsafe_b64encode(hashlib.sha256(verifier.encode('ascii')).digest()), decoded "
             "to text, with the trailing '=' removed.", R_S256),
        Hint("authorize_error: 'invalid_request' when code_challenge is missing or empty, or when "
             "code_challenge_method is anything but 'S256' (absent means plain); else None.", R_PLAIN),
    ),
    forbidden=("mcp_sim.security",),
)
