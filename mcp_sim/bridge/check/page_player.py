"""The course's trace player on the ``--html`` page of ``mcp-sim check``, exported step by step.

The player of the notebooks is an ipywidgets view of :class:`~mcp_sim.trace.player_state.PlayerState`,
which needs a kernel. The page has none, so here the same state object is walked through every step
once and what the player shows at each step is written down as plain HTML: the position line
("step 3 of 80 · event #12 · …"), the caption, the message as JSON and as the stdio bytes (or the HTTP
exchange), and buttons to the first, previous, next and last step. One step is one ``<section>``
with the id ``p<seq>``; the address ``page.html#p12`` opens the player at event 12, which is how each
finding links to its step.

What the player changes as it steps is done by CSS alone: ``:target`` shows the step the address
names (the first step when it names none) and the player's own highlight rule
(:meth:`PlayerState.highlight_css`) marks that step's row in the diagram below it. A few lines of
inline script are a convenience on top: a click on a row of the diagram goes to its step, and the
diagram scrolls to the marked row. Nothing is fetched: the page works offline, in any browser.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from mcp_sim.trace.event import TraceEvent
from mcp_sim.trace.events import Trace
from mcp_sim.trace.player_state import PlayerState

DETAIL_CHARS = 4000
"""How much of one message a step shows (an oversized frame of the nemesis is megabytes long)."""

PLAYER_CSS = """
.mcp-sim-player { border: 1px solid #bbb; border-radius: 4px; padding: 0.5rem; margin-bottom: 1.5rem; max-width: 100%; }
.mcp-sim-step { display: none; scroll-margin-top: 0.5rem; }
.mcp-sim-step:target, .mcp-sim-player:not(:has(.mcp-sim-step:target)) .mcp-sim-first { display: block; }
.mcp-sim-step nav a, .mcp-sim-step nav span { display: inline-block; border: 1px solid #999; border-radius: 3px;
  padding: 0.1rem 0.6rem; margin: 0 0.3rem 0.3rem 0; text-decoration: none; color: #111; background: #f4f4f4; }
.mcp-sim-step nav span { color: #999; background: #fafafa; border-color: #ddd; }
.mcp-sim-player-diagram { overflow: auto; max-height: 520px; border-top: 1px solid #ddd; }
.mcp-sim-player-diagram g.mcpsim-row { cursor: pointer; }
"""

PLAYER_SCRIPT = """
(function () {
  function show() {
    var step = document.getElementById(location.hash.slice(1));
    if (!step || !step.classList.contains('mcp-sim-step')) return;
    var player = step.closest('.mcp-sim-player');
    var box = player.querySelector('.mcp-sim-player-diagram');
    var row = box.querySelector('g.mcpsim-row[data-seq="' + step.dataset.seq + '"]');
    if (!row) return;
    var r = row.getBoundingClientRect(), b = box.getBoundingClientRect();
    box.scrollTop += r.top - b.top - b.height / 2;
  }
  document.addEventListener('click', function (event) {
    var row = event.target.closest && event.target.closest('.mcp-sim-player-diagram g.mcpsim-row');
    if (row) location.hash = 'p' + row.getAttribute('data-seq');
  });
  window.addEventListener('hashchange', show);
  window.addEventListener('load', show);
})();
"""


def step_id(seq: int) -> str:
    """The id of the player's step showing event ``seq`` (a ``seq`` is unique in a whole check)."""
    return f"p{seq}"


def _cut(text: str) -> str:
    if len(text) <= DETAIL_CHARS:
        return text
    return f"{text[:DETAIL_CHARS]}\n… ({len(text) - DETAIL_CHARS} more characters)"


def _rule(css: str) -> str:
    """The CSS inside the ``<style>`` element :meth:`PlayerState.highlight_css` returns."""
    return css.removeprefix("<style>").removesuffix("</style>")


def _button(label: str, target: int | None, here: int) -> str:
    if target is None or target == here:
        return f"<span aria-disabled='true'>{label}</span>"
    return f"<a href='#{step_id(target)}'>{label}</a>"


def player_html(events: Sequence[TraceEvent], *, key: str, title: str) -> str:
    """The player for ``events`` as HTML: every step a section, the diagram once beneath them.
    ``key`` names the player (its element's id is ``player-<key>``) and scopes its CSS."""
    esc = html.escape
    state = PlayerState(Trace(list(events), title=title))
    scope = f"mcp-sim-player-{key}"
    seqs = [e.seq for e in state.visible]
    if not seqs:
        return f"<section class='mcp-sim-player' id='player-{esc(key)}'><p>No events.</p></section>"
    styles, steps = [], []
    for index, seq in enumerate(seqs):
        state.jump(index)
        event = state.current
        assert event is not None
        styles.append(_rule(state.highlight_css(f"{scope}:has(#{step_id(seq)}:target)")))
        nav = " ".join((_button("⏮ first", seqs[0], seq), _button("◀ back", seqs[max(0, index - 1)], seq),
                        _button("forward ▶", seqs[min(len(seqs) - 1, index + 1)], seq),
                        _button("last ⏭", seqs[-1], seq)))
        wire = "http" if event.transport == "http" else "stdio"
        wire_name = "HTTP exchange" if wire == "http" else "stdio bytes"
        steps.append(
            f"<section class='mcp-sim-step{' mcp-sim-first' if index == 0 else ''}' id='{step_id(seq)}' "
            f"data-seq='{seq}' aria-label='{esc(title)}, step {index + 1}'>"
            f"<nav aria-label='step through {esc(title)}'>{nav}</nav>"
            f"<p class='mcp-sim-position'>{esc(state.position())}</p>"
            f"<p class='mcp-sim-caption'><b>{esc(state.caption)}</b></p>"
            f"<pre>{esc(_cut(state.detail('json')))}</pre>"
            f"<details><summary>as {wire_name}</summary><pre>{esc(_cut(state.detail(wire)))}</pre></details>"
            "</section>")
    state.jump(0)
    styles.append(_rule(state.highlight_css(f"{scope}:not(:has(.mcp-sim-step:target))")))
    return (f"<section class='mcp-sim-player {scope}' id='player-{esc(key)}' aria-label='trace player: {esc(title)}'>"
            f"<h3>{esc(title)}</h3><style>{''.join(styles)}</style>{''.join(steps)}"
            f"<div class='mcp-sim-player-diagram'>{state.diagram().inline_html(fit=True)}</div></section>")
