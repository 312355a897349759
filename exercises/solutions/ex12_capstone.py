"""Reference solution for ex12_capstone. Try the exercise before reading this."""

from __future__ import annotations

import json
import posixpath
import re
from typing import Any
from urllib.parse import unquote, urlsplit

from mcp_sim.capabilities.context import Context
from mcp_sim.roles.server import Server

# --- (a) the server ----------------------------------------------------------------------------------


def build_server(expenses: list[dict[str, Any]]) -> Server:
    """An expenses server: everyone's expenses in one book, each caller sees and changes only their own."""
    book = {e["id"]: dict(e) for e in expenses}
    server = Server("expenses", version="1.0.0", per_caller=True)

    def mine(ctx: Context) -> list[dict[str, Any]]:
        caller = ctx.auth.subject if ctx.auth is not None else None
        return [e for e in book.values() if e["owner"] == caller]

    def public(expense: dict[str, Any]) -> dict[str, Any]:
        return {"id": expense["id"], "description": expense["description"], "cents": expense["cents"]}

    @server.tool(annotations={"readOnlyHint": True, "openWorldHint": False})
    def list_expenses(ctx: Context) -> str:
        """List your expenses (id, description, amount in cents)."""
        return json.dumps([public(e) for e in mine(ctx)])

    @server.tool(annotations={"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False,
                              "openWorldHint": False})
    def add_expense(description: str, cents: int, ctx: Context) -> str:
        """Record a new expense of yours."""
        if not description.strip():
            raise ValueError("description must not be empty")
        if cents <= 0:
            raise ValueError(f"cents must be a positive whole number, not {cents}")
        number = 1 + max((int(i.rsplit("-", 1)[-1]) for i in book if i.rsplit("-", 1)[-1].isdigit()), default=0)
        expense = {"id": f"exp-{number}", "owner": ctx.auth.subject if ctx.auth else "", "description": description,
                   "cents": cents}
        book[expense["id"]] = expense
        return json.dumps(public(expense))

    @server.tool(annotations={"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True,
                              "openWorldHint": False})
    def delete_expense(expense_id: str, ctx: Context) -> str:
        """Delete one of your expenses."""
        if not any(e["id"] == expense_id for e in mine(ctx)):
            raise ValueError(f"you have no expense {expense_id}")  # the same answer for someone else's
        del book[expense_id]
        return f"deleted {expense_id}"

    @server.resource_template("expenses://{expense_id}", mime_type="application/json")
    def expense(expense_id: str, ctx: Context) -> str:
        """One of your expenses."""
        for e in mine(ctx):
            if e["id"] == expense_id:
                return json.dumps(public(e))
        raise KeyError(expense_id)  # not found, in the revision's own code

    @server.prompt()
    def monthly_report(month: str) -> str:
        """Ask for a report of one month's expenses."""
        return f"Write a short report of my expenses for {month}: list them with list_expenses, then total them."

    return server


# --- (b) the host policy ---------------------------------------------------------------------------------

_ORDERS = re.compile(r"<\s*/?\s*\w+\s*>|\b(before|after) (using|calling)\b|\b(always|never|must|ignore|instead|"
                     r"don't|do not|secret\w*|password|token|credential|mention|reveal)\b", re.I)
_PATH = re.compile(r"(~|\.\.)?/[\w.-]+/[\w./-]+")


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() if k != "_meta" for s in (_strings(k) + _strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def review_tool(server: str, tool: dict[str, Any]) -> bool:
    """Approve a definition only if none of its strings hides characters or talks to the model."""
    for text in _strings(tool):
        if any(ord(c) >= 0xE0000 or c in "\u200b\u200c\u200d\u2060\ufeff" for c in text):
            return False
        if _ORDERS.search(text) or _PATH.search(text):
            return False  # text aimed at the model, not at a reader
    return True


def decide(server: str, tool: dict[str, Any], trusted: bool) -> str:
    """"run" only for what a trusted server says is read-only; the user confirms everything else."""
    annotations = tool.get("annotations") or {}
    if annotations.get("destructiveHint") is True:
        return "ask"  # believed from anyone: it can only make us more careful
    if trusted and annotations.get("readOnlyHint") is True:
        return "run"
    return "ask"


def may_read(server: str, uri: str, trusted: bool, roots: list[str]) -> bool:
    """The model reads resources of trusted servers only, and files only inside the user's roots."""
    if not trusted:
        return False
    parts = urlsplit(uri)
    if parts.scheme != "file":
        return True
    path = posixpath.normpath(unquote(parts.path))
    for root in roots:
        base = posixpath.normpath(unquote(urlsplit(root).path))
        if path == base or path.startswith(base.rstrip("/") + "/"):
            return True
    return False
