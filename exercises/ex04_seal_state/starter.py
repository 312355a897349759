"""ex04_seal_state — seal and verify MRTR requestState.

Edit this file, then grade it: ``grade("ex04_seal_state")`` in a notebook or
``mcp-sim grade ex04_seal_state`` in a terminal. The task is described in README.md beside this file.
"""

from __future__ import annotations

from typing import Any


def seal_state(key: bytes, state: dict[str, Any], caller: str, arguments: dict[str, Any], now: float,
               ttl: float) -> str:
    """A token carrying ``state``, integrity-protected with ``key`` and bound to ``caller``, a digest of
    ``arguments`` and the expiry ``now + ttl``."""
    raise NotImplementedError("write seal_state()")


def open_state(key: bytes, token: str, caller: str, arguments: dict[str, Any], now: float) -> dict[str, Any]:
    """The state inside ``token``; raise ``ValueError`` if the token is forged, tampered with, presented
    by another caller, for other arguments, expired, or not a token at all."""
    raise NotImplementedError("write open_state()")
