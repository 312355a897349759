"""Reference solution for ex10_replay_guard. Try the exercise before reading this."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from typing import Any


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _mac(key: str, body: bytes) -> str:
    return _b64(hmac.new(bytes.fromhex(key), body, hashlib.sha256).digest())


def seal_state(key: str, state: dict[str, Any], caller: str | None, request: str, expires: float,
               nonce: str) -> str:
    """The envelope in readable base64url JSON, then '.', then its HMAC: signed, not encrypted."""
    body = json.dumps({"state": state, "sub": caller, "req": request, "exp": expires, "nonce": nonce},
                      sort_keys=True, separators=(",", ":")).encode()
    return f"{_b64(body)}.{_mac(key, body)}"


def open_state(key: str, token: str, caller: str | None, request: str, now: float) -> dict[str, Any]:
    """The envelope, if this server sealed it for this caller and this request and it has not expired."""
    body_text, dot, mac = token.partition(".")
    try:
        body = _unb64(body_text)
    except (binascii.Error, ValueError):
        raise ValueError("malformed requestState") from None
    if not dot or not hmac.compare_digest(mac, _mac(key, body)):
        raise ValueError("the seal does not match: the state was edited or not made here")
    envelope = json.loads(body)
    if envelope.get("sub") != caller:
        raise ValueError("issued to another caller")
    if envelope.get("req") != request:
        raise ValueError("issued for another request")
    if now >= envelope.get("exp", 0):  # valid for its ttl, no longer at the end of it
        raise ValueError("expired")
    return dict(envelope)


def payment_key(call: dict[str, Any], invoice: str) -> str | None:
    """One payment per payer and invoice, however many flows, retries or devices ask for it."""
    return f"{call['subject']}|pay|{invoice}"
