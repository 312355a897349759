"""Reference solution for ex10_sandbox_policy. Try the exercise before reading this."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlparse


def sandbox_policy(needs: dict[str, Any], roots: list[str]) -> dict[str, list[str]]:
    """Exactly what this server declared, plus read and write inside its roots; nothing else."""
    root_paths = [urlparse(uri).path for uri in roots]
    return {"readable": [*needs.get("directories", []), *root_paths],
            "writable": root_paths,
            "environment": list(needs.get("environment", [])),
            "egress": list(needs.get("egress", []))}
