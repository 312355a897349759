"""Pagination of list results (spec "Server utilities / Pagination"; course chapter 05).

``tools/list``, ``resources/list``, ``resources/templates/list``, ``prompts/list`` (and the 2025-11-25
``tasks/list``) return one page and, when more remain, a ``nextCursor``. The cursor is *opaque*: the
client must not read or build one, only echo it. Here it is base64 of a small JSON object naming the
list and the offset; a cursor that does not decode, or belongs to another list, is ``-32602``.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from mcp_sim.protocol.errors import invalid_params

T = TypeVar("T")


def encode_cursor(kind: str, offset: int) -> str:
    """An opaque cursor for the page of ``kind`` starting at ``offset``."""
    raw = json.dumps({"list": kind, "offset": offset}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: Any, kind: str) -> int:
    """The offset inside ``cursor``, or ``-32602`` when the cursor is not one this server issued."""
    rule = "A cursor is opaque: clients echo the nextCursor they received; an invalid cursor is -32602."
    if not isinstance(cursor, str):
        raise invalid_params("Invalid cursor: it must be a string", rule=rule)
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded.encode()))
    except (binascii.Error, ValueError, UnicodeDecodeError):
        raise invalid_params(f"Invalid cursor: {cursor!r}", rule=rule) from None
    if not isinstance(data, dict) or data.get("list") != kind or not isinstance(data.get("offset"), int) \
            or data["offset"] < 0:
        raise invalid_params(f"Invalid cursor for {kind}: {cursor!r}", rule=rule)
    offset: int = data["offset"]
    return offset


def paginate(items: Sequence[T], cursor: Any, page_size: int | None, kind: str) -> tuple[list[T], str | None]:
    """One page of ``items`` and the cursor of the next page (``None`` on the last page)."""
    offset = 0 if cursor is None else decode_cursor(cursor, kind)
    if offset > len(items):
        raise invalid_params(f"Invalid cursor for {kind}: the list is shorter now")
    if page_size is None or page_size <= 0:
        return list(items[offset:]), None
    end = offset + page_size
    page = list(items[offset:end])
    return page, (encode_cursor(kind, end) if end < len(items) else None)


def page_result(field: str, items: Sequence[T], cursor: Any, page_size: int | None, kind: str,
                render: Callable[[T], Any]) -> tuple[dict[str, Any], list[T]]:
    """A list result: ``{field: [one page, rendered], "nextCursor"?: …}``, and the page itself (the
    caller adds what its revision needs, such as the 2026-07-28 caching hints)."""
    page, next_cursor = paginate(items, cursor, page_size, kind)
    result: dict[str, Any] = {field: [render(item) for item in page]}
    if next_cursor is not None:
        result["nextCursor"] = next_cursor
    return result, page
