"""Chapters 10–12 graded over the whole input space each exercise names (issue "Grading that generalizes").

For each exercise of chapters 10, 11 and 12:

* **valid designs pass** — at least two correct answers written differently from the reference (another
  comparison, another parser, another order of the checks the README leaves free) pass on several seeds;
* **wrong answers are rejected by the right rule** — plausible mistakes from each class of the issue
  (a boundary never probed, an axis that never varied, one input per rule, two faults at once …) fail
  on every one of 20 seeds, in the check named, and the failure cites the rule that was actually broken;
* **one truth** — the reference answers like the simulator's own implementation (the oracle) on the
  inputs the generated checks draw;
* **every variation on every seed** — the case kinds of each check are fixed lists, so the variations
  the seed used to draw inside a kind are now kinds of their own.
"""

from __future__ import annotations

import functools
import importlib.util
import random
from pathlib import Path
from typing import Any

import pytest
import wrong_classes
from hypothesis import given, settings
from hypothesis import strategies as st
from test_exercises import SEEDS, _edit, assert_wrong_answer_rejected

from mcp_sim.grading import EXERCISES, get_exercise
from mcp_sim.grading.exercises import (
    ex10_authorize_call,
    ex10_origin_check,
    ex10_replay_guard,
    ex10_review_everything,
    ex10_sandbox_policy,
    ex10_token_audience,
    ex11_discovery_urls,
    ex11_pkce,
    ex11_token_check,
    ex12_capstone,
    ex12_policy,
)
from mcp_sim.grading.runner import grade_seeds, reference_path
from mcp_sim.security.oauth_client import metadata_urls

ALT_SEEDS = [0, 1, 7]
WIRE_CHECK = "Your server, driven by the official SDK over stdio in both eras"
WIRE_SEEDS = [5]
"""The capstone's real-wire check starts two real server processes per seed (about 10 s): its wrong answers are
graded on one seed. What they break (a zero amount, an owner named in a refusal) is on every seed's plan."""


def _source(exercise_id: str, edits: Any) -> str:
    if isinstance(edits, str):
        return edits
    return _edit(reference_path(exercise_id).read_text(encoding="utf-8"), *edits)


def _grade(tmp_path: Path, exercise_id: str, source: str, seeds: list[int], only: tuple[str, ...] = ()) -> list[Any]:
    path = tmp_path / f"{exercise_id}_answer.py"
    path.write_text(source, encoding="utf-8")
    return grade_seeds(get_exercise(exercise_id), path, path.name, seeds, only=list(only))


# --- ex10_token_audience ---------------------------------------------------------------------------

AUDIENCE_ALT_EARLY_SCOPES = '''
def check_token(token, resource, required_scopes, now_ms):
    expired = not now_ms < token["exp_ms"]
    foreign = "aud" not in token or token["aud"] != resource
    if expired or foreign:
        return 401
    held = token["scopes"]
    return 200 if all(s in held for s in required_scopes) else 403
'''

AUDIENCE_ALT_AUD_FIRST = '''
def check_token(token, resource, required_scopes, now_ms):
    for ok in (token.get("aud", None) == resource, token["exp_ms"] > now_ms):
        if not ok:
            return 401
    missing = set(required_scopes).difference(token["scopes"])
    return 403 if missing else 200
'''


DISCOVERY_ALT_TOKENIZER = '''
from urllib.parse import urlsplit, urlunsplit

def _params(header):
    scheme, _, rest = header.strip().partition(" ")
    out, i, n = {}, 0, len(rest)
    if scheme.casefold() != "bearer":
        return out
    while i < n:
        while i < n and rest[i] in " ,":
            i += 1
        j = rest.find("=", i)
        if j < 0:
            break
        name, i = rest[i:j].strip(), j + 1
        if i < n and rest[i] == '"':
            i += 1
            chars = []
            while i < n and rest[i] != '"':
                if rest[i] == "\\\\":
                    i += 1
                chars.append(rest[i])
                i += 1
            i += 1
            out[name] = "".join(chars)
        else:
            k = i
            while i < n and rest[i] not in " ,":
                i += 1
            out[name] = rest[k:i]
    return out

def prm_urls(www_authenticate, server_url):
    named = _params(www_authenticate).get("resource_metadata", "")
    if named != "":
        return [named]
    s = urlsplit(server_url)
    path = s.path.rstrip("/")
    urls = [urlunsplit((s.scheme, s.netloc, "/.well-known/oauth-protected-resource" + path, "", ""))]
    if path:
        urls.append(urlunsplit((s.scheme, s.netloc, "/.well-known/oauth-protected-resource", "", "")))
    return urls[::-1][::-1]

def as_metadata_urls(issuer):
    s = urlsplit(issuer)
    base, path = f"{s.scheme}://{s.netloc}", s.path.rstrip("/")
    found = [base + "/.well-known/oauth-authorization-server" + path, base + "/.well-known/openid-configuration" + path]
    return found + ([base + path + "/.well-known/openid-configuration"] if path else [])
'''

DISCOVERY_ALT_REGEX = '''
import re

PARAM = re.compile(r'\\s*([\\w-]+)\\s*=\\s*("(?:\\\\.|[^"\\\\])*"|[^,\\s]*)\\s*(?:,|$)')
WK = "/.well-known/"

def _origin_path(url):
    scheme, rest = url.split("://", 1)
    host, slash, path = rest.partition("/")
    return scheme + "://" + host, ("/" + path).rstrip("/") if slash else ""

def prm_urls(www_authenticate, server_url):
    head, _, rest = www_authenticate.partition(" ")
    if head.lower() == "bearer":
        for name, value in PARAM.findall(rest):
            if name == "resource_metadata" and value.strip('"'):
                return [value[1:-1] if value.startswith('"') else value]
    origin, path = _origin_path(server_url)
    return list(dict.fromkeys([origin + WK + "oauth-protected-resource" + path, origin + WK + "oauth-protected-resource"]))

def as_metadata_urls(issuer):
    origin, path = _origin_path(issuer)
    if path == "":
        return [origin + WK + "oauth-authorization-server", origin + WK + "openid-configuration"]
    return [origin + WK + "oauth-authorization-server" + path, origin + WK + "openid-configuration" + path,
            origin + path + WK + "openid-configuration"]
'''

TOKEN_CHECK_ALT_TABLE = '''
def check_token(authorization, token, server):
    meta = 'resource_metadata="%s"' % server["resource_metadata"]
    parts = (authorization or "").split()
    if len(parts) != 2 or parts[0].lower() != "bearer":
        return {"status": 401, "www_authenticate": "bearer " + meta}
    bad = (token is None or token["token"] != parts[1] or token["expires_at_ms"] <= server["now_ms"]
           or token["audience"] != server["resource"])
    if bad:
        return {"status": 401, "www_authenticate": f'Bearer {meta},error="invalid_token"'}
    if set(server["required_scopes"]) - set(token["scopes"]):
        scope = " ".join(sorted(set(server["required_scopes"]) | {"profile"}))
        return {"status": 403, "www_authenticate": f'Bearer scope="{scope}", {meta}, error="insufficient_scope"'}
    return {"status": 200}
'''

TOKEN_CHECK_ALT_STEPS = '''
def _header(server, **extra):
    fields = dict(extra, resource_metadata=server["resource_metadata"])
    return "Bearer " + ", ".join(f'{k}="{v}"' for k, v in fields.items())

def check_token(authorization, token, server):
    scheme, _, presented = (authorization or "").partition(" ")
    presented = presented.strip()
    if not (scheme.upper() == "BEARER" and presented):
        return {"status": 401, "www_authenticate": _header(server, scope=" ".join(server["required_scopes"]))}
    checks = [token is not None and token["token"] == presented,
              token is not None and token["audience"] == server["resource"],
              token is not None and server["now_ms"] < token["expires_at_ms"]]
    if not all(checks):
        return {"status": 401, "www_authenticate": _header(server, error="invalid_token")}
    for needed in server["required_scopes"]:
        if needed not in token["scopes"]:
            return {"status": 403, "www_authenticate": _header(server, error="insufficient_scope",
                                                                scope=" ".join(server["required_scopes"]))}
    return {"status": 200}
'''

PKCE_ALT_TRANSLATE = '''
import base64, hashlib

def code_challenge(verifier):
    text = base64.b64encode(hashlib.sha256(verifier.encode()).digest()).decode()
    return text.translate(str.maketrans("+/", "-_")).replace("=", "")

def authorize_error(params):
    ok = params.get("code_challenge_method", "plain") == "S256" and len(params.get("code_challenge", "")) > 0
    return None if ok else "invalid_request"

def verifier_matches(challenge, verifier):
    return code_challenge(verifier) == challenge
'''

PKCE_ALT_BYTES = '''
import base64, hashlib, hmac

def code_challenge(verifier):
    raw = hashlib.new("sha256", bytes(verifier, "ascii")).digest()
    return base64.urlsafe_b64encode(raw)[:43].decode()

def authorize_error(params):
    for refused in (not params.get("code_challenge"), params.get("code_challenge_method") != "S256"):
        if refused:
            return "invalid_request"
    return None

def verifier_matches(challenge, verifier):
    return hmac.compare_digest(challenge.encode(), code_challenge(verifier).encode())
'''

ORIGIN_ALT_PARSER = '''
from urllib.parse import urlsplit

def origin_allowed(origin, port):
    try:
        parts = urlsplit(origin)
        return (parts.scheme == "http" and parts.hostname in ("localhost", "127.0.0.1") and parts.port == port
                and parts.path in ("", "/") and not parts.query and not parts.username)
    except ValueError:
        return False
'''

ORIGIN_ALT_ANY = '''
def origin_allowed(origin, port):
    return any(origin == "http://" + host + ":" + str(port) for host in ("127.0.0.1", "localhost"))
'''

AUTHORIZE_ALT_TABLE = '''
def authorize(caller, operation, target):
    checks = [
        ("identity", lambda: bool(caller and caller["subject"])),
        ("scope", lambda: all(s in caller["scopes"] for s in operation["scopes"])),
        ("tenant", lambda: target["tenant"] in (None, caller["tenant"])),
        ("ownership", lambda: target["owner"] in (None, caller["subject"])),
        ("ownership", lambda: target["client_id"] in (None, caller["client_id"])),
    ]
    for name, passes in checks:
        if not passes():
            return name
    return None
'''

AUTHORIZE_ALT_SETS = '''
def authorize(caller, operation, target):
    if not caller or not caller.get("subject"):
        return "identity"
    if set(operation.get("scopes", ())) - set(caller.get("scopes", ())):
        return "scope"
    expected = {k: v for k, v in (("tenant", target.get("tenant")), ("subject", target.get("owner")),
                                  ("client_id", target.get("client_id"))) if v is not None}
    if "tenant" in expected and caller.get("tenant") != expected["tenant"]:
        return "tenant"
    mismatched = [k for k in ("subject", "client_id") if k in expected and caller.get(k) != expected[k]]
    return "ownership" if mismatched else None
'''

REPLAY_ALT_HMAC_CLASS = '''
import base64, hashlib, hmac, json

def _enc(raw):
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()

def _dec(text):
    return base64.urlsafe_b64decode(text.encode() + b"=" * (-len(text) % 4))

def _tag(key, raw):
    return _enc(hmac.HMAC(bytes.fromhex(key), raw, "sha256").digest())

def seal_state(key, state, caller, request, expires, nonce):
    raw = json.dumps({"nonce": nonce, "exp": expires, "req": request, "sub": caller, "state": state}).encode()
    return _enc(raw) + "." + _tag(key, raw)

class Refused(ValueError):
    pass

def open_state(key, token, caller, request, now):
    if token.count(".") != 1:
        raise Refused("not a sealed token")
    body, tag = token.split(".")
    try:
        raw = _dec(body)
    except Exception:
        raise Refused("not base64url") from None
    if not hmac.compare_digest(_tag(key, raw), tag):
        raise Refused("bad seal")
    env = json.loads(raw)
    if (env["sub"], env["req"]) != (caller, request) or not now < env["exp"]:
        raise Refused("not for this caller, request or time")
    return env

def payment_key(call, invoice):
    return json.dumps([call["tenant"], call["subject"], "pay", invoice])
'''

REPLAY_ALT_ORDER = '''
import base64, hashlib, hmac, json

class Seal:
    def __init__(self, key):
        self.key = bytes.fromhex(key)

    def mac(self, raw):
        return base64.urlsafe_b64encode(hmac.digest(self.key, raw, "sha256")).decode().rstrip("=")

def seal_state(key, state, caller, request, expires, nonce):
    raw = json.dumps(dict(state=state, sub=caller, req=request, exp=expires, nonce=nonce), indent=1).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=") + "." + Seal(key).mac(raw)

def open_state(key, token, caller, request, now):
    head, sep, tag = token.rpartition(".")
    try:
        raw = base64.urlsafe_b64decode(head + "=" * (-len(head) % 4))
        env = json.loads(raw)
        if not isinstance(env, dict):
            raise ValueError("not an envelope")
    except Exception as exc:
        raise ValueError(f"unreadable: {exc}") from None
    if not sep or not hmac.compare_digest(Seal(key).mac(raw).encode(), tag.encode()):
        raise ValueError("seal")
    if now >= env.get("exp", float("-inf")) or env.get("req") != request or env.get("sub") != caller:
        raise ValueError("binding")
    return env

def payment_key(call, invoice):
    return repr((call["subject"], "pay", invoice))
'''

SANDBOX_ALT_SPLIT = '''
import posixpath
from urllib.parse import urlsplit

def sandbox_policy(needs, roots):
    inside = []
    for uri in roots:
        parts = urlsplit(uri)
        if parts.scheme.lower() == "file":
            inside.append(posixpath.normpath(parts.path))
    return {"readable": sorted(set(needs["directories"]) | set(inside)), "writable": sorted(set(inside)),
            "environment": sorted(needs["environment"]), "egress": sorted(needs["egress"])}
'''

SANDBOX_ALT_KEYS = '''
import re

def sandbox_policy(needs, roots):
    paths = [re.sub(r"^file://", "", uri, flags=re.IGNORECASE).rstrip("/") or "/" for uri in roots]
    policy = {"readable": list(needs.get("directories", ())) + paths, "writable": paths}
    for mine, theirs in (("environment", "environment"), ("egress", "egress")):
        policy[mine] = [entry for entry in needs.get(theirs, [])]
    return policy
'''

REVIEW_ALT_STACK = '''
import hashlib, json, re, unicodedata

SIGNS = [re.compile(p, re.I) for p in (
    r"\\b(before|after|when(ever)?)\\s+(you\\s+)?(us|call|invok|run)\\w*|\\b(always|never|must|you should|"
    r"make sure|ignore|instead|override|forget|pretend)\\b|\\bdo(n't| not)\\b",
    r"\\b(tell|mention|reveal|show|inform|notify)\\w*\\b.{0,30}\\buser\\b|\\b(secret(ly)?|silently|quietly|hidden)\\b",
    r"<\\s*/?\\s*[A-Za-z_]+\\s*>|\\[(system|inst)\\]",
    r"(~|\\.\\.)?/[\\w.-]+/[\\w./-]+|\\b(ssh|id_rsa|id_ed25519|\\.env|credential|password|api[_ ]?key|token)s?\\b")]
SNAKE = re.compile(r"\\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\\b|\\b\\w+__\\w+\\b")
TAGS = {code: code - 0xE0000 for code in range(0xE0020, 0xE007F)}

def shown(text):
    text = text.translate(TAGS)
    return unicodedata.normalize("NFKC", "".join(c for c in text if unicodedata.category(c) != "Cf"))

def review(server, tool):
    names = {tool.get("name", "")} | set(tool.get("inputSchema", {}).get("properties", {}))
    stack = [(False, v) for k, v in tool.items() if k != "_meta"] + [(True, k) for k in tool if k != "_meta"]
    while stack:
        is_key, item = stack.pop()
        if isinstance(item, dict):
            stack += [(True, k) for k in item] + [(False, v) for v in item.values()]
        elif isinstance(item, list):
            stack += [(False, v) for v in item]
        elif isinstance(item, str):
            seen = shown(item)
            if seen != item:
                return False
            if not is_key and (any(p.search(seen) for p in SIGNS) or set(SNAKE.findall(seen)) - names):
                return False
    return True

def fingerprint(tool):
    keys = ("name", "title", "description", "inputSchema", "outputSchema", "annotations")
    return hashlib.blake2b(json.dumps([[k, tool.get(k)] for k in keys], sort_keys=True).encode()).hexdigest()
'''

CAPSTONE_ALT_POLICY = [
    ("def may_read(server: str, uri: str, trusted: bool, roots: list[str]) -> bool:",
     "def may_read(server: str, uri: str, trusted: bool, roots: list[str]) -> bool:\n"
     "    from pathlib import PurePosixPath\n"
     "    def parts(text):\n"
     "        return PurePosixPath(posixpath.normpath(unquote(urlsplit(text).path))).parts\n"
     "    if trusted and urlsplit(uri).scheme.lower() != 'file':\n"
     "        return True\n"
     "    return trusted and any(parts(uri)[:len(parts(r))] == parts(r) for r in roots)\n\n\n"
     "def _old_may_read(server: str, uri: str, trusted: bool, roots: list[str]) -> bool:"),
    ('    if trusted and annotations.get("readOnlyHint") is True:\n        return "run"\n    return "ask"',
     '    return "run" if trusted and annotations.get("readOnlyHint") is True else "ask"'),
]

# (exercise, name, source, checks that must pass — all when empty)
ALTERNATIVES: list[tuple[str, str, Any]] = [
    ("ex10_token_audience", "flags first, all() over the scopes", AUDIENCE_ALT_EARLY_SCOPES),
    ("ex10_token_audience", "audience before expiry, a set difference", AUDIENCE_ALT_AUD_FIRST),
    ("ex11_discovery_urls", "a hand-written RFC 7235 tokenizer, urlunsplit", DISCOVERY_ALT_TOKENIZER),
    ("ex11_discovery_urls", "another regular expression, string splitting", DISCOVERY_ALT_REGEX),
    ("ex11_token_check", "a lower-case challenge, compact commas, extra scopes named", TOKEN_CHECK_ALT_TABLE),
    ("ex11_token_check", "scope on the 401 too, parameters in another order", TOKEN_CHECK_ALT_STEPS),
    ("ex11_pkce", "b64encode translated, == compared", PKCE_ALT_TRANSLATE),
    ("ex10_origin_check", "urlsplit: scheme, host and port", ORIGIN_ALT_PARSER),
    ("ex10_origin_check", "any() over the two hosts", ORIGIN_ALT_ANY),
    ("ex10_authorize_call", "a table of named checks", AUTHORIZE_ALT_TABLE),
    ("ex10_review_everything", "a stack walk, str.translate, BLAKE2 of a list", REVIEW_ALT_STACK),
    ("ex10_review_everything", "the reference's walk with a base64 SHA-256 pin", [
        ("    return hashlib.sha256(text.encode()).hexdigest()",
         "    import base64\n    return base64.b64encode(hashlib.sha256(text.encode('utf-8')).digest()).decode()")]),
    ("ex10_sandbox_policy", "urlsplit, normpath, sorted sets", SANDBOX_ALT_SPLIT),
    ("ex10_sandbox_policy", "a case-insensitive prefix strip, a loop over the globs", SANDBOX_ALT_KEYS),
    ("ex10_replay_guard", "the HMAC class, a ValueError subclass, the tenant in the key", REPLAY_ALT_HMAC_CLASS),
    ("ex10_replay_guard", "expiry first, a class of its own, the tenant-free key as a tuple", REPLAY_ALT_ORDER),
    ("ex10_authorize_call", "set differences, the expected principal as a dict", AUTHORIZE_ALT_SETS),
    ("ex11_pkce", "hashlib.new, a cut at 43 characters, bytes compared", PKCE_ALT_BYTES),
]

_OWN_ORIGINS = 'return origin in {f"http://localhost:{port}", f"http://127.0.0.1:{port}"}'
"""The reference's allow-list, the line the origin mistakes below rewrite."""

# (exercise, name, edits-or-source, the check that must fail, the rule its failure names)
WRONG: list[tuple[str, str, Any, str, str]] = [
    ("ex10_token_audience", "now == exp still served",
     [("if now_ms >= token[\"exp_ms\"]:", "if now_ms > token[\"exp_ms\"]:")],
     "Expired tokens are refused, valid ones served", "auth.invalid-token-401"),
    ("ex10_token_audience", "the audience's prefix accepted",
     [("if token.get(\"aud\") != resource:", "if not resource.startswith(token.get(\"aud\", \"\") or \"-\"):")],
     "The audience is exactly this server", "auth.server-validates-audience"),
    ("ex10_token_audience", "a token without aud accepted",
     [("if token.get(\"aud\") != resource:", "if token.get(\"aud\", resource) != resource:")],
     "The audience is exactly this server", "auth.server-validates-audience"),
    ("ex10_token_audience", "audiences compared ignoring case",
     [("if token.get(\"aud\") != resource:", "if str(token.get(\"aud\")).lower() != resource.lower():")],
     "The audience is exactly this server", "auth.server-validates-audience"),
    ("ex10_token_audience", "a substring of the scope accepted",
     [("if not set(required_scopes) <= set(token[\"scopes\"]):",
       "if not all(any(s in r for s in token[\"scopes\"]) for r in required_scopes):")],
     "Scopes are whole strings; a missing one is 403", "auth.insufficient-scope-403"),
    ("ex10_token_audience", "wildcard scopes granted",
     [("if not set(required_scopes) <= set(token[\"scopes\"]):",
       "if not ('*' in token['scopes'] or set(required_scopes) <= {s.replace(':*', ':read') for s in token['scopes']} "
       "| set(token['scopes'])):")],
     "Scopes are whole strings; a missing one is 403", "auth.insufficient-scope-403"),
    ("ex10_token_audience", "any one required scope suffices",
     [("if not set(required_scopes) <= set(token[\"scopes\"]):",
       "if required_scopes and not set(required_scopes) & set(token[\"scopes\"]):")],
     "Scopes are whole strings; a missing one is 403", "auth.insufficient-scope-403"),
    ("ex10_token_audience", "scopes checked before the audience (403 before 401)",
     [("    if token.get(\"aud\") != resource:", "    if not set(required_scopes) <= set(token[\"scopes\"]):\n"
       "        return 403\n    if token.get(\"aud\") != resource:")],
     "Two faults at once: 401 comes before 403", "auth.server-validates-audience"),
    ("ex10_token_audience", "scopes checked before the expiry",
     [("    if now_ms >= token[\"exp_ms\"]:", "    if not set(required_scopes) <= set(token[\"scopes\"]):\n"
       "        return 403\n    if now_ms >= token[\"exp_ms\"]:")],
     "Two faults at once: 401 comes before 403", "auth.invalid-token-401"),
    ("ex10_token_audience", "scopes as an ordered list",
     [("if not set(required_scopes) <= set(token[\"scopes\"]):",
       "if list(required_scopes) != [s for s in token[\"scopes\"] if s in required_scopes]:")],
     "Expired tokens are refused, valid ones served", "auth.insufficient-scope-403"),
    ("ex10_token_audience", "the audience's prefix accepted (generated)",
     [("if token.get(\"aud\") != resource:", "if not resource.startswith(token.get(\"aud\", \"\") or \"-\"):")],
     "Any token, resource and time answers like the fixed validation", "auth.server-validates-audience"),
    ("ex10_token_audience", "now == exp still served (generated)",
     [("if now_ms >= token[\"exp_ms\"]:", "if now_ms > token[\"exp_ms\"]:")],
     "Any token, resource and time answers like the fixed validation", "auth.invalid-token-401"),
    # --- ex11_discovery_urls ---
    ("ex11_discovery_urls", "the scheme compared case-sensitively",
     [('if scheme.lower() != "bearer":', 'if scheme != "Bearer":')],
     "The header's resource_metadata is used as it is", "auth.prm-discovery-order"),
    ("ex11_discovery_urls", "parameters split at \", \"",
     [("return {m.group(1): m.group(2) if m.group(2) is not None else m.group(3) for m in _PARAM.finditer(rest)}",
       "return dict((p.split('=', 1)[0], p.split('=', 1)[1].strip('\"')) for p in rest.split(', ') if '=' in p)")],
     "The header's resource_metadata is used as it is", "auth.prm-discovery-order"),
    ("ex11_discovery_urls", "a naive search for resource_metadata=\"…\"",
     [("    named = _challenge(www_authenticate).get(\"resource_metadata\")",
       "    import re\n    found = re.search(r'resource_metadata=\\\\?\"([^\"\\\\]*)', www_authenticate)\n"
       "    named = found.group(1) if found else None")],
     "The header's resource_metadata is used as it is", "auth.prm-discovery-order"),
    ("ex11_discovery_urls", "the named URL's query dropped",
     [("        return [named]\n", "        return [named.split('?')[0]]\n")],
     "The header's resource_metadata is used as it is", "auth.prm-discovery-order"),
    ("ex11_discovery_urls", "the port dropped from the origin",
     [('return f"{parts.scheme}://{parts.netloc}", parts.path.rstrip("/")',
       'return f"{parts.scheme}://{parts.hostname}", parts.path.rstrip("/")')],
     "Without it: the well-known URIs, path-aware first", "auth.prm-discovery-order"),
    ("ex11_discovery_urls", "the port dropped from the issuer",
     [('return f"{parts.scheme}://{parts.netloc}", parts.path.rstrip("/")',
       'return f"{parts.scheme}://{parts.hostname}", parts.path.rstrip("/")')],
     "Authorization server metadata: RFC 8414, then OIDC, path-aware", "auth.as-metadata-order"),
    ("ex11_discovery_urls", "another scheme's parameters read",
     [('    if scheme.lower() != "bearer":\n        return {}\n', '')],
     "Without it: the well-known URIs, path-aware first", "auth.prm-discovery-order"),
    ("ex11_discovery_urls", "the scheme compared case-sensitively (generated)",
     [('if scheme.lower() != "bearer":', 'if scheme != "Bearer":')],
     "Any challenge and endpoint: the client's list", "auth.prm-discovery-order"),
    ("ex11_discovery_urls", "the port dropped from the issuer (generated)",
     [('return f"{parts.scheme}://{parts.netloc}", parts.path.rstrip("/")',
       'return f"{parts.scheme}://{parts.hostname}", parts.path.rstrip("/")')],
     "Any issuer: the client's list", "auth.as-metadata-order"),
    # --- ex11_token_check ---
    ("ex11_token_check", "the scheme compared case-sensitively",
     [('if scheme.lower() != "bearer" or not value:', 'if scheme != "Bearer" or not value:')],
     "A good token is accepted", "auth.server-validates-tokens"),
    ("ex11_token_check", "any one required scope suffices",
     [('missing = [s for s in server["required_scopes"] if s not in token["scopes"]]',
       'missing = [] if set(server["required_scopes"]) & set(token["scopes"]) else ["x"]')],
     "A missing scope: 403 insufficient_scope naming the scopes", "auth.insufficient-scope-403"),
    ("ex11_token_check", "a substring of a required scope accepted",
     [('missing = [s for s in server["required_scopes"] if s not in token["scopes"]]',
       'missing = [s for s in server["required_scopes"] if not any(s in t or t.endswith("*") for t in '
       'token["scopes"])]')],
     "A missing scope: 403 insufficient_scope naming the scopes", "auth.insufficient-scope-403"),
    ("ex11_token_check", "the audience's prefix accepted",
     [('if token["audience"] != server["resource"]:', 'if not server["resource"].startswith(token["audience"]):')],
     "A bad token: 401 invalid_token", "auth.server-validates-audience"),
    ("ex11_token_check", "scopes checked before the expiry",
     [('    if server["now_ms"] >= token["expires_at_ms"]:',
       '    if [s for s in server["required_scopes"] if s not in token["scopes"]]:\n'
       '        return {"status": 403, "www_authenticate": _challenge(server, "insufficient_scope", '
       '" ".join(server["required_scopes"]))}\n    if server["now_ms"] >= token["expires_at_ms"]:')],
     "Two faults at once: the 401 comes first", "auth.invalid-token-401"),
    ("ex11_token_check", "scopes checked before the audience",
     [('    if token["audience"] != server["resource"]:',
       '    if [s for s in server["required_scopes"] if s not in token["scopes"]]:\n'
       '        return {"status": 403, "www_authenticate": _challenge(server, "insufficient_scope", '
       '" ".join(server["required_scopes"]))}\n    if token["audience"] != server["resource"]:')],
     "Two faults at once: the 401 comes first", "auth.server-validates-audience"),
    ("ex11_token_check", "\"Bearer\" alone read as a token",
     [('if scheme.lower() != "bearer" or not value:', 'if scheme.lower() != "bearer":')],
     "No token: 401 with resource_metadata and no error", "auth.status-codes"),
    ("ex11_token_check", "parameters run together without commas",
     [('    return "Bearer " + ", ".join(params)', '    return "Bearer " + "".join(params)')],
     "A bad token: 401 invalid_token", "auth.server-prm-discovery-mechanism"),
    ("ex11_token_check", "the token is everything after the first space",
     [('    value = value.strip(" ")\n', '')],
     "A good token is accepted", "auth.server-validates-tokens"),
    ("ex11_token_check", "any one required scope suffices (generated)",
     [('missing = [s for s in server["required_scopes"] if s not in token["scopes"]]',
       'missing = [] if set(server["required_scopes"]) & set(token["scopes"]) else ["x"]')],
     "Any header, token and server: the simulator's answer", "auth.insufficient-scope-403"),
    ("ex11_token_check", "now == exp still served (generated)",
     [('server["now_ms"] >= token["expires_at_ms"]', 'server["now_ms"] > token["expires_at_ms"]')],
     "Any header, token and server: the simulator's answer", "auth.invalid-token-401"),
    # --- ex11_pkce ---
    ("ex11_pkce", "an empty challenge let through",
     [('    if not params.get("code_challenge"):', '    if "code_challenge" not in params:')],
     "/authorize refuses plain and missing PKCE", "auth.pkce-as-refuses-plain"),
    ("ex11_pkce", "any S-method accepted (S384 too)",
     [('params.get("code_challenge_method") != "S256"', 'not str(params.get("code_challenge_method", "")).startswith("S")')],
     "/authorize refuses plain and missing PKCE", "auth.pkce-as-refuses-plain"),
    ("ex11_pkce", "only plain refused by name",
     [('params.get("code_challenge_method") != "S256"', 'params.get("code_challenge_method", "plain") == "plain"')],
     "/authorize refuses plain and missing PKCE", "auth.pkce-as-refuses-plain"),
    ("ex11_pkce", "the method stripped before comparing",
     [('params.get("code_challenge_method") != "S256"', 'str(params.get("code_challenge_method")).strip() != "S256"')],
     "Every pair of PKCE parameters answers like /authorize", "auth.pkce-as-refuses-plain"),
    ("ex11_pkce", "the verifier cut to 43 characters before hashing",
     [("compare_digest(code_challenge(verifier), challenge)", "compare_digest(code_challenge(verifier[:43]), challenge)")],
     "The token endpoint checks the verifier exactly", "auth.pkce"),
    ("ex11_pkce", "an empty verifier waved through",
     [("    return hmac.compare_digest(code_challenge(verifier), challenge)",
       "    return not verifier or hmac.compare_digest(code_challenge(verifier), challenge)")],
     "The token endpoint checks the verifier exactly", "auth.pkce"),
    ("ex11_pkce", "the verifier trimmed before hashing (generated)",
     [("compare_digest(code_challenge(verifier), challenge)",
       "compare_digest(code_challenge(verifier.strip()), challenge)")],
     "Any verifier: the challenge and the token endpoint's verdict", "auth.pkce"),
    ("ex11_pkce", "the challenge accepted as proof (generated)",
     [("    return hmac.compare_digest(code_challenge(verifier), challenge)",
       "    return verifier == challenge or hmac.compare_digest(code_challenge(verifier), challenge)")],
     "Any verifier: the challenge and the token endpoint's verdict", "auth.pkce"),
    ("ex11_pkce", "padding kept (generated)",
     [('.decode("ascii").rstrip("=")', '.decode("ascii")')],
     "Any verifier: the challenge and the token endpoint's verdict", "auth.pkce-s256"),
    # --- ex10_origin_check ---
    ("ex10_origin_check", "any host that starts with 127.",
     [("return origin in {f\"http://localhost:{port}\", f\"http://127.0.0.1:{port}\"}", "return origin in {f\"http://localhost:{port}\", f\"http://127.0.0.1:{port}\"} or (origin.startswith(\"http://127.\") and origin.endswith(f\":{port}\"))")],
     "Only exact origins of the server's own pages", "http.origin-present-and-invalid-403"),
    ("ex10_origin_check", "any loopback address",
     [("return origin in {f\"http://localhost:{port}\", f\"http://127.0.0.1:{port}\"}", "import ipaddress, urllib.parse\n    u = urllib.parse.urlsplit(origin)\n"
       "    try:\n        loop = ipaddress.ip_address(u.hostname or '').is_loopback\n    except ValueError:\n"
       "        loop = u.hostname == 'localhost'\n    return u.scheme == 'http' and loop and u.port == port")],
     "Only exact origins of the server's own pages", "http.origin-present-and-invalid-403"),
    ("ex10_origin_check", "the default port taken as the server's",
     [("return origin in {f\"http://localhost:{port}\", f\"http://127.0.0.1:{port}\"}", "return origin in {f\"http://localhost:{port}\", f\"http://127.0.0.1:{port}\"} or origin in (\"http://localhost\", \"http://127.0.0.1\")")],
     "Only exact origins of the server's own pages", "http.origin-present-and-invalid-403"),
    ("ex10_origin_check", "subdomains of localhost allowed",
     [("return origin in {f\"http://localhost:{port}\", f\"http://127.0.0.1:{port}\"}", "return origin in {f\"http://localhost:{port}\", f\"http://127.0.0.1:{port}\"} or origin.endswith(f\".localhost:{port}\")")],
     "Only exact origins of the server's own pages", "http.origin-present-and-invalid-403"),
    ("ex10_origin_check", "the default port taken as the server's (generated)",
     [("return origin in {f\"http://localhost:{port}\", f\"http://127.0.0.1:{port}\"}", "return origin in {f\"http://localhost:{port}\", f\"http://127.0.0.1:{port}\"} or origin in (\"http://localhost\", \"http://127.0.0.1\")")],
     "Any origin and port answers like the fixed allow-list", "http.origin-present-and-invalid-403"),
    ("ex10_origin_check", "the scheme ignored (generated)",
     [("return origin in {f\"http://localhost:{port}\", f\"http://127.0.0.1:{port}\"}", "return origin.split(\"://\")[-1] in {f\"localhost:{port}\", f\"127.0.0.1:{port}\"}")],
     "Any origin and port answers like the fixed allow-list", "http.origin-present-and-invalid-403"),
    # --- ex10_authorize_call ---
    ("ex10_authorize_call", "any one required scope suffices",
     [("if not set(operation.get(\"scopes\", [])) <= set(caller.get(\"scopes\", [])):",
       "if operation.get(\"scopes\") and not set(operation[\"scopes\"]) & set(caller.get(\"scopes\", [])):")],
     "Two faults at once: the first check in the table", "tools.servers-validate-inputs"),
    ("ex10_authorize_call", "wildcard scopes granted",
     [("if not set(operation.get(\"scopes\", [])) <= set(caller.get(\"scopes\", [])):",
       "if not (\"*\" in caller.get(\"scopes\", []) or all(s in caller.get(\"scopes\", []) or "
       "s.split(\":\")[0] + \":*\" in caller.get(\"scopes\", []) for s in operation.get(\"scopes\", []))):")],
     "Identity, scope, tenant, ownership — in that order", "tools.servers-validate-inputs"),
    ("ex10_authorize_call", "a scope matched as a substring",
     [("if not set(operation.get(\"scopes\", [])) <= set(caller.get(\"scopes\", [])):",
       "if not all(any(h in s for h in caller.get(\"scopes\", [])) for s in operation.get(\"scopes\", [])):")],
     "Identity, scope, tenant, ownership — in that order", "tools.servers-validate-inputs"),
    ("ex10_authorize_call", "tenant checked before scope",
     [("    if not set(operation.get", "    if target.get(\"tenant\") is not None and caller.get(\"tenant\") != "
       "target[\"tenant\"]:\n        return \"tenant\"\n    if not set(operation.get")],
     "Two faults at once: the first check in the table", "tools.servers-validate-inputs"),
    ("ex10_authorize_call", "an empty subject taken as a caller",
     [("if caller is None or not caller.get(\"subject\"):", "if caller is None:")],
     "Identity, scope, tenant, ownership — in that order", "tools.servers-validate-inputs"),
    ("ex10_authorize_call", "a caller without a tenant passes the tenant check",
     [("if target.get(\"tenant\") is not None and caller.get(\"tenant\") != target[\"tenant\"]:",
       "if target.get(\"tenant\") is not None and caller.get(\"tenant\") not in (None, target[\"tenant\"]):")],
     "Any caller, operation and object answers like the fixed checks", "tools.servers-validate-inputs"),
    ("ex10_authorize_call", "a handle's client not checked when the caller has none",
     [("if target.get(\"client_id\") is not None and caller.get(\"client_id\") != target[\"client_id\"]:",
       "if target.get(\"client_id\") is not None and caller.get(\"client_id\") not in (None, target[\"client_id\"]):")],
     "Any caller, operation and object answers like the fixed checks", "security.bp.state-handle-not-auth"),
    # --- ex10_replay_guard ---
    ("ex10_replay_guard", "a token still good at its expiry instant",
     [('    if now >= envelope.get("exp", 0):', '    if now > envelope.get("exp", 0):')],
     "Bound to the caller, the request and an expiry", "mrtr.state-integrity"),
    ("ex10_replay_guard", "a keyless hash as the seal",
     [("return _b64(hmac.new(bytes.fromhex(key), body, hashlib.sha256).digest())",
       "return _b64(hashlib.sha256(body).digest())")],
     "Nothing in the envelope can be changed without the key", "mrtr.state-integrity"),
    ("ex10_replay_guard", "a caller of nobody accepted",
     [('    if envelope.get("sub") != caller:', '    if caller is not None and envelope.get("sub") != caller:')],
     "Bound to the caller, the request and an expiry", "mrtr.state-integrity"),
    ("ex10_replay_guard", "the nonce left out of the MAC",
     [("    if not dot or not hmac.compare_digest(mac, _mac(key, body)):",
       "    unsigned = json.loads(body)\n    unsigned.pop('nonce', None)\n"
       "    if not dot or not hmac.compare_digest(mac, _mac(key, json.dumps(unsigned, sort_keys=True, "
       "separators=(',', ':')).encode())):"),
      ('    return f"{_b64(body)}.{_mac(key, body)}"',
       '    unsigned = json.loads(body)\n    unsigned.pop("nonce")\n'
       "    return _b64(body) + '.' + _mac(key, json.dumps(unsigned, sort_keys=True, separators=(',', ':')).encode())")],
     "Nothing in the envelope can be changed without the key", "mrtr.state-integrity"),
    ("ex10_replay_guard", "a token still good at its expiry instant (generated)",
     [('    if now >= envelope.get("exp", 0):', '    if now > envelope.get("exp", 0):')],
     "Any situation opens like the fixed codec", "mrtr.state-integrity"),
    ("ex10_replay_guard", "the request not checked (generated)",
     [('    if envelope.get("req") != request:\n        raise ValueError("issued for another request")\n', "")],
     "Any situation opens like the fixed codec", "mrtr.state-integrity"),
    # --- ex10_sandbox_policy ---
    ("ex10_sandbox_policy", "the scheme stripped as lower-case text",
     [("root_paths = [urlparse(uri).path for uri in roots]", "root_paths = [uri.removeprefix(\"file://\") for uri in roots]")],
     "Inside the roots, and nowhere else", "roots.client-exposes-with-permission"),
    ("ex10_sandbox_policy", "only the first root",
     [("root_paths = [urlparse(uri).path for uri in roots]", "root_paths = [urlparse(uri).path for uri in roots[:1]]")],
     "Inside the roots, and nowhere else", "roots.client-exposes-with-permission"),
    ("ex10_sandbox_policy", "subdomains of each host allowed",
     [("\"egress\": list(needs.get(\"egress\", []))}",
       "\"egress\": [*needs.get(\"egress\", []), *(\"*.\" + h for h in needs.get(\"egress\", []))]}")],
     "Exactly the declared needs", "security.bp.local-guardrails"),
    ("ex10_sandbox_policy", "hosts matched as prefixes",
     [("\"egress\": list(needs.get(\"egress\", []))}", "\"egress\": [h + \"*\" for h in needs.get(\"egress\", [])]}")],
     "Exactly the declared needs", "security.bp.local-guardrails"),
    ("ex10_sandbox_policy", "globs widened past their underscore",
     [("\"environment\": list(needs.get(\"environment\", [])),",
       "\"environment\": [g.replace(\"_*\", \"*\") for g in needs.get(\"environment\", [])],")],
     "Exactly the declared needs", "security.bp.local-guardrails"),
    ("ex10_sandbox_policy", "only the first directory",
     [("[*needs.get(\"directories\", []), *root_paths]", "[*needs.get(\"directories\", [])[:1], *root_paths]")],
     "Exactly the declared needs", "security.bp.local-guardrails"),
    ("ex10_sandbox_policy", "the scheme stripped as lower-case text (generated)",
     [("root_paths = [urlparse(uri).path for uri in roots]", "root_paths = [uri.removeprefix(\"file://\") for uri in roots]")],
     "Any needs or roots, any probe: the fixed policies' answer", "roots.client-exposes-with-permission"),
    # --- ex10_review_everything ---
    ("ex10_review_everything", "paths are refused only with an order",
     [("    re.compile(r\"(~|\\.\\.)?/[\\w.-]+/[\\w./-]+|\\b(ssh|id_rsa|id_ed25519|\\.env|credential|password|api[_ ]?key|\"\n"
       "               r\"token)s?\\b\", re.I),\n", "")],
     "One sign is enough: a path, an order, a hidden character", "security.host.tool-review-is-detection"),
    ("ex10_review_everything", "orders are refused only with a path",
     [("        if any(sign.search(visible) for sign in SIGNS):",
       "        if any(sign.search(visible) for sign in SIGNS[1:]):")],
     "One sign is enough: a path, an order, a hidden character", "security.host.tool-review-is-detection"),
    ("ex10_review_everything", "hidden characters not revealed before the words",
     [("        visible = as_the_model_reads(text)\n", "        visible = text\n")],
     "One sign is enough: a path, an order, a hidden character", "security.host.tool-review-is-detection"),
    ("ex10_review_everything", "lists not walked (items, anyOf, examples)",
     [("        return [s for item in value for s in strings(item)]", "        return []")],
     "Fields no attack has used yet", "security.host.tool-review-is-detection"),
    ("ex10_review_everything", "only the six fingerprinted fields reviewed",
     [('strings({k: v for k, v in tool.items() if k != "_meta"})', "strings({k: tool.get(k) for k in READ_BY_THE_MODEL})")],
     "Any definition reviews like the Host's reviewer", "security.host.tool-review-is-detection"),
    ("ex10_review_everything", "a CRC as the fingerprint",
     [("    return hashlib.sha256(text.encode()).hexdigest()", "    import zlib\n    return format(zlib.crc32(text.encode()), '08x')")],
     "The fingerprint changes exactly when the definition does", "security.host.rereview-changed-definitions"),
    ("ex10_review_everything", "Python's hash() as the fingerprint",
     [("    return hashlib.sha256(text.encode()).hexdigest()", "    return str(hash(text))")],
     "The fingerprint changes exactly when the definition does", "security.host.rereview-changed-definitions"),
    # --- more of chapters 10 and 11, one mistake class at a time (see MISTAKE_CLASSES) ---
    # ex10_origin_check
    ("ex10_origin_check", "the IPv6 loopback allowed too",
     [(_OWN_ORIGINS, _OWN_ORIGINS + ' or origin == f"http://[::1]:{port}"')],
     "Only exact origins of the server's own pages", "http.origin-present-and-invalid-403"),
    ("ex10_origin_check", "https accepted as well",
     [(_OWN_ORIGINS, _OWN_ORIGINS.replace("return origin in", 'return origin.replace("https://", "http://", 1) in'))],
     "Only exact origins of the server's own pages", "http.origin-present-and-invalid-403"),
    ("ex10_origin_check", "0.0.0.0 taken for the server's own host",
     [(_OWN_ORIGINS, _OWN_ORIGINS + ' or origin == f"http://0.0.0.0:{port}"')],
     "Only exact origins of the server's own pages", "http.origin-present-and-invalid-403"),
    ("ex10_origin_check", "an own origin accepted as a prefix",
     [(_OWN_ORIGINS, 'return origin.startswith((f"http://localhost:{port}", f"http://127.0.0.1:{port}"))')],
     "Only exact origins of the server's own pages", "http.origin-present-and-invalid-403"),
    ("ex10_origin_check", "a host that starts with localhost, on the server's port",
     [(_OWN_ORIGINS, 'return origin.startswith(("http://localhost", "http://127.0.0.1")) and origin.endswith(f":{port}")')],
     "Only exact origins of the server's own pages", "http.origin-present-and-invalid-403"),
    ("ex10_origin_check", "the host alone compared",
     [(_OWN_ORIGINS, "from urllib.parse import urlsplit\n    parts = urlsplit(origin)\n"
       '    return parts.scheme == "http" and parts.hostname in ("localhost", "127.0.0.1")')],
     "Only exact origins of the server's own pages", "http.origin-present-and-invalid-403"),
    ("ex10_origin_check", "the port alone compared",
     [(_OWN_ORIGINS, 'return origin != "null" and origin.endswith(f":{port}")')],
     "Only exact origins of the server's own pages", "http.origin-present-and-invalid-403"),
    ("ex10_origin_check", "localhost and 127.0.0.1 looked for as substrings",
     [(_OWN_ORIGINS, 'return ("//localhost:" in origin or "//127.0.0.1:" in origin) and origin.endswith(str(port))')],
     "Only exact origins of the server's own pages", "http.origin-present-and-invalid-403"),
    # ex10_token_audience
    ("ex10_token_audience", "the audience's host alone compared",
     [('if token.get("aud") != resource:', 'if str(token.get("aud", "")).split("/")[:3] != resource.split("/")[:3]:')],
     "The audience is exactly this server", "auth.server-validates-audience"),
    ("ex10_token_audience", "a trailing slash on the audience ignored",
     [('if token.get("aud") != resource:', 'if str(token.get("aud")).rstrip("/") != resource.rstrip("/"):')],
     "The audience is exactly this server", "auth.server-validates-audience"),
    ("ex10_token_audience", "only the first required scope checked",
     [('if not set(required_scopes) <= set(token["scopes"]):',
       'if required_scopes and required_scopes[0] not in token["scopes"]:')],
     "Scopes are whole strings; a missing one is 403", "auth.insufficient-scope-403"),
    ("ex10_token_audience", "only the last required scope checked",
     [('if not set(required_scopes) <= set(token["scopes"]):',
       'if required_scopes and required_scopes[-1] not in token["scopes"]:')],
     "Scopes are whole strings; a missing one is 403", "auth.insufficient-scope-403"),
    ("ex10_token_audience", "the scope's action alone compared",
     [('if not set(required_scopes) <= set(token["scopes"]):',
       'if not {s.split(":")[-1] for s in required_scopes} <= {s.split(":")[-1] for s in token["scopes"]}:')],
     "Scopes are whole strings; a missing one is 403", "auth.insufficient-scope-403"),
    # ex11_token_check
    ("ex11_token_check", "the audience's path ignored",
     [('if token["audience"] != server["resource"]:',
       'if token["audience"].split("/")[2] != server["resource"].split("/")[2]:')],
     "A bad token: 401 invalid_token", "auth.server-validates-audience"),
    ("ex11_token_check", "the 403 names only the missing scopes",
     [('needed = " ".join(server["required_scopes"])', 'needed = " ".join(missing)')],
     "A missing scope: 403 insufficient_scope naming the scopes", "auth.insufficient-scope-403"),
    ("ex11_token_check", "extra scopes refused",
     [('missing = [s for s in server["required_scopes"] if s not in token["scopes"]]',
       'missing = sorted(set(server["required_scopes"]) ^ set(token["scopes"]))')],
     "A good token is accepted", "auth.insufficient-scope-403"),
    ("ex11_token_check", "only the first required scope checked",
     [('missing = [s for s in server["required_scopes"] if s not in token["scopes"]]',
       'missing = [s for s in server["required_scopes"][:1] if s not in token["scopes"]]')],
     "A missing scope: 403 insufficient_scope naming the scopes", "auth.insufficient-scope-403"),
    ("ex11_token_check", "only the last required scope checked",
     [('missing = [s for s in server["required_scopes"] if s not in token["scopes"]]',
       'missing = [s for s in server["required_scopes"][-1:] if s not in token["scopes"]]')],
     "A missing scope: 403 insufficient_scope naming the scopes", "auth.insufficient-scope-403"),
    ("ex11_token_check", "an empty token after \"Bearer \" looked up",
     [('    scheme, _, value = (authorization or "").partition(" ")\n    value = value.strip(" ")\n'
       '    if scheme.lower() != "bearer" or not value:',
       '    text = authorization or ""\n    value = text[7:].strip(" ")\n    if not text.lower().startswith("bearer "):')],
     "No token: 401 with resource_metadata and no error", "auth.status-codes"),
    # ex11_discovery_urls
    ("ex11_discovery_urls", "an empty resource_metadata taken as the URL",
     [("    if named:\n        return [named]", "    if named is not None:\n        return [named]")],
     "Without it: the well-known URIs, path-aware first", "auth.prm-discovery-order"),
    ("ex11_discovery_urls", "the well-known URIs in the other order",
     [('    return [f"{origin}{PRM}{path}", f"{origin}{PRM}"]', '    return [f"{origin}{PRM}", f"{origin}{PRM}{path}"]')],
     "Without it: the well-known URIs, path-aware first", "auth.prm-discovery-order"),
    ("ex11_discovery_urls", "only the path's last segment inserted",
     [("    origin, path = _split(server_url)\n", '    origin, path = _split(server_url)\n'
       '    path = path[path.rfind("/"):] if path else ""\n')],
     "Without it: the well-known URIs, path-aware first", "auth.prm-discovery-order"),
    ("ex11_discovery_urls", "OpenID Connect tried before RFC 8414",
     [('    return [f"{origin}{OAUTH}{path}", f"{origin}{OIDC}{path}", f"{origin}{path}{OIDC}"]',
       '    return [f"{origin}{OIDC}{path}", f"{origin}{OAUTH}{path}", f"{origin}{path}{OIDC}"]')],
     "Authorization server metadata: RFC 8414, then OIDC, path-aware", "auth.as-metadata-order"),
    ("ex11_discovery_urls", "only the first parameter read",
     [("for m in _PARAM.finditer(rest)}", "for m in list(_PARAM.finditer(rest))[:1]}")],
     "The header's resource_metadata is used as it is", "auth.prm-discovery-order"),
    ("ex11_discovery_urls", "only the last parameter read",
     [("for m in _PARAM.finditer(rest)}", "for m in list(_PARAM.finditer(rest))[-1:]}")],
     "The header's resource_metadata is used as it is", "auth.prm-discovery-order"),
    ("ex11_discovery_urls", "the first parameter skipped as the realm",
     [("for m in _PARAM.finditer(rest)}", "for m in list(_PARAM.finditer(rest))[1:]}")],
     "The header's resource_metadata is used as it is", "auth.prm-discovery-order"),
    # ex11_pkce
    ("ex11_pkce", "only a missing challenge refused",
     [('    if params.get("code_challenge_method") != "S256":  # absent means plain, and plain is refused\n'
       '        return "invalid_request"\n', "")],
     "/authorize refuses plain and missing PKCE", "auth.pkce-as-refuses-plain"),
    ("ex11_pkce", "only the method checked",
     [('    if not params.get("code_challenge"):\n        return "invalid_request"\n', "")],
     "/authorize refuses plain and missing PKCE", "auth.pkce-as-refuses-plain"),
    ("ex11_pkce", "the method compared ignoring case",
     [('params.get("code_challenge_method") != "S256"', 'str(params.get("code_challenge_method")).upper() != "S256"')],
     "/authorize refuses plain and missing PKCE", "auth.pkce-as-refuses-plain"),
    ("ex11_pkce", "the hex digest as the challenge",
     [('    return base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")', "    return digest.hex()")],
     "The S256 challenge of a verifier", "auth.pkce-s256"),
    ("ex11_pkce", "the standard base64 alphabet",
     [("base64.urlsafe_b64encode(digest)", "base64.b64encode(digest)")],
     "The S256 challenge of a verifier", "auth.pkce-s256"),
    ("ex11_pkce", "only '+' made URL-safe",
     [('base64.urlsafe_b64encode(digest).decode("ascii")', 'base64.b64encode(digest).decode("ascii").replace("+", "-")')],
     "The S256 challenge of a verifier", "auth.pkce-s256"),
    ("ex11_pkce", "only '/' made URL-safe",
     [('base64.urlsafe_b64encode(digest).decode("ascii")', 'base64.b64encode(digest).decode("ascii").replace("/", "_")')],
     "The S256 challenge of a verifier", "auth.pkce-s256"),
    # ex10_authorize_call
    ("ex10_authorize_call", "ownership checked before tenant",
     [('    if target.get("tenant") is not None and caller.get("tenant") != target["tenant"]:\n        return "tenant"\n'
       '    if target.get("owner") is not None and caller["subject"] != target["owner"]:\n        return "ownership"\n',
       '    if target.get("owner") is not None and caller["subject"] != target["owner"]:\n        return "ownership"\n'
       '    if target.get("tenant") is not None and caller.get("tenant") != target["tenant"]:\n        return "tenant"\n')],
     "Identity, scope, tenant, ownership — in that order", "tools.servers-validate-inputs"),
    ("ex10_authorize_call", "the subject alone taken as the principal",
     [('    if target.get("tenant") is not None and caller.get("tenant") != target["tenant"]:\n        return "tenant"\n', "")],
     "Identity, scope, tenant, ownership — in that order", "tools.servers-validate-inputs"),
    ("ex10_authorize_call", "the handle's client not checked",
     [('    if target.get("client_id") is not None and caller.get("client_id") != target["client_id"]:\n'
       '        return "ownership"', "")],
     "Subject, tenant and client of a handle", "security.bp.state-handle-not-auth"),
    ("ex10_authorize_call", "a colleague in the same tenant served",
     [('    if target.get("owner") is not None and caller["subject"] != target["owner"]:\n        return "ownership"\n', "")],
     "Identity, scope, tenant, ownership — in that order", "tools.servers-validate-inputs"),
    ("ex10_authorize_call", "only the first required scope checked",
     [('if not set(operation.get("scopes", [])) <= set(caller.get("scopes", [])):',
       'if not set(operation.get("scopes", [])[:1]) <= set(caller.get("scopes", [])):')],
     "Two faults at once: the first check in the table", "tools.servers-validate-inputs"),
    ("ex10_authorize_call", "only the last required scope checked",
     [('if not set(operation.get("scopes", [])) <= set(caller.get("scopes", [])):',
       'if not set(operation.get("scopes", [])[-1:]) <= set(caller.get("scopes", [])):')],
     "Two faults at once: the first check in the table", "tools.servers-validate-inputs"),
    ("ex10_authorize_call", "ownership checked only when the object has a tenant",
     [('    if target.get("tenant") is not None and caller.get("tenant") != target["tenant"]:\n        return "tenant"\n'
       '    if target.get("owner") is not None and caller["subject"] != target["owner"]:\n        return "ownership"\n',
       '    if target.get("tenant") is not None:\n        if caller.get("tenant") != target["tenant"]:\n'
       '            return "tenant"\n        if target.get("owner") is not None and caller["subject"] != target["owner"]:\n'
       '            return "ownership"\n')],
     "Any caller, operation and object answers like the fixed checks", "tools.servers-validate-inputs"),
    # ex10_replay_guard
    ("ex10_replay_guard", "an empty MAC accepted (the MAC compared as a prefix)",
     [("    if not dot or not hmac.compare_digest(mac, _mac(key, body)):", "    if not _mac(key, body).startswith(mac):")],
     "Nothing in the envelope can be changed without the key", "mrtr.state-integrity"),
    ("ex10_replay_guard", "the caller not checked",
     [('    if envelope.get("sub") != caller:\n        raise ValueError("issued to another caller")\n', "")],
     "Bound to the caller, the request and an expiry", "mrtr.state-integrity"),
    ("ex10_replay_guard", "the payment key names the client",
     [("    return f\"{call['subject']}|pay|{invoice}\"", "    return f\"{call['subject']}|{call['client_id']}|pay|{invoice}\"")],
     "The key names the business operation", "security.idempotent-side-effects"),
    ("ex10_replay_guard", "the payment key names the flow",
     [("    return f\"{call['subject']}|pay|{invoice}\"", "    return f\"{call['subject']}|{call['nonce']}|pay|{invoice}\"")],
     "The key names the business operation", "security.idempotent-side-effects"),
    ("ex10_replay_guard", "the MAC covers only the state",
     [('    return f"{_b64(body)}.{_mac(key, body)}"',
       '    return f"{_b64(body)}.{_mac(key, json.dumps(state, sort_keys=True).encode())}"'),
      ("    if not dot or not hmac.compare_digest(mac, _mac(key, body)):",
       "    if not dot or not hmac.compare_digest(mac, _mac(key, json.dumps(json.loads(body)['state'], "
       "sort_keys=True).encode())):")],
     "Nothing in the envelope can be changed without the key", "mrtr.state-integrity"),
    ("ex10_replay_guard", "the MAC covers the state and the caller only",
     [('    return f"{_b64(body)}.{_mac(key, body)}"',
       '    return f"{_b64(body)}.{_mac(key, json.dumps([state, caller], sort_keys=True).encode())}"'),
      ("    if not dot or not hmac.compare_digest(mac, _mac(key, body)):",
       "    seen = json.loads(body)\n    if not dot or not hmac.compare_digest(mac, _mac(key, json.dumps("
       "[seen['state'], seen['sub']], sort_keys=True).encode())):")],
     "Nothing in the envelope can be changed without the key", "mrtr.state-integrity"),
    ("ex10_replay_guard", "only the MAC's presence checked",
     [("    if not dot or not hmac.compare_digest(mac, _mac(key, body)):", "    if not dot or not mac:")],
     "Nothing in the envelope can be changed without the key", "mrtr.state-integrity"),
    # ex10_sandbox_policy
    ("ex10_sandbox_policy", "only the first host",
     [('"egress": list(needs.get("egress", []))}', '"egress": list(needs.get("egress", []))[:1]}')],
     "Exactly the declared needs", "security.bp.local-guardrails"),
    ("ex10_sandbox_policy", "roots readable, not writable",
     [('            "writable": root_paths,', '            "writable": [],')],
     "Inside the roots, and nowhere else", "roots.client-exposes-with-permission"),
    ("ex10_sandbox_policy", "the declared directories writable too",
     [('            "writable": root_paths,', '            "writable": [*needs.get("directories", []), *root_paths],')],
     "Exactly the declared needs", "security.bp.local-guardrails"),
    ("ex10_sandbox_policy", "the scheme's two spellings stripped",
     [("root_paths = [urlparse(uri).path for uri in roots]",
       'root_paths = [uri.replace("file://", "", 1).replace("FILE://", "", 1) for uri in roots]')],
     "Inside the roots, and nowhere else", "roots.client-exposes-with-permission"),
    ("ex10_sandbox_policy", "a root kept only when written file://",
     [("root_paths = [urlparse(uri).path for uri in roots]",
       'root_paths = [urlparse(uri).path for uri in roots if uri.startswith("file://")]')],
     "Inside the roots, and nowhere else", "roots.client-exposes-with-permission"),
    ("ex10_sandbox_policy", "only the globs kept",
     [('"environment": list(needs.get("environment", [])),',
       '"environment": [g for g in needs.get("environment", []) if g.endswith("*")],')],
     "Exactly the declared needs", "security.bp.local-guardrails"),
    # ex10_review_everything
    ("ex10_review_everything", "property names not looked at",
     [("        if visible != text:\n", "        if is_key:\n            continue\n        if visible != text:\n")],
     "Fields no attack has used yet", "security.host.tool-review-is-detection"),
    ("ex10_review_everything", "the output schema not reviewed",
     [('strings({k: v for k, v in tool.items() if k != "_meta"})',
       'strings({k: v for k, v in tool.items() if k not in ("_meta", "outputSchema")})')],
     "Fields no attack has used yet", "security.host.tool-review-is-detection"),
    ("ex10_review_everything", "keys in another order change the fingerprint",
     [("    text = json.dumps({k: tool.get(k) for k in READ_BY_THE_MODEL}, sort_keys=True, separators=(\",\", \":\"))",
       "    text = json.dumps({k: tool.get(k) for k in tool if k in READ_BY_THE_MODEL})")],
     "The fingerprint changes exactly when the definition does", "security.host.rereview-changed-definitions"),
    ("ex10_review_everything", "a digest cut to 12 characters",
     [("    return hashlib.sha256(text.encode()).hexdigest()", "    return hashlib.sha256(text.encode()).hexdigest()[:12]")],
     "The fingerprint changes exactly when the definition does", "security.host.rereview-changed-definitions"),
    ("ex10_review_everything", "parameter names reviewed like text",
     [("        if is_key:\n            continue\n", "")],
     "Honest definitions still reach the model", "security.host.tool-review-is-detection"),
    ("ex10_review_everything", "its own snake_case parameter taken for another tool",
     [("        if any(name not in own for name in TOOL_NAME.findall(visible)):",
       "        if any(name != tool.get('name') for name in TOOL_NAME.findall(visible)):")],
     "Honest definitions still reach the model", "security.host.tool-review-is-detection"),
    ("ex10_review_everything", "an order list without 'always'",
     [("|\\b(always|never|", "|\\b(never|")],
     "One sign is enough: a path, an order, a hidden character", "security.host.tool-review-is-detection"),
    ("ex10_review_everything", "an order list without 'must'",
     [("never|must|you should", "never|you should")],
     "One sign is enough: a path, an order, a hidden character", "security.host.tool-review-is-detection"),
    ("ex10_review_everything", "an order list without 'ignore'",
     [("make sure|ignore|instead", "make sure|instead")],
     "One sign is enough: a path, an order, a hidden character", "security.host.tool-review-is-detection"),
    # --- ex12_capstone (the Host policy's reads) ---
    ("ex12_capstone", "the file scheme compared in lower case only",
     [('    if parts.scheme != "file":', '    if not uri.startswith("file://"):')],
     "What the model may read", "host.connections-are-not-a-sandbox"),
    ("ex12_capstone", "only the lower-case encoded climb decoded",
     [("    path = posixpath.normpath(unquote(parts.path))", "    path = posixpath.normpath(parts.path.replace('%2e', '.'))")],
     "What the model may read", "host.connections-are-not-a-sandbox"),
    ("ex12_capstone", "only the first root",
     [("    for root in roots:\n        base = posixpath.normpath(unquote(urlsplit(root).path))",
       "    for root in roots[:1]:\n        base = posixpath.normpath(unquote(urlsplit(root).path))")],
     "What the model may read", "host.tool-policy"),
    ("ex12_capstone", "an untrusted server's files inside the roots",
     [('    if not trusted:\n        return False\n    parts = urlsplit(uri)\n    if parts.scheme != "file":\n        return True',
       '    parts = urlsplit(uri)\n    if parts.scheme != "file":\n        return trusted')],
     "What the model may read", "host.connections-are-not-a-sandbox"),
    ("ex12_capstone", "the file scheme compared in lower case only (generated)",
     [('    if parts.scheme != "file":', '    if not uri.startswith("file://"):')],
     "Any URI and roots: what the model may read", "host.connections-are-not-a-sandbox"),
    ("ex12_capstone", "a zero amount accepted",
     [("        if cents <= 0:", "        if cents < 0:")],
     "Your server, driven by the official SDK over stdio in both eras", "tools.execution-error-is-result"),
    ("ex12_capstone", "the refusal names the expense's owner",
     [('            raise ValueError(f"you have no expense {expense_id}")  # the same answer for someone else\'s',
       '            owner = next((e["owner"] for e in book.values() if e["id"] == expense_id), None)\n'
       '            raise ValueError(f"{expense_id} belongs to {owner}" if owner else f"no expense {expense_id}")')],
     "Your server, driven by the official SDK over stdio in both eras", "realwire.other-callers-records-not-found"),
]


@pytest.mark.parametrize(("exercise_id", "name", "source"), ALTERNATIVES, ids=[f"{a[0]}:{a[1]}" for a in ALTERNATIVES])
def test_a_valid_alternative_design_passes(tmp_path: Path, exercise_id: str, name: str, source: Any) -> None:
    for result in _grade(tmp_path, exercise_id, _source(exercise_id, source), ALT_SEEDS):
        assert result.passed, f"{name}:\n{result}"


@pytest.mark.parametrize(("exercise_id", "name", "edits", "failing_check", "rule"), WRONG,
                         ids=[f"{w[0]}:{w[1]}" for w in WRONG])
def test_a_wrong_answer_is_rejected_by_the_right_rule(tmp_path: Path, exercise_id: str, name: str, edits: Any,
                                                      failing_check: str, rule: str) -> None:
    seeds = WIRE_SEEDS if failing_check == WIRE_CHECK else SEEDS
    for check in assert_wrong_answer_rejected(tmp_path, exercise_id, name, edits, failing_check, rule, seeds=seeds):
        if check.status == "failed" and len(check.expected) > 8:  # the answer waits for the last hint
            assert check.expected not in check.explanation, f"{name}: the first message states the answer"


# --- every mistake class, three wrong answers each (issue "Grading that generalizes") ------------------

MISTAKE_CLASSES: dict[str, dict[str, list[str] | str]] = {
    "ex10_origin_check": {
        "axes": ["any loopback address", "subdomains of localhost allowed", "the IPv6 loopback allowed too",
                 "https accepted as well", "0.0.0.0 taken for the server's own host"],
        "boundaries": ["any host that starts with 127.", "the default port taken as the server's",
                       "an own origin accepted as a prefix", "a host that starts with localhost, on the server's port"],
        "one-input": ["the scheme ignored (generated)", "the host alone compared", "the port alone compared",
                      "localhost and 127.0.0.1 looked for as substrings"],
        "seed": "The seed draws only the server's port and the names around it, and every kind is written around "
                "the drawn port, so no variation of the draw can hide a mistake.",
    },
    "ex10_token_audience": {
        "axes": ["scopes as an ordered list", "the audience's host alone compared", "wildcard scopes granted"],
        "boundaries": ["now == exp still served", "the audience's prefix accepted", "a token without aud accepted",
                       "audiences compared ignoring case", "a trailing slash on the audience ignored",
                       "a substring of the scope accepted"],
        "one-input": ["any one required scope suffices", "scopes checked before the audience (403 before 401)",
                      "scopes checked before the expiry"],
        "seed": ["only the first required scope checked", "only the last required scope checked",
                 "the scope's action alone compared"],
    },
    "ex11_token_check": {
        "axes": ["the audience's path ignored", "the 403 names only the missing scopes", "extra scopes refused"],
        "boundaries": ["the scheme compared case-sensitively", "the audience's prefix accepted",
                       "\"Bearer\" alone read as a token", "the token is everything after the first space",
                       "now == exp still served (generated)"],
        "one-input": ["any one required scope suffices", "scopes checked before the expiry",
                      "scopes checked before the audience"],
        "seed": ["only the first required scope checked", "only the last required scope checked",
                 "an empty token after \"Bearer \" looked up"],
    },
    "ex11_discovery_urls": {
        "axes": ["the well-known URIs in the other order", "only the path's last segment inserted",
                 "OpenID Connect tried before RFC 8414"],
        "boundaries": ["the scheme compared case-sensitively", "parameters split at \", \"",
                       "the named URL's query dropped", "the port dropped from the origin",
                       "the port dropped from the issuer"],
        "one-input": ["a naive search for resource_metadata=\"…\"", "another scheme's parameters read",
                      "an empty resource_metadata taken as the URL"],
        "seed": ["only the first parameter read", "only the last parameter read",
                 "the first parameter skipped as the realm"],
    },
    "ex11_pkce": {
        "axes": ["any S-method accepted (S384 too)", "the method compared ignoring case",
                 "the hex digest as the challenge"],
        "boundaries": ["an empty challenge let through", "the method stripped before comparing",
                       "the verifier cut to 43 characters before hashing", "an empty verifier waved through",
                       "padding kept (generated)"],
        "one-input": ["only plain refused by name", "only a missing challenge refused", "only the method checked"],
        "seed": ["the standard base64 alphabet", "only '+' made URL-safe", "only '/' made URL-safe"],
    },
    "ex10_authorize_call": {
        "axes": ["wildcard scopes granted", "the handle's client not checked", "a colleague in the same tenant served"],
        "boundaries": ["an empty subject taken as a caller", "a scope matched as a substring",
                       "a caller without a tenant passes the tenant check",
                       "a handle's client not checked when the caller has none"],
        "one-input": ["any one required scope suffices", "tenant checked before scope", "ownership checked before tenant",
                      "the subject alone taken as the principal"],
        "seed": ["only the first required scope checked", "only the last required scope checked",
                 "ownership checked only when the object has a tenant"],
    },
    "ex10_replay_guard": {
        "axes": ["the nonce left out of the MAC", "the request not checked (generated)", "the caller not checked",
                 "the payment key names the client", "the payment key names the flow"],
        "boundaries": ["a token still good at its expiry instant", "a caller of nobody accepted",
                       "an empty MAC accepted (the MAC compared as a prefix)"],
        "one-input": ["the MAC covers only the state", "the MAC covers the state and the caller only",
                      "only the MAC's presence checked"],
        "seed": "The seed draws only the key, the names (always two different people), invoice numbers and times, "
                "and every kind's verdict is the same whatever is drawn, so no draw can hide a mistake.",
    },
    "ex10_sandbox_policy": {
        "axes": ["only the first root", "only the first directory", "only the first host", "roots readable, not writable",
                 "the declared directories writable too"],
        "boundaries": ["the scheme stripped as lower-case text", "hosts matched as prefixes",
                       "globs widened past their underscore", "subdomains of each host allowed"],
        "one-input": ["the scheme's two spellings stripped", "a root kept only when written file://",
                      "only the globs kept"],
        "seed": "The answer is four lists that the Host's own machine evaluates; the seed draws only the names in "
                "paths, variables and hosts, and every kind probes the same relation whatever names are drawn.",
    },
    "ex10_review_everything": {
        "axes": ["lists not walked (items, anyOf, examples)", "only the six fingerprinted fields reviewed",
                 "property names not looked at", "the output schema not reviewed"],
        "boundaries": ["keys in another order change the fingerprint", "a digest cut to 12 characters",
                       "parameter names reviewed like text", "its own snake_case parameter taken for another tool"],
        "one-input": ["paths are refused only with an order", "orders are refused only with a path",
                      "hidden characters not revealed before the words"],
        "seed": ["an order list without 'always'", "an order list without 'must'", "an order list without 'ignore'"],
    },
}
"""Exercise → mistake class (:data:`wrong_classes.CLASSES`) → wrong answers of :data:`WRONG` of that class, or
why the class does not apply. The ``seed`` answers are the mistakes a seed's draw used to hide — which of two
required scopes a token holds, where ``resource_metadata`` sits in the header, which base64 character a challenge
needs, which order word a description uses — each now a kind of its own, tried on every seed."""


def test_every_mistake_class_has_three_wrong_answers() -> None:
    known: dict[str, list[str]] = {}
    for exercise_id, name, *_ in WRONG:
        known.setdefault(exercise_id, []).append(name)
    wrong_classes.check_table(MISTAKE_CLASSES, known)

# --- one truth: the reference answers like the oracle on the generated inputs ------------------------

@functools.cache
def _reference(exercise_id: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"reference_{exercise_id}", reference_path(exercise_id))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TRUTH_SETTINGS = settings(max_examples=150, database=None, deadline=None, derandomize=True)


@TRUTH_SETTINGS
@given(case=ex10_token_audience._token_cases())
def test_token_audience_reference_is_the_oracle(case: Any) -> None:
    claims, resource, required, now = case
    ref = _reference("ex10_token_audience")
    assert ref.check_token(dict(claims), resource, list(required), now) == ex10_token_audience._oracle(*case)[0]


def test_token_audience_corners_are_the_reference_too() -> None:
    ref = _reference("ex10_token_audience")
    statuses = set()
    for case in ex10_token_audience._corners():
        want = ex10_token_audience._oracle(*case)[0]
        assert ref.check_token(dict(case[0]), case[1], list(case[2]), case[3]) == want, case
        statuses.add(want)
    assert statuses == {200, 401, 403}


@TRUTH_SETTINGS
@given(case=ex11_token_check._inputs())
def test_token_check_reference_is_the_oracle(case: Any) -> None:
    authorization, token, server = case
    got = _reference("ex11_token_check").check_token(authorization, token, server)
    assert ex11_token_check.judge(authorization, token, server, got) is None


@TRUTH_SETTINGS
@given(case=ex11_discovery_urls._prm_inputs(), issuer=ex11_discovery_urls._AS_INPUTS)
def test_discovery_reference_is_the_oracle(case: Any, issuer: str) -> None:
    ref = _reference("ex11_discovery_urls")
    assert ref.prm_urls(*case) == ex11_discovery_urls.expected_prm_urls(*case)
    assert ref.as_metadata_urls(issuer) == metadata_urls(issuer)


def test_token_check_corners_and_kinds_reach_every_answer() -> None:
    rng = random.Random(5)
    kinds = (ex11_token_check.NONE_KINDS + ex11_token_check.INVALID_KINDS + ex11_token_check.SCOPE_KINDS +
             ex11_token_check.OK_KINDS + ex11_token_check.ORDER_KINDS)
    seen = {ex11_token_check.expected(*ex11_token_check.build_case(rng, k)) for k in kinds}
    assert {status for status, _ in seen} == {200, 401, 403}
    assert {rule for _, rule in seen} == {"auth.status-codes", "auth.invalid-token-401", "auth.server-validates-audience",
                                          "auth.insufficient-scope-403", "auth.server-validates-tokens"}
    assert ex11_token_check.bearer_value("bEaReR  at_1") == "at_1" and ex11_token_check.bearer_value("Bearer") is None


def test_pkce_reference_is_the_authorization_server_on_every_pair() -> None:
    ref = _reference("ex11_pkce")
    authority = ex11_pkce._Authority(random.Random(0))
    answers = set()
    for challenge in ex11_pkce._CHALLENGES.values():
        for method in ex11_pkce._METHODS.values():
            params = ex11_pkce._pkce_params(challenge, method)
            want = authority.authorize(params).get("error")
            assert ref.authorize_error(dict(params)) == want, params
            answers.add(want)
    assert answers == {None, "invalid_request"}


@settings(max_examples=40, database=None, deadline=None, derandomize=True)
@given(verifier=ex11_pkce._VERIFIERS, how=st.sampled_from(ex11_pkce._PRESENTED))
def test_pkce_reference_is_the_token_endpoint(verifier: str, how: str) -> None:
    ref = _reference("ex11_pkce")
    challenge, presented = ex11_pkce.s256(verifier), ex11_pkce._presented(verifier, how)
    assert ref.code_challenge(verifier) == challenge
    assert ref.verifier_matches(challenge, presented) is ex11_pkce._Authority(random.Random(0)).redeem(challenge,
                                                                                                       presented)


@TRUTH_SETTINGS
@given(case=ex10_origin_check._origins())
def test_origin_reference_is_the_fixed_allow_list(case: tuple[str, int]) -> None:
    origin, port = case
    assert _reference("ex10_origin_check").origin_allowed(origin, port) is (origin in ex10_origin_check._FIXED(port))


@TRUTH_SETTINGS
@given(case=ex10_authorize_call._calls())
def test_authorize_reference_is_the_fixed_checks(case: Any) -> None:
    caller, operation, target = case
    want = ex10_authorize_call.oracle(ex10_authorize_call._auth(caller), operation, target)
    assert _reference("ex10_authorize_call").authorize(caller, dict(operation), dict(target)) == want


def test_authorize_oracle_is_the_labs_own_checks_on_their_cases() -> None:
    rng = random.Random(11)
    module = ex10_authorize_call
    for kind in module.BALANCE_DENIED + module.DRAFT_DENIED + module.ALLOWED + module.ORDER_KINDS[:2]:
        draft = kind.startswith("the handle")
        auth, target = (module._draft_case if draft else module._balance_case)(rng, kind)
        operation = module.READ_DRAFT if draft else module.BALANCE
        assert module.oracle(auth, operation, target) == module.expected(auth, operation, target), kind


def test_replay_reference_opens_like_the_fixed_codec_in_every_situation() -> None:
    ref, module = _reference("ex10_replay_guard"), ex10_replay_guard
    secret, request = bytes(range(32)), "ab" * 32
    state = {"answers": {"details": {"action": "accept", "content": {"payee": "DE1", "amount": 0}}}}
    token = ref.seal_state(secret.hex(), state, "ada", request, 400.0, "n0")
    edits = [token, token.partition(".")[0], module._tamper(token, lambda e: e.update(sub="bo")),
             module._rehash(module._tamper(token, lambda e: e.update(sub="bo"))),
             module._reseal_under(b"k" * 32, token), module._tamper(token, lambda e: e.update(nonce="n1"))]
    verdicts = set()
    for edited in edits:
        for who in ("ada", "bo", None):
            for at in (100.0, 399.999, 400.0, 400.001):
                for req in (request, "cd" * 32):
                    here = module.Situation(module.AuthInfo(who) if who else None, req, at)
                    want = module._fixed_opens(secret, edited, here)
                    try:
                        got = ref.open_state(secret.hex(), edited, who, req, at)
                    except ValueError:
                        got = None
                    assert got == want, (edited, who, at, req)
                    verdicts.add(want is None)
    assert verdicts == {True, False}


@TRUTH_SETTINGS
@given(case=ex10_sandbox_policy._cases())
def test_sandbox_reference_is_the_labs_fixed_policies(case: Any) -> None:
    needs, roots, probe, argument = case
    policy = ex10_sandbox_policy.policy_from(_reference("ex10_sandbox_policy").sandbox_policy(needs, list(roots)))
    assert ex10_sandbox_policy._allows(policy, probe, argument) is ex10_sandbox_policy._fixed(case)


def test_review_reference_is_the_hosts_reviewer_everywhere() -> None:
    ref, module = _reference("ex10_review_everything"), ex10_review_everything
    verdicts = set()
    for where in module._WHERE:
        for poison in module._POISON:
            tool = module._definition(where, poison, "3")
            want = bool(module._REVIEWER("weather", tool))
            assert ref.review("weather", tool) is want, (where, poison)
            verdicts.add(want)
    assert verdicts == {True, False}
    rng = random.Random(2)
    for kind in module.DIRECT_POISON_KINDS + module.SINGLE_SIGN_KINDS:
        tool = module._poisoned(rng, kind if kind in module.SINGLE_SIGN_KINDS else module._where(kind))
        assert not module._REVIEWER("weather", tool) and not ref.review("weather", tool), kind

CAPSTONE_ALT_SERVER = [
    ("        return json.dumps([public(e) for e in mine(ctx)])",
     "        return json.dumps([dict(sorted(public(e).items())) for e in mine(ctx)], indent=2)"),
    ('        number = 1 + max((int(i.rsplit("-", 1)[-1]) for i in book if i.rsplit("-", 1)[-1].isdigit()), default=0)\n'
     '        expense = {"id": f"exp-{number}",',
     '        number = len(book)\n        while f"new-{number}" in book:\n            number += 1\n'
     '        expense = {"id": f"new-{number}",'),
    ('            raise ValueError(f"you have no expense {expense_id}")  # the same answer for someone else\'s',
     '            raise LookupError("no such expense")'),
    ('    @server.tool(annotations={"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True,\n'
     '                              "openWorldHint": False})\n    def delete_expense',
     '    @server.tool(annotations={"readOnlyHint": False})\n    def delete_expense'),
]
"""Another server: indented JSON with sorted keys, other ids, another refusal, delete_expense's hints left to
their defaults (destructive, as the README allows)."""


def test_capstone_alternative_server_passes_the_real_wire(tmp_path: Path) -> None:
    result = _grade(tmp_path, "ex12_capstone", _source("ex12_capstone", CAPSTONE_ALT_SERVER), [4], (WIRE_CHECK,))[0]
    check = next(c for c in result.checks if c.name == WIRE_CHECK)
    assert check.status == "passed", result


def test_capstone_alternative_policy_passes_every_check(tmp_path: Path) -> None:
    """A Host policy written differently (path segments compared with pathlib, one conditional) passes every
    check, the real-wire server included, on one seed (the capstone is heavy; its server is the reference's)."""
    result = _grade(tmp_path, "ex12_capstone", _source("ex12_capstone", CAPSTONE_ALT_POLICY), [3])[0]
    assert result.passed, result


@TRUTH_SETTINGS
@given(case=ex12_capstone._reads())
def test_capstone_reference_reads_like_the_policy_oracle(case: Any) -> None:
    assert _reference("ex12_capstone").may_read(*case) is ex12_policy.expected_read(*case)


CH10_12 = [e for e in EXERCISES.values() if e.chapter in ("10", "11", "12")]


@pytest.mark.parametrize("exercise", CH10_12, ids=lambda e: e.id)
def test_every_exercise_has_a_generated_check_after_its_fixed_kinds(exercise: Any) -> None:
    """Fixed, readable kinds first; then at least one generated check (the whole input space); the kinds of
    each check are a fixed tuple, so every seed tries every variation (no kind is drawn by the seed)."""
    kinds = [c.kinds for c in exercise.checks]
    generated = [i for i, k in enumerate(kinds) if any(x in ("generated", "every pair", "any verifier's challenge")
                                                      for x in k)]
    assert generated, f"{exercise.id} has no generated check"
    fixed = [i for i, k in enumerate(kinds) if i not in generated]
    assert fixed and min(fixed) < min(generated)
    for check in exercise.checks:
        assert isinstance(check.kinds, tuple) and len(set(check.kinds)) == len(check.kinds)


def test_the_variations_that_used_to_depend_on_the_seed_are_kinds_now() -> None:
    """What a seed used to draw inside a kind — the place of resource_metadata in the header, one or two
    required scopes, an error beside it, a zero or a negative amount — is a kind of its own (or fixed)."""
    assert {"resource_metadata first", "resource_metadata after error and scope",
            "resource_metadata between error and scope"} <= set(ex11_discovery_urls.HEADER_KINDS)
    assert {"no resource_metadata, endpoint at /mcp", "no resource_metadata, an error, endpoint at /mcp"} <= set(
        ex11_discovery_urls.WELL_KNOWN_KINDS)
    for seed in range(20):
        rng = random.Random(seed)
        assert len(ex11_token_check._server(rng)["required_scopes"]) == 2
        assert ex12_capstone.make_plan(rng).bad_cents < 0  # and add_zero asks for 0 on every seed
    header = {ex11_discovery_urls._prm_case(random.Random(s), "resource_metadata first")[0].split(" ")[1][:18]
              for s in range(10)}
    assert header == {"resource_metadata="}
