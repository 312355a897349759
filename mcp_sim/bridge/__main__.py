"""``python -m mcp_sim.bridge serve SERVER …`` / ``python -m mcp_sim.bridge connect … -- CMD …``."""

from __future__ import annotations

import sys

from mcp_sim.bridge.commands import connect_command, serve_command


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    commands = {"serve": serve_command, "connect": connect_command}
    if not argv or argv[0] not in commands:
        sys.stderr.write("usage: python -m mcp_sim.bridge (serve SERVER … | connect … -- CMD …)\n")
        return 2
    return commands[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main())
