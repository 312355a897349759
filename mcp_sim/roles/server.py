"""The MCP server: what it offers, declared from plain Python (spec "Server features"; course
chapter 05).

A :class:`Server` is a registry of tools, resources, resource templates and prompts, plus the facts it
announces about itself (name, version, capabilities). It is shared by every connection: an HTTP
server serves many clients at once, so all per-connection state — the negotiated revision, the
client's capabilities, the log level, subscriptions — lives in
:class:`~mcp_sim.roles.server_session.ServerSession`, and ``serve(server, stream)`` runs one.

A server with one tool, one resource and one prompt::

    from mcp_sim.roles.server import Server

    server = Server("weather", version="1.0.0")

    @server.tool(annotations={"readOnlyHint": True})
    def get_forecast(city: str, days: int = 1) -> str:
        \"\"\"Forecast for a city.\"\"\"
        return f"{city}: sunny for {days} day(s)"

    @server.resource("weather://stations", mime_type="application/json")
    def stations() -> list[str]:
        return ["Lisbon", "Oslo"]

    @server.prompt()
    def plan_trip(destination: str) -> str:
        return f"Plan a trip to {destination}, checking the forecast first."

By default it speaks both eras (2025-06-18, 2025-11-25 via ``initialize``; 2026-07-28 per request);
``supported_versions=("2026-07-28",)`` pins it to one.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, Protocol, TypeVar

from mcp_sim.capabilities.caching import CachePolicy
from mcp_sim.capabilities.completion import Completer
from mcp_sim.capabilities.fields import for_revision
from mcp_sim.capabilities.mrtr import PlainStateCodec, StateCodec
from mcp_sim.capabilities.prompts import PromptDefinition, prompt_from_function
from mcp_sim.capabilities.resources import (
    ResourceDefinition,
    ResourceTemplateDefinition,
    resource_from_function,
    template_from_function,
)
from mcp_sim.capabilities.subscriptions import Change
from mcp_sim.capabilities.tasks import TASKS_EXTENSION, TaskStore
from mcp_sim.capabilities.tools import TaskSupport, ToolDefinition, tool_from_function
from mcp_sim.protocol.lifecycle import has_capability
from mcp_sim.protocol.revisions import REVISIONS, SIMULATED_VERSIONS, get_revision
from mcp_sim.transports.base import AuthInfo


class OpenSession(Protocol):
    """What the server asks of each open connection when one of its lists or resources changes
    (:class:`~mcp_sim.roles.server_session.ServerSession` implements it)."""

    def on_change(self, change: Change) -> None: ...
    def close_subscriptions(self) -> None: ...

logger = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_VERSIONS: Final = SIMULATED_VERSIONS


class Server:
    """An MCP server's offer: tools, resources, templates, prompts, and how it describes itself."""

    def __init__(self, name: str, version: str = "0.1.0", *, title: str | None = None,
                 description: str | None = None, instructions: str | None = None,
                 icons: Sequence[Mapping[str, Any]] | None = None, website_url: str | None = None,
                 supported_versions: Sequence[str] = DEFAULT_VERSIONS, page_size: int | None = None,
                 per_caller: bool = False, list_changed: bool = True, subscribe: bool = True,
                 logging: bool = True, log_level: str = "info", capabilities: Mapping[str, Any] | None = None,
                 state_codec: StateCodec | None = None, cache: CachePolicy | None = None,
                 task_ttl_ms: int | None = 60_000, task_poll_interval_ms: int = 1_000,
                 tasks_extension: bool = True) -> None:
        unknown = [v for v in supported_versions if v not in REVISIONS]
        if unknown or not supported_versions:
            raise ValueError(f"unsupported protocol version(s) {unknown}; known: {sorted(REVISIONS)}")
        self.name = name
        self.version = version
        self.title = title
        self.description = description
        self.instructions = instructions
        self.icons = [dict(i) for i in icons] if icons else None
        self.website_url = website_url
        self.supported_versions = tuple(supported_versions)
        self.page_size = page_size
        """Items per page of every list (``None``: everything on one page)."""
        self.per_caller = per_caller
        """Every answer depends on who asks (a multi-tenant server): cacheable results are ``private``."""
        self.list_changed = list_changed
        self.subscribe = subscribe
        self.logging = logging
        self.log_level = log_level
        """The level legacy connections start at, until the client sends ``logging/setLevel``."""
        self.declared_capabilities = dict(capabilities) if capabilities is not None else None
        self.state_codec: StateCodec = state_codec or PlainStateCodec()
        self.cache = cache or CachePolicy()
        self.task_ttl_ms = task_ttl_ms
        self.task_poll_interval_ms = task_poll_interval_ms
        self.tasks_extension_enabled = tasks_extension
        self.tools: dict[str, ToolDefinition] = {}
        self.resources: dict[str, ResourceDefinition] = {}
        self.templates: dict[str, ResourceTemplateDefinition] = {}
        self.prompts: dict[str, PromptDefinition] = {}
        self.task_store = TaskStore()
        self.sessions: dict[OpenSession, None] = {}
        """The open connections, in the order they opened (a dict as an ordered set: change
        notifications go out in the same order on every run, never in an order set by object identity)."""
        """The connections being served right now (so a change can reach each of them)."""
        self._counters: dict[str, int] = {}
        self._eras: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]] | None = None
        self._declared: dict[tuple[Any, ...], bool] = {}
        """(revision, capability path, settings) -> declared? (see :meth:`declares`); emptied on each change."""
        self._info: dict[tuple[Any, ...], dict[str, Any]] = {}
        self._offered: set[str] = set()
        """Kinds (tools, resources, prompts) ever offered: a capability, once declared, stays declared
        even if the last tool is removed, so clients keep hearing about changes."""

    def __repr__(self) -> str:
        return (f"Server({self.name!r}, tools={list(self.tools)}, resources={list(self.resources)}, "
                f"templates={list(self.templates)}, prompts={list(self.prompts)})")

    # -- versions ---------------------------------------------------------------------------------
    @property
    def legacy_versions(self) -> list[str]:
        return list(self.versions_by_era()[0])

    @property
    def modern_versions(self) -> list[str]:
        return list(self.versions_by_era()[1])

    def versions_by_era(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(legacy, modern) of :attr:`supported_versions`, oldest first. Every request asks, so the split
        is kept until ``supported_versions`` is given a new value."""
        known = self._eras
        if known is None or known[0] is not self.supported_versions:
            versions = self.supported_versions
            known = (versions, tuple(v for v in versions if get_revision(v).era == "legacy"),
                     tuple(v for v in versions if get_revision(v).era == "modern"))
            self._eras = known
        return known[1], known[2]

    def next_number(self, name: str) -> int:
        """1, 2, 3 … per ``name``: deterministic ids for sessions, tasks, elicitations."""
        self._counters[name] = self._counters.get(name, 0) + 1
        return self._counters[name]

    # -- declaring --------------------------------------------------------------------------------
    def tool(self, fn: F | None = None, /, *, name: str | None = None, title: str | None = None,
             description: str | None = None, annotations: Mapping[str, Any] | None = None,
             icons: Sequence[Mapping[str, Any]] | None = None, input_schema: Mapping[str, Any] | None = None,
             output_schema: Mapping[str, Any] | None = None, task_support: TaskSupport = "forbidden",
             visible: Callable[[AuthInfo | None], bool] | None = None, per_caller: bool = False,
             meta: Mapping[str, Any] | None = None, ask_first: Mapping[str, Any] | None = None) -> Any:
        """Decorator: the function becomes a tool. Type hints give the ``inputSchema``, the docstring
        the description; a parameter ``ctx: Context`` receives the request context. ``ask_first``: input a
        task of this tool needs before it starts (see :class:`~mcp_sim.capabilities.tools.ToolDefinition`)."""
        def register(f: F) -> F:
            self.add_tool(tool_from_function(
                f, name=name, title=title, description=description, annotations=annotations, icons=icons,
                input_schema=input_schema, output_schema=output_schema, task_support=task_support,
                visible=visible, per_caller=per_caller, meta=meta, ask_first=ask_first))
            return f
        return register(fn) if fn is not None else register

    def resource(self, uri: str, *, name: str | None = None, title: str | None = None,
                 description: str | None = None, mime_type: str | None = None,
                 icons: Sequence[Mapping[str, Any]] | None = None, per_caller: bool = False) -> Callable[[F], F]:
        """Decorator: the function (no arguments) returns the contents of the resource at ``uri``."""
        def register(f: F) -> F:
            self.add_resource(resource_from_function(uri, f, name=name, title=title, description=description,
                                                     mime_type=mime_type, icons=icons, per_caller=per_caller))
            return f
        return register

    def resource_template(self, uri_template: str, *, name: str | None = None, title: str | None = None,
                          description: str | None = None, mime_type: str | None = None,
                          icons: Sequence[Mapping[str, Any]] | None = None,
                          complete: Mapping[str, Completer] | None = None,
                          per_caller: bool = False) -> Callable[[F], F]:
        """Decorator: the function's parameters are the template's variables."""
        def register(f: F) -> F:
            self.add_resource_template(template_from_function(
                uri_template, f, name=name, title=title, description=description, mime_type=mime_type,
                icons=icons, complete=complete, per_caller=per_caller))
            return f
        return register

    def prompt(self, fn: F | None = None, /, *, name: str | None = None, title: str | None = None,
               description: str | None = None, icons: Sequence[Mapping[str, Any]] | None = None,
               complete: Mapping[str, Completer] | None = None,
               argument_descriptions: Mapping[str, str] | None = None) -> Any:
        """Decorator: the function's parameters are the prompt's arguments; it returns the messages."""
        def register(f: F) -> F:
            self.add_prompt(prompt_from_function(f, name=name, title=title, description=description, icons=icons,
                                                 complete=complete, argument_descriptions=argument_descriptions))
            return f
        return register(fn) if fn is not None else register

    def completion(self, *, argument: str, prompt: str | None = None,
                   template: str | None = None) -> Callable[[F], F]:
        """Decorator: the function completes ``argument`` of a prompt or a resource template."""
        def register(f: F) -> F:
            self.add_completion(f, argument=argument, prompt=prompt, template=template)
            return f
        return register

    # -- changing at run time -----------------------------------------------------------------------
    def add_tool(self, tool: ToolDefinition | Callable[..., Any], **options: Any) -> ToolDefinition:
        """Offer a tool (a :class:`ToolDefinition` or a function); connected clients hear of it."""
        definition = tool if isinstance(tool, ToolDefinition) else tool_from_function(tool, **options)
        self.tools[definition.name] = definition
        self._offered.add("tools")
        self.notify_change(Change("tools"))
        return definition

    def remove_tool(self, name: str) -> None:
        del self.tools[name]
        self.notify_change(Change("tools"))

    def add_prompt(self, prompt: PromptDefinition | Callable[..., Any], **options: Any) -> PromptDefinition:
        definition = prompt if isinstance(prompt, PromptDefinition) else prompt_from_function(prompt, **options)
        self.prompts[definition.name] = definition
        self._offered.add("prompts")
        self.notify_change(Change("prompts"))
        return definition

    def remove_prompt(self, name: str) -> None:
        del self.prompts[name]
        self.notify_change(Change("prompts"))

    def add_resource(self, resource: ResourceDefinition | str, fn: Callable[..., Any] | None = None, *,
                     content: Any = None, **options: Any) -> ResourceDefinition:
        """Offer a resource: a :class:`ResourceDefinition`, or a URI with a function or fixed ``content``."""
        if isinstance(resource, ResourceDefinition):
            definition = resource
        else:
            definition = resource_from_function(resource, fn, content=content, **options)
        self.resources[definition.uri] = definition
        self._offered.add("resources")
        self.notify_change(Change("resources"))
        return definition

    def remove_resource(self, uri: str) -> None:
        del self.resources[uri]
        self.notify_change(Change("resources"))

    def add_resource_template(self, template: ResourceTemplateDefinition) -> ResourceTemplateDefinition:
        self.templates[template.uri_template] = template
        self._offered.add("resources")
        self.notify_change(Change("resources"))
        return template

    def add_completion(self, completer: Completer, *, argument: str, prompt: str | None = None,
                       template: str | None = None) -> None:
        if (prompt is None) == (template is None):
            raise ValueError("name exactly one of prompt= or template=")
        if prompt is not None:
            target: dict[str, Completer] = self.prompts[prompt].completions
            names = {a["name"] for a in self.prompts[prompt].arguments}
        else:
            target = self.templates[str(template)].completions
            names = set(self.templates[str(template)].variables)
        if argument not in names:
            raise ValueError(f"{prompt or template} has no argument {argument!r}")
        target[argument] = completer
        self._declared.clear()  # the first completer declares ``completions``

    def set_resource(self, uri: str, content: Any) -> None:
        """Replace a fixed resource's contents and tell its subscribers it was updated."""
        self.resources[uri].content = content
        self.resource_updated(uri)

    def resource_updated(self, uri: str) -> None:
        """The contents behind ``uri`` changed: subscribers get ``notifications/resources/updated``."""
        self.notify_change(Change("resource", uri=uri))

    def notify_change(self, change: Change) -> None:
        """Pass ``change`` to every connection; each decides what (if anything) its client hears."""
        self._declared.clear()  # what is registered changed, so the capabilities may have too
        for session in list(self.sessions):
            session.on_change(change)

    def close_subscriptions(self) -> None:
        """End every ``subscriptions/listen`` stream gracefully (each gets its result)."""
        for session in list(self.sessions):
            session.close_subscriptions()

    # -- what the server announces -----------------------------------------------------------------
    def visible_tools(self, auth: AuthInfo | None) -> list[ToolDefinition]:
        return [t for t in self.tools.values() if t.is_visible_to(auth)]

    def tools_depend_on_caller(self) -> bool:
        """True when ``tools/list`` differs by caller, so its 2026 result must be ``private``."""
        return self.per_caller or any(t.visible is not None or t.per_caller for t in self.tools.values())

    @property
    def has_task_tools(self) -> bool:
        return any(t.task_support != "forbidden" for t in self.tools.values())

    @property
    def tasks_extension(self) -> bool:
        """The 2026-07-28 tasks extension is on when enabled and some tool can run as a task."""
        return self.tasks_extension_enabled and self.has_task_tools

    def capabilities_for(self, revision: str) -> dict[str, Any]:
        """The ``ServerCapabilities`` of ``revision``: declared explicitly, or derived from what is
        registered. Only capabilities the revision defines are included."""
        rev = get_revision(revision)
        if self.declared_capabilities is not None:
            caps = dict(self.declared_capabilities)
        else:
            caps = {}
            if self.completions_offered() and "completions" in rev.server_capabilities:
                caps["completions"] = {}
            if self.logging:
                caps["logging"] = {}
            if "prompts" in self._offered:
                caps["prompts"] = {"listChanged": self.list_changed}
            if "resources" in self._offered:
                caps["resources"] = {"subscribe": self.subscribe, "listChanged": self.list_changed}
            if "tools" in self._offered:
                caps["tools"] = {"listChanged": self.list_changed}
            if self.has_task_tools and "tasks" in rev.server_capabilities:
                caps["tasks"] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
            if self.tasks_extension and "extensions" in rev.server_capabilities:
                caps["extensions"] = {TASKS_EXTENSION: {}}
        return {k: v for k, v in caps.items() if k in rev.server_capabilities}

    def declares(self, revision: str, path: str) -> bool:
        """Does :meth:`capabilities_for` ``revision`` declare ``path`` (``"tools"``, ``"resources.subscribe"``)?

        Every request is checked against the server's capabilities, so the answer is kept until
        something is added or removed (or one of the server's settings is given a new value)."""
        key = (revision, path, id(self.declared_capabilities), self.logging, self.list_changed, self.subscribe,
               self.tasks_extension_enabled)
        answer = self._declared.get(key)
        if answer is None:
            answer = self._declared[key] = has_capability(self.capabilities_for(revision), path)
        return answer

    def completions_offered(self) -> bool:
        return any(p.completions for p in self.prompts.values()) or \
            any(t.completions for t in self.templates.values())

    def server_info(self, revision: str) -> dict[str, Any]:
        """The ``Implementation`` object naming this server, as ``revision`` spells it (every modern
        result carries it, so it is built once per revision and copied)."""
        key = (revision, self.name, self.title, self.version, self.description, id(self.icons), self.website_url)
        info = self._info.get(key)
        if info is None:
            info = self._info[key] = for_revision("Implementation", {
                "name": self.name, "title": self.title, "version": self.version, "description": self.description,
                "icons": self.icons, "websiteUrl": self.website_url}, revision)
        return dict(info)
