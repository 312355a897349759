"""A small MCP server built with the official ``mcp`` SDK: the real peer of the interop tests.

It offers one of each primitive so the simulated client can list and call them all:

* tools ``add`` (structured output), ``echo`` and ``confirm_delete`` — the last one asks the user
  through elicitation. The SDK picks the wire form from the negotiated revision: in 2026-07-28 it
  answers with an ``InputRequiredResult`` (a Multi Round-Trip Request) and resumes on the retry;
  in the legacy era it sends an ``elicitation/create`` request mid-call;
* a resource ``notes://readme`` and a resource template ``notes://{name}``;
* a prompt ``summarize``.

Run it as ``python tests/sdk_server.py`` (stdio) or ``python tests/sdk_server.py --http PORT``
(Streamable HTTP on 127.0.0.1, both eras). It logs to stderr only: stdout is the protocol.
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.resolve import Elicit, Resolve
from pydantic import BaseModel

mcp = MCPServer("sdk-notes", version="1.0.0", instructions="A tiny SDK server for interop tests.")


class Confirmation(BaseModel):
    """What the user is asked before a note is deleted."""

    confirm: bool


def ask_confirmation(name: str) -> Elicit[Confirmation]:
    return Elicit(f"Really delete the note {name!r}?", Confirmation)


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@mcp.tool()
def echo(text: str) -> str:
    """Say the text back."""
    return text


@mcp.tool()
def confirm_delete(name: str, answer: Annotated[Confirmation, Resolve(ask_confirmation)]) -> str:
    """Delete a note after the user confirms (asks through elicitation)."""
    return f"deleted {name}" if answer.confirm else f"kept {name}"


@mcp.resource("notes://readme", mime_type="text/plain")
def readme() -> str:
    """The read-me note."""
    return "Hello from the SDK server."


@mcp.resource("notes://{name}", mime_type="text/plain")
def note(name: str) -> str:
    """Any note by name."""
    return f"This is the note {name}."


@mcp.prompt()
def summarize(topic: str) -> str:
    """Ask the model to summarize a topic."""
    return f"Please summarize {topic} in one sentence."


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--http", type=int, metavar="PORT", help="serve Streamable HTTP on 127.0.0.1:PORT")
    args = parser.parse_args()
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    if args.http is not None:
        mcp.run("streamable-http", host="127.0.0.1", port=args.http)
    else:
        mcp.run("stdio")


if __name__ == "__main__":
    main()
