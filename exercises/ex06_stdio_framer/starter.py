"""ex06_stdio_framer — newline framing of a stdio byte stream.

Edit this file, then grade it: ``grade("ex06_stdio_framer")`` in a notebook or
``mcp-sim grade ex06_stdio_framer`` in a terminal. The task is described in README.md beside this file.
"""

from __future__ import annotations


def feed(pending: bytes, chunk: bytes) -> tuple[list[str], bytes]:
    """``(frames, pending)``: the messages ``chunk`` completed, as text, and the bytes kept for later.

    A first draft that trusts each read to hold whole messages — it does not."""
    return [line for line in chunk.decode("utf-8", errors="replace").splitlines()], b""
