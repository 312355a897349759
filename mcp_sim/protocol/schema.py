"""Validation against the official MCP JSON schemas, one per revision.

The schemas are not shipped in the package: they are looked up in a ``spec`` folder given by the
``MCP_SIM_SPEC_DIR`` environment variable, or in ``../shared/spec`` beside the project checkout. When
they are absent, :func:`find_spec_dir` returns ``None`` and tests that need them skip with a reason.

Schemas up to 2025-06-18 are JSON Schema draft-07 with ``definitions``; from 2025-11-25 they are
draft 2020-12 with ``$defs``. The ``jsonschema`` library handles both; this module only knows where
each revision keeps its definitions.
"""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jsonschema

_PROJECT_ROOT = Path(__file__).resolve().parents[2]


def find_spec_dir() -> Path | None:
    """The folder holding ``<revision>/schema.json`` files, or ``None`` when it is not here."""
    candidates = []
    env = os.environ.get("MCP_SIM_SPEC_DIR")
    if env:
        candidates.append(Path(env))
    candidates.append(_PROJECT_ROOT.parent / "shared" / "spec")
    for folder in candidates:
        if (folder / "2026-07-28" / "schema.json").is_file():
            return folder
    return None


@cache
def load_schema(revision: str) -> dict[str, Any]:
    """The official schema of ``revision`` (``"ext-tasks"`` gives the tasks extension's draft)."""
    folder = find_spec_dir()
    if folder is None:
        raise FileNotFoundError("the official MCP schemas are not available (set MCP_SIM_SPEC_DIR)")
    path = folder / ("ext-tasks/draft" if revision == "ext-tasks" else revision) / "schema.json"
    with path.open(encoding="utf-8") as fh:
        schema: dict[str, Any] = json.load(fh)
    return schema


def definitions_key(revision: str) -> str:
    """``"definitions"`` (draft-07, up to 2025-06-18) or ``"$defs"`` (2020-12, from 2025-11-25)."""
    schema = load_schema(revision)
    return "$defs" if "$defs" in schema else "definitions"


def definition_names(revision: str) -> list[str]:
    """Every type the revision's schema defines."""
    return sorted(load_schema(revision)[definitions_key(revision)])


@cache
def _validator(revision: str, definition: str) -> jsonschema.protocols.Validator:
    schema = load_schema(revision)
    key = definitions_key(revision)
    if definition not in schema[key]:
        raise KeyError(f"{definition!r} is not defined in the {revision} schema")
    from jsonschema import Draft7Validator, Draft202012Validator  # slow to import: only when validating

    cls = Draft202012Validator if key == "$defs" else Draft7Validator
    root = {k: v for k, v in schema.items() if k not in ("$ref", "anyOf", "oneOf")}
    root["$ref"] = f"#/{key}/{definition}"
    return cls(root)


def schema_errors(instance: Any, revision: str, definition: str = "JSONRPCMessage") -> list[str]:
    """All the ways ``instance`` breaks ``definition`` of ``revision``'s schema (empty if valid)."""
    validator = _validator(revision, definition)
    out = []
    for err in sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path)):
        where = "/".join(str(p) for p in err.absolute_path) or "(root)"
        out.append(f"{where}: {err.message}")
    return out


def is_valid(instance: Any, revision: str, definition: str = "JSONRPCMessage") -> bool:
    """True when ``instance`` is valid against ``definition`` of ``revision``'s schema."""
    return _validator(revision, definition).is_valid(instance)
