"""The security labs: each a scripted attack with a ``vulnerable`` and a ``fixed`` configuration.

Importing this package registers every lab in :data:`LABS`; run one with :func:`run_lab`::

    from mcp_sim.scenarios.security import LABS, run_lab
    result = run_lab("separate-connections", config="vulnerable", seed=3)
"""

from mcp_sim.scenarios.security import (  # noqa: F401  (each module registers its labs)
    client_features,
    payments,
    shared_machine,
    tenants,
    tool_definitions,
    transports_labs,
)
from mcp_sim.security.lab import LABS, LabResult, run_lab

__all__ = ["LABS", "LabResult", "run_lab"]
