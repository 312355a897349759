"""The bridge: the simulator on a real wire (course chapter 12, "The real wire").

The simulated Client and Server speak to real MCP peers through real transports that implement the
same :class:`~mcp_sim.transports.base.MessageStream` interface as the simulated ones, on a real event
loop (wall-clock time), recording every frame in a trace of the same format:

* :mod:`~mcp_sim.bridge.stdio` — newline-delimited JSON over a process's stdin/stdout, both ends;
* :mod:`~mcp_sim.bridge.http_server` / :mod:`~mcp_sim.bridge.http_client` — Streamable HTTP on
  127.0.0.1, legacy sessions and 2026-07-28 per-request POSTs (the rules, shared with the simulated
  transport, in :mod:`mcp_sim.transports.http` and :mod:`mcp_sim.transports.sse`);
* :mod:`~mcp_sim.bridge.oauth_http` — MCP authorization on the real network: the simulated
  client's OAuth flow over httpx (``mcp-sim connect --url`` answers a ``401`` with it);
* :mod:`~mcp_sim.bridge.http_auth` — an endpoint behind OAuth, with the simulated authorization
  server built in (``mcp-sim serve --transport http --auth-server builtin``);
* :mod:`~mcp_sim.bridge.real` — ``connect_real``, ``RealServer``, ``run_real``;
* :mod:`~mcp_sim.bridge.commands` — ``mcp-sim serve`` and ``mcp-sim connect``.

Imports here are lazy so that ``mcp-sim serve`` over stdio does not load the HTTP stack.
"""

from __future__ import annotations

from typing import Any

_EXPORTS = {
    "WallClockRecorder": "mcp_sim.bridge.recording",
    "StdioServerStream": "mcp_sim.bridge.stdio",
    "StdioClientStream": "mcp_sim.bridge.stdio",
    "spawn_stdio": "mcp_sim.bridge.stdio",
    "claim_stdout": "mcp_sim.bridge.stdio",
    "StreamableHTTPEndpoint": "mcp_sim.bridge.http_server",
    "serve_http": "mcp_sim.bridge.http_server",
    "HttpClientStream": "mcp_sim.bridge.http_client",
    "open_http": "mcp_sim.bridge.http_client",
    "RealWeb": "mcp_sim.bridge.oauth_http",
    "open_oauth": "mcp_sim.bridge.oauth_http",
    "require_https_or_loopback": "mcp_sim.bridge.oauth_http",
    "BuiltinAuthorization": "mcp_sim.bridge.http_auth",
    "builtin_authorization": "mcp_sim.bridge.http_auth",
    "connect_real": "mcp_sim.bridge.real",
    "RealServer": "mcp_sim.bridge.real",
    "RealSession": "mcp_sim.bridge.real",
    "run_real": "mcp_sim.bridge.real",
    "python_command": "mcp_sim.bridge.real",
    "accept_elicitation": "mcp_sim.bridge.real",
    "serve_command": "mcp_sim.bridge.commands",
    "connect_command": "mcp_sim.bridge.commands",
    "load_server": "mcp_sim.bridge.commands",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'mcp_sim.bridge' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
