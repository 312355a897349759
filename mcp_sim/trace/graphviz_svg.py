"""Rendering Graphviz diagrams (topology, lifecycle states) to SVG without a system Graphviz.

The ``graphviz`` Python package writes the DOT source; the layout is done by ``graphviz-pure``, a
drop-in ``dot`` that ``pip`` installs next to Python itself, so the diagrams render on a fresh
machine, in CI and in Binder with nothing else installed. We call the binary ourselves: that lets us
find it next to ``sys.executable`` (a virtual environment that is not activated has no ``PATH``
entry), and keep its standard error away from the notebook. Without any binary the diagrams fall
back to a text rendering instead of failing.

Each diagram is laid out left to right first; if that comes out wider than a notebook's output
(:data:`~mcp_sim.trace.embed.FIT_WIDTH`), it is laid out top to bottom instead, which for these
chains of boxes is two or three times narrower. Whatever still does not fit is scaled, with the full
size one click away (:func:`~mcp_sim.trace.embed.svg_img`).
"""

from __future__ import annotations

import functools
import hashlib
import html
import logging
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path

from mcp_sim.trace.embed import FIT_WIDTH, svg_img

logger = logging.getLogger(__name__)

BINARY_NAMES = ("graphviz-pure", "dot")
"""Preferred first: ``graphviz-pure`` gives the same bytes on every platform; a system ``dot`` is a
last resort."""


@functools.lru_cache(maxsize=1)
def dot_binary() -> str | None:
    """The path of a ``dot``-compatible program, or ``None``.

    Looked for next to the running Python and in the install's script folders (where ``pip`` put
    ``graphviz-pure``, even in a virtual environment that was never activated), then on ``PATH``.
    The ``MCP_SIM_DOT`` environment variable names a program to use instead."""
    override = os.environ.get("MCP_SIM_DOT")
    if override:
        return override if Path(override).exists() or shutil.which(override) else None
    suffix = ".exe" if sys.platform == "win32" else ""
    places = [Path(sys.executable).parent, Path(sysconfig.get_path("scripts"))]
    try:
        places.append(Path(sysconfig.get_path("scripts", f"{os.name}_user")))
    except KeyError:
        pass
    for place in places:
        candidate = place / f"{BINARY_NAMES[0]}{suffix}"
        if candidate.exists():
            return str(candidate)
    for name in BINARY_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


@functools.lru_cache(maxsize=64)
def render_svg(source: str, timeout: float = 30.0) -> str | None:
    """Lay out DOT ``source`` and return the ``<svg>`` element (prolog and comments removed), or
    ``None`` if no binary is available or it failed. Never writes to the notebook: the binary's
    standard error is captured and only logged at debug level."""
    binary = dot_binary()
    if binary is None:
        logger.debug("no graphviz-pure or dot binary found; diagrams fall back to text")
        return None
    flags = getattr(subprocess, "CREATE_NO_WINDOW", 0) if sys.platform == "win32" else 0
    try:
        proc = subprocess.run([binary, "-Tsvg"], input=source.encode("utf-8"), capture_output=True,
                              timeout=timeout, check=False, creationflags=flags)
    except (OSError, subprocess.SubprocessError) as exc:
        logger.debug("running %s failed: %s", binary, exc)
        return None
    out = proc.stdout.decode("utf-8", errors="replace")
    start = out.find("<svg")
    if proc.returncode != 0 or start < 0:
        logger.debug("%s exited with %s: %s", binary, proc.returncode, proc.stderr.decode("utf-8", "replace"))
        return None
    return _strip_comments(out[start:]).strip() + "\n"


def _strip_comments(svg: str) -> str:
    return re.sub(r"<!--.*?-->\n?", "", svg, flags=re.S)


def svg_width_px(svg: str) -> int:
    """The width an SVG asks for, in CSS pixels (Graphviz writes points: 1 pt = 4/3 px)."""
    match = re.search(r'<svg[^>]*?\swidth="([\d.]+)(pt|px)?"', svg)
    if match is None:
        return 0
    return round(float(match.group(1)) * (4 / 3 if match.group(2) == "pt" else 1))


def accessible_svg(svg: str, title: str, description: str) -> str:
    """Give an SVG a ``<title>`` and ``<desc>`` as its first children and point ``aria-labelledby`` at
    them, so screen readers announce the diagram by name and description."""
    ident = "mcpsim-gv-" + hashlib.sha1((title + description + svg).encode(), usedforsecurity=False).hexdigest()[:10]
    end = svg.find(">", svg.find("<svg"))
    opening = svg[:end]
    opening += f' role="img" aria-labelledby="{ident}-title {ident}-desc"'
    esc = html.escape
    return (f'{opening}>\n<title id="{ident}-title">{esc(title)}</title>\n'
            f'<desc id="{ident}-desc">{esc(description)}</desc>{svg[end + 1:]}')


class GraphvizDiagram:
    """A diagram laid out by Graphviz, shown inline in Jupyter, with a text rendering to fall back
    on. Subclasses give :meth:`dot_source`, :meth:`to_text`, ``title`` and :meth:`description`."""

    title = "Diagram"

    def dot_source(self) -> str:
        raise NotImplementedError

    def layouts(self) -> Iterator[str]:
        """The DOT texts to try, preferred first (e.g. left to right, then top to bottom); by
        default just :meth:`dot_source`."""
        yield self.dot_source()

    def to_text(self) -> str:
        raise NotImplementedError

    def description(self) -> str:
        return self.title

    def __repr__(self) -> str:
        # A stable text form (no memory address), so notebook outputs compare equal across runs.
        return f"<{type(self).__name__} {self.title!r}: {self.description()}>"

    def to_svg(self) -> str | None:
        """The SVG, or ``None`` when no Graphviz binary could be run (see :meth:`to_text`): the first
        of :meth:`layouts` that fits :data:`~mcp_sim.trace.embed.FIT_WIDTH`, else the narrowest."""
        best: str | None = None
        for source in self.layouts():
            svg = render_svg(source)
            if svg is None:
                return None
            if best is None or svg_width_px(svg) < svg_width_px(best):
                best = svg
            if svg_width_px(svg) <= FIT_WIDTH:
                break
        return None if best is None else accessible_svg(best, self.title, self.description())

    def _repr_svg_(self) -> str | None:
        return self.to_svg()

    def _repr_html_(self) -> str:
        svg = self.to_svg()
        if svg is not None:
            return svg_img(svg, f"{self.title}. {self.description()}", width=svg_width_px(svg), max_height=None)
        return (f"<pre class='mcp-sim-graph-text' aria-label='{html.escape(self.title)}'>"
                f"{html.escape(self.to_text())}</pre>")

    def __str__(self) -> str:
        return self.to_text()
