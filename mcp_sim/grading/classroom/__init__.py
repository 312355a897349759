"""The course for a class: graded on JupyterHub, in an OS sandbox, with a gradebook.

* :mod:`~.release` — ``mcp-sim class release DIR``: the learners' copy (no solutions, no tests);
* :mod:`~.client` — ``mcp-sim submit``: a learner's file sent to the class's grading service;
* :mod:`~.service` — the JupyterHub-managed service: identity from the Hub, a worker pool, results;
* :mod:`~.grader` — one submission graded on the instructor's side with ``isolation="os"``;
* :mod:`~.store` — submissions and results in SQLite or PostgreSQL; the gradebook (CSV);
* :mod:`~.commands` — the ``mcp-sim class`` and ``mcp-sim submit`` commands.

``jupyterhub_config.py`` beside these modules is a working configuration for a class on one machine;
``README.md`` says how to run it there, and on Kubernetes with Zero to JupyterHub.
"""
