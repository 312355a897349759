"""How a diagram gets into a notebook cell so that it survives every viewer.

JupyterLab shows the outputs of a notebook nobody has run yet ("untrusted") through an HTML
sanitizer that removes ``<svg>`` elements, and GitHub does the same. An ``<img>`` whose ``src`` is a
``data:`` URI is kept by both, so the HTML form of every diagram embeds its SVG that way, with the
diagram's description as the ``alt`` text for screen readers. Live widgets (the trace player) are
not sanitized and put the SVG inline, where each row's tooltip works.
"""

from __future__ import annotations

import base64
import html


def svg_img(svg: str, alt: str, *, max_height: str | None = "640px") -> str:
    """``svg`` as an ``<img>`` (base64 ``data:`` URI) inside a box that scrolls past ``max_height``."""
    data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
    box = f"max-height:{max_height};overflow:auto;" if max_height else ""
    return (f"<div class='mcp-sim-diagram' style='{box}max-width:100%'>"
            f"<img alt='{html.escape(alt, quote=True)}' src='data:image/svg+xml;base64,{data}' "
            "style='max-width:none'/></div>")
