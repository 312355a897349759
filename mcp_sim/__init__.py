"""mcp-sim: an in-process simulator and course for the Model Context Protocol.

The course teaches MCP in three layers, and the package has the same three:

* **roles** — who talks (:mod:`mcp_sim.roles`): the Host, its Clients (one per Server), the Servers,
  and the scripted user and model around them;
* **capabilities** — what is offered (:mod:`mcp_sim.capabilities`): the lifecycle that declares it,
  tools, resources, prompts, completion, logging, subscriptions, tasks, and what a server needs from
  the client (elicitation, sampling, roots), including Multi Round-Trip Requests;
* **transports** — how messages travel (:mod:`mcp_sim.transports`, :mod:`mcp_sim.wire`): the JSON-RPC
  2.0 format, and the pipes that carry it — memory, stdio, Streamable HTTP — on one virtual clock
  (:mod:`mcp_sim.sim`), with authorization's bearer tokens checked at the HTTP door.

The official specification describes two layers. Its **data layer** — the JSON-RPC messages, the
lifecycle, and the primitives both sides offer — is the course's *capabilities* layer together with
the JSON-RPC format (:mod:`mcp_sim.wire`). Its **transport layer** — stdio and Streamable HTTP,
framing, and authorization — is the course's *transports* layer. *Roles* are not a layer of the
spec but its architecture (host, client, server): the course's lens on who sends each message. The
package uses these words the same way everywhere; :data:`mcp_sim.protocol.revisions.LAYERS` places
every method in one layer, and the trace tags every event with it.

Beside the layers: :mod:`mcp_sim.protocol` holds the revisions of MCP as data, the lifecycle table,
the error codes and the typed schema reference; :mod:`mcp_sim.security` the trust model;
:mod:`mcp_sim.trace` what was recorded and its views; :mod:`mcp_sim.scenarios` ready-made worlds.
"""

__version__ = "0.1.0"
