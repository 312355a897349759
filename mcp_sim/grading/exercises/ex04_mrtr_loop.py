"""Exercise ex04_mrtr_loop (chapter 04): the client's Multi Round-Trip Request loop.

In 2026-07-28 a server that needs something from the user or the model answers ``tools/call`` (or
``prompts/get``, ``resources/read``) with an ``InputRequiredResult``: ``inputRequests`` keyed by names
the server picks, and possibly an opaque ``requestState``. The client fulfils every input request, then
retries: the same method, the original params plus ``inputResponses`` and the echoed ``requestState``,
and a **new** JSON-RPC id. The server may ask again.

The learner writes ``call_with_input(send, new_id, method, params, handlers)``. The check plays the
server (:class:`ScriptedServer`): it follows a script of rounds and records the first rule the client
breaks — the explanation and the rule reported. Every seed tries every case kind (each kind of input
request, one to three rounds, states dropped between rounds, states that change if anyone
"normalises" them); the seed picks keys, ids and texts. Handlers must be called once per input request.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import anyio
from hypothesis import strategies as st

from mcp_sim.grading.differential import Mismatch, differential, same_json, show
from mcp_sim.grading.model import Check, CheckContext, CheckFailed, Exercise, Hint
from mcp_sim.roles.client.client_input import ClientInput

R_FULFIL = "mrtr.client-fulfils-input-requests"
R_NEW_ID = "mrtr.retry-new-id"
R_STATE = "mrtr.client-echoes-state"
R_PARAMS = "mrtr.not-for-other-requests"
R_ROUNDS = "mrtr.server-may-ask-again"
R_COMPLETE = "jsonrpc.absent-result-type-is-complete"

_KEYS = ("confirm", "ask_city", "pick_date", "summary", "approve_delete", "roots", "llm_title", "choose_plan",
         "name", "budget")
_PV = "io.modelcontextprotocol/protocolVersion"
_CC = "io.modelcontextprotocol/clientCapabilities"


_AWKWARD_STATES = ((" \t", " \r\n"), ('{"b": 1,  "a": "caf\u0065\u0301', '"}'), ("eyJ", "=="))
"""(prefix, suffix) of requestState values that change if the client trims them, parses and re-dumps
them, normalises their Unicode (NFD é) or decodes them; round ``i`` uses entry ``i``."""


def _input_request(rng: Any, key: str, kind: str = "") -> dict[str, Any]:
    kind = kind or rng.choice(("elicitation/create", "elicitation/create", "sampling/createMessage", "roots/list"))
    if kind == "elicitation/create":
        return {"method": kind, "params": {"message": f"Please answer: {key.replace('_', ' ')}?",
                                           "requestedSchema": {"type": "object",
                                                               "properties": {"answer": {"type": "string"}}}}}
    if kind == "sampling/createMessage":
        return {"method": kind, "params": {"messages": [{"role": "user", "content": {
            "type": "text", "text": f"Write a {key} for ticket {rng.randint(1, 999)}"}}], "maxTokens": 50}}
    return {"method": kind}  # roots/list has no params to send: the member is optional and left out


def make_handlers(salt: str, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Callable[[dict[str, Any]], Any]]:
    """Deterministic stand-ins for the user (elicitation), the model (sampling) and the host (roots)."""

    def elicit(params: dict[str, Any]) -> dict[str, Any]:
        calls.append(("elicitation/create", copy.deepcopy(params)))
        return {"action": "accept", "content": {"answer": f"{salt}:{params.get('message', '')[-12:]}"}}

    def sample(params: dict[str, Any]) -> dict[str, Any]:
        calls.append(("sampling/createMessage", copy.deepcopy(params)))
        text = params["messages"][-1]["content"]["text"] if params.get("messages") else ""
        return {"role": "assistant", "content": {"type": "text", "text": f"{salt}:{text[-10:]}"},
                "model": "scripted-model", "stopReason": "endTurn"}

    def roots(params: dict[str, Any]) -> dict[str, Any]:
        calls.append(("roots/list", copy.deepcopy(params)))
        return {"roots": [{"uri": f"file:///projects/{salt}", "name": "workspace"}]}

    return {"elicitation/create": elicit, "sampling/createMessage": sample, "roots/list": roots}


class ScriptedServer:
    """Plays a server that asks for input ``len(rounds)`` times, then completes.

    Each round is ``(inputRequests, requestState)``; either may be empty/None but not both. The server
    checks every request it receives against the MRTR rules and keeps the first violation."""

    def __init__(self, method: str, params: dict[str, Any], rounds: list[tuple[dict[str, Any], str | None]],
                 final: dict[str, Any], salt: str) -> None:
        self.method, self.params, self.rounds, self.final = method, params, rounds, final
        self.expected_handlers = make_handlers(salt, [])
        self.requests: list[dict[str, Any]] = []
        self.responses: list[dict[str, Any]] = []
        self.violation: str | None = None
        self.violation_rule: str = ""
        self.violation_expected: str = ""
        """The right value, when the violation has one: shown only as the last hint."""

    def _fail(self, text: str, rule: str, expected: str = "") -> dict[str, Any]:
        if self.violation is None:
            self.violation, self.violation_rule, self.violation_expected = text, rule, expected
        return {"jsonrpc": "2.0", "id": self.requests[-1].get("id") if self.requests else None,
                "error": {"code": -32602, "message": "Invalid params (see the grader's explanation)"}}

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        if not isinstance(request, dict):
            raise CheckFailed(f"send() must be given a request dict; got {type(request).__name__}.")
        request = copy.deepcopy(request)
        n = len(self.requests)
        self.requests.append(request)
        if n > len(self.rounds):
            raise CheckFailed(f"The client sent request #{n + 1} after the server had already given a final "
                              f"answer. A complete result (or an error) ends the loop.")
        if request.get("jsonrpc") != "2.0" or request.get("method") != self.method:
            return self._fail(f"Request #{n + 1} should be a JSON-RPC 2.0 {self.method!r} request; got "
                              f"{json.dumps(request)}.", R_NEW_ID)
        rid = request.get("id")
        if not (isinstance(rid, str) or (isinstance(rid, int) and not isinstance(rid, bool))):
            return self._fail(f"Request #{n + 1} has id {rid!r}; ids are strings or integers.", R_NEW_ID)
        earlier = [r.get("id") for r in self.requests[:-1]]
        if any(rid == e and type(rid) is type(e) for e in earlier):
            return self._fail(f"Retry #{n} reused the id {rid!r} of an earlier request. Each retry is a new "
                              f"request and needs a new id (call new_id()).", R_NEW_ID)
        params = request.get("params")
        if not isinstance(params, dict):
            return self._fail(f"Request #{n + 1} has no params object.", R_PARAMS)
        base = {k: v for k, v in params.items() if k not in ("inputResponses", "requestState")}
        if base != self.params:
            return self._fail(f"Request #{n + 1} should carry the original params {json.dumps(self.params)} "
                              f"(plus inputResponses/requestState on a retry); it carried {json.dumps(base)}.",
                              R_PARAMS)
        if n == 0:
            if "inputResponses" in params or "requestState" in params:
                return self._fail("The first request must not carry inputResponses or requestState: nothing has "
                                  "been asked yet.", R_STATE)
        else:
            asked, state = self.rounds[n - 1]
            earlier_states = [s for _, s in self.rounds[:n - 1] if s is not None]
            earlier_keys = {k for a, _ in self.rounds[:n - 1] for k in a}
            if state is None and "requestState" in params:  # an earlier round's belongs to its own retry only
                return self._fail(f"The server gave no requestState in round {n}, but retry #{n} carries "
                                  f"requestState {params['requestState']!r}. Never invent one or carry an old one "
                                  f"forward.", R_PARAMS if params["requestState"] in earlier_states else R_STATE)
            if state is not None and params.get("requestState") != state:
                return self._fail(f"Round {n} gave requestState {state!r}; retry #{n} must echo it exactly, but "
                                  f"carried {params.get('requestState')!r}.", R_STATE)
            responses = params.get("inputResponses")
            if asked:
                if not isinstance(responses, dict):
                    return self._fail(f"Round {n} asked for {sorted(asked)}; retry #{n} must carry inputResponses "
                                      f"with those keys, but carried {responses!r}.", R_FULFIL)
                for key, req in asked.items():
                    want = self.expected_handlers[req["method"]](copy.deepcopy(req.get("params", {})))
                    if key not in responses:
                        return self._fail(f"Round {n} asked for {key!r} ({req['method']}); retry #{n} has no "
                                          f"inputResponses[{key!r}].", R_FULFIL)
                    if responses[key] != want:
                        return self._fail(f"inputResponses[{key!r}] is {json.dumps(responses[key])}, not what the "
                                          f"{req['method']} handler returns for that request's params.", R_FULFIL,
                                          f"inputResponses[{key!r}] = {json.dumps(want)}")
                stale = [k for k in responses if k not in asked]
                if stale:
                    return self._fail(f"Retry #{n} answers {stale}, which round {n} did not ask for (they belong "
                                      f"to an earlier round). Send only the responses to the latest "
                                      f"InputRequiredResult.", R_PARAMS if set(stale) <= earlier_keys else R_ROUNDS)
            elif responses:
                return self._fail(f"Round {n} asked for no input (only requestState), yet retry #{n} carries "
                                  f"inputResponses {json.dumps(responses)}.",
                                  R_PARAMS if isinstance(responses, dict) and set(responses) <= earlier_keys
                                  else R_ROUNDS)
        if n < len(self.rounds):
            asked, state = self.rounds[n]
            result: dict[str, Any] = {"resultType": "input_required"}
            if asked:
                result["inputRequests"] = copy.deepcopy(asked)
            if state is not None:
                result["requestState"] = state
            response = {"jsonrpc": "2.0", "id": rid, "result": result}
        elif "error" in self.final:  # the script ends with an error response
            response = {"jsonrpc": "2.0", "id": rid, "error": copy.deepcopy(self.final["error"])}
        else:
            response = {"jsonrpc": "2.0", "id": rid, "result": copy.deepcopy(self.final)}
        self.responses.append(response)
        return copy.deepcopy(response)


def make_script(rng: Any, rounds: int, *, state_mode: str = "random", method: str = "",
                asked: str = "") -> dict[str, Any]:
    """A server script of ``rounds`` input rounds. ``asked`` fixes the kind of the first round's input
    request(s) (a method, or ``"several"``); ``state_mode`` is ``"always"``, ``"never"``, ``"awkward"``
    or ``"random"``."""
    method = method or rng.choice(("tools/call", "tools/call", "prompts/get", "resources/read"))
    if method == "tools/call":
        params: dict[str, Any] = {"name": rng.choice(("delete_files", "book_trip", "write_summary")),
                                  "arguments": {"target": rng.choice(("a", "b", "c")), "n": rng.randint(1, 9)}}
    elif method == "prompts/get":
        params = {"name": "plan", "arguments": {"topic": rng.choice(("trip", "launch"))}}
    else:
        params = {"uri": f"tracker://issues/{rng.randint(1, 500)}"}
    params["_meta"] = {_PV: "2026-07-28", _CC: {"elicitation": {}, "sampling": {}, "roots": {}}}
    script: list[tuple[dict[str, Any], str | None]] = []
    keys = list(_KEYS)
    rng.shuffle(keys)
    for i in range(rounds):
        k = rng.randint(0 if i > 0 or rounds > 1 else 1, 3)
        if i == 0 and asked:
            k = 3 if asked == "several" else 1
        kinds = [asked if i == 0 and asked not in ("", "several") else "" for _ in range(k)]
        if i == 0 and asked == "several":
            kinds = ["elicitation/create", "sampling/createMessage", "roots/list"]
        round_asked = {key: _input_request(rng, key, kind) for key, kind in zip([keys.pop() for _ in range(k)], kinds,
                                                                                 strict=True)}
        if state_mode == "awkward":
            prefix, suffix = _AWKWARD_STATES[i % len(_AWKWARD_STATES)]
            state: str | None = f"{prefix}{rng.getrandbits(24):x}{suffix}"
        elif state_mode == "always":
            state = f"st{i}.{rng.getrandbits(40):x}"
        elif state_mode == "never" and round_asked:
            state = None
        else:
            state = f"st{i}.{rng.getrandbits(40):x}" if (not round_asked or rng.random() < 0.6) else None
        script.append((round_asked, state))
    final: dict[str, Any] = {"content": [{"type": "text", "text": f"done {rng.randint(1, 999)}"}]}
    if rng.random() < 0.8 or rounds:
        final = {"resultType": "complete", **final}
    return {"method": method, "params": params, "rounds": script, "final": final, "salt": f"s{rng.randint(1, 999)}"}


def run_script(ctx: CheckContext, script: dict[str, Any]) -> tuple[ScriptedServer, Any]:
    server = ScriptedServer(script["method"], script["params"], script["rounds"], script["final"], script["salt"])
    counter = iter(range(ctx.rng.randint(1, 40), 10**6))
    style = ctx.rng.choice(("int", "str"))

    def new_id() -> Any:
        value = next(counter)
        return value if style == "int" else f"r{value}"

    calls: list[tuple[str, dict[str, Any]]] = []
    got = ctx.function("call_with_input")(server, new_id, script["method"], copy.deepcopy(script["params"]),
                                          make_handlers(script["salt"], calls))
    if server.violation:
        raise CheckFailed(server.violation + "\n" + _story(script), server.violation_rule,
                          expected=server.violation_expected)
    if not server.requests:
        raise CheckFailed("call_with_input() never called send(request).")
    rounds = len(script["rounds"])
    asked_total = sum(len(asked) for asked, _ in script["rounds"])
    if len(calls) > asked_total:
        raise CheckFailed(f"The handlers were called {len(calls)} times for {asked_total} input request(s). Call "
                          f"each request's handler once and reuse its answer: a handler asks the user or the "
                          f"model, and asking twice means a second prompt, a second bill, perhaps another "
                          f"answer.\n" + _story(script), R_FULFIL)
    if len(server.requests) <= rounds:
        last = server.responses[-1].get("result") if server.responses else {}
        raise CheckFailed(f"The loop stopped after {len(server.requests)} request(s), but the last answer was "
                          f"still an InputRequiredResult ({json.dumps(last)}). Keep going until the result is "
                          f"complete.\n" + _story(script))
    final = server.responses[-1]
    if got != final:
        raise CheckFailed(f"call_with_input() should return the final response {json.dumps(final)}; it returned "
                          f"{got!r}.")
    return server, got


def _story(script: dict[str, Any]) -> str:
    lines = [f"The server's script: {script['method']} {json.dumps(script['params'])}"]
    for i, (asked, state) in enumerate(script["rounds"], 1):
        what = ", ".join(f"{k}: {v['method']}" for k, v in asked.items()) or "no inputRequests"
        lines.append(f"  round {i}: input_required ({what}; requestState {state!r})")
    lines.append(f"  then: {json.dumps(script['final'])}")
    return "\n".join(lines)


def check_complete(ctx: CheckContext, kind: str) -> None:
    rng = ctx.rng
    script = make_script(rng, 0)
    if kind == "complete":
        script["final"] = {"resultType": "complete", **{k: v for k, v in script["final"].items() if k != "resultType"}}
    elif kind == "no resultType":
        script["final"].pop("resultType", None)
    elif kind == "error response":
        script["final"] = {"error": {"code": rng.choice((-32602, -32603)), "message": "Tool failed to start"}}
    run_script(ctx, script)


def check_fulfil(ctx: CheckContext, kind: str) -> None:
    run_script(ctx, make_script(ctx.rng, 1, state_mode="random", asked=kind))


def check_new_ids(ctx: CheckContext, kind: str) -> None:
    run_script(ctx, make_script(ctx.rng, 1 if kind == "one round" else 2))


def check_state(ctx: CheckContext, kind: str) -> None:
    rng = ctx.rng
    script = make_script(rng, 2, state_mode="awkward" if kind == "states that change under normalisation"
                         else "always")
    if kind == "an empty requestState":  # "" is a state too: echoed, not taken for none
        script["rounds"][0] = (script["rounds"][0][0], "")
    if kind == "dropped in round 2":  # carrying the old state forward is inventing one
        asked = script["rounds"][1][0] or {"confirm": _input_request(rng, "confirm", "elicitation/create")}
        script["rounds"][1] = (asked, None)
    run_script(ctx, script)


def check_params(ctx: CheckContext, kind: str) -> None:
    run_script(ctx, make_script(ctx.rng, 1, method=kind))


def check_rounds(ctx: CheckContext, kind: str) -> None:
    rng = ctx.rng
    script = make_script(rng, 2 if kind == "two rounds" else 3)
    if kind == "input, then state only":
        script["rounds"][1] = ({}, f"st-only.{rng.getrandbits(32):x}")
    run_script(ctx, script)


# --- generated: any script of rounds, against the simulator client's own retry builder --------------------

SCRIPTS = st.fixed_dictionaries({
    "seed": st.integers(0, 2**16), "method": st.sampled_from(("tools/call", "prompts/get", "resources/read")),
    "rounds": st.lists(st.tuples(st.lists(st.sampled_from(("elicitation/create", "sampling/createMessage",
                                                           "roots/list")), max_size=3),
                                 st.sampled_from(("none", "plain", "awkward", "empty"))), max_size=3),
    "final": st.sampled_from(("complete", "no resultType", "error"))})


def script_of(case: dict[str, Any]) -> dict[str, Any]:
    """The :func:`make_script` script a generated case names: its rounds, states and final answer."""
    rng = random.Random(case["seed"])
    script = make_script(rng, 0, method=case["method"])
    keys = list(_KEYS)
    rng.shuffle(keys)
    for i, (kinds, state_kind) in enumerate(case["rounds"]):
        asked = {keys.pop(): _input_request(rng, "q", kind) for kind in kinds}
        prefix, suffix = _AWKWARD_STATES[i % len(_AWKWARD_STATES)]
        state = {"none": None, "plain": f"st{i}.{rng.getrandbits(32):x}", "empty": "",
                 "awkward": f"{prefix}{rng.getrandbits(24):x}{suffix}"}[state_kind]
        if not asked and state is None:
            state = f"st{i}"  # an InputRequiredResult carries inputRequests or requestState
        script["rounds"].append((asked, state))
    body = {"content": [{"type": "text", "text": "done"}]}
    script["final"] = {"error": {"code": -32603, "message": "failed"}} if case["final"] == "error" else \
        body if case["final"] == "no resultType" else {"resultType": "complete", **body}
    return script


def simulator_requests(script: dict[str, Any]) -> list[dict[str, Any]]:
    """The params of every request the simulator's client sends for ``script``: the first one, then each
    retry as ``ClientInput._fulfil_input_required`` builds it from the round's InputRequiredResult."""
    handlers = make_handlers(script["salt"], [])

    async def fulfil(method: str, params: dict[str, Any], declared: Any) -> Any:
        return handlers[method](params)

    client = SimpleNamespace(fulfil_input=fulfil, protocol_version="2026-07-28")
    out = [copy.deepcopy(script["params"])]
    for asked, state in script["rounds"]:
        result: dict[str, Any] = {"resultType": "input_required"}
        if asked:
            result["inputRequests"] = copy.deepcopy(asked)
        if state is not None:
            result["requestState"] = state
        out.append(anyio.run(ClientInput._fulfil_input_required, client, copy.deepcopy(script["params"]),  # type: ignore[arg-type]
                             result, {}))
    return out


def _learner_requests(ctx: CheckContext, case: dict[str, Any]) -> Any:
    script = script_of(case)
    try:
        server, _ = run_script(ctx, script)
    except CheckFailed as exc:
        return {"failed": str(exc), "rule": exc.rule}
    return [r.get("params") for r in server.requests]


def _compare_requests(case: dict[str, Any], got: Any, want: list[dict[str, Any]]) -> Mismatch | None:
    if isinstance(got, dict):
        return Mismatch(got["failed"], got["rule"] or R_ROUNDS)
    for n, (mine, theirs) in enumerate(zip(got, want, strict=False)):
        mine = {k: v for k, v in mine.items() if not (k == "inputResponses" and v == {})}
        if not same_json(mine, theirs):
            return Mismatch(f"Request #{n + 1} carried params {show(mine)}, not what the simulator's client sends.",
                            R_STATE if n and mine.get("requestState") != theirs.get("requestState") else R_PARAMS,
                            expected=show(theirs))
    return None if len(got) == len(want) else Mismatch(f"The client sent {len(got)} requests for a script of "
                                                       f"{len(want) - 1} input rounds.", R_ROUNDS)


def check_generated(ctx: CheckContext, kind: str) -> None:
    differential(ctx, SCRIPTS, learner=lambda case: _learner_requests(ctx, case), oracle=lambda case:
                 simulator_requests(script_of(case)), compare=_compare_requests,
                 describe=lambda case: _story(script_of(case)), examples=12)


EXERCISE = Exercise(
    id="ex04_mrtr_loop",
    title="The MRTR loop: answer InputRequiredResult and retry",
    chapter="04",
    summary="Drive a Multi Round-Trip Request to completion as a 2026-07-28 client.",
    rules=(R_FULFIL, R_NEW_ID, R_STATE, R_PARAMS, R_ROUNDS, R_COMPLETE),
    functions=("call_with_input",),
    checks=(
        Check("A complete result (or an error) ends the call at once", R_COMPLETE, check_complete,
              ("complete", "no resultType", "error response"),
              hint="Look at what the first answer says about itself before sending anything else."),
        Check("Every inputRequest is fulfilled through its handler, once", R_FULFIL, check_fulfil,
              ("elicitation/create", "sampling/createMessage", "roots/list", "several"),
              hint="Compare the keys of your inputResponses with the keys of inputRequests, and count the handler "
                   "calls."),
        Check("Every retry has a new id", R_NEW_ID, check_new_ids, ("one round", "two rounds"),
              hint="Compare each request's id with the ids of the requests before it."),
        Check("requestState is echoed exactly, never invented", R_STATE, check_state,
              ("echo", "dropped in round 2", "states that change under normalisation",
                                               "an empty requestState"),
              hint="Compare the requestState you send with the one in the latest answer, character for "
                   "character."),
        Check("The retry keeps the original params", R_PARAMS, check_params,
              ("tools/call", "prompts/get", "resources/read"),
              hint="Compare a retry's params with the first request's: what may be added, what must stay?"),
        Check("Second and third rounds work like the first", R_ROUNDS, check_rounds,
              ("two rounds", "three rounds", "input, then state only"),
              hint="What ends the loop? Compare the answer after a retry with the first answer."),
        Check("Any script of rounds: every request is the simulator client's", R_ROUNDS, check_generated,
              ("generated",), seeds=1,
              hint="Each retry is the original params, plus this round's inputResponses and requestState only."),
    ),
    hints=(
        Hint("MRTR is a loop the server drives: every answer says whether it is final. Only an "
             "InputRequiredResult asks for another round; a complete result — or an error — ends the call.",
             R_COMPLETE),
        Hint("A retry is built fresh each round: original params + inputResponses (for exactly the keys the "
             "latest result asked) + requestState (only if the latest result had one) + a new id.", R_PARAMS),
        Hint("requestState is the server's memory, not yours: copy it byte for byte from the latest "
             "InputRequiredResult; if that result had none, your retry has none — even if an earlier round had "
             "one.", R_STATE),
    ),
    forbidden=("mcp_sim.roles", "mcp_sim.capabilities", "mcp_sim.scenarios"),
)
