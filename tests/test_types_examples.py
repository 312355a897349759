"""Every official 2026-07-28 example parses into the model named by its folder and serialises back.

The examples live in ``<spec>/2026-07-28/examples/<TypeName>/<name>.json``. A round trip must give
back *the same JSON*, compared as text with sorted keys, so ``50`` must not come back as ``50.0`` and an
absent field must not come back as ``null``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from mcp_sim.protocol import types
from mcp_sim.protocol.schema import find_spec_dir, schema_errors

SPEC = find_spec_dir()
EXAMPLES = SPEC / "2026-07-28" / "examples" if SPEC is not None else None
NO_SPEC = "official MCP examples not found (set MCP_SIM_SPEC_DIR to the spec folder)"


def _example_files() -> list[Any]:
    if EXAMPLES is None or not EXAMPLES.is_dir():
        return [pytest.param(None, marks=pytest.mark.skip(reason=NO_SPEC), id="no-spec")]
    files = sorted(EXAMPLES.glob("*/*.json"))
    return [pytest.param(f, id=f"{f.parent.name}/{f.stem}") for f in files]


def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False)


@pytest.mark.parametrize("path", _example_files())
def test_example_round_trips(path: Path) -> None:
    type_name = path.parent.name
    data = json.loads(path.read_text(encoding="utf-8"))
    model = types.parse_as(type_name, data)
    assert type(model).__name__ == type_name
    assert _canonical(model.to_json()) == _canonical(data)


@pytest.mark.parametrize("path", _example_files())
def test_example_is_valid_against_its_schema_type(path: Path) -> None:
    """The examples themselves are valid (a guard against a broken spec copy)."""
    assert schema_errors(json.loads(path.read_text(encoding="utf-8")), "2026-07-28", path.parent.name) == []


def test_all_129_examples_are_present() -> None:
    if EXAMPLES is None:
        pytest.skip(NO_SPEC)
    assert len(list(EXAMPLES.glob("*/*.json"))) == 129


def test_every_example_folder_names_a_model() -> None:
    if EXAMPLES is None:
        pytest.skip(NO_SPEC)
    missing = sorted(p.name for p in EXAMPLES.iterdir() if p.is_dir() and p.name not in types.MODELS)
    assert missing == []


# --- a few properties the round trip alone would not show --------------------------------------------

def test_maps_behave_like_dicts() -> None:
    result = types.InputRequiredResult.model_validate({
        "resultType": "input_required",
        "inputRequests": {
            "login": {"method": "elicitation/create",
                      "params": {"message": "Who are you?",
                                 "requestedSchema": {"type": "object",
                                                     "properties": {"name": {"type": "string"}}}}},
            "roots": {"method": "roots/list"},
        },
    })
    assert result.inputRequests is not None
    assert list(result.inputRequests) == ["login", "roots"]
    assert isinstance(result.inputRequests["login"], types.ElicitRequest)
    assert isinstance(result.inputRequests["login"].params, types.ElicitRequestFormParams)
    assert isinstance(result.inputRequests["roots"], types.ListRootsRequest)


def test_input_required_result_needs_something() -> None:
    with pytest.raises(ValidationError):
        types.InputRequiredResult.model_validate({"resultType": "input_required"})


@pytest.mark.parametrize(("field", "model"), [
    ({"type": "string"}, types.StringSchema),
    ({"type": "integer", "minimum": 0}, types.NumberSchema),
    ({"type": "boolean", "default": True}, types.BooleanSchema),
    ({"type": "string", "enum": ["a", "b"]}, types.UntitledSingleSelectEnumSchema),
    ({"type": "string", "oneOf": [{"const": "a", "title": "A"}]}, types.TitledSingleSelectEnumSchema),
    ({"type": "array", "items": {"type": "string", "enum": ["a"]}}, types.UntitledMultiSelectEnumSchema),
    ({"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}]}}, types.TitledMultiSelectEnumSchema),
    ({"type": "string", "enum": ["a"], "enumNames": ["A"]}, types.LegacyTitledEnumSchema),
])
def test_form_fields_pick_the_right_model(field: dict[str, Any], model: type[BaseModel]) -> None:
    schema = types.ElicitRequestedSchema.model_validate({"type": "object", "properties": {"f": field}})
    assert type(schema.properties["f"]) is model


def test_unknown_fields_survive_the_round_trip() -> None:
    data = {"type": "text", "text": "hi", "x-future": {"a": 1}}
    assert types.TextContent.model_validate(data).to_json() == data


def test_explicit_null_survives_but_absent_stays_absent() -> None:
    assert types.Task.model_validate(
        {"taskId": "t", "status": "working", "createdAt": "a", "lastUpdatedAt": "b", "ttl": None}
    ).to_json()["ttl"] is None
    assert "isError" not in types.CallToolResult(content=[]).to_json()


def test_constant_fields_are_always_written() -> None:
    assert types.TextContent(text="hi").to_json() == {"type": "text", "text": "hi"}
    assert types.InputRequiredResult(requestState="s").to_json() == {"resultType": "input_required",
                                                                      "requestState": "s"}
