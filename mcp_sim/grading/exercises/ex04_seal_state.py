"""Exercise ex04_seal_state (chapter 04): seal ``requestState`` so a client cannot forge or replay it.

An MRTR server that keeps its progress in ``requestState`` hands that state to the client, who hands
it back on the retry. The spec says to treat it as attacker-controlled: integrity-protect it (HMAC or
AEAD) and bind it to the principal, a short expiry and a digest of the originating request.

The learner writes ``seal_state(key, state, caller, arguments, now, ttl) -> str`` and
``open_state(key, token, caller, arguments, now) -> dict``, which raises ``ValueError`` for any token it
must not trust. The checks never assume a token format: they attack the learner's own tokens —
re-sealing under another key, flipping characters, editing any base64url-JSON segment they can find,
presenting the token as another caller, with other arguments, or after expiry.
"""

from __future__ import annotations

import base64
import copy
import json
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mcp_sim.grading.model import Check, CheckContext, CheckFailed, Exercise, Hint

R_INTEGRITY = ("MRTR security (2026-07-28): requestState is attacker-controlled; if it influences authorization "
               "or business logic the server MUST integrity-protect it (e.g. HMAC or AEAD) and verify it on "
               "every retry.")
R_BIND = ("MRTR security: the server SHOULD bind requestState to the authenticated principal, a short expiry "
          "and a digest of the originating request, and reject it otherwise.")
R_ARGS = ("MRTR security: bind requestState to the originating request's arguments; JSON object key order "
          "carries no meaning, so digest a canonical form.")
R_CONST = "Security practice: compare MACs with hmac.compare_digest, whose time does not depend on where they differ."

_CALLERS = ("alice@acme.example", "bob@acme.example", "tenant-7/user-3", "svc-reporting", "carol@globex.example")


def _case(rng: Any) -> dict[str, Any]:
    state = {"step": rng.randint(1, 5), "cart": rng.sample(["apple", "pear", "fig", "kiwi", "plum"], rng.randint(0, 3)),
             "choice": rng.choice(("refund", "replace", "cancel")), "amount": rng.randint(1, 10_000) / 100}
    if rng.random() < 0.4:
        state["note"] = rng.choice(("naïve café", "line1\nline2", "☃"))
    args: dict[str, Any] = {"order_id": f"o-{rng.randint(1000, 9999)}", "notify": rng.choice((True, False)),
                            "limit": rng.randint(1, 50)}
    if rng.random() < 0.5:
        args["filters"] = {"status": rng.choice(("open", "closed")), "tags": ["a", "b"][: rng.randint(0, 2)]}
    return {"key": rng.randbytes(32), "state": state, "caller": rng.choice(_CALLERS), "arguments": args,
            "now": 1_780_000_000 + rng.randint(0, 10**6) + rng.random(), "ttl": float(rng.choice((30, 60, 300, 900)))}


def _line_of(ctx: CheckContext, exc: BaseException) -> str:
    path = Path(getattr(ctx.module, "__file__", "") or "").resolve()
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename).resolve() == path]
    return f" (raised at line {frames[-1].lineno}: {(frames[-1].line or '').strip()})" if frames else ""


def _seal(ctx: CheckContext, c: dict[str, Any], **override: Any) -> str:
    args = {**c, **override}
    token = ctx.function("seal_state")(args["key"], copy.deepcopy(args["state"]), args["caller"],
                                       copy.deepcopy(args["arguments"]), args["now"], args["ttl"])
    if not isinstance(token, str):
        raise CheckFailed(f"seal_state() must return a str (requestState is a JSON string); got "
                          f"{type(token).__name__}.")
    return token


def _open(ctx: CheckContext, key: bytes, token: str, caller: str, arguments: dict[str, Any], now: float
          ) -> tuple[bool, Any]:
    """(accepted, state or the ValueError)."""
    try:
        return True, ctx.function("open_state")(key, token, caller, copy.deepcopy(arguments), now)
    except ValueError as exc:
        return False, exc
    except Exception as exc:
        raise CheckFailed(f"open_state() must reject a bad token by raising ValueError; it raised "
                          f"{type(exc).__name__}: {exc}{_line_of(ctx, exc)}. Catch decoding errors and turn them "
                          f"into ValueError.") from None


def _must_reject(ctx: CheckContext, c: dict[str, Any], token: str, why: str, **override: Any) -> None:
    args = {**c, **override}
    ok, value = _open(ctx, args["key"], token, args["caller"], args["arguments"], args["now"])
    if ok:
        raise CheckFailed(f"open_state() accepted a token it must reject: {why}\nIt returned {value!r}.")


def check_round_trip(ctx: CheckContext) -> None:
    for _ in range(3):
        c = _case(ctx.rng)
        token = _seal(ctx, c)
        later = c["now"] + c["ttl"] * ctx.rng.uniform(0, 0.9)
        ok, value = _open(ctx, c["key"], token, c["caller"], c["arguments"], later)
        ctx.expect(ok, f"open_state() rejected its own fresh token for the same caller and arguments, "
                       f"{later - c['now']:.1f} s after sealing (ttl {c['ttl']:g} s): {value}")
        ctx.expect(value == c["state"], f"open_state() should give back the sealed state {c['state']!r}; got "
                                        f"{value!r}.")


def _b64_decode(part: str) -> bytes | None:
    try:
        return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
    except (ValueError, TypeError):
        return None


def _leaf_edits(obj: Any) -> Iterator[Any]:
    """Copies of ``obj`` with one scalar leaf changed."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            for edited in _leaf_edits(v):
                yield {**obj, k: edited}
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            for edited in _leaf_edits(v):
                yield [*obj[:i], edited, *obj[i + 1:]]
    elif isinstance(obj, bool):
        yield not obj
    elif isinstance(obj, (int, float)):
        yield obj + 3600 if obj > 10**6 else obj * 2 + 1
    elif isinstance(obj, str):
        yield obj + "x"


def splice_attacks(token: str, limit: int = 12) -> Iterator[tuple[str, str]]:
    """Tokens whose base64url-encoded JSON segments were edited without the key."""
    parts = token.split(".")
    count = 0
    for i, part in enumerate(parts):
        raw = _b64_decode(part)
        if raw is None:
            continue
        try:
            obj = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            continue
        if not isinstance(obj, (dict, list)):
            continue
        compact = b"," in raw and b", " not in raw
        for edited in _leaf_edits(obj):
            data = json.dumps(edited, separators=(",", ":") if compact else (", ", ": ")).encode()
            enc = base64.urlsafe_b64encode(data).decode()
            if not part.endswith("="):
                enc = enc.rstrip("=")
            yield ".".join([*parts[:i], enc, *parts[i + 1:]]), f"segment {i + 1} edited to {edited!r}"
            count += 1
            if count >= limit:
                return


def check_forgery(ctx: CheckContext) -> None:
    rng = ctx.rng
    c = _case(rng)
    token = _seal(ctx, c)
    forged = _seal(ctx, c, key=rng.randbytes(32), state={**c["state"], "amount": 99999.0})
    _must_reject(ctx, c, forged, "it was sealed with a different key (an attacker's), so it cannot be the server's.")
    for attacked, how in splice_attacks(token):
        _must_reject(ctx, c, attacked, f"the token's JSON was edited without the key ({how}). Everything the "
                                       f"token carries must be covered by the MAC.")
    for _ in range(8):
        pos = rng.randrange(len(token)) if token else 0
        ch = token[pos] if token else ""
        alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
        mutated = token[:pos] + rng.choice([a for a in alphabet if a != ch]) + token[pos + 1:]
        ok, value = _open(ctx, c["key"], mutated, c["caller"], c["arguments"], c["now"])
        ctx.expect(not ok or value == c["state"],
                   f"Changing character {pos} of the token made open_state() return a different state {value!r} "
                   f"instead of rejecting it.")
    for garbage in ("", "not-a-token", "a.b.c", token[: len(token) // 2], "e30"):
        _must_reject(ctx, c, garbage, f"{garbage!r} is not a token this server sealed.")


def check_caller(ctx: CheckContext) -> None:
    c = _case(ctx.rng)
    token = _seal(ctx, c)
    other = ctx.rng.choice([x for x in _CALLERS if x != c["caller"]] + [c["caller"] + "x", c["caller"].upper()])
    _must_reject(ctx, c, token, f"it was sealed for caller {c['caller']!r} but presented by {other!r} — a replay "
                                f"by another principal.", caller=other)


def check_arguments(ctx: CheckContext) -> None:
    rng = ctx.rng
    c = _case(rng)
    token = _seal(ctx, c)
    changed = {**c["arguments"], "order_id": c["arguments"]["order_id"] + "9"}
    _must_reject(ctx, c, token, f"the retry's arguments {changed!r} differ from the sealed request's "
                                f"{c['arguments']!r}.", arguments=changed)
    extra = {**c["arguments"], "force": True}
    _must_reject(ctx, c, token, f"the retry added an argument: {extra!r}.", arguments=extra)
    reordered = dict(reversed(list(c["arguments"].items())))
    ok, value = _open(ctx, c["key"], token, c["caller"], reordered, c["now"] + 1)
    ctx.expect(ok and value == c["state"],
               f"The retry sent the same arguments in another key order ({list(reordered)} instead of "
               f"{list(c['arguments'])}); that is the same request and must be accepted. Digest a canonical form "
               f"(json.dumps(..., sort_keys=True)). open_state() said: {value!r}")


def check_expiry(ctx: CheckContext) -> None:
    rng = ctx.rng
    c = _case(rng)
    token = _seal(ctx, c)
    late = c["now"] + c["ttl"] + rng.choice((0.5, 1.0, 30.0, 3600.0))
    _must_reject(ctx, c, token, f"it expired: sealed at {c['now']:.1f} with ttl {c['ttl']:g} s, presented at "
                                f"{late:.1f}.", now=late)
    ok, value = _open(ctx, c["key"], token, c["caller"], c["arguments"], c["now"] + c["ttl"] * 0.5)
    ctx.expect(ok and value == c["state"], f"Halfway through its ttl the token must still open; got {value!r}.")


def check_constant_time(ctx: CheckContext) -> None:
    source = Path(getattr(ctx.module, "__file__", "") or "").read_text(encoding="utf-8")
    ctx.expect("compare_digest" in source,
               "open_state() should compare the expected and received MACs with hmac.compare_digest(). A plain == "
               "stops at the first differing byte, and that timing difference lets an attacker guess a valid MAC "
               "byte by byte.")


EXERCISE = Exercise(
    id="ex04_seal_state",
    title="Seal requestState: integrity, binding, expiry",
    chapter="04",
    summary="Protect MRTR requestState with an HMAC bound to caller, arguments and expiry.",
    rules=(R_INTEGRITY, R_BIND, R_ARGS, R_CONST),
    functions=("seal_state", "open_state"),
    checks=(
        Check("A fresh token opens to the same state", R_INTEGRITY, check_round_trip,
              hint="Serialise the state as JSON and carry it in the token next to its MAC."),
        Check("Forged and tampered tokens are rejected", R_INTEGRITY, check_forgery,
              hint="Compute the MAC over everything in the token; recompute and compare before trusting anything."),
        Check("Bound to the caller", R_BIND, check_caller,
              hint="Put the caller into the MACed payload and compare it on open."),
        Check("Bound to the arguments (key order does not matter)", R_ARGS, check_arguments,
              hint="Store sha256(json.dumps(arguments, sort_keys=True)) in the payload."),
        Check("Expires after ttl seconds", R_BIND, check_expiry,
              hint="Store now + ttl as the expiry; reject when the opening time is at or past it."),
        Check("MACs are compared in constant time", R_CONST, check_constant_time,
              hint="hmac.compare_digest(expected, received)."),
    ),
    hints=(
        Hint("A client can change any byte of requestState. The only thing it cannot do without the server's "
             "key is compute a valid HMAC — so the server must check one over the whole payload.", R_INTEGRITY),
        Hint("Put everything you will need to check into the payload: the state, the caller, a digest of the "
             "arguments and the expiry time. Then payload → JSON → base64url, and token = payload + '.' + "
             "base64url(HMAC-SHA256(key, payload)).", R_BIND),
        Hint("open_state: split, recompute the HMAC, compare with hmac.compare_digest, then decode and compare "
             "caller, arguments digest and expiry. Any failure — including undecodable input — raises ValueError.",
             R_CONST),
    ),
    forbidden=("mcp_sim.security", "mcp_sim.capabilities", "mcp_sim.roles"),
)
