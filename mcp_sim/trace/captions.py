"""Plain-language captions, short arrow labels and layer tags for trace events.

Nothing here is typed per scenario: every caption is composed from the method, the two participants
and a few fields of the message, so every message of every revision gets one, and every caption
names both sides — "The weather client asks the weather server which tools it offers".

Three things are derived from an event here, and only here, so the diagrams, the tables and the
exports never disagree about wording:

* :func:`classify` — which of the course's three layers the event belongs to (and which part of
  MCP), read from the revisions registry (:data:`~mcp_sim.protocol.revisions.LAYERS`);
* :func:`caption` — one sentence for the learner;
* :func:`label` — the short text written on an arrow: ``→ tools/call #3``, ``← result #3``,
  ``✖ error -32601 #3``, ``⇢ notifications/progress 1/3``. The glyph says what kind of message it is,
  so meaning never depends on colour.
"""

from __future__ import annotations

from typing import Any

from mcp_sim.protocol.revisions import REVISIONS, TASKS_EXTENSION_METHODS, place_of


def classify(event: Any) -> tuple[str, str | None]:
    """(layer, capability) for an event: ``roles`` for app talk, ``transports`` for framing events, and
    for a message the layer and feature the revisions registry gives its method."""
    return classify_kind(event.kind, event.method)


def classify_kind(kind: str, method: str | None) -> tuple[str, str | None]:
    """:func:`classify` from the only two things it looks at: the event's kind and method."""
    if kind == "app":
        return "roles", None
    if method is None:
        return "transports", None
    return place_of(method)


# --- who is who ------------------------------------------------------------------------------------

def who(participant: str) -> str:
    """``"client/weather"`` → ``"the weather client"``; ``"host"`` → ``"the host"``."""
    role, _, name = participant.partition("/")
    if role in ("client", "server") and name:
        return f"the {name} {role}"
    return f"the {participant}"


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


# --- the sentences ---------------------------------------------------------------------------------
# Templates use {Who} (the sender, capitalised), {whom} (the receiver) and fields of ``params``.

REQUEST_SENTENCES: dict[str, str] = {
    "initialize": "{Who} asks {whom} to open a session (initialize), offering protocol version {version}",
    "ping": "{Who} pings {whom} to check the connection is alive",
    "server/discover": "{Who} asks {whom} which protocol versions and capabilities it supports "
                       "(server/discover)",
    "tools/list": "{Who} asks {whom} which tools it offers",
    "tools/call": "{Who} asks {whom} to call the tool {name}",
    "resources/list": "{Who} asks {whom} which resources it offers",
    "resources/templates/list": "{Who} asks {whom} which resource templates it offers",
    "resources/read": "{Who} asks {whom} to read {uri}",
    "resources/subscribe": "{Who} asks {whom} to report changes to {uri} (resources/subscribe)",
    "resources/unsubscribe": "{Who} asks {whom} to stop reporting changes to {uri}",
    "prompts/list": "{Who} asks {whom} which prompts it offers",
    "prompts/get": "{Who} asks {whom} for the prompt {name}",
    "completion/complete": "{Who} asks {whom} to suggest completions for an argument",
    "logging/setLevel": "{Who} asks {whom} to send log messages at level {level} and above",
    "subscriptions/listen": "{Who} asks {whom} to open a stream of change notifications "
                            "(subscriptions/listen)",
    "sampling/createMessage": "{Who} asks {whom} to have the host's model write a message (sampling)",
    "elicitation/create": "{Who} asks {whom} to ask the user for input (elicitation)",
    "roots/list": "{Who} asks {whom} which roots (folders) are in scope",
    "tasks/get": "{Who} asks {whom} for the status of task {taskId}",
    "tasks/result": "{Who} asks {whom} for the result of task {taskId}",
    "tasks/list": "{Who} asks {whom} for its list of tasks",
    "tasks/cancel": "{Who} asks {whom} to cancel task {taskId}",
    "tasks/update": "{Who} sends {whom} input for task {taskId}",
}

NOTIFICATION_SENTENCES: dict[str, str] = {
    "notifications/initialized": "{Who} tells {whom} the handshake is complete (notifications/initialized)",
    "notifications/cancelled": "{Who} tells {whom} it no longer wants an answer to request {requestId} "
                               "(notifications/cancelled)",
    "notifications/progress": "{Who} tells {whom} how far it has got: {progress_text}",
    "notifications/message": "{Who} sends {whom} a log message (level {level})",
    "notifications/tools/list_changed": "{Who} tells {whom} that its tool list changed",
    "notifications/prompts/list_changed": "{Who} tells {whom} that its prompt list changed",
    "notifications/resources/list_changed": "{Who} tells {whom} that its resource list changed",
    "notifications/resources/updated": "{Who} tells {whom} that {uri} changed",
    "notifications/roots/list_changed": "{Who} tells {whom} that its roots changed",
    "notifications/subscriptions/acknowledged": "{Who} tells {whom} the subscription stream is open",
    "notifications/tasks/status": "{Who} tells {whom} that task {taskId} is {status}",
    "notifications/elicitation/complete": "{Who} tells {whom} the URL elicitation is complete",
}

_FALLBACK_FIELDS = {"name": "(no name given)", "uri": "a resource", "taskId": "(unknown)", "level": "(unset)",
                    "requestId": "(unknown)", "status": "(unknown)", "version": "(none)"}


class _Fields(dict):  # type: ignore[type-arg]
    def __missing__(self, key: str) -> str:
        return _FALLBACK_FIELDS.get(key, "?")


def _fields(message: dict[str, Any] | None) -> _Fields:
    params = (message or {}).get("params") or {}
    if not isinstance(params, dict):
        params = {}
    out = _Fields({k: v for k, v in params.items() if isinstance(v, (str, int, float)) and not isinstance(v, bool)})
    meta = params.get("_meta") or {}
    version = params.get("protocolVersion") or (meta.get("io.modelcontextprotocol/protocolVersion")
                                                if isinstance(meta, dict) else None)
    if version:
        out["version"] = version
    out["progress_text"] = _progress_text(params)
    return out


def _progress_text(params: dict[str, Any]) -> str:
    progress, total = params.get("progress"), params.get("total")
    text = f"{progress}" if total is None else f"{progress} of {total}"
    message = params.get("message")
    return f"{text} ({message})" if isinstance(message, str) and message else text


def _result_detail(method: str | None, result: dict[str, Any]) -> str:
    """A few words about what came back, for the response caption."""
    def names(key: str, field: str = "name") -> str:
        items = result.get(key) or []
        shown = [str(i.get(field)) for i in items[:4] if isinstance(i, dict)]
        more = f" and {len(items) - 4} more" if len(items) > 4 else ""
        noun = key if len(items) != 1 else key.rstrip("s")
        return f"{len(items)} {noun}" + (f": {', '.join(shown)}{more}" if shown else "")

    if method == "initialize":
        return f" with protocol version {result.get('protocolVersion', '?')}"
    if method == "server/discover":
        return f", supporting versions {', '.join(map(str, result.get('supportedVersions') or []))}"
    if method == "tools/list":
        return f" with {names('tools')}"
    if method == "prompts/list":
        return f" with {names('prompts')}"
    if method == "resources/list":
        return f" with {names('resources', 'uri')}"
    if method == "resources/templates/list":
        return f" with {names('resourceTemplates', 'uriTemplate')}"
    if method == "tools/call":
        return " with the tool's result"
    if method == "resources/read":
        return " with the resource's contents"
    if method == "prompts/get":
        return " with the prompt's messages"
    if method == "sampling/createMessage":
        return " with the model's message"
    if method == "elicitation/create":
        return f" with the user's answer ({result.get('action', '?')})"
    return ""


def caption(event: Any) -> str:
    """One sentence saying what the event means and who is involved, e.g. "The weather client asks
    the weather server which tools it offers"."""
    sender, receiver = who(event.sender), who(event.receiver)
    both = _Fields(Who=_cap(sender), whom=receiver)
    if event.kind == "app":
        return f"{_cap(sender)} says to {receiver}: “{event.text}”"
    if event.kind == "log":
        if event.sender == event.receiver:
            return f"{_cap(sender)} writes to its log (stderr): {event.text}"
        return f"{_cap(sender)} logs to {receiver}: {event.text}"
    if event.kind in ("transport", "timeout"):
        if event.sender == event.receiver:
            return f"{_cap(sender)}: {event.text}"
        return f"{_cap(sender)} → {receiver}: {event.text}"
    if event.kind == "invalid":
        return f"{_cap(sender)} sends {receiver} a frame that is not a valid JSON-RPC message"
    if event.kind == "batch":
        items = (event.message or {}).get("batch") or []
        return f"{_cap(sender)} sends {receiver} a JSON-RPC batch of {len(items)} messages"
    method = event.method or "?"
    if event.kind in ("request", "notification"):
        table = REQUEST_SENTENCES if event.kind == "request" else NOTIFICATION_SENTENCES
        literal = method.replace("{", "{{").replace("}", "}}")  # a method name from the wire is data
        fallback = ("{Who} asks {whom} to run " + literal) if event.kind == "request" \
            else ("{Who} sends {whom} the notification " + literal)
        fields = _fields(event.message)
        fields.update(both)
        return table.get(method, fallback).format_map(fields)
    if event.kind == "response":
        result = (event.message or {}).get("result") or {}
        if result.get("resultType") == "input_required":
            keys = ", ".join(sorted((result.get("inputRequests") or {}).keys())) or "state only"
            return f"{_cap(sender)} tells {receiver} it needs input before it can answer {method} ({keys})"
        if result.get("resultType") == "task":
            return f"{_cap(sender)} answers {receiver}'s {method} with a task to poll"
        if method == "tools/call" and result.get("isError"):
            return (f"{_cap(sender)} answers {receiver}'s tools/call with a tool error (isError: true): "
                    "the tool ran and failed")
        if event.method is None:
            return f"{_cap(sender)} answers {receiver}'s request #{event.request_id}"
        return f"{_cap(sender)} answers {receiver}'s {method}{_result_detail(event.method, result)}"
    if event.kind == "error":
        err = (event.message or {}).get("error") or {}
        what = f"{method}" if event.method else f"request #{event.request_id}"
        if event.request_id is None:
            return (f"{_cap(sender)} tells {receiver} it could not read a message: error {err.get('code')} "
                    f"({err.get('message')})")
        return f"{_cap(sender)} answers {receiver}'s {what} with error {err.get('code')} ({err.get('message')})"
    return f"{_cap(sender)} → {receiver}"


# --- the short labels on arrows --------------------------------------------------------------------

KIND_GLYPHS = {"request": "→", "response": "←", "error": "✖", "notification": "⇢", "invalid": "⚠",
               "batch": "[ ]", "app": "“ ”", "log": "stderr", "transport": "↯", "timeout": "◷"}
"""The glyph that starts each kind's label, so kinds differ in text, not only in line style."""

MARK_WORDS = ("dropped", "timeout", "late", "duplicate", "attack", "replayed", "blocked")


def _short(text: str | None, limit: int) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def label(event: Any, limit: int = 48) -> str:
    """The text written on the event's arrow: ``→ tools/call #3``, ``← result #3``, ``✖ error -32601 #3``,
    ``⇢ notifications/progress 1/3``. Marks follow in brackets: ``→ tools/call #4 [dropped]``."""
    kind = event.kind
    rid = "" if event.request_id is None else f" #{event.request_id}"
    message = event.message or {}
    if kind == "request":
        text = f"→ {event.method}{rid}"
    elif kind == "response":
        result = message.get("result") or {}
        rtype = result.get("resultType")
        if rtype in ("input_required", "task"):
            text = f"← {rtype}{rid}"
        elif result.get("isError"):
            text = f"← result{rid} (isError)"
        else:
            text = f"← result{rid}"
    elif kind == "error":
        code = (message.get("error") or {}).get("code")
        text = f"✖ error {code}{rid}"
    elif kind == "notification":
        params = message.get("params") or {}
        extra = ""
        if event.method == "notifications/progress":
            total = params.get("total")
            extra = f" {params.get('progress')}" + ("" if total is None else f"/{total}")
        elif event.method == "notifications/cancelled":
            extra = f" #{params.get('requestId')}"
        text = f"⇢ {event.method}{extra}"
    elif kind == "invalid":
        text = "⚠ invalid frame"
    elif kind == "batch":
        text = f"[batch of {len(message.get('batch') or [])}]"
    elif kind == "app":
        text = f"“{_short(event.text, limit - 2)}”"
    elif kind == "log":
        text = f"stderr: {_short(event.text, limit - 8)}"
    else:
        text = f"{KIND_GLYPHS.get(kind, '•')} {_short(event.text, limit - 2)}"
    marks = [m for m in event.marks if not (kind == "timeout" and m == "timeout")]
    if marks:
        text += " [" + ", ".join(marks) + "]"
    return text


def methods_of_all_revisions() -> set[str]:
    """Every request and notification method any released revision defines."""
    out: set[str] = set()
    for rev in REVISIONS.values():
        out.update(rev.requests)
        out.update(rev.notifications)
    out.update(TASKS_EXTENSION_METHODS)
    return out
