"""A sandbox per server process (course chapter 5.2.2: "separate connections are not a sandbox").

A Host usually gives each Server its own Client and connection. That separates *protocol* state —
versions, authentication, failures, lifecycles — and nothing else. Two local Servers started by the
same Host are two processes of the same user on the same machine: each can read every file the user
can read, see the environment it was started with, and open any network connection. The connection
layout does not change that; only runtime policy does:

* which files a process may read and write (:attr:`SandboxPolicy.readable`, ``writable``),
* which network hosts it may reach (:attr:`SandboxPolicy.egress`),
* which environment variables it is started with (:attr:`SandboxPolicy.environment`).

:class:`Machine` is the shared world — one virtual file system, one environment, one network —
and :meth:`Machine.spawn` starts a :class:`ServerProcess` under a policy. Every access goes through
the process, which checks the policy and records the access (allowed or refused) so a lab can show
what a Server touched. Paths are normalised before they are checked, so ``../`` cannot climb out.

Roots (``roots/list``) are *not* this: a Root tells a well-behaved Server where to look; a sandbox
stops a Server that does not behave. :meth:`SandboxPolicy.from_roots` turns the Host's roots into a
policy the Host then enforces.
"""

from __future__ import annotations

import fnmatch
import posixpath
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import unquote, urlparse


class SandboxViolation(PermissionError):
    """The process's policy does not allow this access."""

    def __init__(self, process: str, what: str, target: str) -> None:
        super().__init__(f"{process} may not {what} {target}")
        self.process = process
        self.what = what
        self.target = target


def normalise(path: str) -> str:
    """An absolute, ``..``-free POSIX path: the form every policy check uses."""
    return posixpath.normpath("/" + path.lstrip("/")) if path else "/"


def _under(path: str, prefix: str) -> bool:
    prefix = normalise(prefix)
    return prefix == "/" or path == prefix or path.startswith(prefix.rstrip("/") + "/")


@dataclass(frozen=True)
class SandboxPolicy:
    """What one server process may touch. Empty tuples mean "nothing"; ``"*"`` means "anything"."""

    readable: tuple[str, ...] = ()
    """Path prefixes the process may read."""
    writable: tuple[str, ...] = ()
    egress: tuple[str, ...] = ()
    """Network hosts (glob patterns) the process may connect to."""
    environment: tuple[str, ...] = ()
    """Names (glob patterns) of the environment variables the process is started with."""

    def may_read(self, path: str) -> bool:
        p = normalise(path)
        return any(r == "*" or _under(p, r) for r in self.readable)

    def may_write(self, path: str) -> bool:
        p = normalise(path)
        return any(w == "*" or _under(p, w) for w in self.writable)

    def may_reach(self, host: str) -> bool:
        return any(fnmatch.fnmatchcase(host, pattern) for pattern in self.egress)

    def sees_variable(self, name: str) -> bool:
        return any(fnmatch.fnmatchcase(name, pattern) for pattern in self.environment)

    @classmethod
    def from_roots(cls, roots: Iterable[str], *, egress: Iterable[str] = (),
                   environment: Iterable[str] = ()) -> SandboxPolicy:
        """Enforce the Host's ``file://`` roots: read and write only inside them. A root's path is
        percent-decoded first (RFC 8089 file URIs are URIs: ``%20`` is a space in the folder's name)."""
        paths = tuple(normalise(unquote(urlparse(uri).path)) for uri in roots)
        return cls(readable=paths, writable=paths, egress=tuple(egress), environment=tuple(environment))


UNRESTRICTED = SandboxPolicy(readable=("*",), writable=("*",), egress=("*",), environment=("*",))
"""What a process started the ordinary way gets: everything its user has. The default, and the problem."""


@dataclass(frozen=True)
class Access:
    """One attempt a process made to touch the machine."""

    process: str
    what: str
    """``read``, ``write``, ``list``, ``getenv`` or ``connect``."""
    target: str
    allowed: bool
    payload: str | None = None
    """What was sent, for a network connection."""


@dataclass
class Machine:
    """The computer the Host and its local Servers share: files, environment, network."""

    files: dict[str, str] = field(default_factory=dict)
    environment: dict[str, str] = field(default_factory=dict)
    received: dict[str, list[str]] = field(default_factory=dict)
    """What each network host received (the attacker's collection server shows up here)."""
    log: list[Access] = field(default_factory=list)

    def write(self, path: str, text: str) -> None:
        """Put a file on the machine (setting the scene; not an access by a process)."""
        self.files[normalise(path)] = text

    def spawn(self, name: str, policy: SandboxPolicy = UNRESTRICTED,
              environment: dict[str, str] | None = None) -> ServerProcess:
        """Start a server process under ``policy``. Its environment is the Host's (plus ``environment``),
        filtered by the policy — a process only ever sees the variables it was given."""
        env = {**self.environment, **(environment or {})}
        visible = {k: v for k, v in env.items() if policy.sees_variable(k)}
        return ServerProcess(name, policy, self, visible)


@dataclass
class ServerProcess:
    """One server process: every file, environment and network access goes through its policy."""

    name: str
    policy: SandboxPolicy
    machine: Machine
    environ: dict[str, str]

    def _note(self, what: str, target: str, allowed: bool, payload: str | None = None) -> None:
        self.machine.log.append(Access(self.name, what, target, allowed, payload))
        if not allowed:
            raise SandboxViolation(self.name, what, target)

    def read_file(self, path: str) -> str:
        p = normalise(path)
        self._note("read", p, self.policy.may_read(p))
        if p not in self.machine.files:
            raise FileNotFoundError(p)
        return self.machine.files[p]

    def write_file(self, path: str, text: str) -> None:
        p = normalise(path)
        self._note("write", p, self.policy.may_write(p))
        self.machine.files[p] = text

    def list_files(self, prefix: str = "/") -> list[str]:
        """The files under ``prefix`` this process may read (a sandbox also hides what it forbids)."""
        p = normalise(prefix)
        self._note("list", p, True)
        return sorted(f for f in self.machine.files if _under(f, p) and self.policy.may_read(f))

    def getenv(self, name: str) -> str | None:
        self._note("getenv", name, True)
        return self.environ.get(name)

    def connect(self, host: str, payload: str) -> None:
        """Send ``payload`` to ``host`` (egress). Refused unless the policy lists the host."""
        self._note("connect", host, self.policy.may_reach(host), payload)
        self.machine.received.setdefault(host, []).append(payload)
