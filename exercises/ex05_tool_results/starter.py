"""ex05_tool_results — answer a tools/call or resources/read as the server, in both eras.

Edit this file, then grade it: ``grade("ex05_tool_results")`` in a notebook or
``mcp-sim grade ex05_tool_results`` in a terminal. The task is described in README.md beside this file.
"""

from __future__ import annotations

from typing import Any


def run_tool(server: dict[str, Any], name: str, city: str) -> dict[str, Any] | str:
    """The tool's handler (given): a dict on success, a string (the failure's text) when it fails."""
    if city not in server["tools"][name]["known"]:
        return f"no station in {city}"
    celsius = 10 + sum(map(ord, city)) % 20
    return {"city": city, "celsius": celsius} if name == "temperature" else {"text": f"{city}: sunny, {celsius} C"}


def answer(request: dict[str, Any], server: dict[str, Any]) -> dict[str, Any]:
    """The server's JSON-RPC response (a dict) to ``request``."""
    raise NotImplementedError("write answer()")
