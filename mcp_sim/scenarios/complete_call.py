"""The complete call and the ways it goes wrong (course chapter 09, "the complete call").

One user request travels through all three layers: the **roles** (the user asks, the Host filters
tools by its policy and asks for approval, the model proposes a call), the **capabilities** (the
Client and Server open a session and exchange ``tools/list`` and ``tools/call``) and the
**transports** (the frames that carry those messages). Each layer makes decisions of its own, so
when the call fails, one of them decided it — and the trace shows the row where it did.

:func:`run_complete_call` plays the request with one setting changed per :data:`OUTCOMES` entry —
the user says no, the policy hides the tool, the tool fails, a frame is lost on the wire, the two
sides share no protocol version — and returns the run with the row that decided it
(:attr:`CallRun.decisive`). Nothing here is hand-written protocol: every message comes from the
simulator's Host, Client and Server.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Final, Literal

import mcp_sim.scenarios.issues as issues
from mcp_sim.protocol.errors import McpError
from mcp_sim.protocol.revisions import LATEST, REVISIONS
from mcp_sim.roles.host import Host, ModelApi
from mcp_sim.roles.model import ScriptedModel
from mcp_sim.roles.user import ScriptedUser
from mcp_sim.scenarios.stories import ISSUE_RULES
from mcp_sim.security.host_policy import ToolPolicy
from mcp_sim.sim.world import Simulation
from mcp_sim.transports.faults import Faults, LinkFaults

if TYPE_CHECKING:
    from mcp_sim.trace.event import TraceEvent
    from mcp_sim.trace.recorder import Recorder

Layer = Literal["roles", "capabilities", "transports"]


@dataclass(frozen=True)
class Outcome:
    """One way the request can end: what is changed to get there, and who decides it."""

    name: str
    request: str
    """What the user asks for."""
    change: str
    """The one setting changed from the successful run, in words."""
    layer: Layer | None
    """The layer whose decision ends the call (``None``: nothing went wrong)."""
    decider: str | None
    """The participant that decides it: ``user``, ``host``, ``server``, ``client`` or ``None``."""
    explanation: str


FILE_BUG = "File a bug for me: {title}"
TITLE = "the login page crashes on Safari"
DELETE_MISSING = "Please delete issue #{number}"

OUTCOMES: Final[Mapping[str, Outcome]] = MappingProxyType({o.name: o for o in (
    Outcome("answered", FILE_BUG, "nothing: the successful run", None, None,
            "Every layer said yes: the policy offered create_issue, the user approved, the wire carried both "
            "messages and the server ran the tool."),
    Outcome("user-denies", FILE_BUG, "the user answers the approval question with no", "roles", "user",
            "The Host asked before sending anything; the user said no, so no tools/call ever left the Host. "
            "The model is told the call was refused and says so."),
    Outcome("policy-hides", DELETE_MISSING, "the user asks for delete_issue, which the Host's ToolPolicy denies",
            "roles", "host",
            "The Host's policy filtered delete_issue out before the model saw the list: the model cannot "
            "propose a tool it was never offered, so it answers that it cannot help."),
    Outcome("tool-fails", DELETE_MISSING, "the policy allows delete_issue, and the issue does not exist",
            "capabilities", "server",
            "The server ran the tool and it failed: the answer is a result with isError: true, which the "
            "Host hands to the model as text it can read."),
    Outcome("timeout", FILE_BUG, "the frame carrying tools/call is lost on the wire", "transports", "client",
            "The transport lost the request; nothing came back, so the client's timeout decided the call "
            "failed (and told the server to cancel it). The Host reports the failure to the model."),
    Outcome("version-mismatch", FILE_BUG, "the server speaks only the other era's protocol versions",
            "capabilities", "server",
            "The lifecycle failed: the client and server share no protocol version, the server refused the "
            "opening request, and the Host never got a tool list from it."),
)})
"""Every outcome :func:`run_complete_call` can play, by name, in course order."""

CALL_TIMEOUT: Final = 5.0
"""The Host's per-request timeout in these runs (simulated seconds: a timeout costs no real time)."""


@dataclass(frozen=True)
class CallRun:
    """One complete-call run: its outcome, its revision, the trace and the answer the user got."""

    outcome: Outcome
    revision: str
    recorder: Recorder
    answer: str

    @property
    def events(self) -> list[TraceEvent]:
        return list(self.recorder)

    @property
    def decisive(self) -> TraceEvent | None:
        """The trace row where the outcome was decided (``None`` for a run where nothing went wrong)."""
        return decisive_event(self.events, self.outcome.name)


def decisive_event(events: list[TraceEvent], outcome: str) -> TraceEvent | None:
    """The row that decides ``outcome`` in a complete-call trace:

    * ``user-denies`` — the user's ``deny`` to the Host;
    * ``policy-hides`` — the Host's first message to the model (the filtered tool list);
    * ``tool-fails`` — the server's ``tools/call`` result with ``isError: true``;
    * ``timeout`` — the ``tools/call`` frame the wire marked ``dropped``;
    * ``version-mismatch`` — the server's error answer to the opening request."""
    def first(pred: Callable[[TraceEvent], bool]) -> TraceEvent | None:
        return next((e for e in events if pred(e)), None)

    if outcome == "user-denies":
        return first(lambda e: e.kind == "app" and e.sender == "user" and e.text == "deny")
    if outcome == "policy-hides":
        return first(lambda e: e.kind == "app" and e.sender == "host" and e.receiver == "model")
    if outcome == "tool-fails":
        return first(lambda e: e.kind == "response" and e.method == "tools/call"
                     and (e.message or {}).get("result", {}).get("isError") is True)
    if outcome == "timeout":
        return first(lambda e: e.method == "tools/call" and "dropped" in e.marks)
    if outcome == "version-mismatch":
        return first(lambda e: e.kind == "error" and e.method in ("initialize", "server/discover"))
    return None


def _tools_call_frame(revision: str) -> int:
    """Which client→server frame carries ``tools/call``: after initialize, initialized and tools/list
    (legacy), or after server/discover and tools/list (modern)."""
    return 4 if REVISIONS[revision].era == "legacy" else 3


def run_complete_call(outcome: str = "answered", *, revision: str = LATEST, seed: int = 0, number: int = 99,
                      title: str = TITLE, server: str = "issues", model_api: ModelApi = "openai") -> CallRun:
    """Play the complete call with the setting :data:`OUTCOMES` ``[outcome]`` names, in ``revision``.

    ``number`` is the issue the user asks to delete in the ``policy-hides`` and ``tool-fails`` runs
    (the tracker holds issues 1 and 2, so 99 does not exist); ``title`` is the bug the user files in
    the others. ``server`` is the name the Host gives the issue tracker (the prefix of the names the
    model sees), ``model_api`` the format the Host speaks to its model (``openai`` or ``anthropic``)."""
    if outcome not in OUTCOMES:
        raise KeyError(f"unknown outcome {outcome!r}; known: {', '.join(OUTCOMES)}")
    spec = OUTCOMES[outcome]
    sim = Simulation(seed)
    answer: list[str] = []
    request = spec.request.format(number=number, title=title)

    async def main() -> None:
        user = ScriptedUser(approvals=[outcome != "user-denies"])
        policy = ToolPolicy() if outcome == "tool-fails" else ToolPolicy(deny=("*__delete_*",))
        tracker = issues.build()
        if outcome == "version-mismatch":
            other = "2025-11-25" if REVISIONS[revision].era == "modern" else "2026-07-28"
            tracker.supported_versions = (other,)
        faults = (LinkFaults(to_server=Faults(drop_at=(_tools_call_frame(revision),)))
                  if outcome == "timeout" else None)
        async with Host(model=ScriptedModel(ISSUE_RULES), user=user, tool_policy=policy,
                        timeout=CALL_TIMEOUT, model_api=model_api) as host:
            try:
                await host.add_server(server, tracker, revision=revision, faults=faults)
            except McpError:
                pass  # the trace holds the refused opening; the Host carries on without this server
            await host.list_tools()
            answer.append(await host.chat(request))

    sim.run(main)
    return CallRun(spec, revision, sim.recorder, answer[0])


__all__ = ["CALL_TIMEOUT", "OUTCOMES", "CallRun", "Outcome", "decisive_event", "run_complete_call"]
