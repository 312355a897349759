"""``requestState`` as an attacker sees it, and idempotent side effects (spec 2026-07-28, Multi
Round-Trip Requests; course chapter 04: "that state is not trusted authorization").

When a Server answers ``tools/call`` with an ``InputRequiredResult``, it may put a ``requestState``
string in it; the Client echoes it unchanged in the retry. The Server keeps no call stack in
between, so the state is the only memory of the first round. But the state travels through the
Client: **whoever holds it can change it, replay it, or hand it to another caller**. The spec says to
treat it as attacker-controlled and, when it influences authorization or business logic, to protect
its integrity and bind it to the caller, the original request and a short expiry.

The Server does that through ``Server(state_codec=…)``: :class:`~mcp_sim.capabilities.mrtr.SealedStateCodec`
(an HMAC over the state, the caller, the request digest and the expiry) or, to show the danger,
:class:`~mcp_sim.capabilities.mrtr.PlainStateCodec` (readable, editable base64 JSON). This module holds
the two things the security lab adds around them: :func:`tamper`, what a component on the path does to
a state, and :class:`IdempotencyLedger`.

Sealing stops *forgery*; it does not stop the *same* caller re-sending the *same* valid retry, nor
running the whole flow again. A retried network request is normal (a lost response is retried), so a
side effect — a payment, an e-mail — must happen at most once per **idempotency key**:
:class:`IdempotencyLedger` remembers the first outcome per key and returns it again instead of acting
twice. The key names the **business operation** ("this payer pays this invoice"), not the round
trip: the sealed state's ``nonce`` (``ctx.request_state_nonce``) changes with every new flow, so a
ledger keyed by it still pays twice when the user — or anyone driving their client — starts again.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


def canonical_json(value: Any) -> str:
    """Sorted keys, no spaces: the same value always gives the same bytes (what a MAC or a digest needs)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def tamper(token: str, change: Callable[[dict[str, Any]], None]) -> str:
    """What a component on the path does to a ``requestState``: decode the readable JSON (both server
    codecs only *encode* it, neither encrypts), ``change`` the server's state in place, re-encode it.
    A sealed state keeps its old MAC, which no longer matches — the attacker does not have the key."""
    body, dot, mac = token.partition(".")
    data = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    change(data["state"] if dot else data)  # sealed: {"state": …, "sub", "req", "exp", "nonce"}
    text = json.dumps(data, separators=(",", ":"), sort_keys=True)
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=") + (dot + mac if dot else "")


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
