"""Exercise ex01_topology (chapter 01): draw the host → clients → servers map as data.

The learner writes ``build_topology(host, servers)``. The case kinds are fixed — one server, several
local ones, several remote ones, a mix, six servers — and the seed picks only the names, commands
and URLs. A correct topology has one client per server, owned by the host, speaking stdio to local
servers and Streamable HTTP to remote ones, and leaves the caller's list as it was.
"""

from __future__ import annotations

import copy
import itertools
from typing import Any

from mcp_sim.grading.differential import Mismatch, exhaustive, same_json, show
from mcp_sim.grading.model import Check, CheckContext, CheckFailed, Exercise, Hint
from mcp_sim.trace.topology import DEFAULT_LOCATION

RULE_ONE_CLIENT = "host.one-client-per-server"
RULE_STDIO = "host.stdio-is-a-local-subprocess"
RULE_HTTP = "host.http-is-an-independent-endpoint"

_SERVER_WORDS = ("weather", "files", "github", "calendar", "postgres", "slack", "search", "notes", "jira",
                 "maps", "music", "finance", "docs", "shell", "browser", "email", "sentry", "linear")
_HOSTS = ("Claude Desktop", "VS Code", "my-agent", "ChatApp", "IDE", "Notebook host")


SHAPES = {"one local": ("local",), "one remote": ("remote",), "several local": ("local",) * 3,
          "several remote": ("remote",) * 3, "mixed": ("local", "remote", "local", "remote"),
          "six mixed": ("remote", "local", "local", "remote", "local", "remote")}
"""The case kinds: where each server runs. The seed only picks names, commands and URLs."""


def make_setup(rng: Any, kind: str) -> tuple[str, list[dict[str, Any]]]:
    """A host name and the servers of case kind ``kind`` (see :data:`SHAPES`)."""
    shape = SHAPES[kind]
    names = rng.sample(_SERVER_WORDS, len(shape))
    servers: list[dict[str, Any]] = []
    for name, runs in zip(names, shape, strict=True):
        tag = rng.randint(2, 99)
        if runs == "local":
            command = rng.choice((["python", f"{name}_server.py"], ["npx", "-y", f"@acme/{name}-mcp"],
                                  ["uvx", f"{name}-mcp", "--port", str(tag)]))
            servers.append({"name": f"{name}-{tag}", "runs": "local", "command": command})
        else:
            servers.append({"name": f"{name}-{tag}", "runs": "remote",
                            "url": f"https://{name}.example.com/mcp/v{tag}"})
    return rng.choice(_HOSTS), servers


def _topology(ctx: CheckContext, host: str, servers: list[dict[str, Any]]) -> dict[str, Any]:
    topo = ctx.function("build_topology")(host, copy.deepcopy(servers))
    if isinstance(topo, dict) and isinstance(topo.get("clients"), list):
        for c in topo["clients"]:
            if isinstance(c, dict) and isinstance(c.get("server"), list):
                raise CheckFailed(f'A client names {len(c["server"])} servers in "server"; each client keeps a '
                                  f"1:1 connection with exactly one server, so the host needs one client per "
                                  f"server.", RULE_ONE_CLIENT)
    if not isinstance(topo, dict):
        raise CheckFailed(f"build_topology() returned {type(topo).__name__}; it should return a dict like "
                          f'{{"host": ..., "clients": [...]}}.')
    if topo.get("host") != host:
        raise CheckFailed(f'The topology\'s "host" should be the host\'s name {host!r}, got {topo.get("host")!r}.')
    clients = topo.get("clients")
    if not isinstance(clients, list) or not all(isinstance(c, dict) for c in clients):
        raise CheckFailed('"clients" should be a list of dicts, one per client the host owns.')
    return topo


def _describe(servers: list[dict[str, Any]]) -> str:
    return ", ".join(f"{s['name']} ({s['runs']})" for s in servers)


def _clients_by_server(ctx: CheckContext, host: str, servers: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    topo = _topology(ctx, host, servers)
    clients = topo["clients"]
    names = [s["name"] for s in servers]
    seen: dict[str, dict[str, Any]] = {}
    for c in clients:
        target = c.get("server")
        if not isinstance(target, str):
            raise CheckFailed(f'Each client names exactly one server in "server" (a string); one client has '
                              f'"server": {target!r}. A client never connects to several servers.')
        if target not in names:
            raise CheckFailed(f"A client connects to {target!r}, which is not one of the servers: {_describe(servers)}.")
        if target in seen:
            raise CheckFailed(f"Two clients connect to {target!r}; the host needs exactly one client per server.")
        seen[target] = c
    missing = [n for n in names if n not in seen]
    if missing:
        raise CheckFailed(f"No client connects to {', '.join(missing)}. With servers {_describe(servers)} the host "
                          f"needs {len(servers)} client(s), one for each.")
    ids = [c.get("id") for c in clients]
    if any(not isinstance(i, str) or not i for i in ids) or len(set(ids)) != len(ids):
        raise CheckFailed(f'Every client needs its own non-empty "id" string so the host can tell them apart; got '
                          f"{ids!r}.")
    return seen


def check_one_client_per_server(ctx: CheckContext, kind: str) -> None:
    host, servers = make_setup(ctx.rng, kind)
    _clients_by_server(ctx, host, servers)


def _check_transport(ctx: CheckContext, kind: str, runs: str) -> None:
    host, servers = make_setup(ctx.rng, kind)
    clients = _clients_by_server(ctx, host, servers)
    for s in servers:
        c = clients[s["name"]]
        if runs == "local" and s["runs"] == "local":
            case = f"host {host!r}, servers {_describe(servers)}; the client for {s['name']}"
            if c.get("transport") != "stdio":
                raise CheckFailed(f"{s['name']} runs locally (command {s['command']!r}), and its client uses "
                                  f"transport {c.get('transport')!r}: that is not how a client starts a server "
                                  f"itself.", case=case, expected='"transport": "stdio"')
            if c.get("command") != s["command"]:
                raise CheckFailed(f"A stdio client starts its server itself, and the client for {s['name']} carries "
                                  f"command {c.get('command')!r}, not the server's own.", case=case,
                                  expected=f'"command": {s["command"]!r}')
        if runs == "remote" and s["runs"] == "remote":
            case = f"host {host!r}, servers {_describe(servers)}; the client for {s['name']}"
            if c.get("transport") != "streamable-http":
                raise CheckFailed(f"{s['name']} is remote (at {s['url']}), and its client uses transport "
                                  f"{c.get('transport')!r}: nobody can start a server on another machine with a "
                                  f"command.", case=case, expected='"transport": "streamable-http"')
            if c.get("url") != s["url"]:
                raise CheckFailed(f"An HTTP client connects to the server's endpoint, and the client for {s['name']} "
                                  f"carries url {c.get('url')!r}, not the server's own.", case=case,
                                  expected=f'"url": {s["url"]!r}')


def check_local_stdio(ctx: CheckContext, kind: str) -> None:
    _check_transport(ctx, kind, "local")


def check_remote_http(ctx: CheckContext, kind: str) -> None:
    _check_transport(ctx, kind, "remote")


# --- generated: every arrangement of up to four servers, against the simulator's placement table ---------

TRANSPORT_NAMES = {"stdio": "stdio", "http": "streamable-http"}
"""The simulator's transport keys as this exercise names them."""


def simulator_transport(runs: str) -> str:
    """The transport the simulator's topology places a server of ``runs`` on (``DEFAULT_LOCATION``
    read backwards: local → stdio, remote → HTTP; in-process memory is no server description here)."""
    return next(TRANSPORT_NAMES[t] for t, where in DEFAULT_LOCATION.items() if where == runs and t in TRANSPORT_NAMES)


def arrangements() -> list[tuple[str, ...]]:
    """Every sequence of local/remote servers of length 0 to 4 (31 of them), the empty one first."""
    return [shape for n in range(5) for shape in itertools.product(("local", "remote"), repeat=n)]


def _servers_of(rng: Any, shape: tuple[str, ...]) -> list[dict[str, Any]]:
    names = rng.sample(_SERVER_WORDS, len(shape))
    out: list[dict[str, Any]] = []
    for i, (name, runs) in enumerate(zip(names, shape, strict=True)):
        if runs == "local":  # a one-word command, and commands with short and long options and a number
            command = [[f"{name}-mcp"], ["python", "-m", f"{name}_server"], ["npx", "-y", f"@acme/{name}"],
                       ["uvx", f"{name}-mcp", "--port", str(9000 + i)]][i]
            out.append({"name": f"{name}-{i}", "runs": "local", "command": command})
        else:  # a URL with a port, a query, or none
            url = [f"https://{name}.example.com/mcp", f"http://127.0.0.1:{8000 + i}/mcp",
                   f"https://api.example.com/{name}/mcp?tenant=t{i}"][i % 3]
            out.append({"name": f"{name}-{i}", "runs": "remote", "url": url})
    return out


def _oracle(case: tuple[str, list[dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    out = {}
    for s in case[1]:
        transport = simulator_transport(s["runs"])
        where = {"command": s["command"]} if transport == "stdio" else {"url": s["url"]}
        out[s["name"]] = {"transport": transport, **where}
    return out


def _learner(ctx: CheckContext, case: tuple[str, list[dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    host, servers = case
    if not servers:  # no server: the topology is the host and no client
        topo = _topology(ctx, host, servers)
        if topo["clients"]:
            raise CheckFailed(f"With no server the host needs no client; your topology has {len(topo['clients'])}.",
                              RULE_ONE_CLIENT)
        return {}
    clients = _clients_by_server(ctx, host, servers)
    return {name: {k: c.get(k) for k in ("transport", "command" if c.get("transport") == "stdio" else "url")}
            for name, c in clients.items()}


def _compare(case: tuple[str, list[dict[str, Any]]], got: dict[str, Any], want: dict[str, Any]) -> Mismatch | None:
    for s in case[1]:
        mine, theirs = got[s["name"]], want[s["name"]]
        if same_json(mine, theirs):
            continue
        rule = RULE_STDIO if s["runs"] == "local" else RULE_HTTP
        return Mismatch(f"The client for {s['name']} ({s['runs']}) is {show(mine)}.", rule, expected=show(theirs))
    return None


def check_generated(ctx: CheckContext, kind: str) -> None:
    host = ctx.rng.choice(_HOSTS)
    cases = [(host, _servers_of(ctx.rng, shape)) for shape in arrangements()]
    exhaustive(ctx, cases, learner=lambda c: _learner(ctx, c), oracle=_oracle, compare=_compare,
               describe=lambda c: f"host {c[0]!r}, servers {show(c[1], 600)}")


EXERCISE = Exercise(
    id="ex01_topology",
    title="Host, clients, servers: build the topology",
    chapter="01",
    summary="Turn a description of servers into the host → clients → servers map.",
    rules=(RULE_ONE_CLIENT, RULE_STDIO, RULE_HTTP),
    functions=("build_topology",),
    checks=(
        Check("One client per server, owned by the host", RULE_ONE_CLIENT, check_one_client_per_server,
              tuple(SHAPES), hint="Compare the number of clients with the number of servers, and the ids with "
                                  "each other."),
        Check("Local servers are reached over stdio", RULE_STDIO, check_local_stdio,
              ("one local", "several local", "mixed", "six mixed"),
              hint="Look at what a local server description carries that a remote one does not."),
        Check("Remote servers are reached over Streamable HTTP", RULE_HTTP, check_remote_http,
              ("one remote", "several remote", "mixed", "six mixed"),
              hint="Look at what a remote server description carries that a local one does not."),
        Check("Every arrangement of up to four servers: the simulator's topology", RULE_ONE_CLIENT, check_generated,
              ("no server to four, every mix",), seeds=1,
              hint="One client per server — none when there is none — and the transport follows where each runs."),
    ),
    hints=(
        Hint("In MCP the host never talks to a server directly: it owns clients, and each client talks to one "
             "server. So the number of clients equals the number of servers.", RULE_ONE_CLIENT),
        Hint("How a client reaches its server depends on where the server runs: a local one is started as a "
             "subprocess (stdio), a remote one is reached at a URL (Streamable HTTP).", RULE_STDIO),
        Hint("Compare each client with its server: the client's transport follows the server's \"runs\", and "
             "the client carries whichever of \"command\" or \"url\" its server has. Every client's id differs "
             "from the others'.", RULE_HTTP),
    ),
    forbidden=("mcp_sim.roles", "mcp_sim.trace", "mcp_sim.scenarios"),
)
