"""The readable implementation and its accelerated twins record the very same traces (see
:mod:`mcp_sim.accelerated`).

Every ready-made scenario runs in every simulated revision over every transport twice — once as the
learner reads the code (the default), once with the accelerated twins — and the two JSON Lines
exports must be byte-identical: same frames, same order, same times, same captions.
"""

from __future__ import annotations

import io

import pytest

from mcp_sim import accelerated
from mcp_sim.protocol.revisions import SIMULATED_VERSIONS
from mcp_sim.scenarios import SCENARIOS, run_scenario
from mcp_sim.trace.recorder import AcceleratedRecorder, Recorder


def _jsonl(recorder: Recorder) -> str:
    out = io.StringIO()
    recorder.to_jsonl(out)
    return out.getvalue()


@pytest.mark.parametrize("transport", ["memory", "stdio", "http"])
@pytest.mark.parametrize("revision", SIMULATED_VERSIONS)
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_readable_and_accelerated_record_identical_traces(scenario: str, revision: str, transport: str) -> None:
    with accelerated.use(False):
        readable = run_scenario(scenario, revision=revision, transport=transport, seed=5)
    with accelerated.use():
        fast = run_scenario(scenario, revision=revision, transport=transport, seed=5)
    assert type(readable) is Recorder and type(fast) is AcceleratedRecorder
    expected = _jsonl(readable)
    assert expected.count("\n") > 0
    assert _jsonl(fast) == expected
