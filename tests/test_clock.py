"""The virtual clock: simulated time is free, sleeps and timeouts are exact, timeouts are visible."""

from __future__ import annotations

import time

import anyio
import pytest

from mcp_sim.sim.world import Simulation


def test_ten_simulated_minutes_take_well_under_a_second() -> None:
    sim = Simulation(0)
    ticks: list[float] = []

    async def main() -> float:
        async with anyio.create_task_group() as tg:
            async def heartbeat(period: float) -> None:
                for _ in range(int(600 / period)):
                    await sim.sleep(period)
                    ticks.append(sim.now())

            tg.start_soon(heartbeat, 1.0)
            tg.start_soon(heartbeat, 7.5)
        return sim.now()

    started = time.perf_counter()
    end = sim.run(main)
    wall = time.perf_counter() - started
    assert end == pytest.approx(600.0)
    assert len(ticks) == 600 + 80
    assert wall < 0.5


def test_fail_after_records_a_visible_timeout() -> None:
    sim = Simulation(0)

    async def main() -> None:
        with pytest.raises(TimeoutError):
            with sim.fail_after(2.5, what="tools/call #7", who="client/weather", link="weather", request_id=7,
                                method="tools/call"):
                await sim.sleep(60)
        with sim.fail_after(1.0, what="a quick answer"):
            await sim.sleep(0.5)

    sim.run(main)
    events = [e.to_json() for e in sim.recorder]
    assert events == [{
        "seq": 1, "t_ms": 2500.0, "link": "weather", "from": "client/weather", "to": "client/weather",
        "kind": "timeout", "revision": None, "transport": "memory", "message": None, "method": "tools/call",
        "request_id": 7, "layer": "capabilities", "capability": "tools", "caption": "The weather client: gave up waiting for tools/call #7 "
                                                           "after 2.5 s (simulated)",
        "marks": ["timeout"], "text": "gave up waiting for tools/call #7 after 2.5 s (simulated)"}]


def test_random_for_gives_independent_seeded_generators() -> None:
    a, b = Simulation(5), Simulation(5)
    assert [a.random_for("x").random() for _ in range(3)] == [b.random_for("x").random() for _ in range(3)]
    assert a.random_for("x").random() != a.random_for("y").random()
    assert Simulation(6).random_for("x").random() != a.random_for("x").random()
