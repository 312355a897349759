"""The model of trust (course chapter 5, and the spec's Security Best Practices).

One module per boundary, so a learner finds each idea in one place:

* :mod:`.identity` — users and tenants: *who* a request acts for;
* :mod:`.tokens` — access tokens bound to an audience, with scopes (audience validation);
* :mod:`.authorization` — the Server's per-operation checks: identity, scope, tenant, ownership;
* :mod:`.host_policy` — the Host's decisions, the one model the Host applies and the labs attack:
  exposure, review of every string of a definition, confirmation by what a tool does (annotations
  are hints; the Host's own risk list), the sampling budget per server;
* :mod:`.sandbox` — a sandbox per server process: files, environment, network egress;
* :mod:`.request_state` — sealed ``requestState`` and idempotent side effects;
* :mod:`.lab` — the security lab's machinery: a lab is facts plus a scripted attack whose
  ``vulnerable`` and ``fixed`` configurations differ only in one declared defence value, built on
  the simulator's own Host, Client and Server.
  The labs themselves, and ``run_lab``, are in :mod:`mcp_sim.scenarios.security`: this package
  models trust and knows no scenario.

The Host and the Server enforce these boundaries through their own options: ``Host(tool_review=…)``
(review pinned by :func:`.host_policy.fingerprint`), ``ApprovalPolicy(high_risk_servers=…)``,
``Host(sampling_budget=SamplingBudget(…))``, ``Server(state_codec=SealedStateCodec(…))``, and an
:class:`.request_state.IdempotencyLedger` keyed by the business operation.
"""

from __future__ import annotations

from mcp_sim.security.authorization import AccessDenied, AuditLog, authorize
from mcp_sim.security.host_policy import (
    ApprovalPolicy,
    SamplingBudget,
    ToolPolicy,
    careful_reviewer,
    fingerprint,
    hidden_instructions,
    review_definition,
)
from mcp_sim.security.identity import Directory, Tenant, User
from mcp_sim.security.request_state import IdempotencyLedger, tamper
from mcp_sim.security.sandbox import UNRESTRICTED, Machine, SandboxPolicy, SandboxViolation
from mcp_sim.security.tokens import AccessToken, AuthorizationServer, TokenRejected

__all__ = [
    "UNRESTRICTED",
    "AccessDenied",
    "AccessToken",
    "ApprovalPolicy",
    "AuditLog",
    "AuthorizationServer",
    "Directory",
    "IdempotencyLedger",
    "Machine",
    "SamplingBudget",
    "SandboxPolicy",
    "SandboxViolation",
    "Tenant",
    "TokenRejected",
    "ToolPolicy",
    "User",
    "authorize",
    "careful_reviewer",
    "fingerprint",
    "hidden_instructions",
    "review_definition",
    "tamper",
]

