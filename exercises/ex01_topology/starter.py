"""ex01_topology — build the host → clients → servers topology.

Edit this file, then grade it: ``grade("ex01_topology")`` in a notebook or
``mcp-sim grade ex01_topology`` in a terminal. The task is described in README.md beside this file.
"""

from __future__ import annotations

from typing import Any


def build_topology(host: str, servers: list[dict[str, Any]]) -> dict[str, Any]:
    """Return ``{"host": host, "clients": [...]}`` for these servers.

    ``servers`` is a list of dicts with ``"name"``, ``"runs"`` (``"local"`` or ``"remote"``) and either
    ``"command"`` (a list of strings, for local servers) or ``"url"`` (for remote servers).

    Each client is a dict with ``"id"`` (unique), ``"server"`` (one server's name), ``"transport"``
    (``"stdio"`` or ``"streamable-http"``) and ``"command"`` or ``"url"`` copied from its server.

    This first draft is WRONG on purpose: it gives the host a single client that talks to every
    server over stdio. Run the grader to see which rules it breaks, then fix it.
    """
    everyone = [server["name"] for server in servers]
    return {"host": host, "clients": [{"id": "client-1", "server": everyone, "transport": "stdio"}]}
