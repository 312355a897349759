"""Exercise ex10_replay_guard (chapter 10): a sealed requestState, and one payment per operation.

The learner writes the bank Server's two guards around a Multi Round-Trip payment:

* ``seal_state(key, state, caller, request, expires, nonce)`` and ``open_state(key, token, caller,
  request, now)`` — the ``requestState`` codec: an envelope ``{"state", "sub", "req", "exp", "nonce"}``
  in base64url JSON, a ``"."``, and the base64url HMAC-SHA256 of the envelope's bytes under ``key``
  (hex); ``open_state`` returns the envelope or raises ``ValueError``;
* ``payment_key(call, invoice)`` — the idempotency key a payment is filed under (``None``: no key).

The grader runs ``requeststate-tampering`` with the learner's codec inside the bank, and
``requeststate-replay`` with the learner's key, every variant. Direct cases seal a state with the
learner's code and open it in situations the labs do not reach (another caller, another request,
after expiry, an edited envelope); the expected verdict is the lab's own fixed codec's on the very
same token, and the expected key equalities are the lab's own fixed key's.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from hypothesis import strategies as st

from mcp_sim.capabilities.mrtr import RoundTripCaller
from mcp_sim.grading.differential import Mismatch
from mcp_sim.grading.exercises.ex10_labs import (
    Asker,
    checked,
    expect_lab_holds,
    lab_kinds,
    lab_seed,
    run_learner_lab,
    split_kind,
)
from mcp_sim.grading.exercises.generated import corners_then_generated
from mcp_sim.grading.learner_code import LearnerError
from mcp_sim.grading.model import Check, CheckContext, CheckFailed, Exercise, Hint
from mcp_sim.protocol.errors import McpError, invalid_params
from mcp_sim.scenarios.security import LABS
from mcp_sim.scenarios.security.payments import Idempotency, StateSeal, iban
from mcp_sim.security.identity import AuthInfo, pick_distinct, pick_name

R_SEAL = "mrtr.state-integrity"
R_ONCE = "security.idempotent-side-effects"
TTL = 300.0

_FIXED_CODEC = LABS["requeststate-tampering"].defences["fixed"].codec
_FIXED_KEY = LABS["requeststate-replay"].defences["fixed"].key


def _rejected(why: str) -> McpError:
    return invalid_params(f"Invalid requestState: {why}", rule=R_SEAL)


class LearnerCodec:
    """The bank's ``state_codec`` in the graded runs: every seal and open is the learner's."""

    def __init__(self, secret: bytes, asker: Asker) -> None:
        self.key = secret.hex()
        self.asker = asker
        self.minted = 0

    def seal(self, state: Any, ctx: RoundTripCaller) -> str:
        if ctx.request_state_nonce is None:
            self.minted += 1
            nonce = hashlib.sha256(f"{self.key}|{self.minted}".encode()).hexdigest()[:16]
        else:
            nonce = ctx.request_state_nonce
        subject = ctx.auth.subject if ctx.auth else None
        token = self.asker.ask("seal_state", self.key, dict(state), subject, ctx.request_digest,
                               round(ctx.now() + TTL, 3), nonce, fallback="")
        checked(token, str, "seal_state", "a string", self.asker)
        return str(token)

    def open(self, token: str, ctx: RoundTripCaller) -> dict[str, Any]:
        subject = ctx.auth.subject if ctx.auth else None
        try:
            envelope = self.asker.call("open_state", self.key, token, subject, ctx.request_digest, ctx.now())
        except LearnerError as exc:
            if exc.is_a("ValueError") and self.asker.failure is exc:
                self.asker.failure = None  # a refusal, as asked: not a failure of the learner's code
                raise _rejected(exc.message or "refused") from None
            raise _rejected("open_state() failed") from None
        except CheckFailed:
            raise _rejected("open_state() failed") from None
        if not (isinstance(envelope, dict) and isinstance(envelope.get("state"), dict)):
            self.asker.wrong(f"open_state() must return the envelope (a dict whose 'state' is a dict) or raise "
                             f"ValueError; it returned {envelope!r}.")
            raise _rejected("open_state() returned no envelope")
        nonce = envelope.get("nonce")
        ctx.request_state_nonce = nonce if isinstance(nonce, str) else None
        return dict(envelope["state"])


def _call_of(call: Any) -> dict[str, Any]:
    """What ``payment_key`` learns about the call that pays."""
    auth = call.auth
    return {"subject": auth.subject if auth else None, "tenant": auth.tenant if auth else None,
            "client_id": auth.client_id if auth else None, "request_id": str(call.request_id),
            "nonce": call.request_state_nonce}


def check_lab(ctx: CheckContext, kind: str) -> None:
    lab, variant = split_kind(kind)
    asker = Asker(ctx)
    if lab == "requeststate-tampering":
        defence: Any = StateSeal(lambda secret: LearnerCodec(secret, asker))
        rule = R_SEAL
    else:
        def key(call: Any, invoice: str) -> str | None:
            value = asker.ask("payment_key", _call_of(call), invoice, fallback=None)
            if value is not None and not isinstance(value, str):
                asker.wrong(f"payment_key() must return a string or None; it returned {value!r}.")
                return None
            return value

        defence, rule = Idempotency(key), R_ONCE
    result = run_learner_lab(asker, lab, variant, lab_seed(ctx), defence, rule)
    expect_lab_holds(result, rule, your="your guard")


# --- direct cases: one token, opened in one situation ----------------------------------------------

@dataclass
class Situation:
    """A :class:`RoundTripCaller` for the fixed codec: who asks, for which request, when."""

    auth: AuthInfo | None
    request_digest: str
    at: float
    request_state_nonce: str | None = None

    def now(self) -> float:
        return self.at


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _reseal_under(key: bytes, token: str) -> str:
    """The same envelope sealed with another key: what someone without the bank's key can make."""
    body = token.partition(".")[0]
    raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
    return f"{body}.{_b64(hmac.new(key, raw, hashlib.sha256).digest())}"


SEAL_KINDS = ("the payee edited in the envelope", "the caller rewritten to the thief", "the expiry pushed back",
              "the MAC stripped", "resealed with a key the bank does not have",
              "the caller rewritten and a keyless hash recomputed", "the nonce edited",
              "the MAC of another token of the same bank", "a token that is not base64url")
BINDING_KINDS = ("opened by another caller", "opened for another request", "opened after it expired",
                 "opened by its caller, for its request, in time", "opened exactly at its expiry",
                 "opened with no caller")


def check_direct(ctx: CheckContext, kind: str) -> None:
    rng = ctx.rng
    secret = rng.randbytes(32)
    owner, thief = pick_distinct(rng, "user", 2)  # never the same name: a thief is someone else on every seed
    request = hashlib.sha256(f"pay_invoice|INV-{rng.randint(1000, 9999)}".encode()).hexdigest()
    now = float(rng.randint(10, 5000))
    state = {"answers": {"details": {"action": "accept", "content": {"payee": f"DE{rng.randint(10**17, 10**18 - 1)}",
                                                                     "amount": rng.randint(20, 400)}}}}
    nonce = _b64(rng.randbytes(9))
    token = ctx.function("seal_state")(secret.hex(), state, owner, request, now + TTL, nonce)
    if not isinstance(token, str):
        raise CheckFailed(f"seal_state() must return a string; it returned {token!r}.", R_SEAL)
    here = Situation(AuthInfo(owner), request, now + 5)
    if kind == "the payee edited in the envelope":
        token = _tamper(token, lambda env: env["state"]["answers"]["details"]["content"].update(payee="DE1"))
    elif kind == "the caller rewritten to the thief":
        token = _tamper(token, lambda env: env.update(sub=thief))
        here = Situation(AuthInfo(thief), request, now + 5)
    elif kind == "the expiry pushed back":
        token = _tamper(token, lambda env: env.update(exp=now + 100 * TTL))
        here = Situation(AuthInfo(owner), request, now + 2 * TTL)
    elif kind == "the MAC stripped":
        token = token.partition(".")[0]
    elif kind == "resealed with a key the bank does not have":
        token = _reseal_under(rng.randbytes(32), _tamper(token, lambda env: env.update(sub=thief)))
        here = Situation(AuthInfo(thief), request, now + 5)
    elif kind == "the caller rewritten and a keyless hash recomputed":
        token = _rehash(_tamper(token, lambda env: env.update(sub=thief)))
        here = Situation(AuthInfo(thief), request, now + 5)
    elif kind == "a token that is not base64url":
        token = "A" * (4 * rng.randint(1, 9) + 1) + "." + token.partition(".")[2]  # no base64 has that length
    elif kind == "the nonce edited":
        token = _tamper(token, lambda env: env.update(nonce=_b64(rng.randbytes(9))))
    elif kind == "the MAC of another token of the same bank":
        other = ctx.function("seal_state")(secret.hex(), state, thief, request, now + TTL, nonce)
        if not isinstance(other, str):
            raise CheckFailed(f"seal_state() must return a string; it returned {other!r}.", R_SEAL)
        token = token.partition(".")[0] + "." + other.partition(".")[2]
        here = Situation(AuthInfo(thief), request, now + 5)
    elif kind == "opened exactly at its expiry":
        here = Situation(AuthInfo(owner), request, now + TTL)
    elif kind == "opened with no caller":
        here = Situation(None, request, now + 5)
    elif kind == "opened by another caller":
        here = Situation(AuthInfo(thief), request, now + 5)
    elif kind == "opened for another request":
        here = Situation(AuthInfo(owner), hashlib.sha256(b"another " + request.encode()).hexdigest(), now + 5)
    elif kind == "opened after it expired":
        here = Situation(AuthInfo(owner), request, now + TTL + rng.randint(1, 50))
    want = _fixed_opens(secret, token, here)
    got = _learner_opens(ctx, secret, token, here)
    caller = here.auth.subject if here.auth else None
    if want is None and got is not None:
        raise CheckFailed(f"open_state() accepted a token the bank must refuse ({kind}): caller {caller!r}, "
                          f"request digest {here.request_digest[:12]}…, now {here.at}.\nToken: {token}",
                          R_SEAL)
    if want is not None and got != want:
        raise CheckFailed(f"open_state() must accept this token and return its envelope ({kind}); it "
                          f"{'refused it' if got is None else f'returned {got!r}'}. Token: {token}", R_SEAL)
    if want is not None and want.get("nonce") != nonce:
        raise CheckFailed(f"The envelope {want!r} does not carry the flow's nonce it was sealed with ({kind}): the "
                          "bank keeps it from round to round.", R_SEAL, case=f"seal_state(..., nonce={nonce!r})",
                          expected=f'"nonce": {nonce!r} in the envelope')


def _rehash(token: str) -> str:
    """The envelope with a MAC anyone can compute — SHA-256 of its bytes, no key — as a thief would make
    against a seal that is a plain hash (or a CRC) instead of an HMAC."""
    body = token.partition(".")[0]
    raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
    return f"{body}.{_b64(hashlib.sha256(raw).digest())}"


def _tamper(token: str, change: Any) -> str:
    """Edit the readable envelope as a holder of the token can (the MAC is left as it was)."""
    try:
        body, dot, mac = token.partition(".")
        envelope = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
        change(envelope)
    except (ValueError, KeyError, TypeError) as exc:
        raise CheckFailed(f"The token is not base64url JSON of the envelope {{state, sub, req, exp, nonce}} "
                          f"followed by '.' and the MAC ({exc}): {token}", R_SEAL) from None
    return _b64(json.dumps(envelope, separators=(",", ":")).encode()) + dot + mac


def _fixed_opens(secret: bytes, token: str, here: Situation) -> dict[str, Any] | None:
    """The envelope the lab's fixed codec accepts, or None when it refuses the token."""
    try:
        state = _FIXED_CODEC(secret).open(token, here)
    except McpError:
        return None
    body = token.partition(".")[0]
    envelope: dict[str, Any] = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    return envelope if envelope.get("state") == state else None


def _learner_opens(ctx: CheckContext, secret: bytes, token: str, here: Situation) -> Any:
    caller = here.auth.subject if here.auth else None
    try:
        return ctx.learner.call("open_state", (secret.hex(), token, caller, here.request_digest, here.at))
    except LearnerError as exc:
        if exc.is_a("ValueError"):
            return None
        raise


# --- generated: one sealed token, opened in any situation ---------------------------------------------

_WHO = ("its caller", "another caller", "nobody")
_WHEN = ("early", "a moment before expiry", "at expiry", "a moment after expiry")
_EDITS = ("none", "the caller", "the expiry", "the request", "the MAC stripped", "a keyless hash", "another key")


def check_generated(ctx: CheckContext, kind: str) -> None:
    rng = ctx.rng
    secret = rng.randbytes(32)
    owner, thief = pick_distinct(rng, "user", 2)
    request = hashlib.sha256(f"pay_invoice|INV-{rng.randint(1000, 9999)}".encode()).hexdigest()
    other_request = hashlib.sha256(b"another " + request.encode()).hexdigest()
    now = float(rng.randint(10, 5000))
    state = {"answers": {"details": {"action": "accept", "content": {"payee": iban(rng), "amount": rng.randint(0, 400)}}}}
    token = ctx.function("seal_state")(secret.hex(), state, owner, request, now + TTL, _b64(rng.randbytes(9)))
    if not isinstance(token, str):
        raise CheckFailed(f"seal_state() must return a string; it returned {token!r}.", R_SEAL)
    edits = {"none": lambda t: t, "the caller": lambda t: _tamper(t, lambda e: e.update(sub=thief)),
             "the expiry": lambda t: _tamper(t, lambda e: e.update(exp=now + 100 * TTL)),
             "the request": lambda t: _tamper(t, lambda e: e.update(req=other_request)),
             "the MAC stripped": lambda t: t.partition(".")[0],
             "a keyless hash": lambda t: _rehash(_tamper(t, lambda e: e.update(sub=thief))),
             "another key": lambda t: _reseal_under(secret[::-1], _tamper(t, lambda e: e.update(sub=thief)))}
    at = {"early": now + 5, "a moment before expiry": now + TTL - 0.001, "at expiry": now + TTL,
          "a moment after expiry": now + TTL + 0.001}
    caller = {"its caller": AuthInfo(owner), "another caller": AuthInfo(thief), "nobody": None}

    def situation(case: tuple[str, str, str, str]) -> tuple[str, Situation]:
        who, for_request, when, edit = case
        return edits[edit](token), Situation(caller[who], request if for_request == "its request" else other_request,
                                             at[when])

    def compare(case: tuple[str, str, str, str], got: Any, want: Any) -> Mismatch | None:
        if (got is None) == (want is None) and (want is None or got == want):
            return None
        verdict = "accepted a token the bank must refuse" if want is None else \
            "refused a token the bank accepts" if got is None else "returned another envelope"
        return Mismatch(f"open_state() {verdict}.", R_SEAL, expected="ValueError" if want is None else "the envelope")

    plain = ("its caller", "its request", "early", "none")
    corners = [plain, *((w, *plain[1:]) for w in _WHO[1:]), ("its caller", "another request", "early", "none"),
               *(("its caller", "its request", w, "none") for w in _WHEN[1:]), *((*plain[:3], e) for e in _EDITS[1:])]
    strategy = st.tuples(st.sampled_from(_WHO), st.sampled_from(("its request", "another request")),
                         st.sampled_from(_WHEN), st.sampled_from(_EDITS))
    corners_then_generated(ctx, corners, strategy, learner=lambda c: _learner_opens(ctx, secret, *situation(c)),
                           oracle=lambda c: _fixed_opens(secret, *situation(c)), compare=compare, examples=20,
                           describe=lambda c: f"the token opened by {c[0]}, for {c[1]}, {c[2]}, edited: {c[3]}")


# --- the idempotency key ---------------------------------------------------------------------------

KEY_KINDS = ("the same payment in a new flow", "the same payment from the user's other client",
             "the same payer, another invoice", "another payer, the same invoice")


def check_key(ctx: CheckContext, kind: str) -> None:
    rng = ctx.rng
    payer, other = pick_distinct(rng, "user", 2)
    tenant = pick_name(rng, "tenant")
    invoice, second = f"INV-{rng.randint(1000, 4999)}", f"INV-{rng.randint(5000, 9999)}"
    first = SimpleNamespace(auth=AuthInfo(payer, tenant, client_id="wallet"), request_id=rng.randint(1, 9),
                            request_state_nonce=_b64(rng.randbytes(9)))
    again = SimpleNamespace(auth=first.auth, request_id=rng.randint(10, 99), request_state_nonce=_b64(rng.randbytes(9)))
    again_invoice = invoice
    if kind == "the same payment from the user's other client":
        again.auth = AuthInfo(payer, tenant, client_id="phone")
    elif kind == "the same payer, another invoice":
        again_invoice = second
    elif kind == "another payer, the same invoice":
        again.auth = AuthInfo(other, tenant, client_id="wallet")
    want_same = _FIXED_KEY(first, invoice) == _FIXED_KEY(again, again_invoice)  # type: ignore[arg-type]
    key = ctx.function("payment_key")
    a, b = key(_call_of(first), invoice), key(_call_of(again), again_invoice)
    same = a is not None and a == b
    if same is not want_same:
        should = "the same key: it is the same business operation" if want_same else \
            "different keys: it is another business operation"
        raise CheckFailed(f"payment_key() gave {'the same key' if same else 'different keys (or None)'} for two "
                          f"payments ({kind}).", R_ONCE,
                          case=f"first call {_call_of(first)} for {invoice} → {a!r}; second call {_call_of(again)} for "
                               f"{again_invoice} → {b!r}", expected=should)


EXERCISE = Exercise(
    id="ex10_replay_guard",
    title="A sealed requestState, and one payment per business operation",
    chapter="10",
    summary="Write the bank's requestState seal (HMAC over state, caller, request, expiry) and its idempotency key; "
            "graded by the requeststate-tampering and requeststate-replay labs with your guards in the bank.",
    rules=(R_SEAL, R_ONCE),
    functions=("seal_state", "open_state", "payment_key"),
    checks=(
        Check("An edited requestState is refused", R_SEAL, check_lab, lab_kinds("requeststate-tampering"),
              hint="The MAC covers the whole envelope's bytes; open_state recomputes it and compares in constant "
                   "time before it believes anything.", seeds=1),
        Check("Nothing in the envelope can be changed without the key", R_SEAL, check_direct, SEAL_KINDS,
              hint="Verify the MAC over the bytes you received, then check sub, req and exp from inside them."),
        Check("Bound to the caller, the request and an expiry", R_SEAL, check_direct, BINDING_KINDS,
              hint="Refuse another caller, another request digest, and now >= exp; accept the rightful retry."),
        Check("Any situation opens like the fixed codec", R_SEAL, check_generated, ("generated",),
              hint="Verify the MAC first, then the caller, the request and now < exp — all of them.", seeds=1),
        Check("A repeated payment pays once", R_ONCE, check_lab, lab_kinds("requeststate-replay"),
              hint="Key the payment by what it is — this payer, this invoice — not by the round trip.", seeds=1),
        Check("The key names the business operation", R_ONCE, check_key, KEY_KINDS,
              hint="A new flow, a new request id or another device of the same payer is the same operation."),
    ),
    hints=(
        Hint("requestState travels through the client, and whoever holds it can read, edit, strip and resend it. "
             "A seal stops edits; only an idempotency key stops the same valid request from acting twice.", R_SEAL),
        Hint("seal_state: body = json.dumps({'state': state, 'sub': caller, 'req': request, 'exp': expires, "
             "'nonce': nonce}).encode(); token = b64url(body) + '.' + b64url(hmac.new(bytes.fromhex(key), body, "
             "sha256).digest()), base64 without '=' padding. open_state: split at '.', decode, compare MACs with "
             "hmac.compare_digest, then sub == caller, req == request, now < exp; raise ValueError otherwise.",
             R_SEAL),
        Hint("payment_key: f\"{call['subject']}|pay|{invoice}\" — not the nonce, not the request id.", R_ONCE),
    ),
    forbidden=("mcp_sim.security", "mcp_sim.capabilities", "mcp_sim.scenarios"),
)
