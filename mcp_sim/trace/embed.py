"""How a diagram gets into a notebook cell so that it survives every viewer, and fits it.

JupyterLab shows the outputs of a notebook nobody has run yet ("untrusted") through an HTML
sanitizer that removes ``<svg>`` elements, and GitHub does the same. An ``<img>`` whose ``src`` is a
``data:`` URI is kept by both, so the HTML form of every diagram embeds its SVG that way, with the
diagram's description as the ``alt`` text for screen readers. Live widgets (the trace player) are
not sanitized and put the SVG inline, where each row's tooltip works.

A diagram never makes the learner scroll sideways inside a cell: it is scaled down to the width of
the output (:data:`FIT_STYLE`), and one wider than :data:`FIT_WIDTH` gets an "open full size" fold
beneath it with the picture at its natural size. A fold (``<details>``) needs no script, so it works
in an untrusted notebook and on GitHub too.
"""

from __future__ import annotations

import base64
import html

FIT_WIDTH = 880
"""Wider than this, a diagram is shown scaled, with its full size one click away (a notebook's
output area in a 1280-pixel-wide window is about 900 pixels wide)."""

FIT_STYLE = "max-width:100%;height:auto"
"""The CSS that scales a picture down (never up) to the width it is given, keeping its proportions."""

FULL_VIEW_CLASS = "mcp-sim-full-view"
"""Marks the one place a diagram is shown at full size, in its own scrolling box."""


def full_view(inner_html: str, width: int, *, max_height: str | None = "80vh") -> str:
    """A fold that opens onto ``inner_html`` at its natural size, scrolling inside its own box."""
    box = f"max-height:{max_height};" if max_height else ""
    return (f"<details class='{FULL_VIEW_CLASS}'><summary>open full size ({width:,} px wide)</summary>"
            f"<div style='{box}overflow:auto;max-width:100%'>{inner_html}</div></details>")


def svg_img(svg: str, alt: str, *, width: int | None = None, max_height: str | None = "640px") -> str:
    """``svg`` as an ``<img>`` (base64 ``data:`` URI) scaled to the output's width, inside a box that
    scrolls down past ``max_height``; ``width`` (the SVG's own, in pixels) above :data:`FIT_WIDTH`
    adds the full-size fold."""
    data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
    src = f"data:image/svg+xml;base64,{data}"
    box = f"max-height:{max_height};overflow-y:auto;overflow-x:hidden;" if max_height else ""
    out = (f"<div class='mcp-sim-diagram' style='max-width:100%'><div style='{box}max-width:100%'>"
           f"<img alt='{html.escape(alt, quote=True)}' src='{src}' style='{FIT_STYLE}'/></div>")
    if width is not None and width > FIT_WIDTH:
        out += full_view(f"<img alt='' src='{src}' style='max-width:none'/>", width)
    return out + "</div>"
