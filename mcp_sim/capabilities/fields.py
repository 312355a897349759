"""Which fields each revision's objects know (course chapter 03, "Revisions").

Tools, resources, prompts and implementations gained fields over time: ``title`` in 2025-06-18,
``icons`` in 2025-11-25, the experimental ``execution`` only in 2025-11-25. A server that speaks
several revisions builds one description of each thing and strips, per revision, the fields that
revision's schema does not define, so what goes on the wire is exactly that revision's shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

# type name -> field -> (first revision that has it, last revision that has it or None)
FIELD_REVISIONS: Final[Mapping[str, Mapping[str, tuple[str, str | None]]]] = {
    "Tool": {"title": ("2025-06-18", None), "annotations": ("2025-03-26", None),
             "outputSchema": ("2025-06-18", None), "icons": ("2025-11-25", None),
             "execution": ("2025-11-25", "2025-11-25"), "_meta": ("2025-06-18", None)},
    "Resource": {"title": ("2025-06-18", None), "icons": ("2025-11-25", None), "_meta": ("2025-06-18", None)},
    "ResourceTemplate": {"title": ("2025-06-18", None), "icons": ("2025-11-25", None),
                         "_meta": ("2025-06-18", None)},
    "Prompt": {"title": ("2025-06-18", None), "icons": ("2025-11-25", None), "_meta": ("2025-06-18", None)},
    "PromptArgument": {"title": ("2025-06-18", None)},
    "Implementation": {"title": ("2025-06-18", None), "description": ("2025-11-25", None),
                       "icons": ("2025-11-25", None), "websiteUrl": ("2025-11-25", None)},
    "CallToolResult": {"structuredContent": ("2025-06-18", None)},
}


def has_field(type_name: str, field: str, revision: str) -> bool:
    """True when ``revision``'s ``type_name`` defines ``field`` (revisions compare as dates)."""
    span = FIELD_REVISIONS.get(type_name, {}).get(field)
    if span is None:
        return True
    first, last = span
    return revision >= first and (last is None or revision <= last)


def for_revision(type_name: str, obj: Mapping[str, Any], revision: str) -> dict[str, Any]:
    """``obj`` without the fields ``revision`` does not know and without ``None`` values."""
    return {k: v for k, v in obj.items() if v is not None and has_field(type_name, k, revision)}
