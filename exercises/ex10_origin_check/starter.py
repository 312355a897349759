"""ex10_origin_check — Origin validation for a local HTTP server.

Edit this file, then grade it: ``grade("ex10_origin_check")`` in a notebook or
``mcp-sim grade ex10_origin_check`` in a terminal. The task is described in README.md beside this file.
"""

from __future__ import annotations


def origin_allowed(origin: str, port: int) -> bool:
    """May a browser request with this Origin reach the server on 127.0.0.1:port?
    A first draft: the server listens on loopback only, so every request is local — isn't it?"""
    return True
