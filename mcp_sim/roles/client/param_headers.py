"""Tool parameters mirrored into HTTP headers: ``x-mcp-header`` (2026-07-28, Streamable HTTP).

A server can mark a tool's input property with ``"x-mcp-header": "Region"``. A client calling that
tool over HTTP then copies the argument's value into a header, ``Mcp-Param-Region: us-west1``, so a
gateway or load balancer can route on it without parsing the JSON body. Two sets of rules:

* **the annotation** must be usable, or the client leaves the whole tool out of what it offers (one
  bad tool never hides the others): the name is not empty and is an HTTP token (visible ASCII, no
  spaces, colons or control characters); it sits on a ``string``, ``integer`` or ``boolean``
  property only; no two properties of a tool use the same name, ignoring case;
* **the value** goes out as text: ``true``/``false``, the integer's digits, or the string itself —
  unless the string could not travel safely in a header (a character outside printable ASCII, or
  whitespace at either end), in which case it is sent as ``=?base64?<UTF-8 bytes in Base64>?=``.
  A ``null`` or absent argument sends no header at all.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

ANNOTATION = "x-mcp-header"
HEADER_PREFIX = "Mcp-Param-"
PRIMITIVE_TYPES = frozenset({"string", "integer", "boolean"})
_TOKEN_CHARS = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def annotation_problem(input_schema: Any) -> str | None:
    """Why this ``inputSchema``'s ``x-mcp-header`` annotations are unusable, or ``None`` when they
    are fine (or absent). A tool with a problem must be excluded by the client."""
    props = input_schema.get("properties") if isinstance(input_schema, Mapping) else None
    if not isinstance(props, Mapping):
        return None
    seen: dict[str, str] = {}
    for prop_name, prop in props.items():
        if not isinstance(prop, Mapping) or ANNOTATION not in prop:
            continue
        header = prop[ANNOTATION]
        if not isinstance(header, str) or not header:
            return f"property {prop_name!r}: {ANNOTATION} must be a non-empty string"
        if any(ch not in _TOKEN_CHARS for ch in header):
            return f"property {prop_name!r}: {ANNOTATION} {header!r} is not an HTTP token (visible ASCII only)"
        if prop.get("type") not in PRIMITIVE_TYPES:
            return (f"property {prop_name!r}: {ANNOTATION} is only allowed on string, integer or boolean "
                    f"properties, not {prop.get('type')!r}")
        if header.lower() in seen:
            return f"properties {seen[header.lower()]!r} and {prop_name!r} both use {ANNOTATION} {header!r}"
        seen[header.lower()] = prop_name
    return None


def header_names(input_schema: Any) -> dict[str, str]:
    """``{property: header name}`` for a tool whose annotations are valid (empty when none)."""
    if annotation_problem(input_schema) is not None:
        return {}
    props = input_schema.get("properties") if isinstance(input_schema, Mapping) else None
    if not isinstance(props, Mapping):
        return {}
    return {name: prop[ANNOTATION] for name, prop in props.items()
            if isinstance(prop, Mapping) and isinstance(prop.get(ANNOTATION), str)}


def needs_base64(text: str) -> bool:
    """A string that cannot travel as a plain header value."""
    return text != text.strip() or any(not 0x20 <= ord(ch) <= 0x7E for ch in text)


def encode_value(value: Any) -> str | None:
    """The header text for one argument, or ``None`` when no header is sent (null, or not a primitive)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        if needs_base64(value):
            return "=?base64?" + base64.b64encode(value.encode("utf-8")).decode("ascii") + "?="
        return value
    return None


def param_headers(names: Mapping[str, str], arguments: Any) -> dict[str, str]:
    """The ``Mcp-Param-*`` headers of one ``tools/call`` with ``arguments``."""
    if not isinstance(arguments, Mapping):
        return {}
    out: dict[str, str] = {}
    for prop, header in names.items():
        text = encode_value(arguments.get(prop))
        if text is not None:
            out[HEADER_PREFIX + header] = text
    return out
