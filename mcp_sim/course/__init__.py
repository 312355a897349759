"""The course: its chapters, the notebook build tooling and predict-then-reveal questions.

Module docstrings across the package say which chapter explains them ("course chapter 06"); this
outline is where those numbers are defined. Chapters marked ``planned`` have their simulator parts in
place but no notebook yet.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal


@dataclass(frozen=True)
class Chapter:
    number: str
    title: str
    covers: str
    status: Literal["written", "planned"]


CHAPTERS: Final = (
    Chapter("00", "Start here", "how the course works, the three layers, grading", "written"),
    Chapter("01", "Roles", "Host, Client, Server; one client per server; not a sandbox", "written"),
    Chapter("02", "JSON-RPC messages", "the message format: JSON-RPC 2.0, ids, errors, malformed input", "written"),
    Chapter("03", "The handshake and versions", "initialize, _meta, server/discover, era detection", "written"),
    Chapter("04", "When the server needs the client", "elicitation, sampling, roots, logging; MRTR", "written"),
    Chapter("05", "What servers offer", "tools, resources, templates, prompts, completion, pagination", "written"),
    Chapter("06", "Transports", "stdio, Streamable HTTP, cancellation, faults", "planned"),
    Chapter("07", "Change", "list_changed, subscriptions/listen, caching with ttlMs/cacheScope", "planned"),
    Chapter("08", "Tasks", "long-running work: 2025-11-25 tasks and the 2026-07-28 extension", "written"),
    Chapter("09", "Security boundaries", "the security lab: attacks and fixes", "planned"),
    Chapter("10", "The real wire", "real MCP clients and servers, the official SDK", "planned"),
)
"""The chapters in order."""
