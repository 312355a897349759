"""The Client as the Host sees it: MCP's verbs, one method each (course chapters 01 roles and 05
capabilities; spec ``server/tools``, ``server/resources``, ``server/prompts``, ``server/utilities``).

``list_tools``, ``call_tool``, ``read_resource``, ``get_prompt``, ``complete``, ``listen`` … each
builds its params and hands them to the request loop below it. The only thing this layer adds is
the list cache (:mod:`mcp_sim.roles.cache`): list and read results are kept as long as the server's
``ttlMs`` allows, for the caller's authorization context, and dropped when a change notification
says the server's data changed.

The layers underneath, each in its own module, from the bottom up:

1. :mod:`.connection` — ids, requests in flight, timeouts, the one reader of the stream;
2. :mod:`.opening` — the legacy handshake or the modern ``_meta``, era detection, ``-32022``;
3. :mod:`.client_input` — the request loop (MRTR) and the answers to the server's requests for input;
4. :mod:`.restart` — bringing a crashed stdio server back and re-subscribing;
5. :mod:`.tasks` — ``call_tool`` itself, and tool calls that run as tasks (polled until they end).
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping
from typing import Any

import anyio

from mcp_sim import accelerated
from mcp_sim.protocol.errors import INTERNAL_ERROR, METHOD_NOT_FOUND, McpError
from mcp_sim.protocol.revisions import REVISIONS
from mcp_sim.roles.cache import AuthorizationContext, ListCache
from mcp_sim.roles.client.callbacks import ClientCallbacks
from mcp_sim.roles.client.client_accelerated import AcceleratedParts
from mcp_sim.roles.client.client_input import MAX_INPUT_ROUNDS
from mcp_sim.roles.client.connection import DEFAULT_TIMEOUT
from mcp_sim.roles.client.errors import ConnectionLost, RequestTimeout
from mcp_sim.roles.client.opening import CLIENT_VERSIONS, PROBE_TIMEOUT, ClientEra
from mcp_sim.roles.client.param_headers import annotation_problem
from mcp_sim.roles.client.subscriptions import Subscription
from mcp_sim.roles.client.tasks import TaskCalls
from mcp_sim.security.identity import AuthInfo
from mcp_sim.sim.world import Simulation
from mcp_sim.wire.jsonrpc import JSONRPCRequest

log = logging.getLogger(__name__)


class Client(TaskCalls):
    """One MCP client, bound to one server for its whole life.

    ``era`` says how to open the connection: ``"legacy"`` (``initialize``), ``"modern"``
    (per-request ``_meta``; ``discover=True`` also calls ``server/discover`` first) or ``"auto"``
    (probe with ``server/discover``; a DiscoverResult or a modern error means modern, anything else
    or a timeout means legacy). ``versions`` are the revisions this client speaks, newest preferred
    (by default every released revision, 2024-11-05 on: a legacy server may answer ``initialize``
    with any of them).

    ``retry_after_crash`` names the tools the host trusts to be idempotent: after a stdio server is
    restarted, their lost calls are sent again; every other lost ``tools/call`` raises
    :class:`~mcp_sim.roles.client.errors.OutcomeUnknown` (see :mod:`.restart`).

    A Client created while :func:`mcp_sim.accelerated.enabled` is true is an
    :class:`AcceleratedClient`: the same behaviour, the same trace, fewer Python steps.
    """

    def __new__(cls, *args: Any, **kwargs: Any) -> Client:
        if cls is Client and accelerated.enabled():
            cls = AcceleratedClient
        return super().__new__(cls)

    def __init__(self, name: str = "mcp-sim-client", version: str = "0.1.0", *,
                 era: ClientEra = "auto",
                 versions: tuple[str, ...] = CLIENT_VERSIONS,
                 callbacks: ClientCallbacks | None = None,
                 capabilities: dict[str, Any] | None = None,
                 timeout: float = DEFAULT_TIMEOUT,
                 probe_timeout: float = PROBE_TIMEOUT,
                 discover: bool = True,
                 cache: ListCache | None = None,
                 auth: AuthInfo | None = None,
                 log_level: str | None = None,
                 max_input_rounds: int = MAX_INPUT_ROUNDS,
                 restart_on_crash: bool = True,
                 retry_after_crash: Collection[str] = (),
                 sim: Simulation | None = None) -> None:
        super().__init__(name, version, era=era, versions=versions, callbacks=callbacks, capabilities=capabilities,
                         timeout=timeout, probe_timeout=probe_timeout, discover=discover, log_level=log_level,
                         max_input_rounds=max_input_rounds, restart_on_crash=restart_on_crash,
                         retry_after_crash=retry_after_crash, sim=sim)
        self.cache = cache
        self.auth = auth

    @property
    def authorization_context(self) -> AuthorizationContext:
        return AuthorizationContext.of(self.auth)

    def _pass_on(self, method: str, params: dict[str, Any]) -> None:
        """A change notification makes cached lists stale; then the Host hears of it."""
        if self.cache is not None:
            self.cache.on_notification(self.server_name, method, params)
        if self.callbacks.on_notification is not None:
            try:
                self.callbacks.on_notification(self.server_name, method, params)
            except Exception as exc:  # a broken handler must not stop the client from reading
                self._note("transport", f"{self.participant}: the notification handler failed on {method}: "
                           f"{type(exc).__name__}: {exc}", marks=("handler-error",))
                log.warning("%s: notification handler failed on %s: %r", self.participant, method, exc)

    # ---------------------------------------------------------------------------------------------
    # lists, cached as the server allows
    # ---------------------------------------------------------------------------------------------
    async def _list(self, method: str, cursor: str | None, key_field: str = "cursor",
                    params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        server, ctx = self.server_name, self.authorization_context
        if self.cache is not None:
            cached = self.cache.get(server, ctx, method, cursor)
            if cached is not None:
                return cached
        body = dict(params or {})
        if cursor is not None:
            body[key_field] = cursor
        result, mrtr_retry = await self._request(method, body, timeout=None, on_progress=None, capabilities=None)
        if method == "tools/list":
            result = self._without_unusable_tools(result)
        if self.cache is not None:
            self.cache.put(server, ctx, method, cursor, result, mrtr_retry=mrtr_retry)
        if method == "tools/list":
            self._learn_tools(result)
        return result

    def _without_unusable_tools(self, result: dict[str, Any]) -> dict[str, Any]:
        """2026-07-28: a tool whose ``x-mcp-header`` annotations break the rules is left out, with a note
        (:mod:`.param_headers`); the other tools stay usable."""
        tools = result.get("tools")
        rev = REVISIONS.get(self.protocol_version or "")
        if not isinstance(tools, list) or rev is None or not rev.is_modern:
            return result
        kept = []
        for tool in tools:
            problem = annotation_problem(tool.get("inputSchema")) if isinstance(tool, Mapping) else None
            if problem is None:
                kept.append(tool)
            else:
                self._note("transport", f"{self.participant} leaves out tool {tool.get('name')!r}: {problem}",
                           marks=("excluded",))
        return result if len(kept) == len(tools) else {**result, "tools": kept}

    async def _all_pages(self, method: str, field_name: str, limit: int = 100) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        cursor: str | None = None
        for _ in range(limit):
            page = await self._list(method, cursor)
            items.extend(page.get(field_name) or [])
            cursor = page.get("nextCursor")
            if not cursor:
                return items
        raise McpError(INTERNAL_ERROR, f"{self.server_name} returned more than {limit} pages of {method}")

    async def ping(self) -> dict[str, Any]:
        return await self.request("ping")

    async def list_tools(self, cursor: str | None = None) -> dict[str, Any]:
        """One page of ``tools/list`` (cached as the result's ``ttlMs`` allows)."""
        return await self._list("tools/list", cursor)

    async def list_all_tools(self) -> list[dict[str, Any]]:
        """Every tool, following ``nextCursor`` page by page."""
        return await self._all_pages("tools/list", "tools")

    async def list_prompts(self, cursor: str | None = None) -> dict[str, Any]:
        return await self._list("prompts/list", cursor)

    async def list_resources(self, cursor: str | None = None) -> dict[str, Any]:
        return await self._list("resources/list", cursor)

    async def list_resource_templates(self, cursor: str | None = None) -> dict[str, Any]:
        return await self._list("resources/templates/list", cursor)

    # ---------------------------------------------------------------------------------------------
    # tools, prompts, resources, completion
    # ---------------------------------------------------------------------------------------------
    async def get_prompt(self, name: str, arguments: Mapping[str, str] | None = None, *,
                         capabilities: Mapping[str, Any] | None = None) -> dict[str, Any]:
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        return await self.request("prompts/get", params, capabilities=capabilities)

    async def read_resource(self, uri: str, *, capabilities: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """``resources/read``; cached per URI when the server gives a ``ttlMs``, invalidated by
        ``notifications/resources/updated``. Results that needed input are never cached."""
        server, ctx = self.server_name, self.authorization_context
        if self.cache is not None and capabilities is None:
            cached = self.cache.get(server, ctx, "resources/read", uri)
            if cached is not None:
                return cached
        result, mrtr_retry = await self._request("resources/read", {"uri": uri}, timeout=None, on_progress=None,
                                                 capabilities=capabilities)
        if self.cache is not None:
            self.cache.put(server, ctx, "resources/read", uri, result, mrtr_retry=mrtr_retry)
        return result

    async def complete(self, ref: Mapping[str, Any], argument: Mapping[str, Any]) -> dict[str, Any]:
        return await self.request("completion/complete", {"ref": dict(ref), "argument": dict(argument)})

    # ---------------------------------------------------------------------------------------------
    # subscriptions
    # ---------------------------------------------------------------------------------------------
    async def subscribe_resource(self, uri: str) -> dict[str, Any]:
        """Legacy ``resources/subscribe`` (needs the server capability ``resources.subscribe``)."""
        result = await self.request("resources/subscribe", {"uri": uri})
        self._resource_subscriptions.add(uri)
        return result

    async def unsubscribe_resource(self, uri: str) -> dict[str, Any]:
        result = await self.request("resources/unsubscribe", {"uri": uri})
        self._resource_subscriptions.discard(uri)
        return result

    async def listen(self, notifications: Mapping[str, Any], *, timeout: float | None = None,
                     capabilities: Mapping[str, Any] | None = None) -> Subscription:
        """Modern ``subscriptions/listen``: open a long-lived request whose stream carries change
        notifications. Returns once the server sent ``notifications/subscriptions/acknowledged``; check
        :attr:`Subscription.accepted` — the server may honour less than was asked. ``capabilities``
        narrows or widens what this request declares (e.g. the tasks extension, to hear ``taskIds``)."""
        if self.era != "modern":
            raise McpError(METHOD_NOT_FOUND, "subscriptions/listen exists only in 2026-07-28; legacy clients use "
                           "resources/subscribe and the list_changed notifications of the session",
                           revision=self.protocol_version)
        self.check_can_send("subscriptions/listen")
        rid = self._new_id()
        sub = Subscription(rid, dict(notifications), _cancel=self._cancel,
                           declared=dict(capabilities) if capabilities is not None else None)
        self._subscriptions[rid] = sub
        params = self._with_meta({"notifications": dict(notifications)}, capabilities)
        await self._send(JSONRPCRequest(rid, "subscriptions/listen", params))
        seconds = self.timeout if timeout is None else timeout
        with anyio.move_on_after(seconds) as scope:
            await sub.acknowledged.wait()
        if scope.cancelled_caught:
            await sub.close()
            raise RequestTimeout(self.server_name, "subscriptions/listen", rid, seconds)
        if sub.closed and not sub.accepted:
            raise ConnectionLost(f"{self.server_name} ended the subscription before acknowledging it")
        return sub


class AcceleratedClient(AcceleratedParts, Client):
    """A :class:`Client` with the accelerated twins of its hot paths (see
    :mod:`.client_accelerated`): what :class:`Client` creates while the switch is on."""
