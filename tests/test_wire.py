"""The JSON-RPC 2.0 codec: exact rules, and never an uncaught exception."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_sim.protocol.schema import find_spec_dir, schema_errors
from mcp_sim.wire import (
    INVALID_REQUEST,
    PARSE_ERROR,
    Batch,
    InvalidMessage,
    JSONRPCErrorResponse,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResultResponse,
    decode,
    encode,
    error_object,
)

SPEC = find_spec_dir()


def test_request_round_trip() -> None:
    text = '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"x":"é"}}}'
    msg = decode(text)
    assert msg == JSONRPCRequest(7, "tools/call", {"name": "echo", "arguments": {"x": "é"}})
    assert encode(msg) == text  # compact, members in conventional order, UTF-8 kept


def test_each_kind_is_recognised() -> None:
    assert isinstance(decode('{"jsonrpc":"2.0","method":"notifications/initialized"}'), JSONRPCNotification)
    assert isinstance(decode('{"jsonrpc":"2.0","id":"a","result":{}}'), JSONRPCResultResponse)
    err = decode('{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}')
    assert isinstance(err, JSONRPCErrorResponse) and err.error.code == -32601
    unread = decode('{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}')
    assert isinstance(unread, JSONRPCErrorResponse) and unread.id is None


def test_parse_error_has_no_id() -> None:
    out = decode(b'{"jsonrpc":"2.0","id":1,"method":')
    assert isinstance(out, InvalidMessage)
    assert out.reply.error.code == PARSE_ERROR
    assert "id" not in out.reply.to_dict()


def test_invalid_utf8_is_a_parse_error() -> None:
    out = decode(b'{"jsonrpc":"2.0","id":1,"method":"\xff"}')
    assert isinstance(out, InvalidMessage) and out.reply.error.code == PARSE_ERROR


@pytest.mark.parametrize("raw_id", ["null", "1.5", "true", "[1]", '{"a":1}'])
def test_bad_ids_are_invalid_requests_without_id(raw_id: str) -> None:
    out = decode(f'{{"jsonrpc":"2.0","id":{raw_id},"method":"ping"}}')
    assert isinstance(out, InvalidMessage)
    assert out.reply.error.code == INVALID_REQUEST
    assert out.reply.id is None  # the id could not be read, so the answer omits it


def test_wrong_version_keeps_a_readable_id() -> None:
    out = decode('{"jsonrpc":"1.0","id":"q","method":"ping"}')
    assert isinstance(out, InvalidMessage)
    assert out.reply.id == "q" and out.reply.error.code == INVALID_REQUEST


def test_positional_params_are_refused() -> None:
    out = decode('{"jsonrpc":"2.0","id":3,"method":"tools/list","params":[1,2]}')
    assert isinstance(out, InvalidMessage) and out.reply.error.code == INVALID_REQUEST
    assert out.reply.id == 3


def test_invalid_response_is_not_answered() -> None:
    out = decode('{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}')
    assert isinstance(out, InvalidMessage) and not out.is_answerable


def test_batches_only_where_allowed() -> None:
    text = '[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]'
    refused = decode(text)
    assert isinstance(refused, InvalidMessage)
    assert refused.reply.error.code == INVALID_REQUEST and "batch" in refused.reason
    allowed = decode(text, allow_batch=True)
    assert isinstance(allowed, Batch) and len(allowed.items) == 2
    assert isinstance(allowed.items[0], JSONRPCRequest)
    empty = decode("[]", allow_batch=True)
    assert isinstance(empty, InvalidMessage) and empty.reply.error.code == INVALID_REQUEST


def test_encode_never_contains_a_newline() -> None:
    msg = JSONRPCRequest(1, "tools/call", {"name": "t", "arguments": {"text": "line one\nline two\r\n"}})
    assert "\n" not in encode(msg) and "\r" not in encode(msg)
    assert decode(encode(msg)) == msg


def test_error_object_defaults_to_standard_message() -> None:
    assert error_object(-32601).message == "Method not found"
    assert error_object(-32602, data={"x": 1}).to_dict() == {"code": -32602, "message": "Invalid params",
                                                             "data": {"x": 1}}


# --- properties ----------------------------------------------------------------------------------

json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
json_values = st.recursive(json_scalars, lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=6), c,
                                                                                               max_size=4),
                           max_leaves=12)
message_like = st.fixed_dictionaries(
    {}, optional={"jsonrpc": st.sampled_from(["2.0", "1.0", 2]), "id": json_values, "method": json_values,
                  "params": json_values, "result": json_values, "error": json_values})


def _check(out: object) -> None:
    if isinstance(out, InvalidMessage):
        assert out.reply.error.code in (PARSE_ERROR, INVALID_REQUEST)
        reply = out.reply.to_dict()
        assert reply["jsonrpc"] == "2.0" and "error" in reply
        assert json.loads(encode(out.reply)) == reply
    elif isinstance(out, Batch):
        for item in out.items:
            _check(item)
    else:
        assert isinstance(out, (JSONRPCRequest, JSONRPCNotification, JSONRPCResultResponse, JSONRPCErrorResponse))
        assert decode(encode(out)) == out  # every valid message survives a round trip


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=200))
def test_any_bytes_give_a_message_or_the_right_error(data: bytes) -> None:
    _check(decode(data))


@settings(max_examples=400, deadline=None)
@given(message_like)
def test_any_json_object_gives_a_message_or_the_right_error(obj: dict) -> None:
    _check(decode(json.dumps(obj)))
    _check(decode(json.dumps([obj]), allow_batch=True))


@pytest.mark.skipif(SPEC is None, reason="official MCP schemas not found (../shared/spec or MCP_SIM_SPEC_DIR)")
@pytest.mark.parametrize("revision", ["2025-06-18", "2025-11-25", "2026-07-28"])
@settings(max_examples=150, deadline=None)
@given(obj=message_like)
def test_error_replies_are_valid_per_schema(revision: str, obj: dict) -> None:
    out = decode(json.dumps(obj))
    if isinstance(out, InvalidMessage):
        name = "JSONRPCError" if revision == "2025-06-18" else "JSONRPCErrorResponse"
        if revision == "2025-06-18" and out.reply.id is None:
            return  # 2025-06-18's schema requires an id on every error; later revisions made it optional
        assert schema_errors(out.reply.to_dict(), revision, name) == []
