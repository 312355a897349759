"""Reference solution for ex01_topology. Try the exercise before reading this."""

from __future__ import annotations

from typing import Any


def build_topology(host: str, servers: list[dict[str, Any]]) -> dict[str, Any]:
    """One client per server, owned by the host; the transport follows where the server runs."""
    clients = []
    for number, server in enumerate(servers, start=1):
        client: dict[str, Any] = {"id": f"client-{number}", "server": server["name"]}
        if server["runs"] == "local":
            client["transport"] = "stdio"          # the client launches the server as a subprocess
            client["command"] = list(server["command"])
        else:
            client["transport"] = "streamable-http"  # the server is already running, at a URL
            client["url"] = server["url"]
        clients.append(client)
    return {"host": host, "clients": clients}
