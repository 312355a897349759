"""What a trace may show of an HTTP exchange: never a secret.

A trace is shown, saved and shared, so the HTTP head and OAuth body it keeps never carry a secret.
Every recording of an HTTP exchange — MCP's POSTs and GETs, OAuth's requests, the real wire's — goes
through these functions (:mod:`mcp_sim.transports.http` re-exports them); the parties themselves of
course see the real values.
"""

from __future__ import annotations

import json
from typing import Any, Final
from urllib.parse import parse_qs, urlencode

SECRET_FIELDS: Final = frozenset({"access_token", "refresh_token", "id_token", "code", "code_verifier",
                                  "client_secret", "client_assertion", "assertion", "password"})
"""Form, query and JSON fields whose values never appear in a trace: tokens, authorization codes,
PKCE verifiers, client secrets, client assertions and passwords."""


def mask(value: str) -> str:
    """``at_9f…`` → ``at_REDACTED``: the kind of secret (its short prefix) stays visible, its value does not."""
    kind, underscore, _ = value.partition("_")
    return f"{kind}_REDACTED" if underscore and kind.isalpha() and len(kind) <= 6 else "REDACTED"


def redact(text: str | None, content_type: str | None = None) -> str | None:
    """``text`` (a JSON or form body, a path or URL with a query) with the values of
    :data:`SECRET_FIELDS` masked."""
    if not text:
        return text
    if (content_type or "").startswith("application/json"):
        try:
            data = json.loads(text)
        except ValueError:
            return text
        if isinstance(data, dict):
            return json.dumps({k: mask(v) if k in SECRET_FIELDS and isinstance(v, str) else v
                               for k, v in data.items()}, ensure_ascii=False)
        return text
    path, mark, query = text.rpartition("?")
    fields = {name: values[0] for name, values in parse_qs(query, keep_blank_values=True).items()} \
        if "=" in query else {}
    if not SECRET_FIELDS & set(fields):
        return text
    masked = urlencode({k: mask(v) if k in SECRET_FIELDS else v for k, v in fields.items()})
    return f"{path}{mark}{masked}"


def shown_headers(headers: Any) -> dict[str, str]:
    """``headers`` as a trace shows them: ``Authorization`` keeps its scheme and masks its credentials
    (a bearer token, a client's Basic secret); a ``Location`` keeps its address and masks the secrets
    of its query (the authorization code rides on the redirect); ``Cookie`` and ``Set-Cookie`` keep
    the cookie names (and attributes) and mask the values (browser session ids)."""
    shown = dict(headers.to_dict() if hasattr(headers, "to_dict") else headers)
    for name, value in shown.items():
        if name.lower() == "authorization":
            scheme, _, credentials = value.partition(" ")
            shown[name] = f"{scheme} {mask(credentials)}" if credentials else mask(value)
        elif name.lower() == "location":
            shown[name] = redact(value) or value
        elif name.lower() == "cookie":  # a browser's session cookies: names stay, values do not
            shown[name] = "; ".join(f"{part.partition('=')[0].strip()}=REDACTED" for part in value.split(";"))
        elif name.lower() == "set-cookie":  # the value is secret, its attributes (Path, HttpOnly…) teach
            first, sep, attributes = value.partition(";")
            shown[name] = f"{first.partition('=')[0].strip()}=REDACTED{sep}{attributes}"
    return shown
