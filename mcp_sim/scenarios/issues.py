"""The issue tracker: tools that change things, and a destructive one (course chapters 01 and 05).

``create_issue`` and ``search_issues`` are everyday tools; ``delete_issue`` carries
``destructiveHint: true`` so a careful host asks the user before letting the model call it. Each
issue is also a resource, ``issues://<number>``.
"""

from __future__ import annotations

from typing import Literal, TypedDict

from mcp_sim.roles.server import Server


class Issue(TypedDict):
    number: int
    title: str
    body: str
    state: Literal["open", "closed"]
    labels: list[str]


class SearchResult(TypedDict):
    issues: list[Issue]


def build() -> Server:
    """A fresh issue tracker with two issues."""
    server = Server("issues", version="1.0.0", title="Issue tracker")
    issues: dict[int, Issue] = {
        1: {"number": 1, "title": "Login page is slow", "body": "Takes 5 s.", "state": "open", "labels": ["perf"]},
        2: {"number": 2, "title": "Typo in footer", "body": "'Copyrigth'", "state": "closed", "labels": []},
    }

    @server.tool(annotations={"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False})
    def create_issue(title: str, body: str = "", labels: list[str] | None = None) -> Issue:
        """Open a new issue."""
        number = max(issues, default=0) + 1
        issues[number] = {"number": number, "title": title, "body": body, "state": "open",
                          "labels": list(labels or [])}
        return issues[number]

    @server.tool(annotations={"readOnlyHint": True})
    def search_issues(query: str = "", state: Literal["open", "closed", "all"] = "open") -> SearchResult:
        """Issues whose title or body contains the query."""
        q = query.casefold()
        found = [i for i in issues.values() if (state == "all" or i["state"] == state)
                 and (q in i["title"].casefold() or q in i["body"].casefold())]
        return {"issues": found}

    @server.tool(annotations={"destructiveHint": True, "idempotentHint": True, "readOnlyHint": False})
    def delete_issue(number: int) -> str:
        """Delete an issue for ever."""
        if number not in issues:
            raise KeyError(f"no issue #{number}")
        del issues[number]
        return f"deleted issue #{number}"

    @server.resource_template("issues://{number}", mime_type="application/json")
    def issue(number: str) -> Issue:
        """One issue."""
        return issues[int(number)]  # KeyError/ValueError: not found

    return server
