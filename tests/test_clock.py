"""The virtual clock: simulated time is free, sleeps and timeouts are exact, timeouts are visible."""

from __future__ import annotations

import time

import anyio
import pytest

from mcp_sim.sim.loop import SimulationStalled, VirtualTimeLoop, nearest_ns
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


def test_a_timer_beyond_two_to_the_24_seconds_fires_at_its_exact_time() -> None:
    """A float clock that is only ever added to stops moving past about 2²⁴ s: the step is smaller than
    the float's spacing there. The loop jumps to each deadline itself and reads it in whole nanoseconds.
    (asyncio's own reading, ``anyio.current_time()``, may be one float past the deadline out here: the
    first float at which asyncio counts the timer as due.)"""
    sim = Simulation(0)
    seen: list[tuple[int, int, float]] = []

    async def main() -> None:
        for delay in (2.0**24 + 0.5, 0.001, 0.001, 0.25):
            deadline = anyio.current_time() + delay
            await anyio.sleep(delay)
            assert sim.now() == deadline  # the deadline asyncio was given, not a drifted sum
            seen.append((round(delay * 1e9), sim.now_ns(), sim.now_ms()))

    sim.run(main)
    assert seen[0][1] == 16_777_216_500_000_000
    for (_, before, _), (step, after, _) in zip([(0, 0, 0.0), *seen], seen, strict=False):
        assert abs(after - before - step) <= 4  # floats are 3.7 ns apart here
    assert [s[2] for s in seen] == [16_777_216_500.0, 16_777_216_501.0, 16_777_216_502.0, 16_777_216_752.0]


def test_a_jump_of_two_to_the_40_seconds_is_one_step_and_keeps_its_timers_in_order() -> None:
    """35,000 years in one jump (asyncio alone would wait a day per turn: twelve million turns). Out
    there floats are 2⁻¹² s apart, so a timer set from asyncio's reading of the clock may land one
    float late, never more, and never out of order."""
    sim = Simulation(0)
    spacing_ns = 244_141  # 10⁹ / 4096, rounded

    async def main() -> list[int]:
        stamps = []
        async with anyio.create_task_group() as tg:
            async def late() -> None:
                await anyio.sleep(2.0**40 + 0.75)
                stamps.append(sim.now_ns())

            tg.start_soon(late)
            await anyio.sleep(2.0**40)
            stamps.append(sim.now_ns())
            with anyio.fail_after(2.0):  # a timeout far in the future works like any other
                await anyio.sleep(0.5)
            stamps.append(sim.now_ns())
        return stamps

    first, second, third = sim.run(main)
    assert first == 2**40 * 10**9
    assert 0 <= second - (first + 500_000_000) <= spacing_ns
    assert third == 2**40 * 10**9 + 750_000_000  # set at the start: exact
    assert sim.now_ms() == (2**40 + 0.75) * 1000


def test_a_stalled_world_far_in_the_future_still_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(VirtualTimeLoop, "stall_wall_timeout", 0.01)
    sim = Simulation(0)

    async def main() -> None:
        await anyio.sleep(2.0**30)
        await anyio.Event().wait()  # nobody will ever set it, and no timer is pending

    with pytest.raises(SimulationStalled):
        sim.run(main)
    assert sim.now_ns() == 2**30 * 10**9


def test_nearest_ns_is_exact() -> None:
    assert nearest_ns(0.0) == 0
    assert nearest_ns(1.5) == 1_500_000_000
    assert nearest_ns(0.1) == 100_000_000
    assert nearest_ns(2.0**40) == 2**40 * 10**9
    assert nearest_ns(2.0**40 + 2.0**-12) == 2**40 * 10**9 + 244_141  # 10⁹/4096 = 244,140.625
    assert nearest_ns(4e-10) == 0 and nearest_ns(6e-10) == 1
    assert nearest_ns(123456.000000001) == 123_456_000_000_001
