"""Exercise ex04_seal_state (chapter 04): seal ``requestState`` so a client cannot forge or replay it.

An MRTR server that keeps its progress in ``requestState`` hands that state to the client, who hands
it back on the retry. The spec says to treat it as attacker-controlled: integrity-protect it (HMAC or
AEAD) and bind it to the principal, a short expiry and a digest of the originating request.

The learner writes ``seal_state(key, state, caller, arguments, now, ttl) -> str`` and
``open_state(key, token, caller, arguments, now) -> dict``, which raises ``ValueError`` for any token it
must not trust. The checks look at behaviour, never at the source text, and never assume a token
format: they attack the learner's own tokens — re-sealing under another key, flipping characters,
editing every field (state, caller, expiry, nonce...) they can decode in any common encoding
(base64url, base64, hex, plain JSON), splicing fields of two tokens, presenting a token as another
caller, with other arguments, at and after its expiry — and open a token in a *fresh process* (which
per-process secrets and ``hash()`` fail). The learner's process records its ``hmac`` calls
(``observe``), so the checks can also ask: was the MAC an HMAC with the server's key (not
``sha256(key + data)``)? Were MACs compared with ``hmac.compare_digest``, on full-length tags?
"""

from __future__ import annotations

import base64
import binascii
import copy
import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from mcp_sim.capabilities.mrtr import SealedStateCodec, request_digest
from mcp_sim.grading.differential import Mismatch, differential, same_json, show
from mcp_sim.grading.learner_code import LearnerError
from mcp_sim.grading.model import Check, CheckContext, CheckFailed, Exercise, Hint
from mcp_sim.protocol.errors import McpError

R_INTEGRITY = "mrtr.state-integrity"
R_BIND = "mrtr.state-bound"
R_ARGS = "mrtr.state-bound"
R_CONST = "mrtr.mac-practice"
MIN_TAG_BYTES = 16
"""A tag shorter than 128 bits can be found by trying (a 32-bit tag in about 2**31 attempts)."""

_CALLERS = ("alice@acme.example", "bob@acme.example", "tenant-7/user-3", "svc-reporting", "carol@globex.example")


def _case(rng: Any) -> dict[str, Any]:
    state = {"step": rng.randint(1, 5), "cart": rng.sample(["apple", "pear", "fig", "kiwi", "plum"], rng.randint(0, 3)),
             "choice": rng.choice(("refund", "replace", "cancel")), "amount": rng.randint(1, 10_000) / 100}
    state["note"] = rng.choice(("naïve café", "line1\nline2", "☃", "plain"))
    args: dict[str, Any] = {"order_id": f"o-{rng.randint(1000, 9999)}", "notify": rng.choice((True, False)),
                            "limit": rng.randint(1, 50)}
    if rng.random() < 0.5:
        args["filters"] = {"status": rng.choice(("open", "closed")), "tags": ["a", "b"][: rng.randint(0, 2)]}
    return {"key": rng.randbytes(32), "state": state, "caller": rng.choice(_CALLERS), "arguments": args,
            "now": 1_780_000_000 + rng.randint(0, 10**6) + rng.random(), "ttl": float(rng.choice((30, 60, 300, 900)))}


def _seal(ctx: CheckContext, c: dict[str, Any], **override: Any) -> str:
    args = {**c, **override}
    token = ctx.function("seal_state")(args["key"], copy.deepcopy(args["state"]), args["caller"],
                                       copy.deepcopy(args["arguments"]), args["now"], args["ttl"])
    if not isinstance(token, str):
        raise CheckFailed(f"seal_state() must return a str (requestState is a JSON string); got "
                          f"{type(token).__name__}.")
    return token


def _open_with(fn: Callable[..., Any], key: bytes, token: str, caller: str, arguments: dict[str, Any], now: float
               ) -> tuple[bool, Any]:
    """(accepted, state or the learner's ValueError)."""
    try:
        return True, fn(key, token, caller, copy.deepcopy(arguments), now)
    except LearnerError as exc:
        if exc.status == "error" and exc.is_a("ValueError"):
            return False, exc.message
        if exc.status != "error":
            raise
        raise CheckFailed(f"open_state() must reject a bad token by raising ValueError; it raised another "
                          f"exception:\n{exc.description}\nCatch decoding errors and turn them into ValueError.",
                          R_INTEGRITY) from None


def _open(ctx: CheckContext, key: bytes, token: str, caller: str, arguments: dict[str, Any], now: float
          ) -> tuple[bool, Any]:
    return _open_with(ctx.function("open_state"), key, token, caller, arguments, now)


def _must_reject(ctx: CheckContext, c: dict[str, Any], token: str, why: str, rule: str = R_INTEGRITY,
                 **override: Any) -> None:
    args = {**c, **override}
    ok, value = _open(ctx, args["key"], token, args["caller"], args["arguments"], args["now"])
    if ok:
        raise CheckFailed(f"open_state() accepted a token it must reject: {why}\nIt returned {value!r}.", rule)


def _must_accept(ctx: CheckContext, c: dict[str, Any], token: str, when: float, why: str, rule: str = R_INTEGRITY,
                 **override: Any) -> None:
    args = {**c, **override}
    ok, value = _open(ctx, args["key"], token, args["caller"], args["arguments"], when)
    if not ok or value != c["state"]:
        raise CheckFailed(f"{why} open_state() should give back the sealed state {c['state']!r}; "
                          f"{'it raised ValueError: ' + str(value) if not ok else 'it returned ' + repr(value)}.", rule)


def check_round_trip(ctx: CheckContext, kind: str) -> None:
    c = _case(ctx.rng)
    if kind == "empty state":
        c["state"] = {}
    if kind == "text in any script":  # beyond Latin-1 too: the state is JSON, any Unicode
        c["state"]["note"] = "☃ naïve café, 東京, line1\nline2"
    token = _seal(ctx, c)
    if kind == "in a fresh process":
        with ctx.fresh_process() as other:
            ok, value = _open_with(lambda *a: other.call("open_state", a), c["key"], token, c["caller"],
                                   c["arguments"], c["now"] + 1)
        if not ok or value != c["state"]:
            raise CheckFailed(f"A token sealed in one process must open in another: servers restart and run as "
                              f"replicas, and only the key is shared. Opening in a fresh process "
                              f"{'raised ValueError: ' + str(value) if not ok else 'returned ' + repr(value)}. Is "
                              f"something in the MAC per-process, like hash() (randomised per process) or a "
                              f"secret made at import time?", R_INTEGRITY)
        return
    later = c["now"] + c["ttl"] * ctx.rng.uniform(0, 0.9)
    _must_accept(ctx, c, token, later, f"Its own fresh token, for the same caller and arguments, "
                                       f"{later - c['now']:.1f} s after sealing (ttl {c['ttl']:g} s), must open.")


# --- decoding the learner's token, whatever its encoding --------------------------------------------

def _decoders() -> list[tuple[str, Callable[[str], bytes], Callable[[bytes, str], str]]]:
    def b64url(part: str) -> bytes:
        return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))

    def b64std(part: str) -> bytes:
        return base64.b64decode(part + "=" * (-len(part) % 4), validate=True)

    def enc_url(data: bytes, like: str) -> str:
        out = base64.urlsafe_b64encode(data).decode()
        return out if like.endswith("=") else out.rstrip("=")

    def enc_std(data: bytes, like: str) -> str:
        out = base64.b64encode(data).decode()
        return out if like.endswith("=") else out.rstrip("=")

    return [("base64url", b64url, enc_url), ("base64", b64std, enc_std),
            ("hex", bytes.fromhex, lambda data, like: data.hex()),
            ("JSON text", lambda part: part.encode("utf-8"), lambda data, like: data.decode("utf-8"))]


def _leaf_edits(obj: Any, path: str = "") -> Iterator[tuple[Any, str, Any, Any]]:
    """(copy of ``obj`` with one scalar leaf changed, where, old value, new value)."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            for edited, where, old, new in _leaf_edits(v, f"{path}.{k}"):
                yield {**obj, k: edited}, where, old, new
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            for edited, where, old, new in _leaf_edits(v, f"{path}[{i}]"):
                yield [*obj[:i], edited, *obj[i + 1:]], where, old, new
    elif isinstance(obj, bool):
        yield not obj, path, obj, not obj
    elif isinstance(obj, (int, float)):
        new = obj + 3600 if obj > 10**6 else obj * 2 + 1
        yield new, path, obj, new
    elif isinstance(obj, str):
        new = obj + "x"
        yield new, path, obj, new


def decoded_segments(token: str) -> Iterator[tuple[int, str, Any, list[str], str]]:
    """(segment index, encoding name, decoded JSON, the segments, separator) for every segment of
    ``token`` (split on ``.``, ``:`` or ``|``, or whole) that decodes to a JSON object or list."""
    seen = set()
    for sep in (".", ":", "|", ""):
        parts = token.split(sep) if sep else [token]
        if sep and len(parts) < 2:
            continue
        for i, part in enumerate(parts):
            for name, dec, _enc in _decoders():
                try:
                    obj = json.loads(dec(part).decode("utf-8"))
                except (ValueError, binascii.Error, UnicodeDecodeError):
                    continue
                if isinstance(obj, (dict, list)) and (sep, i) not in seen:
                    seen.add((sep, i))
                    yield i, name, obj, parts, sep
                    break


def edit_attacks(token: str, c: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """Tokens with one decoded field edited without the key, and how to present each so that only the
    MAC stands in the way: an edited caller is presented by that caller, an edited expiry after the
    original one."""
    encoders = {name: enc for name, _dec, enc in _decoders()}
    exp = c["now"] + c["ttl"]
    for i, name, obj, parts, sep in decoded_segments(token):
        raw = _decoders()[[n for n, _d, _e in _decoders()].index(name)][1](parts[i])
        compact = b'", "' not in raw and b", " not in raw
        for edited, where, old, new in _leaf_edits(obj):
            data = json.dumps(edited, separators=(",", ":") if compact else (", ", ": "),
                              ensure_ascii=b"\\u" in raw).encode()
            forged_parts = [*parts[:i], encoders[name](data, parts[i]), *parts[i + 1:]]
            forged = sep.join(forged_parts) if sep else forged_parts[0]
            present: dict[str, Any] = {}
            if old == c["caller"]:
                present["caller"] = new
            if isinstance(old, (int, float)) and not isinstance(old, bool) and abs(old - exp) < 1:
                present["now"] = exp + 1  # only the edited expiry still lets it in
            yield forged, f"{name} segment {i + 1}, field {where or '(top)'}: {old!r} → {new!r}", present
    yield from plain_edits(token, c)


def plain_edits(token: str, c: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """Tokens with one *plain-text* segment edited: a number (an expiry written as text) pushed an hour
    later, presented after the real expiry; the caller's name replaced, presented by the new name."""
    exp = c["now"] + c["ttl"]
    for text in dict.fromkeys((repr(exp), str(exp), f"{exp:.3f}")):
        if text in token:  # the expiry written out in the token, whatever separates it
            yield token.replace(text, repr(exp + 3600), 1), f"the text {text!r} → {exp + 3600!r}", {"now": exp + 1}
    for sep in (".", ":", "|"):
        parts = token.split(sep)
        if len(parts) < 2:
            continue
        for i, part in enumerate(parts):
            edit: tuple[str, dict[str, Any]] | None = None
            try:
                number = float(part)
            except ValueError:
                number = None
            if number is not None and abs(number - exp) < 1:
                edit = (repr(number + 3600), {"now": exp + 1})
            elif part == c["caller"]:
                edit = ("mallory@evil.example", {"caller": "mallory@evil.example"})
            else:  # the caller's name encoded on its own, outside what a MAC covers
                for _name, dec, enc in _decoders():
                    try:
                        if part and dec(part) == c["caller"].encode():
                            edit = (enc(b"mallory@evil.example", part), {"caller": "mallory@evil.example"})
                            break
                    except (ValueError, binascii.Error):
                        continue
            if edit is not None:
                forged = sep.join([*parts[:i], edit[0], *parts[i + 1:]])
                yield forged, f"plain segment {i + 1}: {part!r} → {edit[0]!r}", edit[1]


def check_forgery(ctx: CheckContext, kind: str) -> None:
    rng = ctx.rng
    c = _case(rng)
    token = _seal(ctx, c)
    if kind == "another key":
        forged = _seal(ctx, c, key=rng.randbytes(32), state={**c["state"], "amount": 99999.0})
        _must_reject(ctx, c, forged, "it was sealed with a different key (an attacker's), so it cannot be the "
                                     "server's.")
    elif kind == "edited fields":
        for attacked, how, present in edit_attacks(token, c):
            _must_reject(ctx, c, attacked, f"one field of the token was edited without the key ({how}). Everything "
                                           f"the token carries — state, caller, expiry, nonce — must be covered by "
                                           f"the MAC.", **present)
    elif kind == "flipped characters":
        alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
        for pos in sorted({rng.randrange(len(token)) for _ in range(6)} | {len(token) - 1, 0}) if token else ():
            mutated = token[:pos] + rng.choice([a for a in alphabet if a != token[pos]]) + token[pos + 1:]
            ok, value = _open(ctx, c["key"], mutated, c["caller"], c["arguments"], c["now"])
            ctx.expect(not ok or value == c["state"],
                       f"Changing character {pos} of the token made open_state() return a different state {value!r} "
                       f"instead of rejecting it.")
    elif kind == "spliced tokens":
        other_state = {**c["state"], "choice": "refund", "amount": 9999.99, "step": c["state"]["step"] + 1}
        other_caller = rng.choice([x for x in _CALLERS if x != c["caller"]])
        variants = [(_seal(ctx, c, state=other_state), c["caller"], "a token for another state"),
                    (_seal(ctx, c, caller=other_caller), other_caller, "a token for another caller")]
        for sep in (".", ":", "|"):
            mine = token.split(sep)
            if len(mine) < 2:
                continue
            for theirs, caller, what in variants:
                parts = theirs.split(sep)
                if len(parts) != len(mine):
                    continue
                for i in range(len(mine)):
                    spliced = sep.join([*parts[:i], mine[i], *parts[i + 1:]])
                    if spliced in (token, theirs):
                        continue
                    for who in {c["caller"], caller}:
                        ok, value = _open(ctx, c["key"], spliced, who, c["arguments"], c["now"])
                        if ok and (value != c["state"] or who != c["caller"]):
                            raise CheckFailed(f"open_state() accepted a splice: segment {i + 1} of one token put "
                                              f"into {what}, presented by {who!r}; it returned {value!r}. Each "
                                              f"token's MAC must cover all of that token, so mixed parts never "
                                              f"verify.", R_INTEGRITY)
    else:
        for garbage in ("", "not-a-token", "a.b.c", token[: len(token) // 2], "e30", token + "."):
            _must_reject(ctx, c, garbage, f"{garbage!r} is not a token this server sealed.")


def check_caller(ctx: CheckContext, kind: str) -> None:
    c = _case(ctx.rng)
    token = _seal(ctx, c)
    other = {"another caller": ctx.rng.choice([x for x in _CALLERS if x != c["caller"]]),
             "same name, other case": c["caller"].upper(), "a longer name": c["caller"] + "x"}[kind]
    _must_reject(ctx, c, token, f"it was sealed for caller {c['caller']!r} but presented by {other!r} — a replay "
                                f"by another principal.", R_BIND, caller=other)


def check_arguments(ctx: CheckContext, kind: str) -> None:
    c = _case(ctx.rng)
    if kind == "a nested value changed":  # a digest covers every level of the arguments
        c["arguments"]["filters"] = {"status": "open", "tags": ["a", "b"]}
    token = _seal(ctx, c)
    if kind == "changed value":
        changed = {**c["arguments"], "order_id": c["arguments"]["order_id"] + "9"}
        _must_reject(ctx, c, token, f"the retry's arguments {changed!r} differ from the sealed request's "
                                    f"{c['arguments']!r}.", R_ARGS, arguments=changed)
    elif kind == "added argument":
        extra = {**c["arguments"], "force": True}
        _must_reject(ctx, c, token, f"the retry added an argument: {extra!r}.", R_ARGS, arguments=extra)
    elif kind == "an integer sent as a string":
        typed = {**c["arguments"], "limit": str(c["arguments"]["limit"])}
        _must_reject(ctx, c, token, f"the retry sent limit as the string {typed['limit']!r}, not the integer "
                                    f"{c['arguments']['limit']}: another JSON value, so another request.", R_ARGS,
                     arguments=typed)
    elif kind == "a key renamed":  # the same value under another name is another request
        renamed = {("max_results" if k == "limit" else k): v for k, v in c["arguments"].items()}
        _must_reject(ctx, c, token, f"the retry sent {renamed!r}: the value of limit under another name.", R_ARGS,
                     arguments=renamed)
    elif kind == "a nested value changed":
        nested = {**c["arguments"], "filters": {"status": "closed", "tags": ["a", "b"]}}
        _must_reject(ctx, c, token, f"the retry changed a value inside filters: {nested!r}.", R_ARGS,
                     arguments=nested)
    elif kind == "one removed":
        fewer = {k: v for k, v in c["arguments"].items() if k != "notify"}
        _must_reject(ctx, c, token, f"the retry left out an argument: {fewer!r}.", R_ARGS, arguments=fewer)
    else:
        reordered = dict(reversed(list(c["arguments"].items())))
        _must_accept(ctx, c, token, c["now"] + 1, f"The retry sent the same arguments in another key order "
                     f"({list(reordered)} instead of {list(c['arguments'])}); that is the same request and must be "
                     f"accepted: JSON objects have no order.", R_ARGS, arguments=reordered)


def check_expiry(ctx: CheckContext, kind: str) -> None:
    c = _case(ctx.rng)
    if kind == "just before a long expiry":  # the ttl is the caller's: never shortened
        c["ttl"] = 3600.0
    token = _seal(ctx, c)
    expiry = c["now"] + c["ttl"]
    if kind in ("just before expiry", "just before a long expiry"):
        _must_accept(ctx, c, token, expiry - 0.001, f"1 ms before its expiry (sealed at {c['now']:.3f} with ttl "
                                                    f"{c['ttl']:g} s) the token is still valid.", R_BIND)
    elif kind == "at expiry":
        _must_reject(ctx, c, token, f"it is presented exactly at its expiry time now + ttl = {expiry:.3f}: "
                                    f"a token valid for ttl seconds is no longer valid at the end of them.", R_BIND,
                     now=expiry)
    else:
        late = expiry + ctx.rng.choice((0.5, 30.0, 3600.0))
        _must_reject(ctx, c, token, f"it expired: sealed at {c['now']:.1f} with ttl {c['ttl']:g} s, presented at "
                                    f"{late:.1f}.", R_BIND, now=late)


def _long_enough(size: Any, kind: Any) -> bool:
    """Whether a compared value can hold a 128-bit tag: 16 bytes, or 22 characters of text (base64)."""
    if not isinstance(size, int):
        return False
    return size >= (MIN_TAG_BYTES if kind == "bytes" else 22)


def _compares(ctx: CheckContext) -> list[dict[str, Any]]:
    return [o for o in ctx.observed() if o.get("fn") == "hmac.compare_digest"]


def check_mac_strength(ctx: CheckContext, kind: str) -> None:
    c = _case(ctx.rng)
    token = _seal(ctx, c)
    fingerprint = hashlib.sha256(c["key"]).hexdigest()[:16]
    if kind == "HMAC with the server's key":
        macs = [o for o in ctx.observed() if o.get("fn") == "hmac.new"]
        ctx.expect(any(o.get("key") == fingerprint for o in macs),
                   "seal_state() did not compute an HMAC keyed with the server's key (hmac.new or hmac.digest with "
                   "`key`). A plain hash such as sha256(key + data) is not a MAC: anyone can extend the data and "
                   "compute a valid digest (length extension); Python's hash() is neither secret nor the same in "
                   "another process.")
        return
    # open a token whose last character differs: the MAC check must run, in constant time, on full tags
    last = "A" if token[-1:] != "A" else "B"
    _open(ctx, c["key"], token[:-1] + last, c["caller"], c["arguments"], c["now"])
    seen = _compares(ctx)
    _open(ctx, c["key"], token, c["caller"], c["arguments"], c["now"])
    seen += _compares(ctx)
    if kind == "constant-time comparison":
        ctx.expect(bool(seen), "open_state() never called hmac.compare_digest while checking a token. A plain == "
                               "stops at the first differing byte, and that timing difference lets an attacker "
                               "find a valid MAC byte by byte.")
        return
    full = [o for o in seen if all(_long_enough(n, t) for n, t in zip(o.get("sizes", []), o.get("types", []),
                                                                       strict=False)) and o.get("sizes")]
    sizes = sorted({n for o in seen for n in o.get("sizes", [])})
    ctx.expect(bool(full), f"open_state() compared values of {sizes or 'no'} bytes/characters with "
                           f"hmac.compare_digest; a tag needs at least {MIN_TAG_BYTES} bytes (128 bits). A truncated "
                           f"tag can be forged by trying: 4 bytes take about two billion guesses, milliseconds for a "
                           f"server that answers fast.")


# --- generated: any state, caller, arguments and time, against the simulator's SealedStateCodec ----------

@dataclass
class _Subject:
    subject: str


@dataclass
class _Round:
    """What the simulator's codec reads of one round trip (a ``RoundTripCaller``)."""

    auth: _Subject
    request_digest: str
    at: float
    request_state_nonce: str | None = None

    def now(self) -> float:
        return self.at


CALLER_CHANGES = ("another caller", "upper case", "longer", "prefix")
ARGUMENT_CHANGES = ("reordered", "a value changed", "one added", "one removed", "an int as a string",
                    "a key renamed")
TIME_OFFSETS = (-1.0, -0.5, -0.001, 0.0, 0.001, 0.5, 30.0)
"""When the token is presented, relative to its expiry (whole-second sealing times and ttls, so the
expiry itself is exact: a difference at the boundary is the learner's, not a float's)."""
VARIANTS: tuple[tuple[str, str, float], ...] = (
    ("same", "same", -1.0),
    *((change, "same", -1.0) for change in CALLER_CHANGES),
    *(("same", change, -1.0) for change in ARGUMENT_CHANGES),
    *(("same", "same", offset) for offset in TIME_OFFSETS if offset != -1.0))
"""Every presentation tried on every generated sealing: one axis changed at a time, so every seed
tries every change of caller, of arguments and of time (the seed only picks what is sealed)."""

_VALUES = st.one_of(st.integers(-3, 10**6), st.sampled_from(("", "naïve café", "☃", "line1\nline2", "o-17")),
                    st.booleans(), st.none(), st.lists(st.integers(0, 9), max_size=3))
_STATES = st.dictionaries(st.sampled_from(("step", "cart", "note", "amount", "choice")), _VALUES, max_size=4)
SEALINGS = st.fixed_dictionaries({
    "state": _STATES, "caller": st.sampled_from(_CALLERS),
    "arguments": st.fixed_dictionaries({"order_id": st.sampled_from(("o-1", "o-27")), "limit": st.integers(0, 50)},
                                       optional={"notify": st.booleans(), "filters": _VALUES}),
    "now": st.integers(0, 2_000_000_000), "ttl": st.sampled_from((1, 30, 300, 2.5, 0.5))})


def presented(case: dict[str, Any], variant: tuple[str, str, float]) -> tuple[str, dict[str, Any], float]:
    """Who presents the token, with which arguments, when."""
    caller_change, argument_change, offset = variant
    caller = case["caller"]
    caller = {"same": caller, "another caller": "mallory@evil.example", "upper case": caller.upper(),
              "longer": caller + "x", "prefix": caller[:-1]}[caller_change]
    args = dict(case["arguments"])
    if argument_change == "reordered":
        args = dict(reversed(list(args.items())))
    elif argument_change == "a value changed":
        args["order_id"] += "9"
    elif argument_change == "one added":
        args["force"] = True
    elif argument_change == "one removed":
        args.pop("order_id")
    elif argument_change == "an int as a string":
        args["limit"] = str(args["limit"])
    elif argument_change == "a key renamed":
        args["max_results"] = args.pop("limit")
    return caller, args, case["now"] + case["ttl"] + offset


def _oracle_round_trips(key: bytes, case: dict[str, Any]) -> list[Any]:
    codec = SealedStateCodec(key, ttl_seconds=case["ttl"])
    sealed = _Round(_Subject(case["caller"]), request_digest("tools/call", {"arguments": case["arguments"]}),
                    case["now"])
    token = codec.seal(case["state"], sealed)  # type: ignore[arg-type]
    out: list[Any] = []
    for variant in VARIANTS:
        caller, args, at = presented(case, variant)
        try:
            out.append(codec.open(token, _Round(_Subject(caller), request_digest("tools/call", {"arguments": args}),
                                                at)))  # type: ignore[arg-type]
        except McpError:
            out.append("refused")
    return out


def _learner_round_trips(ctx: CheckContext, key: bytes, case: dict[str, Any]) -> list[Any]:
    token = _seal(ctx, {"key": key, **case})
    out: list[Any] = []
    for variant in VARIANTS:
        ok, value = _open(ctx, key, token, *presented(case, variant))
        out.append(value if ok else "refused")
    return out


def _describe(case: dict[str, Any]) -> str:
    return (f"sealed for {case['caller']!r} with arguments {show(case['arguments'])} at now={case['now']}, "
            f"ttl={case['ttl']}, state {show(case['state'])}")


def _compare_round_trips(case: dict[str, Any], got: list[Any], want: list[Any]) -> Mismatch | None:
    for variant, mine, theirs in zip(VARIANTS, got, want, strict=True):
        if (mine == "refused") == (theirs == "refused") and (mine == "refused" or same_json(mine, theirs)):
            continue
        caller, args, at = presented(case, variant)
        how = f"presented by {caller!r} with arguments {show(args)} at now={at!r}"
        if theirs == "refused":
            what = ("another caller" if variant[0] != "same" else "other arguments" if variant[1] != "same"
                    else "a time at or after its expiry")
            return Mismatch(f"open_state() accepted the token {how}: {what}.", R_BIND,
                            expected="a ValueError: the simulator's sealed state refuses it")
        if mine == "refused":
            return Mismatch(f"open_state() refused the token {how}, which the simulator's sealed state opens.",
                            R_INTEGRITY if variant[:2] == ("same", "same") else R_ARGS,
                            expected=f"the state {show(theirs)}")
        return Mismatch(f"open_state() gave back {show(mine)} {how}, not the state that was sealed.", R_INTEGRITY,
                        expected=f"the state {show(theirs)}")
    return None


def check_generated(ctx: CheckContext, kind: str) -> None:
    key = ctx.rng.randbytes(32)
    differential(ctx, SEALINGS, learner=lambda case: _learner_round_trips(ctx, key, case),
                 oracle=lambda case: _oracle_round_trips(key, case), compare=_compare_round_trips,
                 describe=_describe, examples=4)


EXERCISE = Exercise(
    id="ex04_seal_state",
    title="Seal requestState: integrity, binding, expiry",
    chapter="04",
    summary="Protect MRTR requestState with an HMAC bound to caller, arguments and expiry.",
    rules=(R_INTEGRITY, R_BIND, R_ARGS, R_CONST),
    functions=("seal_state", "open_state"),
    checks=(
        Check("A fresh token opens to the same state", R_INTEGRITY, check_round_trip,
              ("same process", "empty state", "text in any script", "in a fresh process"),
              hint="Compare what open_state gives back with what seal_state was given — also when another "
                   "process, sharing only the key, opens it."),
        Check("Forged and tampered tokens are rejected", R_INTEGRITY, check_forgery,
              ("another key", "edited fields", "flipped characters", "spliced tokens", "garbage"),
              hint="Which parts of your token does the MAC cover? An attacker can change every part it does not."),
        Check("Bound to the caller", R_BIND, check_caller, ("another caller", "same name, other case", "a longer name"),
              hint="Compare the caller who presents the token with the one it was sealed for."),
        Check("Bound to the arguments (key order does not matter)", R_ARGS, check_arguments,
              ("changed value", "added argument", "an integer sent as a string", "one removed", "a key renamed",
               "a nested value changed", "same arguments reordered"),
              hint="Compare a digest of the arguments, computed the same way whatever the order of their keys."),
        Check("Expires after ttl seconds", R_BIND, check_expiry, ("just before expiry", "just before a long expiry", "at expiry",
                                                                  "after expiry"),
              hint="Compare the opening time with the expiry at the boundary itself: is 'at' valid or not?"),
        Check("A real HMAC, full-length tags, constant-time comparison", R_CONST, check_mac_strength,
              ("HMAC with the server's key", "constant-time comparison", "full-length tag"),
              hint="Look at how the tag is made and how it is compared, not only whether it matches."),
        Check("Any state, caller, arguments and time: accepted or refused like the simulator's", R_BIND,
              check_generated, ("generated",), seeds=1,
              hint="A token opens only for the caller it was sealed for, the same arguments in any key order, "
                   "strictly before its expiry, and gives back exactly the state sealed."),
    ),
    hints=(
        Hint("A client can change any byte of requestState. The only thing it cannot do without the server's "
             "key is compute a valid HMAC — so the server must check one over the whole payload.", R_INTEGRITY),
        Hint("Everything open_state will need to check belongs inside what the MAC covers: the state, the "
             "caller, a digest of the arguments, the expiry. The token carries that payload and its tag.", R_BIND),
        Hint("In open_state the order matters: verify the tag first (the hmac module has a comparison made for "
             "this), and only then trust and compare the caller, the arguments digest and the expiry. Anything "
             "that fails — including undecodable input — is a ValueError.", R_CONST),
    ),
    forbidden=("mcp_sim.security", "mcp_sim.capabilities", "mcp_sim.roles"),
    observe=("hmac.compare_digest", "hmac.new"),
)
