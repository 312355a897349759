"""Reference solution for ex04_mrtr_loop. Try the exercise before reading this."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Handler = Callable[[dict[str, Any]], dict[str, Any]]


def call_with_input(send: Callable[[dict[str, Any]], dict[str, Any]], new_id: Callable[[], str | int],
                    method: str, params: dict[str, Any], handlers: dict[str, Handler]) -> dict[str, Any]:
    """Send the request; while the server answers input_required, fulfil its inputRequests and retry."""
    response = send({"jsonrpc": "2.0", "id": new_id(), "method": method, "params": params})
    while True:
        result = response.get("result")
        if not isinstance(result, dict) or result.get("resultType", "complete") != "input_required":
            return response  # an error, or a complete result (no resultType = complete)
        retry_params = dict(params)  # original params, fresh each round
        requests = result.get("inputRequests") or {}
        if requests:
            retry_params["inputResponses"] = {
                key: handlers[request["method"]](request.get("params", {})) for key, request in requests.items()
            }
        if "requestState" in result:
            retry_params["requestState"] = result["requestState"]  # echoed exactly, never invented
        response = send({"jsonrpc": "2.0", "id": new_id(), "method": method, "params": retry_params})
