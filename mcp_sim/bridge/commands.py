"""``mcp-sim serve`` and ``mcp-sim connect``: the simulator on a real wire (course chapter 12).

``mcp-sim serve SERVER`` runs a simulated server as a real MCP server any client can use — Claude
Desktop, the MCP Inspector, the official SDKs::

    mcp-sim serve weather                              # stdio: the client starts this command
    mcp-sim serve weather --transport http --port 8000 # Streamable HTTP on 127.0.0.1:8000/mcp
    mcp-sim serve my_module:build --revision 2026-07-28
    mcp-sim serve notes --transport http --auth-server builtin --required-scope notes:read

``SERVER`` is a ready-made scenario (``weather``, ``notes``, ``issues``, ``finance``) or
``module:attribute`` naming a ``Server`` or a zero-argument function that returns one. The server
speaks both eras unless ``--revision`` pins one. On stdio, stdout carries protocol messages only:
logs go to stderr, and even a stray ``print`` is diverted there. The process exits with code 0
when its stdin closes.

``mcp-sim connect -- CMD ARG...`` (or ``--url URL``) drives a real server with the simulated client,
prints what it offers and what the calls returned, and saves the real traffic as a trace::

    mcp-sim connect --trace weather.jsonl -- mcp-sim serve weather
    mcp-sim connect --era legacy --call add --args '{"a": 1, "b": 2}' -- python server.py
    mcp-sim connect --url http://127.0.0.1:8000/mcp   # a 401 runs the OAuth flow, then retries
    mcp-sim connect --conformance-scenario tools_call --url URL   # what the official suite runs
    mcp-sim connect --url URL --client-credentials --client-id ID --issuer AS --private-key key.pem  # no user

These functions are the only ones in the bridge that print to stdout, and never while serving stdio.
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import signal
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio

from mcp_sim.bridge.recording import WallClockRecorder
from mcp_sim.protocol.errors import McpError
from mcp_sim.protocol.revisions import REVISIONS
from mcp_sim.trace.recorder import Recorder
from mcp_sim.transports.base import RequestRefused

logger = logging.getLogger("mcp_sim.bridge")

SCENARIO_NAMES = ("weather", "notes", "issues", "finance", "conformance")


class ServerSpecError(ValueError):
    """A ``SERVER`` argument that names nothing servable."""


def load_server(spec: str) -> Any:
    """Resolve ``SERVER``: a scenario name (its module's ``build()``) or ``module:attribute`` (a Server
    or a zero-argument factory). Returns the simulator's ``Server`` object."""
    from mcp_sim.roles.server import Server

    if ":" in spec:
        module_name, _, attr = spec.partition(":")
        try:
            obj: Any = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError) as exc:
            raise ServerSpecError(f"cannot load {spec!r}: {exc}") from exc
    else:
        try:
            module = importlib.import_module(f"mcp_sim.scenarios.{spec}")
        except ImportError as exc:
            raise ServerSpecError(f"{spec!r} is not a ready-made server ({', '.join(SCENARIO_NAMES)}) and not "
                                  f"module:attribute ({exc})") from exc
        obj = getattr(module, "build", None)
        if obj is None:
            raise ServerSpecError(f"mcp_sim.scenarios.{spec} has no build() function")
    if callable(obj) and not isinstance(obj, Server):
        obj = obj()
    if not isinstance(obj, Server):
        server = getattr(obj, "server", None)
        if isinstance(server, Server):
            obj = server
    if not isinstance(obj, Server):
        raise ServerSpecError(f"{spec!r} gave {type(obj).__name__}, not an mcp_sim Server")
    return obj


def _setup_logging(level: str) -> None:
    logging.basicConfig(stream=sys.stderr, level=getattr(logging, level.upper(), logging.INFO),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")


def _save_trace(recorder: Recorder, path: str | None) -> None:
    if not path:
        return
    from mcp_sim.trace.jsonl import dumps_jsonl

    with open(path, "w", encoding="utf-8", newline="\n") as out:
        out.write(dumps_jsonl(recorder.events))


# --- serve ---------------------------------------------------------------------------------------------

def serve_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mcp-sim serve", description="Serve a simulated MCP server on a real "
                                     "wire (stdio or Streamable HTTP on 127.0.0.1).")
    parser.add_argument("server", help=f"a ready-made server ({', '.join(SCENARIO_NAMES)}) or module:attribute")
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    parser.add_argument("--host", default="127.0.0.1", help="loopback address to bind (HTTP only)")
    parser.add_argument("--port", type=int, default=8000, help="TCP port (HTTP only; 0 = any free port)")
    parser.add_argument("--path", default="/mcp", help="the MCP endpoint's path (HTTP only)")
    parser.add_argument("--revision", choices=sorted(REVISIONS), help="speak only this revision "
                        "(default: both eras, 2025-06-18/2025-11-25 via initialize and 2026-07-28)")
    parser.add_argument("--allow-origin", action="append", default=[], metavar="ORIGIN",
                        help="a browser Origin to accept besides loopback ones (HTTP only)")
    parser.add_argument("--bearer-token", action="append", default=[], metavar="TOKEN",
                        help="require Authorization: Bearer TOKEN on every request (HTTP only; repeatable)")
    parser.add_argument("--auth-server", choices=("builtin",), help="require OAuth tokens from a built-in "
                        "authorization server on the same loopback origin, which signs in a local user who "
                        "consents to everything (HTTP only; for learning, it protects nothing)")
    parser.add_argument("--required-scope", action="append", default=[], metavar="SCOPE",
                        help="a scope every request needs, with --auth-server (repeatable)")
    parser.add_argument("--trace", metavar="FILE.jsonl", help="save the traffic as a JSON Lines trace on exit")
    parser.add_argument("--log-level", default="warning", help="stderr log level (default: warning)")
    return parser


def serve_command(argv: Sequence[str]) -> int:
    """``mcp-sim serve``: returns the exit code (0 when the client closed stdin or on Ctrl-C)."""
    args = serve_parser().parse_args(list(argv))
    _setup_logging(args.log_level)
    try:
        server = load_server(args.server)
    except ServerSpecError as exc:
        sys.stderr.write(f"mcp-sim serve: {exc}\n")
        return 2
    if args.revision is not None:
        server.supported_versions = (args.revision,)
    recorder = WallClockRecorder()
    try:
        if args.transport == "stdio":
            return _serve_stdio(server, recorder, args.trace)
        return _serve_http(server, recorder, args)
    except KeyboardInterrupt:
        _save_trace(recorder, args.trace)
        return 0


def _serve_stdio(server: Any, recorder: Recorder, trace: str | None) -> int:
    from mcp_sim.bridge.stdio import StdioServerStream, claim_stdout
    from mcp_sim.roles.server_session import serve
    from mcp_sim.transports.base import LinkInfo

    info = LinkInfo(name=server.name, transport="stdio", client=f"client/{server.name}",
                    server=f"server/{server.name}")
    logger.info("serving %s over stdio (versions %s)", server.name, ", ".join(server.supported_versions))
    with claim_stdout() as wire:
        stream = StdioServerStream(info, recorder=recorder, stdin=sys.stdin.buffer, stdout=wire)

        async def main() -> None:
            await serve(server, stream)

        try:
            anyio.run(main)
        finally:
            _save_trace(recorder, trace)
    logger.info("stdin closed: %s shuts down", server.name)
    return 0


def _token_table(tokens: Sequence[str]) -> Any:
    """A validator accepting exactly ``tokens`` (each its own caller), or ``None`` when none are given."""
    if not tokens:
        return None
    from mcp_sim.security.identity import AuthInfo
    from mcp_sim.transports.http_server import static_tokens

    return static_tokens({token: AuthInfo(f"token-{n}", token=token) for n, token in enumerate(tokens, 1)})


def _serve_http(server: Any, recorder: Recorder, args: argparse.Namespace) -> int:
    from mcp_sim.bridge.http_server import check_loopback, serve_http

    try:
        check_loopback(args.host)
    except ValueError as exc:
        sys.stderr.write(f"mcp-sim serve: {exc}\n")
        return 2

    if args.auth_server and args.bearer_token:
        sys.stderr.write("mcp-sim serve: --auth-server and --bearer-token exclude each other\n")
        return 2
    setup: Any = None
    made: list[Any] = []
    if args.auth_server == "builtin":
        from mcp_sim.bridge.http_auth import builtin_authorization

        setup, made = builtin_authorization(recorder, tuple(args.required_scope))
    serving = False

    def stop(_signum: int, _frame: Any) -> None:
        # SIGTERM, like Ctrl-C, is a normal way to stop a server (exit code 0). While it serves,
        # uvicorn handles the signal itself and re-raises it once shut down: nothing left to do then.
        if not serving:
            raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)

    async def main() -> None:
        async with serve_http(server, host=args.host, port=args.port, path=args.path, recorder=recorder,
                              revision=args.revision, allowed_origins=tuple(args.allow_origin),
                              token_validator=_token_table(args.bearer_token), setup=setup) as handle:
            # Not the protocol (that is on the socket): tell the user, and a test, where to connect.
            nonlocal serving
            serving = True
            sys.stdout.write(f"mcp-sim: serving {server.name} on {handle.url}\n")
            if made:
                from mcp_sim.bridge.http_auth import describe

                sys.stdout.write(describe(made[0]) + "\n")
            sys.stdout.flush()
            await handle.stopped.wait()

    try:
        anyio.run(main)
    finally:
        _save_trace(recorder, args.trace)
    return 0


# --- connect -------------------------------------------------------------------------------------------

def connect_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mcp-sim connect", usage="mcp-sim connect [options] (--url URL | -- CMD ARG...)",
        description="Drive a real MCP server with the simulated client: list what it offers, call it, and "
                    "save the real traffic as a trace.")
    parser.add_argument("--url", help="a Streamable HTTP endpoint instead of a command")
    parser.add_argument("--era", choices=("auto", "legacy", "modern"), default="auto")
    parser.add_argument("--trace", metavar="FILE.jsonl", help="save the real traffic as a JSON Lines trace")
    parser.add_argument("--call", action="append", default=[], metavar="TOOL", help="call a tool (repeatable)")
    parser.add_argument("--args", action="append", default=[], metavar="JSON",
                        help="arguments of the matching --call (a JSON object)")
    parser.add_argument("--read", action="append", default=[], metavar="URI", help="read a resource")
    parser.add_argument("--prompt", action="append", default=[], metavar="NAME", help="get a prompt")
    parser.add_argument("--prompt-args", action="append", default=[], metavar="JSON",
                        help="arguments of the matching --prompt")
    parser.add_argument("--elicit", metavar="JSON", help="the content to accept elicitations with "
                        "(default: honest placeholders; a form they cannot fill validly is declined)")
    parser.add_argument("--bearer-token", metavar="TOKEN", help="send Authorization: Bearer TOKEN (HTTP only)")
    auth = parser.add_argument_group("authorization (HTTP only: what to do when the server answers 401)")
    auth.add_argument("--no-auth", action="store_true", help="do not run the OAuth flow: a 401 is an error")
    auth.add_argument("--client-id", metavar="ID", help="a client_id registered in advance at --issuer "
                      "(default: the client's metadata document, else dynamic registration)")
    auth.add_argument("--client-secret", metavar="SECRET", help="the secret of --client-id (a confidential client)")
    auth.add_argument("--issuer", metavar="URL", help="the authorization server --client-id belongs to")
    auth.add_argument("--client-metadata-url", metavar="URL",
                      help="the https URL of this client's Client ID Metadata Document, used as its client_id")
    auth.add_argument("--redirect-uri", default=None, metavar="URL",
                      help="the loopback URL the browser returns to (default http://127.0.0.1:33418/callback)")
    auth.add_argument("--no-browser", action="store_true", help="fail instead of waiting for a browser when the "
                      "authorization server does not redirect straight back")
    auth.add_argument("--client-credentials", action="store_true",
                      help="no user: take tokens with the client_credentials grant where --issuer offers it (with "
                           "--client-id, --issuer and --client-secret or --private-key)")
    auth.add_argument("--private-key", metavar="FILE.pem", help="sign RFC 7523 client assertions with this key "
                      "(private_key_jwt) instead of sending --client-secret")
    auth.add_argument("--signing-alg", default="ES256", metavar="ALG", help="the --private-key's JWS algorithm "
                      "(default ES256)")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per request")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument("--log-level", default="warning")
    parser.add_argument("--conformance-scenario", metavar="NAME",
                        help="act as the official conformance suite's client scenario NAME expects (with --url; "
                             "the revision comes from MCP_CONFORMANCE_PROTOCOL_VERSION)")
    return parser


def _leaves(group: BaseExceptionGroup[Any]) -> list[BaseException]:
    """The exceptions inside a (nested) exception group."""
    out: list[BaseException] = []
    for exc in group.exceptions:
        out.extend(_leaves(exc) if isinstance(exc, BaseExceptionGroup) else [exc])
    return out


def _json_arg(text: str | None, what: str) -> dict[str, Any]:
    if not text:
        return {}
    value = json.loads(text)
    if not isinstance(value, dict):
        raise ValueError(f"{what} must be a JSON object, got {text!r}")
    return value


def _first_line(text: Any) -> str:
    return text.strip().splitlines()[0] if isinstance(text, str) and text.strip() else ""


def _content_text(result: dict[str, Any]) -> str:
    parts = []
    for block in result.get("content") or result.get("contents") or result.get("messages") or []:
        if isinstance(block, dict):
            nested = block.get("content")
            inner: dict[str, Any] = nested if isinstance(nested, dict) else block
            parts.append(str(inner.get("text", inner.get("uri", inner.get("type", "")))))
    return " | ".join(parts)


@asynccontextmanager
async def _authorization(target: Sequence[str] | str, args: argparse.Namespace, recorder: Recorder,
                         summary: dict[str, Any]) -> AsyncIterator[Any]:
    """The OAuth client for ``--url`` (``None`` for a command, or with ``--no-auth``); what its flow
    did goes into ``summary["authorization"]``."""
    if not isinstance(target, str) or getattr(args, "no_auth", False):
        yield None
        return
    from mcp_sim.bridge.oauth_http import DEFAULT_REDIRECT, open_oauth

    client_id, issuer = getattr(args, "client_id", None), getattr(args, "issuer", None)
    if client_id and not issuer:
        raise ValueError("--client-id needs --issuer (a client_id belongs to one authorization server)")
    secret = getattr(args, "client_secret", None)
    machine = _machine_credentials(args) if getattr(args, "client_credentials", False) else None
    async with open_oauth(target, recorder=recorder, redirect_uri=getattr(args, "redirect_uri", None) or DEFAULT_REDIRECT,
                          preregistered={issuer: client_id} if client_id and issuer else None,
                          client_secrets={client_id: secret} if client_id and secret else None,
                          metadata_document=getattr(args, "client_metadata_url", None), machine=machine,
                          interactive=not getattr(args, "no_browser", False), timeout=args.timeout) as oauth:
        summary["authorization"] = oauth.steps
        yield oauth


def _machine_credentials(args: argparse.Namespace) -> Any:
    """``--client-credentials``: the client's own credentials, bound to ``--issuer``."""
    from pathlib import Path

    from mcp_sim.bridge.oauth_http import private_key_jwt
    from mcp_sim.security.oauth_client import MachineCredentials

    client_id, issuer = getattr(args, "client_id", None), getattr(args, "issuer", None)
    secret, key_file = getattr(args, "client_secret", None), getattr(args, "private_key", None)
    if not client_id or not (secret or key_file):
        raise ValueError("--client-credentials needs --client-id, --issuer and --client-secret or --private-key")
    signer = private_key_jwt(client_id, Path(key_file).read_text(), args.signing_alg) if key_file else None
    return MachineCredentials(client_id, client_secret=None if key_file else secret, assertion=signer, issuer=issuer)


async def run_connect(command: Sequence[str] | str, args: argparse.Namespace,
                      recorder: Recorder) -> dict[str, Any]:
    """Connect, list, call; return the summary (what the command prints). Over HTTP, a ``401`` runs
    the OAuth flow (:mod:`mcp_sim.bridge.oauth_http`) and the request is retried with the token."""
    from mcp_sim.bridge.real import accept_elicitation, connect_real

    elicit = _json_arg(args.elicit, "--elicit") if args.elicit else None
    summary: dict[str, Any] = {"calls": []}
    headers = {"Authorization": f"Bearer {args.bearer_token}"} if args.bearer_token else None
    async with _authorization(command, args, recorder, summary) as oauth, \
            connect_real(command, era=args.era, recorder=recorder, timeout=args.timeout,
                         callbacks=accept_elicitation(elicit), headers=headers,
                         authorizer=oauth.on_challenge if oauth is not None else None) as session:
        client = session.client
        caps = client.server_capabilities or {}
        summary.update(server=client.server_info, era=client.era, protocol_version=client.protocol_version,
                       capabilities=caps, instructions=client.instructions)
        summary["tools"] = await client.list_all_tools() if "tools" in caps else []
        summary["resources"] = (await client.list_resources()).get("resources", []) if "resources" in caps else []
        summary["resource_templates"] = (await client.list_resource_templates()).get("resourceTemplates", []) \
            if "resources" in caps else []
        summary["prompts"] = (await client.list_prompts()).get("prompts", []) if "prompts" in caps else []
        for i, tool in enumerate(args.call):
            arguments = _json_arg(args.args[i] if i < len(args.args) else None, "--args")
            try:
                result = await client.call_tool(tool, arguments)
                summary["calls"].append({"tool": tool, "arguments": arguments, "result": result})
            except McpError as exc:
                summary["calls"].append({"tool": tool, "arguments": arguments,
                                         "error": {"code": exc.code, "message": exc.message}})
        for uri in args.read:
            try:
                summary["calls"].append({"read": uri, "result": await client.read_resource(uri)})
            except McpError as exc:
                summary["calls"].append({"read": uri, "error": {"code": exc.code, "message": exc.message}})
        for i, prompt in enumerate(args.prompt):
            arguments = _json_arg(args.prompt_args[i] if i < len(args.prompt_args) else None, "--prompt-args")
            try:
                result = await client.get_prompt(prompt, arguments)
                summary["calls"].append({"prompt": prompt, "arguments": arguments, "result": result})
            except McpError as exc:
                summary["calls"].append({"prompt": prompt, "error": {"code": exc.code, "message": exc.message}})
    return summary


async def _run_conformance(target: Sequence[str] | str, args: argparse.Namespace,
                           recorder: Recorder) -> dict[str, Any]:
    import os

    from mcp_sim.bridge.conformance_client import run_scenario

    if not isinstance(target, str):
        raise ValueError("--conformance-scenario needs --url (the suite's test servers speak HTTP)")
    context = _json_arg(os.environ.get("MCP_CONFORMANCE_CONTEXT"), "MCP_CONFORMANCE_CONTEXT")
    return await run_scenario(args.conformance_scenario, target, recorder=recorder, timeout=args.timeout,
                              version=os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION"), context=context)


def format_summary(summary: dict[str, Any], recorder: Recorder) -> str:
    """The readable report ``mcp-sim connect`` prints."""
    info = summary.get("server") or {}
    lines = [f"server   {info.get('name', '?')} {info.get('version', '')}".rstrip(),
             f"era      {summary.get('era')} (protocol {summary.get('protocol_version')})",
             f"offers   {', '.join(sorted(summary.get('capabilities') or {})) or 'nothing'}"]
    if summary.get("instructions"):
        lines.append(f"note     {_first_line(summary['instructions'])}")
    if summary.get("authorization"):
        lines.append("auth     " + "\n         ".join(summary["authorization"]))
    for title, key, name_key in (("tools", "tools", "name"), ("resources", "resources", "uri"),
                                 ("templates", "resource_templates", "uriTemplate"), ("prompts", "prompts", "name")):
        items = summary.get(key) or []
        lines.append(f"\n{title} ({len(items)})")
        for item in items:
            lines.append(f"  {item.get(name_key, '?'):<28} {_first_line(item.get('description'))}".rstrip())
    if summary["calls"]:
        lines.append("\ncalls")
    for call in summary["calls"]:
        label = (f"tools/call {call['tool']} {json.dumps(call.get('arguments') or {})}" if "tool" in call
                 else f"resources/read {call['read']}" if "read" in call else f"prompts/get {call['prompt']}")
        if "error" in call:
            lines.append(f"  {label}\n    → error {call['error']['code']}: {call['error']['message']}")
        else:
            result = call["result"]
            flag = " (isError)" if result.get("isError") else ""
            lines.append(f"  {label}\n    → {_content_text(result)}{flag}")
    frames = sum(1 for e in recorder.events if e.message is not None)
    lines.append(f"\n{frames} JSON-RPC frames recorded over the real wire")
    return "\n".join(lines)


def connect_command(argv: Sequence[str]) -> int:
    """``mcp-sim connect``: returns 0 on success, 1 if the server could not be driven, 2 on bad usage."""
    from mcp_sim.security.oauth_client import OAuthFailed

    argv = list(argv)
    command: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, command = argv[:cut], argv[cut + 1:]
    parser = connect_parser()
    args = parser.parse_args(argv)
    _setup_logging(args.log_level)
    if bool(command) == bool(args.url):
        parser.print_usage(sys.stderr)
        sys.stderr.write("mcp-sim connect: give either --url URL or -- CMD ARG...\n")
        return 2
    recorder = WallClockRecorder()
    target: Sequence[str] | str = args.url or command
    try:
        if args.conformance_scenario:
            summary = anyio.run(_run_conformance, target, args, recorder)
        else:
            summary = anyio.run(run_connect, target, args, recorder)
    except (McpError, OSError, ValueError, TimeoutError, RequestRefused, OAuthFailed) as exc:
        sys.stderr.write(f"mcp-sim connect: {type(exc).__name__}: {exc}\n")
        _save_trace(recorder, args.trace)
        return 1
    except BaseExceptionGroup as group:
        for leaf in _leaves(group):  # the task groups' wrapping says nothing: name what went wrong
            sys.stderr.write(f"mcp-sim connect: {type(leaf).__name__}: {leaf}\n")
        _save_trace(recorder, args.trace)
        return 1
    _save_trace(recorder, args.trace)
    if args.json or args.conformance_scenario:
        sys.stdout.write(json.dumps(summary, indent=2, ensure_ascii=False, default=str) + "\n")
    else:
        sys.stdout.write(format_summary(summary, recorder) + "\n")
        if args.trace:
            sys.stdout.write(f"trace saved to {args.trace}\n")
    return 0
