"""The topology diagram: one host, its clients, their servers, and the boundaries between them
(course chapter 01, roles; chapter 10, security boundaries).

MCP's architecture in one picture: the user talks to a **host**; the host owns one **client** per
**server** (1:1); each client reaches its server over a **transport**. The enclosures are the
security boundaries a learner must see:

* the **host process** — the host, its clients, and any server running in-process (memory transport:
  no process boundary at all, the server can read the host's memory);
* a **local server process** — a stdio server is a child process on the user's machine, reachable
  only through its stdin/stdout, ideally inside a sandbox;
* a **remote server** — a Streamable HTTP server on another machine, across the network, behind
  authorization.

Drawn by Graphviz (via ``graphviz-pure``), with a text rendering when no binary is available.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import graphviz

from mcp_sim.trace.graphviz_svg import GraphvizDiagram

FONT = "Helvetica"

TRANSPORT_WORDS = {
    "memory": "memory (in-process hand-off)",
    "stdio": "stdio (JSON lines on stdin/stdout)",
    "http": "Streamable HTTP (POST + SSE)",
}

DEFAULT_LOCATION = {"memory": "in-process", "stdio": "local", "http": "remote"}
LOCATIONS = ("in-process", "local", "remote")


@dataclass(frozen=True)
class ServerPlacement:
    """Where one server runs and how its client reaches it.

    ``location`` is ``in-process`` (inside the host process), ``local`` (its own process on the
    user's machine) or ``remote`` (another machine); by default it follows from the transport.
    ``sandbox`` describes the server's confinement, e.g. ``"container, no network"``."""

    name: str
    transport: str = "memory"
    location: str | None = None
    sandbox: str | None = None

    @property
    def where(self) -> str:
        return self.location or DEFAULT_LOCATION.get(self.transport, "local")

    @property
    def client(self) -> str:
        return f"client/{self.name}"

    @property
    def server(self) -> str:
        return f"server/{self.name}"


class TopologyDiagram(GraphvizDiagram):
    """Who is connected to whom, and across which boundary."""

    def __init__(self, servers: Iterable[ServerPlacement | str], *, host: str = "host", user: bool = True,
                 model: bool = True, title: str | None = None) -> None:
        self.servers = [s if isinstance(s, ServerPlacement) else ServerPlacement(s) for s in servers]
        self.host = host
        self.user = user
        self.model = model
        self.title = title or "Topology: one host, one client per server"

    @classmethod
    def from_trace(cls, trace: Any, **options: Any) -> TopologyDiagram:
        """Infer the topology from the links a trace used (their names and transports)."""
        from mcp_sim.trace.events import Trace

        trace = Trace.of(trace)
        servers: dict[str, ServerPlacement] = {}
        for e in trace:
            for p in (e.sender, e.receiver):
                role, _, name = p.partition("/")
                if role in ("client", "server") and name and name not in servers and e.kind != "app":
                    servers[name] = ServerPlacement(name, e.transport)
        participants = set(trace.participants())
        options.setdefault("user", "user" in participants)
        options.setdefault("model", "model" in participants)
        return cls(servers.values(), **options)

    @classmethod
    def from_host(cls, host: Any, **options: Any) -> TopologyDiagram:
        """Read the topology from a live host: each of ``host.clients`` (a mapping or a list) is asked
        for its ``name`` and its transport (``client.transport`` or ``client.stream.info.transport``)."""
        clients = getattr(host, "clients", {}) or {}
        items = clients.items() if isinstance(clients, dict) else ((getattr(c, "name", None), c) for c in clients)
        servers = []
        for key, client in items:
            name = str(getattr(client, "name", None) or key)
            transport = getattr(client, "transport", None)
            if not isinstance(transport, str):
                info = getattr(getattr(client, "stream", None), "info", None)
                transport = getattr(info, "transport", None) or "memory"
            servers.append(ServerPlacement(name, transport))
        return cls(servers, **options)

    def description(self) -> str:
        parts = [f"{s.client} reaches {s.server} over {TRANSPORT_WORDS.get(s.transport, s.transport)}; "
                 f"the server is {self._where_words(s)}" for s in self.servers]
        return ("The host owns one client per server. " + ". ".join(parts) + "." if parts
                else "A host with no servers connected.")

    @staticmethod
    def _where_words(s: ServerPlacement) -> str:
        words = {"in-process": "in-process (inside the host process: no process boundary)",
                 "local": "local (its own process on the user's machine)",
                 "remote": "remote (on another machine, across the network)"}[s.where if s.where in LOCATIONS else "local"]
        return words + (f", sandbox: {s.sandbox}" if s.sandbox else "")

    def graph(self, direction: str = "LR") -> graphviz.Digraph:
        """The ``graphviz.Digraph`` (DOT) of the topology, laid out in ``direction`` (``LR`` or ``TB``)."""
        g = graphviz.Digraph("topology")
        g.attr(rankdir=direction, fontname=FONT, fontsize="12", label=self.title, labelloc="t", newrank="true")
        g.attr("node", shape="box", style="rounded", fontname=FONT, fontsize="11")
        g.attr("edge", fontname=FONT, fontsize="10")
        if self.user:
            g.node("user", "User\n(a person)", shape="ellipse")
        with g.subgraph(name="cluster_machine") as machine:
            machine.attr(label="the user's machine", style="dashed", fontname=FONT)
            with machine.subgraph(name="cluster_host") as hp:
                hp.attr(label="host process (trust boundary)", style="bold", fontname=FONT)
                hp.node(self.host, "Host\n(policy, approvals, model calls)")
                for s in self.servers:
                    hp.node(s.client, f"Client\n{s.client}")
                for s in self.servers:
                    if s.where == "in-process":
                        with hp.subgraph(name=f"cluster_inproc_{s.name}") as box:
                            box.attr(label="in-process server\n(no process boundary)", style="dotted")
                            box.node(s.server, self._server_label(s))
            for s in self.servers:
                if s.where == "local":
                    with machine.subgraph(name=f"cluster_local_{s.name}") as box:
                        box.attr(label=f"server process: {s.name}\n" + (f"sandbox: {s.sandbox}" if s.sandbox
                                                                        else "own OS process, not sandboxed"),
                                 style="bold")
                        box.node(s.server, self._server_label(s))
        for s in self.servers:
            if s.where == "remote":
                with g.subgraph(name=f"cluster_remote_{s.name}") as box:
                    box.attr(label=f"remote server: {s.name}\n(another machine, across the network)"
                             + (f"\nsandbox: {s.sandbox}" if s.sandbox else ""), style="dashed")
                    box.node(s.server, self._server_label(s))
        if self.model:
            g.node("model", "Model (LLM)\nsees tool descriptions and results", shape="box", style="rounded,dashed")
        if self.user:
            g.edge("user", self.host, label="chat + approvals", dir="both")
        if self.model:
            g.edge(self.host, "model", label="prompts (not MCP)", dir="both", style="dashed")
        for s in self.servers:
            g.edge(self.host, s.client, label="owns (1:1)")
            style = {"memory": "dotted", "stdio": "solid", "http": "bold"}.get(s.transport, "solid")
            g.edge(s.client, s.server, label=TRANSPORT_WORDS.get(s.transport, s.transport), dir="both", style=style)
        return g

    @staticmethod
    def _server_label(s: ServerPlacement) -> str:
        return f"Server\n{s.server}"

    def dot_source(self) -> str:
        return self.graph().source

    def layouts(self) -> Iterator[str]:
        """Left to right reads best; top to bottom when that is too wide for the output."""
        yield self.graph("LR").source
        yield self.graph("TB").source

    def to_text(self) -> str:
        lines = [self.title]
        if self.user:
            lines.append("user ⇄ host (chat + approvals)")
        lines.append(f"[host process] {self.host}")
        if self.model:
            lines.append(f"  {self.host} ⇄ model (prompts, not MCP)")
        for s in self.servers:
            lines.append(f"  {self.host} owns {s.client}")
            lines.append(f"    {s.client} ⇄ {s.server} over {TRANSPORT_WORDS.get(s.transport, s.transport)}; "
                         f"server is {self._where_words(s)}")
        return "\n".join(lines)
