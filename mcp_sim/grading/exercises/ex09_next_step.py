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
import functools
import json
from typing import Any

from hypothesis import strategies as st

from mcp_sim.grading.differential import canonical, differential
from mcp_sim.grading.model import Check, CheckContext, CheckFailed, Exercise, Hint
from mcp_sim.roles.host_tools import MESSAGE_CONVERTERS, TOOL_CONVERTERS, HostTool, result_text
from mcp_sim.roles.model import ChatMessage, ToolCall
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
    return _played(outcome or rng.choice(("answered", "tool-fails")), revision or rng.choice(_REVISIONS),
                   rng.randint(0, 999), rng.randint(3, 999), rng.choice(_TITLES), rng.choice(_SERVERS),
                   api or rng.choice(("openai", "anthropic")))


@functools.lru_cache(maxsize=256)
def _played(outcome: str, revision: str, seed: int, number: int, title: str, server: str, api: str) -> CallRun:
    """One complete call, kept for a while (a run is a pure function of its arguments and is only read):
    grading the same seed again replays it from memory."""
    return run_complete_call(outcome, revision=revision, seed=seed, number=number, title=title, server=server,
                             model_api=api)  # type: ignore[arg-type]


def _offers(run: CallRun) -> list[dict[str, Any]]:
    return [e.message or {} for e in run.events if e.kind == "app" and (e.sender, e.receiver) == ("host", "model")]


def _listed(run: CallRun) -> list[dict[str, Any]]:
    return next(e.message["result"]["tools"] for e in run.events
                if e.kind == "response" and e.method == "tools/list" and e.message)


def _proposal(run: CallRun) -> dict[str, Any]:
    data = next(e.message for e in run.events if e.kind == "app" and e.sender == "model" and e.message)
    return dict(data["tool_calls"][0])


def _with_call_id(rng: Any, case: tuple[str, dict[str, Any], Any]) -> tuple[str, dict[str, Any], Any]:
    """The scripted model always numbers its first call ``call_1``: give the call a seeded id of either
    API's style, in the situation and in the answer alike, so an id copied from the first call of a
    script fails."""
    new = json.dumps(rng.choice(("call_", "toolu_0", "fc_")) + f"{rng.randrange(16 ** 6):06x}")
    step, situation, want = case
    return step, json.loads(json.dumps(situation).replace('"call_1"', new)), \
        json.loads(json.dumps(want).replace('"call_1"', new))


def build_case(rng: Any, kind: str) -> tuple[str, dict[str, Any], Any]:
    """(step, situation, the simulator's answer) for ``kind``."""
    return _with_call_id(rng, _build_case(rng, kind))


def _build_case(rng: Any, kind: str) -> tuple[str, dict[str, Any], Any]:
    step, _, variant = kind.partition(" ")
    if step == "offer":
        hides = variant.startswith("with a hidden tool")
        run = _run(rng, api=variant.rpartition("(")[2].strip(")"), outcome="policy-hides" if hides else "answered")
        offer = _offers(run)[0]
        server = run.events[0].receiver.partition("/")[2]
        visible = {t["function"]["name"] if "function" in t else t["name"] for t in offer["tools"]}
        hidden = [f"{server}__{t['name']}" for t in _listed(run) if f"{server}__{t['name']}" not in visible]
        if variant.startswith("without descriptions"):  # a title only, then neither: what the model reads
            tools = copy.deepcopy(_listed(run))
            for n, tool in enumerate(tools):
                tool.pop("description", None)
                if n % 2 == 0:
                    tool["title"] = tool["name"].replace("_", " ").title()
            specs = [HostTool(server, t, f"{server}__{t['name']}").spec() for t in tools
                     if f"{server}__{t['name']}" not in hidden]
            return step, {"api": offer["api"], "server": server, "tools": tools, "hidden": hidden}, \
                TOOL_CONVERTERS[offer["api"]](specs)
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
        owners = {f"{server}__{t['name']}": {"server": server, "name": t["name"]} for t in _listed(run)}
        return step, {"revision": revision, "tool_call": _proposal(run), "tools": owners, "next_id": request["id"],
                      "client": client}, request
    if step == "reply":
        failing = "isError" in variant
        api = "openai" if "openai" in variant else "anthropic"
        run = _run(rng, outcome="tool-fails" if failing else "answered", api=api)
        response = next(e.message for e in run.events if e.kind == "response" and e.method == "tools/call")
        assert response is not None
        if "two text blocks" in variant:  # the text the model reads is every text block, joined
            result = {**response["result"], "content": [*response["result"]["content"],
                                                        {"type": "text", "text": "Labels: bug"}]}
            reply = ChatMessage("tool", result_text(result), tool_call_id=_proposal(run)["id"])
            return step, {"api": api, "call_id": _proposal(run)["id"], "result": result}, \
                MESSAGE_CONVERTERS[api]([reply])[-1]
        return step, {"api": api, "call_id": _proposal(run)["id"], "result": response["result"]}, \
            _offers(run)[1]["messages"][-1]
    raise KeyError(kind)


def _normal(value: Any) -> Any:
    """OpenAI's tool-call arguments are a JSON string: compare what it says, not its spacing (an object
    where the string belongs stays an object, and does not compare equal)."""
    if isinstance(value, dict):
        out = {k: _normal(v) for k, v in value.items()}
        for field in ("content", "text"):  # a JSON text (structuredContent) is read as JSON, not as spelling
            text = out.get(field)
            if isinstance(text, str) and (parsed := canonical(text)) is not text:
                out[field] = ("json text", parsed)
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
    _judge(ctx, kind, *build_case(ctx.rng, kind))


def _judge(ctx: CheckContext, kind: str, step: str, situation: dict[str, Any], want: Any) -> None:
    got = ctx.function("next_step")(step, copy.deepcopy(situation))
    if _normal(got) != _normal(want):
        shown = json.dumps(situation)
        raise CheckFailed(f"Step {step!r} ({kind}), situation {shown[:1200]}{'…' if len(shown) > 1200 else ''}\n"
                          f"next_step() returned {json.dumps(got)[:800]}: not what the simulator's Host sends here.",
                          _rule(step, situation), case=f"step {step!r}, situation {shown[:600]}",
                          expected=json.dumps(want)[:800])


def _rule(step: str, situation: dict[str, Any]) -> str:
    """A reply to a failed tool breaks host.tool-errors-to-model; any other reply, the model API's format."""
    if step == "reply" and not (situation.get("result") or {}).get("isError"):
        return R_OFFER
    return RULES[step]


# --- generated: any tools, proposal or result, against the Host's own converters ------------------------

_TEXT = st.sampled_from(("Created issue #7.", "", "line one\nline two", "Ünïcode ✓", "no such issue"))
_BLOCK = st.one_of(st.builds(lambda t: {"type": "text", "text": t}, _TEXT),
                   st.just({"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}))
_ARGS = st.dictionaries(st.sampled_from(("title", "number", "labels", "body")),
                        st.one_of(st.integers(-3, 999), _TEXT, st.lists(_TEXT, max_size=2), st.booleans()), max_size=3)
_ID = st.builds(lambda p, n: f"{p}{n:06x}", st.sampled_from(("call_", "toolu_0", "fc_")), st.integers(0, 16 ** 6 - 1))


@st.composite
def _generated(draw: Any) -> tuple[str, dict[str, Any], Any]:
    """A step with a situation drawn over every axis the README names, and the Host's own answer."""
    api = draw(st.sampled_from(("openai", "anthropic")))
    step = draw(st.sampled_from(("offer", "propose", "reply")))
    if step == "offer":
        server = draw(st.sampled_from(_SERVERS))
        names = draw(st.lists(st.sampled_from(("create_issue", "search_issues", "delete_issue", "close_issue")),
                              unique=True, max_size=4))
        tools = []
        for name in names:
            tool: dict[str, Any] = {"name": name}
            describe = draw(st.sampled_from(("description", "title only", "neither", "empty description")))
            if describe == "description":
                tool["description"] = f"{name.replace('_', ' ').capitalize()}."
            elif describe == "title only":
                tool["title"] = name.replace("_", " ").title()
            elif describe == "empty description":
                tool.update(description="", title=name.title())
            if draw(st.booleans()):
                tool["inputSchema"] = {"type": "object", "properties": {"number": {"type": "integer"}}}
            else:
                tool["inputSchema"] = {"type": "object"}
            tools.append(tool)
        hidden = [f"{server}__{n}" for n in names if draw(st.booleans())]
        specs = [HostTool(server, t, f"{server}__{t['name']}").spec() for t in tools
                 if f"{server}__{t['name']}" not in hidden]
        return step, {"api": api, "server": server, "tools": tools, "hidden": hidden}, TOOL_CONVERTERS[api](specs)
    call_id = draw(_ID)
    if step == "propose":
        call = {"id": call_id, "name": f"{draw(st.sampled_from(_SERVERS))}__create_issue", "arguments": draw(_ARGS)}
        message = ChatMessage("assistant", tool_calls=(ToolCall(call["id"], call["name"], call["arguments"]),))
        return step, {"api": api, "tool_call": call}, MESSAGE_CONVERTERS[api]([message])[-1]
    result: dict[str, Any] = {"content": draw(st.lists(_BLOCK, max_size=3))}
    if draw(st.booleans()):
        result["structuredContent"] = {"number": draw(st.integers(1, 99)), "state": "open"}
    flag = draw(st.sampled_from(("absent", True, False)))
    if flag != "absent":
        result["isError"] = flag
    reply = ChatMessage("tool", result_text(result), tool_call_id=call_id, is_error=bool(result.get("isError")))
    return step, {"api": api, "call_id": call_id, "result": result}, MESSAGE_CONVERTERS[api]([reply])[-1]


def check_generated(ctx: CheckContext, kind: str) -> None:
    differential(ctx, _generated(), learner=lambda case: _judge(ctx, "generated", *case), oracle=lambda case: None,
                 compare=lambda *_: None, describe=lambda case: f"step {case[0]!r}, situation {json.dumps(case[1])}",
                 raises_rule=R_OFFER, examples=15)


EXERCISE = Exercise(
    id="ex09_next_step",
    title="Play the Host: the next step of a complete call",
    chapter="09",
    summary="Produce what the Host sends at each step of a complete call — the tool offer and the proposed call "
            "in the model API's format, the JSON-RPC tools/call in either era, the result handed back to the model.",
    rules=(R_OFFER, R_PROPOSE, R_CALL, R_REPLY),
    functions=("next_step",),
    checks=(
        Check("Offer: the visible tools in the model API's format", R_OFFER, _ask,
              ("offer (openai)", "offer (anthropic)", "offer with a hidden tool (openai)",
               "offer with a hidden tool (anthropic)", "offer without descriptions (openai)",
               "offer without descriptions (anthropic)"),
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
              ("reply (openai)", "reply (anthropic)", "reply with isError (openai)", "reply with isError (anthropic)",
               "reply with two text blocks (openai)", "reply with two text blocks (anthropic)"),
              hint="Tie the reply to the call's id, carry the result's text, and in Anthropic's format say "
                   "whether it is an error."),
        Check("Any tools, proposal or result: the Host's own translation", R_OFFER, check_generated, ("generated",),
              hint="Work the smallest case by hand: which tools are visible, what each API calls the fields, which "
                   "text the model reads."),
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
