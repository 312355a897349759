"""The capstone's real wire: start the learner's server as a process and drive it with the official SDK.

One session (:func:`drive`) starts ``python -I .../launcher.py CONFIG`` (see
:mod:`mcp_sim.grading.launcher`: the learner's file under the grader's hooks, served over stdio) and
connects the official ``mcp`` SDK's ``Client`` to it — ``mode="legacy"`` for the ``initialize``
handshake of 2025-11-25, ``mode="auto"`` for 2026-07-28 (the SDK probes with ``server/discover``).
It runs the steps of a :class:`Plan` (seeded values), keeps what the SDK saw, and afterwards collects
what the process left: the lines it read and wrote (its trace), whatever reached its stdout besides
protocol, its stderr and its exit code.

:func:`run_mcp_sim_check` serves the same file for ``mcp-sim check`` instead, with nothing between
the process's stdout and the wire.

Nothing here decides whether the answers are right (that is :mod:`~mcp_sim.grading.exercises.ex12_capstone`).
The session is bounded by a timeout; the SDK closes the server's stdin, waits, then terminates and
kills it, and :func:`drive` waits for the process in every case, so no process outlives a check.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import mcp_sim.grading.isolation as sandboxing
import mcp_sim.grading.launcher as launcher
from mcp_sim.trace.jsonl import load_jsonl

if TYPE_CHECKING:
    from mcp_sim.bridge.check.findings import CheckReport
    from mcp_sim.trace.events import Trace

LAUNCHER: Final = Path(launcher.__file__)
"""The launcher, run by its path (as ``-m`` it would import the whole grading package first)."""
SESSION_TIMEOUT: Final = 20.0
"""Seconds one real session may take, start to exit, before it is cancelled and the process killed."""
MODES: Final = {"2025-11-25": "legacy", "2026-07-28": "auto"}
"""The SDK's connection mode that reaches each revision."""


@dataclass(frozen=True)
class Plan:
    """What one session does, with the seed's values: who calls, the book, the calls' arguments."""

    caller: str
    expenses: list[dict[str, Any]]
    mine: str
    """An expense id the caller owns."""
    theirs: str
    """An expense id another caller owns."""
    new_description: str
    new_cents: int
    bad_cents: int
    month: str
    blank: str = " "
    """A description with nothing but white space in it."""


@dataclass
class WireRun:
    """What the SDK saw (``seen``, by step) and what the process left behind."""

    revision: str
    protocol_version: str | None = None
    seen: dict[str, Any] = field(default_factory=dict)
    frames: list[dict[str, Any]] = field(default_factory=list)
    """Every JSON-RPC message the server read or wrote: ``{"from": "client"|"server", "message": ...}``."""
    stray_stdout: str = ""
    stderr: str = ""
    failure: str = ""
    """Why the session could not be completed (empty when it was)."""


def _outcome(result: Any) -> dict[str, Any]:
    """A CallToolResult as plain data: its text and whether it is an error."""
    texts = [str(getattr(b, "text", "")) for b in result.content]
    return {"is_error": bool(result.is_error), "text": "\n".join(texts)}


ANSWERED_CODES: Final = frozenset({-32700, -32600, -32601, -32602, -32603, -32002})
"""JSON-RPC errors the server itself sent. Any other code (the SDK's -32000 "connection closed", its
request timeout) means the session broke off."""
REQUEST_TIMEOUT: Final = 5.0
"""Seconds the SDK waits for one answer."""


class BrokeOff(Exception):
    """The session cannot go on: the server's process ended, or stopped answering."""


async def _step(seen: dict[str, Any], name: str, coro: Any, keep: Callable[[Any], Any]) -> None:
    """Await one SDK call and keep ``keep(answer)`` — plain data — under ``name``; a JSON-RPC error the
    server sent is kept as ``{"error": {"code", "message"}}``. A session that broke off raises
    :class:`BrokeOff` naming the step."""
    from mcp import MCPError

    try:
        value = await coro
    except MCPError as exc:
        if exc.code not in ANSWERED_CODES:
            raise BrokeOff(f"during {name} the SDK reported {exc.code} {exc.message!r}") from None
        seen[name] = {"error": {"code": exc.code, "message": exc.message}}
        return
    seen[name] = keep(value)


def _dumps(items: Any) -> list[dict[str, Any]]:
    return [item.model_dump(by_alias=True, exclude_none=True) for item in items]


def _texts(contents: Any) -> list[str]:
    return [str(getattr(c, "text", "")) for c in contents]


async def _script(client: Any, plan: Plan, seen: dict[str, Any]) -> None:
    """The session's steps, in order; each answer is kept in ``seen`` under the step's name."""
    await _step(seen, "tools", client.list_tools(), lambda r: _dumps(r.tools))
    await _step(seen, "templates", client.list_resource_templates(),
                lambda r: [t.uri_template for t in r.resource_templates])
    await _step(seen, "prompts", client.list_prompts(), lambda r: _dumps(r.prompts))

    async def call(name: str, tool: str, **arguments: Any) -> None:
        await _step(seen, name, client.call_tool(tool, arguments), _outcome)

    async def read(name: str, expense_id: str) -> None:
        await _step(seen, name, client.read_resource(f"expenses://{expense_id}"), lambda r: _texts(r.contents))

    await call("list_before", "list_expenses")
    await call("add", "add_expense", description=plan.new_description, cents=plan.new_cents)
    await call("add_one_cent", "add_expense", description=plan.new_description + " (small)", cents=1)
    await call("list_after", "list_expenses")
    await call("add_blank", "add_expense", description=plan.blank, cents=plan.new_cents)
    await call("add_negative", "add_expense", description=plan.new_description, cents=plan.bad_cents)
    await call("add_zero", "add_expense", description=plan.new_description, cents=0)
    await call("add_wrong_type", "add_expense", description=plan.new_description, cents=str(plan.new_cents))
    await call("delete_theirs", "delete_expense", expense_id=plan.theirs)
    await read("read_mine", plan.mine)
    await read("read_theirs", plan.theirs)
    await call("delete_mine", "delete_expense", expense_id=plan.mine)
    await call("list_end", "list_expenses")
    await call("unknown_tool", "no_such_tool")
    await _step(seen, "prompt", client.get_prompt("monthly_report", {"month": plan.month}),
                lambda r: _texts(m.content for m in r.messages))


def server_command(config: dict[str, Any], plan: Plan, root: Path, *,
                   capture_stdout: bool) -> tuple[list[str], dict[str, Path]]:
    """The command that serves the learner's server over stdio, its configuration written under ``root``
    (a scratch folder, the trace, and with ``capture_stdout`` a file that catches whatever reaches
    stdout besides protocol). Without ``capture_stdout`` the process's stdout is the wire itself, as a
    plain stdio server's is: what ``mcp-sim check`` reads."""
    scratch = root / "scratch"
    scratch.mkdir(exist_ok=True)
    files = {"trace": scratch / "trace.jsonl"}
    if capture_stdout:
        files["stdout_capture"] = root / "stdout.txt"
    settings = {**config, "scratch": str(scratch), "caller": plan.caller, "expenses": plan.expenses,
                **{k: str(v) for k, v in files.items()}}
    (root / "config.json").write_text(json.dumps(settings), encoding="utf-8")
    argv = [sys.executable, "-I", str(LAUNCHER), str(root / "config.json")]
    if config.get("isolation") == "os":  # the learner's server inside the sandbox too
        argv = sandboxing.with_limits(sandboxing.command(
            sandboxing.check_available(), program=argv[1:], learner_dir=Path(config["file"]).parent,
            writable=[scratch, root], forbidden=config["forbidden"], needs=config.get("needs", ())))
    return argv, files


CHECK_NEMESIS: Final = ("delay", "duplicate", "reuse", "malformed", "oversized")
"""The nemesis of the capstone's ``mcp-sim check``: the actions that act inside a session. ``hangup`` and
``restart`` each start another process and try the launcher's process life, not the learner's code
(the SDK's sessions already end the spec's way, by closing stdin)."""
CHECK_TIMEOUT: Final = 60.0
"""Seconds the whole ``mcp-sim check`` (both eras) may take before it is cancelled."""


def run_mcp_sim_check(config: dict[str, Any], plan: Plan, seed: int, *,
                      timeout: float = CHECK_TIMEOUT) -> tuple[CheckReport, Trace]:
    """``mcp-sim check`` of the learner's server in both eras under :data:`CHECK_NEMESIS`, seeded with
    ``seed``: its report and trace. The server's stdout is the wire (nothing captures a stray line)."""
    from mcp_sim.bridge.check import CheckOptions, run_check
    from mcp_sim.bridge.notebook import run_sync

    with tempfile.TemporaryDirectory(prefix="mcp-sim-capstone-check-") as tmp:
        argv, _files = server_command(config, plan, Path(tmp), capture_stdout=False)
        options = CheckOptions(eras=("legacy", "modern"), nemesis=CHECK_NEMESIS, seed=seed)
        report, trace = run_sync(lambda: run_check(argv, options), timeout=timeout)
    return report, trace


def drive(config: dict[str, Any], plan: Plan, revision: str, *, timeout: float = SESSION_TIMEOUT) -> WireRun:
    """One real session with the learner's server in ``revision``'s era (see the module docstring).

    ``config`` holds the learner process's rules (file, display, forbidden imports, hidden paths); the
    caller and the book come from ``plan``. Never raises for the learner's mistakes: a session that
    could not be completed says why in :attr:`WireRun.failure`."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from mcp_sim.bridge.notebook import run_sync

    run = WireRun(revision)
    with tempfile.TemporaryDirectory(prefix="mcp-sim-capstone-") as tmp:
        root = Path(tmp)
        argv, files = server_command(config, plan, root, capture_stdout=True)
        params = StdioServerParameters(command=argv[0], args=argv[1:], cwd=str(root / "scratch"))

        async def session() -> None:
            with (root / "stderr.txt").open("w", encoding="utf-8") as errlog:
                async with Client(stdio_client(params, errlog=errlog), mode=MODES[revision],
                                  read_timeout_seconds=REQUEST_TIMEOUT) as client:
                    run.protocol_version = client.protocol_version
                    try:
                        await _script(client, plan, run.seen)
                    except BrokeOff as exc:
                        run.failure = str(exc)

        try:
            run_sync(session, timeout=timeout)
        except TimeoutError:
            run.failure = f"the session did not finish within {timeout:g} s"
        except BaseException as exc:  # the SDK wraps a dead server's end in task groups
            run.failure = _leaf(exc)
        run.stderr = _read(root / "stderr.txt")
        run.stray_stdout = _read(files["stdout_capture"])
        if files["trace"].exists():
            for event in load_jsonl(files["trace"]):
                if event.message is not None:
                    sender = "server" if event.sender.startswith("server/") else "client"
                    run.frames.append({"from": sender, "message": event.message})
    return run


def _leaf(exc: BaseException) -> str:
    """The innermost meaningful exception of a (nested) exception group, as text."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
