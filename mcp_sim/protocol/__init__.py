"""The protocol core, pure and I/O-free: what MCP *is*, apart from anyone running it (course chapters
02–03 and appendix A).

* :mod:`.revisions` — every released revision as data: its methods, notifications, capability fields,
  error codes, era, and every "does this revision have X" question. The simulator, the comparison
  tables and the trace captions all read it; nothing else compares version dates.
* :mod:`.lifecycle` — the legacy handshake as a state table, and the modern per-request ``_meta``.
* :mod:`.errors` — MCP's own error codes and :class:`~.errors.McpError` (JSON-RPC's codes are
  :mod:`mcp_sim.wire`'s).
* :mod:`.meta` — the ``_meta`` keys.
* :mod:`.types` and its topic modules (:mod:`.content`, :mod:`.messages`, :mod:`.primitives`,
  :mod:`.connection`, :mod:`.server_features`, :mod:`.client_features`, :mod:`.mrtr`,
  :mod:`.tasks`, :mod:`.ext_tasks`), with :mod:`.parsing` and :mod:`.envelopes` — **the schema
  reference**: one pydantic model per spec type, named as in the schema, that the course links to
  when it names a type (``CallToolRequest``, ``InputRequiredResult``).

The simulator itself does not build its messages through the typed models: the sessions build and
read plain JSON-RPC dicts, the shape on the wire, which a learner can print and compare with the
spec, and which stays fast. What keeps the two honest is the tests: every message the simulator
sends is validated against the official schema of its revision, and every model is checked against
that same schema and the spec's examples. Read the models as the appendix; read the sessions as the
protocol in motion.
"""
