"""Exercise ex03_era_detection (chapter 03): is this server modern or legacy?

A client that does not know a server's era sends a ``server/discover`` probe. The learner decides
from the reply — a JSON-RPC response, or ``None`` for a timeout — (``detect_era``) and, over HTTP,
from the status code and body together (``detect_era_http``). Each case is generated together with its
era, so the expectation comes from how the case was built, not from the project's lifecycle module.
"""

from __future__ import annotations

import copy
from typing import Any

from mcp_sim.grading.model import Check, CheckContext, CheckFailed, Exercise, Hint

R_RESULT = "2026-07-28: a DiscoverResult (supportedVersions, capabilities, serverInfo) identifies a modern server."
R_MODERN_ERR = ("2026-07-28: -32020, -32021 and -32022 exist only in the modern revision; such an error means the "
                "server is modern (e.g. -32022: it is modern but does not speak the requested version).")
R_FALLBACK = ("Era detection: clients MUST NOT key on a single error code. Any other error, or no answer before "
              "the timeout, means legacy: fall back to initialize.")
R_HTTP = ("Streamable HTTP (2026-07-28): a modern error comes as HTTP 400 with the JSON-RPC error body; legacy "
          "servers answer an unknown probe with 4xx (400/404/405) or a 200 carrying a different error.")

_MODERN_CODES = (-32020, -32021, -32022)
_LEGACY_CODES = (-32601, -32601, -32600, -32602, -32603, -32000, -32001, -32002, -32042)


def _rid(rng: Any) -> Any:
    return rng.choice((rng.randint(1, 99), f"probe-{rng.randint(1, 99)}"))


def discover_result(rng: Any) -> dict[str, Any]:
    versions = ["2026-07-28"] + (["2027-02-14"] if rng.random() < 0.3 else [])
    result: dict[str, Any] = {"supportedVersions": versions,
                              "capabilities": rng.choice(({"tools": {}}, {"resources": {}, "prompts": {}}, {})),
                              "serverInfo": {"name": rng.choice(("weather", "files")), "version": "2.0.0"},
                              "resultType": "complete", "ttlMs": rng.choice((0, 60000)),
                              "cacheScope": rng.choice(("public", "private"))}
    if rng.random() < 0.3:
        result["instructions"] = "Use the forecast tool for weather questions."
    return {"jsonrpc": "2.0", "id": _rid(rng), "result": result}


def modern_error(rng: Any) -> dict[str, Any]:
    code = rng.choice(_MODERN_CODES)
    data = {-32020: {"header": "Mcp-Method"},
            -32021: {"requiredCapabilities": {"elicitation": {}}},
            -32022: {"requested": "2027-09-30", "supported": ["2026-07-28"]}}[code]
    return {"jsonrpc": "2.0", "id": _rid(rng), "error": {"code": code, "message": "modern error", "data": data}}


def legacy_reply(rng: Any) -> dict[str, Any] | None:
    kind = rng.choice(("timeout", "error", "error", "error", "odd result", "no id error"))
    if kind == "timeout":
        return None
    if kind == "odd result":  # a lenient legacy server that answers anything with an empty result
        return {"jsonrpc": "2.0", "id": _rid(rng), "result": rng.choice(({}, {"ok": True}))}
    code = rng.choice(_LEGACY_CODES)
    message = {-32601: "Method not found", -32600: "Server not initialized", -32602: "Invalid params"}.get(
        code, "Error")
    reply: dict[str, Any] = {"jsonrpc": "2.0", "id": _rid(rng), "error": {"code": code, "message": message}}
    if kind == "no id error":
        reply.pop("id")
    return reply


def _ask(ctx: CheckContext, reply: dict[str, Any] | None, want: str, why: str) -> None:
    got = ctx.function("detect_era")(copy.deepcopy(reply))
    if got not in ("modern", "legacy"):
        raise CheckFailed(f'detect_era() must return "modern" or "legacy"; got {got!r}.')
    ctx.expect(got == want, f"Reply: {reply!r}\nThis means {want}: {why} Your function said {got!r}.")


def check_result(ctx: CheckContext) -> None:
    for _ in range(2):
        _ask(ctx, discover_result(ctx.rng), "modern", "a result with supportedVersions is a DiscoverResult.")


def check_modern_errors(ctx: CheckContext) -> None:
    for _ in range(3):
        reply = modern_error(ctx.rng)
        _ask(ctx, reply, "modern", f"{reply['error']['code']} is defined only by 2026-07-28.")


def check_fallback(ctx: CheckContext) -> None:
    for _ in range(4):
        reply = legacy_reply(ctx.rng)
        why = ("no answer before the timeout: an old server may simply ignore an unknown method." if reply is None
               else "it is not a DiscoverResult and not a modern error, so the server is treated as legacy.")
        _ask(ctx, reply, "legacy", why)
    # a mixed batch so that one-code rules fail whatever the seed
    _ask(ctx, None, "legacy", "no answer before the timeout means legacy.")
    _ask(ctx, {"jsonrpc": "2.0", "id": 1, "error": {"code": -32600, "message": "Server not initialized"}},
         "legacy", "a legacy server refuses requests before initialize with an error that is not -32601.")


def http_case(rng: Any) -> tuple[int, dict[str, Any] | None, str, str]:
    kind = rng.choice(("200 result", "400 modern", "400 modern", "400 other", "404", "405", "200 legacy error",
                       "400 empty"))
    if kind == "200 result":
        return 200, discover_result(rng), "modern", "200 with a DiscoverResult."
    if kind == "400 modern":
        return 400, modern_error(rng), "modern", "400 with a modern JSON-RPC error."
    if kind == "400 other":
        return 400, {"jsonrpc": "2.0", "error": {"code": rng.choice((-32600, -32000)),
                                                 "message": "Bad Request: No valid session ID provided"}}, \
            "legacy", "400 with an error that only legacy servers send (no session)."
    if kind == "404":
        return 404, rng.choice((None, {"error": "not found"})), "legacy", "404: no modern MCP endpoint here."
    if kind == "405":
        return 405, None, "legacy", "405: the endpoint does not take this request the modern way."
    if kind == "200 legacy error":
        return 200, {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}}, \
            "legacy", "200 whose body is an error that is not a modern one."
    return 400, None, "legacy", "400 with no JSON-RPC body to recognise."


def check_http(ctx: CheckContext) -> None:
    fn = ctx.function("detect_era_http")
    for _ in range(5):
        status, body, want, why = http_case(ctx.rng)
        got = fn(status, copy.deepcopy(body))
        if got not in ("modern", "legacy"):
            raise CheckFailed(f'detect_era_http() must return "modern" or "legacy"; got {got!r}.')
        ctx.expect(got == want, f"HTTP {status} with body {body!r}: this means {want} ({why}) Your function said "
                                f"{got!r}.")


EXERCISE = Exercise(
    id="ex03_era_detection",
    title="Modern or legacy? Detect the era",
    chapter="03",
    summary="Classify a server from its answer to a server/discover probe, over any transport and over HTTP.",
    rules=(R_RESULT, R_MODERN_ERR, R_FALLBACK, R_HTTP),
    functions=("detect_era", "detect_era_http"),
    checks=(
        Check("A DiscoverResult means modern", R_RESULT, check_result,
              hint="Look for result.supportedVersions."),
        Check("A modern-only error means modern", R_MODERN_ERR, check_modern_errors,
              hint="Three codes exist only in 2026-07-28."),
        Check("Everything else — other errors, odd results, timeouts — means legacy", R_FALLBACK, check_fallback,
              hint="Decide 'modern' only on positive evidence; default to legacy."),
        Check("HTTP: read the status and the body together", R_HTTP, check_http,
              hint="A 400 is modern only if its body is a modern error; 200 only if it is a DiscoverResult."),
    ),
    hints=(
        Hint("Ask: what proves a server is modern? Only a modern server can answer server/discover with a "
             "DiscoverResult, or reply with an error code that only the modern revision defines.", R_RESULT),
        Hint("Do not test for one legacy code such as -32601: legacy servers also say -32600 ('not initialized'), "
             "-32602, or nothing at all. Everything that is not modern evidence is legacy.", R_FALLBACK),
        Hint("detect_era_http(status, body) can reuse detect_era(body) — but only for 200 and 400 responses with "
             "a body; any other status is legacy.", R_HTTP),
    ),
    forbidden=("mcp_sim.protocol.lifecycle", "mcp_sim.roles"),
)
