"""Reference solution for ex03_version_negotiation. Try the exercise before reading this."""

from __future__ import annotations


def choose_version(requested: str, supported: list[str]) -> str:
    """The server's answer: the requested version if supported, else its own latest."""
    if requested in supported:
        return requested
    return max(supported)  # ISO dates sort correctly as strings


def client_accepts(chosen: str, client_supported: list[str]) -> bool:
    """The client continues only with a version it speaks; otherwise it disconnects."""
    return chosen in client_supported


def handshake(client_supported: list[str], server_supported: list[str]) -> str | None:
    """The version both sides use, or None when the client disconnects."""
    offered = max(client_supported)
    chosen = choose_version(offered, server_supported)
    return chosen if client_accepts(chosen, client_supported) else None
