"""The grader's handle on the learner's process (course exercises).

:class:`LearnerProcess` starts :mod:`mcp_sim.grading.sandbox` as a separate Python program, loads the
learner's file there and calls its functions by name: arguments go in as JSON data, results come back
as JSON data. The checks, the verdict and the progress record stay in *this* process, which the
learner's code never touches — so importing the reference, patching a check or writing a fake "all
passed" can only change what the learner's own functions return.

Whatever the learner's code does becomes a message the learner can act on, with a status taken from
a field (never from the wording of a message):

* it **raises** (``KeyboardInterrupt`` and ``SystemExit`` included) — :class:`LearnerError` with the
  traceback lines from the learner's own file only;
* it **never returns** — the learner's process interrupts it and names the line that was running;
  if the code swallows even that, this side kills the process after a hard limit (status
  ``timeout``);
* it **ends the process** (``os._exit``, a crash) — said as such, and the next call starts a fresh
  process;
* it **prints** — captured per call, shown beside the result; it **leaves a thread running** or
  **writes files** (only possible in its scratch folder) — reported as notes, not as failures.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import mcp_sim.grading.isolation as sandboxing
from mcp_sim.grading.model import CheckFailed, Exercise
from mcp_sim.grading.sandbox import Unreadable, decode, encode

GRACE: Final = 2.0
"""Seconds past a call's own time limit before this side gives up on the learner's process."""
SANDBOX_FILE: Final = Path(__file__).resolve().with_name("sandbox.py")
HIDDEN_MODULES: Final = ("exercises", "solutions", "mcp_sim.grading")
"""What the learner's imports may never reach: the reference solutions and the grader."""


class LearnerError(Exception):
    """The learner's function did not return normally. ``status`` is ``"error"`` or ``"timeout"``;
    ``types`` are the exception's class names (most specific first), ``description`` the message
    for the learner."""

    def __init__(self, status: str, description: str, types: Sequence[str] = (), message: str = "") -> None:
        super().__init__(description)
        self.status = status
        self.description = description
        self.types = tuple(types)
        self.message = message

    def is_a(self, name: str) -> bool:
        """Whether the learner raised ``name`` or a subclass of it."""
        return name in self.types


class LoadFailed(Exception):
    """The learner's file could not be loaded (``status`` says how)."""

    def __init__(self, status: str, message: str, output: str = "") -> None:
        super().__init__(message)
        self.status, self.message, self.output = status, message, output


class _Gone(Exception):
    """The learner's process ended or stopped answering."""


@dataclass
class LearnerProcess:
    """One learner process for ``path`` (see the module docstring). Use it as a context manager; a
    process that ended is replaced by a fresh one at the next call."""

    exercise: Exercise
    path: Path
    display: str
    case_time_limit: float = 2.0
    hidden_paths: tuple[Path, ...] = ()
    isolation: sandboxing.Isolation = "process"
    """``"process"``: a separate process with the learner-side guard (self-study); ``"os"``: that process
    inside an operating-system sandbox that holds only the learner's files (see
    :mod:`mcp_sim.grading.isolation`)."""
    printed: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    load_output: str = ""
    stray: str = ""
    """Output written around ``sys.stdout`` (``os.write(1, ...)``, C code), gathered when the process ends."""
    _proc: subprocess.Popen[bytes] | None = None
    _fd: int = -1
    _buffer: bytes = b""
    _root: Path | None = None
    _observed: list[dict[str, Any]] = field(default_factory=list)
    _written: set[str] = field(default_factory=set)
    _sibling: LearnerProcess | None = None

    # --- life cycle ------------------------------------------------------------------------------
    def __enter__(self) -> LearnerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        """Start the process and load the learner's file; :class:`LoadFailed` says why it could not."""
        if self._root is None:
            self._root = Path(tempfile.mkdtemp(prefix="mcp-sim-grade-"))
        scratch = self._root / "scratch"
        scratch.mkdir(exist_ok=True)
        reply_r, reply_w = os.pipe()
        hidden = [*self.hidden_paths, SANDBOX_FILE.parent]
        config = {"file": str(self.path.resolve()), "display": self.display, "module_name": "learner",
                  "forbidden": list(self.exercise.forbidden), "hidden_modules": list(HIDDEN_MODULES),
                  "hidden_paths": [str(p) for p in hidden], "scratch": str(scratch), "reply_fd": reply_w,
                  "case_time_limit": self.case_time_limit, "observe": list(self.exercise.observe)}
        argv = [sys.executable, "-I", str(SANDBOX_FILE)]
        if self.isolation == "os":
            argv = sandboxing.command(sandboxing.check_available(), program=argv[1:],
                                      learner_dir=self.path.resolve().parent, writable=[scratch],
                                      forbidden=self.exercise.forbidden, needs=self.exercise.needs)
        output = (self._root / "output.txt").open("ab")
        try:
            self._proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=output, stderr=subprocess.STDOUT,
                                          pass_fds=(reply_w,), cwd=scratch, preexec_fn=sandboxing.preexec(self.isolation))
        finally:
            os.close(reply_w)
            output.close()
        self._fd, self._buffer = reply_r, b""
        self._send(config)
        try:
            reply = self._receive(max(self.case_time_limit, 5.0) + GRACE)
        except _Gone as gone:
            why = str(gone.args[0])
            if why == "ended":
                why = f"exit {self._exit_code()}"
            self._stop()
            raise LoadFailed("timeout" if why == "time" else "error",
                             _gone_message(why, "loading your file", max(self.case_time_limit, 5.0) + GRACE)) from None
        if reply.get("op") != "loaded":
            self._stop()
            raise LoadFailed(str(reply.get("status", "error")), str(reply.get("message", "")),
                             str(reply.get("output", "")))
        self.load_output = str(reply.get("output", ""))

    def close(self) -> None:
        """Ask the process what it left behind (threads, files), stop it and remove its folder."""
        if self._sibling is not None:
            self._sibling.close()
            self.notes.extend(n for n in self._sibling.notes if n not in self.notes)
            self._sibling = None
        if self._proc is not None and self._proc.poll() is None:
            try:
                self._send({"op": "finish"})
                reply = self._receive(GRACE)
                threads = [str(t) for t in reply.get("threads", [])]
                if threads:
                    self.notes.append(f"Your code left {len(threads)} thread(s) running after returning "
                                      f"({', '.join(threads)}). Grading stopped them; a function that starts a "
                                      f"thread should join it (or make it a daemon) before returning.")
            except _Gone:
                pass
        self._stop()
        if self._root is not None:
            self._collect_files()
            stray = _clean((self._root / "output.txt").read_text("utf-8", "replace")
                           if (self._root / "output.txt").exists() else "", self._root)
            if stray.strip():
                self.stray += stray + "\n"
            shutil.rmtree(self._root, ignore_errors=True)
            self._root = None
        if self._written:
            self.notes.append(f"Your code wrote {', '.join(sorted(self._written))}. Grading runs your code in a "
                              f"scratch folder that is deleted afterwards, so no file was kept; the functions in "
                              f"this exercise return their answers instead.")
            self._written.clear()

    def _collect_files(self) -> None:
        if self._root is None:
            return
        scratch = self._root / "scratch"
        for p in scratch.rglob("*") if scratch.is_dir() else ():
            if p.is_file():
                self._written.add(p.relative_to(scratch).as_posix())

    def _stop(self) -> None:
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.kill()
            self._proc.wait()
            if self._proc.stdin is not None:
                with contextlib.suppress(OSError):
                    self._proc.stdin.close()
            self._proc = None
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    @contextlib.contextmanager
    def fresh(self) -> Iterator[LearnerProcess]:
        """Another process for the same file, sharing nothing with this one but the file (another hash
        seed, no module state). It is started once per grade and closed with this one."""
        if self._sibling is None or self._sibling._proc is None:
            other = LearnerProcess(self.exercise, self.path, self.display, self.case_time_limit, self.hidden_paths,
                                   self.isolation)
            try:
                other.start()
            except LoadFailed as exc:
                other.close()
                raise CheckFailed(f"A second process could not load your file: {exc.message}") from None
            self._sibling = other
        sibling = self._sibling
        start = len(sibling.printed)
        try:
            yield sibling
        finally:
            self.printed.extend(sibling.printed[start:])

    # --- the pipe --------------------------------------------------------------------------------
    def _send(self, message: dict[str, Any]) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        try:
            self._proc.stdin.write((json.dumps(message) + "\n").encode("utf-8"))
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise _Gone("ended") from None

    def _receive(self, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _Gone("time")
            ready, _, _ = select.select([self._fd], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(self._fd, 1 << 16)
            if not chunk:
                raise _Gone("ended")
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        if not isinstance(message, dict):
            raise _Gone("garbled")
        return message

    def _exit_code(self) -> int | None:
        if self._proc is None:
            return None
        with contextlib.suppress(subprocess.TimeoutExpired):
            return self._proc.wait(timeout=GRACE)
        return None

    # --- calls -----------------------------------------------------------------------------------
    def observed(self) -> list[dict[str, Any]]:
        return list(self._observed)

    def call(self, name: str, args: Sequence[Any], *, return_args: bool = False) -> Any:
        """Run the learner's ``name(*args)`` and return its (decoded) result — with ``return_args``, the
        pair (result, the arguments as they were after the call).

        Raises :class:`CheckFailed` when the function is missing or returns something that is not
        data, or when a grader function it called found the answer wrong; :class:`LearnerError` when
        the learner's code raised, ran out of time or ended its process."""
        if self._proc is None or self._proc.poll() is not None:
            self._stop()
            try:
                self.start()
            except LoadFailed as exc:
                raise LearnerError(exc.status, exc.message) from None
        callables: list[Any] = []
        self._send({"op": "call", "fn": name, "args": encode(list(args), callables), "return_args": return_args})
        pending: CheckFailed | None = None
        while True:
            try:
                reply = self._receive(self.case_time_limit + GRACE)
            except _Gone as gone:
                why = str(gone.args[0])
                if why == "time":
                    self._stop()
                else:
                    why = f"exit {self._exit_code()}" if why == "ended" else why
                    self._stop()
                self._collect_files()
                raise LearnerError("timeout" if why == "time" else "error",
                                   _gone_message(why, f"{name}()", self.case_time_limit + GRACE)) from None
            op = reply.get("op")
            if op == "callback":
                if pending is not None:
                    self._send({"op": "abort"})
                    continue
                try:
                    value = callables[int(reply["n"])](*decode(reply.get("args", [])))
                    self._send({"op": "return", "value": encode(value, callables)})
                except CheckFailed as exc:
                    pending = exc
                    self._send({"op": "abort"})
                except (Unreadable, LookupError, TypeError, ValueError, AttributeError) as exc:
                    pending = CheckFailed(f"Your code called one of the grader's functions with something it "
                                          f"cannot use ({type(exc).__name__}: {exc}). Pass what the starter's "
                                          f"docstring describes.")
                    self._send({"op": "abort"})
                continue
            if reply.get("output"):
                self.printed.append(str(reply["output"]))
            self._observed = list(reply.get("observed", []))
            if pending is not None:
                raise pending
            if op == "result":
                value = decode(reply.get("value"))
                return (value, decode(reply.get("args_after", []))) if return_args else value
            if op == "raised":
                raise LearnerError(str(reply.get("status", "error")),
                                   str(reply.get("description") or reply.get("message", "")),
                                   [str(t) for t in reply.get("types", [])], str(reply.get("message", "")))
            if op == "missing":
                kind = reply.get("kind")
                if kind == "missing":
                    raise CheckFailed(f"Your file does not define a function named {name}(). Keep the name the "
                                      f"starter file uses: the grader calls it by that name.")
                raise CheckFailed(f"{name} in your file is a {kind}, not a function.")
            if op == "unreadable":
                raise CheckFailed(f"{name}() returned {reply.get('what')}, which is not JSON data. Return what the "
                                  f"starter's docstring describes: dicts, lists, strings, numbers, booleans, None.")
            raise CheckFailed(f"{name}() was stopped by the grader.")


def _gone_message(why: str, what: str, seconds: float = 0.0) -> str:
    if why == "time":
        return (f"Stopped after {seconds:g} s: {what} kept running even after being interrupted, so its process was "
                f"ended. Is there a loop that never ends inside a `try` that catches every exception (a bare "
                f"`except:` or `except BaseException:`)?")
    if why == "garbled":
        return (f"While {what} was running, something other than the grader's messages reached the grader's "
                f"channel. Does your code write to file descriptors it did not open?")
    code = why.removeprefix("exit ")
    if code.lstrip("-").isdigit() and int(code) < 0:
        return f"The process running {what} was killed by signal {-int(code)}."
    return (f"Your code ended its process while {what} was running (os._exit({code}) or a crash). The grader "
            f"needs your function to return its answer; the checks and the verdict live in the grader, so "
            f"ending the process cannot skip them.")


def _clean(text: str, root: Path) -> str:
    """Output written around ``sys.stdout``, without lines that name the grader's temporary folder."""
    keep = [line for line in text.splitlines() if str(root) not in line and str(SANDBOX_FILE.parent) not in line]
    return "\n".join(keep)
