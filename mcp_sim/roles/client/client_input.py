"""Making a request, and giving the server the input it asks for (course chapter 04, client features
and Multi Round-Trip Requests; spec ``client/elicitation``, ``client/sampling``, ``client/roots``).

A server sometimes needs something only the Host has — the user's answer, the model's text, the list
of roots. The two eras ask for it differently:

* **legacy** (≤ 2025-11-25): while a request is pending, the server *sends requests* to the client
  (``elicitation/create``, ``sampling/createMessage``, ``roots/list``); the client answers each one
  with a response, as any JSON-RPC peer would (:meth:`ClientInput._on_server_request`).
* **modern** (2026-07-28): servers send no requests. A server that needs input answers the request
  with ``InputRequiredResult``; the client fulfils every ``inputRequests`` entry through its Host and
  sends the request again, with a new ``id``, the answers in ``inputResponses`` and the server's
  ``requestState`` echoed exactly (Multi Round-Trip Requests, MRTR: :meth:`ClientInput._request`).

Either way the client fulfils only the kinds of input it declared (:meth:`ClientInput.fulfil_input`),
and the Host decides the answer. An accepted elicitation whose content breaks the requested schema
goes out as ``decline`` (:mod:`.elicitation`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Final

from mcp_sim.protocol.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    UNSUPPORTED_PROTOCOL_VERSION,
    McpError,
)
from mcp_sim.protocol.lifecycle import has_capability
from mcp_sim.protocol.revisions import TASKS_EXTENSION
from mcp_sim.roles.client.callbacks import ClientCallbacks
from mcp_sim.roles.client.connection import ProgressCallback
from mcp_sim.roles.client.elicitation import checked_answer
from mcp_sim.roles.client.errors import (
    OUTCOME_MAY_BE_UNKNOWN,
    ConnectionLost,
    OutcomeUnknown,
    method_not_declared,
)
from mcp_sim.roles.client.opening import ClientEra, SessionOpening
from mcp_sim.sim.world import Simulation
from mcp_sim.transports.base import SessionExpired, TransportClosed
from mcp_sim.wire.jsonrpc import (
    JSONRPCErrorResponse,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResultResponse,
    error_object,
)

log = logging.getLogger(__name__)

MAX_SESSION_RENEWALS: Final = 2
"""How many times one request starts a new legacy HTTP session after a ``404``: a server that ends
every session it opens must not keep the client re-initializing for ever."""

MAX_INPUT_ROUNDS: Final = 8
"""How many times a client fulfils ``InputRequiredResult`` for one request before giving up: the
spec lets a server ask again, but a client must not loop forever."""


class ClientInput(SessionOpening):
    """The session, plus the request loop (MRTR, renegotiation, recovery) and the answers to the
    server's requests for input."""

    def __init__(self, name: str, version: str, *, era: ClientEra, versions: tuple[str, ...],
                 callbacks: ClientCallbacks | None, capabilities: dict[str, Any] | None, timeout: float,
                 probe_timeout: float, discover: bool, log_level: str | None, max_input_rounds: int,
                 sim: Simulation | None) -> None:
        super().__init__(name, version, era=era, versions=versions, callbacks=callbacks, capabilities=capabilities,
                         timeout=timeout, probe_timeout=probe_timeout, discover=discover, log_level=log_level,
                         sim=sim)
        self.max_input_rounds = max_input_rounds

    # ---------------------------------------------------------------------------------------------
    # the request loop
    # ---------------------------------------------------------------------------------------------
    async def request(self, method: str, params: Mapping[str, Any] | None = None, *, timeout: float | None = None,
                      on_progress: ProgressCallback | None = None,
                      capabilities: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Send ``method`` and return its result (a JSON object); raise :class:`McpError` for an error
        response, :class:`~mcp_sim.roles.client.errors.RequestTimeout` on timeout.

        Modern era: ``capabilities`` narrows what this one request declares; an
        ``InputRequiredResult`` is fulfilled through the Host and the request retried (MRTR)."""
        result, _ = await self._request(method, params, timeout=timeout, on_progress=on_progress,
                                        capabilities=capabilities)
        return result

    async def _request(self, method: str, params: Mapping[str, Any] | None, *, timeout: float | None,
                       on_progress: ProgressCallback | None, capabilities: Mapping[str, Any] | None,
                       ) -> tuple[dict[str, Any], bool]:
        """:meth:`request`, also saying whether the result came from a Multi Round-Trip retry.

        One logical request may take several exchanges: an ``InputRequiredResult`` is answered and the
        request sent again; ``-32022`` picks another version and sends it again; an expired legacy HTTP
        session is re-initialized; a crashed stdio server is restarted (see :mod:`.restart`). A request
        made while a legacy session is being opened waits for it, then goes out on the new session."""
        await self._session_open()
        self._check_request(method)
        original = dict(params or {})
        declared = dict(capabilities) if capabilities is not None else None
        renegotiated = False
        rounds = 0
        crashes = 0
        renewals = 0
        retry_params = original
        mrtr_retry = False
        while True:
            declared_now: Mapping[str, Any] = {}
            if self.era == "modern":
                declared_now = declared if declared is not None else \
                    self._declared(self.protocol_version or self.versions[0])
                wire_params: dict[str, Any] = self._with_meta(retry_params, declared_now)
            else:
                wire_params = retry_params  # legacy capabilities were declared once, at initialize
            generation = self.restarts
            session = self.sessions_opened
            try:
                response = await self._exchange(method, wire_params or None,
                                                timeout=self.timeout if timeout is None else timeout,
                                                on_progress=on_progress)
            except SessionExpired:
                renewals += 1
                if self.era != "legacy" or renewals > MAX_SESSION_RENEWALS:
                    raise
                await self._session_open()
                if self.sessions_opened != session:
                    continue  # another request has already opened a new session: use it
                # Legacy Streamable HTTP answered 404: the session is gone; start a new one.
                self._note("transport", f"{self.participant} re-initializes: the server ended the session",
                           marks=("session-expired",))
                await self._initialize()
                continue
            except TransportClosed as lost:
                crashes += 1
                if not await self._recover_from_crash(lost, method, retry_params, crashes, generation):
                    if isinstance(lost, ConnectionLost) and lost.request_id is not None \
                            and method in OUTCOME_MAY_BE_UNKNOWN:
                        raise OutcomeUnknown(self.server_name, method, lost.request_id,
                                             f"lost the connection ({self.closed_reason or lost})") from lost
                    raise
                continue
            if isinstance(response, JSONRPCErrorResponse):
                error = McpError.from_error_object(response.error, revision=self.protocol_version)
                if error.code == UNSUPPORTED_PROTOCOL_VERSION and self.era == "modern" and not renegotiated:
                    renegotiated = True
                    if self._renegotiate(error) == "legacy":
                        await self._initialize()
                    continue
                raise error
            result = response.result
            result_type = result.get("resultType", "complete")
            if result_type == "complete" or self.era == "legacy":
                return result, mrtr_retry
            if result_type == "task" and TASKS_EXTENSION in (declared_now.get("extensions") or {}):
                return result, mrtr_retry  # the tasks extension: a task handle the caller polls with tasks/get
            if result_type != "input_required":
                raise McpError(INVALID_REQUEST, f"{self.server_name} answered {method} with unknown resultType "
                               f"{result_type!r}", rule="An unrecognised resultType MUST be considered invalid.",
                               revision=self.protocol_version)
            rounds += 1
            if rounds > self.max_input_rounds:
                raise McpError(INTERNAL_ERROR, f"{self.server_name} asked for input {rounds} times for one {method}; "
                               f"the client gives up after {self.max_input_rounds} rounds")
            retry_params = await self._fulfil_input_required(original, result, declared_now)
            mrtr_retry = True

    async def _session_open(self) -> None:
        """Wait while a legacy ``initialize`` is in flight (a new session after a ``404`` or a restart)."""
        while self._initializing is not None:
            await self._initializing.wait()

    def _check_request(self, method: str) -> None:
        """Refuse, before anything is sent, a request this connection cannot carry now: the client is
        not connected, the revision or the server's capabilities do not have it
        (:meth:`check_can_send`), or — legacy — the lifecycle state does not allow it yet."""
        if self._stream is None:
            raise McpError(INVALID_REQUEST, "this client is not connected: call connect(stream, task_group) first")
        self.check_can_send(method)
        if self.era == "legacy":
            self.lifecycle.check_send(method)

    async def _recover_from_crash(self, lost: TransportClosed, method: str, params: Mapping[str, Any],
                                  crashes: int, generation: int) -> bool:
        """The link ended with a request in flight: may it be sent again? Here, never — the request
        fails with the link. :mod:`.restart` overrides this for a stdio server whose process died."""
        return False

    async def _fulfil_input_required(self, original: dict[str, Any], result: Mapping[str, Any],
                                     declared: Mapping[str, Any]) -> dict[str, Any]:
        """MRTR: fulfil every ``inputRequests`` entry through the Host, then build the retry's params —
        the original params plus ``inputResponses`` (same keys) and ``requestState`` echoed exactly (and
        none if none was given). The caller sends it with a new id."""
        requests = result.get("inputRequests") or {}
        if not requests and "requestState" not in result:
            raise McpError(INVALID_REQUEST, "an InputRequiredResult must carry inputRequests or requestState",
                           rule="At least one of inputRequests or requestState MUST be present.",
                           revision=self.protocol_version)
        responses: dict[str, Any] = {}
        for key, input_request in requests.items():
            method = input_request.get("method")
            params = dict(input_request.get("params") or {})
            try:
                responses[key] = await self.fulfil_input(str(method), params, declared)
            except McpError as exc:
                raise McpError(exc.code, f"cannot fulfil input request {key!r} ({method}): {exc.message}", exc.data,
                               rule="A server MUST only ask for input kinds the client declared on that request; "
                                    "the client never fulfils an undeclared kind.",
                               revision=self.protocol_version) from exc
        retry = dict(original)
        if responses:
            retry["inputResponses"] = responses
        if "requestState" in result:
            retry["requestState"] = result["requestState"]
        return retry

    async def notify(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        """Send a client notification (legacy: e.g. ``notifications/roots/list_changed``)."""
        if self.era == "legacy":
            self.lifecycle.check_send(method)
        await self._send(JSONRPCNotification(method, dict(params) if params is not None else None))

    # ---------------------------------------------------------------------------------------------
    # requests from the server (legacy only)
    # ---------------------------------------------------------------------------------------------
    async def _on_server_request(self, request: JSONRPCRequest) -> None:
        if self.era == "modern":
            # 2026-07-28: servers never send requests and the client MUST NOT write responses; a
            # server needing input returns InputRequiredResult instead.
            self._note("transport", f"{self.participant} ignores a {request.method} request: in 2026-07-28 servers "
                       "do not send requests (they return InputRequiredResult)", marks=("ignored",),
                       request_id=request.id, method=request.method)
            return
        try:
            result = await self._answer_server_request(request.method, dict(request.params or {}))
            reply: JSONRPCMessage = JSONRPCResultResponse(request.id, result)
        except McpError as exc:
            reply = JSONRPCErrorResponse(request.id, exc.to_error_object())
        except Exception as exc:
            log.exception("%s handling %s", self.participant, request.method)
            reply = JSONRPCErrorResponse(request.id, error_object(INTERNAL_ERROR, f"client error: {exc}"))
        await self._send_quietly(reply)

    async def _answer_server_request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Answer ``ping``, ``sampling/createMessage``, ``elicitation/create`` and ``roots/list`` —
        but only for the capabilities this client declared at ``initialize``."""
        if method == "ping":
            return {}
        if not self.lifecycle.may_send(method, "server"):
            raise McpError(INVALID_REQUEST, f"{method} arrived while the connection is {self.lifecycle.state.value}",
                           rule="The server SHOULD NOT send requests other than pings before initialization is done.")
        return await self.fulfil_input(method, params, self.capabilities())

    async def fulfil_input(self, method: str, params: dict[str, Any], declared: Mapping[str, Any]) -> dict[str, Any]:
        """Fulfil one request for input — a legacy server request or a modern ``inputRequests`` entry —
        through the Host. ``declared`` is what the client declared (at initialize, or on *this* request
        in the modern era): a kind it did not declare is refused, never answered."""
        server = self.server_name
        cb = self.callbacks
        rev = self.protocol_version
        if method == "elicitation/create":
            if cb.elicitation is None or not has_capability(declared, "elicitation"):
                raise method_not_declared(method, "elicitation", rev)
            mode = params.get("mode", "form")
            if mode == "url" and not has_capability(declared, "elicitation.url"):
                raise McpError(INVALID_PARAMS, "URL-mode elicitation was not declared by this client",
                               rule="A server MUST NOT send a URL-mode elicitation unless the client declared "
                                    "elicitation.url.", revision=rev)
            if mode == "form" and not has_capability(declared, "elicitation.form") \
                    and has_capability(declared, "elicitation.url"):
                raise McpError(INVALID_PARAMS, "form-mode elicitation was not declared by this client", revision=rev)
            answer, problems = checked_answer(params, await cb.elicitation(server, params))
            if problems:
                self._note("transport", f"{self.participant} declines instead of accepting: the answer breaks the "
                           f"requested schema ({'; '.join(problems)})", marks=("declined", "invalid"))
            return answer
        if method == "sampling/createMessage":
            if cb.sampling is None or not has_capability(declared, "sampling"):
                raise method_not_declared(method, "sampling", rev)
            return await cb.sampling(server, params)
        if method == "roots/list":
            if cb.roots is None or not has_capability(declared, "roots"):
                raise method_not_declared(method, "roots", rev)
            return {"roots": await cb.roots(server)}
        raise McpError(METHOD_NOT_FOUND, f"Method not found: {method}",
                       rule="A client answers -32601 to a request method it does not implement.", revision=rev)
