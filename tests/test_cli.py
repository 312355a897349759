"""The mcp-sim command line: scenarios, run, show, and the delegated subcommands."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from mcp_sim import cli
from mcp_sim.trace import load_jsonl
from mcp_sim.trace.samples import weather_recorder


def _scenarios_available() -> bool:
    try:
        module = importlib.import_module("mcp_sim.scenarios")
    except ImportError:
        return False
    return hasattr(module, "run_scenario") and hasattr(module, "SCENARIOS")


needs_scenarios = pytest.mark.skipif(not _scenarios_available(), reason="mcp_sim.scenarios not written yet")


@needs_scenarios
def test_scenarios_lists_every_scenario(capsys: pytest.CaptureFixture[str]) -> None:
    from mcp_sim.scenarios import SCENARIOS

    assert cli.main(["scenarios"]) == 0
    out = capsys.readouterr().out
    names = [line.split()[0] for line in out.splitlines() if line.strip()]
    assert names == list(SCENARIOS)


@needs_scenarios
def test_run_writes_trace_html_and_mermaid(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from mcp_sim.scenarios import SCENARIOS, run_scenario

    name = "weather" if "weather" in SCENARIOS else next(iter(SCENARIOS))
    trace_file, page, mermaid = tmp_path / "t.jsonl", tmp_path / "t.html", tmp_path / "t.mmd"
    code = cli.main(["run", name, "--revision", "2025-11-25", "--transport", "memory", "--seed", "3",
                     "--trace", str(trace_file), "--html", str(page), "--mermaid", str(mermaid)])
    assert code == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("seq  time")
    loaded = load_jsonl(trace_file)
    assert loaded == run_scenario(name, revision="2025-11-25", transport="memory", seed=3).trace()
    assert len(loaded.messages()) > 0
    assert page.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert mermaid.read_text(encoding="utf-8").startswith("sequenceDiagram")


@needs_scenarios
def test_run_unknown_scenario(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["run", "no-such-world", "--quiet"]) == 2
    assert "unknown scenario" in capsys.readouterr().err


def test_run_rejects_unknown_revision(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["run", "weather", "--revision", "1999-01-01"])
    assert "invalid choice" in capsys.readouterr().err


def test_show_prints_and_exports_a_saved_trace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "w.jsonl"
    weather_recorder().to_jsonl(path)
    assert cli.main(["show", str(path), "--method", "tools/call"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 + 2 and "tools/call #3" in out[2]
    svg = tmp_path / "w.svg"
    assert cli.main(["show", str(path), "--svg", str(svg), "--quiet"]) == 0
    assert svg.read_text(encoding="utf-8").startswith("<svg")
    assert cli.main(["show", str(tmp_path / "missing.jsonl")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_delegated_commands_pass_their_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[str]] = []

    class Fake:
        @staticmethod
        def grade_command(argv: list[str]) -> int:
            seen.append(argv)
            return 7

    monkeypatch.setitem(sys.modules, "mcp_sim.grading.commands", Fake)
    assert cli.main(["grade", "ex01", "--verbose"]) == 7
    assert seen == [["ex01", "--verbose"]]


def test_missing_delegate_says_not_available(monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "mcp_sim.bridge.commands", None)  # import fails
    assert cli.main(["serve", "weather"]) == 2
    assert "not available" in capsys.readouterr().err


def test_a_broken_delegate_is_not_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    # An ImportError raised *inside* the delegate's module is a bug to show, not "not available".
    import importlib

    real_import = importlib.import_module

    def broken(name: str, package: str | None = None) -> object:
        if name == "mcp_sim.bridge.commands":
            raise ModuleNotFoundError("No module named 'some_dependency'", name="some_dependency")
        return real_import(name, package)

    monkeypatch.setattr(importlib, "import_module", broken)
    with pytest.raises(ModuleNotFoundError, match="some_dependency"):
        cli.main(["serve", "weather"])


def test_no_command_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([]) == 2
    out = capsys.readouterr().out
    for name in ("scenarios", "run", "show", "grade", "progress", "serve", "connect"):
        assert name in out
