"""From typed models to JSON-RPC messages and back (course chapter 02, "The envelope").

A typed model such as :class:`~mcp_sim.protocol.types.CallToolRequest` holds the MCP part of a message:
``method`` and ``params``. The JSON-RPC envelope (``jsonrpc: "2.0"``, the ``id`` that pairs a response
with its request) is added on the way out and removed on the way in::

    request = CallToolRequest(params=CallToolRequestParams(name="get_weather"))
    wire = to_request(request, id=7)          # mcp_sim.wire.JSONRPCRequest
    ...
    result = from_result_response(reply, method="tools/call")   # CallToolResult

A result does not say which method it answers: only the ``id`` does. That is why
:func:`from_result_response` must be told the method (a client remembers it per outstanding id).

:func:`as_schema_type` gives the exact JSON object a revision's schema calls by the model's name, which
differs over time (see :mod:`mcp_sim.protocol.messages`).
"""

from __future__ import annotations

from typing import Any

from mcp_sim.protocol.messages import Error, Notification, Request, RequestId, Result
from mcp_sim.protocol.parsing import parse_notification, parse_request, parse_result
from mcp_sim.protocol.revisions import get_revision
from mcp_sim.wire.jsonrpc import (
    JSONRPC_VERSION,
    ErrorObject,
    JSONRPCErrorResponse,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResultResponse,
)


def _params(model: Request | Notification) -> dict[str, Any] | None:
    body = model.to_json()
    params: dict[str, Any] | None = body.get("params")
    return params


def to_request(model: Request, id: RequestId) -> JSONRPCRequest:
    """Wrap a typed request in a JSON-RPC request with ``id``."""
    return JSONRPCRequest(id, model.method, _params(model))


def to_notification(model: Notification) -> JSONRPCNotification:
    """Wrap a typed notification in a JSON-RPC notification (no ``id``: nobody answers it)."""
    return JSONRPCNotification(model.method, _params(model))


def to_result_response(result: Result, id: RequestId) -> JSONRPCResultResponse:
    """Wrap a typed result in the response to the request ``id``."""
    return JSONRPCResultResponse(id, result.to_json())


def to_error_response(error: Error, id: RequestId | None) -> JSONRPCErrorResponse:
    """Wrap a typed error (``InvalidParamsError`` ...) in an error response; ``id`` ``None`` if unreadable."""
    body = error.to_json()
    return JSONRPCErrorResponse(id, ErrorObject(body["code"], body["message"], body.get("data"),
                                                has_data="data" in body))


def from_request(message: JSONRPCRequest, *, revision: str | None = None) -> Request:
    """The typed request inside a JSON-RPC request (the ``id`` stays on ``message``)."""
    return parse_request(message.method, message.params, revision=revision)


def from_notification(message: JSONRPCNotification, *, revision: str | None = None) -> Notification:
    """The typed notification inside a JSON-RPC notification."""
    return parse_notification(message.method, message.params, revision=revision)


def from_result_response(message: JSONRPCResultResponse, *, method: str, revision: str | None = None) -> Result:
    """The typed result inside a response to a ``method`` request."""
    return parse_result(method, message.result, revision=revision)


def from_error_response(message: JSONRPCErrorResponse) -> Error:
    """The typed ``error`` of an error response."""
    return Error.model_validate(message.error.to_dict())


def as_schema_type(model: Request | Notification, revision: str, id: RequestId | None = None) -> dict[str, Any]:
    """The JSON object ``revision``'s schema calls ``type(model).__name__``.

    * up to 2025-06-18: ``method`` and ``params`` only;
    * 2025-11-25 and 2026-07-28: with ``jsonrpc`` (and ``id`` for a request, which you must give);
    * 2026-07-28's ``ElicitRequest``, ``CreateMessageRequest``, ``ListRootsRequest``: no envelope, because
      they only travel inside ``InputRequiredResult.inputRequests``.
    """
    body = {k: v for k, v in model.to_json().items() if k not in ("jsonrpc", "id")}
    rev = get_revision(revision)
    if not rev.types_carry_envelope:
        return body
    if isinstance(model, Request):
        info = rev.method(model.method)
        if info is not None and info.only_inside_input_requests:
            return body
        if id is None:
            raise ValueError(f"a {type(model).__name__} of {revision} needs an id")
        return {"jsonrpc": JSONRPC_VERSION, "id": id, **body}
    return {"jsonrpc": JSONRPC_VERSION, **body}
