"""Chapter 07's exercises: plausible wrong answers are rejected on every seed, by the check that names
their mistake; correct answers in another shape pass; the simulator's sessions behind the checks are
valid for their revision and the cache's expected answers are exact on the virtual clock.

(``tests/test_exercises.py`` already grades every registered exercise's starter, reference, cheats
and a hard-coded answer; the wrong answers below are counted there too.)
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from test_exercises import SEEDS, _edit, assert_wrong_answer_rejected

from mcp_sim.grading import get_exercise
from mcp_sim.grading.exercises import ex07_cache, ex07_next_message
from mcp_sim.grading.exercises.ex07_world import LEGACY_REVISIONS, MODERN
from mcp_sim.grading.model import CheckContext
from mcp_sim.grading.runner import grade_seeds, reference_path
from mcp_sim.protocol.schema import find_spec_dir

PAGE_NUMBER_CURSORS = '''
FIELD = {"tools/list": "tools", "prompts/list": "prompts", "resources/list": "resources",
         "resources/templates/list": "resourceTemplates"}
STALE = {"notifications/tools/list_changed": ("tools", ["tools/list"]),
         "notifications/prompts/list_changed": ("prompts", ["prompts/list"]),
         "notifications/resources/list_changed": ("resources", ["resources/list", "resources/templates/list"])}


def on_notification(lists, capabilities, notification, fetch):
    if notification.get("method") not in STALE:
        return lists
    kind, methods = STALE[notification["method"]]
    if (capabilities.get(kind) or {}).get("listChanged") is not True:
        return lists
    new = dict(lists)
    for method in methods:
        if method in lists:
            items, page_number = [], 0
            while True:   # "page 2", "page 3" ... instead of the server's nextCursor
                page = fetch(method, None if page_number == 0 else str(page_number + 1))
                items += page.get(FIELD[method], [])
                if "nextCursor" not in page:
                    break
                page_number += 1
            new[method] = items
    return new
'''

# (exercise, name, edits-or-source, the check that must fail)
WRONG: list[tuple[str, str, Any, str]] = [
    ("ex07_list_changed", "only the first page listed again",
     [("        cursor = page.get(\"nextCursor\")\n        if cursor is None:\n            return items",
       "        return items")],
     "A list_changed re-lists that list, every page"),
    ("ex07_list_changed", "the stale list dropped instead of listed again",
     [("new[method] = _whole_list(method, fetch)", "new.pop(method)")],
     "A list_changed re-lists that list, every page"),
    ("ex07_list_changed", "page numbers instead of the server's cursors", PAGE_NUMBER_CURSORS,
     "A list_changed re-lists that list, every page"),
    ("ex07_list_changed", "templates forgotten on resources/list_changed",
     [("[\"resources/list\", \"resources/templates/list\"]", "[\"resources/list\"]")],
     "Only the lists the notification names, and only lists you hold"),
    ("ex07_list_changed", "every list listed again on any list_changed",
     [("    for method in methods:\n", "    for method in FIELD:\n")],
     "Only the lists the notification names, and only lists you hold"),
    ("ex07_list_changed", "a list never fetched is fetched now",
     [("        if method in lists:  # a list", "        if True:  # a list")],
     "Only the lists the notification names, and only lists you hold"),
    ("ex07_list_changed", "listChanged not checked",
     [("    if not isinstance(declared, dict) or declared.get(\"listChanged\") is not True:\n        return lists",
       "")],
     "A kind the server did not declare with listChanged is ignored"),
    ("ex07_list_changed", "listChanged false taken as declared",
     [("declared.get(\"listChanged\") is not True", "\"listChanged\" not in declared")],
     "A kind the server did not declare with listChanged is ignored"),
    ("ex07_list_changed", "any other notification refreshes the tools",
     [("    if notification.get(\"method\") not in STALE:\n        return lists  # log messages",
       "    if notification.get(\"method\") not in STALE:\n        notification = {\"method\": "
       "\"notifications/tools/list_changed\"}  # log messages")],
     "Other notifications change no list"),
    ("ex07_cache", "still fresh at the expiry instant",
     [("now_ms < entry[\"expires\"]", "now_ms <= entry[\"expires\"]")], "Stale from received + ttlMs on"),
    ("ex07_cache", "ttlMs read as seconds",
     [("\"expires\": now_ms + ttl}", "\"expires\": now_ms + ttl * 1000}")], "Stale from received + ttlMs on"),
    ("ex07_cache", "the first result kept, never replaced",
     [("    cache[_key(method, cursor, None if public else caller)] = {\"result\": result, \"expires\": now_ms + ttl}",
       "    cache.setdefault(_key(method, cursor, None if public else caller), "
       "{\"result\": result, \"expires\": now_ms + ttl})")],
     "Stale from received + ttlMs on"),
    ("ex07_cache", "a missing ttlMs read as a minute",
     [("ttl = result.get(\"ttlMs\")", "ttl = result.get(\"ttlMs\", 60000)")], "ttlMs 0 or absent: never served"),
    ("ex07_cache", "ttlMs 0 read as no expiry",
     [("    if isinstance(ttl, bool) or not isinstance(ttl, int) or ttl <= 0:",
       "    if ttl == 0:\n        ttl = 10**12\n    if isinstance(ttl, bool) or not isinstance(ttl, int) or ttl <= 0:")],
     "ttlMs 0 or absent: never served"),
    ("ex07_cache", "private entries keyed by tenant only",
     [("[caller.get(\"subject\"), caller.get(\"tenant\"), caller.get(\"client_id\"),\n"
       "                                       sorted(set(caller.get(\"scopes\") or ()))]", "[caller.get(\"tenant\")]")],
     "A private entry goes only to its own caller"),
    ("ex07_cache", "private entries keyed by user and tenant only (another client or scope set shares them)",
     [("[caller.get(\"subject\"), caller.get(\"tenant\"), caller.get(\"client_id\"),\n"
       "                                       sorted(set(caller.get(\"scopes\") or ()))]",
       "[caller.get(\"subject\"), caller.get(\"tenant\")]")],
     "A private entry goes only to its own caller"),
    ("ex07_cache", "private entries keyed without the scopes",
     [("caller.get(\"client_id\"),\n                                       sorted(set(caller.get(\"scopes\") or ()))]",
       "caller.get(\"client_id\")]")],
     "A private entry goes only to its own caller"),
    ("ex07_cache", "cacheScope ignored: everything shared",
     [("public = result.get(\"cacheScope\") == \"public\"", "public = True")],
     "A private entry goes only to its own caller"),
    ("ex07_cache", "nothing shared: public entries kept per caller",
     [("public = result.get(\"cacheScope\") == \"public\"", "public = False")], "A public entry serves every caller"),
    ("ex07_cache", "the cursor left out of the key",
     [("return json.dumps([method, cursor, who])", "return json.dumps([method, who])")],
     "Each method and page is its own entry"),
    ("ex07_next_message", "resources/subscribe in 2026-07-28",
     [("        if modern:\n            wanted", "        if False:\n            wanted")],
     "Modern client: open and close a listen"),
    ("ex07_next_message", "listen without _meta",
     [("    if modern:\n        earlier", "    if modern and method != \"subscriptions/listen\":\n        earlier")],
     "Modern client: open and close a listen"),
    ("ex07_next_message", "cancels the last request instead of the listen",
     [("\"params\": {\"requestId\": listen[\"id\"],", "\"params\": {\"requestId\": _new_id(transcript) - 1,")],
     "Modern client: open and close a listen"),
    ("ex07_next_message", "acknowledges everything asked for",
     [("        return {\"jsonrpc\": \"2.0\", \"method\": \"notifications/subscriptions/acknowledged\",",
       "        agreed = dict(asked)\n        return {\"jsonrpc\": \"2.0\", \"method\": "
       "\"notifications/subscriptions/acknowledged\",")],
     "Modern server: acknowledge what it will honour"),
    ("ex07_next_message", "the subscriptionId as a string",
     [("\"_meta\": {SUB_ID: listen[\"id\"]}}}", "\"_meta\": {SUB_ID: str(listen[\"id\"])}}}")],
     "Modern server: acknowledge what it will honour"),
    ("ex07_next_message", "change notifications not tagged",
     [("    if modern and listen is not None:  # on a listen stream", "    if False:  # on a listen stream")],
     "Modern server: tag every change with the subscriptionId"),
    ("ex07_next_message", "a legacy notification tagged too",
     [("    if modern and listen is not None:  # on a listen stream every notification names the stream\n"
       "        message[\"params\"] = {**message.get(\"params\", {}), \"_meta\": {SUB_ID: listen[\"id\"]}}",
       "    message[\"params\"] = {**message.get(\"params\", {}), \"_meta\": {SUB_ID: (listen or {\"id\": 1})[\"id\"]}}")],
     "Legacy server: answer subscribe, announce updated"),
    ("ex07_next_message", "subscribe answered with more than an empty result",
     [("return {\"jsonrpc\": \"2.0\", \"id\": request[\"id\"], \"result\": {}}",
       "return {\"jsonrpc\": \"2.0\", \"id\": request[\"id\"], \"result\": {\"uri\": request[\"params\"][\"uri\"]}}")],
     "Legacy server: answer subscribe, announce updated"),
    ("ex07_next_message", "a new request reuses the last id",
     [("    return new\n", "    return max(1, new - 1)\n")], "Client: list tools again after list_changed"),
]


@pytest.mark.parametrize(("exercise_id", "name", "edits", "failing_check"), WRONG,
                         ids=[f"{w[0]}:{w[1]}" for w in WRONG])
def test_plausible_wrong_answer_is_rejected_on_20_seeds(tmp_path: Path, exercise_id: str, name: str, edits: Any,
                                                        failing_check: str) -> None:
    assert_wrong_answer_rejected(tmp_path, exercise_id, name, edits, failing_check)


# --- correct answers in another shape --------------------------------------------------------------

OTHER_SHAPES = {
    # string ids of its own for new requests, another cancellation reason, params: {} on a legacy tools/list
    "ex07_next_message": [
        ("    return new\n", "    return f\"req-{new}\"\n"),
        ("\"reason\": \"no longer watching\"", "\"reason\": \"the user closed the panel\""),
        ("    if params:\n        message[\"params\"] = params", "    message[\"params\"] = params"),
    ],
    # a list of entries instead of a dict, expiry kept as received + ttl
    "ex07_cache": [
        ("cache = dict(cache)\n    cache[_key(method, cursor, None if public else caller)] = {\"result\": result, "
         "\"expires\": now_ms + ttl}\n    return cache",
         "key = _key(method, cursor, None if public else caller)\n    return [e for e in cache if e[0] != key] + "
         "[[key, now_ms, ttl, result]]"),
        ("        entry = cache.get(_key(method, cursor, who))\n        if entry is not None and now_ms < "
         "entry[\"expires\"]:  # at the expiry instant it is stale\n            result: dict[str, Any] = "
         "entry[\"result\"]\n            return result",
         "        for key, received, ttl, result in cache:\n            if key == _key(method, cursor, who) and "
         "now_ms - received < ttl:\n                return result"),
    ],
}


@pytest.mark.parametrize("exercise_id", list(OTHER_SHAPES))
def test_a_correct_answer_in_another_shape_passes(tmp_path: Path, exercise_id: str) -> None:
    source = _edit(reference_path(exercise_id).read_text(encoding="utf-8"), *OTHER_SHAPES[exercise_id])
    path = tmp_path / f"{exercise_id}_other.py"
    path.write_text(source, encoding="utf-8")
    for result in grade_seeds(get_exercise(exercise_id), path, path.name, SEEDS[:5]):
        assert result.passed, result


# --- what the checks stand on ----------------------------------------------------------------------

@pytest.mark.skipif(find_spec_dir() is None, reason="official MCP schemas not found")
@pytest.mark.parametrize("revision", [*LEGACY_REVISIONS, MODERN])
def test_the_subscription_sessions_are_valid_for_their_revision(revision: str) -> None:
    """Every message the role-play shows was made by the simulator and passes the schema check the
    learner's answer must pass."""
    for seed in range(3):
        messages, _, _ = ex07_next_message.session(seed, revision, seed != 1, ("tools", "prompts"))
        methods: dict[str, str] = {}
        for m in messages:
            msg = m["message"]
            if "method" in msg and "id" in msg:
                methods[f"{m['from']}|{msg['id']!r}"] = msg["method"]
            answered = methods.get(f"{'client' if m['from'] == 'server' else 'server'}|{msg.get('id')!r}")
            assert ex07_next_message.schema_problems(msg, revision, answered) == [], msg


def test_the_schema_check_names_a_method_of_another_era() -> None:
    if find_spec_dir() is None:
        pytest.skip("official MCP schemas not found")
    legacy = {"jsonrpc": "2.0", "id": 3, "method": "resources/subscribe", "params": {"uri": "notes://files/a.md"}}
    assert ex07_next_message.schema_problems(legacy, "2025-11-25", None) == []
    assert "not a request of 2026-07-28" in " ".join(ex07_next_message.schema_problems(legacy, MODERN, None))


def test_cache_worlds_keep_callers_apart_and_clocks_exact() -> None:
    """Private tool lists differ from tenant to tenant from the first page on; ttlMs values are whole
    eighths of a second, so the simulator's cache (seconds) and the learner's (milliseconds) agree at
    the expiry instant."""
    for seed in range(5):
        world = ex07_cache.make_world(CheckContext(None, random.Random(seed), seed))  # type: ignore[arg-type]
        first = {who: world.results[(who, "tools/list", None)] for who in range(3)}
        assert first[0]["cacheScope"] == "private" and first[0]["tools"] != first[1]["tools"]
        assert first[0]["tools"] == first[2]["tools"]  # same tenant, same list: still not shared
        assert world.results[(0, "prompts/list", None)]["cacheScope"] == "public"
        ttl = first[0]["ttlMs"]
        assert ttl % ex07_cache.STEP == 0 and (ttl / 1000) * 1000 == ttl


BORROWED_CACHE = '''
from mcp_sim.roles.cache import AuthorizationContext, ListCache


def cache_store(cache, now_ms, caller, method, cursor, result):
    store = ListCache(lambda: now_ms / 1000)
    store.put("s", AuthorizationContext(caller["subject"], caller["tenant"]), method, cursor, result)
    return cache


def cache_lookup(cache, now_ms, caller, method, cursor):
    return None
'''


def test_the_simulators_own_client_cache_cannot_be_borrowed(tmp_path: Path) -> None:
    path = tmp_path / "borrowed.py"
    path.write_text(BORROWED_CACHE, encoding="utf-8")
    result = grade_seeds(get_exercise("ex07_cache"), path, path.name, [0], stop_at_first_failure=True)[0]
    assert not result.passed
    assert "mcp_sim.roles" in (result.load_error + " ".join(c.explanation for c in result.checks))
