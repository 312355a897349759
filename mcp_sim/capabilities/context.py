"""The ``ctx`` a handler receives: who is asking, and what the handler may do while it runs (course
chapters 04–05).

The context belongs to the capability layer: tools, prompts and resources are written against it,
and it is written against two small ports — :class:`ServerSessionPort` (the connection the request
came in on) and :class:`ServerPort` (the server that owns the handlers). The server session in
:mod:`mcp_sim.roles.server_session` implements the first, :class:`~mcp_sim.roles.server.Server` the
second; this module imports neither, so the layer below never reaches up into the roles.

Declare a parameter ``ctx: Context`` in a tool, prompt or resource function and the server passes one
per request. It gives the request's facts (``ctx.revision``, ``ctx.auth``, ``ctx.request_id``) and the
things a handler may do while it runs: report progress, log, wait on the simulation's clock, and ask
the client for input. Asking reads the same in both eras; :mod:`mcp_sim.capabilities.mrtr` explains
the two very different things that travel on the wire.

On a stdio connection the handler runs inside a server *process*: ``ctx.stderr("…")`` writes a log
line where logs belong, and ``ctx.stdout_raw("…")`` reproduces the classic bug — a stray ``print`` on
stdout, the protocol channel, where the client tries to parse it as a message.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Any, Protocol

import anyio

from mcp_sim.capabilities import logging as mcp_logging
from mcp_sim.capabilities.caching import CachePolicy, cache_fields
from mcp_sim.capabilities.mrtr import (
    ClientInputUnavailable,
    InputRequest,
    InputRequired,
    elicit,
    elicit_url,
    list_roots,
    request_digest,
    sample,
)
from mcp_sim.capabilities.subscriptions import Change
from mcp_sim.capabilities.task_store import TaskStore
from mcp_sim.protocol import meta as M
from mcp_sim.protocol.errors import INTERNAL_ERROR, McpError, invalid_params
from mcp_sim.protocol.lifecycle import ModernRequestMeta, has_capability, require_client_capability
from mcp_sim.protocol.revisions import get_revision, revision_at
from mcp_sim.security.identity import AuthInfo
from mcp_sim.wire.jsonrpc import RequestId

logger = logging.getLogger(__name__)


class ServerPort(Protocol):
    """The server that owns the handlers, as they see it: its registries and settings.

    The registries map names to the capability modules' own definitions (``ToolDefinition`` …); they
    are typed loosely here because those modules are written against this one, not the other way."""

    @property
    def name(self) -> str: ...
    @property
    def page_size(self) -> int | None: ...
    @property
    def per_caller(self) -> bool: ...
    @property
    def cache(self) -> CachePolicy: ...
    @property
    def tools(self) -> Mapping[str, Any]: ...
    @property
    def prompts(self) -> Mapping[str, Any]: ...
    @property
    def resources(self) -> Mapping[str, Any]: ...
    @property
    def templates(self) -> Mapping[str, Any]: ...
    @property
    def task_store(self) -> TaskStore: ...
    @property
    def task_ttl_ms(self) -> int | None: ...
    @property
    def task_poll_interval_ms(self) -> int: ...
    @property
    def tasks_extension(self) -> bool: ...

    def visible_tools(self, auth: AuthInfo | None) -> Sequence[Any]: ...
    def tools_depend_on_caller(self) -> bool: ...
    def capabilities_for(self, revision: str) -> Mapping[str, Any]: ...
    def next_number(self, name: str) -> int: ...
    def notify_change(self, change: Change) -> None: ...


class ServerSessionPort(Protocol):
    """The connection a request came in on, as its handler needs it: who is calling, what the client
    declared at ``initialize`` (legacy), and a way to send notifications and requests back."""

    number: int
    client_capabilities: dict[str, Any]
    log_level: str | None

    @property
    def server(self) -> ServerPort: ...
    @property
    def auth(self) -> AuthInfo | None: ...
    @property
    def stream(self) -> Any: ...

    async def notify(self, method: str, params: dict[str, Any] | None, *,
                     related_request_id: RequestId | None = None) -> None: ...
    async def request(self, method: str, params: dict[str, Any] | None, *,
                      related_request_id: RequestId | None = None) -> Any: ...
    def send_soon(self, method: str, params: dict[str, Any] | None) -> None: ...
    def spawn(self, fn: Callable[[], Coroutine[Any, Any, None]]) -> None: ...


class _Process(Protocol):
    """A simulated server process (stdio): where ``ctx.stderr`` and ``ctx.stdout_raw`` write."""

    def stderr_write(self, text: str) -> None: ...
    def stdout_write_raw(self, text: str) -> None: ...


class Context:
    """One request, as its handler sees it."""

    def __init__(self, session: ServerSessionPort, request_id: RequestId | None, method: str, params: Mapping[str, Any],
                 revision: str, modern_meta: ModernRequestMeta | None = None) -> None:
        self.session = session
        self.request_id = request_id
        self.method = method
        self.params: Mapping[str, Any] = params
        self.revision = revision
        """The protocol revision this request speaks (negotiated once in legacy, per request in modern)."""
        self.modern_meta = modern_meta
        self.finished = False
        self._related: RequestId | None = request_id
        self._last_progress: float | None = None
        self._answers: dict[str, Any] = {}
        self._asked: list[str] = []
        self._ask_count = 0
        self._digest: str | None = None
        self.request_state_nonce: str | None = None
        """On a Multi Round-Trip retry whose ``requestState`` was sealed by
        :class:`~mcp_sim.capabilities.mrtr.SealedStateCodec`: the flow's nonce, the same in every round.
        Use it as the idempotency key of a side effect, so a replayed retry cannot repeat it."""

    # -- facts -----------------------------------------------------------------------------------
    @property
    def server(self) -> ServerPort:
        return self.session.server

    @property
    def auth(self) -> AuthInfo | None:
        """Who is calling, as the transport established it (``None`` when it established nobody)."""
        return self.session.auth

    @property
    def is_modern(self) -> bool:
        return get_revision(self.revision).is_modern

    @property
    def client_capabilities(self) -> Mapping[str, Any]:
        """What the client declared: at ``initialize`` (legacy) or on *this request* (modern)."""
        if self.modern_meta is not None:
            return self.modern_meta.client_capabilities
        return self.session.client_capabilities

    @property
    def progress_token(self) -> str | int | None:
        meta = self.params.get("_meta")
        token = meta.get(M.PROGRESS_TOKEN) if isinstance(meta, Mapping) else None
        return token if isinstance(token, (str, int)) and not isinstance(token, bool) else None

    @property
    def log_threshold(self) -> str | None:
        """The lowest level the client wants: ``logging/setLevel`` (legacy) or this request's
        ``_meta`` logLevel (modern; ``None`` means no log messages at all)."""
        if self.modern_meta is not None:
            level = self.modern_meta.log_level
            return level if level in mcp_logging.LOGGING_LEVELS else None
        return self.session.log_level

    @property
    def caller_key(self) -> str:
        """Whose request this is, for owning tasks: the authenticated subject, else the connection."""
        if self.auth is not None:
            return f"subject:{self.auth.subject}"
        return "anonymous" if self.is_modern else f"session:{self.session.number}"

    @property
    def request_digest(self) -> str:
        if self._digest is None:
            self._digest = request_digest(self.method, self.params)
        return self._digest

    @property
    def is_retry(self) -> bool:
        """A Multi Round-Trip retry (carries ``inputResponses`` or ``requestState``)."""
        return "inputResponses" in self.params or "requestState" in self.params

    def now(self) -> float:
        """Seconds on the simulation's clock."""
        return anyio.current_time()

    def cache_fields(self, *, private: bool, ttl_ms: int | None = None) -> dict[str, Any]:
        """``ttlMs``/``cacheScope`` for a cacheable 2026-07-28 result; nothing for legacy revisions."""
        if not self.is_modern:
            return {}
        ttl = self.server.cache.list_ttl_ms if ttl_ms is None else ttl_ms
        return cache_fields(0 if self.is_retry else ttl, private or self.server.per_caller)

    @property
    def process(self) -> _Process | None:
        """The simulated server process this connection runs in (stdio only; ``None`` otherwise)."""
        process = getattr(self.session.stream, "process", None)
        return process if process is not None and hasattr(process, "stderr_write") else None

    # -- doing things while the request runs ------------------------------------------------------
    def stderr(self, text: str) -> None:
        """Write a log line to the process's stderr (stdio), which the client records but never parses
        as protocol. On other transports there is no stderr to share: the line goes to ``logging``."""
        process = self.process
        if process is not None:
            process.stderr_write(text)
        else:
            logger.info("%s: %s", self.server.name, text)

    def stdout_raw(self, text: str) -> None:
        """The stdio pitfall, on purpose: write ``text`` to stdout *outside* the framing, as a stray
        ``print`` would. Every newline in it ends a line the client will try to read as a message.
        (Only stdio has a stdout; elsewhere the text goes to ``logging`` with a warning.)"""
        process = self.process
        if process is not None:
            process.stdout_write_raw(text)
        else:
            logger.warning("%s wrote to stdout outside the protocol: %r", self.server.name, text)

    async def sleep(self, seconds: float) -> None:
        """Wait on the simulation's virtual clock (a long job costs no wall time)."""
        await anyio.sleep(seconds)

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """Send ``notifications/progress`` if the request carried a ``progressToken``; ``progress`` must
        grow with each call."""
        token = self.progress_token
        if token is None or self.finished:
            return
        if self._last_progress is not None and progress <= self._last_progress:
            raise ValueError(f"progress must increase with each notification ({progress} after {self._last_progress})")
        self._last_progress = progress
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None and revision_at(self.revision).has_progress_message:
            params["message"] = message
        await self.session.notify("notifications/progress", params, related_request_id=self._related)

    async def log(self, level: str, data: Any, logger_name: str | None = None) -> None:
        """Send ``notifications/message`` when the server declared logging and the client wants ``level``."""
        mcp_logging.check_level(level)
        logger.debug("ctx.log %s %r", level, data)
        if self.finished or "logging" not in self.server.capabilities_for(self.revision):
            return
        if not mcp_logging.is_at_least(level, self.log_threshold):
            return
        await self.session.notify("notifications/message", mcp_logging.message_params(level, data, logger_name),
                                  related_request_id=self._related)

    # -- asking the client -----------------------------------------------------------------------
    def _key(self, kind: str, key: str | None) -> str:
        self._ask_count += 1
        return key or f"{kind}-{self._ask_count}"

    async def elicit(self, message: str, requested_schema: Mapping[str, Any], *, key: str | None = None) -> dict[str, Any]:
        """Ask the user to fill in a form; returns the ``ElicitResult`` (``action``, ``content``)."""
        k = self._key("elicitation", key)
        answers = await self.ask({k: elicit(message, requested_schema)})
        return dict(answers[k])

    async def elicit_url(self, message: str, url: str, *, key: str | None = None) -> dict[str, Any]:
        """Send the user to ``url`` (URL-mode elicitation, 2025-11-25 and later)."""
        k = self._key("elicitation", key)
        ident = f"elicitation-{self.server.next_number('elicitation')}" if not self.is_modern else None
        answers = await self.ask({k: elicit_url(message, url, ident)})
        return dict(answers[k])

    async def sample(self, messages: Sequence[Any], max_tokens: int, *, key: str | None = None,
                     **options: Any) -> dict[str, Any]:
        """Ask the client's model; returns the ``CreateMessageResult``."""
        k = self._key("sampling", key)
        answers = await self.ask({k: sample(messages, max_tokens, **options)})
        return dict(answers[k])

    async def list_roots(self, *, key: str | None = None) -> list[dict[str, Any]]:
        """The roots the user shared with this server."""
        k = self._key("roots", key)
        answers = await self.ask({k: list_roots()})
        roots = answers[k].get("roots") if isinstance(answers[k], Mapping) else None
        return list(roots or [])

    async def ask(self, requests: Mapping[str, InputRequest]) -> dict[str, Any]:
        """Ask several things at once, keyed; returns the client's answers under the same keys."""
        if self.is_modern:
            return self._ask_modern(requests)
        return await self._ask_legacy(requests)

    def accept_round_trip(self, state: Mapping[str, Any] | None, responses: Any) -> None:
        """Load the answers of earlier rounds (from ``requestState``) and of this one (``inputResponses``).
        Only responses to keys the server asked for are kept; extra keys are ignored. What is kept is
        checked first: ``inputResponses`` is an object, and each answer in it is an object (the result of
        the request it answers, e.g. ``{"action": "accept", "content": {…}}``) — anything else is ``-32602``,
        never taken as an answer."""
        answers = dict(state.get("answers") or {}) if state else {}
        asked = set(state.get("asked") or []) if state else None
        if responses is not None and not isinstance(responses, Mapping):
            raise invalid_params("inputResponses must be an object keyed like the inputRequests it answers",
                                 revision=self.revision)
        for k, v in (responses or {}).items():
            if asked is None or k in asked:
                if not isinstance(v, Mapping):
                    raise invalid_params(f"inputResponses[{k!r}] must be an object: the result of the input "
                                         f"request it answers", revision=self.revision)
                answers[k] = v
        self._answers = answers

    def _ask_modern(self, requests: Mapping[str, InputRequest]) -> dict[str, Any]:
        info = get_revision(self.revision).method(self.method)
        if info is None or not info.may_need_input:
            raise McpError(INTERNAL_ERROR, f"{self.method} cannot ask the client for input",
                           rule="Only tools/call, prompts/get and resources/read may return InputRequiredResult.",
                           revision=self.revision)
        self._asked.extend(k for k in requests if k not in self._asked)
        missing = {k: r for k, r in requests.items() if k not in self._answers}
        if missing:
            assert self.modern_meta is not None
            for r in missing.values():
                require_client_capability(self.modern_meta, r.capability(self.revision))
            known = {k: self._answers[k] for k in self._asked if k in self._answers}
            raise InputRequired(missing, {"answers": known, "asked": sorted(missing)})
        return {k: self._answers[k] for k in requests}

    def _check_legacy(self, requests: Mapping[str, InputRequest]) -> None:
        """Legacy: each question must exist in this revision, and the client must have declared its
        capability at ``initialize``; otherwise the server cannot send the request at all."""
        revision = get_revision(self.revision)
        for r in requests.values():
            if revision.method(r.method) is None:
                raise ClientInputUnavailable(f"{r.method} does not exist in revision {self.revision}")
            path = r.capability(self.revision)
            if not has_capability(self.session.client_capabilities, path):
                raise ClientInputUnavailable(
                    f"The client did not declare the '{path}' capability at initialize, so the server cannot "
                    f"send {r.method}")

    async def _send_legacy(self, requests: Mapping[str, InputRequest],
                           meta: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Legacy: send every question as a server→client request, concurrently, and gather the answers."""
        answers: dict[str, Any] = {}

        async def one(key: str, r: InputRequest) -> None:
            params = r.params(self.revision)
            if meta:
                params["_meta"] = dict(meta)
            answers[key] = await self.session.request(r.method, params, related_request_id=self._related)

        async with anyio.create_task_group() as tg:
            for key, r in requests.items():
                tg.start_soon(one, key, r)
        return answers

    async def _ask_legacy(self, requests: Mapping[str, InputRequest]) -> dict[str, Any]:
        self._check_legacy(requests)
        return await self._send_legacy(requests)
