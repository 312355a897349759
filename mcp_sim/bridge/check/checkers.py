"""Checkers that read a recorded run and report what broke a rule (chapter 12).

A checker sees only the trace — the frames as they crossed the pipe, their marks and the transport
events — never the workload's own variables, so a trace saved with ``--trace`` can be checked again
later and gives the same findings. This module holds the checks every frame is held to, whatever it
was meant to do:

* **framing** — each line the server writes is UTF-8 JSON and nothing else (no stray prints);
* **schema** — each message validates against the official schema of the session's revision, and a
  result against the result type of the method it answers;
* **correlation** — every request gets exactly one response with its id, no response names an id
  nobody sent, a null id only answers a frame that could not be read;
* **robustness and timing** — the process does not die under the workload, answers within the
  deadline, and (2026-07-28) exits on its own once stdin closes;
* **era** — a 2026-07-28 stdio server sends no requests of its own.

What each marked request was *expected* to get is checked in :mod:`.expectations`, from the pairs
this module makes (:func:`pair_responses`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mcp_sim.bridge.check.findings import Category, Finding
from mcp_sim.protocol import schema
from mcp_sim.protocol.revisions import LATEST_LEGACY, REVISIONS
from mcp_sim.trace.event import TraceEvent

CLOSE_MARK = "check:close"
KILL_MARK = "nemesis:kill"
DEAD_MARK = "check:dead"
MALFORMED_EXPECTATIONS = ("expect:parse-error", "expect:invalid-request")


@dataclass
class LinkRun:
    """Everything recorded on one link, with the requests paired to their responses."""

    name: str
    era: str
    revision: str
    events: list[TraceEvent]
    requests: list[TraceEvent] = field(default_factory=list)
    answers: dict[int, list[TraceEvent]] = field(default_factory=dict)
    """request seq → the responses paired with it, in order."""
    stray: list[TraceEvent] = field(default_factory=list)
    """Responses that answer no request sent on this link."""

    def answer(self, request: TraceEvent) -> TraceEvent | None:
        found = self.answers.get(request.seq)
        return found[0] if found else None


def client_of(link: str) -> str:
    return f"client/{link}"


def server_of(link: str) -> str:
    return f"server/{link}"


def negotiated_revision(events: Iterable[TraceEvent], era: str) -> str:
    """The revision a link spoke: the version in the first initialize result (legacy), else 2026-07-28."""
    if era == "modern":
        return "2026-07-28"
    for e in events:
        if e.kind == "response" and e.method == "initialize" and isinstance(e.message, dict):
            version = (e.message.get("result") or {}).get("protocolVersion")
            if isinstance(version, str) and version in REVISIONS and REVISIONS[version].era == "legacy":
                return version
    return LATEST_LEGACY


def pair_responses(link: str, era: str, events: list[TraceEvent]) -> LinkRun:
    """Pair each server response with the request it answers: by id, first come first served (two
    requests sent with one id may take two responses); an error with a null id goes to the earliest
    frame that could not be read and is still unanswered, else to a request the nemesis sent with
    an id already in use (a server may refuse that one without echoing the id)."""
    run = LinkRun(link, era, negotiated_revision(events, era), events)
    open_by_id: dict[str, list[TraceEvent]] = {}
    malformed: list[TraceEvent] = []
    refusable: list[TraceEvent] = []
    for e in events:
        if e.sender == client_of(link):
            if e.kind == "request" and not may_lose_id(e):
                run.requests.append(e)
                open_by_id.setdefault(_key(e.request_id), []).append(e)
                if "duplicate" in e.marks:
                    refusable.append(e)
            elif may_lose_id(e):
                malformed.append(e)
                readable = _readable_id(e)
                if readable is not None:
                    open_by_id.setdefault(_key(readable), []).append(e)
        elif e.sender == server_of(link) and e.kind in ("response", "error"):
            waiting = open_by_id.get(_key(e.request_id)) if e.request_id is not None else None
            if waiting:
                answered = waiting.pop(0)
                run.answers.setdefault(answered.seq, []).append(e)
                if answered in malformed:
                    malformed.remove(answered)
            elif e.request_id is None and e.kind == "error" and malformed:
                answered = malformed.pop(0)
                run.answers.setdefault(answered.seq, []).append(e)
                for queue in open_by_id.values():
                    if answered in queue:
                        queue.remove(answered)
            elif e.request_id is None and e.kind == "error" and refusable:
                # a reused id the server refused without echoing it (echoing would make the id's
                # answers ambiguous): the client broke the id rule first, so this is no finding
                run.answers.setdefault(refusable.pop(0).seq, []).append(e)
            elif e.request_id is not None and _sent_before(run, e):
                run.answers.setdefault(_sent_before(run, e), []).append(e)  # a second answer
            else:
                run.stray.append(e)
    return run


def may_lose_id(e: TraceEvent) -> bool:
    """A frame the server may answer without its id: unreadable, or refused by the HTTP layer for its
    headers before the body was read (an ``expect:http:*`` probe)."""
    return any(m in MALFORMED_EXPECTATIONS or m.startswith("expect:http:") for m in e.marks)


def _key(request_id: Any) -> str:
    return f"{type(request_id).__name__}:{request_id!r}"


def _readable_id(e: TraceEvent) -> Any:
    # (a line that is not UTF-8 is recorded with replacement characters: a lenient server that decodes
    # it the same way and echoes that id is answering this frame)
    message = e.message
    if isinstance(message, dict) and isinstance(message.get("id"), (str, int)) and not isinstance(
            message.get("id"), bool):
        return message["id"]
    return None


def _sent_before(run: LinkRun, response: TraceEvent) -> int:
    """The seq of the last request with the response's id (0 if none): a repeated answer to it."""
    for e in reversed(run.requests):
        if e.seq < response.seq and _key(e.request_id) == _key(response.request_id):
            return e.seq
    return 0


# --- the checks every frame is held to --------------------------------------------------------------

def _finding(run: LinkRun, rule: str, category: Category, message: str, seq: int | None,
             **evidence: Any) -> Finding:
    return Finding.of(rule, category, run.revision, message, seq, link=run.name, **evidence)


def check_framing(run: LinkRun) -> list[Finding]:
    """Each stdout line is UTF-8 JSON-RPC; a batch only where the revision has batches."""
    out = []
    last_client: TraceEvent | None = None
    for e in run.events:
        if e.sender == client_of(run.name) and e.kind != "transport":
            last_client = e
        if e.sender != server_of(run.name) or (e.message is None and e.kind != "invalid"):
            continue
        if (e.kind == "invalid" and isinstance(e.message, dict) and e.message.get("id") is None
                and ("result" in e.message or "error" in e.message)
                and last_client is not None and last_client.kind == "notification"):
            out.append(_finding(run, "jsonrpc.notification-not-answered", "jsonrpc",
                                f"the server answered the notification {last_client.method}", e.seq,
                                notification_seq=last_client.seq))
            continue
        declared = (e.framing.get("stdio") or {}).get("bytes")
        if e.raw is not None and isinstance(declared, int) and declared != len(e.raw.encode()) + 1:
            out.append(_finding(run, "transport.utf-8", "framing",
                                "the server wrote a line that is not valid UTF-8", e.seq))
        if e.kind == "invalid" and e.message is None:
            out.append(_finding(run, "stdio.stdout-only-messages", "framing",
                                f"the server wrote a line to stdout that is not JSON: {_short(e.raw)}", e.seq))
        elif e.kind == "invalid":
            out.append(_finding(run, "jsonrpc.messages-follow-jsonrpc", "jsonrpc",
                                f"the server wrote JSON that is not a JSON-RPC 2.0 message: {_short(e.raw)}", e.seq))
        elif e.kind == "batch" and run.revision != "2025-03-26":
            out.append(_finding(run, "jsonrpc.batches-only-2025-03-26", "framing",
                                f"the server wrote a batch (a JSON array), which {run.revision} does not have",
                                e.seq))
    return out


EXTENSION_RESULTS = {"tasks/get": "GetTaskResult", "tasks/update": "UpdateTaskResult", "tasks/cancel": "CancelTaskResult"}
"""The tasks extension's methods (2026-07-28) → their result types in the extension's own schema."""


def _result_type(request: TraceEvent | None, revision: str, result: Any) -> tuple[str, str] | None:
    """(schema, definition) that the result answering ``request`` must match: the method's result type,
    an InputRequiredResult, or a task — legacy ``CreateTaskResult`` when the call carried
    ``params.task``, the extension's ``CreateTaskResult`` for ``resultType: "task"`` — and the
    extension's own types for its methods."""
    if request is None or request.method is None:
        return None
    method = request.method
    info = REVISIONS[revision].method(method)
    kind = result.get("resultType") if isinstance(result, dict) else None
    if kind == "input_required":
        return (revision, "InputRequiredResult") if "InputRequiredResult" in schema.definition_names(revision) else None
    if REVISIONS[revision].era == "modern" and (kind == "task" or method in EXTENSION_RESULTS):
        return "ext-tasks", "CreateTaskResult" if kind == "task" else EXTENSION_RESULTS.get(method, "CreateTaskResult")
    if "task" in _object(_object(request.message).get("params")) and "CreateTaskResult" in schema.definition_names(
            revision) and isinstance(result, dict) and "content" not in result:
        return revision, "CreateTaskResult"
    if info is None or info.result_type not in schema.definition_names(revision):
        return None
    return revision, info.result_type


def check_schema(run: LinkRun) -> list[Finding]:
    """Each message the server writes against the JSONRPCMessage schema, and each result against
    its method's result type (on the session's revision)."""
    asked: dict[int, TraceEvent | None] = {}
    """response seq → the request it was paired with (None: its id was in flight twice, so which
    request it answers cannot be told)."""
    counts: dict[str, int] = {}
    for request in run.requests:
        counts[_key(request.request_id)] = counts.get(_key(request.request_id), 0) + 1
    for request in run.requests:
        for response in run.answers.get(request.seq, []):
            asked[response.seq] = request if counts[_key(request.request_id)] == 1 else None
    out = []
    for e in run.events:
        if e.sender != server_of(run.name) or e.kind not in ("request", "response", "error", "notification"):
            continue
        errors = schema.schema_errors(e.message, run.revision)
        what = "message"
        if not errors and e.kind == "response" and isinstance(e.message, dict):
            result = e.message.get("result")
            expected = _result_type(asked.get(e.seq), run.revision, result)
            if expected is not None:
                errors = schema.schema_errors(result, *expected)
                what = f"{expected[1]} (the answer to {e.method})"
        if errors:
            out.append(_finding(run, "check.schema-valid", "schema",
                                f"the {what} breaks the {run.revision} schema: {errors[0]}", e.seq))
    return out


def check_correlation(run: LinkRun, *, deadline_ms: float) -> list[Finding]:
    """One response per request, in time; none to an id nobody sent."""
    out = []
    for e in run.stray:
        code = ((e.message or {}).get("error") or {}).get("code") if isinstance(e.message, dict) else None
        if e.request_id is None and code == -32700:
            out.append(_finding(run, "stdio.newline-delimited", "framing",
                                "the server reported a parse error although every line the client wrote "
                                "then was whole JSON: it does not read its stdin line by line", e.seq))
        elif e.request_id is None:
            out.append(_finding(run, "jsonrpc.error-echoes-id-when-readable", "jsonrpc",
                                "an error with a null id answers no unreadable frame", e.seq))
        else:
            out.append(_finding(run, "jsonrpc.response-echoes-id", "jsonrpc",
                                f"a response with id {e.request_id!r}, which no request on this link had "
                                "(a response to a notification, or a wrong id)", e.seq))
    copies: dict[str, int] = {}
    for request in run.requests:
        copies[_key(request.request_id)] = copies.get(_key(request.request_id), 0) + 1
    ended = _ends(run)
    for request in run.requests:
        answers = run.answers.get(request.seq, [])
        if {"cancelled", "duplicate", "nemesis:hangup", "listen"} & set(request.marks):
            # (a listen is answered only when the server ends the stream: the checker ends it first)
            continue
        if not answers:
            if any(start < request.seq < end and how == "crash" for start, end, how, _seen in ended):
                continue  # counted once, as the crash
            out.append(_finding(run, "check.request-answered", "timing",
                                f"{request.method} (id {request.request_id!r}) got no response within the "
                                f"deadline of {deadline_ms / 1000:g} s", request.seq))
            continue
        late = answers[0].t_ms - request.t_ms
        if late > deadline_ms and "opening" not in request.marks:  # the first one waits for startup too
            out.append(_finding(run, "check.request-answered", "timing",
                                f"{request.method} was answered after {late / 1000:.1f} s, beyond the deadline",
                                request.seq, response_seq=answers[0].seq))
        if len(answers) > 1 and copies[_key(request.request_id)] == 1:
            out.append(_finding(run, "check.request-answered", "jsonrpc",
                                f"{request.method} (id {request.request_id!r}) was answered {len(answers)} times",
                                request.seq, response_seq=answers[1].seq))
    return out


def _ends(run: LinkRun) -> list[tuple[int, int, str, int]]:
    """(spawn seq, end seq, how, seq where the checker saw it gone) for each process on the link: ``exited``/``terminated``/``killed`` (how
    the shutdown went) when the checker closed its stdin first, ``nemesis`` after the nemesis's
    SIGKILL, else ``crash``."""
    spans = []
    start, how, dead = 0, "crash", 0
    for e in run.events:
        if e.kind != "transport":
            continue
        text = e.text or ""
        if text.startswith("spawned process"):
            start, how, dead = e.seq, "crash", 0
        elif CLOSE_MARK in e.marks:
            how = "closed"
        elif KILL_MARK in e.marks:
            how = "nemesis"
        elif DEAD_MARK in e.marks:
            dead = dead or e.seq
        elif text.startswith("process ") and " with code " in text:
            spans.append((start, e.seq, how if how != "closed" else text.split()[2], dead or e.seq))
    return spans


def _unanswered_before(run: LinkRun, end: int) -> list[TraceEvent]:
    """The client frames after the last request the server answered, before ``end``: what it read and
    never answered — the suspects when it died (a notification is never answered, so it stays a
    suspect even when the server's answer to an earlier call crossed it on the wire)."""
    answered = max((seq for seq, answers in run.answers.items() if seq < end and answers), default=0)
    return [e for e in run.events if answered < e.seq < end and e.sender == client_of(run.name)
            and e.kind != "transport"]


def check_process(run: LinkRun) -> list[Finding]:
    """The server keeps serving until its stdin closes; in 2026-07-28 it then exits on its own."""
    out = []
    for _start, end, how, seen_dead in _ends(run):
        if how == "crash":
            suspects = _unanswered_before(run, seen_dead)
            cancelled = any("cancel" in e.marks for e in suspects)
            seqs = [e.seq for e in suspects]
            out.append(_finding(run, "realwire.stdio-server-serves-the-session",
                                "cancellation" if cancelled else "robustness",
                                "the server process ended by itself while the session was open"
                                + (f", after reading frames {seqs} and answering none of them" if seqs else "")
                                + (" (one of them a notifications/cancelled)" if cancelled else ""),
                                seqs[0] if seqs else seen_dead, suspects=seqs, ended_seq=seen_dead))
        elif how in ("terminated", "killed") and run.era == "modern":
            out.append(_finding(run, "stdio.modern.exit-on-eof", "lifecycle",
                                f"the server did not exit after its stdin closed: it had to be {how}", end))
    return out


def check_era(run: LinkRun) -> list[Finding]:
    """A 2026-07-28 stdio server writes no requests (what it needs travels in an InputRequiredResult)."""
    if run.era != "modern":
        return []
    return [_finding(run, "stdio.modern.server-sends-no-requests", "lifecycle",
                     f"the server sent a {e.method} request over 2026-07-28 stdio", e.seq)
            for e in run.events if e.sender == server_of(run.name) and e.kind == "request"
            and e.transport == "stdio"]


_INPUT_CAPABILITY = {"elicitation/create": ("elicitation", "elicitation.legacy.declare-capability"),
                     "sampling/createMessage": ("sampling", "sampling.declare-capability"),
                     "roots/list": ("roots", "roots.declare-capability")}
"""A server's request for input → (the client capability it needs, the rule that gates it on it)."""


def _object(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one (a checker reads whatever was sent)."""
    return value if isinstance(value, dict) else {}


# --- reading an answer (the expectations of .expectations and .tasks_checks) ------------------------------

def _error(response: dict[str, Any] | None) -> dict[str, Any] | None:
    error = (response or {}).get("error")
    return error if isinstance(error, dict) else None


def _result(response: dict[str, Any] | None) -> dict[str, Any] | None:
    result = (response or {}).get("result")
    return result if isinstance(result, dict) else None


def _code(response: dict[str, Any] | None) -> Any:
    return (_error(response) or {}).get("code")


def _said(response: dict[str, Any] | None) -> str:
    """What came back, in a finding's words: no answer, the error and its code, or a result."""
    if response is None:
        return "no answer"
    if _error(response) is not None:
        return f"the error {_code(response)}"
    result = _result(response) or {}
    return "a result with isError true" if result.get("isError") is True else "a result"


def check_input_gating(run: LinkRun) -> list[Finding]:
    """The server asks the client only for what the client declared: in a legacy session no
    ``elicitation/create``, ``sampling/createMessage`` or ``roots/list`` without the capability in
    ``initialize``; in 2026-07-28 no such entry in an InputRequiredResult unless that request's
    ``_meta`` declared it (the checker declares none, so any such ask is a finding)."""
    out = []
    declared: dict[str, Any] = {}
    sent: dict[str, dict[str, Any]] = {}
    for e in run.events:
        message = _object(e.message)
        params = _object(message.get("params"))
        if e.sender == client_of(run.name) and e.kind == "request":
            if e.method == "initialize":
                declared = _object(params.get("capabilities"))
            meta = _object(params.get("_meta"))
            sent[_key(e.request_id)] = meta.get("io.modelcontextprotocol/clientCapabilities") or {}
        elif e.sender == server_of(run.name) and e.kind == "request" and run.era == "legacy":
            need = _INPUT_CAPABILITY.get(e.method or "")
            if need is not None and need[0] not in declared:
                out.append(_finding(run, need[1], "capabilities",
                                    f"the server sent {e.method} although the client declared no {need[0]} "
                                    "capability", e.seq))
        elif e.sender == server_of(run.name) and e.kind == "response" and run.era == "modern":
            result = _object(message.get("result"))
            asks = result.get("inputRequests") if result.get("resultType") == "input_required" else None
            caps = sent.get(_key(e.request_id), {})
            for ask in (asks.values() if isinstance(asks, dict) else ()):
                method = ask.get("method") if isinstance(ask, dict) else None
                need = _INPUT_CAPABILITY.get(method or "")
                if need is not None and need[0] not in caps:
                    out.append(_finding(run, "mrtr.only-declared-input", "capabilities",
                                        f"an InputRequiredResult asks for {method} although the request "
                                        f"declared no {need[0]} capability", e.seq))
    return out


def _short(text: str | None, width: int = 80) -> str:
    text = text or ""
    return text if len(text) <= width else text[: width - 1] + "…"


def split_links(events: Iterable[TraceEvent], eras: Mapping[str, str]) -> list[tuple[str, str, list[TraceEvent]]]:
    """(link, era, its events) for each link the run named, in the order of ``eras``."""
    by_link: dict[str, list[TraceEvent]] = {name: [] for name in eras}
    for e in events:
        if e.link in by_link:
            by_link[e.link].append(e)
    return [(name, eras[name], by_link[name]) for name in eras]
