"""The quick argument check of tools/call agrees with jsonschema (course chapter 05).

Every tool call validates its arguments. For the schemas type hints produce, the server first asks
:func:`~mcp_sim.capabilities.tools.plain_checker` (the schema compiled by ``fastjsonschema``); only
when it is not sure does ``jsonschema`` run (and explain the error). These tests hold the quick check
to the reference: it must never accept what jsonschema rejects, and for plain schemas it must accept
what jsonschema accepts (no needless slow path).
"""

from __future__ import annotations

from typing import Any

import fastjsonschema
import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_sim.capabilities.tools import is_plain_schema, plain_checker, surely_valid

NAMES = st.sampled_from(["a", "b", "city", "n"])
TYPES = st.sampled_from(["string", "integer", "number", "boolean", "null", "array", "object"])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(-2, 2, allow_nan=False) | st.sampled_from(["", "x", "city"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(NAMES, inner, max_size=3),
    max_leaves=8,
)


def _schemas(depth: int) -> st.SearchStrategy[dict[str, Any]]:
    leaf_type = st.one_of(TYPES, st.lists(TYPES, min_size=1, max_size=3, unique=True))
    parts: dict[str, st.SearchStrategy[Any]] = {
        "type": leaf_type,
        "enum": st.lists(st.sampled_from(["x", "city", ""]), min_size=1, max_size=3, unique=True),
        "description": st.just("words"),
    }
    if depth > 0:
        sub = _schemas(depth - 1)
        parts["properties"] = st.dictionaries(NAMES, sub, max_size=3)
        parts["required"] = st.lists(NAMES, max_size=3, unique=True)
        parts["additionalProperties"] = st.booleans()
        parts["items"] = sub
    return st.fixed_dictionaries({}, optional=parts)


@settings(max_examples=400, deadline=None)
@given(schema=_schemas(2), value=json_values)
def test_the_quick_check_agrees_with_jsonschema(schema: dict[str, Any], value: Any) -> None:
    assert is_plain_schema(schema)
    valid = jsonschema.Draft202012Validator(schema).is_valid(value)
    quick = plain_checker(schema)(value)
    assert quick == surely_valid(schema, value)
    if quick:
        assert valid, f"accepted an invalid value {value!r} for {schema}"
    if valid and _compiles(schema):
        assert quick, f"sent a valid value {value!r} for {schema} the slow way"


def _compiles(schema: dict[str, Any]) -> bool:
    """fastjsonschema refuses a schema no object can satisfy (required names it forbids); then the
    quick check is never sure and jsonschema decides every value."""
    try:
        fastjsonschema.compile(schema)
    except fastjsonschema.JsonSchemaDefinitionException:
        return False
    return True


def test_a_schema_with_other_keywords_is_never_surely_valid() -> None:
    schema = {"type": "string", "minLength": 3}
    assert not is_plain_schema(schema)
    assert plain_checker(schema)("a long string") is False  # "not sure": jsonschema decides


def test_an_enum_of_numbers_is_left_to_jsonschema() -> None:
    """Python's ``True == 1`` would let a compiled ``in`` accept ``true`` for ``enum: [1]``; JSON
    Schema does not, so such a schema is not plain and jsonschema judges it."""
    schema = {"enum": [1, 2]}
    assert not is_plain_schema(schema)
    assert not jsonschema.Draft202012Validator(schema).is_valid(True)
    assert plain_checker(schema)(True) is False


def test_a_tool_reports_invalid_arguments_in_jsonschemas_words() -> None:
    from mcp_sim.roles.server import Server

    server = Server("t")

    @server.tool()
    def count(n: int, label: str = "") -> int:
        return n

    tool = server.tools["count"]
    assert tool.argument_errors({"n": 3}) == []
    errors = tool.argument_errors({"n": "three"})
    assert len(errors) == 1 and errors[0].startswith("n: ") and "'three'" in errors[0]
    assert tool.argument_errors({}) == ["'n' is a required property"]


def test_booleans_are_not_integers_and_integers_are_numbers() -> None:
    assert plain_checker({"type": "integer"})(True) is False
    assert plain_checker({"type": "number"})(3) is True
    assert plain_checker({"type": "object", "required": ["a"]})({"b": 1}) is False
    assert plain_checker({"type": "object", "properties": {"a": {"type": "string"}},
                          "additionalProperties": False})({"a": "x", "b": 1}) is False


def test_text_arguments_reach_the_function_as_sent_with_its_own_defaults() -> None:
    """Strings and booleans skip the conversion step; extra arguments still never reach the function,
    and a missing optional one gets the function's default — exactly as with the conversion."""
    import anyio

    from mcp_sim.roles.server import Server

    server = Server("t")
    seen: list[tuple[str, bool, str]] = []

    @server.tool()
    def shout(text: str, loud: bool = False, suffix: str = "!") -> str:
        seen.append((text, loud, suffix))
        return text.upper() + suffix if loud else text + suffix

    @server.tool()
    def count(n: int) -> int:
        return n + 1

    tool = server.tools["shout"]
    assert tool._text_arguments and not server.tools["count"]._text_arguments

    async def main() -> list[object]:
        return [await tool.run({"text": "hi"}, None),  # type: ignore[arg-type]
                await tool.run({"text": "hi", "loud": True, "extra": 1}, None),  # type: ignore[arg-type]
                await server.tools["count"].run({"n": 1.0}, None)]  # type: ignore[arg-type]

    assert anyio.run(main) == ["hi!", "HI!", 2]
    assert seen == [("hi", False, "!"), ("hi", True, "!")]
