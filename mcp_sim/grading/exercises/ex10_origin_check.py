"""Exercise ex10_origin_check (chapter 10): Origin validation on a local HTTP server.

The learner writes ``origin_allowed(origin, port)``: may a browser request carrying this ``Origin``
header reach an MCP server listening on ``127.0.0.1:port``? The answer is an allow-list of exact
origins — the server's own local pages — and the string ``"null"`` is refused.

The grader runs the ``dns-rebinding`` lab, every variant, in two passes (the lab's server takes its
allow-list as a set): a first run collects the origins the lab's pages present and the port, the
learner decides each of them across the process boundary, and a second run on the same seed gives
the server exactly the origins the learner allowed. Direct cases ask about single origins; the
expected answers come from the lab's own fixed allow-list.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from mcp_sim.grading.differential import Mismatch
from mcp_sim.grading.exercises.ex10_labs import (
    Asker,
    checked,
    expect_lab_holds,
    lab_kinds,
    lab_seed,
    run_learner_lab,
    split_kind,
)
from mcp_sim.grading.exercises.generated import corners_then_generated
from mcp_sim.grading.model import Check, CheckContext, CheckFailed, Exercise, Hint
from mcp_sim.scenarios.security import LABS
from mcp_sim.scenarios.security.transports_labs import OriginCheck
from mcp_sim.security.identity import pick_name

R_ORIGIN = "http.origin-present-and-invalid-403"
R_NULL = "security.http.null-origin"
R_OWN = "security.http.own-local-origins"

_FIXED = LABS["dns-rebinding"].defences["fixed"].allowed
"""The lab's own fixed allow-list, ``port -> origins``: the expected answer of every case."""


def _candidates(seed: int, variant: str) -> tuple[int, list[str]]:
    """First pass: run the lab with no allow-list and note the port and the origins its pages present —
    the user's editor on the server's own origin, the attacker's page — plus the other loopback form."""
    seen: list[int] = []

    def record(port: int) -> set[str] | None:
        seen.append(port)
        return None

    result = LABS["dns-rebinding"].run_with(OriginCheck(record), "vulnerable", seed, variant)
    port = seen[0]
    page = str(result.evidence["page_origin"])
    return port, [f"http://localhost:{port}", f"http://127.0.0.1:{port}", page]


def check_lab(ctx: CheckContext, kind: str) -> None:
    lab, variant = split_kind(kind)
    rule = R_NULL if variant == "null-origin" else R_ORIGIN
    seed = lab_seed(ctx)
    port, origins = _candidates(seed, variant)
    asker = Asker(ctx)
    allowed: set[str] = set()
    for origin in origins:
        answer = asker.ask("origin_allowed", origin, port, fallback=False)
        if checked(answer, bool, "origin_allowed", "True or False", asker) and answer:
            allowed.add(origin)
    asker.raise_failure()
    result = run_learner_lab(asker, lab, variant, seed, OriginCheck(lambda _port: set(allowed)), rule)
    expect_lab_holds(result, rule, your="your origin check")


def _origin(rng: Any, kind: str, port: int) -> str:
    name = pick_name(rng, "server")
    other = port + rng.choice((1, 2, 1000, -1))
    return {
        "an attacker's web page": f"https://{name}.example",
        "the attacker's page on the server's port": f"http://{name}.example:{port}",
        "a host name that starts with localhost": f"http://localhost.{name}.example:{port}",
        "localhost followed by another domain": f"http://localhost:{port}.{name}.example",
        "localhost on another port": f"http://localhost:{other}",
        "127.0.0.1 on another port": f"http://127.0.0.1:{other}",
        "https on localhost": f"https://localhost:{port}",
        "a host that starts with 127.": f"http://127.0.0.1.{name}.example:{port}",
        "another loopback address": f"http://127.0.0.{rng.randint(2, 254)}:{port}",
        "the IPv6 loopback": f"http://[::1]:{port}",
        "a subdomain of localhost": f"http://{name}.localhost:{port}",
        "a name that resolves to 127.0.0.1": f"http://{name}.localtest.me:{port}",
        "0.0.0.0 on the server's port": f"http://0.0.0.0:{port}",
        "localhost without a port": "http://localhost",
        "127.0.0.1 without a port": "http://127.0.0.1",
        "the null origin": "null",
        "the user's page on localhost": f"http://localhost:{port}",
        "the user's page on 127.0.0.1": f"http://127.0.0.1:{port}",
    }[kind]


FOREIGN_KINDS = ("an attacker's web page", "the attacker's page on the server's port",
                 "a host name that starts with localhost", "localhost followed by another domain",
                 "localhost on another port", "127.0.0.1 on another port", "https on localhost",
                 "a host that starts with 127.", "another loopback address", "the IPv6 loopback",
                 "a subdomain of localhost", "a name that resolves to 127.0.0.1", "0.0.0.0 on the server's port",
                 "localhost without a port", "127.0.0.1 without a port")
OWN_KINDS = ("the user's page on localhost", "the user's page on 127.0.0.1")


def check_direct(ctx: CheckContext, kind: str) -> None:
    port = ctx.rng.randint(3000, 9000)
    origin = _origin(ctx.rng, kind, port)
    want = origin in (_FIXED(port) or set())
    got = ctx.function("origin_allowed")(origin, port)
    if got is not want:
        rule = R_NULL if origin == "null" else R_OWN if want else R_ORIGIN
        raise CheckFailed(f"origin_allowed() returned {got!r}.", rule, case=f"origin_allowed({origin!r}, {port})",
                          expected=f"{want} ({kind})")


# --- generated: any scheme, host, port and suffix, against the lab's fixed allow-list -------------------

_HOSTS = ("localhost", "127.0.0.1", "127.0.0.2", "[::1]", "127.0.0.1.evil.example", "localhost.evil.example",
          "evil.example", "app.localhost", "0.0.0.0", "127.1")


@st.composite
def _origins(draw: st.DrawFn) -> tuple[str, int]:
    port = draw(st.integers(1024, 65535))
    if draw(st.integers(0, 19)) == 0:
        return "null", port
    scheme = draw(st.sampled_from(("http", "https", "ws")))
    host = draw(st.sampled_from(_HOSTS))
    at = draw(st.sampled_from((f":{port}", "", f":{port + 1}", f":{port}0", f":{port}.evil.example", ":80")))
    return f"{scheme}://{host}{at}{draw(st.sampled_from(('', '', '/')))}", port


def _free(origin: str, port: int) -> bool:
    """An own origin with a trailing slash: no browser sends it, and either answer is safe."""
    return origin.endswith("/") and origin[:-1] in (_FIXED(port) or set())


def _compare_origin(case: tuple[str, int], got: Any, want: bool) -> Mismatch | None:
    if got is want or (isinstance(got, bool) and _free(*case)):
        return None
    rule = R_NULL if case[0] == "null" else R_OWN if want else R_ORIGIN
    return Mismatch(f"origin_allowed() returned {got!r}.", rule, expected=str(want))


def check_generated(ctx: CheckContext, kind: str) -> None:
    port = ctx.rng.randint(3000, 9000)
    corners = [(f"{scheme}://{host}{at}", port) for scheme in ("http", "https") for host in _HOSTS
               for at in (f":{port}", "")]
    corners_then_generated(ctx, corners, _origins(), learner=lambda c: ctx.function("origin_allowed")(*c),
                           oracle=lambda c: c[0] in (_FIXED(c[1]) or set()), compare=_compare_origin,
                           describe=lambda c: f"origin_allowed({c[0]!r}, {c[1]})")


EXERCISE = Exercise(
    id="ex10_origin_check",
    title="Origin validation for a local HTTP server",
    chapter="10",
    summary="Write a local MCP server's Origin check — exact origins of its own pages, null refused; graded by the "
            "dns-rebinding lab with your allow-list in the server.",
    rules=(R_ORIGIN, R_NULL, R_OWN),
    functions=("origin_allowed",),
    checks=(
        Check("A rebinding page cannot reach the local server", R_ORIGIN, check_lab, lab_kinds("dns-rebinding"),
              hint="After DNS rebinding the page's requests reach 127.0.0.1, but its Origin header still names "
                   "the page: compare it exactly with the server's own origins.", seeds=1),
        Check("Only exact origins of the server's own pages", R_ORIGIN, check_direct, FOREIGN_KINDS,
              hint="Compare whole strings — scheme, host and port — never a prefix, a substring or the host alone."),
        Check("null is never allowed", R_NULL, check_direct, ("the null origin",),
              hint="\"null\" is a string a sandboxed frame sends; it is nobody's origin."),
        Check("The user's own local page still works", R_OWN, check_direct, OWN_KINDS,
              hint="http://localhost:PORT and http://127.0.0.1:PORT are the server's own origins."),
        Check("Any origin and port answers like the fixed allow-list", R_ORIGIN, check_generated, ("generated",),
              hint="Scheme, host and port, compared whole with the server's own two origins.", seeds=1),
    ),
    hints=(
        Hint("DNS rebinding makes a web page's host name resolve to 127.0.0.1, so the browser sends the page's "
             "requests to your local server — with the page's own Origin. That header is the only thing that "
             "tells the two apart.", R_ORIGIN),
        Hint("origin_allowed: return origin in {f'http://localhost:{port}', f'http://127.0.0.1:{port}'}.", R_ORIGIN),
    ),
    forbidden=("mcp_sim.scenarios", "mcp_sim.transports"),
)
