"""Reference solution for ex05_pagination. Try the exercise before reading this."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any


def _encode(offset: int) -> str:
    return base64.urlsafe_b64encode(json.dumps({"offset": offset}).encode()).decode("ascii")


def _decode(cursor: str) -> int | None:
    """The offset inside a cursor this server issued, or None."""
    try:
        body = json.loads(base64.urlsafe_b64decode(cursor.encode("ascii")).decode("utf-8"))
    except (ValueError, UnicodeError, binascii.Error):
        return None
    offset = body.get("offset") if isinstance(body, dict) else None
    return offset if isinstance(offset, int) and not isinstance(offset, bool) else None


def list_page(items: list[Any], cursor: str | None, page_size: int) -> dict[str, Any]:
    """One page of ``items`` starting where ``cursor`` says (``None``: the first page)."""
    start = 0
    if cursor is not None:
        offset = _decode(cursor)
        if offset is None or not 0 <= offset <= len(items):  # the end itself: an empty last page
            return {"error": {"code": -32602, "message": f"Invalid cursor: {cursor!r}"}}
        start = offset
    end = start + page_size
    page: dict[str, Any] = {"items": items[start:end]}
    if end < len(items):
        page["nextCursor"] = _encode(end)
    return page
