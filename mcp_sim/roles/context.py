"""The ``ctx`` a handler receives, where a reader of the roles looks for it (course chapters 04–05).

The context itself lives in the capability layer, :mod:`mcp_sim.capabilities.context`: tools,
prompts and resources are written against it, and it against small ports the server session
implements. The roles import it from there; nothing in the capability layer imports the roles.
"""

from mcp_sim.capabilities.context import Context, ServerPort, ServerSessionPort

__all__ = ["Context", "ServerPort", "ServerSessionPort"]
