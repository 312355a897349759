"""Captions exist for every method of every revision and name both sides; labels carry the kind."""

from __future__ import annotations

import pytest

from mcp_sim.protocol.revisions import REVISIONS, TASKS_EXTENSION_METHODS
from mcp_sim.trace import Recorder
from mcp_sim.trace.captions import (
    NOTIFICATION_SENTENCES,
    REQUEST_SENTENCES,
    caption,
    label,
    methods_of_all_revisions,
    who,
)

CLIENT, SERVER = "client/weather", "server/weather"
CASES = [
    (version, method, kind, info.direction)
    for version, rev in REVISIONS.items()
    for kind, table in (("request", rev.requests), ("notification", rev.notifications))
    for method, info in table.items()
] + [("2026-07-28", m, "request", info.direction) for m, info in TASKS_EXTENSION_METHODS.items()]


def _record(rec: Recorder, kind: str, method: str, sender: str, receiver: str, rid: int) -> None:
    message: dict[str, object] = {"jsonrpc": "2.0", "method": method, "params": {}}
    if kind == "request":
        message["id"] = rid
    rec.record_message(link="weather", sender=sender, receiver=receiver, message=message)


@pytest.mark.parametrize(("version", "method", "kind", "direction"), CASES,
                         ids=[f"{v}:{m}" for v, m, _, _ in CASES])
def test_caption_names_both_sides(version: str, method: str, kind: str, direction: str) -> None:
    rec = Recorder()
    routes = {"client→server": [(CLIENT, SERVER)], "server→client": [(SERVER, CLIENT)],
              "both": [(CLIENT, SERVER), (SERVER, CLIENT)]}[direction]
    for i, (sender, receiver) in enumerate(routes, start=1):
        _record(rec, kind, method, sender, receiver, i)
        event = rec.events[-1]
        text = event.caption
        assert text and text[0].isupper()
        assert "the weather client" in text.lower() and "the weather server" in text.lower(), text
        assert text.lower().index(who(sender)) < text.lower().index(who(receiver)), text  # sender first
        assert "?" not in text and "{" not in text, text
        if kind == "request":
            # The answer names both sides too.
            rec.record_message(link="weather", sender=receiver, receiver=sender,
                               message={"jsonrpc": "2.0", "id": i, "result": {}})
            answer = rec.events[-1]
            assert answer.method == method
            assert who(receiver) in answer.caption.lower() and who(sender) in answer.caption, answer.caption
            rec.record_message(link="weather", sender=receiver, receiver=sender,
                               message={"jsonrpc": "2.0", "id": i, "error": {"code": -32601, "message": "nope"}})
            assert "-32601" in rec.events[-1].caption and who(sender) in rec.events[-1].caption


def test_every_method_has_its_own_sentence() -> None:
    """No method of any revision falls back to the generic "asks … to run <method>" sentence."""
    for method in sorted(methods_of_all_revisions()):
        table = NOTIFICATION_SENTENCES if method.startswith("notifications/") else REQUEST_SENTENCES
        assert method in table, f"{method} has no sentence of its own"


def test_captions_use_message_fields() -> None:
    rec = Recorder()
    rec.record_message(link="weather", sender=CLIENT, receiver=SERVER, message={
        "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "get_forecast", "arguments": {}}})
    assert rec.events[-1].caption == "The weather client asks the weather server to call the tool get_forecast"
    rec.record_message(link="weather", sender=SERVER, receiver=CLIENT, message={
        "jsonrpc": "2.0", "id": 1, "result": {"resultType": "input_required",
                                              "inputRequests": {"confirm": {"method": "elicitation/create"}}}})
    assert rec.events[-1].caption == ("The weather server tells the weather client it needs input before it can "
                                      "answer tools/call (confirm)")
    assert label(rec.events[-1]) == "← input_required #1"
    rec.record_message(link="weather", sender=CLIENT, receiver=SERVER, message={
        "jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    rec.record_message(link="weather", sender=SERVER, receiver=CLIENT, message={
        "jsonrpc": "2.0", "id": 2, "result": {"tools": [{"name": "a"}, {"name": "b"}]}})
    assert rec.events[-1].caption == "The weather server answers the weather client's tools/list with 2 tools: a, b"


def test_unknown_methods_and_app_talk() -> None:
    rec = Recorder()
    rec.record_message(link="weather", sender=CLIENT, receiver=SERVER,
                       message={"jsonrpc": "2.0", "id": 1, "method": "x/{evil}", "params": {}})
    assert rec.events[-1].caption == "The weather client asks the weather server to run x/{evil}"
    rec.record_app(sender="user", receiver="host", text="hello")
    assert rec.events[-1].caption == "The user says to the host: “hello”"
    assert rec.events[-1].layer == "roles"


def test_labels_say_the_kind_in_words() -> None:
    rec = Recorder()
    rec.record_message(link="w", sender=CLIENT, receiver=SERVER,
                       message={"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "x"}},
                       marks=("dropped",))
    rec.record_message(link="w", sender=SERVER, receiver=CLIENT,
                       message={"jsonrpc": "2.0", "id": 3, "result": {"content": [], "isError": True}})
    rec.record_message(link="w", sender=SERVER, receiver=CLIENT,
                       message={"jsonrpc": "2.0", "id": 3, "error": {"code": -32601, "message": "no"}})
    rec.record_message(link="w", sender=CLIENT, receiver=SERVER,
                       message={"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}})
    assert [label(e) for e in rec.events] == ["→ tools/call #3 [dropped]", "← result #3 (isError)",
                                              "✖ error -32601 #3", "⇢ notifications/cancelled #3"]
    assert caption(rec.events[1]).endswith("the tool ran and failed")
