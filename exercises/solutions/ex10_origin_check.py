"""Reference solution for ex10_origin_check. Try the exercise before reading this."""

from __future__ import annotations


def origin_allowed(origin: str, port: int) -> bool:
    """Only the server's own local pages, compared as whole strings; "null" is never among them."""
    return origin in {f"http://localhost:{port}", f"http://127.0.0.1:{port}"}
