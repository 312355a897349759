"""Reference solution for ex04_seal_state. Try the exercise before reading this."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from typing import Any


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _digest(arguments: dict[str, Any]) -> str:
    canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _mac(key: bytes, payload: str) -> bytes:
    return hmac.new(key, payload.encode("ascii"), hashlib.sha256).digest()


def seal_state(key: bytes, state: dict[str, Any], caller: str, arguments: dict[str, Any], now: float,
               ttl: float) -> str:
    """payload.mac — the payload binds the state to caller, arguments digest and expiry."""
    body = {"state": state, "caller": caller, "args": _digest(arguments), "exp": now + ttl}
    payload = _b64(json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))
    return f"{payload}.{_b64(_mac(key, payload))}"


def open_state(key: bytes, token: str, caller: str, arguments: dict[str, Any], now: float) -> dict[str, Any]:
    """The sealed state, or ValueError for a forged, tampered, replayed or expired token."""
    try:
        payload, mac = token.split(".")
        received = _unb64(mac)
        payload.encode("ascii")
    except (ValueError, binascii.Error, UnicodeEncodeError):
        raise ValueError("malformed requestState") from None
    if not hmac.compare_digest(_mac(key, payload), received):
        raise ValueError("requestState was not sealed by this server")
    body = json.loads(_unb64(payload).decode("utf-8"))
    if body["caller"] != caller:
        raise ValueError("requestState belongs to another caller")
    if body["args"] != _digest(arguments):
        raise ValueError("requestState was issued for other arguments")
    if now >= body["exp"]:
        raise ValueError("requestState has expired")
    state: dict[str, Any] = body["state"]
    return state
