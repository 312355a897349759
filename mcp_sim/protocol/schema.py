"""Validation against the official MCP JSON schemas, one per revision.

The schemas of every modelled revision and of the tasks extension ship inside the package, in
``mcp_sim/protocol/schemas/`` (``SOURCE.md`` there names the upstream commits and the licence), so
validation works on a machine that has only a clone. :func:`find_spec_dir` is the one place that
finds them; the ``MCP_SIM_SPEC_DIR`` environment variable may point at another folder of the same
layout (``<revision>/schema.json``, ``ext-tasks/draft/schema.json``).

The specification's prose pages are not shipped. :func:`find_pages_dir` finds them for the tests that
check the rulebook's citations (``MCP_SIM_SPEC_PAGES``, else ``pages/`` inside ``MCP_SIM_SPEC_DIR``,
else ``../shared/spec/pages`` beside the checkout); those tests skip with a reason where it is ``None``.

Schemas up to 2025-06-18 are JSON Schema draft-07 with ``definitions``; from 2025-11-25 they are
draft 2020-12 with ``$defs``. The ``jsonschema`` library handles both; this module only knows where
each revision keeps its definitions.
"""

from __future__ import annotations

import json
import os
import sys
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jsonschema

SHIPPED_SPEC_DIR = Path(__file__).resolve().parent / "schemas"
_PROJECT_ROOT = Path(__file__).resolve().parents[2]


def find_spec_dir() -> Path | None:
    """The folder holding ``<revision>/schema.json`` files: ``MCP_SIM_SPEC_DIR`` when it holds them,
    else the copy shipped in the package. ``None`` only if both are missing (a damaged install)."""
    candidates = []
    env = os.environ.get("MCP_SIM_SPEC_DIR")
    if env:
        candidates.append(Path(env))
    candidates.append(SHIPPED_SPEC_DIR)
    for folder in candidates:
        if (folder / "2026-07-28" / "schema.json").is_file():
            return folder
    return None


def find_pages_dir() -> Path | None:
    """The folder of the specification's pages (``2025-11-25/``, ``2026-07-28/``, ``ext-tasks/``), or
    ``None`` when they are not on this machine. They are reference text, not part of the package."""
    candidates = []
    if os.environ.get("MCP_SIM_SPEC_PAGES"):
        candidates.append(Path(os.environ["MCP_SIM_SPEC_PAGES"]))
    if os.environ.get("MCP_SIM_SPEC_DIR"):
        candidates.append(Path(os.environ["MCP_SIM_SPEC_DIR"]) / "pages")
    candidates.append(_PROJECT_ROOT.parent / "shared" / "spec" / "pages")
    for folder in candidates:
        if (folder / "2026-07-28" / "index.mdx").is_file():
            return folder
    return None


@cache
def load_schema(revision: str) -> dict[str, Any]:
    """The official schema of ``revision`` (``"ext-tasks"`` gives the tasks extension's draft)."""
    folder = find_spec_dir()
    if folder is None:
        raise FileNotFoundError("the official MCP schemas are missing from the package (reinstall mcp-sim, "
                                "or set MCP_SIM_SPEC_DIR to a folder that holds them)")
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


def import_jsonschema() -> ModuleType:
    """The ``jsonschema`` library, imported without its optional IRI format checker.

    When the package ``rfc3987-syntax`` is installed (JupyterLab's event library asks for it),
    ``jsonschema`` imports it to offer the ``iri`` formats, and that import builds a parsing grammar:
    about four seconds, paid by every process on its first validation (a server's first call with
    wrong arguments, a grader's first schema check). Nothing here asserts those formats (the MCP
    schemas are validated without a format checker, and elicitation brings its own four checks), so
    this import hides that one package while ``jsonschema`` loads and puts everything back after. If
    the package was loaded already, nothing changes."""
    if "jsonschema" in sys.modules:
        return sys.modules["jsonschema"]
    hide = "rfc3987_syntax" not in sys.modules
    if hide:
        sys.modules["rfc3987_syntax"] = None  # type: ignore[assignment]  # None: "import" raises ImportError
    try:
        import jsonschema
    finally:
        if hide and sys.modules.get("rfc3987_syntax", 0) is None:
            del sys.modules["rfc3987_syntax"]
    return jsonschema


@cache
def _validator(revision: str, definition: str) -> jsonschema.protocols.Validator:
    schema = load_schema(revision)
    key = definitions_key(revision)
    if definition not in schema[key]:
        raise KeyError(f"{definition!r} is not defined in the {revision} schema")
    jsonschema = import_jsonschema()  # only when validating

    cls = jsonschema.Draft202012Validator if key == "$defs" else jsonschema.Draft7Validator
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
