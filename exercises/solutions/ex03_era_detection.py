"""Reference solution for ex03_era_detection. Try the exercise before reading this."""

from __future__ import annotations

from typing import Any

MODERN_ONLY_CODES = {-32020, -32021, -32022}


def detect_era(reply: dict[str, Any] | None) -> str:
    """"modern" only on positive evidence; everything else — including a timeout (None) — is "legacy"."""
    if reply is None:
        return "legacy"
    result = reply.get("result")
    if isinstance(result, dict) and "supportedVersions" in result:
        return "modern"
    error = reply.get("error")
    if isinstance(error, dict) and error.get("code") in MODERN_ONLY_CODES:
        return "modern"
    return "legacy"


def detect_era_http(status: int, body: dict[str, Any] | None) -> str:
    """Over HTTP a modern answer is 200 with a DiscoverResult or 400 with a modern error."""
    if status in (200, 400) and body is not None:
        return detect_era(body)
    return "legacy"
