"""Exercise ex09_next_step (chapter 09): play the Host for one step of a complete call.

The simulator plays a complete call (:func:`mcp_sim.scenarios.complete_call.run_complete_call`) and
pauses it at one of four steps; ``next_step(step, situation)`` must produce what the Host sends next,
and is compared with what the simulator's Host sent:

* ``offer`` — the visible tools, converted to the model API's format (OpenAI or Anthropic);
* ``propose`` — the model's proposed call, as the assistant message of the model API's conversation;
* ``call`` — the JSON-RPC ``tools/call`` request the Client sends, in 2025-11-25 or 2026-07-28;
* ``reply`` — the tool's result handed back to the model, for a result that succeeded or failed.

Every seed tries every case kind; the seed picks the server's name (the prefix of the names the model
sees), the bug's title and the issue number, and which run — successful or failing — each step is
taken from.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from mcp_sim.grading.model import Check, CheckContext, CheckFailed, Exercise, Hint
from mcp_sim.scenarios.complete_call import CallRun, run_complete_call

R_OFFER = "host.model-api-format"
R_PROPOSE = "host.recheck-proposals"
R_CALL = "host.call-under-own-name"
R_REPLY = "host.tool-errors-to-model"

_SERVERS = ("issues", "tracker", "bugs", "tickets")
_TITLES = ("the login page crashes on Safari", "dark mode forgets its setting", "export to CSV drops accents",
           "search returns closed issues", "uploads stall at 99%")
_REVISIONS = ("2025-11-25", "2026-07-28")


def _run(rng: Any, *, outcome: str | None = None, revision: str | None = None, api: str | None = None) -> CallRun:
    return run_complete_call(outcome or rng.choice(("answered", "tool-fails")),
                             revision=revision or rng.choice(_REVISIONS), seed=rng.randint(0, 999),
                             number=rng.randint(3, 999), title=rng.choice(_TITLES), server=rng.choice(_SERVERS),
                             model_api=api or rng.choice(("openai", "anthropic")))  # type: ignore[arg-type]


def _offers(run: CallRun) -> list[dict[str, Any]]:
    return [e.message or {} for e in run.events if e.kind == "app" and (e.sender, e.receiver) == ("host", "model")]


def _listed(run: CallRun) -> list[dict[str, Any]]:
    return next(e.message["result"]["tools"] for e in run.events
                if e.kind == "response" and e.method == "tools/list" and e.message)


def _proposal(run: CallRun) -> dict[str, Any]:
    data = next(e.message for e in run.events if e.kind == "app" and e.sender == "model" and e.message)
    return dict(data["tool_calls"][0])


def build_case(rng: Any, kind: str) -> tuple[str, dict[str, Any], Any]:
    """(step, situation, the simulator's answer) for ``kind``."""
    step, _, variant = kind.partition(" ")
    if step == "offer":
        run = _run(rng, api=variant.strip("()"))
        offer = _offers(run)[0]
        server = run.events[0].receiver.partition("/")[2]
        visible = {t["function"]["name"] if "function" in t else t["name"] for t in offer["tools"]}
        hidden = [f"{server}__{t['name']}" for t in _listed(run) if f"{server}__{t['name']}" not in visible]
        return step, {"api": offer["api"], "server": server, "tools": _listed(run), "hidden": hidden}, offer["tools"]
    if step == "propose":
        run = _run(rng, api=variant.strip("()"))
        offer = _offers(run)[1]
        return step, {"api": offer["api"], "tool_call": _proposal(run)}, offer["messages"][1]
    if step == "call":
        revision = variant.removeprefix("in ")
        run = _run(rng, revision=revision)
        request = next(e.message for e in run.events if e.kind == "request" and e.method == "tools/call")
        assert request is not None
        server = run.events[0].receiver.partition("/")[2]
        meta = (request["params"].get("_meta") or {})
        opening = next(e.message for e in run.events if e.kind == "request" and e.method == "initialize") \
            if revision == "2025-11-25" else None
        client = ({"protocolVersion": opening["params"]["protocolVersion"], "capabilities": opening["params"][
            "capabilities"], "clientInfo": opening["params"]["clientInfo"]} if opening is not None else
            {"protocolVersion": meta["io.modelcontextprotocol/protocolVersion"],
             "capabilities": meta["io.modelcontextprotocol/clientCapabilities"],
             "clientInfo": meta["io.modelcontextprotocol/clientInfo"]})
        tools = {f"{server}__{t['name']}": {"server": server, "name": t["name"]} for t in _listed(run)}
        return step, {"revision": revision, "tool_call": _proposal(run), "tools": tools, "next_id": request["id"],
                      "client": client}, request
    if step == "reply":
        failing = "isError" in variant
        api = "openai" if "openai" in variant else "anthropic"
        run = _run(rng, outcome="tool-fails" if failing else "answered", api=api)
        response = next(e.message for e in run.events if e.kind == "response" and e.method == "tools/call")
        assert response is not None
        return step, {"api": api, "call_id": _proposal(run)["id"], "result": response["result"]}, \
            _offers(run)[1]["messages"][-1]
    raise KeyError(kind)


def _normal(value: Any) -> Any:
    """OpenAI's tool-call arguments are a JSON string: compare what it says, not its spacing (an object
    where the string belongs stays an object, and does not compare equal)."""
    if isinstance(value, dict):
        out = {k: _normal(v) for k, v in value.items()}
        if isinstance(out.get("function"), dict) and isinstance(out["function"].get("arguments"), str):
            try:
                out["function"] = {**out["function"], "arguments": ("json", json.loads(out["function"]["arguments"]))}
            except ValueError:
                pass
        return out
    if isinstance(value, list):
        return [_normal(v) for v in value]
    return value


RULES = {"offer": R_OFFER, "propose": R_PROPOSE, "call": R_CALL, "reply": R_REPLY}


def _ask(ctx: CheckContext, kind: str) -> None:
    step, situation, want = build_case(ctx.rng, kind)
    got = ctx.function("next_step")(step, copy.deepcopy(situation))
    if _normal(got) != _normal(want):
        shown = json.dumps(situation)
        raise CheckFailed(f"Step {step!r} ({kind}), situation {shown[:1200]}{'…' if len(shown) > 1200 else ''}\n"
                          f"next_step() returned {json.dumps(got)[:800]}\nThe simulator's Host sent "
                          f"{json.dumps(want)[:800]}", RULES[step])


EXERCISE = Exercise(
    id="ex09_next_step",
    title="Play the Host: the next step of a complete call",
    chapter="09",
    summary="Produce what the Host sends at each step of a complete call — the tool offer and the proposed call "
            "in the model API's format, the JSON-RPC tools/call in either era, the result handed back to the model.",
    rules=(R_OFFER, R_PROPOSE, R_CALL, R_REPLY),
    functions=("next_step",),
    checks=(
        Check("Offer: the visible tools in the model API's format", R_OFFER, _ask, ("offer (openai)",
                                                                                      "offer (anthropic)"),
              hint="Leave out the hidden tools; name each visible one server__tool; the inputSchema becomes the "
                   "API's parameters / input_schema."),
        Check("Propose: the model's call as the API's assistant message", R_PROPOSE, _ask,
              ("propose (openai)", "propose (anthropic)"),
              hint="OpenAI wants tool_calls with type function and the arguments as a JSON string; Anthropic a "
                   "tool_use content block."),
        Check("Call: tools/call for the right server, in each era", R_CALL, _ask,
              ("call in 2025-11-25", "call in 2026-07-28"),
              hint="Which name does the server know the tool by? And which era sends its version with every "
                   "request?"),
        Check("Reply: the result handed back to the model", R_REPLY, _ask,
              ("reply (openai)", "reply (anthropic)", "reply with isError (openai)", "reply with isError (anthropic)"),
              hint="Tie the reply to the call's id, carry the result's text, and in Anthropic's format say "
                   "whether it is an error."),
    ),
    hints=(
        Hint("The model never sees MCP: the Host translates in both directions. Only the call step is an MCP "
             "message.", R_OFFER),
        Hint("offer → a list of tools: OpenAI {\"type\": \"function\", \"function\": {\"name\", \"description\", "
             "\"parameters\"}}, Anthropic {\"name\", \"description\", \"input_schema\"}. propose → OpenAI "
             "{\"role\": \"assistant\", \"content\": None, \"tool_calls\": [{\"id\", \"type\": \"function\", "
             "\"function\": {\"name\", \"arguments\": json.dumps(...)}}]}, Anthropic {\"role\": \"assistant\", "
             "\"content\": [{\"type\": \"tool_use\", \"id\", \"name\", \"input\"}]}.", R_PROPOSE),
        Hint("call → {\"jsonrpc\": \"2.0\", \"id\": next_id, \"method\": \"tools/call\", \"params\": {\"name\": the "
             "tool's own name, \"arguments\": ...}}, plus in 2026-07-28 params._meta with the keys "
             "io.modelcontextprotocol/protocolVersion, /clientCapabilities and /clientInfo. reply → OpenAI "
             "{\"role\": \"tool\", \"tool_call_id\", \"content\": text}; Anthropic {\"role\": \"user\", \"content\": "
             "[{\"type\": \"tool_result\", \"tool_use_id\", \"content\": [{\"type\": \"text\", \"text\"}], "
             "\"is_error\"}]}.", R_CALL),
    ),
    forbidden=("mcp_sim.scenarios.complete_call", "mcp_sim.roles"),
)
