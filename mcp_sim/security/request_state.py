"""Sealed ``requestState`` and idempotent side effects (spec 2026-07-28, Multi Round-Trip Requests;
course chapter 5.3.3: "that state is not trusted authorization").

When a Server answers ``tools/call`` with an ``InputRequiredResult``, it may put a ``requestState``
string in it; the Client echoes it unchanged in the retry. The Server keeps no call stack in
between, so the state is the only memory of the first round. But the state travels through the
Client: **whoever holds it can change it, replay it, or hand it to another caller**. The spec says to
treat it as attacker-controlled and, when it influences authorization or business logic, to protect
its integrity and bind it to:

* the **principal** — the caller it was minted for (another caller's retry is refused);
* the **request** — a digest of the original arguments (a retry with different arguments is refused);
* a short **expiry** on the clock (an old state cannot be replayed later).

:class:`SealedRequestState` does that with an HMAC-SHA256 over the payload. :class:`PlainRequestState`
is the vulnerable version — readable, editable base64 JSON — to compare against. (The Server itself
uses the same idea through ``Server(state_codec=…)``: :class:`~mcp_sim.capabilities.mrtr.SealedStateCodec`
and :class:`~mcp_sim.capabilities.mrtr.PlainStateCodec`; the labs run on those.)

Sealing stops *forgery*; it does not stop the *same* caller re-sending the *same* valid retry. A
retried network request is normal (a lost response is retried), so a side effect — a payment, an
e-mail — must happen at most once per **idempotency key**: :class:`IdempotencyLedger` remembers the
first outcome per key and returns it again instead of acting twice. The sealed state's ``nonce`` is a
natural key: one confirmation, one effect (a handler finds it in ``ctx.request_state_nonce``).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol


class RequestStateRejected(Exception):
    """A ``requestState`` failed a check: ``check`` is ``malformed``, ``integrity``, ``principal``,
    ``arguments`` or ``expired``."""

    def __init__(self, check: str, detail: str) -> None:
        super().__init__(f"requestState rejected ({check}): {detail}")
        self.check = check
        self.detail = detail


def canonical_json(value: Any) -> str:
    """One spelling per JSON value (sorted keys, no spaces): the form digests and MACs are taken of."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def argument_digest(arguments: Mapping[str, Any] | None) -> str:
    """SHA-256 of the tool's ``arguments``, hex. The retry must carry the same arguments."""
    return hashlib.sha256(canonical_json(dict(arguments or {})).encode()).hexdigest()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass(frozen=True)
class OpenedState:
    """What a valid state said: the server's own ``data`` plus the binding it was checked against."""

    data: dict[str, Any]
    nonce: str
    principal: str | None
    expires_at_ms: float | None


class RequestStateCodec(Protocol):
    """Turns the server's memory of round one into the opaque ``requestState`` string and back."""

    def seal(self, data: Mapping[str, Any], *, principal: str | None, arguments: Mapping[str, Any] | None,
             now_ms: float) -> str: ...

    def open(self, state: str, *, principal: str | None, arguments: Mapping[str, Any] | None,
             now_ms: float) -> OpenedState: ...


@dataclass
class PlainRequestState:
    """Vulnerable: base64 JSON with no integrity, no binding, no expiry. Anybody can decode, edit and
    re-encode it, and the server believes whatever comes back."""

    new_nonce: Callable[[], str]

    def seal(self, data: Mapping[str, Any], *, principal: str | None, arguments: Mapping[str, Any] | None,
             now_ms: float) -> str:
        return _b64(canonical_json({"data": dict(data), "nonce": self.new_nonce()}).encode())

    def open(self, state: str, *, principal: str | None, arguments: Mapping[str, Any] | None,
             now_ms: float) -> OpenedState:
        try:
            payload = json.loads(_unb64(state))
            return OpenedState(dict(payload["data"]), str(payload["nonce"]), None, None)
        except (ValueError, KeyError, TypeError) as exc:
            raise RequestStateRejected("malformed", str(exc)) from exc


@dataclass
class SealedRequestState:
    """HMAC-sealed state bound to caller, argument digest and expiry (virtual clock).

    The wire form is ``<base64url payload>.<base64url HMAC-SHA256>``. The payload is still readable —
    sealing gives *integrity*, not secrecy; put nothing secret in it (or use an AEAD instead).
    ``key`` is the server's secret; draw it from the simulation's generator, never hard-code it.
    """

    key: bytes
    new_nonce: Callable[[], str]
    ttl_ms: float = 120_000.0

    def _mac(self, body: bytes) -> bytes:
        return hmac.new(self.key, body, hashlib.sha256).digest()

    def seal(self, data: Mapping[str, Any], *, principal: str | None, arguments: Mapping[str, Any] | None,
             now_ms: float) -> str:
        payload = {"data": dict(data), "nonce": self.new_nonce(), "sub": principal,
                   "args": argument_digest(arguments), "exp": now_ms + self.ttl_ms}
        body = canonical_json(payload).encode()
        return f"{_b64(body)}.{_b64(self._mac(body))}"

    def open(self, state: str, *, principal: str | None, arguments: Mapping[str, Any] | None,
             now_ms: float) -> OpenedState:
        try:
            body_text, mac_text = state.split(".")
            body, mac = _unb64(body_text), _unb64(mac_text)
        except ValueError as exc:
            raise RequestStateRejected("malformed", "not <payload>.<mac>") from exc
        if not hmac.compare_digest(mac, self._mac(body)):
            raise RequestStateRejected("integrity", "the MAC does not match: the state was altered or forged")
        payload = json.loads(body)
        if payload["sub"] != principal:
            raise RequestStateRejected("principal", f"minted for {payload['sub']!r}, presented by {principal!r}")
        if payload["args"] != argument_digest(arguments):
            raise RequestStateRejected("arguments", "the retry's arguments differ from the original request's")
        if now_ms >= payload["exp"]:
            raise RequestStateRejected("expired", f"expired at {payload['exp']} ms, now {now_ms} ms")
        return OpenedState(dict(payload["data"]), str(payload["nonce"]), payload["sub"], payload["exp"])


def tamper(state: str, change: Callable[[dict[str, Any]], None]) -> str:
    """What an attacker does to a state: decode the readable payload, ``change`` it, re-encode it.
    A sealed state keeps its old MAC, which no longer matches — the attacker has no key."""
    body_text, dot, mac_text = state.partition(".")
    payload = json.loads(_unb64(body_text))
    change(payload["data"])
    return _b64(canonical_json(payload).encode()) + (dot + mac_text if dot else "")


@dataclass
class IdempotencyLedger:
    """At most one side effect per key: the first outcome is stored and returned to every repeat."""

    outcomes: dict[str, Any] = field(default_factory=dict)
    repeats: list[str] = field(default_factory=list)

    def run_once(self, key: str, effect: Callable[[], Any]) -> tuple[Any, bool]:
        """``(outcome, first)``: run ``effect`` the first time ``key`` is seen, replay its outcome after."""
        if key in self.outcomes:
            self.repeats.append(key)
            return self.outcomes[key], False
        outcome = effect()
        self.outcomes[key] = outcome
        return outcome, True
