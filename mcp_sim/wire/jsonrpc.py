"""JSON-RPC 2.0, the message format under every MCP revision (course chapter 02).

This module is *sans-IO*: it turns text into messages and messages into text, and never reads a
socket, a pipe or a clock. That makes every rule here easy to test exhaustively.

The four shapes MCP uses (batches aside), each an immutable named tuple (a simulation makes millions
of them; a named tuple is the cheapest immutable object Python builds):

* a **request** has an ``id`` and a ``method`` and expects exactly one response;
* a **notification** has a ``method`` but no ``id`` and gets no response;
* a **result response** echoes the request's ``id`` and carries ``result``;
* an **error response** echoes the ``id`` and carries ``error: {code, message, data?}``. Only when
  the request could not be read at all may the ``id`` be missing.

MCP tightens JSON-RPC in one place: an ``id`` is a string or an integer and MUST NOT be ``null``.
Batches (a JSON array of messages) were allowed only in 2025-03-26; :func:`decode` recognises them
and, unless told that batching is allowed, answers with ``-32600 Invalid Request``.

:func:`decode` never raises: anything unreadable becomes an :class:`InvalidMessage` carrying the
error response a peer should send back.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple, TypeAlias

JSONRPC_VERSION: Final = "2.0"

# The five codes JSON-RPC 2.0 itself defines. MCP adds its own in mcp_sim.protocol.errors.
PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603

STANDARD_ERROR_MESSAGES: Final[dict[int, str]] = {
    PARSE_ERROR: "Parse error",
    INVALID_REQUEST: "Invalid Request",
    METHOD_NOT_FOUND: "Method not found",
    INVALID_PARAMS: "Invalid params",
    INTERNAL_ERROR: "Internal error",
}

RequestId: TypeAlias = str | int
"""A request id: a string or an integer. MCP forbids ``null`` and a float is not an integer."""


def is_valid_id(value: object) -> bool:
    """True when ``value`` may be used as an MCP request id (``bool`` is not an integer here)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


@dataclass(frozen=True, slots=True)
class ErrorObject:
    """The ``error`` member of an error response."""

    code: int
    message: str
    data: Any = None
    has_data: bool = field(default=False, compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.has_data or self.data is not None:
            out["data"] = self.data
        return out


def error_object(code: int, message: str | None = None, data: Any = None) -> ErrorObject:
    """Build an :class:`ErrorObject`, using the standard message for a standard code."""
    text = message if message is not None else STANDARD_ERROR_MESSAGES.get(code, "Error")
    return ErrorObject(code, text, data, has_data=data is not None)


class JSONRPCRequest(NamedTuple):
    """A request: it has an ``id`` and expects exactly one response with the same ``id``."""

    id: RequestId
    method: str
    params: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"jsonrpc": JSONRPC_VERSION, "id": self.id, "method": self.method}
        if self.params is not None:
            out["params"] = self.params
        return out


class JSONRPCNotification(NamedTuple):
    """A notification: no ``id``, so nobody may answer it."""

    method: str
    params: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"jsonrpc": JSONRPC_VERSION, "method": self.method}
        if self.params is not None:
            out["params"] = self.params
        return out


class JSONRPCResultResponse(NamedTuple):
    """A successful response. ``id`` is the id of the request it answers."""

    id: RequestId
    result: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"jsonrpc": JSONRPC_VERSION, "id": self.id, "result": self.result}


class JSONRPCErrorResponse(NamedTuple):
    """A failed response. ``id`` is ``None`` only when the request could not be read."""

    id: RequestId | None
    error: ErrorObject

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"jsonrpc": JSONRPC_VERSION}
        if self.id is not None:
            out["id"] = self.id
        out["error"] = self.error.to_dict()
        return out


JSONRPCMessage: TypeAlias = JSONRPCRequest | JSONRPCNotification | JSONRPCResultResponse | JSONRPCErrorResponse
JSONRPCResponse: TypeAlias = JSONRPCResultResponse | JSONRPCErrorResponse


@dataclass(frozen=True, slots=True)
class InvalidMessage:
    """What :func:`decode` returns for input that is not a valid message.

    ``reply`` is the error response the receiver should send back (for an unreadable request), and
    ``reason`` says in plain words what was wrong. A receiver must not answer an invalid *response*
    or *notification*; ``is_answerable`` tells the two cases apart.
    """

    raw: str
    reply: JSONRPCErrorResponse
    reason: str
    is_answerable: bool = True


@dataclass(frozen=True, slots=True)
class Batch:
    """A JSON array of messages (legal only in 2025-03-26). Items may themselves be invalid."""

    items: tuple[JSONRPCMessage | InvalidMessage, ...]


Decoded: TypeAlias = JSONRPCMessage | InvalidMessage | Batch


def _invalid(raw: str, code: int, reason: str, id: RequestId | None = None, answerable: bool = True) -> InvalidMessage:
    reply = JSONRPCErrorResponse(id, error_object(code, None, {"reason": reason}))
    return InvalidMessage(raw, reply, reason, answerable)


def _describe(value: object) -> str:
    return "null" if value is None else type(value).__name__


def parse_object(obj: Any, raw: str | None = None) -> JSONRPCMessage | InvalidMessage:
    """Classify one already-parsed JSON value as a JSON-RPC message, or explain why it is not."""
    if raw is None:
        try:
            raw = json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
        except (TypeError, ValueError):
            raw = repr(obj)
    if not isinstance(obj, dict):
        return _invalid(raw, INVALID_REQUEST, f"a message must be a JSON object, got {_describe(obj)}")
    raw_id = obj.get("id", None)
    readable_id: RequestId | None = raw_id if is_valid_id(raw_id) else None
    if obj.get("jsonrpc") != JSONRPC_VERSION:
        return _invalid(raw, INVALID_REQUEST, 'the "jsonrpc" member must be exactly "2.0"', readable_id)

    has_method = "method" in obj
    has_result = "result" in obj
    has_error = "error" in obj
    if has_method:
        if has_result or has_error:
            return _invalid(raw, INVALID_REQUEST, "a message cannot have both a method and a result/error", readable_id)
        method = obj["method"]
        if not isinstance(method, str) or not method:
            return _invalid(raw, INVALID_REQUEST, '"method" must be a non-empty string', readable_id)
        params = obj.get("params", None)
        if "params" in obj and not isinstance(params, dict):
            # JSON-RPC allows positional (array) params, MCP never uses them.
            return _invalid(raw, INVALID_REQUEST, '"params" must be an object in MCP', readable_id,
                            answerable="id" in obj)
        if "id" not in obj:
            return JSONRPCNotification(method, params)
        if raw_id is None:
            return _invalid(raw, INVALID_REQUEST, "MCP request ids must not be null", None)
        if not is_valid_id(raw_id):
            return _invalid(raw, INVALID_REQUEST,
                            f"a request id must be a string or an integer, got {_describe(raw_id)}", None)
        return JSONRPCRequest(raw_id, method, params)

    if has_result and has_error:
        return _invalid(raw, INVALID_REQUEST, "a response cannot have both result and error", readable_id, False)
    if has_result:
        if not is_valid_id(raw_id):
            return _invalid(raw, INVALID_REQUEST, "a result response needs a string or integer id", None, False)
        assert readable_id is not None
        result = obj["result"]
        if not isinstance(result, dict):
            return _invalid(raw, INVALID_REQUEST, "an MCP result must be a JSON object", readable_id, False)
        return JSONRPCResultResponse(readable_id, result)
    if has_error:
        err = obj["error"]
        if not isinstance(err, dict) or not isinstance(err.get("code"), int) or isinstance(err.get("code"), bool) \
                or not isinstance(err.get("message"), str):
            return _invalid(raw, INVALID_REQUEST, 'an error needs an integer "code" and a string "message"',
                            readable_id, False)
        if "id" in obj and raw_id is not None and not is_valid_id(raw_id):
            return _invalid(raw, INVALID_REQUEST, "an error response id must be a string or an integer", None, False)
        return JSONRPCErrorResponse(readable_id, ErrorObject(err["code"], err["message"], err.get("data"),
                                                            has_data="data" in err))
    return _invalid(raw, INVALID_REQUEST, 'a message needs a "method" (request or notification) '
                    'or a "result"/"error" (response)', readable_id)


def decode(data: bytes | str | dict[str, Any] | list[Any], *, allow_batch: bool = False) -> Decoded:
    """Turn one frame into a message, a :class:`Batch`, or an :class:`InvalidMessage`. Never raises.

    ``allow_batch`` is true only for revision 2025-03-26; everywhere else an array is recognised as a
    batch and refused with ``-32600``.
    """
    if type(data) is str:  # the usual frame: go straight to the parser
        raw: str | None = data
        try:
            obj: Any = json.loads(data)
        except (ValueError, RecursionError) as exc:
            return _invalid(data, PARSE_ERROR, f"not valid JSON: {exc}")
    elif isinstance(data, (dict, list)):
        obj = data
        raw = None
    else:
        if isinstance(data, (bytes, bytearray, memoryview)):
            try:
                raw = bytes(data).decode("utf-8")
            except UnicodeDecodeError as exc:
                text = bytes(data).decode("utf-8", errors="replace")
                return _invalid(text, PARSE_ERROR, f"the bytes are not valid UTF-8 ({exc.reason})")
        else:
            raw = data
        try:
            obj = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            return _invalid(raw, PARSE_ERROR, f"not valid JSON: {exc}")
    if isinstance(obj, list):
        text = raw if raw is not None else json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
        if not allow_batch:
            return _invalid(text, INVALID_REQUEST,
                            "JSON-RPC batches are not allowed in this MCP revision (only 2025-03-26 had them)")
        if not obj:
            return _invalid(text, INVALID_REQUEST, "an empty batch is invalid")
        return Batch(tuple(parse_object(item) for item in obj))
    return parse_object(obj, raw)


def to_dict(message: JSONRPCMessage) -> dict[str, Any]:
    """The message as a plain JSON object, members in the conventional order."""
    return message.to_dict()


def encode(message: JSONRPCMessage | Batch | dict[str, Any]) -> str:
    """Serialise compactly (no spaces, UTF-8 kept as is). The result never contains a raw newline,
    because JSON escapes newlines inside strings: that is what makes stdio framing safe."""
    return json.dumps(json_value(message), separators=(",", ":"), ensure_ascii=False)


def json_value(message: JSONRPCMessage | Batch | dict[str, Any]) -> Any:
    """What :func:`encode` serialises: the message's JSON object (a list of them for a batch)."""
    if isinstance(message, Batch):
        obj: Any = [m.reply.to_dict() if isinstance(m, InvalidMessage) else m.to_dict() for m in message.items]
    elif isinstance(message, dict):
        obj = message
    else:
        obj = message.to_dict()
    return obj


def kind_of(message: JSONRPCMessage) -> str:
    """``"request"``, ``"notification"``, ``"response"`` or ``"error"``: the word the course uses."""
    if isinstance(message, JSONRPCRequest):
        return "request"
    if isinstance(message, JSONRPCNotification):
        return "notification"
    if isinstance(message, JSONRPCResultResponse):
        return "response"
    return "error"
