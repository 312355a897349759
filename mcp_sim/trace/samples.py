"""Hand-built example traces: for the docs of the trace views, their tests and benchmarks.

They are recorded through the real :class:`~mcp_sim.trace.recorder.Recorder` (so captions, layers and
request/response matching are the real ones) but need no server, client or scenario: each message is
written out by hand, as a textbook example would be.
"""

from __future__ import annotations

import json
from typing import Any

from mcp_sim.trace.events import Trace
from mcp_sim.trace.recorder import Recorder

C, S = "client/weather", "server/weather"


def frame(obj: dict[str, Any]) -> str:
    """A message as compact JSON text, the way the codec puts it on the wire."""
    return json.dumps(obj, separators=(",", ":"))


def weather_recorder(*, revision: str = "2025-06-18", drop_call: bool = False) -> Recorder:
    """A small legacy-era weather story: user → host → model, the handshake, tools/list, a
    tools/call with progress and a stderr log line, and a prompts/list the server does not support
    (error -32601). With ``drop_call`` the tools/call is lost on the wire: the client times out and
    cancels it instead."""
    rec = Recorder()
    rec.record_app(sender="user", receiver="host", text="What's the weather in Paris?", t_ms=0.0)
    rec.record_message(link="weather", sender=C, receiver=S, revision=revision, t_ms=0.0, raw=frame(
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": revision, "capabilities": {}, "clientInfo": {"name": "host", "version": "1"}}}))
    rec.record_message(link="weather", sender=S, receiver=C, revision=revision, t_ms=2.0, raw=frame(
        {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": revision, "capabilities": {"tools": {}},
                                               "serverInfo": {"name": "weather", "version": "1"}}}))
    rec.record_message(link="weather", sender=C, receiver=S, revision=revision, t_ms=2.5, raw=frame(
        {"jsonrpc": "2.0", "method": "notifications/initialized"}))
    rec.record_message(link="weather", sender=C, receiver=S, revision=revision, t_ms=3.0, raw=frame(
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
    rec.record_message(link="weather", sender=S, receiver=C, revision=revision, t_ms=5.0, raw=frame(
        {"jsonrpc": "2.0", "id": 2, "result": {"tools": [{"name": "get_forecast", "inputSchema": {"type": "object"}}]}}))
    rec.record_app(sender="host", receiver="model", text="tools: get_forecast; user asks about Paris", t_ms=6.0)
    rec.record_app(sender="model", receiver="host", text="call get_forecast(city=Paris)", t_ms=9.0)
    rec.record_message(link="weather", sender=C, receiver=S, revision=revision, t_ms=10.0,
                       marks=("dropped",) if drop_call else (), raw=frame(
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "get_forecast", "arguments": {"city": "Paris"}, "_meta": {"progressToken": "p3"}}}))
    if not drop_call:
        rec.record_message(link="weather", sender=S, receiver=C, revision=revision, t_ms=12.0, raw=frame(
            {"jsonrpc": "2.0", "method": "notifications/progress",
             "params": {"progressToken": "p3", "progress": 1, "total": 2}}))
        rec.record_event(kind="log", link="weather", sender=S, receiver=S, text="fetching forecast for Paris",
                         transport="memory", t_ms=15.0)
        rec.record_message(link="weather", sender=S, receiver=C, revision=revision, t_ms=20.0, raw=frame(
            {"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": "Sunny, 21°C"}]}}))
    else:
        rec.record_event(kind="timeout", link="weather", sender=C, receiver=C, text="no answer to #3 after 30000 ms",
                         request_id=3, method="tools/call", marks=("timeout",), t_ms=30000.0)
        rec.record_message(link="weather", sender=C, receiver=S, revision=revision, t_ms=30000.0, raw=frame(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3, "reason": "timeout"}}))
    rec.record_message(link="weather", sender=C, receiver=S, revision=revision, t_ms=40000.0 if drop_call else 21.0,
                       raw=frame({"jsonrpc": "2.0", "id": 4, "method": "prompts/list"}))
    rec.record_message(link="weather", sender=S, receiver=C, revision=revision, t_ms=40001.0 if drop_call else 22.0,
                       raw=frame({"jsonrpc": "2.0", "id": 4, "error": {"code": -32601, "message": "Method not found"}}))
    rec.record_app(sender="host", receiver="user", text="It is sunny in Paris, 21°C.",
                   t_ms=40002.0 if drop_call else 23.0)
    return rec


def synthetic_trace_recorder(n_messages: int, *, servers: int = 3, revision: str = "2025-11-25") -> Recorder:
    """A long trace of ``n_messages`` JSON-RPC messages (tools/call requests and their results,
    spread over ``servers`` links, with a progress notification now and then), for benchmarks."""
    rec = Recorder()
    rec.record_app(sender="user", receiver="host", text="Run the batch job", t_ms=0.0)
    t = 0.0
    i = 0
    while i < n_messages:
        name = f"s{(i // 2) % servers}"
        client, server = f"client/{name}", f"server/{name}"
        rid = i // 2 + 1
        t += 1.5
        rec.record_message(link=name, sender=client, receiver=server, revision=revision, t_ms=t, raw=frame(
            {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
             "params": {"name": "step", "arguments": {"n": rid}}}))
        i += 1
        if i < n_messages and rid % 10 == 0:
            rec.record_message(link=name, sender=server, receiver=client, revision=revision, t_ms=t + 0.5,
                               raw=frame({"jsonrpc": "2.0", "method": "notifications/progress",
                                          "params": {"progressToken": rid, "progress": 1, "total": 2}}))
            i += 1
        if i < n_messages:
            rec.record_message(link=name, sender=server, receiver=client, revision=revision, t_ms=t + 1.0,
                               raw=frame({"jsonrpc": "2.0", "id": rid,
                                          "result": {"content": [{"type": "text", "text": f"done {rid}"}]}}))
            i += 1
    return rec


def weather_trace(**options: Any) -> Trace:
    """:func:`weather_recorder` as a :class:`~mcp_sim.trace.events.Trace`."""
    return weather_recorder(**options).trace()
