"""The one switch between the readable implementation and its accelerated twins.

The modules the course sends learners to (the Client, the server session, the transports, the
recorder, the codec) are written to be read: the plainest correct code. Where the benchmarks need
more speed, a module may have an *accelerated twin* in its own clearly named module
(``<name>_accelerated.py`` beside it) that does exactly the same work with fewer Python steps — the
standard library's ``heapq``/``_heapq`` and ``json.decoder``/``_json`` pattern. A plain module picks
its twin only when this switch says so, and a test proves that both record byte-identical traces for
every scenario, revision and transport.

The readable implementation is the default. The accelerated one is chosen

* for a block of code: ``with mcp_sim.accelerated.use(): ...`` (objects *created* inside the block
  use the twins; the choice travels with the context into tasks started there), or
* for a whole process: the environment variable ``MCP_SIM_ACCELERATED=1``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

ENVIRONMENT_VARIABLE = "MCP_SIM_ACCELERATED"

_choice: ContextVar[bool | None] = ContextVar("mcp_sim_accelerated", default=None)


def enabled() -> bool:
    """True when objects created now should use the accelerated twins."""
    chosen = _choice.get()
    if chosen is not None:
        return chosen
    return os.environ.get(ENVIRONMENT_VARIABLE, "") not in ("", "0")


@contextmanager
def use(accelerated: bool = True) -> Iterator[None]:
    """Choose the accelerated (``True``) or readable (``False``) implementation inside the block."""
    token = _choice.set(accelerated)
    try:
        yield
    finally:
        _choice.reset(token)
