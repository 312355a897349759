"""Which fields each revision's objects know (course chapter 03, "Revisions").

Tools, resources, prompts and implementations gained fields over time: ``title`` in 2025-06-18,
``icons`` in 2025-11-25, the experimental ``execution`` only in 2025-11-25. A server that speaks
several revisions builds one description of each thing and strips, per revision, the fields that
revision's schema does not define, so what goes on the wire is exactly that revision's shape. Which
field lives in which revisions is a fact of the revisions registry
(:data:`~mcp_sim.protocol.revisions.FIELD_SPANS`); this module only applies it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp_sim.protocol.revisions import FIELD_SPANS, has_field

__all__ = ["FIELD_SPANS", "for_revision", "has_field"]

def for_revision(type_name: str, obj: Mapping[str, Any], revision: str) -> dict[str, Any]:
    """``obj`` without the fields ``revision`` does not know and without ``None`` values."""
    return {k: v for k, v in obj.items() if v is not None and has_field(type_name, k, revision)}
