"""ex11_pkce — PKCE with S256, from both sides.

Edit this file, then grade it: ``grade("ex11_pkce")`` in a notebook or ``mcp-sim grade ex11_pkce``
in a terminal. The task is described in README.md beside this file.
"""

from __future__ import annotations


def code_challenge(verifier: str) -> str:
    """The S256 code challenge of ``verifier``."""
    raise NotImplementedError("write code_challenge()")


def authorize_error(params: dict[str, str]) -> str | None:
    """What the authorization endpoint answers to these PKCE parameters (``code_challenge``,
    ``code_challenge_method``, either may be absent): an OAuth error code, or None to go on."""
    raise NotImplementedError("write authorize_error()")


def verifier_matches(challenge: str, verifier: str) -> bool:
    """The token endpoint's check: does the presented ``verifier`` prove the stored ``challenge``?"""
    raise NotImplementedError("write verifier_matches()")
