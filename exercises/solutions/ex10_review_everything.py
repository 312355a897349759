"""Reference solution for ex10_review_everything. Try the exercise before reading this."""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from typing import Any

READ_BY_THE_MODEL = ("name", "title", "description", "inputSchema", "outputSchema", "annotations")

SIGNS = (
    # orders to the model
    re.compile(r"\b(before|after|when(ever)?)\s+(you\s+)?(us|call|invok|run)\w*|\b(always|never|must|you should|"
               r"make sure|ignore|instead|override|forget|pretend)\b|\bdo(n't| not)\b", re.I),
    # secrecy towards the user
    re.compile(r"\b(tell|mention|reveal|show|inform|notify)\w*\b.{0,30}\buser\b|\b(secret(ly)?|silently|quietly|"
               r"hidden)\b", re.I),
    # markup blocks addressed to the model
    re.compile(r"<\s*/?\s*[A-Za-z_]+\s*>|\[(system|inst)\]", re.I),
    # file paths and credentials
    re.compile(r"(~|\.\.)?/[\w.-]+/[\w./-]+|\b(ssh|id_rsa|id_ed25519|\.env|credential|password|api[_ ]?key|"
               r"token)s?\b", re.I),
)
TOOL_NAME = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b|\b\w+__\w+\b")


def as_the_model_reads(text: str) -> str:
    """Tag characters become the ASCII they hide; other invisible format characters go; NFKC folds
    look-alike forms."""
    out = []
    for ch in text:
        if 0xE0020 <= ord(ch) <= 0xE007E:
            out.append(chr(ord(ch) - 0xE0000))
        elif unicodedata.category(ch) != "Cf":
            out.append(ch)
    return unicodedata.normalize("NFKC", "".join(out))


def strings(value: Any) -> list[tuple[bool, str]]:
    """Every string in ``value``: (is it a key?, the text)."""
    if isinstance(value, str):
        return [(False, value)]
    if isinstance(value, dict):
        out: list[tuple[bool, str]] = []
        for key, item in value.items():
            out.append((True, str(key)))
            out += strings(item)
        return out
    if isinstance(value, list):
        return [s for item in value for s in strings(item)]
    return []


def review(server: str, tool: dict[str, Any]) -> bool:
    """Approve the definition only if nothing the model reads is aimed at the model."""
    own = {str(tool.get("name", ""))} | set((tool.get("inputSchema") or {}).get("properties") or {})
    for is_key, text in strings({k: v for k, v in tool.items() if k != "_meta"}):  # _meta is for the client only
        visible = as_the_model_reads(text)
        if visible != text:
            return False  # text a person reviewing the tool cannot see
        if is_key:
            continue
        if any(sign.search(visible) for sign in SIGNS):
            return False
        if any(name not in own for name in TOOL_NAME.findall(visible)):
            return False  # it talks about another tool
    return True


def fingerprint(tool: dict[str, Any]) -> str:
    """A digest of everything the model reads, in canonical form: any change gives a new fingerprint."""
    text = json.dumps({k: tool.get(k) for k in READ_BY_THE_MODEL}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()
