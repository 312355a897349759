"""The check zoo: one small dual-era MCP server over stdio, in plain Python (no mcp_sim inside).

Run as ``python server.py`` it is the *correct twin*: ``mcp-sim check`` finds nothing wrong with it in
either era. Run as ``python server.py --defect NAME`` it has exactly one defect out of ``DEFECTS``,
a mistake real servers make; ``tests/test_check_zoo.py`` checks that each is reported under the
right rule, category and strength, and that the exit status follows.

It speaks both eras the way a dual-era stdio server does: a connection whose first request is
``initialize`` is a legacy session (2025-11-25); otherwise every request must carry its protocol
version and the client's capabilities in ``params._meta`` (2026-07-28).
"""

from __future__ import annotations

import json
import os
import sys
import time

DEFECTS = {
    "stdout-print": "prints a debug line to stdout",
    "not-jsonrpc": "writes a JSON object that is no JSON-RPC message",
    "bad-utf8": "writes bytes that are not UTF-8 in a tool result",
    "batch-answer": "answers a batch with a batch",
    "wrong-id": "answers prompts/list with the wrong id",
    "answers-notification": "answers notifications with a result",
    "double-answer": "answers resources/read twice",
    "silent-unknown-method": "never answers an unknown method",
    "crash-on-bad-json": "exits on a line that is not JSON",
    "crash-on-cancel": "exits on notifications/cancelled",
    "echo-any-version": "accepts any version in initialize by echoing it",
    "no-32022": "serves a 2026-07-28 request naming an unsupported version",
    "meta-not-required": "serves a 2026-07-28 request without _meta",
    "undeclared-prompts": "lists prompts without declaring the prompts capability",
    "declared-not-served": "declares resources but refuses resources/list",
    "not-found-32002-modern": "answers a missing resource with -32002 in 2026-07-28 too",
    "unknown-method-32603": "answers an unknown method with -32603",
    "no-validation": "runs a tool without its required arguments",
    "tool-without-schema": "lists a tool without its inputSchema",
    "modern-request": "sends a ping request to the client over 2026-07-28 stdio",
    "ping-error": "refuses ping with -32601",
    "no-exit-on-eof": "keeps running after stdin closes",
    "silent-malformed": "drops unreadable lines without an error",
    "unknown-tool-result": "answers an unknown tool with an isError result",
    "cursor-ignored": "ignores a cursor it never issued",
    "prompt-error-code": "answers a bad prompts/get with -32603",
    "chunk-reader": "takes each chunk read from stdin for a whole message",
    "undeclared-elicitation": "asks the client for elicitation it never declared",
    "subscribe-refused": "declares resources.subscribe but refuses resources/subscribe",
}

DEFECT = sys.argv[sys.argv.index("--defect") + 1] if "--defect" in sys.argv else ""
EXTRA_TOOLS = int(sys.argv[sys.argv.index("--tools") + 1]) if "--tools" in sys.argv else 0
"""``--tools N`` adds N more echo tools (for ``benchmarks/check.py``: how the check grows with tools)."""
MODERN = "2026-07-28"
LEGACY = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPS_KEY = "io.modelcontextprotocol/clientCapabilities"
INFO = {"name": "check-zoo", "version": "1.0.0"}
TOOLS = [
    {"name": "add", "description": "Add two integers.",
     "inputSchema": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                     "required": ["a", "b"]}},
    {"name": "echo", "description": "Say the text back.",
     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}},
]
TOOLS += [{"name": f"echo_{k}", "description": "Say the text back.", "inputSchema": TOOLS[1]["inputSchema"]}
          for k in range(EXTRA_TOOLS)]
PAGE = (len(TOOLS) + 1) // 2
"""Tools per page: the list always takes two pages, so pagination is exercised whatever the count."""
README = {"uri": "zoo://readme", "name": "readme", "mimeType": "text/plain"}
PROMPT = {"name": "greet", "description": "Greet someone.", "arguments": [{"name": "who", "required": True}]}
out = sys.stdout.buffer
legacy_session = False


def write_bytes(data: bytes) -> None:
    out.write(data + b"\n")
    out.flush()


def write(obj: object) -> None:
    write_bytes(json.dumps(obj, separators=(",", ":")).encode())


def answer(rid: object, result: dict, modern: bool, *, listing: bool = False) -> None:
    if modern:
        result = {**result, "resultType": "complete"}
        if listing:
            result = {**result, "cacheScope": "private", "ttlMs": 0}
    write({"jsonrpc": "2.0", "id": rid, "result": result})


def fail(rid: object, code: int, message: str, data: object = None) -> None:
    error: dict = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    # The MCP schema leaves the id out of an error to a request whose id could not be read.
    write({"jsonrpc": "2.0", **({"id": rid} if rid is not None else {}), "error": error})


def capabilities() -> dict:
    caps: dict = {"tools": {}, "resources": {"subscribe": True}, "prompts": {}}
    if DEFECT == "undeclared-prompts":
        del caps["prompts"]
    return caps


def handle(message: dict) -> None:
    global legacy_session
    method, rid, params = message.get("method"), message.get("id"), message.get("params") or {}
    if "id" not in message:  # a notification: never answered
        if DEFECT == "crash-on-cancel" and method == "notifications/cancelled":
            sys.exit(3)
        if DEFECT == "answers-notification":
            write({"jsonrpc": "2.0", "id": None, "result": {}})
        return
    if method == "initialize":
        legacy_session = True
        offered = params.get("protocolVersion")
        version = offered if offered in LEGACY or DEFECT == "echo-any-version" else LEGACY[0]
        answer(rid, {"protocolVersion": version, "capabilities": capabilities(), "serverInfo": INFO}, False)
        return
    modern = not legacy_session
    if modern:
        meta = params.get("_meta")
        if not isinstance(meta, dict) or VERSION_KEY not in meta or CAPS_KEY not in meta:
            if DEFECT != "meta-not-required":
                fail(rid, -32602, "params._meta must carry the protocol version and client capabilities")
                return
        elif meta[VERSION_KEY] != MODERN and DEFECT != "no-32022":
            fail(rid, -32022, "Unsupported protocol version",
                 {"supported": [MODERN], "requested": meta[VERSION_KEY]})
            return
    serve(method, rid, params, modern)


def serve(method: object, rid: object, params: dict, modern: bool) -> None:
    if method == "server/discover" and modern:
        answer(rid, {"supportedVersions": [MODERN], "capabilities": capabilities(), "cacheScope": "private",
                     "ttlMs": 0, "_meta": {"io.modelcontextprotocol/serverInfo": INFO}}, True)
    elif method == "ping" and not modern:
        fail(rid, -32601, "Method not found") if DEFECT == "ping-error" else answer(rid, {}, False)
    elif method == "tools/list":
        cursor = params.get("cursor")
        if cursor not in (None, "page:1") and DEFECT != "cursor-ignored":
            fail(rid, -32602, "Invalid cursor")
            return
        page = 1 if cursor == "page:1" else 0
        tools = [dict(t) for t in TOOLS[page * PAGE:(page + 1) * PAGE]]
        if DEFECT == "tool-without-schema":
            tools[0].pop("inputSchema")
        result: dict = {"tools": tools}
        if page == 0:
            result["nextCursor"] = "page:1"
        answer(rid, result, modern, listing=True)
    elif method == "tools/call":
        call_tool(rid, params, modern)
    elif method == "resources/list":
        if DEFECT == "declared-not-served":
            fail(rid, -32601, "Method not found")
        else:
            answer(rid, {"resources": [README]}, modern, listing=True)
    elif method in ("resources/subscribe", "resources/unsubscribe") and not modern:
        if DEFECT == "subscribe-refused":
            fail(rid, -32601, "Method not found")
        elif params.get("uri") != README["uri"]:
            fail(rid, -32002, "Resource not found", {"uri": params.get("uri")})
        else:
            answer(rid, {}, False)
    elif method == "subscriptions/listen" and modern:  # 2026-07-28's subscribe: acknowledged, then quiet
        uris = [u for u in (params.get("notifications") or {}).get("resourceSubscriptions") or []
                if u == README["uri"]]
        write({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
               "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": rid},
                          "notifications": {"resourceSubscriptions": uris} if uris else {}}})
    elif method == "resources/templates/list":
        answer(rid, {"resourceTemplates": []}, modern, listing=True)
    elif method == "resources/read":
        if params.get("uri") != README["uri"]:
            code = -32602 if modern and DEFECT != "not-found-32002-modern" else -32002
            fail(rid, code, "Resource not found", {"uri": params.get("uri")})
            return
        for _ in range(2 if DEFECT == "double-answer" else 1):
            answer(rid, {"contents": [{"uri": README["uri"], "mimeType": "text/plain", "text": "hello"}]},
                   modern, listing=True)
    elif method == "prompts/list":
        write_id = 1000 + rid if DEFECT == "wrong-id" and isinstance(rid, int) else rid
        answer(write_id, {"prompts": [PROMPT]}, modern, listing=True)
    elif method == "prompts/get":
        who = (params.get("arguments") or {}).get("who")
        if params.get("name") != PROMPT["name"] or not isinstance(who, str):
            fail(rid, -32603 if DEFECT == "prompt-error-code" else -32602, "Unknown prompt or missing argument")
            return
        answer(rid, {"messages": [{"role": "user", "content": {"type": "text", "text": f"Hello {who}"}}]}, modern)
    elif DEFECT == "silent-unknown-method":
        return
    else:
        fail(rid, -32603 if DEFECT == "unknown-method-32603" else -32601, "Method not found")


def call_tool(rid: object, params: dict, modern: bool) -> None:
    name, args = params.get("name"), params.get("arguments") or {}
    tool = next((t for t in TOOLS if t["name"] == name), None)
    if tool is None:
        if DEFECT == "unknown-tool-result":
            answer(rid, {"content": [{"type": "text", "text": f"Unknown tool {name}"}], "isError": True}, modern)
        else:
            fail(rid, -32602, f"Unknown tool: {name}")
        return
    if DEFECT == "undeclared-elicitation" and name == "add":
        ask = {"method": "elicitation/create",
               "params": {"mode": "form", "message": "Really add?", "requestedSchema": {"type": "object"}}}
        if modern and "inputResponses" not in params:
            write({"jsonrpc": "2.0", "id": rid, "result": {"resultType": "input_required",
                                                           "inputRequests": {"confirm": ask}, "requestState": "zoo"}})
            return
        if not modern:
            write({"jsonrpc": "2.0", "id": "zoo-ask", **ask})
    if DEFECT == "modern-request" and modern:
        write({"jsonrpc": "2.0", "id": "zoo-1", "method": "ping"})
    missing = [k for k in tool["inputSchema"]["required"] if k not in args]
    if missing and DEFECT != "no-validation":
        answer(rid, {"content": [{"type": "text", "text": f"missing {', '.join(missing)}"}], "isError": True}, modern)
        return
    text = str(args.get("a", 0) + args.get("b", 0)) if name == "add" else str(args.get("text", ""))
    if DEFECT == "bad-utf8":
        body = json.dumps({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "@"}]}})
        write_bytes(body.encode().replace(b"@", b"\xff\xfe"))
        return
    answer(rid, {"content": [{"type": "text", "text": text}], "isError": False}, modern)


def read_line(line: bytes) -> None:
    """One line from stdin: parse it, refuse it, or handle the message."""
    line = line.rstrip(b"\r\n")
    if not line.strip():
        return
    try:
        message = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        if DEFECT == "crash-on-bad-json":
            sys.exit(2)
        if DEFECT != "silent-malformed":
            fail(None, -32700, "Parse error")
        return
    if isinstance(message, list):
        if DEFECT == "batch-answer":
            write([{"jsonrpc": "2.0", "error": {"code": -32600, "message": "no batches"}}])
        elif DEFECT != "silent-malformed":
            fail(None, -32600, "Invalid Request: batches are not supported")
        return
    if isinstance(message, dict) and "method" not in message and ("result" in message or "error" in message):
        return  # the client's answer to a request of ours
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or not isinstance(message.get("method"), str):
        rid = message.get("id") if isinstance(message, dict) and isinstance(message.get("id"), (str, int)) else None
        if DEFECT != "silent-malformed":
            fail(rid, -32600, "Invalid Request")
        return
    handle(message)


def main() -> None:
    if DEFECT == "stdout-print":
        print("zoo server starting")  # the classic stdio bug: a debug print on the protocol stream
        sys.stdout.flush()
    if DEFECT == "not-jsonrpc":
        write({"hello": "world"})
    if DEFECT == "chunk-reader":  # the bug: a read() returns what is there, not one line
        while chunk := os.read(0, 1 << 16):
            for piece in chunk.split(b"\n"):
                read_line(piece)
    else:
        for line in sys.stdin.buffer:
            read_line(line)
    if DEFECT == "no-exit-on-eof":
        while True:
            time.sleep(1)


if __name__ == "__main__":
    main()
