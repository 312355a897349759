"""The nemesis: what real clients and real pipes do to a server, seeded and recorded (chapter 12).

Maelstrom's nemesis partitions and crashes a learner's processes while a workload runs; this one
does to an MCP server over stdio what a careless client, a buggy proxy or a crashing host does:

* ``delay`` — a pause before a request, then the request written in two pieces with the same pause
  between them (a slow pipe or a slow client; a reader that takes each chunk it reads for a whole
  message breaks here). The pause is the variant's (:data:`PAUSES_MS`), shown in the schedule; the
  server must still answer within the deadline;
* ``duplicate`` — the same request twice, same id, same content (a retry that should not have been);
* ``reuse`` — a new request with the id of one still in flight;
* ``malformed`` — a line that is not JSON, bytes that are not UTF-8, a wrong ``jsonrpc`` member, a
  batch (an array: valid only in 2025-03-26);
* ``oversized`` — a request of a mebibyte (``oversized_bytes``);
* ``hangup`` — the client closes stdin while a call is in flight (on a link of its own);
* ``restart`` — SIGKILL, then a fresh process and a fresh session.

Over Streamable HTTP the same actions (all but ``restart``: the server behind a URL is not the
checker's process) write bodies instead of lines: see :mod:`.http_nemesis`, which
:func:`mcp_sim.bridge.check.run.actions_for` picks for an HTTP link.

Every frame the nemesis writes is marked ``nemesis:<action>`` in the trace, and after each action a
request the server must answer (``probe:alive``) shows whether it survived. The schedule — which
action runs after which workload step, and which variant of garbage it writes — comes from a
:class:`random.Random` seeded with the run's seed and the era, so the same seed gives the same schedule.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Final

import anyio

from mcp_sim.bridge.check.link import frame
from mcp_sim.bridge.check.session import EraSession

ACTIONS: Final[tuple[str, ...]] = ("delay", "duplicate", "reuse", "malformed", "oversized", "hangup", "restart")
DEFAULT_NEMESIS: Final[tuple[str, ...]] = ACTIONS
OVERSIZED_BYTES: Final = 1 << 20
PAUSES_MS: Final[tuple[int, ...]] = (100, 150, 200, 300)
"""The ``delay`` pause of each variant, in milliseconds (before the request, and between its two pieces)."""

_BAD_JSON: Final[tuple[bytes, ...]] = (b'{"jsonrpc": "2.0", "id": 1, "method": ', b"{not json at all}",
                                       b'{"jsonrpc":"2.0","id":7,"method":"ping"', b"\x00\x01garbage")
_BAD_UTF8: Final[tuple[bytes, ...]] = (b'{"jsonrpc":"2.0","id":"\xff\xfe","method":"ping"}',
                                       b'\xc3\x28{"jsonrpc":"2.0","method":"ping"}')


@dataclass(frozen=True)
class Planned:
    """One scheduled action: run ``action`` after workload step number ``after`` (0 = before all)."""

    action: str
    after: int
    variant: int

    @property
    def pause(self) -> float:
        """The seconds a ``delay`` waits (the variant's :data:`PAUSES_MS`)."""
        return PAUSES_MS[self.variant % len(PAUSES_MS)] / 1000

    def describe(self, era: str, steps: Sequence[str]) -> str:
        where = "before the workload" if self.after == 0 else f"after {steps[self.after - 1]}"
        pause = f", pause {PAUSES_MS[self.variant % len(PAUSES_MS)]} ms" if self.action == "delay" else ""
        return f"{era}: {self.action} (variant {self.variant}{pause}) {where}"


def schedule(actions: Sequence[str], steps: Sequence[str], *, seed: int, era: str) -> list[Planned]:
    """Where each action goes among the workload's steps; the same seed and era give the same plan.
    ``hangup`` and ``restart`` run after the workload (they end or replace the process)."""
    rng = random.Random(f"mcp-sim-check:{seed}:{era}")
    plan = []
    for action in actions:
        if action not in ACTIONS:
            raise ValueError(f"unknown nemesis action {action!r}; known: {', '.join(ACTIONS)}")
        after = len(steps) if action in ("hangup", "restart") else rng.randint(0, len(steps))
        plan.append(Planned(action, after, rng.randrange(4)))
    return sorted(plan, key=lambda p: (p.after, ACTIONS.index(p.action)))


def pause_of(variant: int) -> float:
    """The seconds a ``delay`` of ``variant`` waits."""
    return Planned("delay", 0, variant).pause


async def delay(session: EraSession, variant: int) -> None:
    method = "ping" if session.era == "legacy" else "server/discover"
    pause = pause_of(variant)
    await anyio.sleep(pause)  # a client that is slow to send: the session must still be there
    rid = session.link.new_id()
    text = frame({"jsonrpc": "2.0", "id": rid, "method": method, "params": session.params()})
    await session.link.send_split(text, 8 + 9 * variant, pause, "nemesis:delay", "expect:result",
                                  f"delay:{round(pause * 1000)}ms")
    await session.link.response(rid)


async def duplicate(session: EraSession, variant: int) -> None:
    method = "ping" if session.era == "legacy" else "server/discover"
    rid = session.link.new_id()
    text = frame({"jsonrpc": "2.0", "id": rid, "method": method, "params": session.params()})
    await session.link.send_line(text, "nemesis:duplicate", "expect:result")
    await session.link.send_line(text, "nemesis:duplicate", "duplicate")
    await session.link.response(rid)
    await session.link.settle()


async def reuse(session: EraSession, variant: int) -> None:
    first = "tools/list" if session.offers("tools") else "server/discover" if session.era == "modern" else "ping"
    second = "ping" if session.era == "legacy" else "server/discover"
    rid = session.link.new_id()
    await session.call(first, None, "nemesis:reuse", "expect:result", wait=False, request_id=rid)
    await session.call(second, None, "nemesis:reuse", "duplicate", wait=False, request_id=rid)
    await session.link.response(rid)
    await session.link.settle()


async def malformed(session: EraSession, variant: int) -> None:
    link = session.link
    await link.send_bytes(_BAD_JSON[variant % len(_BAD_JSON)], "nemesis:malformed", "expect:parse-error")
    await link.send_bytes(_BAD_UTF8[variant % len(_BAD_UTF8)], "nemesis:malformed", "expect:parse-error",
                         "utf8")
    rid = link.new_id()
    await link.send_line(frame({"jsonrpc": "1.0", "id": rid, "method": "tools/list", "params": session.params()}),
                         "nemesis:malformed", "expect:invalid-request")
    if session.revision != "2025-03-26":
        batch = [{"jsonrpc": "2.0", "id": link.new_id(), "method": "tools/list", "params": session.params()}]
        await link.send_line(frame(batch), "nemesis:malformed", "expect:invalid-request")
    await link.settle(0.3)


async def oversized(session: EraSession, variant: int, size: int = OVERSIZED_BYTES) -> None:
    params = session.params()
    params["_meta"] = {**params.get("_meta", {}), "dev.mcp-sim.check/padding": "x" * size}
    method = "ping" if session.era == "legacy" else "server/discover"
    await session.call(method, params, "nemesis:oversized", "expect:answered")


async def restart(session: EraSession, variant: int) -> None:
    """Crash the server (SIGKILL) and start it again: a fresh process needs a fresh session."""
    await session.link.kill()
    await session.link.start()
    session.opened = False
    await session.open()


Action = Callable[[EraSession, int], Awaitable[None]]

ACTIONS_RUN: dict[str, Action] = {"delay": delay, "duplicate": duplicate, "reuse": reuse, "malformed": malformed,
                                  "oversized": oversized, "restart": restart}
"""The actions that run on a stdio workload's own link (``hangup`` needs a link of its own: see :mod:`.run`)."""

