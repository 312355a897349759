"""Exercise ex03_version_negotiation (chapter 03): the legacy handshake's version choice.

The learner writes the server's choice (``choose_version``), the client's verdict
(``client_accepts``) and the whole exchange (``handshake``). Every seed tries every case kind — the
requested version supported or not, newer or older than the server's, a list whose latest version is
neither first nor last, more than one version in common, a supported-but-different answer — and the
seed only picks which versions play each part. Lists are always shuffled, so "take the last element"
never works. The fixed cases' expected answers are computed here from the rule; the two generated checks
that follow try every pair of version sets on every seed against the project's lifecycle module (which
the learner's file may not import) and report the smallest pair that differs.

A server that does not speak the requested version may counter-offer any version it supports (the
newest is only recommended), so every supported answer passes, in ``choose_version`` and in the
handshake. The client's offer of its latest version is this exercise's own starting point (README).
"""

from __future__ import annotations

import itertools
from typing import Any

from mcp_sim.grading.differential import Mismatch, exhaustive
from mcp_sim.grading.model import Check, CheckContext, CheckFailed, Exercise, Hint
from mcp_sim.protocol import lifecycle

LEGACY_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")

R_SERVER = "lifecycle.server-echoes-supported-version"
R_COUNTER = "lifecycle.server-counter-offers"
R_COUNTER_LATEST = "lifecycle.server-counter-offers-latest"
R_CLIENT = "lifecycle.client-disconnects-on-unsupported"
R_CLIENT_OFFER = "lifecycle.client-offers-a-version-it-supports"


def _shuffled(rng: Any, versions: list[str]) -> list[str]:
    """``versions`` in an order where the latest is neither first nor last whenever there are three."""
    out = list(versions)
    rng.shuffle(out)
    if len(out) >= 3:
        latest = max(out)
        out.remove(latest)
        out.insert(rng.randint(1, len(out) - 1), latest)
    elif len(out) == 2 and out[-1] == max(out) and rng.random() < 0.5:
        out.reverse()
    return out


def _str_result(value: Any, fn: str) -> str:
    if not isinstance(value, str):
        raise CheckFailed(f"{fn}() should return a version string like '2025-06-18'; got {value!r}.")
    return value


def _pick(rng: Any, n: int) -> list[str]:
    return sorted(rng.sample(LEGACY_VERSIONS, n))


def check_echo(ctx: CheckContext, kind: str) -> None:
    rng = ctx.rng
    if kind == "only version":
        supported = _pick(rng, 1)
        requested = supported[0]
    else:
        versions = _pick(rng, rng.randint(2, 4))
        requested = versions[-1] if kind == "requested is the latest" else rng.choice(versions[:-1])
        supported = _shuffled(rng, versions)
    got = _str_result(ctx.function("choose_version")(requested, list(supported)), "choose_version")
    ctx.expect(got == requested, f"Your function answered {got!r}, though the server speaks the version the client "
                                 f"asked for.", case=f"the client asks for {requested!r}; the server supports "
                                                     f"{supported!r}",
               expected=f"{requested!r}: the client's choice wins whenever the server can speak it")


def check_fallback(ctx: CheckContext, kind: str) -> None:
    rng = ctx.rng
    if kind == "requested newer than all":
        versions = sorted(rng.sample(LEGACY_VERSIONS[:-1], rng.randint(1, 3)))
        requested = rng.choice([v for v in LEGACY_VERSIONS if v > versions[-1]])
    elif kind == "requested older than all":
        versions = _pick(rng, rng.randint(2, 3))
        requested = rng.choice([v for v in LEGACY_VERSIONS if v < min(versions)] or ["2024-01-01"])
    else:  # requested falls between two supported versions
        low, mid, high = _pick(rng, 3)
        versions, requested = [low, high, *[v for v in LEGACY_VERSIONS if v > high][:1]], mid
    supported = _shuffled(rng, versions)
    got = _str_result(ctx.function("choose_version")(requested, list(supported)), "choose_version")
    ctx.expect(got in supported, f"The server does not speak the version asked for, and your function answered "
                                 f"{got!r}, which the server does not speak either.", R_COUNTER,
               case=f"the client asks for {requested!r}; the server supports {supported!r}",
               expected=f"any version of {sorted(supported)!r}; the newest, {max(supported)!r}, is the one the "
                        f"spec recommends (rule {R_COUNTER_LATEST}): it gives the client the best chance to "
                        f"speak it too")


def check_client(ctx: CheckContext, kind: str) -> None:
    rng = ctx.rng
    versions = _pick(rng, rng.randint(2, 4))
    if kind == "the client's latest":
        client, chosen = versions, versions[-1]
    elif kind == "an older one the client also speaks":
        client, chosen = versions, rng.choice(versions[:-1])
    else:
        client = versions[:-1] if kind == "one the client lacks (newer)" else versions[1:]
        chosen = versions[-1] if kind == "one the client lacks (newer)" else versions[0]
    client = _shuffled(rng, client)
    got = ctx.function("client_accepts")(chosen, list(client))
    want = chosen in client
    if not isinstance(got, bool):
        raise CheckFailed(f"client_accepts() should return True or False; got {got!r}.")
    ctx.expect(got == want, f"Your function returned {got}.",
               case=f"the server answered {chosen!r}; the client supports {client!r}",
               expected="True: the client speaks that version, even if it is not its latest" if want else
               "False (disconnect): the client cannot speak that version")


HANDSHAKE_KINDS = ("same latest", "several in common", "server older, client speaks it",
                   "server older, client lacks it", "server newer only")


def check_handshake(ctx: CheckContext, kind: str) -> None:
    rng = ctx.rng
    v = LEGACY_VERSIONS
    i = rng.randint(0, 1)
    client, server = {
        "same latest": ([v[i], v[3]], [v[i + 1], v[3]]),
        "several in common": ([v[0], v[1], v[2]], [v[0], v[1], v[2], v[3]][i:]),
        "server older, client speaks it": ([v[i], v[2], v[3]], [v[0], v[1], v[2]][i:]),
        "server older, client lacks it": ([v[2], v[3]], [v[0], v[1]][i:]),
        "server newer only": ([v[0], v[1]][i:], [v[2], v[3]]),
    }[kind]
    client, server = _shuffled(rng, client), _shuffled(rng, server)
    offered = max(client)
    # The server echoes the offer if it can; otherwise it may counter-offer any version it supports.
    answers = [offered] if offered in server else sorted(server)
    accepted = {a if a in client else None for a in answers}
    got = ctx.function("handshake")(list(client), list(server))
    if got is not None:
        _str_result(got, "handshake")
    if got not in accepted:
        if offered in server:
            story = (f"the client offers its latest, {offered!r}; the server speaks it and answers with it; "
                     f"the client uses {offered!r}.")
        else:
            story = (f"the client offers its latest, {offered!r}; the server (supports {server!r}) does not "
                     f"speak it and counter-offers one of its own versions (the newest, {max(server)!r}, is the "
                     f"recommended one); the client uses it if it speaks it, else disconnects (None). "
                     f"Accepted here: {sorted(accepted, key=str)!r}.")
        if got is None:
            rule = R_SERVER if offered in server else R_CLIENT
        elif got not in client:
            rule = R_CLIENT
        elif got not in server:
            rule = R_COUNTER
        else:  # both speak it, but it does not answer the client's latest offer
            rule = R_CLIENT_OFFER
        raise CheckFailed(f"Your handshake() returned {got!r}.", rule,
                          case=f"client supports {client!r}, server supports {server!r}",
                          expected=story)


# --- generated: every pair of version sets, against the simulator's own negotiation ---------------------

def version_sets() -> list[tuple[str, ...]]:
    """Every non-empty set of legacy versions (15 of them), smallest first."""
    return [c for n in range(1, len(LEGACY_VERSIONS) + 1) for c in itertools.combinations(LEGACY_VERSIONS, n)]


_OUTSIDE = ("2024-10-07", "2026-01-01")
"""Requested versions no server of these cases speaks: older than all, and between the last legacy
revision and the modern one."""


def check_generated_server(ctx: CheckContext, kind: str) -> None:
    """Every requested version (known or not) against every supported set, in an order the seed picks."""
    cases = [(req, _shuffled(ctx.rng, list(sup))) for sup in version_sets() for req in LEGACY_VERSIONS + _OUTSIDE]

    def compare(case: tuple[str, list[str]], got: Any, want: str) -> Mismatch | None:
        requested, supported = case
        if requested in supported:
            if got == requested:
                return None
            return Mismatch(f"Your choose_version() answered {got!r}, not the version asked for, which the server "
                            f"speaks.", R_SERVER, expected=repr(requested))
        if isinstance(got, str) and got in supported:
            return None
        return Mismatch(f"Your choose_version() answered {got!r}, which the server does not speak.", R_COUNTER,
                        expected=f"any of {sorted(supported)!r}; the simulator answers its newest, {want!r}")

    exhaustive(ctx, cases, learner=lambda c: ctx.function("choose_version")(c[0], list(c[1])),
               oracle=lambda c: lifecycle.negotiate_version(*c), compare=compare,
               describe=lambda c: f"the client asks for {c[0]!r}; the server supports {c[1]!r}")


def check_generated_handshake(ctx: CheckContext, kind: str) -> None:
    """Every client set against every server set (225 pairs), and the client's verdict on each answer."""
    cases = [(_shuffled(ctx.rng, list(c)), _shuffled(ctx.rng, list(s))) for c in version_sets()
             for s in version_sets()]

    def oracle(case: tuple[list[str], list[str]]) -> set[str | None]:
        client, server = case
        offered = max(client)
        answers = [lifecycle.negotiate_version(offered, server)] if offered in server else list(server)
        return {a if lifecycle.client_accepts(a, client) else None for a in answers}

    def compare(case: tuple[list[str], list[str]], got: Any, accepted: set[str | None]) -> Mismatch | None:
        client, server = case
        if got in accepted:
            return None
        if max(client) in server:  # the server speaks the client's latest offer: both use it
            rule = R_CLIENT_OFFER
        elif got is None:
            rule = R_CLIENT
        elif got not in client:
            rule = R_CLIENT
        elif got not in server:
            rule = R_COUNTER
        else:
            rule = R_CLIENT_OFFER
        return Mismatch(f"Your handshake() returned {got!r}.", rule,
                        expected=f"one of {sorted(accepted, key=str)!r}")

    exhaustive(ctx, cases, learner=lambda c: ctx.function("handshake")(list(c[0]), list(c[1])), oracle=oracle,
               compare=compare, describe=lambda c: f"client supports {c[0]!r}, server supports {c[1]!r}")
    verdicts = [(v, _shuffled(ctx.rng, list(c))) for c in version_sets() for v in LEGACY_VERSIONS]

    def same_verdict(case: tuple[str, list[str]], got: Any, want: bool) -> Mismatch | None:
        if got is want:
            return None
        return Mismatch(f"Your client_accepts() returned {got!r}.", R_CLIENT, expected=repr(want))

    exhaustive(ctx, verdicts, learner=lambda c: ctx.function("client_accepts")(c[0], list(c[1])),
               oracle=lambda c: lifecycle.client_accepts(*c), compare=same_verdict,
               describe=lambda c: f"the server answered {c[0]!r}; the client supports {c[1]!r}")


EXERCISE = Exercise(
    id="ex03_version_negotiation",
    title="Legacy version negotiation",
    chapter="03",
    summary="Implement the initialize handshake's version choice (server) and verdict (client).",
    rules=(R_SERVER, R_COUNTER, R_CLIENT, R_CLIENT_OFFER),
    functions=("choose_version", "client_accepts", "handshake"),
    checks=(
        Check("Server echoes a requested version it supports", R_SERVER, check_echo,
              ("requested is the latest", "requested is older", "only version"),
              hint="Compare the requested version with the server's list before choosing anything else."),
        Check("Otherwise the server counter-offers a version it supports", R_COUNTER, check_fallback,
              ("requested newer than all", "requested older than all", "requested in between"),
              hint="The supported list is in no particular order; look at what the version strings are."),
        Check("The client accepts only versions it speaks", R_CLIENT, check_client,
              ("the client's latest", "an older one the client also speaks", "one the client lacks (newer)",
               "one the client lacks (older)"),
              hint="The client compares the server's answer with its own list — not with its own latest."),
        Check("The whole handshake: agree or disconnect", R_CLIENT_OFFER, check_handshake, HANDSHAKE_KINDS,
              hint="Follow the exchange in order: what the client offers, what the server answers to that, "
                   "whether the client can live with the answer."),
        Check("Any requested version and supported set: the server answers like the simulator's", R_SERVER,
              check_generated_server, ("every requested version × every supported set",),
              seeds=1, hint="The requested version if the server speaks it; otherwise one of the server's own."),
        Check("Any two version sets: the handshake ends like the simulator's", R_CLIENT_OFFER,
              check_generated_handshake, ("every client set × every server set",),
              seeds=1, hint="Offer the client's latest, let the server answer, and keep the answer only if the client "
                   "speaks it."),
    ),
    hints=(
        Hint("There are two decisions, made by two sides: the server picks a version, then the client decides "
             "whether it can live with it. Neither side picks a version it does not speak.", R_SERVER),
        Hint("The server's choice: the requested version if supported, else one of its own (its latest is "
             "the recommended one). Nothing else — in particular not the client's other versions, which the "
             "server never sees.", R_COUNTER),
        Hint("In handshake(), the client starts by offering its latest version, then reuses your two functions. "
             "If the client does not support the server's answer, the result is None.", R_CLIENT),
    ),
    forbidden=("mcp_sim.protocol.lifecycle", "mcp_sim.roles"),
)
