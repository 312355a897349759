"""What a server offers, and who decides it is used (course chapter 05).

A small ``library`` server offers every server primitive — tools (one with an ``outputSchema``, one
whose handler can fail, annotations and icons), a resource, a resource template, a prompt and
completion — with a page size of two, so its lists come in pages. :func:`who_decides` plays the
three controllers of the spec's "Server features" through a Host: the **model** calls a tool, the
**application** attaches a resource, the **user** picks a prompt.
"""

from __future__ import annotations

from typing import Any, Final

from mcp_sim.roles.host import HOST, USER, Host
from mcp_sim.roles.model import ScriptedModel, ToolRule
from mcp_sim.roles.server import Server
from mcp_sim.roles.user import ScriptedUser
from mcp_sim.security.host_policy import ApprovalPolicy
from mcp_sim.sim.world import Simulation

BOOKS: Final = {"Dune": 1965, "Emma": 1815, "Ulysses": 1922, "Beloved": 1987}
"""The library's catalogue: title → year."""

BOOK_ICON: Final = {"src": "data:image/svg+xml;base64,PHN2Zy8+", "mimeType": "image/svg+xml", "sizes": ["any"]}
"""An icon travels as data (``https:`` or ``data:`` only); a Host shows it, never runs it."""

LIBRARY_RULES: Final = (
    ToolRule(r"when was (?P<title>[A-Z][a-z]+) published", "book_facts", {"title": "{title}"},
             answer="Here is what the library knows: {result}"),
)


def library() -> Server:
    """The library server: three tools, a resource, a template, a prompt, completion; two per page."""
    server = Server("library", version="1.0.0", title="City library", icons=[BOOK_ICON], page_size=2)

    @server.tool(annotations={"readOnlyHint": True, "openWorldHint": False}, icons=[BOOK_ICON])
    def search(query: str) -> str:
        """Titles in the catalogue that contain the query."""
        return ", ".join(t for t in BOOKS if query.lower() in t.lower()) or "nothing found"

    @server.tool(annotations={"readOnlyHint": True}, output_schema={
        "type": "object", "required": ["title", "year"],
        "properties": {"title": {"type": "string"}, "year": {"type": "integer"}}})
    def book_facts(title: str) -> dict[str, Any]:
        """Structured facts about one book (an unknown title fails: the result says so with isError)."""
        if title not in BOOKS:
            raise KeyError(f"no book called {title!r} in the catalogue")
        return {"title": title, "year": BOOKS[title]}

    @server.tool(annotations={"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True})
    def reserve(title: str) -> str:
        """Reserve a book (changes the library's state, but destroys nothing)."""
        return f"{title} is reserved for you."

    @server.resource("library://catalogue", mime_type="text/plain", title="Catalogue")
    def catalogue() -> str:
        return "\n".join(f"{t} ({y})" for t, y in BOOKS.items())

    @server.resource_template("library://books/{title}", mime_type="text/plain", title="One book")
    def book(title: str) -> str:
        return f"{title}, first published in {BOOKS[title]}."

    @server.prompt(title="Write a review")
    def review(title: str) -> str:
        """Ask the model for a short review of a book."""
        return f"Write a three-sentence review of {title}."

    @server.completion(argument="title", prompt="review")
    def complete_title(value: str) -> list[str]:
        return [t for t in BOOKS if t.lower().startswith(value.lower())]

    return server


def who_decides(revision: str, *, seed: int = 1, trusted: bool = False) -> Simulation:
    """The three controllers through one Host, in ``revision``: the model calls ``book_facts``, the
    application attaches ``library://catalogue``, the user picks the ``review`` prompt (completing its
    argument as they type). The Host asks the user before the tool call unless the server is trusted
    and the tool read-only (its ``unless-read-only`` policy)."""
    sim = Simulation(seed=seed)

    async def main() -> None:
        policy = ApprovalPolicy(mode="unless-read-only", trusted_servers=frozenset({"library"} if trusted else ()))
        host = Host(model=ScriptedModel(LIBRARY_RULES), user=ScriptedUser(approvals=[True]),
                    approval_policy=policy)
        async with host:
            client = await host.add_server("library", library(), revision=revision, trusted=trusted)
            await host.list_tools()
            await host.chat("When was Dune published?")  # model-controlled
            host.say(HOST, "client/library", "attach the catalogue to the conversation")  # application-controlled
            await client.read_resource("library://catalogue")
            host.say(USER, HOST, "/review Em…")  # user-controlled: the user picks the prompt
            done = await client.complete({"type": "ref/prompt", "name": "review"}, {"name": "title", "value": "Em"})
            title = done["completion"]["values"][0]
            await client.get_prompt("review", {"title": title})

    sim.run(main)
    return sim
