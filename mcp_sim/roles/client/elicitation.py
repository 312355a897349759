"""Elicitation answers that keep to the requested schema (course chapter 04, client features; spec
``client/elicitation``).

A form-mode elicitation carries a ``requestedSchema``: a flat object whose properties are strings
(optionally with a ``format`` — ``email``, ``uri``, ``date``, ``date-time``), numbers, booleans or
enums. Whatever the user — or a Host answering for them — puts in ``content`` must be valid against
that schema, or the server will rightly refuse it. The client checks the answer before it leaves:
an ``accept`` whose content does not fit is sent as ``decline`` instead, and the trace says why.

:func:`placeholder_content` is for hosts that accept without asking anyone (a demo, a command-line
run): a value only where one can be given honestly — the schema's ``default``, an enum's first
option, ``false``/``0`` within bounds, an empty string where the schema allows one. A format field
has no honest placeholder (an empty string is not an e-mail address): an optional one is left out,
a required one makes the whole answer impossible, and the host declines.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date, datetime
from functools import cache
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

from mcp_sim.protocol.schema import import_jsonschema

_EMAIL: Final = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s.]+$")
_DATE: Final = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATE_TIME: Final = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")
_SCHEME: Final = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")

if TYPE_CHECKING:
    from jsonschema import FormatChecker


@cache
def format_checker() -> FormatChecker:
    """The four formats elicitation schemas may name, checked here (not by optional packages), so an
    answer is judged the same everywhere. Built on first use: importing ``jsonschema`` costs seconds
    (its optional format packages compile grammars), which a client that is never asked for input,
    such as a short ``mcp-sim connect``, need not pay at start-up."""
    checker = import_jsonschema().FormatChecker(formats=())
    for name, check in (("email", _is_email), ("uri", _is_uri), ("date", _is_date), ("date-time", _is_date_time)):
        checker.checks(name)(check)
    return checker


def _is_email(value: object) -> bool:
    return not isinstance(value, str) or bool(_EMAIL.match(value))


def _is_uri(value: object) -> bool:
    if not isinstance(value, str):
        return True
    return bool(_SCHEME.match(value)) and not any(c.isspace() for c in value) and bool(urlsplit(value).scheme)


def _is_date(value: object) -> bool:
    if not isinstance(value, str):
        return True
    try:
        return bool(_DATE.match(value)) and date.fromisoformat(value) is not None
    except ValueError:
        return False


def _is_date_time(value: object) -> bool:
    if not isinstance(value, str):
        return True
    try:
        return bool(_DATE_TIME.match(value)) and datetime.fromisoformat(value.replace("Z", "+00:00")
                                                                        .replace("z", "+00:00")) is not None
    except ValueError:
        return False


def content_errors(schema: Mapping[str, Any] | None, content: Any) -> list[str]:
    """Why ``content`` does not fit ``schema`` (empty when it does), one line per problem, e.g.
    ``email: '' is not a 'email'``. A missing or unreadable schema accepts any object."""
    if not isinstance(content, Mapping):
        return ["content is not an object"]
    if not isinstance(schema, Mapping):
        return []
    try:
        validator = import_jsonschema().Draft202012Validator(dict(schema), format_checker=format_checker())
        found = sorted(validator.iter_errors(dict(content)), key=lambda e: list(e.path))
    except Exception as exc:  # a schema the validator cannot read: judge nothing rather than crash
        return [f"the requested schema cannot be checked: {exc}"]
    return [f"{'/'.join(str(p) for p in e.path) or '(content)'}: {e.message}" for e in found]


def _first_option(prop: Mapping[str, Any]) -> tuple[bool, Any]:
    """An enum's (or titled enum's) first value, if the property is one."""
    if isinstance(prop.get("enum"), list) and prop["enum"]:
        return True, prop["enum"][0]
    for key in ("oneOf", "anyOf"):
        options = prop.get(key)
        if isinstance(options, list) and options and isinstance(options[0], Mapping) and "const" in options[0]:
            return True, options[0]["const"]
    return False, None


def _placeholder(prop: Mapping[str, Any]) -> tuple[bool, Any]:
    """(``True``, a value) when one can be given honestly for this property; (``False``, ``None``) if not."""
    if "default" in prop:
        return True, prop["default"]
    is_enum, value = _first_option(prop)
    if is_enum:
        return True, value
    kind = prop.get("type")
    if kind == "boolean":
        return True, True
    if kind in ("number", "integer"):
        low, high = prop.get("minimum"), prop.get("maximum")
        value = low if isinstance(low, (int, float)) else 0
        if isinstance(high, (int, float)) and value > high:
            value = high
        return True, value
    if kind == "array":
        return (True, []) if not prop.get("minItems") else (False, None)
    if kind == "string" and "format" not in prop and not prop.get("minLength") and "pattern" not in prop:
        return True, ""
    return False, None


def placeholder_content(schema: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A content object for ``schema`` made of honest placeholders, or ``None`` when a required field
    cannot be filled (the host should then decline). The result is always valid against ``schema``."""
    schema = schema if isinstance(schema, Mapping) else {}
    required = set(schema.get("required") or ())
    content: dict[str, Any] = {}
    for key, prop in (schema.get("properties") or {}).items():
        ok, value = _placeholder(prop) if isinstance(prop, Mapping) else (False, None)
        if ok:
            content[key] = value
        elif key in required:
            return None
    if content_errors(schema, content):
        # A default that breaks its own schema, say: leave the optional fields out and try once more.
        content = {k: v for k, v in content.items() if k in required}
        if content_errors(schema, content):
            return None
    return content


def checked_answer(params: Mapping[str, Any], answer: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The ElicitResult to send for ``answer`` to the form-mode request ``params``, and the problems
    found: an ``accept`` whose content breaks ``requestedSchema`` becomes ``decline``. URL-mode
    requests and declines/cancels pass unchanged."""
    result = dict(answer)
    if result.get("action") != "accept" or params.get("mode", "form") != "form":
        return result, []
    problems = content_errors(params.get("requestedSchema"), result.get("content") or {})
    if problems:
        return {"action": "decline"}, problems
    return result, []
