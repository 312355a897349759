"""One trace event: something that crossed a boundary, with everything needed to draw and explain it
(course chapter 00 onward).

The recorder (:mod:`mcp_sim.trace.recorder`) makes one :class:`TraceEvent` for every frame a
transport puts on the wire and for every line of talk between the user, the host and the model. The
views in :mod:`mcp_sim.trace` (sequence diagrams, tables, JSON Lines) read nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class TraceEvent:
    """One thing that crossed a boundary. Events are frozen and compare by value."""

    seq: int
    t_ms: float
    link: str
    """The connection the event travelled on (usually the server's name); ``"app"`` for host-side talk."""
    sender: str
    receiver: str
    kind: str
    """``request``, ``response``, ``error``, ``notification``, ``invalid`` (unreadable frame),
    ``app`` (user/host/model talk), ``log`` (stderr line), ``transport`` (connect, close, drop …)."""
    message: dict[str, Any] | None
    """The JSON-RPC message exactly as sent (``None`` for app/log/transport events)."""
    raw: str | None = None
    """The frame's text as it crossed the wire (a stdio line, an HTTP body, an SSE data field)."""
    revision: str | None = None
    transport: str = "memory"
    framing: dict[str, Any] = field(default_factory=dict)
    """Transport detail: ``{"stdio": {...}}`` or ``{"http": {"request": ..., "response": ...}}``."""
    method: str | None = None
    """The MCP method; for a response, the method of the request it answers."""
    request_id: Any = None
    layer: str = "transports"
    capability: str | None = None
    caption: str = ""
    marks: tuple[str, ...] = ()
    """Labels such as ``attack``, ``timeout``, ``dropped``, ``duplicate``, ``late`` for drawing."""
    text: str | None = None
    """For app/log/transport events: what was said or what happened."""

    def to_json(self) -> dict[str, Any]:
        """The JSON Lines form: ``t_ms``, ``from``, ``to``, ``revision``, ``message`` and the rest."""
        out: dict[str, Any] = {
            "seq": self.seq,
            "t_ms": self.t_ms,
            "link": self.link,
            "from": self.sender,
            "to": self.receiver,
            "kind": self.kind,
            "revision": self.revision,
            "transport": self.transport,
            "message": self.message,
        }
        for key, value in (("raw", self.raw), ("framing", self.framing or None), ("method", self.method),
                           ("request_id", self.request_id), ("layer", self.layer),
                           ("capability", self.capability), ("caption", self.caption or None),
                           ("marks", list(self.marks) or None), ("text", self.text)):
            if value is not None:
                out[key] = value
        return out

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> TraceEvent:
        return cls(
            seq=obj["seq"], t_ms=obj["t_ms"], link=obj["link"], sender=obj["from"], receiver=obj["to"],
            kind=obj["kind"], message=obj.get("message"), raw=obj.get("raw"), revision=obj.get("revision"),
            transport=obj.get("transport", "memory"), framing=obj.get("framing") or {},
            method=obj.get("method"), request_id=obj.get("request_id"), layer=obj.get("layer", "transports"),
            capability=obj.get("capability"), caption=obj.get("caption") or "",
            marks=tuple(obj.get("marks") or ()), text=obj.get("text"),
        )
