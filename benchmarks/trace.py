"""Trace costs: recording overhead per message, sequence-diagram rendering, player stepping.

Run: ``python benchmarks/trace.py`` (prints one JSON object). Targets: rendering a 1,000-message
sequence diagram under 1 s, one player step under 50 ms.
"""

from __future__ import annotations

import json
import platform
import time
from collections.abc import Callable

from mcp_sim.trace import Recorder, SequenceDiagram, TraceTable
from mcp_sim.trace.samples import frame, synthetic_trace_recorder
from mcp_sim.widgets.player import PlayerState, TracePlayer

FRAMES = [
    frame({"jsonrpc": "2.0", "id": 42, "method": "tools/call",
           "params": {"name": "get_forecast", "arguments": {"city": "Lisbon", "days": 3}}}),
    frame({"jsonrpc": "2.0", "id": 42, "result": {"content": [{"type": "text", "text": "Lisbon: sunny, 24°C"}],
                                                  "isError": False}}),
    frame({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1}}),
]


def best_of(runs: int, work: Callable[[], object]) -> float:
    """The fastest of ``runs`` timings, in seconds (the least disturbed by the machine)."""
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def record(recorder: Recorder, n: int) -> None:
    for i in range(n):
        text = FRAMES[i % 3]
        sender, receiver = ("client/w", "server/w") if i % 3 == 0 else ("server/w", "client/w")
        recorder.record_message(link="w", sender=sender, receiver=receiver, raw=text, revision="2025-11-25",
                                t_ms=float(i))


def main() -> None:
    n = 10_000
    enabled = best_of(5, lambda: record(Recorder(), n)) / n
    disabled = best_of(5, lambda: record(Recorder(enabled=False), n)) / n
    parse_only = best_of(5, lambda: [json.loads(FRAMES[i % 3]) for i in range(n)]) / n
    trace = synthetic_trace_recorder(1000).trace()
    render = best_of(5, lambda: SequenceDiagram(trace).to_svg())
    table = best_of(5, lambda: TraceTable(trace).to_text())
    state = PlayerState(trace)
    state_step = best_of(5, lambda: [state.step(1 if i % 2 else -1) for i in range(100)]) / 100
    player = TracePlayer(trace)

    def twenty_steps() -> None:
        for i in range(20):
            player.step(1 if i % 2 else -1)

    widget_step = best_of(5, twenty_steps) / 20
    out = {
        "benchmark": "trace",
        "python": platform.python_version(),
        "record_us_per_message": round(enabled * 1e6, 2),
        "record_disabled_us_per_message": round(disabled * 1e6, 2),
        "reference_json_loads_us_per_message": round(parse_only * 1e6, 2),
        "sequence_svg_1000_messages_s": round(render, 4),
        "sequence_svg_target_s": 1.0,
        "text_table_1000_messages_s": round(table, 4),
        "player_state_step_ms": round(state_step * 1e3, 4),
        "player_widget_step_ms": round(widget_step * 1e3, 3),
        "player_step_target_ms": 50,
        "svg_bytes_1000_messages": len(SequenceDiagram(trace).to_svg().encode()),
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
