"""The recorder sees every message exactly once, in order, exactly as sent (memory transport)."""

from __future__ import annotations

import json
from typing import Any

import anyio

from mcp_sim.sim.world import Simulation
from mcp_sim.trace import Recorder, Trace, TraceEvent
from mcp_sim.trace.samples import weather_trace
from mcp_sim.transports.memory import memory_link
from mcp_sim.wire.jsonrpc import (
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResultResponse,
    encode,
)


def _ping_pong(n: int, seed: int = 0) -> tuple[Simulation, list[str]]:
    """Client sends n requests and a notification; the server answers each request after 5 ms."""
    sim = Simulation(seed)
    sent: list[str] = []

    async def main() -> None:
        client, server = memory_link(sim, "echo")

        async def serve() -> None:
            for _ in range(n + 1):
                msg = await server.receive()
                if isinstance(msg, JSONRPCRequest):
                    await anyio.sleep(0.005)
                    reply = JSONRPCResultResponse(msg.id, {"echo": msg.params})
                    sent.append(encode(reply))
                    await server.send(reply)

        async with anyio.create_task_group() as tg:
            tg.start_soon(serve)
            for i in range(1, n + 1):
                req = JSONRPCRequest(i, "tools/call", {"name": "echo", "arguments": {"i": i}})
                sent.append(encode(req))
                await client.send(req)
                reply = await client.receive()
                assert isinstance(reply, JSONRPCResultResponse) and reply.id == i
            note = JSONRPCNotification("notifications/cancelled", {"requestId": 99})
            sent.append(encode(note))
            await client.send(note)

    sim.run(main)
    return sim, sent


def test_every_message_recorded_exactly_once_in_order() -> None:
    sim, sent = _ping_pong(20)
    events = sim.recorder.events
    assert [e.raw for e in events] == sent
    assert len(events) == 41
    assert [e.seq for e in events] == list(range(1, 42))
    times = [e.t_ms for e in events]
    assert times == sorted(times)  # virtual time never runs backwards
    assert events[1].t_ms == 5.0  # the server answered after 5 simulated ms
    # Directions alternate request/response and responses are matched to their request's method.
    for req, resp in zip(events[0:40:2], events[1:40:2], strict=True):
        assert (req.sender, req.receiver, req.kind) == ("client/echo", "server/echo", "request")
        assert (resp.sender, resp.receiver, resp.kind) == ("server/echo", "client/echo", "response")
        assert resp.method == "tools/call" and resp.request_id == req.request_id
    assert events[-1].kind == "notification" and events[-1].layer == "transports"


def test_same_seed_same_trace() -> None:
    a, _ = _ping_pong(5, seed=3)
    b, _ = _ping_pong(5, seed=3)
    assert a.recorder.trace() == b.recorder.trace()


def test_message_kept_exactly_as_sent() -> None:
    rec = Recorder()
    raw = '{"method":"tools/list","id":"a","jsonrpc":"2.0","x-extra":1}'
    event = rec.record_message(link="l", sender="client/l", receiver="server/l", raw=raw)
    assert event is not None
    assert event.message == json.loads(raw)
    assert list(event.message or {}) == ["method", "id", "jsonrpc", "x-extra"]  # member order kept
    assert event.kind == "request" and event.method == "tools/list"


def test_invalid_frames_are_recorded_with_what_can_be_read() -> None:
    rec = Recorder()
    rec.record_message(link="l", sender="server/l", receiver="client/l", raw="debug: starting up")
    rec.record_message(link="l", sender="client/l", receiver="server/l",
                       raw='{"jsonrpc":"1.0","id":4,"method":"tools/call"}')
    rec.record_message(link="l", sender="client/l", receiver="server/l",
                       raw='[{"jsonrpc":"2.0","id":1,"method":"ping"}]')
    plain, wrong_version, batch = rec.events
    assert plain.kind == "invalid" and plain.message is None and plain.raw == "debug: starting up"
    assert wrong_version.kind == "invalid" and wrong_version.method == "tools/call"
    assert wrong_version.request_id == 4
    assert batch.kind == "batch" and batch.message == {"batch": [{"jsonrpc": "2.0", "id": 1, "method": "ping"}]}
    for e in rec.events:
        assert e.caption


def test_disabled_recorder_records_nothing() -> None:
    rec = Recorder(enabled=False)
    assert rec.record_message(link="l", sender="a", receiver="b", raw="{}") is None
    assert rec.record_app(sender="user", receiver="host", text="hi") is None
    assert len(rec) == 0


def test_marks_and_listeners() -> None:
    rec = Recorder()
    seen: list[TraceEvent] = []
    rec.subscribe(seen.append)
    rec.mark_next("attack")
    rec.record_message(link="l", sender="server/l", receiver="client/l",
                       raw='{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}')
    rec.record_message(link="l", sender="server/l", receiver="client/l",
                       raw='{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}', marks=("duplicate",))
    assert [e.marks for e in rec.events] == [("attack",), ("duplicate",)]
    assert seen == rec.events


def test_trace_filters_and_questions() -> None:
    trace = weather_trace()
    assert isinstance(trace, Trace)
    assert trace.participants() == ["user", "host", "model", "client/weather", "server/weather"]
    assert trace.links() == ["app", "weather"]
    lifecycle = trace.filter(capability="lifecycle")
    assert [e.method for e in lifecycle] == ["initialize", "initialize", "notifications/initialized"]
    assert set(trace.layers()) <= {"roles", "capabilities", "transports"}  # the course's three layers
    assert {e.layer for e in lifecycle} == {"capabilities"}
    calls = trace.filter(method="tools/call")
    assert [e.kind for e in calls] == ["request", "response"]
    assert trace.filter(kind=["error", "notification"]).kinds() == ["notification", "error"]
    assert len(trace.filter(participant="model")) == 2
    assert all(m.get("jsonrpc") == "2.0" for m in trace.messages())
    assert trace.by_seq(2).method == "initialize"
    assert trace[1:3] == [trace[1], trace[2]]
    assert "JSON-RPC messages" in repr(trace)


def _mixed_recording(recorder: Recorder) -> list[dict[str, object]]:
    """Every way of recording, interleaved: frames the transport encoded, odd frames, marks, app talk
    written on reading, transport events, and a listener arriving half-way."""
    request = JSONRPCRequest(1, "tools/call", {"name": "echo", "arguments": {"text": "hi"}})
    result = JSONRPCResultResponse(1, {"content": []})
    recorder.record_app(sender="user", receiver="host", text=lambda: "call echo", data=lambda: {"n": 1})
    recorder.record_sent("l", "client/l", "server/l", encode(request), "2025-11-25", "memory", request)
    recorder.record_event(kind="transport", link="l", sender="client/l", receiver="client/l", text="connected")
    recorder.record_sent("l", "server/l", "client/l", encode(result), "2025-11-25", "memory", result)
    recorder.record_message(link="l", sender="server/l", receiver="client/l", raw="debug: not JSON")
    recorder.mark_next("attack")
    recorder.record_sent("l", "client/l", "server/l", encode(request), "2025-11-25", "memory", request)
    heard: list[TraceEvent] = []
    recorder.subscribe(heard.append)
    recorder.record_app(sender="host", receiver="user", text="done")
    assert heard == recorder.events[-1:]
    assert len(recorder) == 7 == len(recorder.events)
    return [e.to_json() for e in recorder.events]


def test_the_accelerated_recorder_records_what_the_readable_one_records() -> None:
    from mcp_sim import accelerated
    from mcp_sim.trace.recorder import AcceleratedRecorder

    readable = Recorder()
    with accelerated.use():
        fast = Recorder()
    assert type(readable) is Recorder and type(fast) is AcceleratedRecorder
    expected = _mixed_recording(readable)
    assert _mixed_recording(fast) == expected
    assert [e["kind"] for e in expected] == ["app", "request", "transport", "response", "invalid", "request", "app"]
    assert expected[3]["method"] == "tools/call" and expected[5]["marks"] == ["attack"]
    assert expected[0]["text"] == "call echo" and expected[0]["message"] == {"n": 1}
    fast.clear()
    assert len(fast) == 0 and fast.events == []


def _reused_ids(recorder: Recorder) -> list[dict[str, object]]:
    """A response is labelled with the method its request asked for, even when an id comes back: the
    accelerated recorder reads its rows later, so it must remember methods in the same order."""
    from mcp_sim.wire.jsonrpc import JSONRPCErrorResponse, error_object

    def sent(sender: str, receiver: str, message: Any) -> None:
        recorder.record_sent("l", sender, receiver, encode(message), "2025-11-25", "memory", message)

    sent("client/l", "server/l", JSONRPCRequest(1, "tools/list", None))
    sent("server/l", "client/l", JSONRPCErrorResponse(1, error_object(-32601)))
    sent("client/l", "server/l", JSONRPCNotification("notifications/initialized"))
    recorder.mark_next("replay")  # recorded at once: the rows before it must be read first
    sent("client/l", "server/l", JSONRPCRequest(1, "tools/call", {"name": "echo"}))
    sent("server/l", "client/l", JSONRPCResultResponse(1, {"content": []}))
    sent("client/l", "server/l", JSONRPCRequest(1, "prompts/list", {"x": (1, 2)}))  # encoded, read back as a list
    sent("server/l", "client/l", JSONRPCResultResponse(1, {"prompts": []}))
    assert len(recorder) == 7
    return [e.to_json() for e in recorder.events]


def test_the_accelerated_recorder_labels_responses_as_the_readable_one_does() -> None:
    from mcp_sim import accelerated

    expected = _reused_ids(Recorder())
    with accelerated.use():
        assert _reused_ids(Recorder()) == expected
    assert [(e["kind"], e.get("method")) for e in expected] == [
        ("request", "tools/list"), ("error", "tools/list"), ("notification", "notifications/initialized"),
        ("request", "tools/call"), ("response", "tools/call"), ("request", "prompts/list"),
        ("response", "prompts/list")]
    assert expected[3]["marks"] == ["replay"]


def test_frames_waiting_to_be_read_cost_the_garbage_collector_nothing() -> None:
    """The accelerated recorder keeps a frame as a row of strings and numbers, which Python's garbage
    collector stops watching: a long benchmark's rows do not make every collection slower."""
    import gc

    from mcp_sim import accelerated

    with accelerated.use():
        recorder = Recorder()
    request = JSONRPCRequest(1, "tools/call", {"name": "echo", "arguments": {"text": "hi"}})
    result = JSONRPCResultResponse(1, {"content": [{"type": "text", "text": "hi"}]})
    recorder.record_sent("l", "client/l", "server/l", encode(request), "2025-11-25", "memory", request)
    recorder.record_sent("l", "server/l", "client/l", encode(result), "2025-11-25", "memory", result)
    gc.collect()
    rows = recorder._rows  # type: ignore[attr-defined]
    assert len(rows) == 2 and not any(gc.is_tracked(row) for row in rows)
    assert [e.method for e in recorder.events] == ["tools/call", "tools/call"]
