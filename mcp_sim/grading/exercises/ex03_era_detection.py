"""Exercise ex03_era_detection (chapter 03): is this server modern or legacy?

A client that does not know a server's era sends a ``server/discover`` probe. The learner decides
from the reply — a JSON-RPC response, or ``None`` for a timeout — (``detect_era``) and, over HTTP,
from the status code and body together (``detect_era_http``). Every seed tries every case kind —
each modern code, each legacy answer (errors with and without data, odd results, a timeout), each
HTTP status with a modern-looking and a legacy body — and the seed picks only ids, names and versions.
Each fixed case is generated together with its era, so the expectation comes from how the case was
built. The two generated checks that follow try every reply shape (:data:`REPLIES`, and a timeout)
and every status × body pair (:data:`STATUSES`) on every seed against the simulator's own detection
(``mcp_sim.protocol.lifecycle``, which the learner's file may not import), and report the smallest
pair on which the learner's answer differs.
"""

from __future__ import annotations

import copy
from typing import Any

from mcp_sim.grading.differential import Mismatch, exhaustive
from mcp_sim.grading.model import Check, CheckContext, CheckFailed, Exercise, Hint
from mcp_sim.protocol.lifecycle import era_from_discover_reply, era_from_http_probe

R_RESULT = "versioning.stdio-dual-era-probe"
R_MODERN_ERR = "versioning.unsupported-version-error"
R_FALLBACK = "versioning.fallback-not-keyed-to-one-code"
R_HTTP_OTHER = "versioning.sim-http-other-statuses-legacy"
R_HTTP = "http.modern.era-from-400-body"

_MODERN_CODES = (-32020, -32021, -32022)
_LEGACY_CODES = (-32601, -32601, -32600, -32602, -32603, -32000, -32001, -32002, -32042)


def _rid(rng: Any) -> Any:
    return rng.choice((rng.randint(1, 99), f"probe-{rng.randint(1, 99)}"))


def discover_result(rng: Any, kind: str = "") -> dict[str, Any]:
    versions = ["2026-07-28"] + (["2027-02-14"] if kind == "several versions" else [])
    result: dict[str, Any] = {"resultType": "complete", "supportedVersions": versions,
                              "capabilities": rng.choice(({"tools": {}}, {"resources": {}, "prompts": {}}, {})),
                              "ttlMs": rng.choice((0, 60000)), "cacheScope": rng.choice(("public", "private"))}
    if kind == "with instructions and serverInfo":
        result["instructions"] = "Use the forecast tool for weather questions."
        result["_meta"] = {"io.modelcontextprotocol/serverInfo": {"name": rng.choice(("weather", "files")),
                                                                  "version": "2.0.0"}}
    return {"jsonrpc": "2.0", "id": _rid(rng), "result": result}


def modern_error(rng: Any, code: int | None = None) -> dict[str, Any]:
    code = code if code is not None else rng.choice(_MODERN_CODES)
    data = {-32020: {"header": "Mcp-Method"},
            -32021: {"requiredCapabilities": {"elicitation": {}}},
            -32022: {"requested": rng.choice(("2027-09-30", "2025-11-25")), "supported": ["2026-07-28"]}}[code]
    return {"jsonrpc": "2.0", "id": _rid(rng), "error": {"code": code, "message": "modern error", "data": data}}


LEGACY_KINDS = ("timeout", "-32601", "-32600 not initialized", "-32602 with data", "-32603", "-32000 with data",
                "odd result", "error without id", "-32023 beside the modern codes")


def legacy_reply(rng: Any, kind: str) -> dict[str, Any] | None:
    if kind == "timeout":
        return None
    if kind == "odd result":  # a lenient legacy server that answers anything with an empty result
        return {"jsonrpc": "2.0", "id": _rid(rng), "result": rng.choice(({}, {"ok": True}))}
    code = int(kind.split()[0]) if kind[0] == "-" else rng.choice(_LEGACY_CODES)
    message = {-32601: "Method not found", -32600: "Server not initialized", -32602: "Invalid params"}.get(
        code, "Error")
    reply: dict[str, Any] = {"jsonrpc": "2.0", "id": _rid(rng), "error": {"code": code, "message": message}}
    if kind.endswith("with data"):  # data that looks like a -32022's: only the code tells
        reply["error"]["data"] = ({"supported": rng.sample(["2025-03-26", "2025-06-18", "2025-11-25"], 2),
                                   "requested": "2026-07-28"} if code == -32602 else
                                  {"requiredCapabilities": {rng.choice(("sampling", "elicitation")): {}}})
    if kind == "error without id":
        reply.pop("id")
    return reply


def _ask(ctx: CheckContext, reply: dict[str, Any] | None, want: str, why: str, rule: str) -> None:
    got = ctx.function("detect_era")(copy.deepcopy(reply))
    if got not in ("modern", "legacy"):
        raise CheckFailed(f'detect_era() must return "modern" or "legacy"; got {got!r}.')
    if got != want:
        raise CheckFailed(f"Your function said {got!r}, which this reply does not show.", rule,
                          case=f"reply: {reply!r}", expected=f"{want!r}: {why}")


def check_result(ctx: CheckContext, kind: str) -> None:
    _ask(ctx, discover_result(ctx.rng, kind), "modern", "a result with supportedVersions is a DiscoverResult, "
         "and only a modern server implements server/discover.", R_RESULT)


def check_modern_errors(ctx: CheckContext, kind: str) -> None:
    reply = modern_error(ctx.rng, int(kind))
    _ask(ctx, reply, "modern", f"{reply['error']['code']} is defined only by 2026-07-28, so only a modern server "
                               f"sends it.", R_MODERN_ERR)


def check_fallback(ctx: CheckContext, kind: str) -> None:
    reply = legacy_reply(ctx.rng, kind)
    why = ("no answer before the timeout: an old server may simply ignore an unknown method." if reply is None
           else "it is neither a DiscoverResult nor an error code only 2026-07-28 defines, so it proves nothing "
                "modern: the server is treated as legacy.")
    _ask(ctx, reply, "legacy", why, R_FALLBACK)


HTTP_KINDS = ("200 result", "400 modern", "400 other", "400 empty", "200 legacy error", "404 empty",
              "404 modern-looking", "405 modern-looking", "500 modern-looking")


def http_case(rng: Any, kind: str) -> tuple[int, dict[str, Any] | None, str, str]:
    status = int(kind.split()[0])
    if kind == "200 result":
        return 200, discover_result(rng), "modern", "200 with a DiscoverResult."
    if kind == "400 modern":
        return 400, modern_error(rng), "modern", "400 with a modern JSON-RPC error."
    if kind == "400 other":
        return 400, {"jsonrpc": "2.0", "error": {"code": rng.choice((-32600, -32000)),
                                                 "message": "Bad Request: No valid session ID provided"}}, \
            "legacy", "400 with an error that only legacy servers send (no session)."
    if kind == "404 empty":
        return 404, rng.choice((None, {"error": "not found"})), "legacy", "404: no modern MCP endpoint here."
    if kind.endswith("modern-looking"):
        body = rng.choice((discover_result(rng), modern_error(rng)))
        return status, body, "legacy", (f"{status} is not how a modern server answers: it sends 200 with a "
                                        f"result or 400 with a modern error. A body that looks modern under "
                                        f"another status (a proxy's page, an old gateway) proves nothing.")
    if kind == "200 legacy error":
        return 200, {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}}, \
            "legacy", "200 whose body is an error that is not a modern one."
    return 400, None, "legacy", "400 with no JSON-RPC body to recognise."


def check_http(ctx: CheckContext, kind: str) -> None:
    status, body, want, why = http_case(ctx.rng, kind)
    got = ctx.function("detect_era_http")(status, copy.deepcopy(body))
    if got not in ("modern", "legacy"):
        raise CheckFailed(f'detect_era_http() must return "modern" or "legacy"; got {got!r}.')
    ctx.expect(got == want, f"Your function said {got!r}, which this reply does not show.",
               R_HTTP if status in (200, 400) else R_HTTP_OTHER,
               case=f"HTTP {status} with body {body!r}", expected=f"{want!r}: {why}")


# --- generated: every reply shape and every status, against the simulator's own era detection ----------

def _error(rng: Any, code: int, data: dict[str, Any] | None = None, with_id: bool = True) -> dict[str, Any]:
    reply: dict[str, Any] = {"jsonrpc": "2.0", "error": {"code": code, "message": "error"}}
    if data is not None:
        reply["error"]["data"] = data
    return {"id": _rid(rng), **reply} if with_id else reply


REPLIES: tuple[str, ...] = (
    "a DiscoverResult", "a DiscoverResult with instructions", "a DiscoverResult with ttlMs 0", "-32020", "-32021",
    "-32022", "-32022 without data", "-32601", "-32600", "-32602 with -32022-like data", "-32603",
    "-32000 with requiredCapabilities", "-32001", "-32002", "-32042", "-32019", "-32023", "-32029", "-32700",
    "-32601 without id", "an empty result", "a result without supportedVersions", "an InitializeResult",
    "a null result", "neither result nor error")
"""Every reply shape the generated checks try (the seed picks ids, names and versions inside each): the
codes next to the three modern ones are legacy, and so is a lenient server's InitializeResult."""


def make_reply(rng: Any, shape: str) -> dict[str, Any]:
    """The reply of ``shape`` (see :data:`REPLIES`)."""
    if shape.startswith("a DiscoverResult"):
        reply = discover_result(rng, "with instructions and serverInfo" if "instructions" in shape else "")
        if shape.endswith("ttlMs 0"):  # a result not to be cached is still a DiscoverResult
            reply["result"]["ttlMs"] = 0
        return reply
    if shape in ("-32020", "-32021", "-32022"):
        return modern_error(rng, int(shape))
    if shape == "-32022 without data":
        return _error(rng, -32022)
    if shape == "-32602 with -32022-like data":
        return _error(rng, -32602, {"requested": "2026-07-28", "supported": ["2025-06-18", "2025-11-25"]})
    if shape == "-32000 with requiredCapabilities":
        return _error(rng, -32000, {"requiredCapabilities": {rng.choice(("sampling", "elicitation")): {}}})
    if shape == "-32601 without id":
        return _error(rng, -32601, with_id=False)
    if shape[0] == "-":
        return _error(rng, int(shape))
    result: Any = {"an empty result": {}, "a result without supportedVersions": {"tools": [], "ok": True},
                   "an InitializeResult": {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                                           "serverInfo": {"name": "legacy", "version": "1.0"}},
                   "a null result": None}.get(shape, "none")
    return {"jsonrpc": "2.0", "id": _rid(rng)} if result == "none" else {"jsonrpc": "2.0", "id": _rid(rng),
                                                                          "result": result}


STATUSES: tuple[int, ...] = (200, 202, 400, 401, 403, 404, 405, 406, 500)


def _rule_for(reply: dict[str, Any] | None, want: str) -> str:
    if want == "legacy":
        return R_FALLBACK
    return R_RESULT if isinstance((reply or {}).get("result"), dict) else R_MODERN_ERR


def _same_era(fn: str) -> Any:
    def compare(case: Any, got: Any, want: str) -> Mismatch | None:
        if got not in ("modern", "legacy"):
            return Mismatch(f'{fn}() must return "modern" or "legacy"; got {got!r}.', R_FALLBACK)
        if got == want:
            return None
        if fn == "detect_era":
            return Mismatch(f"Your function said {got!r}, which this reply does not show.", _rule_for(case[1], want),
                            expected=repr(want))
        status = case[0]
        return Mismatch(f"Your function said {got!r} for HTTP {status}, which this answer does not show.",
                        R_HTTP if status in (200, 400) else R_HTTP_OTHER, expected=repr(want))
    return compare


def check_generated_replies(ctx: CheckContext, kind: str) -> None:
    cases = [("timeout", None)] + [(shape, make_reply(ctx.rng, shape)) for shape in REPLIES]
    exhaustive(ctx, cases, learner=lambda c: ctx.function("detect_era")(copy.deepcopy(c[1])),
               oracle=lambda c: era_from_discover_reply(c[1]), compare=_same_era("detect_era"),
               describe=lambda c: f"reply ({c[0]}): {c[1]!r}")


def _free(status: int, shape: str) -> bool:
    """A 200 carrying a modern error, or a 400 carrying a DiscoverResult, is no revision's answer: the
    README leaves it free (reading the body as detect_era does, or only the shape the status allows)."""
    modern_error = shape in ("-32020", "-32021", "-32022", "-32022 without data")
    return (status == 200 and modern_error) or (status == 400 and shape.startswith("a DiscoverResult"))


def check_generated_http(ctx: CheckContext, kind: str) -> None:
    bodies = [("no body", None)] + [(shape, make_reply(ctx.rng, shape)) for shape in REPLIES]
    cases = [(status, body, shape) for status in STATUSES for shape, body in bodies if not _free(status, shape)]
    exhaustive(ctx, cases, learner=lambda c: ctx.function("detect_era_http")(c[0], copy.deepcopy(c[1])),
               oracle=lambda c: era_from_http_probe(c[0], c[1]), compare=_same_era("detect_era_http"),
               describe=lambda c: f"HTTP {c[0]} with body ({c[2]}) {c[1]!r}")


EXERCISE = Exercise(
    id="ex03_era_detection",
    title="Modern or legacy? Detect the era",
    chapter="03",
    summary="Classify a server from its answer to a server/discover probe, over any transport and over HTTP.",
    rules=(R_RESULT, R_MODERN_ERR, R_FALLBACK, R_HTTP, R_HTTP_OTHER),
    functions=("detect_era", "detect_era_http"),
    checks=(
        Check("A DiscoverResult means modern", R_RESULT, check_result,
              ("one version", "several versions", "with instructions and serverInfo"),
              hint="Which member does only a DiscoverResult have?"),
        Check("A modern-only error means modern", R_MODERN_ERR, check_modern_errors, ("-32020", "-32021", "-32022"),
              hint="Three codes exist only in 2026-07-28; compare the code, not the shape of the error."),
        Check("Everything else — other errors, odd results, timeouts — means legacy", R_FALLBACK, check_fallback,
              LEGACY_KINDS, hint="Decide 'modern' only on positive evidence; compare the code itself, since "
                                 "legacy errors can carry data too."),
        Check("HTTP: read the status and the body together", R_HTTP, check_http, HTTP_KINDS,
              hint="Which statuses can a modern answer come with? Look at the body only for those."),
        Check("Every reply shape is classified like the simulator's", R_FALLBACK, check_generated_replies,
              ("every reply shape",), seeds=1, hint="Modern only on positive evidence: a DiscoverResult or a modern-only "
                                           "error code; everything else is legacy."),
        Check("Every status and body are classified like the simulator's", R_HTTP, check_generated_http,
              ("every status × every body",),
              seeds=1, hint="Only 200 and 400 can carry a modern answer; under them, read the body as detect_era does."),
    ),
    hints=(
        Hint("Ask: what proves a server is modern? Only a modern server can answer server/discover with a "
             "DiscoverResult, or reply with an error code that only the modern revision defines.", R_RESULT),
        Hint("Do not test for one legacy code such as -32601: legacy servers also say -32600 ('not initialized'), "
             "-32602, or nothing at all. Everything that is not modern evidence is legacy.", R_FALLBACK),
        Hint("Over HTTP a modern server answers with 200 (a result) or 400 (a modern error). Compare the status "
             "with those two first; the body only counts under them.", R_HTTP),
    ),
    forbidden=("mcp_sim.protocol.lifecycle", "mcp_sim.roles"),
)
