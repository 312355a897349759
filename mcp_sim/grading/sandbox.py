"""The learner's process: loads the learner's file and answers calls, nothing else (course exercises).

The grader (:mod:`mcp_sim.grading.learner_code`) starts this file as its own Python program
(``python -I sandbox.py``), so the learner's code never shares a process with the checks, the verdict
or the progress record. The two sides speak JSON lines over two pipes:

* the grader sends ``{"op": "call", "fn": ..., "args": [...]}``; this side runs the learner's function
  and answers ``{"op": "result", "value": ...}`` or ``{"op": "raised", "status": ..., ...}``;
* a function the grader passes in (``send``, ``new_id``, a handler) arrives as a stub: calling it sends
  ``{"op": "callback", ...}`` back and waits for ``{"op": "return", ...}``.

Only data crosses: arguments in, JSON-able results out. Nothing here decides whether an answer is
right, so patching anything in this process changes nothing but the learner's own answers.

The rules of the exercise are enforced here, **when they are broken**, not by reading source text:

* an import hook refuses the modules the exercise forbids (they contain the answer), the reference
  solutions and the grader itself, for imports made by the learner's file;
* an audit hook (:func:`sys.addaudithook`, PEP 578) refuses to open the solutions, the grader's files
  and the progress folder, to write, rename or delete anything outside the scratch folder this process
  runs in, and to start other programs.

Standard library only: this file must run before (and without) the rest of the package. It is a
teaching guard that keeps honest mistakes and casual cheats out, not a security sandbox.
"""

from __future__ import annotations

import base64
import builtins
import contextlib
import importlib
import importlib.abc
import importlib.util
import inspect
import io
import json
import linecache
import os
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType, ModuleType, TracebackType
from typing import Any

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_CHANGES = {"os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.chmod", "os.truncate", "os.symlink",
            "os.link", "shutil.rmtree", "shutil.move", "os.chown", "os.utime"}
_PROGRAMS = {"subprocess.Popen", "os.system", "os.fork", "os.forkpty", "pty.spawn"}


class CheckTimeout(BaseException):
    """Raised inside the learner's code when a call's time is up. A ``BaseException`` so that a
    learner's ``except Exception:`` does not swallow it."""


class GraderAbort(BaseException):
    """Raised inside a stub when the grader has already seen the answer is wrong and stops the call."""


class Unreadable(TypeError):
    """A value that is not JSON data (a set, an object of the learner's class...)."""


class OutputBuffer(io.StringIO):
    """Where ``print`` goes during a call. ``close()`` does nothing: a learner closing ``sys.stdout``
    must not take the grader's capture with it."""

    def close(self) -> None:
        pass


# --- data across the pipe ------------------------------------------------------------------------

def encode(value: Any, callables: list[Callable[..., Any]] | None = None) -> Any:
    """``value`` as JSON data: bytes become ``{"$bytes": base64}``, tuples lists, and (grader side
    only) a function becomes ``{"$callable": n}``. Anything else raises :class:`Unreadable`."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, bytes):
        return {"$bytes": base64.b64encode(value).decode("ascii")}
    if isinstance(value, (list, tuple)):
        return [encode(v, callables) for v in value]
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise Unreadable(f"a dict key {k!r} that is not a string")
            out[k] = encode(v, callables)
        return out
    if callables is not None and callable(value):
        callables.append(value)
        return {"$callable": len(callables) - 1}
    raise Unreadable(f"a {type(value).__name__}")


def decode(value: Any, stub: Callable[[int], Callable[..., Any]] | None = None) -> Any:
    """The inverse of :func:`encode`; ``stub(n)`` makes the stand-in for callable number ``n``."""
    if isinstance(value, list):
        return [decode(v, stub) for v in value]
    if isinstance(value, dict):
        if set(value) == {"$bytes"}:
            return base64.b64decode(value["$bytes"])
        if set(value) == {"$callable"} and stub is not None:
            return stub(int(value["$callable"]))
        return {k: decode(v, stub) for k, v in value.items()}
    return value


# --- messages about the learner's code -------------------------------------------------------------

def _same_file(name: str, path: Path) -> bool:
    try:
        return Path(name).resolve() == path
    except OSError:
        return False


def learner_frames(tb: TracebackType | None, path: Path) -> list[traceback.FrameSummary]:
    """The traceback entries that are in the learner's file (``path`` resolved)."""
    return [f for f in traceback.extract_tb(tb) if _same_file(f.filename, path)]


def describe_exception(exc: BaseException, path: Path, display: str) -> str:
    """A message about ``exc`` showing only the learner's own lines, innermost last."""
    if isinstance(exc, SyntaxError) and exc.filename and _same_file(exc.filename, path):
        text = (exc.text or "").rstrip()
        caret = ""
        if text and exc.offset:
            caret = "\n    " + " " * (exc.offset - 1 - (len(text) - len(text.lstrip()))) + "^"
        return (f"Python could not read your file: {exc.msg}\n"
                f'  File "{display}", line {exc.lineno}\n    {text.strip()}{caret}')
    frames = learner_frames(exc.__traceback__, path)
    detail = str(exc)
    if isinstance(exc, NotImplementedError):
        fn = f"{frames[-1].name}()" if frames else "a function"
        head = f"{fn} is not written yet: it still raises NotImplementedError. Replace that line with your code."
    elif isinstance(exc, SystemExit):
        head = (f"Your code called sys.exit({'' if exc.code is None else repr(exc.code)}) (or exit()). The grader "
                f"needs your function to return a value; leave ending the program to whoever runs it.")
    elif isinstance(exc, KeyboardInterrupt):
        head = ("Your code raised KeyboardInterrupt (as if Ctrl-C were pressed). Nothing interrupted it from "
                "outside: remove the raise, or the code that sends SIGINT.")
    else:
        head = f"Your code raised {type(exc).__name__}" + (f": {detail}" if detail else "")
    if not frames:
        return head
    lines = [head, "Traceback (your file only, most recent call last):"]
    for f in frames:
        lines.append(f'  File "{display}", line {f.lineno}, in {f.name}')
        code = (f.line or linecache.getline(str(path), f.lineno or 0)).strip()
        if code:
            lines.append(f"    {code}")
    return "\n".join(lines)


def _running_line(exc: BaseException, path: Path, display: str) -> str:
    frames = learner_frames(exc.__traceback__, path)
    if not frames:
        return ""
    f = frames[-1]
    return f"\nYour code was running line {f.lineno} of {display} (in {f.name}()):\n    {(f.line or '').strip()}"


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Interrupt the block with :class:`CheckTimeout` after ``seconds`` (``SIGALRM`` where available);
    the grader's own hard limit stays the guard for code that swallows the interruption."""
    if not hasattr(signal, "setitimer") or seconds <= 0:
        yield
        return

    def on_alarm(signum: int, frame: FrameType | None) -> None:
        raise CheckTimeout(seconds)

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# --- the rules: imports and files ------------------------------------------------------------------

def _matches(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def _is_module(dotted: str) -> bool:
    """Whether ``dotted`` names a module (else it names something inside one)."""
    try:
        return importlib.util.find_spec(dotted) is not None
    except (ImportError, ValueError):
        return False


class Guard:
    """The exercise's rules for this process (see the module docstring)."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.learner = Path(config["file"]).resolve()
        self.display = str(config["display"])
        self.forbidden = tuple(config.get("forbidden", ()))
        self.hidden_modules = tuple(config.get("hidden_modules", ()))
        self.hidden = tuple(Path(p).resolve() for p in config.get("hidden_paths", ()))
        self.scratch = Path(config["scratch"]).resolve()
        self.attributes = {f for f in self.forbidden if not _is_module(f)}

    # imports --------------------------------------------------------------------------------------
    def refusal(self, name: str, fromlist: tuple[str, ...] = ()) -> str:
        """Why the learner's file may not import ``name`` (``""`` when it may).

        A forbidden *function* (``mcp_sim.wire.jsonrpc.decode``) also forbids taking its module whole
        (``import mcp_sim.wire.jsonrpc``, ``from mcp_sim.wire import jsonrpc``): import the names you
        need from it instead."""
        wanted = [name] + [f"{name}.{n}" for n in fromlist if n != "*"]
        whole = [name] if not fromlist else [f"{name}.{n}" for n in fromlist]
        for full in wanted:
            if any(_matches(full, h) for h in self.hidden_modules):
                return (f"{self.display} imports {full}, which is not available while your code is graded: the "
                        f"grader and the reference solutions stay out of reach of the code being graded.")
            for f in self.forbidden:
                holder = f.rsplit(".", 1)[0] if f in self.attributes else ""
                if _matches(full, f) or (full in whole and full == holder):
                    return (f"{self.display} imports {full}, and this exercise forbids {f}: it already contains "
                            f"the answer you are asked to write. Remove the import and write that part yourself.")
        return ""

    def from_learner(self, globals_: Any) -> bool:
        file = (globals_ or {}).get("__file__") if isinstance(globals_, dict) else None
        return isinstance(file, str) and _same_file(file, self.learner)

    def install(self) -> None:
        real_import = builtins.__import__
        real_import_module = importlib.import_module
        guard = self

        def guarded_import(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (),
                           level: int = 0) -> ModuleType:
            if level == 0 and guard.from_learner(globals):
                why = guard.refusal(name, tuple(fromlist or ()))
                if why:
                    raise ImportError(why, name=name)
            return real_import(name, globals, locals, fromlist, level)

        def guarded_import_module(name: str, package: str | None = None) -> ModuleType:
            frame = inspect.currentframe()
            caller = frame.f_back if frame is not None else None
            if caller is not None and guard.from_learner(caller.f_globals) and not name.startswith("."):
                why = guard.refusal(name)
                if why:
                    raise ImportError(why, name=name)
            return real_import_module(name, package)

        builtins.__import__ = guarded_import
        importlib.import_module = guarded_import_module
        sys.meta_path.insert(0, _HiddenFinder(self.hidden_modules))
        sys.addaudithook(self.audit)

    # files and programs ---------------------------------------------------------------------------
    def _inside(self, path: Any, folder: Path) -> bool:
        if isinstance(path, int):
            return False
        try:
            p = Path(os.fsdecode(path))
            p = (p if p.is_absolute() else Path.cwd() / p).resolve()
        except (OSError, TypeError, ValueError):
            return False
        return p == folder or folder in p.parents

    def audit(self, event: str, args: tuple[Any, ...]) -> None:
        if event == "open" and args and args[0] is not None:
            path = args[0]
            for hidden in self.hidden:
                if self._inside(path, hidden):
                    raise PermissionError(f"{self.display} may not open {os.fsdecode(path) if not isinstance(path, int) else path}"
                                          f" while it is graded: the reference solutions, the grader and the "
                                          f"progress record are out of reach of the code being graded.")
            mode = args[1] if len(args) > 1 else "r"
            flags = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
            writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or bool(flags & _WRITE_FLAGS)
            if writing and not isinstance(path, int) and os.fsdecode(path) != os.devnull:
                if not self._inside(path, self.scratch):
                    raise PermissionError(f"Your code tried to write {Path(os.fsdecode(path)).name!r} outside the "
                                          f"scratch folder grading runs in. Grading never changes your project's "
                                          f"files; functions in these exercises return their answers instead.")
        elif event in _CHANGES and args:
            targets = [a for a in args[:2] if isinstance(a, (str, bytes, os.PathLike))]
            if any(not self._inside(t, self.scratch) for t in targets):
                raise PermissionError(f"Your code tried {event}() outside the scratch folder grading runs in. "
                                      f"Grading never changes your project's files.")
        elif event in _PROGRAMS or event.startswith(("os.exec", "os.spawn", "os.posix_spawn")):
            raise PermissionError(f"Your code tried to start another program ({event}); the functions in these "
                                  f"exercises compute their answers without one.")
        elif event in ("os.kill", "os.killpg") and args and args[0] != os.getpid():
            raise PermissionError("Your code tried to send a signal to another process; grading only lets it "
                                  "signal its own.")


class _HiddenFinder(importlib.abc.MetaPathFinder):
    """Refuses to find the reference solutions and the grader, whoever imports them in this process."""

    def __init__(self, hidden: tuple[str, ...]) -> None:
        self.hidden = hidden

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> None:
        if any(_matches(fullname, h) for h in self.hidden):
            raise ImportError(f"{fullname} is not available while your code is graded.", name=fullname)
        return None


# --- observing library calls ---------------------------------------------------------------------

class Observer:
    """Records calls to a few library functions the exercise's checks ask about, e.g. whether
    ``hmac.compare_digest`` compared the MACs (a behaviour, not a word in the source)."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []

    def install(self, names: list[str]) -> None:
        import hashlib
        import hmac

        if "hmac.compare_digest" in names:
            real_compare = hmac.compare_digest

            def compare_digest(a: Any, b: Any) -> bool:
                result = real_compare(a, b)
                self.seen.append({"fn": "hmac.compare_digest", "sizes": [_size(a), _size(b)],
                                  "types": [_kind(a), _kind(b)], "equal": result})
                return result

            hmac.compare_digest = compare_digest
            import secrets
            secrets.compare_digest = compare_digest
        if "hmac.new" in names:
            observer = self
            real_digest = hmac.digest

            class ObservedHMAC(hmac.HMAC):
                """hmac.HMAC that notes which key it was made with (hmac.new builds one too)."""

                def __init__(self, key: Any, msg: Any = None, digestmod: Any = "") -> None:
                    observer.seen.append({"fn": "hmac.new", "key": _fingerprint(key), "digest": str(digestmod)})
                    super().__init__(key, msg, digestmod)

            def digest(key: Any, msg: Any, digest: Any) -> Any:
                self.seen.append({"fn": "hmac.new", "key": _fingerprint(key), "digest": str(digest)})
                return real_digest(key, msg, digest)

            hmac.HMAC = ObservedHMAC  # type: ignore[misc]
            hmac.digest = digest
            del hashlib

    def take(self) -> list[dict[str, Any]]:
        out, self.seen = self.seen, []
        return out


def _size(value: Any) -> int:
    return len(value) if isinstance(value, (str, bytes, bytearray)) else -1


def _kind(value: Any) -> str:
    return "str" if isinstance(value, str) else "bytes" if isinstance(value, (bytes, bytearray)) else "other"


def _fingerprint(key: Any) -> str:
    import hashlib

    data = key.encode() if isinstance(key, str) else bytes(key)
    return hashlib.sha256(data).hexdigest()[:16]


# --- the process ----------------------------------------------------------------------------------

class Sandbox:
    """Loads the learner's module and serves calls until the grader says ``finish``."""

    def __init__(self, config: dict[str, Any], requests: io.TextIOBase, replies: io.TextIOBase) -> None:
        self.config = config
        self.requests, self.replies = requests, replies
        self.guard = Guard(config)
        self.observer = Observer()
        self.limit = float(config.get("case_time_limit", 2.0))
        self.module: ModuleType | None = None
        self.start_threads = set(threading.enumerate())

    def send(self, message: dict[str, Any]) -> None:
        self.replies.write(json.dumps(message) + "\n")
        self.replies.flush()

    def receive(self) -> dict[str, Any]:
        line = self.requests.readline()
        if not line:
            os._exit(0)  # the grader has gone: nothing is left to answer
        message: dict[str, Any] = json.loads(line)
        return message

    def _stub(self, number: int) -> Callable[..., Any]:
        def call_grader(*args: Any) -> Any:
            try:
                data = encode(list(args))
            except Unreadable as exc:
                raise TypeError(f"the grader's function takes JSON data (dicts, lists, strings, numbers, "
                                f"booleans, None); it was given {exc}") from None
            self.send({"op": "callback", "n": number, "args": data})
            while True:
                reply = self.receive()
                if reply.get("op") == "return":
                    return decode(reply.get("value"), self._stub)
                if reply.get("op") == "abort":
                    raise GraderAbort()
        return call_grader

    def load(self) -> None:
        path = self.guard.learner
        name = str(self.config.get("module_name", "learner"))
        buffer = OutputBuffer()
        try:
            with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer), time_limit(max(self.limit, 5.0)):
                spec = importlib.util.spec_from_file_location(name, path)
                if spec is None or spec.loader is None:
                    raise ImportError(f"cannot load {self.guard.display} as a Python module")
                module = importlib.util.module_from_spec(spec)
                sys.modules[name] = module  # dataclasses and typing look the module up while it executes
                spec.loader.exec_module(module)
        except CheckTimeout as exc:
            self.send({"op": "load_error", "status": "timeout", "output": buffer.getvalue(),
                       "message": f"Loading your file did not finish within {max(self.limit, 5.0):g} s. Is there a "
                                  f"loop at the top level of the file?{_running_line(exc, path, self.guard.display)}"})
            return
        except BaseException as exc:
            self.send({"op": "load_error", "status": "error", "output": buffer.getvalue(),
                       "message": describe_exception(exc, path, self.guard.display)})
            return
        self.module = module
        self.send({"op": "loaded", "output": buffer.getvalue()})

    def call(self, message: dict[str, Any]) -> dict[str, Any]:
        name = str(message.get("fn"))
        fn = getattr(self.module, name, None)
        if fn is None:
            return {"op": "missing", "kind": "missing"}
        if not callable(fn):
            return {"op": "missing", "kind": type(fn).__name__}
        args = decode(message.get("args", []), self._stub)
        buffer = OutputBuffer()
        self.observer.take()
        path, display = self.guard.learner, self.guard.display
        try:
            with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer), time_limit(self.limit):
                value = fn(*args)
        except GraderAbort:
            return {"op": "aborted", "output": buffer.getvalue()}
        except CheckTimeout as exc:
            return {"op": "raised", "status": "timeout", "output": buffer.getvalue(), "types": ["CheckTimeout"],
                    "message": f"Stopped after {self.limit:g} s: {name}() did not return. Is there a loop that never "
                               f"ends, or a wait for something that never comes?{_running_line(exc, path, display)}"}
        except BaseException as exc:
            return {"op": "raised", "status": "error", "output": buffer.getvalue(),
                    "types": [c.__name__ for c in type(exc).__mro__], "message": str(exc),
                    "description": describe_exception(exc, path, display)}
        try:
            data = encode(value)
        except Unreadable as exc:
            return {"op": "unreadable", "what": str(exc), "output": buffer.getvalue()}
        reply = {"op": "result", "value": data, "output": buffer.getvalue(), "observed": self.observer.take()}
        if message.get("return_args"):
            with contextlib.suppress(Unreadable):
                reply["args_after"] = encode(args)
        return reply

    def finish(self) -> dict[str, Any]:
        left = [t.name for t in threading.enumerate()
                if t not in self.start_threads and t.is_alive() and not t.daemon]
        return {"op": "finished", "threads": left}

    def serve(self) -> None:
        self.load()
        while True:
            message = self.receive()
            op = message.get("op")
            if op == "call":
                self.send(self.call(message))
            elif op == "finish":
                self.send(self.finish())
                self.replies.flush()
                os._exit(0)  # do not wait for threads the learner left running


def main() -> None:
    """Entry point: the configuration is the first line on stdin; see the module docstring."""
    requests = os.fdopen(os.dup(0), "r", encoding="utf-8")
    config = json.loads(requests.readline())
    replies = os.fdopen(int(config["reply_fd"]), "w", encoding="utf-8")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)  # input() in learner code reads nothing instead of the grader's requests
    sys.stdin = io.StringIO("")
    sys.dont_write_bytecode = True  # never leave __pycache__ beside the learner's file
    if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
        sys.path.pop(0)  # the grader's folder is not for the learner's imports
    sys.path.insert(0, str(Path(config["file"]).resolve().parent))
    os.chdir(config["scratch"])
    sandbox = Sandbox(config, requests, replies)
    sandbox.observer.install(list(config.get("observe", ())))
    sandbox.guard.install()
    sandbox.serve()


if __name__ == "__main__":
    main()
