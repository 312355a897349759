"""Exercise ex05_tool_results (chapter 05): play the server — answer a tools/call or resources/read.

The learner writes the server's next message (``answer``) for one request and a small server
description, in either era. Every seed tries every case kind — a tool that works, one with an
``outputSchema``, a handler that fails, arguments that break the ``inputSchema``, an unknown tool, a
known and an unknown resource — in both 2025-11-25 and 2026-07-28; the seed picks only ids, names and
texts. Each case is built together with the answer it needs, so the expectation comes from the case.
"""

from __future__ import annotations

import copy
import json
import random
from typing import Any

from hypothesis import strategies as st

from mcp_sim.capabilities import caching, tools
from mcp_sim.capabilities.resources import not_found, resource_contents
from mcp_sim.grading.differential import Mismatch, canonical, differential, same_json
from mcp_sim.grading.model import Check, CheckContext, CheckFailed, Exercise, Hint

R_TOOL_ERROR = "tools.execution-error-is-result"
R_PROTOCOL_ERROR = "tools.unknown-tool-protocol-error"
R_STRUCTURED = "tools.structured-content-conforms"
R_TEXT_COPY = "tools.structured-content-text-copy"
R_NOT_FOUND = "resources.not-found-modern"
R_NOT_FOUND_LEGACY = "resources.not-found-legacy"
R_RESULT_TYPE = "jsonrpc.result-type-required"
R_CACHE = "caching.hints-required"

ERAS = ("2025-11-25", "2026-07-28")
_CITIES = ("Lisbon", "Oslo", "Quito", "Nairobi", "Perth", "Lima")


def _server(rng: Any, revision: str) -> dict[str, Any]:
    """A small server: two tools (one failing on a city it does not know), one resource."""
    known = rng.sample(_CITIES, 3)
    return {
        "revision": revision,
        "tools": {
            "forecast": {"inputSchema": {"type": "object", "properties": {"city": {"type": "string"}},
                                         "required": ["city"]},
                         "known": known, "outputSchema": None},
            "temperature": {"inputSchema": {"type": "object", "properties": {"city": {"type": "string"}},
                                            "required": ["city"]},
                            "known": known,
                            "outputSchema": {"type": "object", "properties": {"city": {"type": "string"},
                                                                              "celsius": {"type": "number"}},
                                             "required": ["city", "celsius"]}},
        },
        "resources": {f"notes://{rng.choice(('today', 'inbox', 'todo'))}": rng.choice(("Buy milk.", "Call Ana."))},
    }


def run_tool(server: dict[str, Any], name: str, city: str) -> dict[str, Any] | str:
    """What the handler does: a dict on success, a string (the failure's text) when it fails."""
    if city not in server["tools"][name]["known"]:
        return f"no station in {city}"
    celsius = 10 + sum(map(ord, city)) % 20
    return {"city": city, "celsius": celsius} if name == "temperature" else {"text": f"{city}: sunny, {celsius} C"}


def _req(rng: Any, method: str, params: dict[str, Any]) -> dict[str, Any]:
    rid = rng.choice((rng.randint(2, 90), f"req-{rng.randint(2, 90)}"))
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


def _expected_result(server: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    if server["revision"] == "2026-07-28":
        body = {"resultType": "complete", **body}
    return body


def _ask(ctx: CheckContext, server: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
    got = ctx.function("answer")(copy.deepcopy(request), copy.deepcopy(server))
    if not isinstance(got, dict) or got.get("jsonrpc") != "2.0":
        raise CheckFailed(f"answer() must return a JSON-RPC message (a dict with \"jsonrpc\": \"2.0\"); got {got!r}.")
    if got.get("id") != request["id"] or ("result" in got) == ("error" in got):
        raise CheckFailed(f"Request: {json.dumps(request)}\nA response carries the request's id "
                          f"({request['id']!r}) and exactly one of result or error; you sent {json.dumps(got)}.")
    return got


def _expect_result(got: dict[str, Any], request: dict[str, Any], want: dict[str, Any], why: str,
                   rule: str, content_rule: str = "") -> None:
    if "result" not in got:
        raise CheckFailed(f"Request: {json.dumps(request)}\n{why} You sent a JSON-RPC error: "
                          f"{json.dumps(got['error'])}.", rule, case=json.dumps(request), expected="a result")
    mismatch = result_mismatch(got["result"], want, why, rule, content_rule)
    if mismatch is not None:
        raise CheckFailed(f"Request: {json.dumps(request)}\n{mismatch.explanation}", mismatch.rule,
                          case=json.dumps(request), expected=mismatch.expected)


def result_mismatch(result: Any, want: dict[str, Any], why: str, rule: str, content_rule: str = "") -> Mismatch | None:
    """What is wrong with ``result`` where the simulated server answers ``want`` — compared by meaning:
    ``isError: false`` is an absent ``isError``, a JSON text is compared as JSON, the cache lifetime is the
    server's to choose."""
    if not isinstance(result, dict):
        return Mismatch(f"{why} Your result is not an object.", rule, expected=json.dumps(want))
    if "isError" in result and not isinstance(result["isError"], bool):
        return Mismatch(f"{why} Your result's isError is {result['isError']!r}, not a boolean.", rule,
                        expected=f"isError {bool(want.get('isError'))}")
    for key in ("resultType", "isError", "structuredContent", "contents"):
        mine, wanted = result.get(key), want.get(key)
        if key == "isError":  # absent and false mean the same: the call worked
            mine, wanted = bool(mine), bool(wanted)
        if not same_json(canonical(mine), canonical(wanted)) or ((key in want) != (key in result) and key != "isError"):
            extra = R_RESULT_TYPE if key == "resultType" else rule
            return Mismatch(f"{why} Your result's {key} is not what the simulated server answers"
                            f"{' (absent)' if key not in result else ''}.", extra, expected=f"{key} = {wanted!r}")
    if "ttlMs" in want:  # a cacheable 2026-07-28 result: any lifetime of 0 or more, either scope
        ttl, scope = result.get("ttlMs"), result.get("cacheScope")
        if type(ttl) is not int or ttl < 0 or scope not in ("public", "private"):
            return Mismatch(f"{why} In 2026-07-28 a resources/read result is cacheable: your result's ttlMs is "
                            f"{ttl!r} and its cacheScope {scope!r}.", R_CACHE,
                            expected='ttlMs: an integer >= 0, cacheScope: "public" or "private"')
    if "ttlMs" not in want and ("ttlMs" in result or "cacheScope" in result):
        return Mismatch(f"{why} Your result carries a caching hint (ttlMs/cacheScope), which the 2026-07-28 "
                        f"revision introduced: a legacy result has none, and no tools/call result has one.", R_CACHE,
                        expected="no ttlMs, no cacheScope")
    if "content" in want:
        if want.get("isError"):  # the failure's text is the server's own words: any text block that says it
            blocks = result.get("content")
            texts = [b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text"] \
                if isinstance(blocks, list) else []
            needed = want["content"][0]["text"] if want.get("exact") else ""
            if not texts or not any(t.strip() for t in texts) or (needed and not any(needed in t for t in texts)):
                return Mismatch(f"{why} An isError result carries text content that tells the model what failed; "
                                f"yours has {json.dumps(blocks)}.", rule,
                                expected=json.dumps(want["content"]) if needed else "a non-empty text block")
        elif not same_json(canonical(result.get("content")), canonical(want["content"])):
            return Mismatch(f"{why} Your result's content {json.dumps(result.get('content'))} is not what the "
                            f"simulated server answers.", content_rule or rule, expected=json.dumps(want["content"]))
    return None


def _expect_error(got: dict[str, Any], request: dict[str, Any], code: int, why: str, rule: str) -> None:
    if "error" not in got or got["error"].get("code") != code:
        raise CheckFailed(f"Request: {json.dumps(request)}\n{why} You sent {json.dumps(got)}, which is not the "
                          f"error code for this case.", rule, case=json.dumps(request),
                          expected=f"a JSON-RPC error with code {code}")
    if not isinstance(got["error"].get("message"), str):
        raise CheckFailed("A JSON-RPC error object needs a message string.", rule)


def _case(ctx: CheckContext, kind: str) -> None:
    what, revision = kind.rsplit(" in ", 1)
    server = _server(ctx.rng, revision)
    known = server["tools"]["forecast"]["known"]
    unknown = next(c for c in _CITIES if c not in known)
    if what in ("tool works", "structured output", "handler fails", "an extra argument"):
        name = "temperature" if what == "structured output" else "forecast"
        city = unknown if what == "handler fails" else ctx.rng.choice(known)
        arguments: dict[str, Any] = {"city": city, "units": "metric"} if what == "an extra argument" else {"city": city}
        request = _req(ctx.rng, "tools/call", {"name": name, "arguments": arguments})
        outcome = run_tool(server, name, city)
        if isinstance(outcome, str):
            want = {"content": [{"type": "text", "text": outcome}], "isError": True, "exact": True}
            why, rule = "The tool ran and failed: that is a result with isError true, text saying why.", R_TOOL_ERROR
        elif name == "temperature":
            want = {"content": [{"type": "text", "text": json.dumps(outcome)}], "structuredContent": outcome}
            why, rule = ("The tool has an outputSchema: its result carries structuredContent that conforms to it "
                         "(and the simulated server adds the same JSON as text).", R_STRUCTURED)
        else:
            want = {"content": [{"type": "text", "text": outcome["text"]}]}
            why, rule = "The tool worked: a CallToolResult with its text.", R_TOOL_ERROR
        got = _ask(ctx, server, request)
        content_rule = R_TEXT_COPY if name == "temperature" and not isinstance(outcome, str) else ""
        if what == "handler fails":
            _expect_result(got, request, _expected_result(server, want), why, rule)
            if not isinstance(got["result"].get("content"), list) or not got["result"]["content"]:
                raise CheckFailed("An isError result still carries content that tells the model what failed.", rule)
        else:
            _expect_result(got, request, _expected_result(server, want), why, rule, content_rule)
    elif what == "bad arguments":
        for arguments in ({}, {"town": known[0]}, {"city": 7}):  # every way to break the schema, on every seed
            request = _req(ctx.rng, "tools/call", {"name": "forecast", "arguments": arguments})
            got = _ask(ctx, server, request)
            if "result" not in got or got["result"].get("isError") is not True:
                raise CheckFailed(f"Request: {json.dumps(request)}\nThe arguments break the tool's inputSchema. "
                                  f"Since 2025-11-25 that is reported as a CallToolResult with isError true (the "
                                  f"model can fix its arguments), not as a protocol error; you sent "
                                  f"{json.dumps(got)}.", R_TOOL_ERROR, case=json.dumps(request),
                                  expected="a result with isError true")
            # any non-empty text block that says what is wrong (the words are free)
            _expect_result(got, request, _expected_result(server, {"isError": True, "content": [
                {"type": "text", "text": ""}]}), "Invalid arguments:", R_TOOL_ERROR)
    elif what in ("unknown tool", "a tool name in another case"):
        name = "Forecast" if what == "a tool name in another case" else ctx.rng.choice(("forcast", "delete_all", "weather"))
        request = _req(ctx.rng, "tools/call", {"name": name, "arguments": {"city": known[0]}})
        _expect_error(_ask(ctx, server, request), request, -32602, "No tool has this name: nothing ran, so this is "
                      "a protocol error.", R_PROTOCOL_ERROR)
    elif what == "resource found":
        uri, text = next(iter(server["resources"].items()))
        request = _req(ctx.rng, "resources/read", {"uri": uri})
        want = {"contents": [{"uri": uri, "mimeType": "text/plain", "text": text}]}
        if revision == "2026-07-28":
            want.update(caching.cache_fields(30_000, False))
        _expect_result(_ask(ctx, server, request), request, _expected_result(server, want),
                       "The resource exists: a ReadResourceResult with its contents.", R_NOT_FOUND)
    else:
        request = _req(ctx.rng, "resources/read", {"uri": f"notes://{ctx.rng.choice(('archive', 'secret', 'x'))}"})
        code = -32602 if revision == "2026-07-28" else -32002
        _expect_error(_ask(ctx, server, request), request, code, f"No such resource, in {revision}.",
                      R_NOT_FOUND if revision == "2026-07-28" else R_NOT_FOUND_LEGACY)


def _kinds(*whats: str) -> tuple[str, ...]:
    return tuple(f"{w} in {era}" for w in whats for era in ERAS)


# --- generated: any request over every axis, against the simulator's own result builders ----------------

_CALLS = st.tuples(
    st.sampled_from(ERAS), st.sampled_from(("tools/call", "resources/read")),
    st.sampled_from(("forecast", "temperature", "forcast", "Forecast")),
    st.sampled_from(("a known city", "an unknown city", "absent", "{}", "town instead of city", "a number",
                     "an extra argument")),
    st.sampled_from((7, "req-7", 0)), st.sampled_from(("known", "unknown", "known with a slash")),
    st.integers(0, 1 << 16))


def _generated_case(t: tuple[Any, ...]) -> tuple[dict[str, Any], dict[str, Any]]:
    revision, method, name, args, rid, uri_kind, salt = t
    rng = random.Random(salt)  # surface values only: cities, the resource
    server = _server(rng, revision)
    known = server["tools"]["forecast"]["known"]
    unknown = next(c for c in _CITIES if c not in known)
    if method == "resources/read":
        uri = next(iter(server["resources"]))
        uri = {"known": uri, "unknown": "notes://elsewhere", "known with a slash": uri + "/"}[uri_kind]
        return {"jsonrpc": "2.0", "id": rid, "method": method, "params": {"uri": uri}}, server
    arguments = {"a known city": {"city": known[0]}, "an unknown city": {"city": unknown}, "{}": {},
                 "town instead of city": {"town": known[0]}, "a number": {"city": 7},
                 "an extra argument": {"city": known[1], "units": "C"}}.get(args)
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}, server


def oracle(request: dict[str, Any], server: dict[str, Any]) -> dict[str, Any]:
    """The simulated server's answer, built with its own pieces: ``tool_error_result``, ``text_content``,
    the structured-content text copy, ``resource_contents``, ``not_found``'s code, the cache fields."""
    revision, params = server["revision"], request["params"]
    modern = revision == "2026-07-28"

    def result(body: dict[str, Any]) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": request["id"], "result": {"resultType": "complete", **body} if modern else body}

    def error(code: int) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": request["id"], "error": {"code": code, "message": "..."}}

    if request["method"] == "resources/read":
        uri = params["uri"]
        if uri not in server["resources"]:
            return error(not_found(uri, revision).code)
        body = {"contents": resource_contents(server["resources"][uri], uri, "text/plain")}
        return result({**body, **(caching.cache_fields(30_000, False) if modern else {})})
    tool = server["tools"].get(params["name"])
    if tool is None:
        return error(-32602)
    arguments = params.get("arguments") or {}
    if not tools.plain_checker(tool["inputSchema"])(arguments):
        return result(tools.tool_error_result("Invalid arguments"))
    outcome = run_tool(server, params["name"], arguments["city"])
    if isinstance(outcome, str):
        return result({**tools.tool_error_result(outcome), "exact": True})
    if tool["outputSchema"] is not None:
        return result({"content": [tools.text_content(json.dumps(outcome))], "structuredContent": outcome})
    return result({"content": [tools.text_content(outcome["text"])]})


def _rule_for(request: dict[str, Any], want: dict[str, Any], server: dict[str, Any]) -> tuple[str, str]:
    if request["method"] == "resources/read":
        return (R_NOT_FOUND if server["revision"] == "2026-07-28" else R_NOT_FOUND_LEGACY), ""
    if "error" in want:
        return R_PROTOCOL_ERROR, ""
    if "structuredContent" in want["result"]:
        return R_STRUCTURED, R_TEXT_COPY
    return R_TOOL_ERROR, ""


def check_generated(ctx: CheckContext, kind: str) -> None:
    def learner(t: tuple[Any, ...]) -> Any:
        request, server = _generated_case(t)
        return ctx.function("answer")(copy.deepcopy(request), copy.deepcopy(server))

    def compare(t: tuple[Any, ...], got: Any, want: dict[str, Any]) -> Mismatch | None:
        request, server = _generated_case(t)
        rule, content_rule = _rule_for(request, want, server)
        where = f"Request: {json.dumps(request)} ({server['revision']})\n"
        if not isinstance(got, dict) or got.get("jsonrpc") != "2.0" or got.get("id") != request["id"] \
                or ("result" in got) == ("error" in got):
            return Mismatch(f"{where}A response carries the request's id and exactly one of result or error; you "
                            f"sent {json.dumps(got)[:200]}.", rule)
        if "error" in want:
            code = got["error"].get("code") if "error" in got and isinstance(got["error"], dict) else None
            if code != want["error"]["code"] or not isinstance(got.get("error", {}).get("message"), str):
                return Mismatch(f"{where}Nothing can answer this with a result, and yours is not the error this "
                                f"case needs.", rule, expected=f"a JSON-RPC error with code {want['error']['code']}")
            return None
        if "result" not in got:
            return Mismatch(f"{where}This request is answered with a result; you sent a JSON-RPC error.", rule,
                            expected="a result")
        mismatch = result_mismatch(got["result"], want["result"], "", rule, content_rule)
        return None if mismatch is None else Mismatch(where + mismatch.explanation.strip(), mismatch.rule,
                                                      mismatch.expected)

    differential(ctx, _CALLS, learner=learner, oracle=lambda t: oracle(*_generated_case(t)), compare=compare,
                 describe=lambda t: json.dumps(_generated_case(t)[0]) + f" in {t[0]}")


EXERCISE = Exercise(
    id="ex05_tool_results",
    title="Errors as results, or protocol errors? Answer as the server",
    chapter="05",
    summary="Write the server's response to tools/call and resources/read in both eras: results, isError "
            "results, structuredContent, and the right error code when there is nothing to answer with.",
    rules=(R_TOOL_ERROR, R_PROTOCOL_ERROR, R_STRUCTURED, R_TEXT_COPY, R_NOT_FOUND, R_NOT_FOUND_LEGACY, R_RESULT_TYPE,
           R_CACHE),
    functions=("answer",),
    checks=(
        Check("A tool that ran answers with a result", R_TOOL_ERROR, _case,
              _kinds("tool works", "an extra argument", "handler fails", "bad arguments"),
              hint="Did the tool run (or could the model fix its call)? Then the answer is a result, with isError "
                   "saying whether it worked."),
        Check("Structured output matches the outputSchema", R_STRUCTURED, _case, _kinds("structured output"),
              hint="A tool with an outputSchema returns structuredContent that conforms to it; the simulated "
                   "server also puts the same JSON in a text block, as the spec advises."),
        Check("An unknown tool is a protocol error", R_PROTOCOL_ERROR, _case, _kinds("unknown tool", "a tool name in another case"),
              hint="When no tool has this name nothing ran; compare the name with the server's tools first."),
        Check("Resources: contents, or the era's not-found code", R_NOT_FOUND, _case,
              _kinds("resource found", "resource missing"),
              hint="Which code means 'resource not found' depends on the revision; a 2026-07-28 read result is "
                   "cacheable."),
        Check("Any request answers like the simulated server", R_TOOL_ERROR, check_generated, ("generated",),
              hint="Find the tool first, then check the arguments, then run it; resources/read by URI, exactly."),
    ),
    hints=(
        Hint("Two kinds of failure: the request could not be handled at all (protocol error, JSON-RPC error "
             "object), or the tool ran and failed (a normal result with isError: true).", R_TOOL_ERROR),
        Hint("Use run_tool(server, name, city) from the starter for what the handler returns; a string means it "
             "failed.", R_PROTOCOL_ERROR),
        Hint("In 2026-07-28 every result starts with resultType \"complete\"; resource-not-found moved from -32002 "
             "to -32602.", R_NOT_FOUND),
    ),
    forbidden=("mcp_sim.roles", "mcp_sim.capabilities", "mcp_sim.scenarios"),
)
