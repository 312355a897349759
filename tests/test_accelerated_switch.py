"""The switch between the readable implementation and the accelerated twins."""

from __future__ import annotations

import anyio
import pytest

from mcp_sim import accelerated


def test_readable_is_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(accelerated.ENVIRONMENT_VARIABLE, raising=False)
    assert accelerated.enabled() is False


def test_environment_variable_selects_accelerated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(accelerated.ENVIRONMENT_VARIABLE, "1")
    assert accelerated.enabled() is True
    monkeypatch.setenv(accelerated.ENVIRONMENT_VARIABLE, "0")
    assert accelerated.enabled() is False


def test_block_choice_wins_and_is_undone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(accelerated.ENVIRONMENT_VARIABLE, "1")
    with accelerated.use(False):
        assert accelerated.enabled() is False
        with accelerated.use():
            assert accelerated.enabled() is True
        assert accelerated.enabled() is False
    assert accelerated.enabled() is True


def test_choice_travels_into_tasks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(accelerated.ENVIRONMENT_VARIABLE, raising=False)
    seen: list[bool] = []

    async def child() -> None:
        seen.append(accelerated.enabled())

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(child)

    with accelerated.use():
        anyio.run(main)
    anyio.run(main)
    assert seen == [True, False]
