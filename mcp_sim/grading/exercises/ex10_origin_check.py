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

from mcp_sim.grading.exercises.ex10_labs import (
    Asker,
    checked,
    expect_lab_holds,
    lab_kinds,
    lab_seed,
    run_learner_lab,
    split_kind,
)
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
        "the null origin": "null",
        "the user's page on localhost": f"http://localhost:{port}",
        "the user's page on 127.0.0.1": f"http://127.0.0.1:{port}",
    }[kind]


FOREIGN_KINDS = ("an attacker's web page", "the attacker's page on the server's port",
                 "a host name that starts with localhost", "localhost followed by another domain",
                 "localhost on another port", "127.0.0.1 on another port", "https on localhost")
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
    ),
    hints=(
        Hint("DNS rebinding makes a web page's host name resolve to 127.0.0.1, so the browser sends the page's "
             "requests to your local server — with the page's own Origin. That header is the only thing that "
             "tells the two apart.", R_ORIGIN),
        Hint("origin_allowed: return origin in {f'http://localhost:{port}', f'http://127.0.0.1:{port}'}.", R_ORIGIN),
    ),
    forbidden=("mcp_sim.scenarios", "mcp_sim.transports"),
)
