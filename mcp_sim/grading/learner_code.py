"""Running a learner's file safely enough for a course (used by :mod:`mcp_sim.grading.worker`).

Four things can go wrong when we run code someone is still writing, and each becomes a message the
learner can act on:

* it **raises** — we keep only the traceback frames from the learner's own file, so the message
  points at *their* line, not at the grader's internals (:func:`describe_exception`);
* it **never returns** — a per-check time limit interrupts it and says which line was running
  (:func:`time_limit`); the parent process adds a hard limit on top, so even code that swallows the
  interruption cannot hang a Jupyter kernel;
* it **prints** — output is captured per check and shown beside the result (:func:`capture_output`);
* it **imports the answer** — some exercises forbid modules that already implement what the learner
  is asked to write; :func:`forbidden_uses` finds them by reading the source, without running it.

The learner's file is only ever read, never written: no ``__pycache__`` is created beside it either
(the worker sets ``sys.dont_write_bytecode``).

This is a teaching guard, not a security sandbox: it keeps honest mistakes readable.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import io
import linecache
import signal
import sys
import threading
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType, ModuleType, TracebackType


class CheckTimeout(BaseException):
    """Raised inside the learner's code when its time is up. A ``BaseException`` so that a learner's
    ``except Exception:`` does not swallow it."""


@dataclass(frozen=True)
class ForbiddenUse:
    """A place where the learner's file uses a name the exercise forbids."""

    name: str
    line: int

    def __str__(self) -> str:
        return f"line {self.line}: {self.name}"


def _matches(name: str, forbidden: str) -> bool:
    return name == forbidden or name.startswith(forbidden + ".")


def _dotted(node: ast.AST) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def forbidden_uses(source: str, forbidden: tuple[str, ...]) -> list[ForbiddenUse]:
    """Every import, attribute chain or string in ``source`` that names one of ``forbidden``.

    ``import a.b as x`` followed by ``x.f`` counts as ``a.b.f``; ``from a.b import f`` as ``a.b.f``; a
    string constant that spells a forbidden module (for ``importlib``) counts too."""
    if not forbidden:
        return []
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []  # the syntax error is reported when the file is loaded
    aliases: dict[str, str] = {}
    found: list[ForbiddenUse] = []

    def flag(name: str, line: int) -> None:
        for f in forbidden:
            if _matches(name, f):
                found.append(ForbiddenUse(name, line))
                return

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                flag(alias.name, node.lineno)
                if alias.asname:
                    aliases[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    aliases[top] = top
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                flag(full, node.lineno)
                aliases[alias.asname or alias.name] = full
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            dotted = _dotted(node)
            if dotted:
                head, _, rest = dotted.partition(".")
                if head in aliases:
                    flag(f"{aliases[head]}.{rest}" if rest else aliases[head], node.lineno)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            for f in forbidden:
                if f in node.value:
                    found.append(ForbiddenUse(repr(node.value), node.lineno))
                    break
    unique = {(u.name, u.line): u for u in found}
    return sorted(unique.values(), key=lambda u: u.line)


def load_module(path: Path, name: str) -> ModuleType:
    """Execute the learner's file as a fresh module called ``name``; exceptions propagate."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path.name} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and typing look the module up while it executes
    writes_bytecode = sys.dont_write_bytecode
    sys.dont_write_bytecode = True  # never leave a __pycache__ folder beside the learner's file
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    finally:
        sys.dont_write_bytecode = writes_bytecode
    return module


def _same_file(a: str, b: Path) -> bool:
    try:
        return Path(a).resolve() == b
    except OSError:
        return False


def learner_frames(tb: TracebackType | None, path: Path) -> list[traceback.FrameSummary]:
    """The traceback entries that are in the learner's file (``path`` must be resolved)."""
    return [f for f in traceback.extract_tb(tb) if _same_file(f.filename, path)]


def describe_exception(exc: BaseException, path: Path, display_name: str) -> str:
    """A message about ``exc`` that shows only the learner's own lines.

    A ``SyntaxError`` names its line directly; anything else is shown as "Your code raised …" with
    the learner's frames, innermost last, as Python would print them."""
    resolved = path.resolve()
    if isinstance(exc, SyntaxError) and exc.filename and _same_file(exc.filename, resolved):
        text = (exc.text or "").rstrip()
        caret = ""
        if text and exc.offset:
            caret = "\n    " + " " * (exc.offset - 1 - (len(text) - len(text.lstrip()))) + "^"
        return (f"Python could not read your file: {exc.msg}\n"
                f'  File "{display_name}", line {exc.lineno}\n    {text.strip()}{caret}')
    frames = learner_frames(exc.__traceback__, resolved)
    kind = type(exc).__name__
    detail = str(exc)
    head = f"Your code raised {kind}" + (f": {detail}" if detail else "")
    if isinstance(exc, NotImplementedError):
        where = frames[-1] if frames else None
        fn = f"{where.name}()" if where else "a function"
        head = (f"{fn} is not written yet: it still raises NotImplementedError. Replace that line with your "
                f"implementation.")
    if not frames:
        return head
    lines = [head, "Traceback (your file only, most recent call last):"]
    for f in frames:
        lines.append(f'  File "{display_name}", line {f.lineno}, in {f.name}')
        code = (f.line or linecache.getline(str(path), f.lineno or 0)).strip()
        if code:
            lines.append(f"    {code}")
    return "\n".join(lines)


@contextlib.contextmanager
def capture_output() -> Iterator[io.StringIO]:
    """Collect what the learner prints (stdout and stderr) instead of letting it reach the terminal
    or the worker's result channel."""
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
        yield buffer


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Interrupt the block with :class:`CheckTimeout` after ``seconds`` of wall time.

    Uses a ``SIGALRM`` interval timer where the platform has one and we are on the main thread; the
    traceback of the interruption then shows which learner line was looping. Elsewhere this does
    nothing and the parent process's hard limit is the only guard."""
    usable = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not usable or seconds <= 0:
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
