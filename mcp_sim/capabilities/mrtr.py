"""Asking the client for input, in both eras (spec "Client features" and 2026-07-28 "Multi Round-Trip
Requests"; course chapter 04).

A handler asks with ``await ctx.elicit(...)``, ``ctx.sample(...)``, ``ctx.list_roots()`` or several at
once with ``ctx.ask({"key": elicit(...), ...})``. What travels depends on the era:

* **legacy** (≤ 2025-11-25): the server sends a JSON-RPC request (``elicitation/create`` …) to the
  client *while* the ``tools/call`` is in flight, and waits for the response;
* **modern** (2026-07-28): servers never send requests. The handler stops, the server answers the
  ``tools/call`` with an ``InputRequiredResult`` (``resultType: "input_required"``, keyed
  ``inputRequests`` and a ``requestState``), and the client retries the same call with
  ``inputResponses``. The handler then runs again *from the top*; this time its asks find their
  answers.

Because the server is stateless, answers from earlier rounds travel in ``requestState`` — which the
client could edit. :class:`PlainStateCodec` (base64 JSON) shows why that is dangerous;
:class:`SealedStateCodec` seals the state with an HMAC bound to the caller, the request and an expiry,
and gives each round-trip flow a **nonce** the handler reads as ``ctx.request_state_nonce``: sealing
stops forgery, not a replay of the same valid retry, so a side effect (a payment) should happen once
per nonce — an idempotency key the client cannot choose.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from mcp_sim.protocol.errors import invalid_params
from mcp_sim.protocol.revisions import LATEST, revision_at
from mcp_sim.security.identity import AuthInfo


@dataclass(frozen=True)
class InputRequest:
    """One question for the client: an elicitation, a sampling request or a roots listing."""

    method: str
    """``elicitation/create``, ``sampling/createMessage`` or ``roots/list``."""
    fields: Mapping[str, Any] = field(default_factory=dict)
    kind: str = "form"
    """For elicitation: ``form`` or ``url``."""

    @property
    def short_name(self) -> str:
        return {"elicitation/create": "elicitation", "sampling/createMessage": "sampling",
                "roots/list": "roots"}[self.method]

    def capability(self, revision: str) -> str:
        """The client capability this question needs, as a dotted path."""
        if self.method == "elicitation/create":
            if self.kind == "url":
                return "elicitation.url"
            return "elicitation.form" if revision_at(revision).has_elicitation_modes else "elicitation"
        if self.method == "sampling/createMessage":
            return "sampling.tools" if self.fields.get("tools") else "sampling"
        return "roots"

    def params(self, revision: str, elicitation_id: str | None = None) -> dict[str, Any]:
        """The request's ``params`` as ``revision`` spells them."""
        if self.method == "elicitation/create":
            if self.kind == "url":
                out: dict[str, Any] = {"mode": "url", "message": self.fields["message"], "url": self.fields["url"]}
                if not revision_at(revision).is_modern:
                    out["elicitationId"] = self.fields.get("elicitationId") or elicitation_id or "elicitation"
                return out
            out = {"mode": "form"} if revision_at(revision).has_elicitation_modes else {}
            out.update(message=self.fields["message"], requestedSchema=self.fields["requestedSchema"])
            return out
        return {k: v for k, v in self.fields.items() if v is not None}

    def to_json(self, revision: str) -> dict[str, Any]:
        """The ``InputRequest`` entry of an ``InputRequiredResult`` (``method`` + ``params``)."""
        if self.method == "roots/list":
            return {"method": self.method}
        return {"method": self.method, "params": self.params(revision)}


def elicit(message: str, requested_schema: Mapping[str, Any]) -> InputRequest:
    """Ask the user to fill in a form described by a flat JSON Schema object."""
    return InputRequest("elicitation/create", {"message": message, "requestedSchema": dict(requested_schema)})


def elicit_url(message: str, url: str, elicitation_id: str | None = None) -> InputRequest:
    """Send the user to a URL (for secrets the client must not see). 2025-11-25 and later."""
    return InputRequest("elicitation/create", {"message": message, "url": url, "elicitationId": elicitation_id},
                        kind="url")


def sample(messages: Sequence[Any], max_tokens: int, *, system_prompt: str | None = None,
           temperature: float | None = None, model_preferences: Mapping[str, Any] | None = None,
           stop_sequences: Sequence[str] | None = None, tools: Sequence[Mapping[str, Any]] | None = None,
           ) -> InputRequest:
    """Ask the client's model for a completion. Strings become user text messages."""
    msgs = [{"role": "user", "content": {"type": "text", "text": m}} if isinstance(m, str) else dict(m)
            for m in messages]
    return InputRequest("sampling/createMessage", {
        "messages": msgs, "modelPreferences": dict(model_preferences) if model_preferences else None,
        "systemPrompt": system_prompt, "temperature": temperature, "maxTokens": max_tokens,
        "stopSequences": list(stop_sequences) if stop_sequences else None,
        "tools": [dict(t) for t in tools] if tools else None})


def list_roots() -> InputRequest:
    """Ask which directories or files the user shared with this server."""
    return InputRequest("roots/list", {})


class InputRequired(Exception):
    """Raised inside a modern handler whose asks are not all answered yet: the server stops the
    handler and answers with an ``InputRequiredResult`` carrying ``requests`` and sealed ``state``."""

    def __init__(self, requests: Mapping[str, InputRequest], state: Mapping[str, Any]) -> None:
        super().__init__(f"input required: {', '.join(requests)}")
        self.requests = dict(requests)
        self.state = dict(state)


class ClientInputUnavailable(Exception):
    """The handler asked for something this client cannot give (legacy: capability not declared at
    ``initialize``, or the client answered with an error). A tool call reports it as ``isError``."""


# --- requestState ---------------------------------------------------------------------------------

class RoundTripCaller(Protocol):
    """What a codec reads about the request whose state it seals: who calls, which request, when.
    The handler's :class:`~mcp_sim.capabilities.context.Context` is one."""

    request_state_nonce: str | None

    @property
    def auth(self) -> AuthInfo | None: ...

    @property
    def request_digest(self) -> str: ...

    def now(self) -> float: ...


class StateCodec(Protocol):
    """Turns the server's between-rounds state into the opaque ``requestState`` string and back.
    ``open`` raises :class:`~mcp_sim.protocol.errors.McpError` (``-32602``) for state it rejects."""

    def seal(self, state: Mapping[str, Any], ctx: RoundTripCaller) -> str: ...

    def open(self, token: str, ctx: RoundTripCaller) -> dict[str, Any]: ...


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode((text + "=" * (-len(text) % 4)).encode())


def _rejected(why: str) -> Exception:
    return invalid_params(f"Invalid requestState: {why}",
                          rule="Servers treat requestState as attacker-controlled and reject state they did not "
                               "mint for this caller and request.", revision=LATEST)


class PlainStateCodec:
    """base64 of plain JSON: readable *and editable* by the client. Fine for a demo, dangerous when the
    state carries answers that decide something (an approval, a tenant, an amount)."""

    def seal(self, state: Mapping[str, Any], ctx: RoundTripCaller) -> str:
        return _b64(json.dumps(state, separators=(",", ":"), sort_keys=True).encode())

    def open(self, token: str, ctx: RoundTripCaller) -> dict[str, Any]:
        try:
            data = json.loads(_unb64(token))
        except (binascii.Error, ValueError, UnicodeDecodeError):
            raise _rejected("not base64 JSON") from None
        if not isinstance(data, dict):
            raise _rejected("not a JSON object")
        return data


def request_digest(method: str, params: Mapping[str, Any]) -> str:
    """SHA-256 of the request that started the rounds: its method and params, without ``_meta`` and the
    round-trip fields, so a state minted for one call cannot be replayed on another."""
    core = {k: v for k, v in params.items() if k not in ("_meta", "inputResponses", "requestState", "task")}
    text = json.dumps({"method": method, "params": core}, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


class SealedStateCodec:
    """HMAC-SHA256-sealed state bound to the caller (``auth.subject``), the request digest and an expiry
    on the simulation's clock. The client can still *read* it (sign, not encrypt) but not change it.

    The envelope also carries a ``nonce``, minted when a flow's first ``InputRequiredResult`` is sealed
    and kept through its later rounds; on a retry the handler finds it in ``ctx.request_state_nonce``.
    Nonces are derived from the secret and a counter, so they are deterministic in a simulation yet
    unguessable without the secret."""

    def __init__(self, secret: bytes, *, ttl_seconds: float = 300.0) -> None:
        self._secret = secret
        self.ttl_seconds = ttl_seconds
        self._minted = 0

    def _mac(self, body: bytes) -> str:
        return _b64(hmac.new(self._secret, body, hashlib.sha256).digest())

    def _new_nonce(self, ctx: RoundTripCaller) -> str:
        self._minted += 1
        seed = f"nonce|{self._minted}|{ctx.request_digest}".encode()
        return _b64(hmac.new(self._secret, seed, hashlib.sha256).digest()[:12])

    def seal(self, state: Mapping[str, Any], ctx: RoundTripCaller) -> str:
        nonce = ctx.request_state_nonce or self._new_nonce(ctx)
        envelope = {"state": dict(state), "sub": ctx.auth.subject if ctx.auth else None,
                    "req": ctx.request_digest, "exp": round(ctx.now() + self.ttl_seconds, 3), "nonce": nonce}
        body = json.dumps(envelope, separators=(",", ":"), sort_keys=True).encode()
        return f"{_b64(body)}.{self._mac(body)}"

    def open(self, token: str, ctx: RoundTripCaller) -> dict[str, Any]:
        body_text, dot, mac = token.partition(".")
        try:
            body = _unb64(body_text)
        except (binascii.Error, ValueError):
            raise _rejected("malformed") from None
        if not dot or not hmac.compare_digest(mac, self._mac(body)):
            raise _rejected("the seal does not match (was it edited?)")
        envelope = json.loads(body)
        if envelope.get("sub") != (ctx.auth.subject if ctx.auth else None):
            raise _rejected("it was issued to another caller")
        if envelope.get("req") != ctx.request_digest:
            raise _rejected("it was issued for a different request")
        if ctx.now() >= envelope.get("exp", 0):  # valid for ttl seconds: no longer at the end of them
            raise _rejected("it has expired")
        nonce = envelope.get("nonce")
        ctx.request_state_nonce = nonce if isinstance(nonce, str) else None
        state: dict[str, Any] = envelope.get("state") or {}
        return state
