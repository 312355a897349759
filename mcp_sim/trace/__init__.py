"""Traces: what flowed, recorded at the transport boundary, and the views that explain it.

* :mod:`~mcp_sim.trace.recorder` — :class:`Recorder` and :class:`TraceEvent` (the choke point);
* :mod:`~mcp_sim.trace.events` — :class:`Trace` (filter, diff) and :class:`TraceDiff`;
* :mod:`~mcp_sim.trace.captions` — the sentence and the arrow label of every event;
* :mod:`~mcp_sim.trace.sequence` — the SVG sequence diagram; :mod:`~mcp_sim.trace.table` — its text twin;
* :mod:`~mcp_sim.trace.topology` and :mod:`~mcp_sim.trace.lifecycle_diagram` — Graphviz diagrams;
* :mod:`~mcp_sim.trace.jsonl`, :mod:`~mcp_sim.trace.mermaid`, :mod:`~mcp_sim.trace.page` — exports.
"""

from mcp_sim.trace.events import DiffEntry, Trace, TraceDiff
from mcp_sim.trace.jsonl import load_jsonl, loads_jsonl, to_jsonl
from mcp_sim.trace.lifecycle_diagram import LifecycleDiagram
from mcp_sim.trace.mermaid import to_mermaid
from mcp_sim.trace.page import trace_page
from mcp_sim.trace.recorder import Recorder, TraceEvent
from mcp_sim.trace.sequence import SequenceDiagram
from mcp_sim.trace.table import TraceTable
from mcp_sim.trace.topology import ServerPlacement, TopologyDiagram

__all__ = [
    "DiffEntry",
    "LifecycleDiagram",
    "Recorder",
    "SequenceDiagram",
    "ServerPlacement",
    "TopologyDiagram",
    "Trace",
    "TraceDiff",
    "TraceEvent",
    "TraceTable",
    "load_jsonl",
    "loads_jsonl",
    "to_jsonl",
    "to_mermaid",
    "trace_page",
]
