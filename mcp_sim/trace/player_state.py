"""What the trace player knows, without any widget (course chapters 01 onward).

:class:`PlayerState` is a plain Python object: which events are visible under the filters, where the
learner stands, how the current message reads as JSON, as stdio bytes or as an HTTP exchange, and how
to **fork** a run (drop one message, change the revision, transport or seed) and diff the two stories.
Tests drive it directly; :class:`~mcp_sim.widgets.player.TracePlayer` only binds ipywidgets controls
to it.

A fork always has an outcome to show. Dropping ``initialize`` makes the client give up with a
``RequestTimeout`` that nothing in the world catches: that ending *is* the lesson, so the fork keeps
it (:attr:`Fork.error`) with the trace recorded up to that moment, instead of raising. A step that is
not a message on a link (the user, the host or the model acting) cannot be dropped, and
:func:`fork_advice` says what can be changed instead.
"""
from __future__ import annotations

import html
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mcp_sim.trace.captions import label, who
from mcp_sim.trace.event import TraceEvent
from mcp_sim.trace.events import Trace, TraceDiff, format_ms
from mcp_sim.trace.recorder import Recorder
from mcp_sim.trace.sequence import SequenceDiagram

logger = logging.getLogger(__name__)

VIEWS = ("json", "stdio", "http")
"""How the current message can be shown: its JSON, its stdio bytes, its HTTP exchange."""

FILTERS = ("link", "layer", "method")

_UNSET: Any = object()

Runner = Callable[..., Any]
"""Re-runs a world: called with keyword options (``revision``, ``transport``, ``seed``, ``faults`` …)
and returns a ``Recorder`` or a ``Trace``. ``functools.partial(run_scenario, "weather")`` is one."""


# --- one change, for a fork ------------------------------------------------------------------------

@dataclass(frozen=True)
class FrameRef:
    """A message identified the way the fault injector counts: the ``number``-th frame sent in one
    ``direction`` (``to_server`` or ``to_client``) of ``link``. Sequence numbers would not do: they
    shift as soon as anything changes before the message."""

    link: str
    direction: str
    number: int

    @classmethod
    def of(cls, trace: Trace, event: TraceEvent) -> FrameRef:
        direction = "to_server" if event.receiver.startswith("server/") else "to_client"
        number = 0
        for e in trace:
            if e.link == event.link and e.message is not None and e.kind != "app" and "duplicate" not in e.marks \
                    and e.sender == event.sender and e.receiver == event.receiver:
                number += 1
            if e is event:
                break
        return cls(event.link, direction, number)


@dataclass(frozen=True)
class Change:
    """The one thing a fork changes. Build it with a class method:

    * ``Change.drop(trace, event)`` — that message is lost on the wire (its link gets
      ``faults={link: LinkFaults(to_server=Faults(drop_at=(n,)))}``);
    * ``Change.revision("2025-06-18")``, ``Change.transport("stdio")``, ``Change.seed(7)``;
    * ``Change.option("name", value)`` — any other keyword the runner accepts.
    """

    kind: str
    name: str
    value: Any
    frame: FrameRef | None = None

    @classmethod
    def drop(cls, trace: Trace, event: TraceEvent) -> Change:
        """Lose ``event`` on the wire; a :class:`ValueError` saying what to change instead when the
        step is not a message on a link (see :func:`fork_advice`)."""
        advice = fork_advice(trace, event)
        if advice is not None:
            raise ValueError(advice)
        return cls("drop", "faults", label(event), FrameRef.of(trace, event))

    @classmethod
    def revision(cls, version: str) -> Change:
        return cls("option", "revision", version)

    @classmethod
    def transport(cls, name: str) -> Change:
        return cls("option", "transport", name)

    @classmethod
    def seed(cls, seed: int) -> Change:
        return cls("option", "seed", int(seed))

    @classmethod
    def option(cls, name: str, value: Any) -> Change:
        return cls("option", name, value)

    def apply(self, options: dict[str, Any]) -> dict[str, Any]:
        """The runner's keyword options with this change made."""
        out = dict(options)
        if self.kind == "drop":
            assert self.frame is not None
            from mcp_sim.transports.faults import Faults, LinkFaults

            faults = dict(out.get("faults") or {})
            one = Faults(drop_at=(self.frame.number,))
            faults[self.frame.link] = LinkFaults(**{self.frame.direction: one})
            out["faults"] = faults
        else:
            out[self.name] = self.value
        return out

    def describe(self) -> str:
        if self.kind == "drop":
            assert self.frame is not None
            side = "server" if self.frame.direction == "to_server" else "client"
            return (f"drop {self.value} (frame {self.frame.number} to the {side} on link "
                    f"{self.frame.link!r})")
        return f"{self.name} = {self.value!r}"


def _is_frame(e: TraceEvent) -> bool:
    """A JSON-RPC message that crossed a link: the only kind of step the fault injector can lose."""
    return e.message is not None and e.kind not in ("app", "log", "transport", "timeout") \
        and "duplicate" not in e.marks and e.sender != e.receiver


def fork_advice(trace: Trace, event: TraceEvent) -> str | None:
    """``None`` when ``event`` can be dropped; otherwise, in words, why not and what to change
    instead. Revision, transport and seed forks work from any step: they re-run the whole world."""
    if _is_frame(event):
        if "dropped" in event.marks:
            return (f"{label(event)} is already lost in this run: dropping it again changes nothing. "
                    "Change the revision, transport or seed instead.")
        return None
    events = list(trace)
    at = next((i for i, e in enumerate(events) if e is event), len(events))
    after = next((e for e in events[at + 1:] if _is_frame(e)), None)
    instead = (f"drop the next MCP message, event #{after.seq} ({label(after)}), or change" if after
               else "change")
    anywhere = f"To change what follows, {instead} the revision, transport or seed: those forks work from any step."
    if event.kind == "app":
        actor = ("The model here is a script, so its choice is fixed by the scenario, not carried on a link. "
                 if "model" in (event.sender, event.receiver) else "")
        return (f"This step is {who(event.sender)} talking to {who(event.receiver)}: not an MCP message, it "
                f"crosses no link between a client and a server, so there is no wire to lose it on. "
                f"{actor}{anywhere}")
    if event.kind == "log":
        return (f"This step is a line {who(event.sender)} wrote to its log (stderr), not a message: no peer "
                f"reads it as protocol, so losing it changes nothing. {anywhere}")
    if event.kind == "timeout":
        return (f"This step is {who(event.sender)}'s timer running out on the virtual clock: it follows from "
                f"an answer that did not come, it is not a message. {anywhere}")
    if "duplicate" in event.marks:
        return ("This step is a second copy of a message the transport delivered twice; drop the first copy "
                "instead, or change the revision, transport or seed.")
    return f"This step ({event.kind}: {label(event)}) is not a JSON-RPC message on a link. {anywhere}"


def recorded_before(exc: BaseException) -> Trace | None:
    """What a world recorded before ``exc`` ended it, or ``None``.

    A runner returns its recorder only when the world finishes. When the world raises instead (a
    dropped ``initialize`` ends in an uncaught ``RequestTimeout``), the recorder is still held by the
    frames the exception passed through — ``run_scenario``'s ``sim``, ``Simulation.run``'s ``self`` —
    so we look for it there, outermost first."""
    tb = exc.__traceback__
    while tb is not None:
        for value in tb.tb_frame.f_locals.values():
            recorder = value if isinstance(value, Recorder) else getattr(value, "recorder", None)
            if isinstance(recorder, Recorder):
                return Trace.of(recorder)
        tb = tb.tb_next
    return None


class ForkUnsupported(RuntimeError):
    """The runner cannot make this change (it does not accept the option)."""


@dataclass
class Fork:
    """Two runs of the same world that differ in one :class:`Change`, and their difference.

    ``error`` is set when the re-run raised instead of finishing (``"RequestTimeout: …"``); then
    ``forked`` holds what the world recorded until that moment (empty if it never started)."""

    original: Trace
    forked: Trace
    change: Change
    error: str | None = None
    diff: TraceDiff = field(init=False)

    def __post_init__(self) -> None:
        self.diff = self.original.diff(self.forked)

    def outcome(self) -> str:
        """How the re-run ended, in one or two sentences: an error nothing caught, a timeout, an error
        response, or a normal finish."""
        if self.error is not None:
            if not len(self.forked):
                return f"The re-run did not start: {self.error}."
            return (f"The re-run stopped early with an error nothing in the world caught — {self.error}. "
                    f"Its trace ends there, after {len(self.forked)} events (the original had {len(self.original)}).")
        before = {label(e) for e in self.original if e.kind in ("timeout", "error")}
        new = [e for e in self.forked if e.kind in ("timeout", "error") and label(e) not in before]
        timeout = next((e for e in new if e.kind == "timeout"), None)
        error = next((e for e in new if e.kind == "error"), None)
        words = f"{len(self.forked)} events, the original {len(self.original)}"
        if timeout is not None:
            return f"The re-run ended in a timeout: {timeout.caption or label(timeout)} ({words})."
        if error is not None:
            return f"The re-run got an error response: {error.caption or label(error)} ({words})."
        last = self.forked[len(self.forked) - 1] if len(self.forked) else None
        end = f" It ends with: {last.caption or label(last)}" if last is not None else ""
        return f"The re-run finished ({words}).{end}"

    def summary(self) -> str:
        return f"Fork: {self.change.describe()}. {self.diff.summary()}"

    def _repr_html_(self) -> str:
        first = self.diff.first_difference
        left_hl = first.left.seq if first and first.left else None
        right_hl = first.right.seq if first and first.right else None
        left = SequenceDiagram(self.original, highlight=left_hl, title="Original run")
        right_html = SequenceDiagram(self.forked, highlight=right_hl, title=f"Fork: {self.change.describe()}") \
            ._repr_html_() if len(self.forked) else "<p>(the re-run recorded nothing)</p>"
        tone = "alert" if self.error is not None else "status"
        # Side by side where the output is wide enough for two readable diagrams; one above the other
        # (the original first) in a notebook's usual 900 pixels.
        cell = "flex:1 1 600px;min-width:0"
        return (f"<div class='mcp-sim-fork'><p role='{tone}'><b>Outcome:</b> {html.escape(self.outcome())}</p>"
                f"<p>{html.escape(self.summary())}</p>"
                "<div style='display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start'>"
                f"<div style='{cell}'>{left._repr_html_()}</div><div style='{cell}'>{right_html}</div></div>"
                "<details><summary>Step-by-step difference</summary><div style='overflow-wrap:anywhere'>"
                f"{self.diff._repr_html_()}</div></details></div>")

    def __str__(self) -> str:
        return (f"{self.outcome()}\n" if self.error else "") + self.diff.to_text()


# --- the player's state ----------------------------------------------------------------------------

class PlayerState:
    """Where the learner is in a trace, what is filtered, and how the current message is shown.

    ``index`` counts steps of the *visible* (filtered) trace from 0. Stepping never leaves the
    trace: it stops at the first and last steps."""

    def __init__(self, trace: Any, *, runner: Runner | None = None, options: dict[str, Any] | None = None) -> None:
        self.trace = Trace.of(trace)
        self.runner = runner
        self.options: dict[str, Any] = dict(options or {})
        """The keyword options that produced ``trace`` (a fork changes one of them)."""
        self.filters: dict[str, str | None] = dict.fromkeys(FILTERS)
        self.index = 0
        self.view = "json"
        self._visible = self.trace
        self._diagrams: dict[tuple[str | None, ...], SequenceDiagram] = {}
        self.last_fork: Fork | None = None

    # -- what is visible ---------------------------------------------------------------------
    @property
    def visible(self) -> Trace:
        """The trace after the filters: what the diagram, the table and the slider show."""
        return self._visible

    def choices(self) -> dict[str, list[str]]:
        """The values each filter can take, from the whole trace."""
        return {"link": self.trace.links(), "layer": self.trace.layers(), "method": self.trace.methods()}

    def set_filter(self, *, link: str | None = _UNSET, layer: str | None = _UNSET,
                   method: str | None = _UNSET) -> None:
        """Change filters (``None`` = all). The current step stays if it is still visible, otherwise
        the player moves to the next visible step after it."""
        anchor = self.current.seq if self.current else 0
        for name, value in (("link", link), ("layer", layer), ("method", method)):
            if value is not _UNSET:
                self.filters[name] = value
        self._visible = self.trace.filter(**self.filters)  # type: ignore[arg-type]
        seqs = [e.seq for e in self._visible]
        after = [i for i, s in enumerate(seqs) if s >= anchor]
        self.index = after[0] if after else max(0, len(seqs) - 1)

    # -- moving ------------------------------------------------------------------------------
    @property
    def current(self) -> TraceEvent | None:
        return self._visible[self.index] if len(self._visible) else None

    @property
    def at_start(self) -> bool:
        return self.index == 0

    @property
    def at_end(self) -> bool:
        return self.index >= len(self._visible) - 1

    def jump(self, index: int) -> TraceEvent | None:
        """Go to step ``index`` of the visible trace (clamped to the ends)."""
        self.index = min(max(0, int(index)), max(0, len(self._visible) - 1))
        return self.current

    def step(self, delta: int = 1) -> TraceEvent | None:
        return self.jump(self.index + delta)

    def forward(self) -> TraceEvent | None:
        return self.step(1)

    def back(self) -> TraceEvent | None:
        return self.step(-1)

    def first(self) -> TraceEvent | None:
        return self.jump(0)

    def last(self) -> TraceEvent | None:
        return self.jump(len(self._visible) - 1)

    def jump_to_seq(self, seq: int) -> TraceEvent | None:
        """Go to the event numbered ``seq`` (clearing filters if it is hidden)."""
        seqs = [e.seq for e in self._visible]
        if seq not in seqs:
            self.set_filter(link=None, layer=None, method=None)
            seqs = [e.seq for e in self._visible]
        return self.jump(seqs.index(seq)) if seq in seqs else self.current

    # -- what is shown -----------------------------------------------------------------------
    def position(self) -> str:
        e = self.current
        if e is None:
            return "no events match the filters"
        return f"step {self.index + 1} of {len(self._visible)} · event #{e.seq} · {format_ms(e.t_ms)}"

    @property
    def caption(self) -> str:
        e = self.current
        return "" if e is None else (e.caption or label(e))

    def detail(self, view: str | None = None) -> str:
        """The current message as text, in ``view`` (default: the player's view)."""
        view = view or self.view
        e = self.current
        if e is None:
            return ""
        if view == "stdio":
            return stdio_text(e)
        if view == "http":
            return http_text(e)
        return json_text(e)

    def diagram(self) -> SequenceDiagram:
        """The sequence diagram of the visible trace (drawn once per filter, not per step)."""
        key = tuple(self.filters[f] for f in FILTERS)
        if key not in self._diagrams:
            self._diagrams[key] = SequenceDiagram(self._visible)
        return self._diagrams[key]

    def highlight_css(self, scope: str) -> str:
        """A CSS rule that highlights the current row of the diagram inside the element with class
        ``scope``. Stepping changes only this rule, so a step costs a few bytes, not a new SVG."""
        e = self.current
        if e is None:
            return ""
        return (f"<style>.{scope} g.mcpsim-row[data-seq='{e.seq}'] > rect.mcpsim-rowbg "
                "{ fill: #fff1a8; stroke: #333333; stroke-width: 2px; }</style>")

    # -- forking -----------------------------------------------------------------------------
    def change_drop_current(self) -> Change:
        e = self.current
        if e is None:
            raise ValueError("no step is selected")
        return Change.drop(self.trace, e)

    def drop_advice(self) -> str | None:
        """Why the current step cannot be dropped and what to change instead (``None``: it can)."""
        e = self.current
        return "No step is selected." if e is None else fork_advice(self.trace, e)

    def fork(self, change: Change, runner: Runner | None = None) -> Fork:
        """Re-run the world with ``change`` and compare.

        A re-run that raises is an outcome too, not a failure of the player: the fork records the
        error and the trace up to it. Only a change the runner cannot take raises
        :class:`ForkUnsupported`."""
        runner = runner or self.runner
        if runner is None:
            raise ForkUnsupported("this player has no runner: give TracePlayer(trace, runner=…) a function "
                                  "that re-runs the scenario")
        options = change.apply(self.options)
        error: str | None = None
        try:
            forked = Trace.of(runner(**options))
        except TypeError as exc:
            if "unexpected keyword" in str(exc):
                raise ForkUnsupported(f"the runner cannot apply {change.describe()}: {exc}") from exc
            forked, error = recorded_before(exc) or Trace(), _error_words(exc)
        except Exception as exc:  # the world's own ending: shown beside the original, never raised
            logger.debug("fork re-run ended in %r", exc)
            forked, error = recorded_before(exc) or Trace(), _error_words(exc)
        forked.title = f"fork: {change.describe()}"
        self.last_fork = Fork(self.trace, forked, change, error)
        return self.last_fork


def _error_words(exc: BaseException) -> str:
    """``RequestTimeout: initialize (id 1) …``; an exception group names what it holds."""
    inner = getattr(exc, "exceptions", None)
    if inner:
        return "; ".join(_error_words(e) for e in inner)
    return f"{type(exc).__name__}: {exc}"


# --- the three views of a message ------------------------------------------------------------------

def json_text(e: TraceEvent) -> str:
    """The message as indented JSON (the text for app, log and transport events)."""
    head = f"#{e.seq}  {e.sender} → {e.receiver}  ({e.kind}, {format_ms(e.t_ms)})"
    if e.message is not None:
        return head + "\n" + json.dumps(e.message, indent=2, ensure_ascii=False, default=str)
    return head + "\n" + (e.text or "")


def stdio_text(e: TraceEvent) -> str:
    """The bytes a stdio pipe carried for this message: one UTF-8 line ending in ``\\n``."""
    stdio = (e.framing or {}).get("stdio") or {}
    if e.kind == "log":
        line = stdio.get("line") or f"{e.text}\n"
        return f"{who(e.sender)} wrote to stderr ({len(line.encode())} bytes):\n{line.encode()!r}"
    if e.kind == "app":
        return "This step is talk between the user, the host and the model: it is not MCP and crossed no pipe."
    if e.raw is None and e.message is None:
        return f"{e.kind} event: no message bytes crossed a pipe ({e.text or label(e)})"
    line = stdio.get("line") or ((e.raw if e.raw is not None else json.dumps(e.message)) + "\n")
    stream = stdio.get("stream") or ("stdin" if e.receiver.startswith("server/") else "stdout")
    data = line.encode("utf-8")
    owner = who(e.receiver) if stream == "stdin" else who(e.sender)
    intro = (f"{stream} of {owner}, {len(data)} bytes" if e.transport == "stdio" else
             f"this message travelled over {e.transport}; on stdio it would be these {len(data)} bytes "
             f"on {stream} of {owner}")
    return f"{intro}:\n{data!r}\nOne JSON text per line: the newline at the end is the frame boundary."


def _http_part(part: Any) -> list[str]:
    if not isinstance(part, dict):
        return [str(part)]
    if "method" in part:
        first = f"{part['method']} {part.get('path') or part.get('url') or '/mcp'} HTTP/1.1"
    elif "status" in part:
        first = f"HTTP/1.1 {part['status']} {part.get('reason', '')}".rstrip()
    else:
        first = ""
    lines = [first] if first else []
    headers = part.get("headers") or {}
    pairs = headers.items() if isinstance(headers, dict) else headers
    lines += [f"{k}: {v}" for k, v in pairs]
    body = part.get("body")
    if body is not None:
        lines.append("")
        lines.append(body if isinstance(body, str) else json.dumps(body, ensure_ascii=False))
    extra = {k: v for k, v in part.items() if k not in ("method", "path", "url", "status", "reason", "headers",
                                                        "body")}
    lines += [f"({k}: {json.dumps(v, ensure_ascii=False, default=str)})" for k, v in extra.items()]
    return lines


def http_text(e: TraceEvent) -> str:
    """The HTTP exchange that carried this message (request, response, SSE event), as recorded."""
    framing = e.framing or {}
    http = framing.get("http")
    # The simulator records the SSE event beside the exchange; the real-wire bridge inside it.
    sse = framing.get("sse") or (http.get("sse") if isinstance(http, dict) else None)
    if e.kind == "app":
        return "This step is talk between the user, the host and the model: it is not MCP and crossed no wire."
    if not http and not sse:
        return (f"This step did not travel over HTTP (transport: {e.transport}). Run the scenario with "
                "transport='http' to see the POST, the headers and the SSE events that carry it.")
    out: list[str] = []
    if isinstance(http, dict):
        # The part that carried this message gets it as its body (unless an SSE event carried it).
        carrier = None if sse else ("request" if e.sender.startswith("client/") else "response")
        # An OAuth exchange (chapter 11) is recorded twice, request then answer, its (redacted) body
        # beside the head: the event carries whichever part it records.
        body = e.raw
        if "oauth" in e.marks:
            carrier, body = ("response" if "response" in http else "request"), framing.get("body")
        for key in ("request", "response"):
            if key in http:
                part = http[key]
                if key == carrier and isinstance(part, dict) and "body" not in part and body is not None:
                    part = {**part, "body": body}
                what = "  (carries this message)" if key == carrier else ""
                out += [f"--- {key}{what} ---", *_http_part(part)]
        rest = {k: v for k, v in http.items() if k not in ("request", "response", "sse")}
        if rest:
            out += ["--- details ---", *_http_part(rest)]
    elif http:
        out.append(str(http))
    if sse:
        fields = sse if isinstance(sse, dict) else {"event": sse}
        out.append("--- SSE event ---")
        out += [f"{k}: {v}" for k, v in fields.items()]
        if e.raw is not None:
            out.append(f"data: {e.raw}")
    return "\n".join(out)
