"""Exercise ex03_version_negotiation (chapter 03): the legacy handshake's version choice.

The learner writes the server's choice (``choose_version``), the client's verdict
(``client_accepts``) and the whole exchange (``handshake``). Cases draw random, shuffled subsets of
the four legacy revisions, so "take the last element" or "take the first" only works by luck, and the
expected answers are computed here from the rule, not from the project's lifecycle module (which the
learner's file may not import).
"""

from __future__ import annotations

from typing import Any

from mcp_sim.grading.model import Check, CheckContext, CheckFailed, Exercise, Hint

LEGACY_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")

R_SERVER = ("Lifecycle (≤2025-11-25): if the server supports the requested protocol version, it MUST respond "
            "with the same version. Otherwise, the server MUST respond with another protocol version it "
            "supports — this SHOULD be the latest version supported by the server.")
R_CLIENT = ("Lifecycle (≤2025-11-25): if the client does not support the version in the server's response, "
            "it SHOULD disconnect.")
R_CLIENT_OFFER = ("Lifecycle (≤2025-11-25): in the initialize request the client MUST send a protocol version "
                  "it supports — this SHOULD be the latest version supported by the client.")


def _subset(rng: Any) -> list[str]:
    chosen = rng.sample(LEGACY_VERSIONS, rng.randint(1, len(LEGACY_VERSIONS)))
    rng.shuffle(chosen)
    return chosen


def _str_result(value: Any, fn: str) -> str:
    if not isinstance(value, str):
        raise CheckFailed(f"{fn}() should return a version string like '2025-06-18'; got {value!r}.")
    return value


def check_echo(ctx: CheckContext) -> None:
    fn = ctx.function("choose_version")
    for _ in range(3):
        supported = _subset(ctx.rng)
        requested = ctx.rng.choice(supported)
        got = _str_result(fn(requested, list(supported)), "choose_version")
        ctx.expect(got == requested, f"The client asked for {requested!r} and the server supports {supported!r}: "
                                     f"the server must answer with {requested!r}, not {got!r}.")


def check_fallback(ctx: CheckContext) -> None:
    fn = ctx.function("choose_version")
    for _ in range(3):
        supported = _subset(ctx.rng)
        while len(supported) == len(LEGACY_VERSIONS):
            supported = _subset(ctx.rng)
        requested = ctx.rng.choice([v for v in LEGACY_VERSIONS if v not in supported] + ["2024-01-01"])
        got = _str_result(fn(requested, list(supported)), "choose_version")
        want = max(supported)
        ctx.expect(got in supported, f"The server supports {supported!r} but answered {got!r}, which it does not "
                                     f"speak (the client asked for {requested!r}).")
        ctx.expect(got == want, f"The client asked for {requested!r}, which the server (supporting {supported!r}, "
                                f"in no particular order) does not speak. It should answer its latest version "
                                f"{want!r}, not {got!r}. Version strings are dates: compare them.")


def check_client(ctx: CheckContext) -> None:
    fn = ctx.function("client_accepts")
    for _ in range(4):
        client = _subset(ctx.rng)
        chosen = ctx.rng.choice(LEGACY_VERSIONS)
        got = fn(chosen, list(client))
        want = chosen in client
        if not isinstance(got, bool):
            raise CheckFailed(f"client_accepts() should return True or False; got {got!r}.")
        ctx.expect(got == want, f"The server answered {chosen!r}; the client supports {client!r}. The client "
                                f"should {'accept' if want else 'disconnect (return False)'}, but your function "
                                f"returned {got}.")


def check_handshake(ctx: CheckContext) -> None:
    fn = ctx.function("handshake")
    for _ in range(4):
        client, server = _subset(ctx.rng), _subset(ctx.rng)
        offered = max(client)
        chosen = offered if offered in server else max(server)
        want = chosen if chosen in client else None
        got = fn(list(client), list(server))
        if got is not None:
            _str_result(got, "handshake")
        if got != want:
            story = (f"the client offers its latest, {offered!r}; the server (supports {server!r}) answers "
                     f"{chosen!r}; ")
            story += (f"the client speaks it, so they use {chosen!r}." if want else
                      "the client does not speak it, so it disconnects (None).")
            raise CheckFailed(f"Client supports {client!r}, server supports {server!r}: {story} Your "
                              f"handshake() returned {got!r}.")


EXERCISE = Exercise(
    id="ex03_version_negotiation",
    title="Legacy version negotiation",
    chapter="03",
    summary="Implement the initialize handshake's version choice (server) and verdict (client).",
    rules=(R_SERVER, R_CLIENT, R_CLIENT_OFFER),
    functions=("choose_version", "client_accepts", "handshake"),
    checks=(
        Check("Server echoes a requested version it supports", R_SERVER, check_echo,
              hint="If the requested version is in the supported list, answer it unchanged."),
        Check("Otherwise the server answers its latest version", R_SERVER, check_fallback,
              hint="The supported list is not sorted. ISO dates compare correctly as strings: max() works."),
        Check("The client accepts only versions it speaks", R_CLIENT, check_client,
              hint="Accepting is a membership test in the client's own list."),
        Check("The whole handshake: agree or disconnect", R_CLIENT_OFFER, check_handshake,
              hint="Compose: the client offers max(client); the server chooses; the client accepts or returns None."),
    ),
    hints=(
        Hint("There are two decisions, made by two sides: the server picks a version, then the client decides "
             "whether it can live with it. Neither side picks a version it does not speak.", R_SERVER),
        Hint("The server's choice: the requested version if supported, else its own latest. Nothing else — in "
             "particular not the client's other versions, which the server never sees.", R_SERVER),
        Hint("In handshake(), the client starts by offering its latest version, then reuses your two functions. "
             "If the client does not support the server's answer, the result is None.", R_CLIENT),
    ),
    forbidden=("mcp_sim.protocol.lifecycle", "mcp_sim.roles"),
)
