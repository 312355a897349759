"""Item 5: asking the client for input — legacy server→client requests and 2026 MRTR."""

from __future__ import annotations

import base64
import json

import pytest
from test_server_support import MODERN, RawClient, assert_valid, meta, run_with

from mcp_sim.capabilities.context import Context
from mcp_sim.capabilities.mrtr import PlainStateCodec, SealedStateCodec, elicit, sample
from mcp_sim.roles.server import Server
from mcp_sim.security.identity import AuthInfo

NAME_FORM = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
OK_FORM = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
ALL_CAPS = {"elicitation": {}, "sampling": {}, "roots": {}}


def build(codec: object = None) -> Server:
    server = Server("asker", state_codec=codec)  # type: ignore[arg-type]

    @server.tool()
    async def greet(ctx: Context) -> str:
        """Ask the user's name."""
        answer = await ctx.elicit("What is your name?", NAME_FORM)
        if answer["action"] != "accept":
            return "no name given"
        return f"Hello {answer['content']['name']}"

    @server.tool()
    async def summarize(text: str, ctx: Context) -> str:
        """Ask the client's model."""
        reply = await ctx.sample([f"Summarize: {text}"], 50)
        return reply["content"]["text"]

    @server.tool()
    async def where(ctx: Context) -> str:
        """List the roots."""
        return ", ".join(r["uri"] for r in await ctx.list_roots())

    @server.tool()
    async def both(ctx: Context) -> str:
        """Ask two things at once."""
        answers = await ctx.ask({"who": elicit("Name?", NAME_FORM), "idea": sample(["An idea"], 20)})
        return f"{answers['who']['content']['name']}: {answers['idea']['content']['text']}"

    @server.tool()
    async def rounds(ctx: Context) -> str:
        """Two questions, one after the other (two rounds in 2026)."""
        first = await ctx.elicit("Name?", NAME_FORM, key="name")
        second = await ctx.elicit(f"Sure, {first['content']['name']}?", OK_FORM, key="confirm")
        return f"{first['content']['name']} ok={second['content']['ok']}"

    @server.prompt()
    async def personal(ctx: Context) -> str:
        """A prompt that asks for a name first."""
        answer = await ctx.elicit("Name?", NAME_FORM)
        return f"Write a poem for {answer['content']['name']}"

    return server


def answer_elicit(msg: dict) -> dict:
    return {"action": "accept", "content": {"name": "Ada", "ok": True}}


def answer_sample(msg: dict) -> dict:
    return {"role": "assistant", "content": {"type": "text", "text": "short"}, "model": "scripted"}


def answer_roots(msg: dict) -> dict:
    return {"roots": [{"uri": "file:///work", "name": "work"}]}


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
def test_legacy_sends_requests_related_to_the_call(version: str) -> None:
    async def body(c: RawClient) -> dict:
        c.auto_answer = {"elicitation/create": answer_elicit, "sampling/createMessage": answer_sample,
                         "roots/list": answer_roots}
        await c.initialize(version, ALL_CAPS)
        out = {name: await c.request("tools/call", {"name": name, "arguments": args}) for name, args in
               (("greet", {}), ("summarize", {"text": "long"}), ("where", {}), ("both", {}), ("rounds", {}))}
        out["prompt"] = await c.request("prompts/get", {"name": "personal"})
        out["sent"] = [m for m in c.received if "method" in m and "id" in m]
        return out

    r = run_with(build, body, revision=version)
    assert r["greet"]["result"]["content"][0]["text"] == "Hello Ada"
    assert r["summarize"]["result"]["content"][0]["text"] == "short"
    assert r["where"]["result"]["content"][0]["text"] == "file:///work"
    assert r["both"]["result"]["content"][0]["text"] == "Ada: short"
    assert r["rounds"]["result"]["content"][0]["text"] == "Ada ok=True"
    assert r["prompt"]["result"]["messages"][0]["content"]["text"] == "Write a poem for Ada"
    first = r["sent"][0]
    form = {"message": "What is your name?", "requestedSchema": NAME_FORM}
    if version >= "2025-11-25":
        form = {"mode": "form", **form}
    assert first == {"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": form}
    assert [m["method"] for m in r["sent"]] == ["elicitation/create", "sampling/createMessage", "roots/list",
                                                "elicitation/create", "sampling/createMessage",
                                                "elicitation/create", "elicitation/create", "elicitation/create"]
    assert len({m["id"] for m in r["sent"]}) == len(r["sent"])


def test_legacy_without_the_capability_fails_the_tool_readably() -> None:
    async def body(c: RawClient) -> dict:
        await c.initialize("2025-11-25", {"sampling": {}})
        return await c.request("tools/call", {"name": "greet", "arguments": {}})

    result = run_with(build, body)["result"]
    assert result["isError"] is True
    assert "did not declare the 'elicitation.form' capability" in result["content"][0]["text"]


def test_modern_input_required_then_retry() -> None:
    async def body(c: RawClient) -> dict:
        caps = {"elicitation": {}}
        first = await c.request("tools/call", {"name": "greet", "arguments": {}, "_meta": meta(caps)})
        state = first["result"]["requestState"]
        second = await c.request("tools/call", {
            "name": "greet", "arguments": {}, "_meta": meta(caps), "requestState": state,
            "inputResponses": {"elicitation-1": {"action": "accept", "content": {"name": "Ada"}},
                               "unexpected": {"action": "decline"}}})
        return {"first": first, "second": second}

    r = run_with(build, body, revision=MODERN)
    first = r["first"]["result"]
    assert first["resultType"] == "input_required"
    assert first["inputRequests"] == {"elicitation-1": {"method": "elicitation/create", "params": {
        "mode": "form", "message": "What is your name?", "requestedSchema": NAME_FORM}}}
    assert json.loads(base64.urlsafe_b64decode(first["requestState"] + "==")) == {
        "answers": {}, "asked": ["elicitation-1"]}
    assert_valid(first, MODERN, "InputRequiredResult")
    assert r["second"]["result"]["content"] == [{"type": "text", "text": "Hello Ada"}]
    assert r["second"]["result"]["resultType"] == "complete"


def test_modern_two_rounds_multi_ask_and_reask() -> None:
    async def body(c: RawClient) -> dict:
        caps = {"elicitation": {}, "sampling": {}}
        out = {}
        r1 = await c.request("tools/call", {"name": "rounds", "_meta": meta(caps)})
        r2 = await c.request("tools/call", {"name": "rounds", "_meta": meta(caps),
                                            "requestState": r1["result"]["requestState"],
                                            "inputResponses": {"name": {"action": "accept",
                                                                        "content": {"name": "Ada"}}}})
        r3 = await c.request("tools/call", {"name": "rounds", "_meta": meta(caps),
                                            "requestState": r2["result"]["requestState"],
                                            "inputResponses": {"confirm": {"action": "accept",
                                                                           "content": {"ok": True}}}})
        out["rounds"] = [r1, r2, r3]
        b1 = await c.request("tools/call", {"name": "both", "_meta": meta(caps)})
        b2 = await c.request("tools/call", {"name": "both", "_meta": meta(caps),
                                            "requestState": b1["result"]["requestState"],
                                            "inputResponses": {"who": {"action": "accept",
                                                                       "content": {"name": "Bo"}}}})
        b3 = await c.request("tools/call", {"name": "both", "_meta": meta(caps),
                                            "requestState": b2["result"]["requestState"],
                                            "inputResponses": {"idea": answer_sample({})}})
        out["both"] = [b1, b2, b3]
        return out

    r = run_with(build, body, revision=MODERN)
    r1, r2, r3 = (x["result"] for x in r["rounds"])
    assert list(r1["inputRequests"]) == ["name"] and list(r2["inputRequests"]) == ["confirm"]
    assert r2["inputRequests"]["confirm"]["params"]["message"] == "Sure, Ada?"
    assert r3["content"][0]["text"] == "Ada ok=True"
    b1, b2, b3 = (x["result"] for x in r["both"])
    assert sorted(b1["inputRequests"]) == ["idea", "who"]
    assert b1["inputRequests"]["idea"] == {"method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "An idea"}}], "maxTokens": 20}}
    assert list(b2["inputRequests"]) == ["idea"]  # the missing one is asked again
    assert b3["content"][0]["text"] == "Bo: short"
    for res in (r1, r2, b1, b2):
        assert_valid(res, MODERN, "InputRequiredResult")


def test_modern_missing_capability_is_32021_and_only_for_mrtr_methods() -> None:
    async def body(c: RawClient) -> tuple:
        tool = await c.request("tools/call", {"name": "greet", "_meta": meta({"sampling": {}})})
        prompt = await c.request("prompts/get", {"name": "personal", "_meta": meta({"elicitation": {}})})
        return tool, prompt

    tool, prompt = run_with(build, body, revision=MODERN)
    assert tool["error"]["code"] == -32021
    assert tool["error"]["data"] == {"requiredCapabilities": {"elicitation": {"form": {}}}}
    assert prompt["result"]["resultType"] == "input_required"


def test_plain_state_can_be_forged_sealed_state_cannot() -> None:
    alice = AuthInfo("alice")

    def forged_retry(state: str) -> str:
        data = json.loads(base64.urlsafe_b64decode(state + "=="))
        data["answers"]["name"] = {"action": "accept", "content": {"name": "Mallory"}}
        data["asked"] = ["confirm"]
        return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")

    async def attack(c: RawClient) -> dict:
        caps = {"elicitation": {}}
        r1 = await c.request("tools/call", {"name": "rounds", "_meta": meta(caps)})
        token = r1["result"]["requestState"]
        forged = forged_retry(token) if "." not in token else token[:-3] + "abc"
        return await c.request("tools/call", {"name": "rounds", "_meta": meta(caps), "requestState": forged,
                                              "inputResponses": {"confirm": {"action": "accept",
                                                                             "content": {"ok": True}}}})

    plain = run_with(lambda: build(PlainStateCodec()), attack, auth=alice)
    assert plain["result"]["content"][0]["text"] == "Mallory ok=True"  # the client rewrote history
    sealed = run_with(lambda: build(SealedStateCodec(b"k" * 32)), attack, auth=alice)
    assert sealed["error"]["code"] == -32602 and "seal" in sealed["error"]["message"]


def test_sealed_state_is_bound_to_caller_request_and_expiry() -> None:
    server = build(SealedStateCodec(b"secret", ttl_seconds=30))

    async def flow(c: RawClient) -> dict:
        caps = {"elicitation": {}}
        r1 = await c.request("tools/call", {"name": "greet", "_meta": meta(caps)})
        token = r1["result"]["requestState"]
        answers = {"elicitation-1": {"action": "accept", "content": {"name": "Ada"}}}
        other_tool = await c.request("tools/call", {"name": "rounds", "_meta": meta(caps), "requestState": token,
                                                    "inputResponses": answers})
        ok = await c.request("tools/call", {"name": "greet", "_meta": meta(caps), "requestState": token,
                                            "inputResponses": answers})
        from anyio import sleep
        await sleep(31)
        late = await c.request("tools/call", {"name": "greet", "_meta": meta(caps), "requestState": token,
                                              "inputResponses": answers})
        return {"token": token, "other_tool": other_tool, "ok": ok, "late": late}

    r = run_with(server, flow, auth=AuthInfo("alice"))
    assert "different request" in r["other_tool"]["error"]["message"]
    assert r["ok"]["result"]["content"][0]["text"] == "Hello Ada"
    assert "expired" in r["late"]["error"]["message"]

    async def replay(c: RawClient) -> dict:
        return await c.request("tools/call", {"name": "greet", "_meta": meta({"elicitation": {}}),
                                              "requestState": r["token"], "inputResponses": {}})

    stolen = run_with(server, replay, auth=AuthInfo("mallory"))
    assert "another caller" in stolen["error"]["message"]
