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
    notebook: str
    """The notebook's file name in ``notebooks/``, without ``.ipynb`` (planned: the name it will have)."""


CHAPTERS: Final = (
    Chapter("00", "Start here", "how the course works, the three layers, grading", "written", "00_start_here"),
    Chapter("01", "Roles", "Host, Client, Server; one client per server; not a sandbox", "written", "01_roles"),
    Chapter("02", "JSON-RPC messages", "the message format: JSON-RPC 2.0, ids, errors, malformed input", "written",
            "02_json_rpc_messages"),
    Chapter("03", "The handshake and versions", "initialize, _meta, server/discover, era detection", "written",
            "03_handshake_and_versions"),
    Chapter("04", "When the server needs the client", "elicitation, sampling, roots, logging; MRTR", "written",
            "04_when_the_server_needs_the_client"),
    Chapter("05", "What servers offer", "tools, resources, templates, prompts, completion, pagination", "written",
            "05_what_servers_offer"),
    Chapter("06", "Transports", "stdio, Streamable HTTP, cancellation, faults", "written", "06_transports"),
    Chapter("07", "Change and caching", "list_changed, subscriptions/listen, caching with ttlMs/cacheScope", "written",
            "07_change_and_caching"),
    Chapter("08", "Tasks", "long-running work: 2025-11-25 tasks and the 2026-07-28 extension", "written", "08_tasks"),
    Chapter("09", "The complete call", "one request through the three layers and both eras; who decides what",
            "written", "09_the_complete_call"),
    Chapter("10", "Security boundaries", "the security lab: attacks and fixes", "planned", "10_security_boundaries"),
    Chapter("11", "Authorization", "OAuth 2.1 for MCP: discovery, PKCE, audiences, token passthrough", "written",
            "11_authorization"),
    Chapter("12", "The real wire", "real MCP clients and servers, the official SDK", "written", "12_the_real_wire"),
)
"""The chapters in order."""
