"""mcp-sim: an in-process simulator and course for the Model Context Protocol.

The package has the three layers the course teaches:

* **roles** (:mod:`mcp_sim.roles`): Host, Client, Server, and the scripted user and model around them;
* **capabilities** (:mod:`mcp_sim.capabilities`): tools, resources, prompts, completion, and what a
  server needs from the client (elicitation, sampling, roots), including Multi Round-Trip Requests;
* **transports** (:mod:`mcp_sim.transports`, :mod:`mcp_sim.wire`): JSON-RPC 2.0 over memory, stdio and
  Streamable HTTP, on one virtual clock (:mod:`mcp_sim.sim`).

:mod:`mcp_sim.protocol` holds the revisions of MCP as data, the typed messages and the lifecycle.
"""

__version__ = "0.1.0"
