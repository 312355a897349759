"""Chapters 07–09: grading that generalizes (issue "Grading that generalizes").

For each exercise of these chapters:

* the reference agrees with the simulator (the oracle) on the generated inputs — its generated check
  passes on several seeds;
* correct answers written differently from the reference pass every check on several seeds (what
  each README lists under "What is free");
* plausible wrong answers — an axis the fixed cases once left still, a boundary, one input per rule,
  a variation once drawn by the seed — are rejected on every one of 20 seeds by the check that names
  their mistake, **and** with the rule that mistake breaks;
* every semantic variation is an explicit case kind (the seed changes surface values only);
* each mistake class of :mod:`wrong_classes` has at least three of those wrong answers per exercise
  (:data:`MISTAKE_CLASSES`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import wrong_classes
from test_exercises import _edit, assert_wrong_answer_rejected

from mcp_sim.grading import get_exercise
from mcp_sim.grading.runner import grade_seeds, reference_path

ALT_SEEDS = [0, 1, 7]


def _source(exercise_id: str, edits: Any) -> str:
    reference = reference_path(exercise_id).read_text(encoding="utf-8")
    return edits if isinstance(edits, str) else _edit(reference, *edits)


def rejected(tmp_path: Path, exercise_id: str, edits: Any, check_name: str, rule: str) -> None:
    """The wrong answer fails ``check_name`` on each of the 20 seeds, reporting ``rule``."""
    assert_wrong_answer_rejected(tmp_path, exercise_id, check_name, _source(exercise_id, edits), check_name, rule)


def accepted(tmp_path: Path, exercise_id: str, edits: Any) -> None:
    """A correct answer in another shape passes every check on several seeds."""
    ex = get_exercise(exercise_id)
    path = tmp_path / f"{exercise_id}_alt.py"
    path.write_text(_source(exercise_id, edits), encoding="utf-8")
    for result in grade_seeds(ex, path, path.name, ALT_SEEDS):
        assert result.passed, str(result)


def generated_check(exercise_id: str) -> str:
    names = [c.name for c in get_exercise(exercise_id).checks if "generated" in c.kinds]
    assert names, f"{exercise_id} has no generated check"
    return names[0]


GENERATED = ("ex07_cache", "ex07_list_changed", "ex07_next_message", "ex08_task_polling",
             "ex08_next_message", "ex08_diagnose", "ex09_host_policy", "ex09_next_step",
             "ex09_who_decides")


@pytest.mark.parametrize("exercise_id", GENERATED)
def test_the_reference_equals_the_oracle_on_generated_inputs(exercise_id: str) -> None:
    ex = get_exercise(exercise_id)
    name = generated_check(exercise_id)
    path = reference_path(exercise_id)
    for result in grade_seeds(ex, path, path.name, [0, 1, 2], only=[name], reference=True):
        check = next(c for c in result.checks if c.name == name)
        assert check.status == "passed", check.explanation


# --- ex07_cache ---------------------------------------------------------------------------------------

CACHE_ALT_TUPLE_KEYS = '''
def _key(method, cursor, caller):
    if caller is None:
        return method + "|" + (cursor or "") + "|*"
    scopes = ",".join(sorted(caller["scopes"]))
    return "|".join([method, cursor or "", caller["tenant"], caller["subject"], caller["client_id"], scopes])


def cache_store(cache, now_ms, caller, method, cursor, result):
    ttl = result.get("ttlMs")
    new = {k: v for k, v in cache.items()}
    if not isinstance(ttl, int) or ttl <= 0:
        return new
    who = None if result.get("cacheScope") == "public" else caller
    new[_key(method, cursor, who)] = [now_ms + ttl, result]
    return new


def cache_lookup(cache, now_ms, caller, method, cursor):
    for key in (_key(method, cursor, caller), _key(method, cursor, None)):
        if key in cache and cache[key][0] > now_ms:
            return cache[key][1]
    return None
'''

CACHE_ALT_LIST = '''
def _who(caller):
    return [caller["subject"], caller["tenant"], caller["client_id"], sorted(set(caller["scopes"]))]


def cache_store(cache, now_ms, caller, method, cursor, result):
    entries = list(cache.get("entries", [])) if isinstance(cache, dict) else []
    ttl = result.get("ttlMs")
    if ttl is None or ttl <= 0:      # keeps nothing it may not serve
        return {"entries": entries}
    owner = "everyone" if result.get("cacheScope") == "public" else _who(caller)
    entries = [e for e in entries if not (e["method"] == method and e["cursor"] == cursor and e["owner"] == owner)]
    entries = [e for e in entries if e["until"] > now_ms]      # drops stale entries as it goes
    entries.append({"method": method, "cursor": cursor, "owner": owner, "until": now_ms + ttl, "result": result})
    return {"entries": entries}


def cache_lookup(cache, now_ms, caller, method, cursor):
    mine = _who(caller)
    found = [e for e in cache.get("entries", []) if e["method"] == method and e["cursor"] == cursor
             and e["owner"] in ("everyone", mine) and now_ms < e["until"]]
    return found[-1]["result"] if found else None
'''

CACHE_PRIVATE = "A private entry goes only to its own caller"
CACHE_EXPIRY = "Stale from received + ttlMs on"
CACHE_ZERO = "ttlMs 0 or absent: never served"
CACHE_WHO = ('    who = None if caller is None else [caller.get("subject"), caller.get("tenant"), caller.get("client_id"),\n'
             '                                       sorted(set(caller.get("scopes") or ()))]')

CACHE_WRONG: list[tuple[str, Any, str, str]] = [
    ("the key forgets the tenant",
     [(CACHE_WHO, '    who = None if caller is None else [caller.get("subject"), caller.get("client_id"),\n'
                  '                                       sorted(set(caller.get("scopes") or ()))]')],
     CACHE_PRIVATE, "caching.private-not-shared"),
    ("scopes kept in the order given",
     [(CACHE_WHO, '    who = None if caller is None else [caller.get("subject"), caller.get("tenant"), caller.get("client_id"),\n'
                  '                                       caller.get("scopes")]')],
     CACHE_PRIVATE, "caching.private-same-context"),
    ("a token with more scopes may read a narrower token's entry", '''
import json


def cache_store(cache, now_ms, caller, method, cursor, result):
    ttl = result.get("ttlMs")
    if not isinstance(ttl, int) or ttl <= 0:
        return cache
    cache = dict(cache)
    who = None if result.get("cacheScope") == "public" else [caller["subject"], caller["tenant"], caller["client_id"]]
    cache.setdefault(json.dumps([method, cursor, who]), [])
    cache[json.dumps([method, cursor, who])] = [[sorted(caller["scopes"]), now_ms + ttl, result]]
    return cache


def cache_lookup(cache, now_ms, caller, method, cursor):
    for who in ([caller["subject"], caller["tenant"], caller["client_id"]], None):
        for scopes, until, result in cache.get(json.dumps([method, cursor, who]), []):
            if now_ms < until and (who is None or set(scopes) <= set(caller["scopes"])):
                return result
    return None
''', CACHE_PRIVATE, "caching.private-not-shared"),
    ("ttlMs read in whole seconds",
     [('"expires": now_ms + ttl}', '"expires": now_ms + ttl // 1000 * 1000}')],
     CACHE_EXPIRY, "caching.ttl-fresh"),
    ("a negative ttlMs read as its size",
     [("    ttl = result.get(\"ttlMs\")\n", "    ttl = result.get(\"ttlMs\")\n    ttl = abs(ttl) if isinstance(ttl, int) else ttl\n")],
     CACHE_ZERO, "caching.ttl-absent"),
    ("a newer answer does not replace the entry",
     [("    cache[_key(method, cursor, None if public else caller)] = ",
       "    if _key(method, cursor, None if public else caller) in cache:\n        return cache\n"
       "    cache[_key(method, cursor, None if public else caller)] = ")],
     CACHE_EXPIRY, "caching.refetch-when-stale"),
]


CACHE_MORE: list[tuple[str, Any, str, str]] = [
    ("the key forgets the client",
     [('[caller.get("subject"), caller.get("tenant"), caller.get("client_id"),\n',
       '[caller.get("subject"), caller.get("tenant"),\n')],
     "A private entry goes only to its own caller", "caching.private-not-shared"),
    ("fresh through the expiry instant", [('now_ms < entry["expires"]', 'now_ms <= entry["expires"]')],
     "Stale from received + ttlMs on", "caching.refetch-when-stale"),
    ("the expiry one ms early", [('"expires": now_ms + ttl}', '"expires": now_ms + ttl - 1}')],
     "A fresh result is served from the cache", "caching.ttl-fresh"),
    ("ttlMs 0 read as no limit", [("    ttl = result.get(\"ttlMs\")\n",
                                   "    ttl = result.get(\"ttlMs\")\n    if ttl == 0:\n        ttl = 10 ** 12\n")],
     "ttlMs 0 or absent: never served", "caching.ttl-absent"),
    ("only the first scope compared", [('sorted(set(caller.get("scopes") or ()))]', 'sorted(set(caller.get("scopes") or ()))[:1]]')],
     "A private entry goes only to its own caller", "caching.private-not-shared"),
    ("only the caller's own entry is tried", [("    for who in (caller, None):", "    for who in (caller,):")],
     "A public entry serves every caller", "caching.public-shared"),
    ("any one of the caller's fields matching", '''
def cache_store(cache, now_ms, caller, method, cursor, result):
    ttl = result.get("ttlMs")
    if not isinstance(ttl, int) or ttl <= 0:
        return cache
    entries = [e for e in cache.get("entries", []) if now_ms < e["until"]]
    who = None if result.get("cacheScope") == "public" else dict(caller)
    entries.append({"method": method, "cursor": cursor, "who": who, "until": now_ms + ttl, "result": result})
    return {"entries": entries}


def cache_lookup(cache, now_ms, caller, method, cursor):
    for e in reversed(cache.get("entries", [])):
        if e["method"] != method or e["cursor"] != cursor or now_ms >= e["until"]:
            continue
        if e["who"] is None or any(e["who"][k] == caller[k] for k in ("subject", "tenant", "client_id")):
            return e["result"]
    return None
''', "A private entry goes only to its own caller", "caching.private-not-shared"),
    ("a short ttlMs stretched to a second", [("    ttl = result.get(\"ttlMs\")\n",
                                              "    ttl = result.get(\"ttlMs\")\n"
                                              "    ttl = max(ttl, 1000) if isinstance(ttl, int) and ttl > 0 else ttl\n")],
     "Stale from received + ttlMs on", "caching.refetch-when-stale"),
]
CACHE_WRONG += CACHE_MORE


@pytest.mark.parametrize("name,edits,check,rule", CACHE_WRONG, ids=[w[0] for w in CACHE_WRONG])
def test_ex07_cache_wrong_answers(tmp_path: Path, name: str, edits: Any, check: str, rule: str) -> None:
    rejected(tmp_path, "ex07_cache", edits, check, rule)


@pytest.mark.parametrize("source", [CACHE_ALT_TUPLE_KEYS, CACHE_ALT_LIST], ids=["text keys", "list of entries"])
def test_ex07_cache_alternatives_pass(tmp_path: Path, source: str) -> None:
    accepted(tmp_path, "ex07_cache", source)


# --- ex07_list_changed --------------------------------------------------------------------------------

LC_RELIST = "A list_changed re-lists that list, every page"
LC_WHICH = "Only the lists the notification names, and only lists you hold"
LC_DECLARED = "A kind the server did not declare with listChanged is ignored"
LC_UNRELATED = "Other notifications change no list"

LC_ALT_TABLE = '''
COVERS = {"tools": ["tools/list"], "prompts": ["prompts/list"],
          "resources": ["resources/list", "resources/templates/list"]}
ITEMS = {"tools/list": "tools", "prompts/list": "prompts", "resources/list": "resources",
         "resources/templates/list": "resourceTemplates"}


def on_notification(lists, capabilities, notification, fetch):
    method = notification.get("method", "")
    parts = method.split("/")
    if len(parts) != 3 or parts[0] != "notifications" or parts[2] != "list_changed" or parts[1] not in COVERS:
        return lists
    declared = capabilities.get(parts[1])
    if not (isinstance(declared, dict) and declared.get("listChanged") == True):  # noqa: E712
        return lists
    out = {}
    for name, items in lists.items():
        if name not in COVERS[parts[1]]:
            out[name] = items
            continue
        fresh, page = [], fetch(name, None)
        fresh += page[ITEMS[name]]
        while page.get("nextCursor"):
            page = fetch(name, page["nextCursor"])
            fresh += page[ITEMS[name]]
        out[name] = fresh
    return out
'''

LC_ALT_RECURSIVE = '''
def _all(fetch, method, field, cursor=None):
    page = fetch(method, cursor)
    rest = _all(fetch, method, field, page["nextCursor"]) if "nextCursor" in page else []
    return list(page.get(field, [])) + rest


def on_notification(lists, capabilities, notification, fetch):
    kinds = {"notifications/tools/list_changed": "tools", "notifications/prompts/list_changed": "prompts",
             "notifications/resources/list_changed": "resources"}
    kind = kinds.get(notification["method"])
    if kind is None or not (capabilities.get(kind) or {}).get("listChanged") is True:
        return dict(lists)
    wanted = {"tools": [("tools/list", "tools")], "prompts": [("prompts/list", "prompts")],
              "resources": [("resources/list", "resources"), ("resources/templates/list", "resourceTemplates")]}
    new = dict(lists)
    for method, field in wanted[kind]:
        if method in new:
            new[method] = _all(fetch, method, field)
    return new
'''

LC_STALE_LOOP = "    for method in methods:\n        if method in lists:  # a list the client never fetched stays unfetched\n"

LC_WRONG: list[tuple[str, Any, str, str]] = [
    ("old and new merged (a removed tool stays)",
     [("            new[method] = _whole_list(method, fetch)",
       "            fresh = _whole_list(method, fetch)\n"
       "            new[method] = lists[method] + [i for i in fresh if i not in lists[method]]")],
     LC_RELIST, "change.list-changed-carries-no-list"),
    ("an empty held list is taken for not held",
     [(LC_STALE_LOOP, "    for method in methods:\n        if lists.get(method):  # a list the client never fetched\n")],
     LC_RELIST, "change.list-changed-carries-no-list"),
    ("resources re-listed only when templates are held too",
     [(LC_STALE_LOOP, "    for method in methods:\n        if all(m in lists for m in methods):\n")],
     LC_WHICH, "change.resources-list-changed-covers-templates"),
    ("a notification with params taken for another kind",
     [("    if notification.get(\"method\") not in STALE:",
       "    if notification.get(\"params\") or notification.get(\"method\") not in STALE:")],
     LC_RELIST, "change.list-changed-carries-no-list"),
    ("only the tools capability is read",
     [("    declared = capabilities.get(kind)", "    declared = capabilities.get(\"tools\")")],
     LC_DECLARED, "change.sim-ignores-undeclared-list-changed"),
    ("listChanged missing read as declared",
     [("declared.get(\"listChanged\") is not True", "declared.get(\"listChanged\", True) is not True")],
     LC_DECLARED, "change.sim-ignores-undeclared-list-changed"),
    ("a log message about a list is read as a change",
     [("    if notification.get(\"method\") not in STALE:",
       "    if notification.get(\"method\") == \"notifications/message\":\n"
       "        notification = {\"method\": \"notifications/tools/list_changed\"}\n"
       "    if notification.get(\"method\") not in STALE:")],
     LC_UNRELATED, "change.only-list-changed-means-relist"),
]


LC_MORE: list[tuple[str, Any, str, str]] = [
    ("every held list re-listed", [("    for method in methods:\n        if method in lists:",
                                    "    for method in FIELD:\n        if method in lists:")],
     "Only the lists the notification names, and only lists you hold",
     "change.resources-list-changed-covers-templates"),
    ("any declaration of the kind read as listChanged",
     [('    if not isinstance(declared, dict) or declared.get("listChanged") is not True:',
       '    if not isinstance(declared, dict):')],
     "A kind the server did not declare with listChanged is ignored", "change.sim-ignores-undeclared-list-changed"),
    ("only the first page fetched", [("        if cursor is None:\n            return items",
                                      "        return items")],
     "A list_changed re-lists that list, every page", "change.list-changed-carries-no-list"),
    ("templates never re-listed", [('("resources", ["resources/list", "resources/templates/list"])',
                                    '("resources", ["resources/list"])')],
     "Only the lists the notification names, and only lists you hold",
     "change.resources-list-changed-covers-templates"),
    ("resources/list_changed not known",
     [('    "notifications/resources/list_changed": ("resources", ["resources/list", "resources/templates/list"]),\n',
       '')],
     "A list_changed re-lists that list, every page", "change.list-changed-carries-no-list"),
    ("a client that holds nothing lists what it is told about",
     [(LC_STALE_LOOP, "    for method in methods:\n        if method in lists or not lists:\n")],
     "Only the lists the notification names, and only lists you hold",
     "change.resources-list-changed-covers-templates"),
    ("templates fetched with resources, held or not",
     [(LC_STALE_LOOP, "    for method in methods:\n        if method in lists or method == \"resources/templates/list\":\n")],
     "Only the lists the notification names, and only lists you hold",
     "change.resources-list-changed-covers-templates"),
]
LC_WRONG += LC_MORE


@pytest.mark.parametrize("name,edits,check,rule", LC_WRONG, ids=[w[0] for w in LC_WRONG])
def test_ex07_list_changed_wrong_answers(tmp_path: Path, name: str, edits: Any, check: str, rule: str) -> None:
    rejected(tmp_path, "ex07_list_changed", edits, check, rule)


@pytest.mark.parametrize("source", [LC_ALT_TABLE, LC_ALT_RECURSIVE], ids=["split the method", "recursive pages"])
def test_ex07_list_changed_alternatives_pass(tmp_path: Path, source: str) -> None:
    accepted(tmp_path, "ex07_list_changed", source)


# --- ex07_next_message --------------------------------------------------------------------------------

NM_LISTEN = "Modern client: open and close a listen"
NM_ACK = "Modern server: acknowledge what it will honour"
NM_TAGGED = "Modern server: tag every change with the subscriptionId"
NM_WANTED = '            wanted.update({flag: True for flag, kind in FLAGS.items() if kind in task["lists"]})'
NM_AGREED = ('        agreed: dict[str, Any] = {flag: True for flag, kind in FLAGS.items()\n'
             '                                  if asked.get(flag) is True and caps.get(kind, {}).get("listChanged") is True}')

NM_WRONG: list[tuple[str, Any, str, str]] = [
    ("the listen asks for tool changes only", [(NM_WANTED, '            wanted["toolsListChanged"] = True')],
     NM_LISTEN, "subscriptions.only-what-was-asked"),
    ("the acknowledgement names every declared kind, asked or not",
     [(NM_AGREED, '        agreed: dict[str, Any] = {flag: True for flag, kind in FLAGS.items()\n'
                  '                                  if caps.get(kind, {}).get("listChanged") is True}')],
     NM_ACK, "subscriptions.only-what-was-asked"),
    ("the acknowledgement honours what the server never declared",
     [(NM_AGREED, '        agreed: dict[str, Any] = {flag: True for flag, kind in FLAGS.items()\n'
                  '                                  if asked.get(flag) is True}')],
     NM_ACK, "subscriptions.client-checks-ack"),
    ("changes tagged with the newest request's id",
     [('        message["params"] = {**message.get("params", {}), "_meta": {SUB_ID: listen["id"]}}',
       '        newest = [m for m in _sent(transcript, "client") if "id" in m and "method" in m][-1]\n'
       '        message["params"] = {**message.get("params", {}), "_meta": {SUB_ID: newest["id"]}}')],
     NM_TAGGED, "subscriptions.subscription-id"),
]


NM_MORE: list[tuple[str, Any, str, str]] = [
    ("a subscribe not declared still acknowledged",
     [('        if "resourceSubscriptions" in asked and caps.get("resources", {}).get("subscribe") is True:',
       '        if "resourceSubscriptions" in asked:')],
     NM_ACK, "subscriptions.client-checks-ack"),
    ("the listen asks for every kind the server declared",
     [(NM_WANTED, '            wanted.update({flag: True for flag, kind in FLAGS.items()\n'
                  '                           if _capabilities(transcript).get(kind, {}).get("listChanged")})')],
     NM_LISTEN, "subscriptions.only-what-was-asked"),
    ("the subscriptionId as text",
     [('        message["params"] = {**message.get("params", {}), "_meta": {SUB_ID: listen["id"]}}',
       '        message["params"] = {**message.get("params", {}), "_meta": {SUB_ID: str(listen["id"])}}')],
     NM_TAGGED, "subscriptions.subscription-id"),
    ("the cancellation names the listen as text",
     [('"params": {"requestId": listen["id"], "reason": "no longer watching"}}',
       '"params": {"requestId": str(listen["id"]), "reason": "no longer watching"}}')],
     NM_LISTEN, "subscriptions.client-ends-by-cancelling"),
    ("a new id counted from the requests", [("    new = 1\n    while _key(new) in used:\n        new += 1\n",
                                             "    new = len(used)\n")],
     "Client: list tools again after list_changed", "jsonrpc.legacy.request-id-unused-in-session"),
    ("tools listed again only if never listed",
     [('        if "tools/list" not in methods[last_change:]:', '        if "tools/list" not in methods:')],
     "Client: list tools again after list_changed", "change.list-changed-carries-no-list"),
    ("resourceSubscriptions honoured only with resources.listChanged",
     [('        if "resourceSubscriptions" in asked and caps.get("resources", {}).get("subscribe") is True:',
       '        if "resourceSubscriptions" in asked and caps.get("resources", {}).get("subscribe") is True \\\n'
       '                and caps.get("resources", {}).get("listChanged") is True:')],
     NM_ACK, "subscriptions.ack-first"),
    ("a resource update left untagged",
     [("    if modern and listen is not None:", "    if modern and listen is not None and happened[\"change\"] != \"resource\":")],
     NM_TAGGED, "subscriptions.subscription-id"),
]
NM_WRONG += NM_MORE


@pytest.mark.parametrize("name,edits,check,rule", NM_WRONG, ids=[w[0] for w in NM_WRONG])
def test_ex07_next_message_wrong_answers(tmp_path: Path, name: str, edits: Any, check: str, rule: str) -> None:
    rejected(tmp_path, "ex07_next_message", edits, check, rule)


NM_EXPLICIT_FALSE = [(NM_WANTED, '            wanted.update({flag: kind in task["lists"] for flag, kind in FLAGS.items()})'),
                     (NM_AGREED, '        agreed: dict[str, Any] = {flag: asked.get(flag) is True and\n'
                                 '                                  caps.get(kind, {}).get("listChanged") is True\n'
                                 '                                  for flag, kind in FLAGS.items()}')]
NM_OTHER_IDS = [('''    new = 1
    while _key(new) in used:
        new += 1
    return new''', '''    numbers = [json.loads(k) for k in used if isinstance(json.loads(k), int)]
    new = f"watch-{max(numbers, default=0) + 100}"
    return new  # type: ignore[return-value]''')]


@pytest.mark.parametrize("edits", [NM_EXPLICIT_FALSE, NM_OTHER_IDS], ids=["explicit false flags", "string ids"])
def test_ex07_next_message_alternatives_pass(tmp_path: Path, edits: Any) -> None:
    accepted(tmp_path, "ex07_next_message", edits)


# --- ex08_task_polling --------------------------------------------------------------------------------

TP_PACE = "Polling at the server's pace"
TP_DEADLINE = "Give up at the deadline with tasks/cancel"
TP_SLEEP = "        sleep(min(interval, left))"

TP_WRONG: list[tuple[str, Any, str, str]] = [
    ("a poll at the very instant of the deadline",
     [('        if now() >= job["deadline_ms"]:', '        if now() > job["deadline_ms"]:')],
     TP_DEADLINE, "tasks.course-cancel-at-deadline"),
    ("intervals rounded down to whole seconds",
     [(TP_SLEEP, "        sleep(min(interval // 1000 * 1000, left))")], TP_PACE, "tasks.legacy.poll-interval"),
    ("the whole interval slept, past the deadline", [(TP_SLEEP, "        sleep(interval)")],
     TP_DEADLINE, "tasks.course-cancel-at-deadline"),
    ("the 2025 interval name read in 2026-07-28",
     [('task.get("pollInterval" if legacy else "pollIntervalMs", job["default_poll_ms"])',
       'task.get("pollInterval", job["default_poll_ms"])')], TP_PACE, "tasks.ext.poll-interval"),
    ("the default interval whenever the first Task gave one",
     [('task.get("pollInterval" if legacy else "pollIntervalMs", job["default_poll_ms"])',
       'job["default_poll_ms"]')], TP_PACE, "tasks.legacy.poll-interval"),
]


TP_MORE: list[tuple[str, Any, str, str]] = [
    ("the first interval kept", [("    while task[\"status\"] not in STOP:\n        interval = task.get(\"pollInterval\" if legacy else \"pollIntervalMs\", job[\"default_poll_ms\"])\n",
                                  "    interval = task.get(\"pollInterval\" if legacy else \"pollIntervalMs\", job[\"default_poll_ms\"])\n    while task[\"status\"] not in STOP:\n")],
     TP_PACE, "tasks.legacy.poll-interval"),
    ("the time left measured from the start", [("        left = job[\"deadline_ms\"] - now()\n",
                                                 "        left = job[\"deadline_ms\"] - job.setdefault(\"_start\", now())\n")],
     TP_DEADLINE, "tasks.course-cancel-at-deadline"),
    ("one ms short of the interval", [(TP_SLEEP, "        sleep(min(interval - 1, left))")],
     TP_PACE, "tasks.legacy.poll-interval"),
    ("only completed ends the loop", [('STOP = ("completed", "failed", "cancelled", "input_required")',
                                       'STOP = ("completed",)')],
     "Stop at the status that ends polling", "tasks.legacy.terminal-is-final"),
    ("failed does not end the loop", [('STOP = ("completed", "failed", "cancelled", "input_required")',
                                       'STOP = ("completed", "cancelled", "input_required")')],
     "Stop at the status that ends polling", "tasks.legacy.terminal-is-final"),
    ("input_required polled on", [('STOP = ("completed", "failed", "cancelled", "input_required")',
                                   'STOP = ("completed", "failed", "cancelled")')],
     "Stop at the status that ends polling", "tasks.course-deadline-loop"),
    ("tasks/result asked in 2026-07-28 too",
     [('        result = request("tasks/result", {"taskId": task_id})["result"] if legacy else task["result"]',
       '        result = request("tasks/result", {"taskId": task_id, **extra})["result"]')],
     "The call's answer in each era's shape", "tasks.legacy.result-is-the-call-s"),
]
TP_WRONG += TP_MORE


@pytest.mark.parametrize("name,edits,check,rule", TP_WRONG, ids=[w[0] for w in TP_WRONG])
def test_ex08_task_polling_wrong_answers(tmp_path: Path, name: str, edits: Any, check: str, rule: str) -> None:
    rejected(tmp_path, "ex08_task_polling", edits, check, rule)


TP_ALT_ABSOLUTE = '''
END = {"completed", "failed", "cancelled", "input_required"}


def run_task(job, send, new_id, now, sleep):
    old = job["revision"] == "2025-11-25"
    ids = iter(lambda: new_id(), None)

    def ask(method, params):
        reply = send({"jsonrpc": "2.0", "id": next(ids), "method": method, "params": params})
        return reply.get("result")

    first = ask("tools/call", job["call"])
    if not old and first.get("resultType") != "task":
        return {"status": "completed", "taskId": None, "result": first}
    task = first["task"] if old else first
    tid = task["taskId"]
    meta = {} if old else {"_meta": job["call"]["_meta"]}
    deadline, last = job["deadline_ms"], now()
    while task["status"] not in END:
        pace = task.get("pollInterval") if old else task.get("pollIntervalMs")
        due = last + (job["default_poll_ms"] if pace is None else pace)
        if due >= deadline:
            if deadline > now():
                sleep(deadline - now())
            ask("tasks/cancel", dict(taskId=tid, **meta))
            return {"status": "cancelled", "taskId": tid, "result": None}
        sleep(due - now())
        last = now()
        task = ask("tasks/get", dict(taskId=tid, **meta))
    if task["status"] != "completed":
        result = ask("tasks/result", {"taskId": tid}) if old and task["status"] == "failed" else None
        return {"status": task["status"], "taskId": tid, "result": result}
    return {"status": "completed", "taskId": tid,
            "result": ask("tasks/result", {"taskId": tid}) if old else task["result"]}
'''

TP_ALT_FAILED_NONE_LOOP = [("    while task[\"status\"] not in STOP:", "    for _ in iter(int, 1):\n"
                            "        if task[\"status\"] in STOP:\n            break")]


@pytest.mark.parametrize("edits", [TP_ALT_ABSOLUTE, TP_ALT_FAILED_NONE_LOOP], ids=["absolute due times", "for loop"])
def test_ex08_task_polling_alternatives_pass(tmp_path: Path, edits: Any) -> None:
    accepted(tmp_path, "ex08_task_polling", edits)


# --- ex08_next_message --------------------------------------------------------------------------------

NX_STATE = "Server: tasks/get and tasks/result"
NX_POLL = "Client: poll with tasks/get"

NX_WRONG: list[tuple[str, Any, str, str]] = [
    ("tasks/get answered with the newest task", [('    current = latest[params["taskId"]]',
                                                   '    current = latest[_tasks(transcript)[2][-1]]')],
     NX_STATE, "tasks.legacy.result-is-the-call-s"),
    ("the client polls the first task it created", [('    task_id = order[-1]', '    task_id = order[0]')],
     NX_POLL, "tasks.legacy.keep-polling"),
    ("status notifications ignored", [('        if entry["from"] == "server" and msg.get("method") in '
                                       '("notifications/tasks/status", "notifications/tasks"):',
                                       '        if entry["from"] == "server" and "method" in msg:\n'
                                       '            continue\n'
                                       '        if False:')],
     NX_STATE, "tasks.legacy.result-is-the-call-s"),
]


NX_MORE: list[tuple[str, Any, str, str]] = [
    ("an optional tool run inline", [('        if not wants or server["tools"][name] == "forbidden":',
                                      '        if not wants or server["tools"][name] != "required":')],
     "Server: create the task", "tasks.legacy.create-task-result"),
    ("the listen request taken for the pending one",
     [('    answered |= {e["message"]["params"]["requestId"] for e in transcript if e["from"] == "client"\n'
       '                 and e["message"].get("method") == "notifications/cancelled"}\n', '')],
     NX_STATE, "tasks.legacy.result-is-the-call-s"),
    ("the cancel answer keeps the last lastUpdatedAt",
     [('        return reply({**current, "status": "cancelled", "lastUpdatedAt": now})',
       '        return reply({**current, "status": "cancelled"})')],
     "Server: cancel a working task", "tasks.legacy.cancelled-before-answer"),
    ("a new id counted from the requests", [("    new_id = max([i for i in used if isinstance(i, int)], default=0) + 1",
                                             "    new_id = len(used)")],
     NX_POLL, "tasks.legacy.keep-polling"),
    ("a listen stream's _meta kept in the Task",
     [('            latest[msg["params"]["taskId"]] = {k: v for k, v in msg["params"].items() if k != "_meta"}',
       '            latest[msg["params"]["taskId"]] = msg["params"]')],
     NX_STATE, "tasks.legacy.result-is-the-call-s"),
    ("only a completed task's cancel refused", [('TERMINAL = ("completed", "failed", "cancelled")', 'TERMINAL = ("completed",)')],
     "Server: tasks/cancel of a finished task", "tasks.legacy.cancel-terminal-refused"),
    ("cancelled not taken for finished", [('TERMINAL = ("completed", "failed", "cancelled")',
                                           'TERMINAL = ("completed", "failed")')],
     "Server: tasks/cancel of a finished task", "tasks.legacy.cancel-terminal-refused"),
    ("only the 2025 status notice read",
     [('msg.get("method") in ("notifications/tasks/status", "notifications/tasks"):',
       'msg.get("method") == "notifications/tasks/status":')],
     NX_STATE, "tasks.legacy.result-is-the-call-s"),
    ("a 2026-07-28 cancel answered with the Task",
     [("        if modern:                       # the extension acknowledges; a finished task stays as it is\n"
       "            return reply({})\n", "")],
     "Server: cancel a working task", "tasks.legacy.cancelled-before-answer"),
    ("the 2025 field names in 2026-07-28",
     [("            task.update(ttlMs=server[\"default_ttl_ms\"], pollIntervalMs=server[\"poll_interval_ms\"])",
       "            task.update(ttl=server[\"default_ttl_ms\"], pollInterval=server[\"poll_interval_ms\"])")],
     "Server: create the task", "tasks.legacy.create-task-result"),
    ("resultType added in 2025-11-25 too",
     [('"result": {"resultType": "complete", **result} if modern else result}',
       '"result": {"resultType": "complete", **result}}')],
     NX_STATE, "tasks.legacy.result-is-the-call-s"),
]
NX_WRONG += NX_MORE


@pytest.mark.parametrize("name,edits,check,rule", NX_WRONG, ids=[w[0] for w in NX_WRONG])
def test_ex08_next_message_wrong_answers(tmp_path: Path, name: str, edits: Any, check: str, rule: str) -> None:
    rejected(tmp_path, "ex08_next_message", edits, check, rule)


NX_STRING_IDS = [("    new_id = max([i for i in used if isinstance(i, int)], default=0) + 1",
                  "    new_id = f\"req-{len(used) + 1}\"")]
NX_ERROR_FOR_FINISHED = [("        if modern:                       # the extension acknowledges",
                          "        if modern and current[\"status\"] not in TERMINAL:  # acknowledged")]


@pytest.mark.parametrize("edits", [NX_STRING_IDS, NX_ERROR_FOR_FINISHED], ids=["string ids", "error for finished"])
def test_ex08_next_message_alternatives_pass(tmp_path: Path, edits: Any) -> None:
    accepted(tmp_path, "ex08_next_message", edits)


# --- ex08_diagnose ------------------------------------------------------------------------------------

DG_TERMINAL = "A finished task's status goes back"

DG_WRONG: list[tuple[str, Any, str, str]] = [
    ("failed is not taken for terminal", [('TERMINAL = ("completed", "failed", "cancelled")',
                                           'TERMINAL = ("completed", "cancelled")')],
     DG_TERMINAL, "tasks.legacy.terminal-is-final"),
    ("only the tasks since the newest create are remembered",
     [("            else:\n                continue\n            found = _check_task(index, task, revision, status)",
       "            else:\n                continue\n            status.clear()\n"
       "            found = _check_task(index, task, revision, status)")],
     DG_TERMINAL, "tasks.legacy.terminal-is-final"),
    ("only tasks/get answers are checked for their taskId",
     [('            if result["taskId"] != asked:', '            if result["taskId"] != asked and method == "tasks/get":')],
     "An answer about another task", "tasks.legacy.task-id-names-the-task"),
    ("tasks/list never checked against the capability",
     [('                if method == "tasks/list" and "list" not in caps:\n                    return bad(index, "undeclared")\n', '')],
     "Tasks without the capability or the extension", "tasks.legacy.only-declared"),
    ("the other era's field names not noticed",
     [('    if any(name in task for name in OTHER_NAMES[revision]):\n        return {"index": index, "rule": "era-shape"}\n', '')],
     "A Task in the other era's shape", "tasks.legacy.create-task-result"),
    ("a result is wrong only while working",
     [('"result" in task and task["status"] != "completed"', '"result" in task and task["status"] == "working"')],
     "A result while the task works", "tasks.ext.get-by-status"),
]


DG_MORE: list[tuple[str, Any, str, str]] = [
    ("notifications/tasks not read", [('msg["method"] in ("notifications/tasks/status", "notifications/tasks")',
                                        'msg["method"] == "notifications/tasks/status"')],
     DG_TERMINAL, "tasks.legacy.terminal-is-final"),
    ("one status for every task", [('    before = status.get(task["taskId"])', '    before = status.get("last")'),
                                   ('    status[task["taskId"]] = task["status"]', '    status["last"] = task["status"]')],
     "Sound traces are sound", "tasks.legacy.terminal-is-final"),
    ("input_required taken for terminal", [('TERMINAL = ("completed", "failed", "cancelled")',
                                            'TERMINAL = ("completed", "failed", "cancelled", "input_required")')],
     "Sound traces are sound", "tasks.legacy.terminal-is-final"),
    ("a refused cancel of a finished task flagged",
     [('        if "result" not in msg:\n            continue\n        result = msg["result"]\n',
       '        if "result" not in msg:\n'
       '            if method == "tasks/cancel" and not modern and status.get(request["params"]["taskId"]) in TERMINAL:\n'
       '                return bad(index, "cancel-finished")\n'
       '            continue\n        result = msg["result"]\n')],
     "Sound traces are sound", "tasks.legacy.cancel-terminal-refused"),
    ("a terminal status shown again flagged", [("    if before in TERMINAL and task[\"status\"] != before:",
                                                "    if before in TERMINAL:")],
     "Sound traces are sound", "tasks.legacy.terminal-is-final"),
    ("the extension checked on the first task only",
     [("                if not _declared_extension(request):",
       "                if not _declared_extension(request) and not status:")],
     "Tasks without the capability or the extension", "tasks.legacy.only-declared"),
]
DG_WRONG += DG_MORE


@pytest.mark.parametrize("name,edits,check,rule", DG_WRONG, ids=[w[0] for w in DG_WRONG])
def test_ex08_diagnose_wrong_answers(tmp_path: Path, name: str, edits: Any, check: str, rule: str) -> None:
    rejected(tmp_path, "ex08_diagnose", edits, check, rule)


DG_JSON_IDS = [('            requests[repr(msg["id"])] = msg', '            requests[json.dumps(msg["id"])] = msg'),
               ('        request = requests.get(repr(msg.get("id")), {})',
                '        request = requests.get(json.dumps(msg.get("id")), {})'),
               ("from typing import Any\n", "import json\nfrom typing import Any\n")]
DG_OTHER_ORDER = [('''    if any(name in task for name in OTHER_NAMES[revision]):
        return {"index": index, "rule": "era-shape"}
    if revision == MODERN and "result" in task and task["status"] != "completed":
        return {"index": index, "rule": "result-while-working"}''', '''    if revision == MODERN and task.get("status") != "completed" and "result" in task:
        return {"index": index, "rule": "result-while-working"}
    if set(task) & set(OTHER_NAMES[revision]):
        return {"index": index, "rule": "era-shape"}''')]


@pytest.mark.parametrize("edits", [DG_JSON_IDS, DG_OTHER_ORDER], ids=["ids as JSON text", "checks in another order"])
def test_ex08_diagnose_alternatives_pass(tmp_path: Path, edits: Any) -> None:
    accepted(tmp_path, "ex08_diagnose", edits)


# --- ex09_host_policy ---------------------------------------------------------------------------------

HP_FILTER = "The tool filter: globs, deny over allow, servers, read-only"
HP_APPROVAL = "Approval in each mode, with and without trust"

HP_WRONG: list[tuple[str, Any, str, str]] = [
    ("an empty server list read as no list", [("    if servers is not None and server not in servers:",
                                               "    if servers and server not in servers:")],
     HP_FILTER, "host.tool-policy"),
    ("read_only false written out taken for true", [('    if policy.get("read_only") and not',
                                                     '    if "read_only" in policy and not')],
     HP_FILTER, "host.tool-policy"),
    ("a deny glob matched against the bare name too",
     [('    if _matches(qualified, policy.get("deny", [])):',
       '    if _matches(qualified, policy.get("deny", [])) or _matches(tool["name"], policy.get("deny", [])):')],
     HP_FILTER, "host.tool-policy"),
    ("no approval field read as unless-read-only", [('    mode = policy.get("approval", "always")',
                                                     '    mode = policy.get("approval", "unless-read-only")')],
     HP_APPROVAL, "host.approval-policy"),
]


HP_MORE: list[tuple[str, Any, str, str]] = [
    ("an untrusted readOnlyHint believed by the filter",
     [('    if policy.get("read_only") and not (trusted and annotations.get("readOnlyHint") is True):',
       '    if policy.get("read_only") and not annotations.get("readOnlyHint") is True:')],
     HP_FILTER, "host.annotations-untrusted"),
    ("an untrusted server's annotations believed for approval",
     [("    believed = sent if trusted else {}", "    believed = sent")],
     HP_APPROVAL, "host.annotations-untrusted"),
    ("an allow glob naming the tool wins over deny",
     [('    if _matches(qualified, policy.get("deny", [])):\n        return False\n',
       '    if _matches(qualified, [g for g in policy.get("allow", []) if "*" not in g]):\n        return True\n'
       '    if _matches(qualified, policy.get("deny", [])):\n        return False\n')],
     HP_FILTER, "host.tool-policy"),
    ("a readOnlyHint false taken for the hint", [('annotations.get("readOnlyHint") is True):',
                                                  '"readOnlyHint" in annotations):')],
     HP_FILTER, "host.annotations-untrusted"),
    ("always_confirm matched on the qualified name only",
     [("    if _matches(qualified, confirm) or _matches(tool[\"name\"], confirm) or destructive:",
       "    if _matches(qualified, confirm) or destructive:")],
     "High-risk tools are always confirmed", "host.human-in-the-loop"),
    ("always_confirm matched on the bare name only",
     [("    if _matches(qualified, confirm) or _matches(tool[\"name\"], confirm) or destructive:",
       "    if _matches(tool[\"name\"], confirm) or destructive:")],
     "High-risk tools are always confirmed", "host.human-in-the-loop"),
    ("destructive only when destructiveHint says true",
     [("    destructive = sent.get(\"destructiveHint\") is True or (\n"
       "        not read_only and believed.get(\"destructiveHint\", True) is not False)",
       "    destructive = sent.get(\"destructiveHint\") is True")],
     HP_APPROVAL, "host.annotations-untrusted"),
    ("an allow glob matched against the bare name too",
     [('    return _matches(qualified, policy.get("allow", ["*"]))',
       '    return _matches(qualified, policy.get("allow", ["*"])) or _matches(tool["name"], policy.get("allow", ["*"]))')],
     HP_FILTER, "host.tool-policy"),
]
HP_WRONG += HP_MORE


@pytest.mark.parametrize("name,edits,check,rule", HP_WRONG, ids=[w[0] for w in HP_WRONG])
def test_ex09_host_policy_wrong_answers(tmp_path: Path, name: str, edits: Any, check: str, rule: str) -> None:
    rejected(tmp_path, "ex09_host_policy", edits, check, rule)


HP_ALT_ONE_EXPRESSION = '''
import fnmatch


def may_see(tool, server, trusted, policy):
    name = server + "__" + tool["name"]
    ann = tool.get("annotations") or {}
    return (server in policy.get("servers", [server])
            and not any(fnmatch.fnmatchcase(name, g) for g in policy.get("deny", ()))
            and (not policy.get("read_only", False) or (trusted and ann.get("readOnlyHint") == True))  # noqa: E712
            and any(fnmatch.fnmatchcase(name, g) for g in policy.get("allow", ("*",))))


def must_ask(tool, server, trusted, policy):
    ann = tool.get("annotations") or {}
    ro = trusted and ann.get("readOnlyHint") is True
    says_safe = trusted and ann.get("destructiveHint") is False
    destructive = ann.get("destructiveHint") is True or not (ro or says_safe)
    names = (server + "__" + tool["name"], tool["name"])
    risky = any(fnmatch.fnmatchcase(n, g) for n in names for g in policy.get("always_confirm", ()))
    mode = policy.get("approval", "always")
    return risky or destructive or mode == "always" or (mode == "unless-read-only" and not ro)
'''

HP_ALT_DEFAULTS_WRITTEN = [('def may_see(tool: dict[str, Any], server: str, trusted: bool, policy: dict[str, Any]) -> bool:\n',
                            'def may_see(tool: dict[str, Any], server: str, trusted: bool, policy: dict[str, Any]) -> bool:\n'
                            '    policy = {"allow": ["*"], "deny": [], "read_only": False, **policy}\n')]


@pytest.mark.parametrize("source", [HP_ALT_ONE_EXPRESSION, HP_ALT_DEFAULTS_WRITTEN], ids=["expressions", "defaults"])
def test_ex09_host_policy_alternatives_pass(tmp_path: Path, source: Any) -> None:
    accepted(tmp_path, "ex09_host_policy", source)


# --- ex09_next_step -----------------------------------------------------------------------------------

NS_REPLY = "Reply: the result handed back to the model"

NS_WRONG: list[tuple[str, Any, str, str]] = [
    ("the reply tied to the first call's id", [('        return {"role": "tool", "tool_call_id": situation["call_id"],',
                                                '        return {"role": "tool", "tool_call_id": "call_1",')],
     NS_REPLY, "host.model-api-format"),
    ("the proposal's id made up", [('            {"id": call["id"], "type": "function",',
                                    '            {"id": "call_1", "type": "function",')],
     "Propose: the model's call as the API's assistant message", "host.recheck-proposals"),
    ("only the first text block handed on", [('        text = "\\n".join(texts)', '        text = texts[0]')],
     NS_REPLY, "host.model-api-format"),
    ("text blocks joined without a newline", [('        text = "\\n".join(texts)', '        text = " ".join(texts)')],
     NS_REPLY, "host.model-api-format"),
]


NS_MORE: list[tuple[str, Any, str, str]] = [
    ("hidden tools offered too", [("        if name in situation[\"hidden\"]:\n            continue  # the policy hid it: the model is never offered it\n", "")],
     "Offer: the visible tools in the model API's format", "host.model-api-format"),
    ("the call under the qualified name", [('    params: dict[str, Any] = {"name": tool["name"], "arguments": call["arguments"]}',
                                            '    params: dict[str, Any] = {"name": call["name"], "arguments": call["arguments"]}')],
     "Call: tools/call for the right server, in each era", "host.call-under-own-name"),
    ("is_error always false", [('                                         "is_error": bool(result.get("isError"))}]}',
                                '                                         "is_error": False}]}')],
     NS_REPLY, "host.tool-errors-to-model"),
    ("the 2026 _meta only after 2026-07-28", [('    if situation["revision"] >= "2026-07-28":', '    if situation["revision"] > "2026-07-28":')],
     "Call: tools/call for the right server, in each era", "host.call-under-own-name"),
    ("the request id one past next_id", [('"id": situation["next_id"], "method": "tools/call"',
                                          '"id": situation["next_id"] + 1, "method": "tools/call"')],
     "Call: tools/call for the right server, in each era", "host.call-under-own-name"),
    ("the title never read", [('        description = tool.get("description") or tool.get("title") or tool["name"]',
                               '        description = tool.get("description") or tool["name"]')],
     "Offer: the visible tools in the model API's format", "host.model-api-format"),
    ("the _meta carries only the version",
     [('                           MODERN_META + "clientCapabilities": client["capabilities"],\n'
       '                           MODERN_META + "clientInfo": client["clientInfo"]}',
       '}')],
     "Call: tools/call for the right server, in each era", "host.call-under-own-name"),
    ("every tool named after one server", [("        name = f\"{situation['server']}__{tool['name']}\"",
                                            "        name = f\"issues__{tool['name']}\"")],
     "Offer: the visible tools in the model API's format", "host.model-api-format"),
]
NS_WRONG += NS_MORE


@pytest.mark.parametrize("name,edits,check,rule", NS_WRONG, ids=[w[0] for w in NS_WRONG])
def test_ex09_next_step_wrong_answers(tmp_path: Path, name: str, edits: Any, check: str, rule: str) -> None:
    rejected(tmp_path, "ex09_next_step", edits, check, rule)


NS_OTHER_SPACING = [('"arguments": json.dumps(call["arguments"], sort_keys=True)}}]}',
                     '"arguments": json.dumps(call["arguments"], indent=1)}}]}')]
NS_OTHER_REPLY = [('''    if situation["api"] == "openai":
        return {"role": "tool", "tool_call_id": situation["call_id"], "content": text}''',
                   '''    if situation["api"] != "anthropic":
        return dict(content=text, tool_call_id=situation["call_id"], role="tool")''')]


@pytest.mark.parametrize("edits", [NS_OTHER_SPACING, NS_OTHER_REPLY], ids=["arguments spacing", "key order"])
def test_ex09_next_step_alternatives_pass(tmp_path: Path, edits: Any) -> None:
    accepted(tmp_path, "ex09_next_step", edits)


# --- ex09_who_decides ---------------------------------------------------------------------------------

WD_SERVER = "Decided by the server: the tool or the lifecycle"

WD_WRONG: list[tuple[str, Any, str, str]] = [
    ("a version mismatch recognised only in initialize",
     [('row.get("method") in ("initialize", "server/discover")', 'row.get("method") == "initialize"')],
     WD_SERVER, "versioning.modern-only-refusal-names-versions"),
    ("the row's position instead of its seq",
     [('    return {"layer": layer, "decided_by": who, "seq": row["seq"]}',
       '    return {"layer": layer, "decided_by": who, "seq": row["_at"]}'),
      ('    rows = trace["rows"]\n', '    rows = trace["rows"]\n    for at, row in enumerate(rows):\n        row["_at"] = at\n')],
     "Decided in the roles layer: the user or the Host's policy", "host.human-in-the-loop"),
    ("a tool error recognised only by its text",
     [('                and message.get("result", {}).get("isError") is True:',
       '                and "error" in json.dumps(message.get("result", {})).lower():'),
      ("from typing import Any\n", "import json\nfrom typing import Any\n")],
     "A call that succeeded has no culprit", "tools.execution-error-is-result"),
]


WD_MORE: list[tuple[str, Any, str, str]] = [
    ("the user's no blamed on the Host", [('            return _verdict("roles", "user", row)', '            return _verdict("roles", "host", row)')],
     "Decided in the roles layer: the user or the Host's policy", "host.human-in-the-loop"),
    ("the timeout blamed on the server", [('            return _verdict("transports", "client", row)  # lost',
                                           '            return _verdict("transports", "server", row)  # lost')],
     "Decided on the wire: a lost frame and the client's timeout", "lifecycle.timeouts"),
    ("the verdict one row late", [('    return {"layer": layer, "decided_by": who, "seq": row["seq"]}',
                                   '    return {"layer": layer, "decided_by": who, "seq": row["seq"] + 1}')],
     "Decided in the roles layer: the user or the Host's policy", "host.human-in-the-loop"),
    ("a lost frame looked for among responses only", [('        if "dropped" in row.get("marks", ()):',
                                                 '        if "dropped" in row.get("marks", ()) and row["kind"] == "response":')],
     "Decided on the wire: a lost frame and the client's timeout", "lifecycle.timeouts"),
    ("a denial read only when the user says no", [('row.get("text") == "deny"', 'row.get("text") == "no"')],
     "Decided in the roles layer: the user or the Host's policy", "host.human-in-the-loop"),
    ("the version refusal read as the client's", [('            return _verdict("capabilities", "server", row)  # no shared',
                                                   '            return _verdict("capabilities", "client", row)  # no shared')],
     "Decided by the server: the tool or the lifecycle", "versioning.modern-only-refusal-names-versions"),
    ("the verdict one row early", [('    return {"layer": layer, "decided_by": who, "seq": row["seq"]}',
                                    '    return {"layer": layer, "decided_by": who, "seq": row["seq"] - 1}')],
     "Decided in the roles layer: the user or the Host's policy", "host.human-in-the-loop"),
    ("the client's giving up taken for the decision",
     [('        if "dropped" in row.get("marks", ()):', '        if "timeout" in row.get("marks", ()):')],
     "Decided on the wire: a lost frame and the client's timeout", "lifecycle.timeouts"),
    ("a version refusal recognised by data.supported",
     [('row["kind"] == "error" and row.get("method") in ("initialize", "server/discover")',
       'row["kind"] == "error" and "supported" in (message.get("error", {}).get("data") or {})')],
     WD_SERVER, "versioning.modern-only-refusal-names-versions"),
    ("a version refusal recognised by the word versions",
     [('row["kind"] == "error" and row.get("method") in ("initialize", "server/discover")',
       'row["kind"] == "error" and "versions" in message.get("error", {}).get("message", "")')],
     WD_SERVER, "versioning.modern-only-refusal-names-versions"),
]
WD_WRONG += WD_MORE


@pytest.mark.parametrize("name,edits,check,rule", WD_WRONG, ids=[w[0] for w in WD_WRONG])
def test_ex09_who_decides_wrong_answers(tmp_path: Path, name: str, edits: Any, check: str, rule: str) -> None:
    rejected(tmp_path, "ex09_who_decides", edits, check, rule)


WD_ALT_CANDIDATES = '''
def who_decides(trace):
    found = []
    rows = trace["rows"]
    for row in rows:
        msg = row.get("message") or {}
        if "dropped" in (row.get("marks") or []):
            found.append((row["seq"], "transports", "client"))
        elif row["kind"] == "error" and row.get("method") in {"initialize", "server/discover"}:
            found.append((row["seq"], "capabilities", "server"))
        elif (row["kind"], row["from"], row.get("text")) == ("app", "user", "deny"):
            found.append((row["seq"], "roles", "user"))
        elif row["kind"] == "response" and row.get("method") == "tools/call" and (msg.get("result") or {}).get("isError"):
            found.append((row["seq"], "capabilities", "server"))
    if found:
        seq, layer, who = min(found)
        return {"seq": seq, "layer": layer, "decided_by": who}
    offers = [r for r in rows if r["kind"] == "app" and r["from"] == "host" and r["to"] == "model"]
    if offers and not any("tool_calls" in (r.get("message") or {}) for r in rows if r["from"] == "model"):
        return {"seq": offers[0]["seq"], "layer": "roles", "decided_by": "host"}
    return None
'''
WD_ALT_ORDER = [('''        if "dropped" in row.get("marks", ()):
            return _verdict("transports", "client", row)  # lost on the wire; the client's timeout gave up
        if row["kind"] == "error" and row.get("method") in ("initialize", "server/discover"):
            return _verdict("capabilities", "server", row)  # no shared version: the session never opened''',
                 '''        if row["kind"] == "error" and row.get("method") in ("initialize", "server/discover"):
            return _verdict("capabilities", "server", row)  # no shared version: the session never opened
        if "dropped" in row.get("marks", ()):
            return _verdict("transports", "client", row)  # lost on the wire; the client's timeout gave up''')]


@pytest.mark.parametrize("edits", [WD_ALT_CANDIDATES, WD_ALT_ORDER], ids=["earliest candidate", "checks reordered"])
def test_ex09_who_decides_alternatives_pass(tmp_path: Path, edits: Any) -> None:
    accepted(tmp_path, "ex09_who_decides", edits)


# --- every variation is a kind of its own ---------------------------------------------------------------

VARIATIONS = {
    "ex07_cache": {"same user and client, another tenant", "same user, more scopes", "same user, fewer scopes",
                   "the same grant, scopes in another order", "ttlMs negative", "ttlMs 1", "exactly at expiry"},
    "ex07_list_changed": {"tools removed, several pages in 2025-11-25", "prompts from none, one page in 2026-07-28",
                          "resources: resources held without templates in 2025-06-18",
                          "tools: nothing held in 2025-11-25", "prompts: listChanged missing in 2025-11-25",
                          "resources: kind not declared in 2025-11-25", "log message in 2026-07-28"},
    "ex07_next_message": {"subscribe in 2025-06-18", "subscribe in 2025-11-25", "open a subscription: every list",
                          "everything declared: tools only", "listChanged not declared: every list",
                          "list again, tools listed before, in 2025-11-25"},
    "ex08_task_polling": {"deadline exactly at a poll in 2025-11-25", "deadline 1 ms after a poll in 2026-07-28"},
    "ex08_next_message": {"tasks/get of an older task in 2026-07-28", "tasks/get of a failed task in 2025-11-25",
                          "poll a second task in 2025-11-25", "cancel a cancelled task in 2025-11-25",
                          "tasks/get after the completion notice in 2026-07-28"},
    "ex08_diagnose": {"terminal-regress: failed, then completed in 2025-11-25",
                      "terminal-regress: cancelled, then working in 2025-11-25",
                      "wrong-task-id: tasks/cancel names an unknown task in 2025-11-25",
                      "undeclared: no list in 2025-11-25", "undeclared: a later task in 2026-07-28",
                      "result-while-working: while input_required in 2026-07-28",
                      "era-shape: pollInterval for pollIntervalMs in 2026-07-28",
                      "terminal-regress: completed on a listen stream, then working in 2026-07-28",
                      "cancel-finished: a cancelled task in 2025-11-25",
                      "terminal-regress: completed, then working after a newer task in 2025-11-25"},
    "ex09_host_policy": {"read_only false written out changes nothing", "no approval field: trusted readOnlyHint",
                         "a deny glob matches the qualified name, not the bare one"},
    "ex09_next_step": {"offer with a hidden tool (anthropic)", "offer without descriptions (openai)",
                       "reply with two text blocks (openai)"},
    "ex09_who_decides": {"answered in 2025-11-25", "version-mismatch in 2026-07-28"},
}


@pytest.mark.parametrize("exercise_id", sorted(VARIATIONS))
def test_every_variation_is_a_kind_tried_on_every_seed(exercise_id: str) -> None:
    """The variations the seed once drew inside a kind are kinds of their own (every seed tries every kind),
    and every exercise of these chapters ends with a generated check."""
    ex = get_exercise(exercise_id)
    kinds = {k for c in ex.checks for k in c.kinds}
    assert VARIATIONS[exercise_id] <= kinds, VARIATIONS[exercise_id] - kinds
    assert ex.checks[-1].kinds == ("generated",)


# --- three wrong answers per mistake class (tests/wrong_classes.py) ------------------------------------

MISTAKE_CLASSES: dict[str, dict[str, list[str] | str]] = {
    "ex07_cache": {
        "axes": ["the key forgets the tenant", "the key forgets the client",
                 "a token with more scopes may read a narrower token's entry",
                 "a newer answer does not replace the entry"],
        "boundaries": ["fresh through the expiry instant", "the expiry one ms early",
                       "a negative ttlMs read as its size", "ttlMs 0 read as no limit"],
        "one-input": ["only the first scope compared", "only the caller's own entry is tried",
                      "any one of the caller's fields matching"],
        "seed": ["ttlMs read in whole seconds", "a short ttlMs stretched to a second", "scopes kept in the order given"],
    },
    "ex07_list_changed": {
        "axes": ["old and new merged (a removed tool stays)", "every held list re-listed",
                 "a log message about a list is read as a change"],
        "boundaries": ["an empty held list is taken for not held", "listChanged missing read as declared",
                       "any declaration of the kind read as listChanged", "only the first page fetched"],
        "one-input": ["resources re-listed only when templates are held too", "templates never re-listed",
                      "resources/list_changed not known"],
        "seed": ["only the tools capability is read", "a notification with params taken for another kind",
                 "a client that holds nothing lists what it is told about",
                 "templates fetched with resources, held or not"],
    },
    "ex07_next_message": {
        "axes": ["the acknowledgement names every declared kind, asked or not",
                 "changes tagged with the newest request's id", "the listen asks for every kind the server declared"],
        "boundaries": ["the subscriptionId as text", "the cancellation names the listen as text",
                       "a new id counted from the requests"],
        "one-input": ["tools listed again only if never listed",
                      "resourceSubscriptions honoured only with resources.listChanged",
                      "a resource update left untagged"],
        "seed": ["the listen asks for tool changes only", "the acknowledgement honours what the server never declared",
                 "a subscribe not declared still acknowledged"],
    },
    "ex08_task_polling": {
        "axes": ["the default interval whenever the first Task gave one", "the first interval kept",
                 "the time left measured from the start"],
        "boundaries": ["a poll at the very instant of the deadline", "the whole interval slept, past the deadline",
                       "one ms short of the interval"],
        "one-input": ["only completed ends the loop", "failed does not end the loop", "input_required polled on"],
        "seed": ["intervals rounded down to whole seconds", "the 2025 interval name read in 2026-07-28",
                 "tasks/result asked in 2026-07-28 too"],
    },
    "ex08_next_message": {
        "axes": ["tasks/get answered with the newest task", "the client polls the first task it created",
                 "an optional tool run inline", "the listen request taken for the pending one"],
        "boundaries": ["the cancel answer keeps the last lastUpdatedAt", "a new id counted from the requests",
                       "a listen stream's _meta kept in the Task"],
        "one-input": ["status notifications ignored", "only a completed task's cancel refused",
                      "cancelled not taken for finished", "only the 2025 status notice read"],
        "seed": ["a 2026-07-28 cancel answered with the Task", "the 2025 field names in 2026-07-28",
                 "resultType added in 2025-11-25 too"],
    },
    "ex08_diagnose": {
        "axes": ["only the tasks since the newest create are remembered", "notifications/tasks not read",
                 "one status for every task"],
        "boundaries": ["input_required taken for terminal", "a refused cancel of a finished task flagged",
                       "a terminal status shown again flagged"],
        "one-input": ["failed is not taken for terminal", "only tasks/get answers are checked for their taskId",
                      "the other era's field names not noticed"],
        "seed": ["tasks/list never checked against the capability", "a result is wrong only while working",
                 "the extension checked on the first task only"],
    },
    "ex09_host_policy": {
        "axes": ["an untrusted readOnlyHint believed by the filter",
                 "an untrusted server's annotations believed for approval",
                 "an allow glob naming the tool wins over deny"],
        "boundaries": ["an empty server list read as no list", "read_only false written out taken for true",
                       "a readOnlyHint false taken for the hint"],
        "one-input": ["always_confirm matched on the qualified name only", "always_confirm matched on the bare name only",
                      "destructive only when destructiveHint says true"],
        "seed": ["a deny glob matched against the bare name too", "no approval field read as unless-read-only",
                 "an allow glob matched against the bare name too"],
    },
    "ex09_next_step": {
        "axes": ["hidden tools offered too", "the call under the qualified name", "is_error always false"],
        "boundaries": ["text blocks joined without a newline", "the 2026 _meta only after 2026-07-28",
                       "the request id one past next_id"],
        "one-input": ["only the first text block handed on", "the title never read", "the _meta carries only the version"],
        "seed": ["the reply tied to the first call's id", "the proposal's id made up", "every tool named after one server"],
    },
    "ex09_who_decides": {
        "axes": ["the user's no blamed on the Host", "the timeout blamed on the server",
                 "the version refusal read as the client's"],
        "boundaries": ["the row's position instead of its seq", "the verdict one row late", "the verdict one row early",
                       "the client's giving up taken for the decision"],
        "one-input": ["a tool error recognised only by its text", "a lost frame looked for among responses only",
                      "a denial read only when the user says no"],
        "seed": ["a version mismatch recognised only in initialize", "a version refusal recognised by data.supported",
                 "a version refusal recognised by the word versions"],
    },
}
"""Exercise → mistake class → wrong answers of this file (each rejected on 20 seeds by the check naming
its rule, in the tests above)."""

WRONG_LISTS = {"ex07_cache": CACHE_WRONG, "ex07_list_changed": LC_WRONG, "ex07_next_message": NM_WRONG,
               "ex08_task_polling": TP_WRONG, "ex08_next_message": NX_WRONG, "ex08_diagnose": DG_WRONG,
               "ex09_host_policy": HP_WRONG, "ex09_next_step": NS_WRONG, "ex09_who_decides": WD_WRONG}


def test_every_mistake_class_has_three_wrong_answers() -> None:
    """Every exercise of these chapters names each mistake class, with three wrong answers of its own."""
    assert set(MISTAKE_CLASSES) == set(GENERATED)
    known = {exercise_id: [w[0] for w in wrong] for exercise_id, wrong in WRONG_LISTS.items()}
    for exercise_id, names in known.items():
        assert len(names) == len(set(names)), f"{exercise_id}: two wrong answers share a name"
    wrong_classes.check_table(MISTAKE_CLASSES, known)
