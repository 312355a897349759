"""How long ``mcp-sim check --era both`` takes on a small server, and how it grows with its tools.

The server is the check zoo's correct twin (``tests/check_zoo/server.py``: plain Python, dual-era,
stdio), with ``--tools N`` extra tools; each run is the full workload under the whole default nemesis
in both eras (six processes: workload, restart and a second process per era). ``--sdk`` also times the
official Python SDK's server (``tests/sdk_server.py``), whose start-up dominates.

Target: the small server (2 tools) checked in under 20 s on this machine (``small_s``).

Run: ``python benchmarks/check.py [--tools 2 20 100] [--repeat N] [--sdk]`` (prints one JSON object).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import anyio

from mcp_sim.bridge.check import CheckOptions, run_check

ROOT = Path(__file__).resolve().parents[1]
TWIN = ROOT / "tests" / "check_zoo" / "server.py"
SDK = ROOT / "tests" / "sdk_server.py"


def timed(command: list[str], repeat: int) -> dict[str, Any]:
    """Median wall time of ``repeat`` full checks of ``command``, with the size of the last run."""
    times, frames, must = [], 0, 0
    for _ in range(repeat):
        start = time.perf_counter()
        report, trace = anyio.run(run_check, command, CheckOptions())
        times.append(time.perf_counter() - start)
        frames = sum(1 for e in trace if e.message is not None or e.kind == "invalid")
        must = sum(1 for f in report.findings if f.strength == "MUST")
    return {"median_s": round(statistics.median(times), 2), "runs_s": [round(t, 2) for t in times],
            "frames": frames, "must_findings": must}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", type=int, nargs="+", default=[0, 20, 100],
                        help="extra tools beyond the twin's two (0 = the small server)")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--sdk", action="store_true", help="also time the official SDK's server")
    args = parser.parse_args()
    by_tools = {str(2 + n): timed([sys.executable, str(TWIN), "--tools", str(n)], args.repeat) for n in args.tools}
    out: dict[str, Any] = {"python": platform.python_version(), "machine": platform.machine(),
                           "target_s": 20, "by_tools": by_tools}
    smallest = by_tools[str(2 + min(args.tools))]
    out["small_s"] = smallest["median_s"]
    out["meets_target"] = smallest["median_s"] < 20
    if args.sdk:
        out["sdk_server"] = timed([sys.executable, str(SDK)], args.repeat)
    sys.stdout.write(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
