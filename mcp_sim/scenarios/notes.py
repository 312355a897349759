"""The notes server: a small file tree you can read, write and watch (course chapters 05 and 07).

Every note is a resource ``notes://files/<path>``. Writing a note changes the resource: subscribers
(``resources/subscribe`` in legacy, ``subscriptions/listen`` in 2026-07-28) hear
``notifications/resources/updated``; creating or deleting one changes the *list*, so clients that
asked hear ``notifications/resources/list_changed``.
"""

from __future__ import annotations

from collections.abc import Mapping

from mcp_sim.roles.server import Server

PREFIX = "notes://files/"
STARTER = {
    "todo.md": "# To do\n- read chapter 6\n- try subscriptions\n",
    "ideas/mcp.md": "Servers offer tools, resources and prompts.\n",
}


def build(files: Mapping[str, str] | None = None) -> Server:
    """A notes server over a virtual file tree (a copy of ``files``, or a small starter tree)."""
    tree = dict(STARTER if files is None else files)
    server = Server("notes", version="1.0.0", title="Notes",
                    instructions="A folder of markdown notes. Read them as resources; write with write_note.")

    def offer(path: str) -> None:
        server.add_resource(f"{PREFIX}{path}", lambda: tree[path], name=path, mime_type="text/markdown")

    @server.tool(annotations={"readOnlyHint": True})
    def list_notes(folder: str = "") -> list[str]:
        """Paths of the notes, optionally only those inside a folder."""
        return sorted(p for p in tree if p.startswith(folder))

    @server.tool(annotations={"readOnlyHint": True})
    def read_note(path: str) -> str:
        """The text of one note."""
        if path not in tree:
            raise FileNotFoundError(f"no note at {path}")
        return tree[path]

    @server.tool(annotations={"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True})
    def write_note(path: str, text: str) -> str:
        """Create or replace a note."""
        new = path not in tree
        tree[path] = text
        if new:
            offer(path)  # the list changed
        else:
            server.resource_updated(f"{PREFIX}{path}")
        return f"{'created' if new else 'updated'} {path} ({len(text)} characters)"

    @server.tool(annotations={"destructiveHint": True})
    def delete_note(path: str) -> str:
        """Delete a note."""
        if path not in tree:
            raise FileNotFoundError(f"no note at {path}")
        del tree[path]
        server.remove_resource(f"{PREFIX}{path}")
        return f"deleted {path}"

    for path in sorted(tree):
        offer(path)
    return server
