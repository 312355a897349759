"""Roles: who talks to whom (course chapter 01).

* :class:`~mcp_sim.roles.host.Host` — the AI application: owns one Client per Server, the policy, the
  user and the model;
* :class:`~mcp_sim.roles.client.Client` — one connection to exactly one server: handshake or
  discovery, correlation, capability checks, timeouts, caching, Multi Round-Trip Requests;
* :class:`~mcp_sim.roles.server.Server` — what a server offers (served by ``serve(server, stream)``);
* :mod:`~mcp_sim.roles.model` and :mod:`~mcp_sim.roles.user` — the scripted stand-ins for the LLM and
  the person, and the approvers.

Import from the submodules (``from mcp_sim.roles.host import Host``); this package imports nothing
eagerly, so loading one role never drags in the others.
"""
