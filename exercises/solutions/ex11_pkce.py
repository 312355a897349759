"""Reference solution for ex11_pkce. Try the exercise before reading this."""

from __future__ import annotations

import base64
import hashlib
import hmac


def code_challenge(verifier: str) -> str:
    """The S256 challenge: BASE64URL(SHA-256(ASCII(verifier))), without padding."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")


def authorize_error(params: dict[str, str]) -> str | None:
    """What /authorize answers to a request's PKCE parameters: an error code, or None to go on."""
    if not params.get("code_challenge"):
        return "invalid_request"
    if params.get("code_challenge_method") != "S256":  # absent means plain, and plain is refused
        return "invalid_request"
    return None


def verifier_matches(challenge: str, verifier: str) -> bool:
    """The token endpoint's check: the presented verifier hashes to the stored challenge."""
    return hmac.compare_digest(code_challenge(verifier), challenge)
