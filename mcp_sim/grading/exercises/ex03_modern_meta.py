"""Exercise ex03_modern_meta (chapter 03): per-request negotiation in 2026-07-28.

With no handshake, every modern request carries its protocol version and the client's capabilities
in ``params._meta``. The learner builds such a request (``build_request``), picks the version to retry
with after a ``-32022`` error (``choose_retry_version``), and runs the whole try → -32022 → retry
exchange against a fake server (``call_with_retry``).

Every seed tries every case kind (with or without the caller's own ``_meta``; one, several or no
versions in common; an error other than -32022 carrying data; a retry that is or is not needed); the
seed picks only methods, ids and which dates play each part. Only one modern revision (2026-07-28) has
been released, so the cases imagine later ones
(``2027-…``) to exercise the choice; the rule does not depend on which dates exist.
"""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from hypothesis import strategies as st

from mcp_sim.grading.differential import Mismatch, differential, exhaustive, same_json, show
from mcp_sim.grading.model import Check, CheckContext, CheckFailed, Exercise, Hint
from mcp_sim.protocol.errors import McpError
from mcp_sim.protocol.lifecycle import check_modern_request
from mcp_sim.protocol.meta import request_meta
from mcp_sim.roles.client.opening import SessionOpening

PV = "io.modelcontextprotocol/protocolVersion"
CC = "io.modelcontextprotocol/clientCapabilities"
CI = "io.modelcontextprotocol/clientInfo"

R_META = "meta.required-fields"
R_KEEP = "meta.other-keys-kept"
R_RETRY = "versioning.client-retries-with-common-version"
R_NEW_ID = "jsonrpc.request-id-not-in-flight"
R_SIM_RETRY = "versioning.sim-newest-shared-one-retry"

POOL = ("2026-07-28", "2027-02-14", "2027-09-30", "2028-05-01")
_METHODS: tuple[tuple[str, Callable[[Any], dict[str, Any]]], ...] = (("tools/call", lambda r: {"name": r.choice(("search", "add", "forecast")),
                                      "arguments": {"q": r.choice(("x", "y", "z")), "n": r.randint(1, 9)}}),
            ("resources/read", lambda r: {"uri": f"file:///notes/{r.randint(1, 99)}.md"}),
            ("tools/list", lambda r: {}),
            ("prompts/get", lambda r: {"name": "review", "arguments": {"lang": r.choice(("py", "go"))}}))


def _versions(rng: Any, k: int | None = None) -> list[str]:
    out = rng.sample(POOL, k or rng.randint(1, 3))
    rng.shuffle(out)
    return out


def _caps(rng: Any) -> dict[str, Any]:
    return rng.choice(({}, {"elicitation": {}}, {"sampling": {}, "roots": {}}, {"elicitation": {"form": {}}}))


def _params(rng: Any, meta: str = "") -> dict[str, Any]:
    method, make = _METHODS[0] if meta == "caller _meta and arguments" else rng.choice(_METHODS)
    params = make(rng)
    if meta == "caller progressToken" or meta == "caller _meta and arguments":
        params["_meta"] = {"progressToken": f"p{rng.randint(1, 99)}"}
    elif meta == "caller traceparent":
        params["_meta"] = {"traceparent": f"00-{rng.randint(10**15, 10**16):x}-01-01"}
    elif meta == "" and rng.random() < 0.5:
        params["_meta"] = {"progressToken": f"p{rng.randint(1, 99)}"}
    return {"method": method, "params": params}


def _check_request(req: Any, rid: Any, method: str, params: dict[str, Any], version: str, caps: dict[str, Any],
                   info: dict[str, Any]) -> None:
    if not isinstance(req, dict):
        raise CheckFailed(f"The request should be a dict; got {type(req).__name__}.")
    for key, want in (("jsonrpc", "2.0"), ("id", rid), ("method", method)):
        if req.get(key) != want:
            raise CheckFailed(f'The request\'s "{key}" is {req.get(key)!r}, not the one this request needs.',
                              expected=f'"{key}": {want!r}')
    p = req.get("params")
    if not isinstance(p, dict) or not isinstance(p.get("_meta"), dict):
        raise CheckFailed(f"Modern requests carry params._meta; your request is {json.dumps(req)}.")
    meta = p["_meta"]
    for key, want in ((PV, version), (CC, caps), (CI, info)):
        if meta.get(key) != want:
            raise CheckFailed(f"params._meta[{key!r}] is {meta.get(key)!r}, not what this request must carry.",
                              expected=f"params._meta[{key!r}] = {want!r}")
    for key, value in params.get("_meta", {}).items():
        if meta.get(key) != value:
            raise CheckFailed(f"The caller's params already had _meta[{key!r}] = {value!r}; it must survive in the "
                              f"request, got {meta.get(key)!r}.")
    rest = {k: v for k, v in p.items() if k != "_meta"}
    given = {k: v for k, v in params.items() if k != "_meta"}
    if rest != given:
        raise CheckFailed(f"Apart from _meta, params must be exactly the caller's {json.dumps(given)}; got "
                          f"{json.dumps(rest)}.")
    stray = [k for k in req if k not in ("jsonrpc", "id", "method", "params")]
    if stray or PV in p or "protocolVersion" in p:
        raise CheckFailed(f"The version and capabilities go inside params._meta, nowhere else; found {stray or [PV]}.")


def check_build(ctx: CheckContext, kind: str) -> None:
    rng = ctx.rng
    spec = _params(rng, kind)
    version, caps = rng.choice(POOL), _caps(rng)
    info = {"name": rng.choice(("course-client", "notebook")), "version": f"1.{rng.randint(0, 9)}"}
    rid = rng.choice((rng.randint(1, 99), f"r-{rng.randint(1, 99)}"))
    req = ctx.function("build_request")(rid, spec["method"], copy.deepcopy(spec["params"]), version,
                                        copy.deepcopy(caps), dict(info))
    _check_request(req, rid, spec["method"], spec["params"], version, caps, info)


def check_no_mutation(ctx: CheckContext, kind: str) -> None:
    rng = ctx.rng
    spec = _params(rng, kind)
    caps = _caps(rng)
    info = {"name": "course-client", "version": "1.0"}
    version = rng.choice(POOL)
    args = [7, spec["method"], copy.deepcopy(spec["params"]), version, copy.deepcopy(caps), dict(info)]
    req, after = ctx.call_and_inspect("build_request", args)
    _check_request(req, 7, spec["method"], spec["params"], version, caps, info)
    ctx.expect(after[2] == spec["params"],
               f"build_request() changed the caller's params dict: it was {json.dumps(spec['params'])} and is now "
               f"{json.dumps(after[2])}. The caller reuses it (for the retry after -32022), so it must come back "
               f"as it went in — including its _meta.")
    ctx.expect(after[4] == caps, f"build_request() changed the caller's capabilities dict (now {json.dumps(after[4])}).")


CHOOSE_KINDS = ("one in common", "several in common", "none in common", "another error with data")


def check_choose(ctx: CheckContext, kind: str) -> None:
    rng = ctx.rng
    fn = ctx.function("choose_retry_version")
    if kind == "another error with data":
        client = _versions(rng, 2)
        other: dict[str, Any] = {"code": rng.choice((-32602, -32601, -32021, -32603)), "message": "something else",
                                 "data": rng.choice(({"supported": sorted(client)}, {"requested": max(client),
                                                     "supported": [min(client)]}))}
        got = fn(other, list(client))
        ctx.expect(got is None, f"Only -32022 is about versions; for error {json.dumps(other)} there is nothing to "
                                f"retry with (None) even though its data looks similar, but your function returned "
                                f"{got!r}.")
        return
    a, b, c, d = POOL  # oldest to newest; the client's newest (what it asked for) is never the server's
    client, server = {"one in common": ([a, d], [a, b]), "several in common": ([a, b, d], [a, b, c]),
                      "none in common": ([a, d], [b, c])}[kind]
    requested = max(client)
    rng.shuffle(client)
    rng.shuffle(server)
    error = {"code": -32022, "message": f"Unsupported protocol version: {requested}",
             "data": {"requested": requested, "supported": server}}
    common = [v for v in client if v in server]
    want = max(common) if common else None
    got = fn(copy.deepcopy(error), list(client))
    ctx.expect(got == want, f"Your function returned {got!r}: the client may only retry with a version it "
                            f"speaks, and the server only takes one it supports.",
               R_RETRY if got is None or got not in common else R_SIM_RETRY,
               case=f"client supports {client!r}; the -32022 error says the server supports {server!r}",
               expected=f"the newest in both: {want!r}" if want else "none in common: give up (None)")


class FakeServer:
    """A modern server that speaks ``versions`` and records every request it gets."""

    def __init__(self, versions: list[str], result: dict[str, Any], error: dict[str, Any] | None = None) -> None:
        self.versions = versions
        self.result = result
        self.error = error  # an error this server answers every request in a version it speaks with
        self.requests: list[dict[str, Any]] = []

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        self.requests.append(copy.deepcopy(request))
        if len(self.requests) > 5:
            raise CheckFailed("Your loop sent more than 5 requests; after one retry it should stop.")
        try:
            version = request["params"]["_meta"][PV]
        except (KeyError, TypeError):
            version = None
        if version not in self.versions:
            return {"jsonrpc": "2.0", "id": request.get("id"),
                    "error": {"code": -32022, "message": f"Unsupported protocol version: {version}",
                              "data": {"requested": version, "supported": list(self.versions)}}}
        if self.error is not None:
            return {"jsonrpc": "2.0", "id": request.get("id"), "error": copy.deepcopy(self.error)}
        return {"jsonrpc": "2.0", "id": request.get("id"), "result": dict(self.result)}


def _ids(rng: Any) -> Callable[[], Any]:
    counter = iter(range(rng.randint(1, 50), 10**6))
    style = rng.choice(("int", "str"))
    return lambda: next(counter) if style == "int" else f"c-{next(counter)}"


def _run_call(ctx: CheckContext, client: list[str], server_versions: list[str], error: dict[str, Any] | None = None
              ) -> tuple[Any, FakeServer, dict[str, Any]]:
    rng = ctx.rng
    spec = _params(rng)
    caps, info = _caps(rng), {"name": "course-client", "version": "1.0"}
    server = FakeServer(server_versions, {"resultType": "complete", "content": [{"type": "text", "text": "ok"}]},
                        error)
    got = ctx.function("call_with_retry")(server, _ids(rng), spec["method"], copy.deepcopy(spec["params"]),
                                          list(client), caps, info)
    if not server.requests:
        raise CheckFailed("call_with_retry() never called send(request).")
    first = server.requests[0]
    _check_request(first, first.get("id"), spec["method"], spec["params"], max(client), caps, info)
    return got, server, {"spec": spec, "caps": caps, "info": info}


def check_retry(ctx: CheckContext, kind: str) -> None:
    rng = ctx.rng
    client = _versions(rng, 3)
    newest = max(client)
    others = [v for v in client if v != newest]
    shared = others if kind == "several shared" else [rng.choice(others)]
    server_versions = [*shared, *[v for v in POOL if v not in client][:rng.randint(0, 1)]]
    rng.shuffle(server_versions)
    got, server, info = _run_call(ctx, client, server_versions)
    want_v = max(v for v in client if v in server_versions)
    ctx.expect(len(server.requests) == 2,
               f"The client (versions {client!r}) sent {newest!r}; the server supports {server_versions!r} and "
               f"answered -32022. The client should retry exactly once with {want_v!r}; it sent "
               f"{len(server.requests)} request(s).", R_RETRY if len(server.requests) < 2 else R_SIM_RETRY)
    retry = server.requests[1]
    first_id = server.requests[0].get("id")
    ctx.expect(retry.get("id") != first_id, f"The retry reused id {first_id!r}. It is a new request, and this "
                                            f"exercise gives it an id not used before.", R_SIM_RETRY)
    params = retry.get("params") if isinstance(retry, dict) else None
    meta = params.get("_meta") if isinstance(params, dict) else None
    sent = meta.get(PV) if isinstance(meta, dict) else None
    both_speak = sent in client and sent in server_versions
    ctx.expect(sent == want_v, f"The retry names the version {sent!r}.", R_SIM_RETRY if both_speak else R_RETRY,
               case=f"client supports {client!r}; the server supports {server_versions!r}",
               expected=f"{want_v!r}, the newest version both speak")
    _check_request(retry, retry.get("id"), info["spec"]["method"], info["spec"]["params"], want_v, info["caps"],
                   info["info"])
    ctx.expect(isinstance(got, dict) and got.get("result") is not None and got.get("id") == retry.get("id"),
               f"call_with_retry() should return the server's final response (the result for id {retry.get('id')!r});"
               f" got {got!r}.")


def check_first_try_and_give_up(ctx: CheckContext, kind: str) -> None:
    rng = ctx.rng
    client = _versions(rng)
    if kind == "first try works":  # the server speaks the client's newest: one request, no retry
        server_versions = [max(client), *[v for v in POOL if v not in client][:1]]
        got, server, _ = _run_call(ctx, client, server_versions)
        ctx.expect(len(server.requests) == 1, f"The server supports the client's newest version {max(client)!r}; "
                                              f"one request is enough, but {len(server.requests)} were sent.")
        ctx.expect(isinstance(got, dict) and "result" in got, f"Return the server's response; got {got!r}.")
        return
    if kind == "another error":  # only -32022 is about the version: any other error is the answer
        error = {"code": rng.choice((-32602, -32601, -32603)), "message": "something else",
                 "data": {"supported": sorted(client)}}
        got, server, _ = _run_call(ctx, client, [max(client)], error)
        ctx.expect(len(server.requests) == 1, f"The server answered error {error['code']}, not -32022: there is no "
                                              f"version to renegotiate, but {len(server.requests)} requests were "
                                              f"sent.", case=f"client supports {client!r}; the error: {error!r}")
        ctx.expect(isinstance(got, dict) and got.get("error") == error,
                   f"After an error other than -32022, call_with_retry() returns that response; got {got!r}.",
                   case=f"client supports {client!r}; the error: {error!r}")
        return
    server_versions = [v for v in POOL if v not in client] or ["2030-01-01"]
    got, server, _ = _run_call(ctx, client, server_versions)
    ctx.expect(len(server.requests) == 1,
               f"Client versions {client!r} and server versions {server_versions!r} have nothing in common: "
               f"after the -32022 the client must give up, not send again ({len(server.requests)} requests sent).")
    ctx.expect(got is None, f"When no version is shared, call_with_retry() returns None; got {got!r}.")


# --- generated: any params and _meta, any version lists, against the simulator's client -------------------

CALLER_METAS: tuple[tuple[str, dict[str, Any] | None], ...] = (
    ("no _meta", None), ("an empty _meta", {}), ("a progressToken", {"progressToken": "p-1"}),
    ("a traceparent", {"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-01-01"}),
    ("a vendor key", {"com.example/trace": {"span": 3}}),
    ("a stale protocolVersion", {PV: "2025-11-25"}), ("stale capabilities", {CC: {"sampling": {}}}),
    ("a progressToken and a stale clientInfo", {"progressToken": 9, CI: {"name": "old", "version": "0"}}))
"""What the caller's params may already carry in ``_meta``: its own keys survive, and the three
per-request keys are this request's, whatever the caller left there."""

REQUESTS: st.SearchStrategy[dict[str, Any]] = st.fixed_dictionaries({
    "id": st.one_of(st.integers(0, 99), st.sampled_from(("r-1", "call-7"))),
    "method": st.sampled_from([m for m, _ in _METHODS]),
    "arguments": st.dictionaries(st.sampled_from(("q", "n", "lang", "_meta")), st.one_of(st.integers(0, 9),
                                 st.sampled_from(("x", "é")), st.booleans()), max_size=3),
    "meta": st.sampled_from(range(len(CALLER_METAS))),
    "version": st.sampled_from(POOL),
    "capabilities": st.sampled_from(({}, {"elicitation": {}}, {"sampling": {}, "roots": {"listChanged": True}},
                                     {"elicitation": {"form": {}, "url": {}}})),
    "info": st.sampled_from(({"name": "course-client", "version": "1.0"},
                             {"name": "notebook", "version": "2.3", "title": "Notebook"}))})


def _caller_params(case: dict[str, Any]) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "search", "arguments": dict(case["arguments"])} \
        if case["method"] in ("tools/call", "prompts/get") else {"uri": "file:///notes/1.md"} \
        if case["method"] == "resources/read" else {}
    meta = CALLER_METAS[case["meta"]][1]
    if meta is not None:
        params["_meta"] = copy.deepcopy(meta)
    return params


def _oracle_request(case: dict[str, Any]) -> dict[str, Any]:
    """The request the simulator's client builds: the caller's params, its _meta keys, then the three
    per-request keys of ``request_meta`` (which win over stale ones)."""
    params = _caller_params(case)
    meta = {**params.get("_meta", {}), **request_meta(case["version"], case["capabilities"], case["info"])}
    return {"jsonrpc": "2.0", "id": case["id"], "method": case["method"], "params": {**params, "_meta": meta}}


def _compare_request(case: dict[str, Any], got: Any, want: dict[str, Any]) -> Mismatch | None:
    if same_json(got, want):
        try:
            check_modern_request(got["params"], [case["version"]])
        except McpError as exc:  # pragma: no cover - the oracle's own request always passes
            return Mismatch(f"A 2026-07-28 server refuses your request: {exc.message}", R_META)
        return None
    if not isinstance(got, dict) or not isinstance(got.get("params"), dict):
        return Mismatch(f"build_request() returned {show(got)}, not a request with params.", R_META,
                        expected=show(want))
    meta = got["params"].get("_meta")
    wanted_meta = want["params"]["_meta"]
    if not isinstance(meta, dict) or any(not same_json(meta.get(k), wanted_meta[k]) for k in (PV, CC, CI)):
        return Mismatch(f"params._meta of your request is {show(meta)}: the three per-request keys are not this "
                        f"request's version, capabilities and client info.", R_META, expected=show(wanted_meta))
    return Mismatch(f"Your request {show(got)} differs from the caller's params plus the per-request _meta: "
                    f"a key of the caller's was lost, changed or added.", R_KEEP, expected=show(want))


def check_generated_requests(ctx: CheckContext, kind: str) -> None:
    differential(ctx, REQUESTS, learner=lambda c: ctx.function("build_request")(
                     c["id"], c["method"], _caller_params(c), c["version"], copy.deepcopy(c["capabilities"]),
                     dict(c["info"])),
                 oracle=_oracle_request, compare=_compare_request,
                 describe=lambda c: (f"build_request({c['id']!r}, {c['method']!r}, {show(_caller_params(c))}, "
                                     f"{c['version']!r}, {show(c['capabilities'])}, {show(c['info'])})"))


def simulator_retry_version(error: dict[str, Any], client: list[str]) -> str | None:
    """What the simulator's client (``SessionOpening._renegotiate``) retries with after ``error``."""
    if error.get("code") != -32022:
        return None
    chosen: list[str] = []
    opening = SimpleNamespace(versions=tuple(sorted(set(client), reverse=True)), protocol_version=max(client),
                              participant="client", supported_versions=(), _note=lambda *a, **k: None,
                              _set_version=chosen.append)
    try:
        SessionOpening._renegotiate(opening, McpError(-32022, "Unsupported protocol version",  # type: ignore[arg-type]
                                                      error.get("data")))
    except McpError:
        return None
    return chosen[0]


def _subsets(pool: tuple[str, ...]) -> list[tuple[str, ...]]:
    return [c for n in range(1, len(pool) + 1) for c in itertools.combinations(pool, n)]


def check_generated_retry(ctx: CheckContext, kind: str) -> None:
    """Every client set × every server set after a -32022 (and other errors carrying the same data)."""
    rng = ctx.rng
    cases: list[tuple[dict[str, Any], list[str]]] = []
    for client in _subsets(POOL):
        for server in _subsets(POOL):
            supported = list(server)
            rng.shuffle(supported)
            cases.append(({"code": -32022, "message": "Unsupported protocol version",
                           "data": {"requested": "2029-01-01", "supported": supported}}, _versions_in_order(rng, client)))
        for code in (-32602, -32603, -32600):
            cases.append(({"code": code, "message": "error", "data": {"supported": list(POOL)}},
                          _versions_in_order(rng, client)))
        cases.append(({"code": -32022, "message": "Unsupported protocol version"}, _versions_in_order(rng, client)))

    def compare(case: tuple[dict[str, Any], list[str]], got: Any, want: str | None) -> Mismatch | None:
        if got == want:
            return None
        error = case[0]
        if want is None and error.get("code") != -32022:
            return Mismatch(f"choose_retry_version() answered {got!r} for an error that is not -32022.", R_RETRY,
                            expected="None: only -32022 says the version is the problem")
        return Mismatch(f"choose_retry_version() answered {got!r}.", R_RETRY, expected=repr(want))

    exhaustive(ctx, cases, learner=lambda c: ctx.function("choose_retry_version")(copy.deepcopy(c[0]), list(c[1])),
               oracle=lambda c: simulator_retry_version(*c), compare=compare,
               describe=lambda c: f"error {show(c[0])}; the client speaks {c[1]!r}")


def _versions_in_order(rng: Any, versions: tuple[str, ...]) -> list[str]:
    out = list(versions)
    rng.shuffle(out)
    return out


EXERCISE = Exercise(
    id="ex03_modern_meta",
    title="Modern requests: _meta and the -32022 retry",
    chapter="03",
    summary="Build a 2026-07-28 request with its _meta and recover from an unsupported version.",
    rules=(R_META, R_KEEP, R_RETRY, R_NEW_ID, R_SIM_RETRY),
    functions=("build_request", "choose_retry_version", "call_with_retry"),
    checks=(
        Check("Every request carries version, capabilities and client info in _meta", R_META, check_build,
              ("no caller _meta", "caller progressToken", "caller traceparent"),
              hint="Compare your params._meta with the three io.modelcontextprotocol/* keys the rule names."),
        Check("The caller's params and _meta survive, unmodified", R_KEEP, check_no_mutation,
              ("caller progressToken", "caller _meta and arguments", "no caller _meta"),
              hint="Compare the caller's params before and after your call: the request needs its own dicts."),
        Check("Retry version: newest one both sides speak, else None", R_RETRY, check_choose, CHOOSE_KINDS,
              hint="Look at the error's code first, then compare its data's list with the client's own."),
        Check("After -32022, retry once with a new id", R_NEW_ID, check_retry, ("one shared", "several shared"),
              hint="Compare the retry with the first request: which members must differ, which must stay?"),
        Check("No retry when none is needed or none is possible", R_RETRY, check_first_try_and_give_up,
              ("first try works", "nothing shared", "another error"),
              hint="Look at the first response before deciding to send again."),
        Check("Any params and _meta: the request is the simulator's", R_META, check_generated_requests,
              ("generated",), seeds=1, hint="The caller's params and _meta keys, plus this request's version, capabilities "
                                   "and client info in params._meta."),
        Check("Any two version lists: the retry version is the simulator's", R_RETRY, check_generated_retry,
              ("every client set × every server set",),
              seeds=1, hint="Only -32022 leads to a retry; among the versions both sides speak, the newest."),
    ),
    hints=(
        Hint("A 2026-07-28 server remembers nothing between requests, so each request says which version it "
             "speaks and what the client can do, in params._meta.", R_META),
        Hint("The -32022 error's data lists the versions the server supports. The client may only pick a "
             "version it speaks itself; among the shared ones, the newest.", R_RETRY),
        Hint("call_with_retry reuses your two other functions: the first request offers the client's newest "
             "version; only a -32022 answer leads to a second request, with the chosen version and a new id; "
             "no shared version means giving up.", R_NEW_ID),
    ),
    forbidden=("mcp_sim.protocol.lifecycle", "mcp_sim.protocol.meta.request_meta", "mcp_sim.roles"),
)
