"""How long each course notebook takes to execute in a fresh kernel (target: under 10 s each).

Run: ``python benchmarks/notebooks.py`` (prints one JSON object). The notebooks are executed in memory
from their committed form; nothing is written.
"""

from __future__ import annotations

import json
import time

import nbformat

from mcp_sim.course.notebooks import NOTEBOOKS, execute


def main() -> None:
    figures = {}
    for path in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        start = time.perf_counter()
        execute(nb)
        figures[path.stem] = round(time.perf_counter() - start, 2)
    print(json.dumps({"benchmark": "notebook execution, seconds (kernel start included)",
                      "target_s": 10, "seconds": figures, "max_s": max(figures.values())}, indent=2))


if __name__ == "__main__":
    main()
