"""The Host benchmark still runs and reports every configuration against the official SDK.

Performance targets live in the benchmark script, never in a timed test: this test runs it with a
handful of calls and checks the *shape* of its report (every configuration measured, accelerated and
readable, the SDK measured in the same run, the ratios present, the trace really recorded when
tracing is on), not its speed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_host_benchmark_reports_every_configuration_and_the_sdk_ratio() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "host.py"), "--calls", "20", "--repeat", "2",
                           "--opcodes"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    configurations = [f"mcp_sim_{rev}_tracing_{state}" for rev in ("2025-11-25", "2026-07-28")
                      for state in ("on", "off")]
    readable = [f"readable_{key}" for key in configurations]
    for key in configurations + readable:
        assert report[key]["calls"] == 20 and report[key]["round_trips_per_second"] > 0
    # Tracing on records every frame and the Host's talk (6 events a call); off records nothing.
    for prefix in ("", "readable_"):
        assert report[f"{prefix}mcp_sim_2025-11-25_tracing_on"]["events_recorded"] >= 6 * 20
        assert report[f"{prefix}mcp_sim_2025-11-25_tracing_off"]["events_recorded"] == 0
    assert report["mcp_sdk_in_memory_legacy"]["round_trips_per_second"] > 0
    assert set(report["ratio_vs_sdk"]) == set(configurations)
    assert set(report["ratio_vs_sdk_median_of_rounds"]) == set(configurations)
    assert set(report["readable_ratio_vs_sdk"]) == set(readable)
    assert set(report["readable_ratio_vs_sdk_median_of_rounds"]) == set(readable)
    # The machine-independent figure: recording costs bytecodes, so tracing on executes more, and
    # the accelerated twins execute fewer than the readable implementation.
    opcodes = report["python_opcodes_per_round_trip"]
    assert set(opcodes) == set(configurations + readable)
    for revision in ("2025-11-25", "2026-07-28"):
        for prefix in ("", "readable_"):
            assert opcodes[f"{prefix}mcp_sim_{revision}_tracing_on"] > opcodes[f"{prefix}mcp_sim_{revision}_tracing_off"] > 0
        assert opcodes[f"readable_mcp_sim_{revision}_tracing_on"] > opcodes[f"mcp_sim_{revision}_tracing_on"]


def test_http_load_benchmark_reports_time_and_memory_for_every_size_in_both_eras() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "http_load.py"), "--sizes", "2", "5",
                           "--calls", "1", "--repeat", "2"], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["calls_per_client"] == 1 and report["repeat"] == 2
    for era in ("legacy", "modern"):
        rows = report[era]["clients"]
        assert set(rows) == {"2", "5"}
        for clients, row in rows.items():
            assert row["wall_seconds"] > 0 and row["peak_bytes"] > 0
            assert row["peak_bytes_per_client"] == round(row["peak_bytes"] / int(clients))
            assert row["wall_ms_per_client"] > 0 and row["retained_bytes_per_client"] >= 0
            assert row["cpu_seconds"] > 0 and row["cpu_seconds_python_pacing"] > 0
            assert row["full_collections_python_pacing"] >= 0 and row["collector_cpu_seconds_python_pacing"] >= 0
        assert report[era]["per_client_cost_ratio_5_vs_2"] > 0
        assert report[era]["per_client_cpu_cost_ratio_python_pacing_5_vs_2"] > 0
        assert report[era]["per_client_cpu_cost_ratio_5_vs_2"] > 0
        assert report[era]["per_client_cpu_cost_ratio_without_collector_5_vs_2"] > 0


def test_check_benchmark_reports_each_size_and_the_target() -> None:
    # the smallest run: the small server and one size more, once each; the figures' shape, not their speed
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "check.py"), "--tools", "0", "1", "--repeat", "1"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert set(report) == {"python", "machine", "target_s", "by_tools", "small_s", "meets_target"}
    assert report["target_s"] == 20 and isinstance(report["meets_target"], bool)
    assert set(report["by_tools"]) == {"2", "3"}  # the twin's two tools, plus none and one extra
    for row in report["by_tools"].values():
        assert set(row) == {"median_s", "runs_s", "frames", "must_findings"}
        assert row["median_s"] > 0 and len(row["runs_s"]) == 1 and all(t > 0 for t in row["runs_s"])
        assert row["frames"] > 50  # both eras' workloads really ran and were recorded
        assert row["must_findings"] == 0  # the correct twin breaks no MUST at any size
    assert report["small_s"] == report["by_tools"]["2"]["median_s"]
    assert report["meets_target"] == (report["small_s"] < 20)
    # one more tool is one more tool listed and called: the run carries more frames
    assert report["by_tools"]["3"]["frames"] > report["by_tools"]["2"]["frames"]
