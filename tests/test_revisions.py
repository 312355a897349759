"""The revisions registry: facts that must hold whatever the schema files say."""

from __future__ import annotations

import pytest

from mcp_sim.protocol.revisions import (
    LATEST,
    REVISIONS,
    comparison_table,
    era_of,
    get_revision,
)


def test_five_releases_two_eras() -> None:
    assert list(REVISIONS) == ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]
    assert [era_of(v) for v in REVISIONS] == ["legacy"] * 4 + ["modern"]
    assert LATEST == "2026-07-28"


def test_batching_only_in_2025_03_26() -> None:
    assert [v for v, r in REVISIONS.items() if r.batching] == ["2025-03-26"]


def test_modern_removals_and_additions() -> None:
    modern = get_revision("2026-07-28")
    for gone in ("initialize", "ping", "logging/setLevel", "resources/subscribe", "tasks/get"):
        assert modern.method(gone) is None
    assert "notifications/initialized" not in modern.notifications
    assert modern.method("server/discover") is not None
    assert modern.method("subscriptions/listen") is not None
    assert modern.sendable_by("server") == []  # servers never send requests in 2026-07-28
    assert modern.method("elicitation/create").only_inside_input_requests  # type: ignore[union-attr]
    assert {m for m, i in modern.requests.items() if i.may_need_input} == {"tools/call", "prompts/get",
                                                                           "resources/read"}
    assert modern.resource_not_found_code == -32602 and get_revision("2025-11-25").resource_not_found_code == -32002
    assert {-32020, -32021, -32022} <= set(modern.error_codes)


def test_legacy_server_to_client_requests() -> None:
    assert get_revision("2025-06-18").sendable_by("server") == ["elicitation/create", "ping", "roots/list",
                                                                  "sampling/createMessage"]
    assert "elicitation/create" not in get_revision("2025-03-26").requests


def test_unknown_revision_is_a_clear_error() -> None:
    with pytest.raises(KeyError, match="not a released MCP revision"):
        get_revision("2026-01-01")


def test_comparison_tables_render() -> None:
    table = comparison_table("requests")
    text = table.to_text()
    assert "server/discover" in text and "in inputRequests" in text
    row = dict(table.rows)["initialize"]
    assert row == ("C→S", "C→S", "C→S", "C→S", "–")
    html = table.to_html()
    assert html.count("<tr>") == len(table.rows) + 1 and "<caption" in html and "text-align:left" in html
    for what in ("notifications", "capabilities", "errors"):
        assert comparison_table(what).rows  # type: ignore[arg-type]
    assert dict(comparison_table("errors").rows)["-32022"][-1] == "Unsupported protocol version"


def test_versions_the_registry_does_not_know_are_answered_by_date() -> None:
    from mcp_sim.protocol.revisions import era_of_version, revision_at, versions_up_to

    assert revision_at("2025-11-25").version == "2025-11-25"
    assert revision_at("2026-01-01").version == "2025-11-25"  # between releases: the older one's rules
    assert revision_at("2030-01-01").version == "2026-07-28"
    assert revision_at("").version == "2024-11-05"
    assert era_of_version("2026-01-01") == "modern"
    assert era_of_version("2026-01-01", unknown_modern_after="2026-07-28") == "legacy"
    assert era_of_version("2025-06-18", unknown_modern_after="2000-01-01") == "legacy"  # known: its own era
    assert versions_up_to("2025-11-25") == ("2025-06-18", "2025-11-25")
    assert versions_up_to("2025-06-18") == ("2025-06-18",)
    assert versions_up_to("2026-07-28") == ("2026-07-28",)
