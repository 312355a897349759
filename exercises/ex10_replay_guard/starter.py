"""ex10_replay_guard — a sealed requestState, and one payment per business operation.

Edit this file, then grade it: ``grade("ex10_replay_guard")`` in a notebook or
``mcp-sim grade ex10_replay_guard`` in a terminal. The task is described in README.md beside this file.
"""

from __future__ import annotations

import base64
import json
from typing import Any


def seal_state(key: str, state: dict[str, Any], caller: str | None, request: str, expires: float,
               nonce: str) -> str:
    """The requestState token for ``state``. A first draft: readable, but not sealed."""
    body = json.dumps({"state": state, "sub": caller, "req": request, "exp": expires, "nonce": nonce}).encode()
    return base64.urlsafe_b64encode(body).decode().rstrip("=") + "."


def open_state(key: str, token: str, caller: str | None, request: str, now: float) -> dict[str, Any]:
    """The envelope inside ``token``, or ValueError. A first draft: believes whatever comes back."""
    body = token.partition(".")[0]
    return dict(json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))))


def payment_key(call: dict[str, Any], invoice: str) -> str | None:
    """The key a payment is filed under (None: no key). A first draft: every request pays."""
    return None
