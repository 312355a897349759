"""``mcp-sim lab``: every lab of the table is listed, and every lab's attack works against
``vulnerable`` and fails against ``fixed`` when run through the command line (in-process through
``cli.main`` for speed, plus one real subprocess)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_sim import cli
from mcp_sim.scenarios.security import LABS
from mcp_sim.security.lab import LAYERS
from mcp_sim.trace import load_jsonl

SEEDS = (0, 3, 11)


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> object:
    assert cli.main(argv) == 0
    return json.loads(capsys.readouterr().out)


def _grouped_and_sorted() -> list[str]:
    """Every lab name, grouped by layer in the course's order, sorted within each group."""
    return [name for layer in LAYERS for name in sorted(n for n, lab in LABS.items() if lab.facts.layer == layer)]


def test_lab_list_json_names_every_lab_with_layer_summary_and_variants(capsys: pytest.CaptureFixture[str]) -> None:
    rows = _json(capsys, ["lab", "list", "--json"])
    assert isinstance(rows, list)
    assert [r["name"] for r in rows] == _grouped_and_sorted()
    assert sorted(r["name"] for r in rows) == sorted(LABS)
    for row in rows:
        lab = LABS[row["name"]]
        assert row["layer"] == lab.facts.layer and row["summary"] == lab.facts.summary
        assert row["variants"] == ["main", *lab.variants]


def test_lab_list_text_is_grouped_by_layer_and_sorted_within_each_group(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["lab", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    headings = [line for line in lines if line and not line.startswith(" ")]
    layers = [h.split(":")[0] for h in headings]
    assert layers == [layer for layer in LAYERS if any(lab.facts.layer == layer for lab in LABS.values())]
    groups: dict[str, list[str]] = {}
    current = ""
    for line in lines:
        if line and not line.startswith(" "):
            current = line.split(":")[0]
            groups[current] = []
        elif line.startswith("  ") and not line.startswith("   "):
            groups[current].append(line.split()[0])
    for layer, names in groups.items():
        assert names == sorted(names), layer
        assert names == sorted(n for n, lab in LABS.items() if lab.facts.layer == layer)
        assert any(h.startswith(f"{layer}: {len(names)} lab") for h in headings)
    assert [n for names in groups.values() for n in names] == _grouped_and_sorted()


@pytest.mark.parametrize("name", list(LABS))
def test_lab_run_vulnerable_succeeds_and_fixed_fails(capsys: pytest.CaptureFixture[str], name: str) -> None:
    for seed in SEEDS:
        bad = _json(capsys, ["lab", "run", name, "--config", "vulnerable", "--seed", str(seed), "--json"])
        good = _json(capsys, ["lab", "run", name, "--config", "fixed", "--seed", str(seed), "--json"])
        assert isinstance(bad, dict) and isinstance(good, dict)
        assert bad["attack_succeeded"] is True and bad["obtained"] and not bad["stopped_by"], (name, seed)
        assert good["attack_succeeded"] is False and isinstance(good["stopped_by"], str) and not good["obtained"], \
            (name, seed)
        assert good["legitimate_succeeded"] is True, (name, seed)
        for report in (bad, good):
            assert report["explanation"] and isinstance(report["evidence"], dict)
            assert report["threat_model"]["not_covered"] and report["seed"] == seed


def test_lab_run_variant_and_text_output(capsys: pytest.CaptureFixture[str]) -> None:
    name = "tool-poisoning"
    variant = next(iter(LABS[name].variants))
    assert cli.main(["lab", "run", name, "--config", "vulnerable", "--variant", variant, "--seed", "2"]) == 0
    out = capsys.readouterr().out
    assert "attack: SUCCEEDED" in out and f"variant {variant}" in out and "obtained:" in out
    assert cli.main(["lab", "run", name, "--config", "fixed", "--variant", variant, "--seed", "2"]) == 0
    assert "attack: FAILED" in capsys.readouterr().out


def test_lab_run_trace_is_read_by_show(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "lab.jsonl"
    report = _json(capsys, ["lab", "run", "dns-rebinding", "--config", "vulnerable", "--seed", "4",
                            "--trace", str(path), "--json"])
    assert isinstance(report, dict)
    trace = load_jsonl(path)
    assert len(trace) == report["events"] > 0
    assert any("attack" in e.marks for e in trace)
    assert cli.main(["show", str(path)]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith("seq")


@pytest.mark.parametrize("argv", [
    ["lab", "run", "no-such-lab", "--config", "fixed"],
    ["lab", "run", "tool-poisoning", "--config", "fixed", "--variant", "no-such-variant"],
    ["lab", "run", "tool-poisoning", "--config", "half-fixed"],
    ["lab", "frobnicate"],
])
def test_unknown_names_are_a_clear_error_with_exit_code_2(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "no-such-lab" in err or "no-such-variant" in err or "invalid choice" in err


def test_lab_run_in_a_real_subprocess(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "mcp_sim.cli", "lab", "run", "token-passthrough", "--config",
                           "vulnerable", "--seed", "5", "--json"], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path, check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["attack_succeeded"] is True and report["legitimate_succeeded"] is True
    missing = subprocess.run([sys.executable, "-m", "mcp_sim.cli", "lab", "run", "nope", "--config", "fixed"],
                             capture_output=True, text=True, timeout=120, cwd=tmp_path, check=False)
    assert missing.returncode == 2 and "unknown lab 'nope'" in missing.stderr
