"""Exercise ex07_next_message (chapter 07): play the Client or the Server of a subscription.

Each case pauses a session about change at a point of a fixed kind and asks the learner for the
next message, as one side (like ``ex02_next_message``):

* legacy (2025-06-18 / 2025-11-25): ``resources/subscribe`` and its empty result,
  ``notifications/resources/updated``, ``resources/unsubscribe``;
* 2026-07-28: ``subscriptions/listen``, its ``notifications/subscriptions/acknowledged`` (only what the
  server declared), change notifications tagged with the ``subscriptionId``, and closing the stream
  with ``notifications/cancelled``;
* both eras: listing tools again after ``notifications/tools/list_changed``.

The session is not written here: the simulator plays it (a seeded catalog server and the real
Client, :func:`~mcp_sim.grading.exercises.ex07_world.watch_story`), and the expected next message is
the one the simulator sent. The learner's message must be valid against the official schema of the
revision and match the simulator's structurally: same kind and method, the answered request's id,
any fresh id for a new request, and the same params (a request's ``_meta`` is compared on the
version and capabilities it must carry; a cancellation's ``reason`` is free text).
"""

from __future__ import annotations

import copy
import functools
import json
import random
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from mcp_sim.grading.differential import Mismatch, differential
from mcp_sim.grading.exercises.ex07_world import (
    LEGACY_REVISIONS,
    MODERN,
    Connect,
    catalog,
    list_everything,
    record,
    watch_story,
)
from mcp_sim.grading.model import Check, CheckContext, CheckFailed, Exercise, Hint
from mcp_sim.protocol.revisions import get_revision
from mcp_sim.protocol.schema import find_spec_dir, schema_errors
from mcp_sim.roles.server import Server
from mcp_sim.wire.jsonrpc import (
    InvalidMessage,
    JSONRPCErrorResponse,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResultResponse,
    parse_object,
)

R_SUBSCRIBE = "change.legacy.resources-subscribe"
R_LISTEN = "subscriptions.only-what-was-asked"
R_CLOSE = "subscriptions.client-ends-by-cancelling"
R_ACK = "subscriptions.ack-first"
R_CHECKS_ACK = "subscriptions.client-checks-ack"
R_TAGGED = "subscriptions.subscription-id"
R_NEW_ID = "jsonrpc.legacy.request-id-unused-in-session"
R_RELIST = "change.list-changed-carries-no-list"

SUB_ID = "io.modelcontextprotocol/subscriptionId"
_REQUEST_META = ("io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientCapabilities")
_FLAGS = {"tools": "toolsListChanged", "prompts": "promptsListChanged", "resources": "resourcesListChanged"}


@functools.lru_cache(maxsize=64)
def session(seed: int, revision: str, list_changed: bool, lists: tuple[str, ...],
            subscribe: bool = True, tools_first: bool = False) -> tuple[Any, ...]:
    """``(messages, watched, lists)``: the simulator's session for this seed and set-up (kept for a
    while: every kind of a seed reads the same run). ``tools_first``: the client lists tools before
    anything else, so the list_changed comes to a client that holds the tools already."""
    rng = random.Random(f"ex07_next_message|{seed}")
    server = catalog(rng, list_changed=list_changed, subscribe=subscribe)
    watched = rng.choice(sorted(server.resources))

    async def story(connect: Connect, srv: Server) -> None:
        client = await connect(None)
        if tools_first:
            await list_everything(client, ("tools/list",))
        # a host that hears about tools only subscribes first thing; one that hears about every list has
        # listed something before (so both a stream opened at once and one opened later are tried)
        await watch_story(client, srv, rng, watched=watched, flags={_FLAGS[k]: True for k in lists},
                          before=0 if lists == ("tools",) or tools_first else rng.randint(1, 2))

    return tuple(m for m in record(rng.randint(0, 2**31), revision, server, story)), watched, lists


LIST_SETS = {"tools only": ("tools",), "every list": ("tools", "prompts", "resources")}
"""Which lists the host asks to hear about (a kind names one; the seed never picks it)."""


def _legacy(kind: str) -> str:
    return kind.rsplit(" in ", 1)[1]


def _lists(kind: str) -> tuple[str, ...]:
    return LIST_SETS["every list" if "every list" in kind else "tools only"]


def _find(messages: tuple[dict[str, Any], ...], sender: str, test: Any) -> int:
    return next(i for i, m in enumerate(messages) if m["from"] == sender and test(m["message"]))


def _method(name: str) -> Any:
    return lambda msg: msg.get("method") == name


def _answer_to(messages: tuple[dict[str, Any], ...], method: str) -> Any:
    request = messages[_find(messages, "client", _method(method))]["message"]
    return lambda msg: "method" not in msg and msg.get("id") == request["id"]


def schema_problems(message: dict[str, Any], revision: str, answered: str | None) -> list[str]:
    """How ``message`` breaks ``revision``'s official schema (empty when valid, or when the schemas are
    not available here). ``answered`` is the method a response answers."""
    if find_spec_dir() is None:
        return []
    errors = schema_errors(message, revision, "JSONRPCMessage")
    if errors:
        return errors
    rev = get_revision(revision)
    if "method" in message:
        name, kind = message["method"], "request" if "id" in message else "notification"
        info = rev.requests.get(name) if kind == "request" else rev.notifications.get(name)
        if info is None:
            return [f"{name} is not a {kind} of {revision}"]
        type_name = info.request_type if kind == "request" else info.type_name  # type: ignore[union-attr]
        instance = message if rev.types_carry_envelope else {k: v for k, v in message.items()
                                                              if k in ("method", "params")}
        return schema_errors(instance, revision, type_name)
    if "result" in message and answered is not None and answered in rev.requests:
        type_name = rev.requests[answered].result_type
        return schema_errors(message["result"], revision, "Result" if type_name == "EmptyResult" else type_name)
    return []


def _shape(message: dict[str, Any], fresh_request: bool) -> dict[str, Any]:
    """The parts of a message that must match: a new request's id is free, so is a cancellation's
    reason; of a request's ``_meta`` only the version and the capabilities count."""
    out = copy.deepcopy(message)
    if fresh_request:
        out.pop("id", None)
    params = out.get("params")
    if isinstance(params, dict):
        if "id" in message and "method" in message and isinstance(params.get("_meta"), dict):
            params["_meta"] = {k: v for k, v in params["_meta"].items() if k in _REQUEST_META}
        if message.get("method") == "notifications/cancelled":
            params.pop("reason", None)
        if message.get("method") in ("subscriptions/listen", "notifications/subscriptions/acknowledged") \
                and isinstance(params.get("notifications"), dict):
            # a flag written out as false, or an empty list of URIs, asks for (or honours) nothing
            params["notifications"] = {k: v for k, v in params["notifications"].items() if v is not False
                                       and v != []}
        if not params:  # no params and empty params say the same
            out.pop("params")
    return out


def _difference(want: Any, got: Any, path: str = "") -> str:
    """The first place where ``got`` differs from ``want``, in words (what ``got`` has there, not what
    ``want`` has: the right message is the last hint)."""
    where = path or "the message"
    if isinstance(want, dict) and isinstance(got, dict):
        for key in want:
            if key not in got:
                return f"{where} lacks {key!r}"
            found = _difference(want[key], got[key], f"{path}.{key}" if path else key)
            if found:
                return found
        extra = [k for k in got if k not in want]
        return f"{where} has {extra[0]!r}, which does not belong here" if extra else ""
    if isinstance(want, list) and isinstance(got, list) and sorted(map(json.dumps, want)) == \
            sorted(map(json.dumps, got)):
        return ""
    if want != got or type(want) is not type(got):
        return f"{where} is {json.dumps(got)}, which is not what belongs there"
    return ""


_KINDS = {JSONRPCRequest: "a request", JSONRPCNotification: "a notification",
          JSONRPCResultResponse: "a result response", JSONRPCErrorResponse: "an error response"}


def play(ctx: CheckContext, messages: tuple[dict[str, Any], ...], at: int, role: str, revision: str,
         world: dict[str, Any], rule: str | Callable[[dict[str, Any]], str] = "") -> None:
    """Ask for the message at ``at`` (sent by ``role``) given everything before it, and compare.
    ``rule`` is the rule a wrong message breaks when it is not the check's own (or a function of the
    learner's message that names it)."""
    transcript = [{"from": m["from"], "message": m["message"]} for m in messages[:at]]
    want = messages[at]["message"]
    got = ctx.function("next_message")(role, copy.deepcopy(transcript), {"revision": revision, **world})
    if not isinstance(got, dict):
        raise CheckFailed(f"next_message() must return one JSON-RPC message as a dict; got {type(got).__name__}.")
    try:
        json.dumps(got)
    except (TypeError, ValueError) as exc:
        raise CheckFailed(f"The message is not JSON data ({exc}).") from None
    if callable(rule):
        rule = rule(got)
    parsed, expected = parse_object(got), parse_object(want)
    if isinstance(parsed, InvalidMessage):
        raise CheckFailed(f"{json.dumps(got)} is not valid JSON-RPC: {parsed.reason}.")
    if type(parsed) is not type(expected):
        raise CheckFailed(f"As the {role}, the next message here is {_KINDS[type(expected)]}"
                          f"{' ' + want['method'] if 'method' in want else ''}; yours is {_KINDS[type(parsed)]}: "
                          f"{json.dumps(got)}")
    answered = None
    if "method" not in want:  # a response: which request it answers
        answered = next(m["message"]["method"] for m in messages[:at] if m["from"] != role
                        and m["message"].get("id") == want["id"] and "method" in m["message"])
    problems = schema_problems(got, revision, answered)
    if problems:
        raise CheckFailed(f"{json.dumps(got)} is not a valid message of {revision}: " + "; ".join(problems[:3]),
                          rule)
    fresh = "method" in want and "id" in want
    if fresh:
        used = {json.dumps(m["message"]["id"]) for m in messages[:at] if m["from"] == role
                and "method" in m["message"] and "id" in m["message"]}
        if json.dumps(got["id"]) in used:
            raise CheckFailed(f"The {role} already used the id {got['id']!r} in this session (used: "
                              f"{', '.join(sorted(used))}); a new request needs an id it never used.", R_NEW_ID)
    elif "id" in want and (got.get("id") != want["id"] or type(got.get("id")) is not type(want["id"])):
        raise CheckFailed(f"This response answers the {answered} request with id {want['id']!r}; it must carry "
                          f"that id (value and type), not {got.get('id')!r}.")
    found = _difference(_shape(want, fresh), _shape(got, fresh))
    if found:
        if not rule and "id" not in want and (SUB_ID in found or "'_meta'" in found):
            rule = R_TAGGED  # a notification with a missing, wrong or out-of-place subscriptionId
        raise CheckFailed(f"As the {role}, your next message is not the one due here: in yours, {found}.", rule,
                          expected=f"a message like {json.dumps(_shape(want, fresh))}"
                                   f"{' (with an id of your choice)' if fresh else ''}")


def check_legacy_client(ctx: CheckContext, kind: str) -> None:
    revision = _legacy(kind)
    messages, watched, lists = session(ctx.seed, revision, True, _lists(kind))
    method = "resources/subscribe" if kind.startswith("subscribe") else "resources/unsubscribe"
    task = {"action": "watch" if kind.startswith("subscribe") else "stop watching", "uri": watched,
            "lists": list(lists)}
    play(ctx, messages, _find(messages, "client", _method(method)), "client", revision, {"task": task})


def check_legacy_server(ctx: CheckContext, kind: str) -> None:
    revision = _legacy(kind)
    messages, watched, _ = session(ctx.seed, revision, True, _lists(kind))
    if kind.startswith("answer subscribe"):
        play(ctx, messages, _find(messages, "server", _answer_to(messages, "resources/subscribe")), "server",
             revision, {"happened": None})
    else:
        at = _find(messages, "server", _method("notifications/resources/updated"))
        play(ctx, messages, at, "server", revision, {"happened": {"change": "resource", "uri": watched}})


def check_modern_client(ctx: CheckContext, kind: str) -> None:
    messages, watched, lists = session(ctx.seed, MODERN, True, _lists(kind))
    if kind.startswith("open a subscription"):
        at = _find(messages, "client", _method("subscriptions/listen"))
        task = {"action": "watch", "uri": watched, "lists": list(lists)}
    else:
        at = _find(messages, "client", _method("notifications/cancelled"))
        task = {"action": "stop watching", "uri": watched, "lists": list(lists)}
    play(ctx, messages, at, "client", MODERN, {"task": task}, R_CLOSE if kind.startswith("close") else "")


def _ack_rule(messages: tuple[dict[str, Any], ...]) -> Callable[[dict[str, Any]], str]:
    """The rule a wrong acknowledgement breaks: honouring what was not asked for, or what the server
    never declared (left out of the acknowledgement, rule subscriptions.client-checks-ack)."""
    listen = messages[_find(messages, "client", _method("subscriptions/listen"))]["message"]
    asked = {k for k, v in listen["params"]["notifications"].items() if v not in (False, [])}
    honoured = {k for k, v in messages[_find(messages, "server", _method("notifications/subscriptions/acknowledged"))]
                ["message"]["params"]["notifications"].items() if v not in (False, [])}

    def rule(got: dict[str, Any]) -> str:
        flags = (got.get("params") or {}).get("notifications") if isinstance(got, dict) else None
        if not isinstance(flags, dict):
            return ""
        named = {k for k, v in flags.items() if v not in (False, [])}
        if named - asked:
            return R_LISTEN
        if named - honoured:
            return R_CHECKS_ACK
        return ""

    return rule


def check_acknowledge(ctx: CheckContext, kind: str) -> None:
    messages, _, _ = session(ctx.seed, MODERN, not kind.startswith("listChanged not declared"), _lists(kind),
                             subscribe=not kind.startswith("subscribe not declared"))
    at = _find(messages, "server", _method("notifications/subscriptions/acknowledged"))
    play(ctx, messages, at, "server", MODERN, {"happened": None}, _ack_rule(messages))


def check_tagged(ctx: CheckContext, kind: str) -> None:
    messages, watched, _ = session(ctx.seed, MODERN, True, _lists(kind))
    if kind.startswith("resource updated"):
        at = _find(messages, "server", _method("notifications/resources/updated"))
        happened: dict[str, Any] = {"change": "resource", "uri": watched}
    else:
        at = _find(messages, "server", _method("notifications/tools/list_changed"))
        happened = {"change": "tools"}
    play(ctx, messages, at, "server", MODERN, {"happened": happened})


def check_relist(ctx: CheckContext, kind: str) -> None:
    revision = _legacy(kind)
    messages, _, _ = session(ctx.seed, revision, True, _lists(kind), tools_first="listed before" in kind)
    changed = _find(messages, "server", _method("notifications/tools/list_changed"))
    at = _find(messages[changed:], "client", _method("tools/list")) + changed
    play(ctx, messages, at, "client", revision, {"task": None})


# --- generated: any era, declaration, lists asked for and point of the session -----------------------

_POINTS = {"legacy": ("subscribe", "answer subscribe", "resource updated", "list tools again", "unsubscribe",
                      "answer unsubscribe"),
           "modern": ("open a subscription", "acknowledge", "resource updated", "tools list changed",
                      "list tools again", "close the subscription")}


def _point(messages: tuple[dict[str, Any], ...], watched: str, lists: tuple[str, ...],
           point: str) -> tuple[int, str, dict[str, Any], Any]:
    """Where ``point`` is in the session: ``(index, role, world, rule)``."""
    task = {"action": "stop watching" if point in ("unsubscribe", "close the subscription") else "watch",
            "uri": watched, "lists": list(lists)}
    if point in ("subscribe", "unsubscribe"):
        return _find(messages, "client", _method(f"resources/{point}")), "client", {"task": task}, ""
    if point in ("answer subscribe", "answer unsubscribe"):
        method = f"resources/{point.split()[1]}"
        return _find(messages, "server", _answer_to(messages, method)), "server", {"happened": None}, ""
    if point == "resource updated":
        at = _find(messages, "server", _method("notifications/resources/updated"))
        return at, "server", {"happened": {"change": "resource", "uri": watched}}, ""
    if point == "tools list changed":
        return _find(messages, "server", _method("notifications/tools/list_changed")), "server", \
            {"happened": {"change": "tools"}}, ""
    if point == "list tools again":
        changed = _find(messages, "server", _method("notifications/tools/list_changed"))
        return _find(messages[changed:], "client", _method("tools/list")) + changed, "client", {"task": None}, ""
    if point == "open a subscription":
        return _find(messages, "client", _method("subscriptions/listen")), "client", {"task": task}, ""
    if point == "acknowledge":
        at = _find(messages, "server", _method("notifications/subscriptions/acknowledged"))
        return at, "server", {"happened": None}, _ack_rule(messages)
    return _find(messages, "client", _method("notifications/cancelled")), "client", {"task": task}, R_CLOSE


_GENERATED = st.tuples(st.sampled_from((*LEGACY_REVISIONS, MODERN)), st.booleans(),
                       st.sampled_from(tuple(sorted({("tools",), ("tools", "prompts"), ("tools", "resources"),
                                                     ("tools", "prompts", "resources")}))),
                       st.integers(0, 5), st.integers(0, 1))


def _describe(case: tuple[Any, ...]) -> str:
    revision, declared, lists, point, variant = case
    era = "modern" if revision == MODERN else "legacy"
    return (f"{revision}, tools.listChanged {'declared' if declared else 'not declared'}, the host wants to hear "
            f"about {', '.join(lists)}: the message '{_POINTS[era][point]}' (session {variant + 1})")


def check_generated(ctx: CheckContext, kind: str) -> None:
    def learner(case: tuple[Any, ...]) -> None:
        revision, declared, lists, point, variant = case
        era = "modern" if revision == MODERN else "legacy"
        name = _POINTS[era][point]
        if not declared and name in ("tools list changed", "list tools again"):
            declared = True  # no list_changed without the declaration: those points need it
        messages, watched, lists = session(ctx.seed + variant, revision, declared, lists)
        at, role, world, rule = _point(messages, watched, lists, name)
        play(ctx, messages, at, role, revision, world, rule)

    differential(ctx, _GENERATED, learner=learner, oracle=lambda case: None, compare=_no_mismatch,
                 describe=_describe, raises_rule=R_LISTEN, examples=15)


def _no_mismatch(case: Any, got: Any, want: Any) -> Mismatch | None:
    return None  # play() raises at a wrong message


EXERCISE = Exercise(
    id="ex07_next_message",
    title="Subscriptions, both eras: the next message",
    chapter="07",
    summary="Read a paused session about change and write the next message as Client or Server: legacy "
            "resources/subscribe and updated; modern subscriptions/listen, its acknowledgement, tagged "
            "notifications and cancellation; listing again after list_changed.",
    rules=(R_SUBSCRIBE, R_LISTEN, R_CLOSE, R_ACK, R_CHECKS_ACK, R_TAGGED, R_RELIST, R_NEW_ID),
    functions=("next_message",),
    checks=(
        Check("Legacy client: resources/subscribe and unsubscribe", R_SUBSCRIBE, check_legacy_client,
              ("subscribe in 2025-06-18", "subscribe in 2025-11-25", "unsubscribe in 2025-06-18",
               "unsubscribe in 2025-11-25"),
              hint="In 2025 revisions the client names one resource per request: which method, which params?"),
        Check("Legacy server: answer subscribe, announce updated", R_SUBSCRIBE, check_legacy_server,
              ("answer subscribe in 2025-06-18", "answer subscribe in 2025-11-25", "resource updated in 2025-06-18",
               "resource updated in 2025-11-25"),
              hint="A subscribe is answered like any request (its id, an empty result); a change is a notification."),
        Check("Modern client: open and close a listen", R_LISTEN, check_modern_client,
              ("open a subscription: tools only", "open a subscription: every list", "close the subscription"),
              hint="2026-07-28 has one request for all of it; it is closed by cancelling that request."),
        Check("Modern server: acknowledge what it will honour", R_ACK, check_acknowledge,
              ("everything declared: tools only", "everything declared: every list",
               "listChanged not declared: tools only", "listChanged not declared: every list",
               "subscribe not declared: tools only", "subscribe not declared: every list"),
              hint="Compare the filter asked for with the capabilities the server gave in server/discover."),
        Check("Modern server: tag every change with the subscriptionId", R_TAGGED, check_tagged,
              ("resource updated", "tools list changed: tools only", "tools list changed: every list"),
              hint="Which request opened the stream? Its id goes into every notification's _meta."),
        Check("Client: list tools again after list_changed", R_RELIST, check_relist,
              ("list again in 2025-06-18", "list again in 2025-11-25", "list again in 2026-07-28",
               "list again, tools listed before, in 2025-11-25", "list again, tools listed before, in 2026-07-28"),
              hint="The notification has no tools in it. Ask for them, with a new id."),
        Check("Any era, declaration, lists and point: the simulator's next message", R_LISTEN, check_generated,
              ("generated",),
              hint="Find the era, what the server declared and what the host asked for; then which side speaks "
                   "and what it answers or announces."),
    ),
    hints=(
        Hint("Find the era first: an initialize exchange means 2025-06-18/2025-11-25, server/discover and _meta "
             "in every request mean 2026-07-28. The methods for subscribing differ between them.", R_LISTEN),
        Hint("Legacy: {\"method\": \"resources/subscribe\", \"params\": {\"uri\": ...}} with a new id; the server "
             "answers {\"result\": {}} and later sends notifications/resources/updated {uri}.", R_SUBSCRIBE),
        Hint("Modern: subscriptions/listen with params {\"notifications\": {...}, \"_meta\": {...}}; copy the "
             "_meta version and capabilities from the client's earlier requests. The server acknowledges only "
             "the flags it declared (e.g. toolsListChanged needs tools.listChanged true).", R_ACK),
        Hint("The subscriptionId is the listen request's id exactly — 4, not \"4\" — in _meta of the "
             "acknowledgement and of every change notification; notifications/cancelled names it as "
             "requestId.", R_TAGGED),
    ),
    forbidden=("mcp_sim.roles", "mcp_sim.capabilities", "mcp_sim.grading", "mcp_sim.scenarios"),
)
