"""Plain-language captions and layer tags for trace events, generated from the message itself.

No caption is typed per scenario: each is composed from the method, the participants and a few
fields of the message, so every message of every revision gets one.
"""

from __future__ import annotations

from typing import Any

from mcp_sim.protocol.revisions import REVISIONS

_CAPABILITY_OF_PREFIX = {
    "tools/": "tools",
    "resources/": "resources",
    "prompts/": "prompts",
    "completion/": "completions",
    "sampling/": "sampling",
    "elicitation/": "elicitation",
    "roots/": "roots",
    "logging/": "logging",
    "tasks/": "tasks",
    "subscriptions/": "subscriptions",
    "notifications/tools/": "tools",
    "notifications/resources/": "resources",
    "notifications/prompts/": "prompts",
    "notifications/roots/": "roots",
    "notifications/message": "logging",
    "notifications/tasks": "tasks",
    "notifications/elicitation/": "elicitation",
    "notifications/subscriptions/": "subscriptions",
}

_LIFECYCLE = {"initialize", "notifications/initialized", "ping", "server/discover"}
_UTILITIES = {"notifications/cancelled", "notifications/progress"}


def classify(event: Any) -> tuple[str, str | None]:
    """(layer, capability) for an event: ``roles`` for app talk, ``transports`` for framing events,
    ``lifecycle`` for the handshake/discovery, ``capabilities`` for the rest."""
    if event.kind == "app":
        return "roles", None
    method = event.method
    if method is None:
        return "transports", None
    if method in _LIFECYCLE:
        return "lifecycle", None
    if method in _UTILITIES:
        return "transports", None
    for prefix, cap in _CAPABILITY_OF_PREFIX.items():
        if method.startswith(prefix):
            return "capabilities", cap
    return "capabilities", None


def _who(participant: str) -> str:
    role, _, name = participant.partition("/")
    if role in ("client", "server") and name:
        return f"the {name} {role}"
    return f"the {participant}"


_VERBS: dict[str, str] = {
    "initialize": "opens the session with initialize, offering protocol version {version}",
    "notifications/initialized": "confirms the handshake is done (notifications/initialized)",
    "ping": "pings to check the connection is alive",
    "server/discover": "asks which versions and capabilities it supports (server/discover)",
    "tools/list": "asks which tools it offers",
    "tools/call": "asks it to call the tool {name}",
    "resources/list": "asks which resources it offers",
    "resources/templates/list": "asks which resource templates it offers",
    "resources/read": "asks to read {uri}",
    "resources/subscribe": "subscribes to changes of {uri}",
    "resources/unsubscribe": "unsubscribes from {uri}",
    "prompts/list": "asks which prompts it offers",
    "prompts/get": "asks for the prompt {name}",
    "completion/complete": "asks for completions of an argument",
    "logging/setLevel": "sets the log level to {level}",
    "subscriptions/listen": "opens a subscription stream for change notifications",
    "sampling/createMessage": "asks the host's model to write a message (sampling)",
    "elicitation/create": "asks the user for input (elicitation)",
    "roots/list": "asks which roots (folders) are in scope",
    "tasks/get": "asks for the status of task {taskId}",
    "tasks/result": "asks for the result of task {taskId}",
    "tasks/list": "asks for the list of tasks",
    "tasks/cancel": "asks to cancel task {taskId}",
    "tasks/update": "sends input to task {taskId}",
    "notifications/cancelled": "cancels request {requestId}",
    "notifications/progress": "reports progress {progress}",
    "notifications/message": "sends a log message ({level})",
    "notifications/tools/list_changed": "announces that its tool list changed",
    "notifications/prompts/list_changed": "announces that its prompt list changed",
    "notifications/resources/list_changed": "announces that its resource list changed",
    "notifications/resources/updated": "announces that {uri} changed",
    "notifications/roots/list_changed": "announces that its roots changed",
    "notifications/subscriptions/acknowledged": "acknowledges the subscription",
    "notifications/tasks/status": "reports task {taskId} is {status}",
    "notifications/tasks": "reports task {taskId} is {status}",
    "notifications/elicitation/complete": "says the URL elicitation is complete",
}


class _Fields(dict):  # type: ignore[type-arg]
    def __missing__(self, key: str) -> str:
        return "?"


def _fields(message: dict[str, Any] | None) -> _Fields:
    params = (message or {}).get("params") or {}
    out = _Fields({k: v for k, v in params.items() if isinstance(v, (str, int, float))})
    meta = params.get("_meta") or {}
    version = params.get("protocolVersion") or meta.get("io.modelcontextprotocol/protocolVersion")
    if version:
        out["version"] = version
    return out


def caption(event: Any) -> str:
    """One sentence saying what the event means, e.g. "The weather client asks the weather server
    which tools it offers"."""
    who, whom = _who(event.sender), _who(event.receiver)
    if event.kind == "app":
        return f"{who.capitalize()} → {whom}: {event.text}"
    if event.kind in ("log", "transport", "timeout"):
        return f"{who.capitalize()}: {event.text}"
    if event.kind == "invalid":
        return f"{who.capitalize()} sends a frame {whom} cannot read as JSON-RPC"
    if event.kind == "batch":
        return f"{who.capitalize()} sends a JSON-RPC batch (an array of messages)"
    method = event.method or "?"
    if event.kind in ("request", "notification"):
        template = _VERBS.get(method, f"sends {method}")
        text = template.format_map(_fields(event.message))
        return f"{who.capitalize()} {text}" + ("" if event.kind == "request" else "") + (
            f" — asking {whom}" if event.kind == "request" and method not in _VERBS else "")
    if event.kind == "response":
        result = (event.message or {}).get("result") or {}
        if result.get("resultType") == "input_required":
            keys = ", ".join(sorted((result.get("inputRequests") or {}).keys())) or "state only"
            return f"{who.capitalize()} needs input before it can answer {method} ({keys})"
        if method == "tools/call" and result.get("isError"):
            return f"{who.capitalize()} answers tools/call with a tool error (isError: true)"
        return f"{who.capitalize()} answers {method}"
    if event.kind == "error":
        err = (event.message or {}).get("error") or {}
        return f"{who.capitalize()} answers {method} with error {err.get('code')} ({err.get('message')})"
    return f"{who.capitalize()} → {whom}"


def methods_of_all_revisions() -> set[str]:
    """Every request and notification method any released revision defines."""
    out: set[str] = set()
    for rev in REVISIONS.values():
        out.update(rev.requests)
        out.update(rev.notifications)
    return out
