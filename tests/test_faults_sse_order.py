"""The end of an SSE stream is ordered after every event it carries (issue "faults without
surprises", part two; course chapter 06).

A ``reorder`` fault holds an event back so later frames overtake it. The server's "end of stream"
is a control frame; it used to be ordered only after the frames that were *not* held back, so it
could overtake a held-back event: the client's reader was released at the end and the late event
— often the answer — was dropped, and the caller timed out although the trace showed the answer
sent. Now a control frame is delivered after every frame in flight on its wire
(:meth:`mcp_sim.transports.faults.Wire.ship_control`).
"""

from __future__ import annotations

import anyio
import pytest

from mcp_sim.capabilities.context import Context
from mcp_sim.roles.client import Client
from mcp_sim.roles.server import Server
from mcp_sim.roles.server_session import serve
from mcp_sim.sim.world import Simulation
from mcp_sim.transports import open_link
from mcp_sim.transports.faults import Faults, LinkFaults, Shipment, Wire

SEEDS = range(12)


def call_over_reordering_sse(revision: str, seed: int) -> tuple[str, int]:
    """One ``tools/call`` answered on an SSE stream whose events are held back half the time.
    Returns the outcome and how many answer events the trace marks ``reordered``."""
    server = Server("slow", version="1.0.0")

    @server.tool()
    async def work(ctx: Context) -> str:
        """Answer after a moment."""
        await ctx.sleep(0.1)
        return "done"

    sim = Simulation(seed)
    outcome: dict[str, str] = {}

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            stream = await open_link(sim, tg, "slow", lambda s: serve(server, s), transport="http",
                                     revision=revision, response_mode="sse",
                                     faults=LinkFaults(to_client=Faults(reorder=0.5, reorder_hold=0.2)))
            client = Client("app", era="modern" if revision >= "2026" else "legacy", timeout=5)
            try:
                await client.connect(stream, tg)
                outcome["call"] = str((await client.call_tool("work", {}))["content"][0]["text"])
            except Exception as exc:  # the defect's outcome: RequestTimeout
                outcome["call"] = type(exc).__name__
            await client.close()
            tg.cancel_scope.cancel()

    sim.run(main)
    held = sum(1 for e in sim.recorder if "reordered" in e.marks and e.kind == "response"
               and e.method == "tools/call")
    return outcome["call"], held


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
def test_a_held_back_answer_event_still_arrives_before_the_stream_ends(revision: str) -> None:
    results = [call_over_reordering_sse(revision, seed) for seed in SEEDS]
    assert sum(held for _, held in results) > 0, "some answers were held back on the wire"
    assert [outcome for outcome, _ in results] == ["done"] * len(SEEDS)  # before: mostly RequestTimeout


def test_a_control_frame_waits_for_a_held_back_frame() -> None:
    """The wire itself: a frame held back 0.2 s, then the end of the stream, then a frame in order.
    The end comes after the held-back frame; the frame after the end comes after the end."""
    sim = Simulation(0)
    got: list[str] = []

    async def main() -> None:
        wire = Wire(sim, Faults(), label="t")
        wire.ship(Shipment("held", ("reordered",), delay=0.2, fifo=False), got.append)
        wire.ship(Shipment("in order", delay=0.01), got.append)
        wire.ship_control(lambda: got.append("end"))
        wire.ship(Shipment("after the end", delay=0.0), got.append)
        await anyio.sleep(1)

    sim.run(main)
    assert got == ["in order", "held", "end", "after the end"]
