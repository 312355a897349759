"""The accelerated twin of :mod:`mcp_sim.wire.jsonrpc`'s ``encode`` and ``decode`` (see
:mod:`mcp_sim.accelerated`).

Same text out, same messages in, in fewer steps, using only the ``json`` module's documented API (not
its C machinery: ``c_make_encoder`` and a decoder's ``scan_once`` are the private ``_json`` module under
another name):

* ``json.dumps`` with options builds a new ``JSONEncoder`` for every call; :func:`encode` reuses one,
  which does not look for circular references (a message is a tree of JSON values: a cycle could
  only come from a bug, and ends in ``RecursionError`` instead of ``ValueError``).
* ``json.loads`` skips leading whitespace with a regular expression and checks for trailing data;
  :func:`decode` asks a reused ``JSONDecoder`` (``raw_decode``) for the one value at the start of the
  frame, and anything unusual (whitespace, extra data, an error, a batch) goes to the plain ``decode``,
  so the results and the error messages are exactly the plain ones.
* The four message types are turned into their JSON objects here, in the order their own
  ``to_dict`` writes the members (the same text).
* The well-formed request, notification and result are recognised at a glance; anything else takes
  the plain :func:`~mcp_sim.wire.jsonrpc.parse_object`, which also says what is wrong.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final

from mcp_sim.wire import jsonrpc
from mcp_sim.wire.jsonrpc import (
    JSONRPC_VERSION,
    Batch,
    Decoded,
    InvalidMessage,
    JSONRPCErrorResponse,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResultResponse,
)

_ENCODER: Final = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, check_circular=False)
_DECODER: Final = json.JSONDecoder()
_REQUEST_MEMBERS: Final = frozenset({"jsonrpc", "id", "method", "params"})
_RESULT_MEMBERS: Final = frozenset({"jsonrpc", "id", "result"})
_new_tuple: Final = tuple.__new__
"""Makes a message (a named tuple) from its fields in order, as its class does, minus a call."""
_SCAN: Final[Callable[[str], tuple[Any, int]]] = _DECODER.raw_decode
"""``(value, end)`` of the JSON value at the start of a text (``ValueError`` if there is none)."""
_ENCODE_VALUE: Final[Callable[[Any], str]] = _ENCODER.encode
_MESSAGE_TYPES: Final = frozenset({JSONRPCRequest, JSONRPCNotification, JSONRPCResultResponse, JSONRPCErrorResponse})


def encode(message: JSONRPCMessage | Batch | dict[str, Any]) -> str:
    """:func:`mcp_sim.wire.jsonrpc.encode`, with one encoder made once."""
    kind = type(message)
    if kind is JSONRPCRequest:
        rid, method, params = message  # type: ignore[misc]
        if params is None:
            return _ENCODE_VALUE({"jsonrpc": JSONRPC_VERSION, "id": rid, "method": method})
        return _ENCODE_VALUE({"jsonrpc": JSONRPC_VERSION, "id": rid, "method": method, "params": params})
    if kind is JSONRPCResultResponse:
        rid, result = message  # type: ignore[misc]
        return _ENCODE_VALUE({"jsonrpc": JSONRPC_VERSION, "id": rid, "result": result})
    if kind in _MESSAGE_TYPES:
        return _ENCODE_VALUE(message.to_dict())  # type: ignore[union-attr]
    return _ENCODE_VALUE(jsonrpc.json_value(message))


def decode(text: str) -> JSONRPCMessage | InvalidMessage:
    """``jsonrpc.decode(text, allow_batch=False)`` for one frame of text."""
    try:
        obj, end = _SCAN(text)
    except (ValueError, RecursionError):
        obj, end = None, -1
    if end != len(text) or type(obj) is not dict:
        decoded: Decoded = jsonrpc.decode(text, allow_batch=False)
        assert not isinstance(decoded, Batch)
        return decoded
    # The two frames of a round trip, told by their exact set of members.
    members = obj.keys()
    if members == _REQUEST_MEMBERS:
        rid, method, params = obj["id"], obj["method"], obj["params"]
        if obj["jsonrpc"] == JSONRPC_VERSION and (type(rid) is int or type(rid) is str) and type(method) is str \
                and method and type(params) is dict:
            return _new_tuple(JSONRPCRequest, (rid, method, params))  # type: ignore[no-any-return]
    elif members == _RESULT_MEMBERS:
        rid, result = obj["id"], obj["result"]
        if obj["jsonrpc"] == JSONRPC_VERSION and (type(rid) is int or type(rid) is str) and type(result) is dict:
            return _new_tuple(JSONRPCResultResponse, (rid, result))  # type: ignore[no-any-return]
    if obj.get("jsonrpc") == JSONRPC_VERSION and "error" not in obj:
        if "method" in obj:
            method, params = obj["method"], obj.get("params")
            if type(method) is str and method and "result" not in obj \
                    and (type(params) is dict or (params is None and "params" not in obj)):
                if "id" not in obj:
                    return JSONRPCNotification(method, params)
                rid = obj["id"]
                if type(rid) is int or type(rid) is str:
                    return JSONRPCRequest(rid, method, params)
        elif "result" in obj:
            rid, result = obj.get("id"), obj["result"]
            if (type(rid) is int or type(rid) is str) and type(result) is dict:
                return JSONRPCResultResponse(rid, result)
    return jsonrpc.parse_object(obj, text)
