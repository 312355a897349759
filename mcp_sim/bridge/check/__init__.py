"""``mcp-sim check``: any real MCP server under a workload and a nemesis, in both eras, checked rule by
rule and drawn (course chapter 12).

The parts, in the order data flows through them:

* :mod:`.link` — the checker's end of a real stdio pipe: raw lines out, every frame recorded
  (:mod:`.http_link` the same over Streamable HTTP, :mod:`.http_probes` its header and status probes);
* :mod:`.session` — one era's way of talking: the legacy handshake, or the modern per-request ``_meta``;
* :mod:`.workloads` — what is asked: lists with pagination, calls, reads, prompts, ping, concurrency,
  cancellation, each request marked with what it expects;
* :mod:`.nemesis` — what is done to the server: duplicates, reused ids, malformed frames, oversized
  input, a hang-up mid-call, kill and restart; seeded, so the same seed gives the same schedule;
* :mod:`.checkers` and :mod:`.expectations` — what the trace shows, as findings citing the rulebook;
* :mod:`.findings` — the finding and the report (``passed`` exactly when no MUST is broken);
* :mod:`.page` and :mod:`.command` — the HTML page and the command line.
"""

from mcp_sim.bridge.check.findings import CATEGORIES, CheckReport, Finding
from mcp_sim.bridge.check.run import CheckOptions, check_trace, eras_of_links, run_check

__all__ = ["CATEGORIES", "CheckOptions", "CheckReport", "Finding", "check_trace", "eras_of_links", "run_check"]
