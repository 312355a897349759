"""The security labs: each a scripted attack with a ``vulnerable`` and a ``fixed`` configuration.

Each module here writes a few labs (:class:`~mcp_sim.security.lab.Lab`: facts plus a story) and
lists them in its own ``LABS``; this file assembles the one table of every lab, :data:`LABS`, and
runs one with :func:`run_lab`. The lab machinery (:mod:`mcp_sim.security.lab`) knows no lab: the
table is built here, in one place, from the modules that write them::

    from mcp_sim.scenarios.security import LABS, run_lab
    result = run_lab("separate-connections", config="vulnerable", seed=3)
    run_lab("tool-poisoning", "fixed", seed=3, variant="parameter-description")  # LABS[name].variants

In every lab the two configurations run the same story with the same model, users, servers and attack;
only the declared defence (``LABS[name].defences``) differs.  (``tool-shadowing`` now shows one server's
text steering another server's tool; the name clash it used to show is ``name-collision``.)
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

import mcp_sim.scenarios.security.auth_url_lab as auth_url_lab
import mcp_sim.scenarios.security.authorization_labs as authorization_labs
import mcp_sim.scenarios.security.behaviour as behaviour
import mcp_sim.scenarios.security.cimd_labs as cimd_labs
import mcp_sim.scenarios.security.cimd_ssrf_lab as cimd_ssrf_lab
import mcp_sim.scenarios.security.client_features as client_features
import mcp_sim.scenarios.security.injection as injection
import mcp_sim.scenarios.security.local_install as local_install
import mcp_sim.scenarios.security.mixup_lab as mixup_lab
import mcp_sim.scenarios.security.payments as payments
import mcp_sim.scenarios.security.phishing as phishing
import mcp_sim.scenarios.security.sampling_labs as sampling_labs
import mcp_sim.scenarios.security.scope_lab as scope_lab
import mcp_sim.scenarios.security.sessions as sessions
import mcp_sim.scenarios.security.shared_machine as shared_machine
import mcp_sim.scenarios.security.ssrf_labs as ssrf_labs
import mcp_sim.scenarios.security.tenants as tenants
import mcp_sim.scenarios.security.tool_definitions as tool_definitions
import mcp_sim.scenarios.security.transports_labs as transports_labs
import mcp_sim.scenarios.security.url_elicitation as url_elicitation
from mcp_sim.security.lab import Config, Lab, LabResult


def _table(*labs: Lab) -> Mapping[str, Lab]:
    table: dict[str, Lab] = {}
    for lab in labs:
        if lab.name in table:
            raise ValueError(f"two labs are named {lab.name!r}")
        table[lab.name] = lab
    return MappingProxyType(table)


LABS: Final = _table(*client_features.LABS, *payments.LABS, *shared_machine.LABS, *tenants.LABS,
                     *tool_definitions.LABS, *transports_labs.LABS, *local_install.LABS,
                     *phishing.LABS, *injection.LABS, *ssrf_labs.LABS,
                     *authorization_labs.LABS, *mixup_lab.LABS, *sessions.LABS,
                     *sampling_labs.LABS, *behaviour.LABS, *cimd_labs.LABS, *cimd_ssrf_lab.LABS,
                     *auth_url_lab.LABS, *scope_lab.LABS,
                     *url_elicitation.LABS)
"""Every lab by name (read-only)."""


def run_lab(name: str, config: Config = "vulnerable", seed: int = 0, variant: str = "main") -> LabResult:
    """Run lab ``name`` in ``config`` (``"vulnerable"`` or ``"fixed"``) with ``seed``; ``variant`` picks
    another attack on the same lesson (``LABS[name].variants``)."""
    try:
        lab = LABS[name]
    except KeyError:
        raise KeyError(f"no lab named {name!r}; the labs are: {', '.join(sorted(LABS))}") from None
    return lab.run(config, seed, variant)


__all__ = ["LABS", "LabResult", "run_lab"]
