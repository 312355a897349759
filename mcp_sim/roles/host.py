"""The Host: the AI application that owns the clients, the policy, the user and the model (course
chapter 01, roles and the complete call).

"The Host decides, the Client connects, and the Server provides." The Host

* creates **one Client per Server** and owns their lifecycles — each client's receive loop is its own
  task, every request has a timeout, a crashed server is contained, so one server crashing or hanging
  leaves the others working;
* **aggregates** the tools of all servers under collision-free names (``weather__get_forecast``) and
  **filters** which ones the model may see (:class:`ToolPolicy`);
* **reviews** tool definitions before the model sees them (``tool_review``): each approved definition
  is pinned by its fingerprint, so a definition that *changes* later — a rug pull — is reviewed again;
* **re-lists** a server's tools when it says ``notifications/tools/list_changed`` (the notification
  carries no list), so the model never works from a stale or unreviewed list;
* **converts** MCP tools to the tool schemas of model APIs (OpenAI chat-completions, Anthropic
  Messages) — MCP does not mandate a model interface;
* **asks the user** to approve tool calls (:class:`ApprovalPolicy`, pluggable approver), always for
  tools that may be destructive: annotations are *hints*, and a ``readOnlyHint`` from a server the
  Host does not trust does not skip approval;
* answers the servers' **requests for input**: elicitation from its user, sampling from its model
  under a :class:`SamplingBudget` and a :class:`SamplingMediator` (what the user sees of the request,
  which context goes with it, where the answer goes), roots from its configuration;
* records its talk with the user and the model, so sequence diagrams show User, Host and Model.

The policies it applies are the trust model's (:mod:`mcp_sim.security.host_policy`, the one model
the security labs attack too); the aggregated tools, their names and the model APIs' formats are
:mod:`mcp_sim.roles.host_tools`.
"""

from __future__ import annotations

import functools
import inspect
import json
import logging
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
from anyio.abc import TaskGroup

from mcp_sim.protocol.errors import McpError
from mcp_sim.protocol.revisions import REVISIONS, SIMULATED_VERSIONS, versions_up_to
from mcp_sim.roles.cache import ListCache
from mcp_sim.roles.client import Client, ClientCallbacks, ClientEra, RequestTimeout
from mcp_sim.roles.host_tools import (
    MESSAGE_CONVERTERS,
    TOOL_CONVERTERS,
    HostTool,
    qualify,
    result_text,
)
from mcp_sim.roles.model import ChatMessage, Model, ModelTurn, ToolCall, sampled_text
from mcp_sim.roles.user import AlwaysApprove, ApprovalRequest, Approver, ElicitationPrompt, User
from mcp_sim.security.host_policy import (
    ApprovalPolicy,
    SamplingBudget,
    SamplingMediator,
    ToolPolicy,
    ToolReview,
    ToolReviewer,
    fingerprint,
)
from mcp_sim.security.identity import AuthInfo
from mcp_sim.sim.world import Simulation, current_simulation
from mcp_sim.transports import open_link
from mcp_sim.transports.base import MessageStream, TransportClosed

log = logging.getLogger(__name__)

ServerMain = Callable[[MessageStream], Awaitable[None]]
ModelApi = Literal["openai", "anthropic"]

USER = "user"
HOST = "host"
MODEL = "model"

SAMPLING_REFUSED = -1
"""The code the spec's examples use when the user (or the Host's policy) refuses a sampling request."""


@dataclass
class ServerEntry:
    """One connected server, as the Host keeps it."""

    name: str
    client: Client
    transport: str
    trusted: bool = False
    error: str | None = None
    opened: bool = False
    """The client's connection opened (``initialize`` or ``server/discover`` succeeded). A server whose
    connection never opened is not asked anything: the Host reports it unavailable instead."""
    tools: list[HostTool] = field(default_factory=list)
    definitions: list[dict[str, Any]] = field(default_factory=list)
    """The definitions of its last listing that passed review (what :attr:`tools` is built from)."""


@dataclass(frozen=True)
class PolicyDecision:
    """What the Host's policies say about one tool: may the model see it, and why must the user
    approve a call to it (empty = no need to ask). It depends only on the tool's definition, its
    server's trust and the two policies — not on the call's arguments — so the Host works it out
    once per tool and keeps it until one of those changes (policies are frozen values: assigning a
    new one to ``host.tool_policy`` is what changes them)."""

    tool: HostTool
    tool_policy: ToolPolicy
    approval_policy: ApprovalPolicy
    trusted: bool
    visible: bool
    reasons: tuple[str, ...]

    @functools.cached_property
    def client(self) -> str:
        """The participant that carries calls to the tool's server."""
        return f"client/{self.tool.server}"

    @functools.cached_property
    def forward_text(self) -> str:
        return f"forward the call {self.tool.name}"

    @functools.cached_property
    def result_text(self) -> str:
        return f"result of {self.tool.name}"


# --------------------------------------------------------------------------------------------------
# The Host
# --------------------------------------------------------------------------------------------------

class Host:
    """An AI application with MCP clients. Use it as ``async with Host(...) as host:`` inside a
    simulation; ``add_server`` connects one Server through one new Client.

    ``model`` proposes tool calls; ``user`` answers elicitations; ``approver`` approves tool calls
    (defaults to the user if it can approve, else :class:`AlwaysApprove`).

    ``tool_review`` (optional) sees every tool definition the first time it is listed and again
    whenever it changes: the Host pins a fingerprint of each approved definition (name, title,
    description, schemas, annotations), and a rejected definition never reaches the model. Without it
    definitions reach the model as the servers wrote them."""

    def __init__(self, *, model: Model | None = None, user: User | None = None, approver: Approver | None = None,
                 tool_policy: ToolPolicy | None = None, approval_policy: ApprovalPolicy | None = None,
                 sampling_budget: SamplingBudget | None = None, roots: Sequence[Mapping[str, Any]] = (),
                 model_api: ModelApi = "openai", name: str = "mcp-sim-host", timeout: float = 30.0,
                 tool_review: ToolReviewer | None = None, sampling_mediator: SamplingMediator | None = None,
                 sim: Simulation | None = None) -> None:
        self.name = name
        self.model = model
        self.user = user
        if approver is None:
            approver = user if isinstance(user, Approver) else AlwaysApprove()
        self.approver = approver
        self.tool_policy = tool_policy or ToolPolicy()
        self.approval_policy = approval_policy or ApprovalPolicy()
        self.sampling_budget = sampling_budget or SamplingBudget()
        self.sampling_mediator = sampling_mediator or SamplingMediator()
        self.conversation: list[ChatMessage] = []
        """The messages of the chat in progress, as the model sees them."""
        self.roots = [dict(r) for r in roots]
        self.model_api: ModelApi = model_api
        self.timeout = timeout
        self._sim = sim
        self.servers: dict[str, ServerEntry] = {}
        self.notifications: list[tuple[str, str, dict[str, Any]]] = []
        """(server, method, params) of every log and change notification the clients passed up."""
        self.cache: ListCache | None = None
        self._tg: TaskGroup | None = None
        self._tg_cm: Any = None
        self._tool_index: dict[str, HostTool] = {}
        self._decisions: dict[str, PolicyDecision] = {}
        """Qualified name -> the policies' last verdict on that tool (see :meth:`decide`)."""
        self.tool_review = tool_review
        self.reviews: list[ToolReview] = []
        """Every review the Host asked for, in order."""
        self._pins: dict[tuple[str, str], tuple[str, bool]] = {}
        """(server, tool) -> (fingerprint, approved) of the last reviewed definition."""

    # -- lifecycle ------------------------------------------------------------------------------
    @property
    def sim(self) -> Simulation:
        if self._sim is None:
            self._sim = current_simulation()
        return self._sim

    async def __aenter__(self) -> Host:
        sim = self.sim
        self.cache = ListCache(sim.now)
        self._tg_cm = anyio.create_task_group()
        self._tg = await self._tg_cm.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        with anyio.CancelScope(shield=True):
            for entry in list(self.servers.values()):
                await entry.client.close()
        assert self._tg is not None
        self._tg.cancel_scope.cancel()
        # The clients' and servers' tasks are contained (they never raise), so leaving the task group
        # cleanly lets an error of the body propagate as itself, not wrapped in an ExceptionGroup.
        await self._tg_cm.__aexit__(None, None, None)
        return None

    def say(self, sender: str, receiver: str, text: str, data: dict[str, Any] | None = None) -> None:
        """Record talk between user, host, model and clients (not MCP, but part of the story)."""
        self.sim.recorder.record_app(sender=sender, receiver=receiver, text=text, data=data)

    # -- servers ------------------------------------------------------------------------------
    async def add_server(self, name: str, server: Any, *, transport: str = "memory", revision: str | None = None,
                         era: ClientEra | None = None, faults: Any = None, auth: AuthInfo | None = None,
                         trusted: bool = False, timeout: float | None = None,
                         retry_after_crash: Collection[str] = ()) -> Client:
        """Connect ``server`` (a Server object, or ``async def main(stream)``) through a new Client.

        ``revision`` pins the client to one era's versions up to that revision (``"2025-11-25"`` →
        legacy ``initialize``; ``"2026-07-28"`` → modern); ``era`` overrides (``"auto"`` probes).

        ``retry_after_crash`` is the host's own list of this server's tools it trusts to be idempotent:
        when a stdio server dies with one of their calls in flight, the call is sent again (and the
        trace says why). Any other call lost that way fails with ``OutcomeUnknown`` — a tool's
        ``idempotentHint`` is the server's claim, not the host's decision (course chapter 06)."""
        if self._tg is None:
            raise RuntimeError("use the Host as `async with Host(...) as host:` before adding servers")
        if name in self.servers:
            raise ValueError(f"a server named {name!r} is already connected; each Server gets its own Client")
        versions: tuple[str, ...] = SIMULATED_VERSIONS
        client_era: ClientEra = era or "auto"
        if revision is not None:
            rev_era = REVISIONS[revision].era
            versions = versions_up_to(revision, SIMULATED_VERSIONS) or (revision,)
            client_era = era or rev_era
        client = Client(self.name, era=client_era, versions=versions, callbacks=self._callbacks(),
                        timeout=timeout or self.timeout, cache=self.cache, auth=auth,
                        retry_after_crash=retry_after_crash, sim=self.sim)
        self.say(HOST, f"client/{name}", f"create a Client for the {name} server ({transport})")
        stream = await self._open_link(name, server, transport=transport, revision=revision, faults=faults, auth=auth)
        entry = ServerEntry(name, client, transport, trusted)
        self.servers[name] = entry
        try:
            await client.connect(stream, self._tg)
        except BaseException as exc:
            entry.error = f"{type(exc).__name__}: {exc}"
            raise
        entry.opened = True
        return client

    async def _open_link(self, name: str, server: Any, *, transport: str, revision: str | None, faults: Any,
                         auth: AuthInfo | None) -> MessageStream:
        main = _server_main(server)
        sim = self.sim

        async def contained(stream: MessageStream) -> None:
            # A crashing server must end its own link, not the Host: the client then sees the link
            # close and fails only that server's requests.
            try:
                await main(stream)
            except Exception as exc:
                sim.recorder.record_event(kind="transport", link=name, sender=f"server/{name}",
                                          receiver=f"server/{name}", text=f"the {name} server crashed: {exc}",
                                          marks=("crash",))
            finally:
                with anyio.CancelScope(shield=True):
                    try:
                        await stream.aclose()
                    except Exception as exc:
                        log.debug("closing %s: %s", name, exc)

        assert self._tg is not None
        link_options: dict[str, Any] = {"transport": transport, "revision": revision, "faults": faults, "auth": auth}
        stream: MessageStream = await open_link(sim, self._tg, name, contained, **link_options)
        return stream

    async def remove_server(self, name: str) -> None:
        """Disconnect one server: close its client; the others are not touched."""
        entry = self.servers.pop(name)
        await entry.client.close()
        self._tool_index = {k: v for k, v in self._tool_index.items() if v.server != name}

    def client(self, name: str) -> Client:
        return self.servers[name].client

    # -- tools ----------------------------------------------------------------------------------
    async def list_tools(self, *, timeout: float | None = None) -> list[HostTool]:
        """All servers' tools under collision-free names. Servers are asked concurrently, each under
        its own timeout: a server that hangs or has crashed is reported in ``ServerEntry.error`` and
        skipped, and the others' tools are still returned."""
        entries = list(self.servers.values())
        await self._fetch_tools(entries, timeout)
        out = self._rebuild_index()
        self._announce(entries)
        return out

    async def refresh_tools(self, server: str, *, timeout: float | None = None) -> list[HostTool]:
        """List one server's tools again (what the Host does when that server says its list changed);
        the other servers' tools are kept as they are. Returns the server's tools."""
        entry = self.servers.get(server)
        if entry is None:
            return []
        await self._fetch_tools([entry], timeout)
        self._rebuild_index()
        self._announce([entry])
        return list(entry.tools)

    async def _fetch_tools(self, entries: Sequence[ServerEntry], timeout: float | None) -> None:
        pages: dict[str, list[dict[str, Any]]] = {}

        async def fetch(entry: ServerEntry) -> None:
            client = entry.client
            if not entry.opened:  # nothing can be sent on a connection that never opened
                self.say(f"client/{entry.name}", HOST, f"{entry.name} is unavailable: {entry.error}")
                return
            try:
                if client.server_capabilities is not None and "tools" not in client.server_capabilities:
                    pages[entry.name] = []
                    return
                # Each request has the client's own timeout (which cancels it on the wire); this outer
                # limit is only a backstop for a server that keeps paging for ever.
                with anyio.fail_after(2 * (timeout or self.timeout) + 1):
                    pages[entry.name] = await client.list_all_tools()
                entry.error = None
            except (McpError, TimeoutError, RequestTimeout, TransportClosed) as exc:
                entry.error = f"{type(exc).__name__}: {exc}"
                self.say(f"client/{entry.name}", HOST, f"{entry.name} is unavailable: {exc}")

        async with anyio.create_task_group() as tg:
            for entry in entries:
                tg.start_soon(fetch, entry)
        for entry in entries:
            entry.definitions = await self._review(entry.name, pages.get(entry.name, []))

    def _announce(self, entries: Sequence[ServerEntry]) -> None:
        for entry in entries:
            if entry.error is None:
                self.say(f"client/{entry.name}", HOST,
                         f"tools: {', '.join(t.qualified_name for t in entry.tools) or '(none)'}")

    async def _review(self, server: str, tools: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """The definitions that may reach the model: all of them without a ``tool_review``; else those
        whose fingerprint was approved, after showing each new or changed one to the reviewer."""
        if self.tool_review is None:
            return list(tools)
        admitted: list[dict[str, Any]] = []
        for tool in tools:
            key, fp = (server, str(tool["name"])), fingerprint(tool)
            pinned = self._pins.get(key)
            if pinned is not None and pinned[0] == fp:
                approved = pinned[1]  # reviewed before, unchanged: the verdict stands
            else:
                status: Literal["new", "changed"] = "new" if pinned is None else "changed"
                verdict = self.tool_review(server, tool)
                approved = bool(await verdict if inspect.isawaitable(verdict) else verdict)
                self._pins[key] = (fp, approved)
                self.reviews.append(ToolReview(server, key[1], status, approved, fp))
                self.say(HOST, USER, f"review {status} definition {server}/{key[1]} (fingerprint {fp}): "
                         f"{'approved' if approved else 'rejected'}",
                         data={"review": {"server": server, "tool": dict(tool), "status": status,
                                          "approved": approved}})
            if approved:
                admitted.append(tool)
        return admitted

    def _rebuild_index(self) -> list[HostTool]:
        taken: set[str] = set()
        out: list[HostTool] = []
        for entry in self.servers.values():
            entry.tools = [HostTool(entry.name, t, qualify(entry.name, str(t["name"]), taken))
                           for t in entry.definitions]
            out.extend(entry.tools)
        self._tool_index = {t.qualified_name: t for t in out}
        return out

    def visible_tools(self, tools: Sequence[HostTool] | None = None) -> list[HostTool]:
        """The tools the model may see under the Host's :class:`ToolPolicy`."""
        pool = tools if tools is not None else list(self._tool_index.values())
        return [t for t in pool if self.tool_policy.permits(t, trusted=self.servers[t.server].trusted
                                                            if t.server in self.servers else False)]

    def model_tools(self, tools: Sequence[HostTool] | None = None, api: ModelApi | None = None) -> list[dict[str, Any]]:
        """The visible tools in a model API's format (``openai`` or ``anthropic``)."""
        return TOOL_CONVERTERS[api or self.model_api]([t.spec() for t in self.visible_tools(tools)])

    async def call_tool(self, qualified_name: str, arguments: Mapping[str, Any] | None = None, *,
                        timeout: float | None = None) -> dict[str, Any]:
        """Run one tool call the way a Host must: look it up, check the policy, ask for approval,
        then forward it to the right client. Refusals and failures come back as a ``CallToolResult``
        with ``isError: true`` so the model can read what happened."""
        tool = self._tool_index.get(qualified_name)
        if tool is None:
            return _error_result(f"there is no tool named {qualified_name}")
        entry = self.servers.get(tool.server)
        if entry is None:
            return _error_result(f"the {tool.server} server is not connected")
        decision = self.decide(tool, entry)
        if not decision.visible:
            return _error_result(f"the Host's policy does not allow {qualified_name}")
        args = dict(arguments or {})
        # The app events are the story a sequence diagram tells; their text is only worth building
        # when someone records it.
        recorder = self.sim.recorder
        tracing = recorder.enabled
        name = tool.name
        client_name = decision.client
        if decision.reasons:
            request = ApprovalRequest(tool.server, name, qualified_name, args, decision.reasons, tool.annotations)
            if tracing:
                recorder.record_app(sender=HOST, receiver=USER, text=request.describe, data=request.trace_data)
            approved = await self.approver.approve(request)
            if tracing:
                recorder.record_app(sender=USER, receiver=HOST, text="approve" if approved else "deny")
            if not approved:
                return _error_result(f"the user did not approve {name}")
        if tracing:
            recorder.record_app(sender=HOST, receiver=client_name, text=decision.forward_text)
        try:
            result = await entry.client.call_tool(name, args, timeout=timeout)
        except (McpError, RequestTimeout, TransportClosed) as exc:
            self.say(client_name, HOST, f"{name} failed: {exc}")
            return _error_result(f"{tool.server} could not run {name}: {exc}")
        if tracing:
            recorder.record_app(sender=client_name, receiver=HOST, text=decision.result_text)
        return result

    def decide(self, tool: HostTool, entry: ServerEntry | None = None) -> PolicyDecision:
        """The :class:`ToolPolicy` and :class:`ApprovalPolicy` verdicts on ``tool``, worked out the first
        time and reused while the tool's definition, its server's trust and both policies stay the same."""
        entry = entry if entry is not None else self.servers.get(tool.server)
        trusted = entry.trusted if entry is not None else False
        known = self._decisions.get(tool.qualified_name)
        if known is not None and known.tool is tool and known.trusted == trusted \
                and known.tool_policy is self.tool_policy and known.approval_policy is self.approval_policy:
            return known
        decision = PolicyDecision(tool, self.tool_policy, self.approval_policy, trusted,
                                  visible=self.tool_policy.permits(tool, trusted=trusted),
                                  reasons=self.approval_policy.reasons(tool))
        self._decisions[tool.qualified_name] = decision
        return decision

    # -- the conversation ------------------------------------------------------------------------
    async def chat(self, text: str, *, max_steps: int = 6) -> str:
        """One user request, end to end: the complete tool call. The Host offers the model the tools its
        policy allows (in the model API's format), runs the calls the model proposes — each after the
        user's approval — feeds the results back, and returns the final answer."""
        if self.model is None:
            raise RuntimeError("this Host has no model")
        self.say(USER, HOST, text)
        if not self._tool_index:
            await self.list_tools()
        visible = self.visible_tools()
        specs = [t.spec() for t in visible]
        messages: list[ChatMessage] = [ChatMessage("user", text)]
        self.conversation = messages
        for _ in range(max_steps):
            api_tools = TOOL_CONVERTERS[self.model_api](specs)
            what = "tool results" if messages[-1].role == "tool" else "messages"
            self.say(HOST, MODEL, f"{what} + {len(specs)} tool schemas filtered by policy",
                     data={"api": self.model_api, "messages": MESSAGE_CONVERTERS[self.model_api](messages),
                           "tools": api_tools})
            turn: ModelTurn = await self.model.respond(messages, specs)
            if turn.is_final:
                self.say(MODEL, HOST, turn.text)
                self.say(HOST, USER, turn.text)
                return turn.text
            self.say(MODEL, HOST, "tool_calls: " + ", ".join(_show_call(c) for c in turn.tool_calls),
                     data={"tool_calls": [{"id": c.id, "name": c.name, "arguments": dict(c.arguments)}
                                          for c in turn.tool_calls]})
            messages.append(ChatMessage("assistant", turn.text, tool_calls=turn.tool_calls))
            for call in turn.tool_calls:
                result = await self.call_tool(call.name, call.arguments)
                is_error = bool(result.get("isError"))
                messages.append(ChatMessage("tool", result_text(result), tool_call_id=call.id, is_error=is_error))
        answer = "I stopped: too many tool calls for one request."
        self.say(HOST, USER, answer)
        return answer

    # -- answering the servers' requests for input ------------------------------------------------
    def _callbacks(self) -> ClientCallbacks:
        return ClientCallbacks(
            elicitation=self._elicit if self.user is not None else None,
            sampling=self._sample if self.model is not None else None,
            roots=self._roots if self.roots else None,
            on_notification=self._on_notification,
        )

    async def _elicit(self, server: str, params: dict[str, Any]) -> dict[str, Any]:
        """A server asks the user something: show it (saying which server asks), collect the answer."""
        assert self.user is not None
        prompt = ElicitationPrompt.from_params(server, params)
        shown = prompt.url if prompt.mode == "url" else ", ".join(prompt.requested_schema.get("properties") or {})
        self.say(HOST, USER, f"{server} asks: {prompt.message} ({shown})", data={"elicitation": dict(params)})
        answer = await self.user.elicit(prompt)
        self.say(USER, HOST, _show_elicit(answer), data={"elicitResult": answer})
        return answer

    async def _sample(self, server: str, params: dict[str, Any]) -> dict[str, Any]:
        """A server asks the Host's model for a completion, within the sampling budget."""
        assert self.model is not None
        budget, now = self.sampling_budget, self.sim.now()
        if not budget.admit(server, now):
            self.say(HOST, f"client/{server}", f"refuse sampling for {server}: budget exhausted")
            raise McpError(SAMPLING_REFUSED, "Sampling refused: the Host's sampling budget is exhausted",
                           rule="A Host supporting sampling must constrain models, budgets and visible context.")
        params = await self.sampling_mediator.request(self, server, params)  # review, context
        bounded = {**params, "maxTokens": budget.limit(server, params.get("maxTokens"), now)}
        self.say(HOST, MODEL, f"sampling for {server}: {sampled_text(params)[:60]}", data={"sampling": bounded})
        result = await self.model.sample(bounded)
        content = result.get("content") or {}
        text = content.get("text", "") if isinstance(content, Mapping) else ""
        granted = budget.charge(server, text, now)  # per server, in characters, trimmed to what was left
        if granted != text:
            result = {**result, "content": {**content, "text": granted}, "stopReason": "maxTokens"}
        text = granted
        self.say(MODEL, HOST, text)
        return await self.sampling_mediator.result(self, server, result)

    async def _roots(self, server: str) -> list[dict[str, Any]]:
        return [dict(r) for r in self.roots]

    def _on_notification(self, server: str, method: str, params: dict[str, Any]) -> None:
        self.notifications.append((server, method, params))
        if method == "notifications/tools/list_changed" and server in self.servers:
            # The model must not keep using a stale list: forget it now, and list that server again
            # (the notification carries no list) — the new definitions go through review like any other.
            entry = self.servers[server]
            entry.definitions, entry.tools = [], []
            self._tool_index = {k: v for k, v in self._tool_index.items() if v.server != server}
            if self._tg is not None:
                self._tg.start_soon(self._relist, server, name=f"host: re-list {server}")

    async def _relist(self, server: str) -> None:
        self.say(HOST, f"client/{server}", f"{server}'s tool list changed: list it again")
        try:
            await self.refresh_tools(server)
        except Exception as exc:  # a failing server must not end the Host
            log.info("re-listing %s failed: %s", server, exc)


def _server_main(server: Any) -> ServerMain:
    """Accept a :class:`~mcp_sim.roles.server.Server` (served with ``serve``) or ``async def main(stream)``."""
    from mcp_sim.roles.server import Server
    from mcp_sim.roles.server_session import serve

    if isinstance(server, Server):
        async def main(stream: MessageStream) -> None:
            await serve(server, stream)

        return main
    if callable(server):
        return server  # type: ignore[no-any-return]
    raise TypeError(f"cannot serve {server!r}: give a Server or an `async def main(stream)`")


def _error_result(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": True}


def _show_call(call: ToolCall) -> str:
    args = ", ".join(f"{k}={v!r}" for k, v in call.arguments.items())
    return f"{call.name}({args})"


def _show_elicit(answer: Mapping[str, Any]) -> str:
    action = answer.get("action", "?")
    content = answer.get("content")
    return f"{action} {json.dumps(content, sort_keys=True)}" if content else str(action)
