"""ex04_mrtr_loop — drive a Multi Round-Trip Request to completion (client side).

Edit this file, then grade it: ``grade("ex04_mrtr_loop")`` in a notebook or
``mcp-sim grade ex04_mrtr_loop`` in a terminal. The task is described in README.md beside this file.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Handler = Callable[[dict[str, Any]], dict[str, Any]]


def call_with_input(send: Callable[[dict[str, Any]], dict[str, Any]], new_id: Callable[[], str | int],
                    method: str, params: dict[str, Any], handlers: dict[str, Handler]) -> dict[str, Any]:
    """Send ``method`` with ``params``; while the result is ``input_required``, fulfil its
    ``inputRequests`` with ``handlers`` and retry (new id, original params + ``inputResponses`` +
    echoed ``requestState``). Return the final response dict (a complete result or an error)."""
    raise NotImplementedError("write call_with_input()")
