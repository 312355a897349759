"""Reference solution for ex09_next_step. Try the exercise before reading this."""

from __future__ import annotations

import json
from typing import Any

MODERN_META = "io.modelcontextprotocol/"


def _offer(situation: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for tool in situation["tools"]:
        name = f"{situation['server']}__{tool['name']}"
        if name in situation["hidden"]:
            continue  # the policy hid it: the model is never offered it
        description = tool.get("description") or tool.get("title") or tool["name"]
        schema = tool.get("inputSchema") or {"type": "object", "properties": {}}
        if situation["api"] == "openai":
            out.append({"type": "function", "function": {"name": name, "description": description,
                                                          "parameters": schema}})
        else:
            out.append({"name": name, "description": description, "input_schema": schema})
    return out


def _propose(situation: dict[str, Any]) -> dict[str, Any]:
    call = situation["tool_call"]
    if situation["api"] == "openai":
        return {"role": "assistant", "content": None, "tool_calls": [
            {"id": call["id"], "type": "function",
             "function": {"name": call["name"], "arguments": json.dumps(call["arguments"], sort_keys=True)}}]}
    return {"role": "assistant", "content": [{"type": "tool_use", "id": call["id"], "name": call["name"],
                                              "input": call["arguments"]}]}


def _call(situation: dict[str, Any]) -> dict[str, Any]:
    call = situation["tool_call"]
    tool = situation["tools"][call["name"]]  # qualified name -> the server's own name for it
    params: dict[str, Any] = {"name": tool["name"], "arguments": call["arguments"]}
    if situation["revision"] >= "2026-07-28":
        client = situation["client"]
        params["_meta"] = {MODERN_META + "protocolVersion": client["protocolVersion"],
                           MODERN_META + "clientCapabilities": client["capabilities"],
                           MODERN_META + "clientInfo": client["clientInfo"]}
    return {"jsonrpc": "2.0", "id": situation["next_id"], "method": "tools/call", "params": params}


def _reply(situation: dict[str, Any]) -> dict[str, Any]:
    result = situation["result"]
    texts = [c["text"] for c in result.get("content", []) if c.get("type") == "text"]
    if texts:
        text = "\n".join(texts)
    elif "structuredContent" in result:
        text = json.dumps(result["structuredContent"], sort_keys=True)
    else:
        text = ""  # nothing the model can read (an image only, or no content at all)
    if situation["api"] == "openai":
        return {"role": "tool", "tool_call_id": situation["call_id"], "content": text}
    return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": situation["call_id"],
                                         "content": [{"type": "text", "text": text}],
                                         "is_error": bool(result.get("isError"))}]}


def next_step(step: str, situation: dict[str, Any]) -> Any:
    """What the Host sends at ``step``: the offer, the proposal, the tools/call or the reply."""
    return {"offer": _offer, "propose": _propose, "call": _call, "reply": _reply}[step](situation)
