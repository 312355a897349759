"""Chapter 07's stories: hearing about change in both eras, a Host re-listing, and one cache shared by
callers with different tokens — every message valid for its revision, every claim the notebook
makes read from the run, the same seed giving the same trace."""

from __future__ import annotations

from typing import Any

import pytest
from test_fidelity import _check_trace

from mcp_sim.protocol.schema import find_spec_dir
from mcp_sim.roles.cache import AuthorizationContext, ListCache
from mcp_sim.scenarios.change import (
    CALLERS,
    GATEWAY_SCRIPT,
    WatchedCache,
    gateway_timeline,
    host_relists,
    listen_in_detail,
    watch_a_note,
)
from mcp_sim.security.identity import AuthInfo
from mcp_sim.trace.jsonl import dumps_jsonl

LEGACY, MODERN = "2025-11-25", "2026-07-28"
SUB = "io.modelcontextprotocol/subscriptionId"
HAS_SCHEMA = find_spec_dir() is not None


def _messages(sim: Any) -> list[dict[str, Any]]:
    return [e.message for e in sim.recorder
            if e.kind in ("request", "response", "error", "notification") and e.message is not None]


def _notes(sim: Any) -> list[dict[str, Any]]:
    return [m for m in _messages(sim) if "method" in m and "id" not in m]


# --- every message is a real MCP message ---------------------------------------------------------

@pytest.mark.skipif(not HAS_SCHEMA, reason="official MCP schemas not found")
@pytest.mark.parametrize("revision", [LEGACY, MODERN])
def test_every_story_sends_only_valid_messages(revision: str) -> None:
    runs = [watch_a_note(revision), host_relists(revision).sim, host_relists(revision, listen=False).sim,
            gateway_timeline(revision).sim]
    if revision == MODERN:
        runs.append(listen_in_detail())
    for sim in runs:
        assert _check_trace(sim.recorder, revision) > 0


# --- hearing about change ------------------------------------------------------------------------

def test_legacy_watch_subscribes_hears_every_list_change_and_stops_after_unsubscribe() -> None:
    sim = watch_a_note(LEGACY)
    messages = _messages(sim)
    missing = next(m for m in messages if m.get("error"))
    assert missing["error"]["code"] == -32002
    assert [n["method"] for n in _notes(sim) if n["method"] != "notifications/initialized"] == [
        "notifications/resources/updated", "notifications/tools/list_changed"]
    assert not any(SUB in str(n) for n in _notes(sim))  # legacy notifications belong to the session
    unsubscribed = next(i for i, m in enumerate(messages) if m.get("method") == "resources/unsubscribe")
    assert not any(m.get("method") == "notifications/resources/updated" for m in messages[unsubscribed:])


def test_modern_watch_is_acknowledged_first_and_every_notification_carries_the_listen_id() -> None:
    sim = watch_a_note(MODERN)
    messages = _messages(sim)
    listen = next(m for m in messages if m.get("method") == "subscriptions/listen")
    tagged = [n for n in _notes(sim) if n["method"] != "notifications/cancelled"]
    assert [n["method"] for n in tagged] == ["notifications/subscriptions/acknowledged",
                                             "notifications/resources/updated", "notifications/tools/list_changed"]
    assert all(n["params"]["_meta"][SUB] == listen["id"] for n in tagged)
    cancelled = next(i for i, m in enumerate(messages) if m.get("method") == "notifications/cancelled")
    assert messages[cancelled]["params"]["requestId"] == listen["id"]
    assert not any("method" in m and "id" not in m for m in messages[cancelled + 1:])
    assert not any(m.get("method") in ("resources/subscribe", "resources/unsubscribe") for m in messages)


def test_listen_in_detail_acknowledges_a_subset_tags_each_stream_and_ends_both_ways() -> None:
    sim = listen_in_detail()
    messages = _messages(sim)
    first, second = [m for m in messages if m.get("method") == "subscriptions/listen"]
    acks = [n for n in _notes(sim) if n["method"] == "notifications/subscriptions/acknowledged"]
    assert acks[0]["params"]["notifications"] == {"toolsListChanged": True, "promptsListChanged": True}
    assert "resourceSubscriptions" in first["params"]["notifications"]  # asked for, not granted
    tools = [n["params"]["_meta"][SUB] for n in _notes(sim) if n["method"] == "notifications/tools/list_changed"]
    assert tools == [first["id"], second["id"]]
    prompts = [n["params"]["_meta"][SUB] for n in _notes(sim) if n["method"] == "notifications/prompts/list_changed"]
    assert prompts == [first["id"]]  # the second stream was closed by then
    end = messages[-1]
    assert end["id"] == first["id"] and end["result"]["_meta"][SUB] == first["id"]


# --- the Host re-lists ---------------------------------------------------------------------------

def _seen_at(timeline: Any, tool: str) -> list[int]:
    return [r.at_ms for r in timeline.rows if tool in r.seen]


def test_a_legacy_host_relists_at_once_and_asks_every_time() -> None:
    t = host_relists(LEGACY)
    assert _seen_at(t, "count_notes")[0] == 5000
    assert all(r.asked for r in t.rows)


def test_a_listening_modern_host_relists_at_once_then_serves_from_its_cache() -> None:
    t = host_relists(MODERN)
    assert _seen_at(t, "count_notes")[0] == 5000
    assert [r.asked for r in t.rows] == [True, True, False, False, False]


def test_a_modern_host_that_does_not_listen_sees_the_new_tool_only_after_ttl() -> None:
    t = host_relists(MODERN, listen=False)
    assert _seen_at(t, "count_notes") == [61_000]
    assert "expired" in t.rows[-1].cache
    assert not any(n.get("method", "").endswith("list_changed") for n in _notes(t.sim))


# --- one cache, several callers ------------------------------------------------------------------

def test_gateway_shares_public_entries_and_keeps_private_ones_per_token() -> None:
    t = gateway_timeline(MODERN)
    rows = {(r.at_ms, r.who, r.server): r for r in t.rows}
    assert rows[5000, "bob (read)", "finance"].asked  # alice's private list is not bob's
    assert not rows[5000, "bob (read)", "weather"].asked  # the public weather list is shared
    assert not rows[10_000, "alice (read)", "finance"].asked
    admin = rows[12_000, "alice (read+write)", "finance"]
    assert admin.asked and "transfer" in admin.seen  # same user, stronger token: her own entry
    assert rows[25_000, "alice (read)", "finance"].cache.startswith("expired")
    assert rows[31_000, "bob (read)", "weather"].cache.startswith("expired")
    assert "3 entries dropped" in rows[40_000, "server", "finance"].cache
    assert "forecast_cashflow" in rows[41_000, "bob (read)", "finance"].seen
    assert not any("transfer" in r.seen for r in t.rows if r.who != "alice (read+write)")
    assert t.requests == 7


def test_legacy_gateway_caches_nothing_and_every_session_hears_the_change() -> None:
    t = gateway_timeline(LEGACY)
    looks = [r for r in t.rows if r.asked is not None]
    assert len(looks) == len([s for s in GATEWAY_SCRIPT if s[1] != "deploy"]) and all(r.asked for r in looks)
    assert all("no ttlMs" in r.cache for r in looks)
    assert "heard 3×" in next(r.cache for r in t.rows if r.who == "server")


def test_the_timeline_prints_as_a_table_and_html() -> None:
    t = gateway_timeline(MODERN)
    text = str(t)
    assert text.splitlines()[1].split() == ["time", "who", "server", "cache", "server", "asked?", "tools", "seen"]
    assert "<table>" in t._repr_html_() and "alice (read+write)" in t._repr_html_()


def test_same_seed_same_trace() -> None:
    for story in (lambda: gateway_timeline(MODERN).sim, lambda: watch_a_note(MODERN), listen_in_detail):
        assert dumps_jsonl(story().recorder) == dumps_jsonl(story().recorder)


# --- the cache key: the defect this chapter found ------------------------------------------------

def test_a_private_entry_is_not_served_to_the_same_user_with_other_scopes() -> None:
    # The finance server shows `transfer` only to tokens with finance:write. Keyed by subject and
    # tenant alone, alice's read-only token was served the list made for her read-write token.
    cache = ListCache(lambda: 0.0)
    writer = AuthorizationContext.of(CALLERS["alice-admin"].auth)
    reader = AuthorizationContext.of(CALLERS["alice"].auth)
    assert writer != reader
    cache.put("finance", writer, "tools/list", None, {"tools": [{"name": "transfer"}], "ttlMs": 1000,
                                                      "cacheScope": "private"})
    assert cache.get("finance", reader, "tools/list", None) is None
    assert cache.get("finance", writer, "tools/list", None) is not None


def test_scopes_in_any_order_are_one_context() -> None:
    a = AuthorizationContext.of(AuthInfo("alice", "acme", scopes=("b", "a", "a")))
    b = AuthorizationContext.of(AuthInfo("alice", "acme", scopes=("a", "b")))
    assert a == b and str(a) == "alice@acme [a b]"
    assert str(AuthorizationContext.of(AuthInfo("bob", "globex"))) == "bob@globex"


def test_watched_cache_answers_like_the_list_cache() -> None:
    now = [0.0]
    plain, watched = ListCache(lambda: now[0]), WatchedCache(lambda: now[0])
    ctx = AuthorizationContext("alice", "acme")
    result = {"tools": [], "ttlMs": 2000, "cacheScope": "private"}
    for cache in (plain, watched):
        assert cache.put("s", ctx, "tools/list", None, result)
    for t in (0.0, 1.0, 2.0, 3.0):
        now[0] = t
        assert (plain.get("s", ctx, "tools/list", None) is None) == (watched.get("s", ctx, "tools/list", None) is None)
    assert [e.action for e in watched.events] == ["stored", "hit", "hit", "expired", "miss"]


def test_the_lanes_draw_the_cache_log_against_the_clock() -> None:
    lanes = dict(gateway_timeline(MODERN).cache.lanes().rows())  # type: ignore[union-attr]
    alice = lanes["finance · alice@acme [finance:read]"]
    assert alice[0] == "S" and alice[10] == "H" and alice[20] == "╌" and alice[25] == "R" and alice[40] == "X"
    assert set(alice[1:10]) == {"━"}
    weather = lanes["weather · everyone"]
    assert weather[5] == "H" and weather[31] == "R"  # bob was served the public entry alice's look stored
    assert lanes["finance · bob@globex [finance:read]"][41] == "S"
    assert str(gateway_timeline(LEGACY).cache.lanes()) == "(nothing was cached)"  # type: ignore[union-attr]


@pytest.mark.parametrize("revision", [LEGACY, MODERN])
def test_readable_and_accelerated_twins_tell_the_same_stories(revision: str) -> None:
    from mcp_sim import accelerated

    def stories() -> list[str]:
        runs = [watch_a_note(revision), host_relists(revision).sim, gateway_timeline(revision).sim]
        return [dumps_jsonl(sim.recorder) for sim in runs]

    def timeline() -> str:
        return str(gateway_timeline(revision))

    with accelerated.use(False):
        readable, table = stories(), timeline()
    with accelerated.use():
        fast, fast_table = stories(), timeline()
    assert fast == readable and fast_table == table
