"""Reference solution for ex05_who_controls. Try the exercise before reading this."""

from __future__ import annotations

from typing import Any

CONTROLLER = {"tools/list": "model", "resources/list": "application", "resources/templates/list": "application",
              "prompts/list": "user"}


def who_controls(entry: dict[str, Any]) -> str:
    """The list an entry came from decides; its name and description do not."""
    return CONTROLLER[entry["list"]]


def needs_approval(tool: dict[str, Any], trusted: bool) -> bool:
    """Skip the user only for a trusted server's read-only tool that does not call itself destructive."""
    if not trusted:
        return True  # annotations from an untrusted server are only hints
    annotations = tool.get("annotations", {})
    return not (annotations.get("readOnlyHint") is True and annotations.get("destructiveHint") is not True)
