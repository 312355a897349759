"""Logging: ``notifications/message`` from server to client (spec "Server utilities / Logging";
course chapter 04).

Levels follow syslog (RFC 5424), least to most severe. Legacy clients choose the lowest level they
want with ``logging/setLevel`` once per connection; in 2026-07-28 (where logging is deprecated) a
client opts in per request with ``_meta["io.modelcontextprotocol/logLevel"]``, and without it the
server sends no log messages for that request at all.
"""

from __future__ import annotations

from typing import Any, Final

from mcp_sim.protocol.errors import invalid_params

LOGGING_LEVELS: Final = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


def check_level(level: Any) -> str:
    """``level`` if it is a logging level, else ``-32602``."""
    if level not in LOGGING_LEVELS:
        raise invalid_params(f"Invalid log level: {level!r}; expected one of {', '.join(LOGGING_LEVELS)}")
    return str(level)


def is_at_least(level: str, threshold: str | None) -> bool:
    """True when a message at ``level`` passes the client's ``threshold`` (``None``: nothing passes)."""
    if threshold is None:
        return False
    return LOGGING_LEVELS.index(level) >= LOGGING_LEVELS.index(threshold)


def message_params(level: str, data: Any, logger_name: str | None = None) -> dict[str, Any]:
    """The params of a ``notifications/message``."""
    params: dict[str, Any] = {"level": level}
    if logger_name is not None:
        params["logger"] = logger_name
    params["data"] = data
    return params
