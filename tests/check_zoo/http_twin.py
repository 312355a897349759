"""The HTTP check zoo's correct twin: a small dual-era Streamable HTTP MCP server in plain Python
(the standard library's ``http.server``, no mcp_sim inside).

``python http_twin.py --port N`` serves ``http://127.0.0.1:N/mcp``; ``mcp-sim check --url`` finds
nothing wrong with it in either era, under the whole HTTP nemesis. Each ``http_<defect>.py`` next to
it runs the same server with one defect (``DEFECTS``); ``tests/test_check_http_nemesis.py`` checks
that each is reported under the right rule, category and strength.

Legacy: a POSTed ``initialize`` opens a session named by ``Mcp-Session-Id``; ``DELETE`` ends it.
2026-07-28: every POST stands alone, its ``MCP-Protocol-Version`` and ``Mcp-Method`` headers held
against its body. Both: a foreign ``Origin`` gets 403; a body that is not JSON, not UTF-8 or no valid
JSON-RPC request gets 400 with the JSON-RPC error; bodies may come chunked. Two tools: ``slow``
(answers after 0.6 s, dropping the answer if the client has hung up) and ``echo``.
"""

from __future__ import annotations

import json
import os
import select
import socket
import sys
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DEFECTS = {
    "crash-on-bad-json": "exits on a POST body that is not JSON",
    "500-on-bad-json": "answers a body that is not JSON with 500 Internal Server Error",
    "batch-answer": "answers a batch (a JSON array) with a batch of responses in 2025-11-25",
    "dies-after-hangup": "exits when it finds that the client of a call in flight hung up",
}
MODERN = "2026-07-28"
LEGACY = ("2025-11-25", "2025-06-18", "2025-03-26")
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
INFO = {"name": "check-zoo-http", "version": "1.0.0"}
TOOLS = [
    {"name": "slow", "description": "Answer after a while.", "inputSchema": {"type": "object", "properties": {}}},
    {"name": "echo", "description": "Say the text back.",
     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}},
]
SLOW_SECONDS = 0.6
SESSIONS: set[str] = set()
DEFECT = ""


def error(rid: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    return {"jsonrpc": "2.0", **({"id": rid} if rid is not None else {}), "error": body}


def result(rid: Any, value: dict[str, Any], modern: bool, *, listing: bool = False) -> dict[str, Any]:
    if modern:
        value = {**value, "resultType": "complete", **({"cacheScope": "private", "ttlMs": 0} if listing else {})}
    return {"jsonrpc": "2.0", "id": rid, "result": value}


def client_gone(connection: socket.socket) -> bool:
    """Has the client closed its end (readable, and reading would return nothing)?"""
    readable, _, _ = select.select([connection], [], [], 0)
    if not readable:
        return False
    try:
        return connection.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: nothing on stderr for every request

    # -- replies ---------------------------------------------------------------------------------
    def reply(self, status: int, body: Any = None, headers: dict[str, str] | None = None) -> None:
        data = b"" if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        self.send_response(status)
        if body is not None:
            self.send_header("Content-Type", "application/json" if not isinstance(body, bytes) else "text/plain")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    # -- HTTP methods ------------------------------------------------------------------------------
    def do_GET(self) -> None:
        self.reply(405)

    def do_DELETE(self) -> None:
        session = self.headers.get("Mcp-Session-Id")
        if session in SESSIONS:
            SESSIONS.discard(session)
            self.reply(200)
        else:
            self.reply(404)

    def do_POST(self) -> None:
        origin = self.headers.get("Origin")
        body = self.read_body()
        if origin and not origin.startswith(("http://127.0.0.1", "http://localhost")):
            self.reply(403, error(None, -32600, "Forbidden origin"))
            return
        try:
            message = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            if DEFECT == "crash-on-bad-json":
                os._exit(2)
            if DEFECT == "500-on-bad-json":
                self.reply(500, b"Internal Server Error")
                return
            self.reply(400, error(None, -32700, "Parse error"))
            return
        if isinstance(message, list):
            if DEFECT == "batch-answer":
                self.reply(200, [self.answer(item)[1] for item in message if isinstance(item, dict)])
            else:
                self.reply(400, error(None, -32600, "Invalid Request: batches are not supported"))
            return
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or not isinstance(message.get("method"), str):
            rid = message.get("id") if isinstance(message, dict) and isinstance(message.get("id"), (str, int)) else None
            self.reply(400, error(rid, -32600, "Invalid Request"))
            return
        status, answer, headers = self.route(message)
        if answer is None and status == 0:
            return  # the client hung up: nothing to write
        self.reply(status, answer, headers)

    # -- the protocol ------------------------------------------------------------------------------
    def route(self, message: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
        session = self.headers.get("Mcp-Session-Id")
        version = self.headers.get("MCP-Protocol-Version")
        if message["method"] == "initialize":
            new = uuid.uuid4().hex
            SESSIONS.add(new)
            return 200, result(message.get("id"), {"protocolVersion": LEGACY[0], "capabilities": {"tools": {}},
                                                   "serverInfo": INFO}, False), {"Mcp-Session-Id": new}
        if session is not None:
            if session not in SESSIONS:
                return 404, error(None, -32600, "Session not found"), {}
            if version is not None and version not in LEGACY:
                return 400, error(None, -32600, f"Unsupported MCP-Protocol-Version {version}"), {}
            if "id" not in message:
                return 202, None, {}
            status, answer = self.answer(message, modern=False)
            return status, answer, {}
        if version in LEGACY:
            return 400, error(None, -32600, "Bad Request: no Mcp-Session-Id"), {}
        return self.modern(message)

    def modern(self, message: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
        rid, params = message.get("id"), message.get("params") or {}
        version = self.headers.get("MCP-Protocol-Version")
        meta = params.get("_meta") if isinstance(params, dict) else None
        if "id" not in message:
            return 202, None, {}
        if version != MODERN or not isinstance(meta, dict) or meta.get(VERSION_KEY) != version:
            if version is not None and isinstance(meta, dict) and meta.get(VERSION_KEY) == version:
                return 400, error(rid, -32022, "Unsupported protocol version",
                                  {"supported": [MODERN], "requested": version}), {}
            return 400, error(rid, -32602, "params._meta and MCP-Protocol-Version must name the version"), {}
        named = params.get("name") if message["method"] in ("tools/call", "prompts/get") else None
        if self.headers.get("Mcp-Method") != message["method"] or (
                named is not None and self.headers.get("Mcp-Name") != named):
            return 400, error(rid, -32020, "Header mismatch"), {}
        status, answer = self.answer(message, modern=True)
        return status, answer, {}

    def answer(self, message: dict[str, Any], modern: bool = False) -> tuple[int, Any]:
        """(status, body) for one request; status 0 with no body when the client hung up."""
        method, rid, params = message.get("method"), message.get("id"), message.get("params") or {}
        if method == "ping" and not modern:
            return 200, result(rid, {}, False)
        if method == "server/discover" and modern:
            return 200, result(rid, {"supportedVersions": [MODERN], "capabilities": {"tools": {}},
                                     "_meta": {"io.modelcontextprotocol/serverInfo": INFO}}, True, listing=True)
        if method == "tools/list":
            return 200, result(rid, {"tools": TOOLS}, modern, listing=True)
        if method == "tools/call":
            name, args = params.get("name"), params.get("arguments") or {}
            if name == "slow":
                ends = time.monotonic() + SLOW_SECONDS
                while time.monotonic() < ends:  # the work, watching for a client that hangs up
                    time.sleep(0.02)
                    if client_gone(self.connection):
                        if DEFECT == "dies-after-hangup":
                            os._exit(3)
                        self.close_connection = True  # the call is dropped: nobody waits for it
                        return 0, None
                return 200, result(rid, {"content": [{"type": "text", "text": "done"}], "isError": False}, modern)
            if name == "echo":
                if not isinstance(args.get("text"), str):
                    return 200, result(rid, {"content": [{"type": "text", "text": "missing text"}],
                                             "isError": True}, modern)
                return 200, result(rid, {"content": [{"type": "text", "text": args["text"]}], "isError": False},
                                   modern)
            return (400 if modern else 200), error(rid, -32602, f"Unknown tool: {name}")
        return (404 if modern else 200), error(rid, -32601, "Method not found")


def main(defect: str = "") -> None:
    global DEFECT
    DEFECT = defect
    port = int(sys.argv[sys.argv.index("--port") + 1]) if "--port" in sys.argv else 8000
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    server.serve_forever()


if __name__ == "__main__":
    main()
