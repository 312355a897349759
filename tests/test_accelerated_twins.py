"""Each accelerated twin sits beside its plain module, and the two never import each other both ways
(see :mod:`mcp_sim.accelerated`).

The plain module is the one a learner reads. Either it ends by combining its class with the twin's
methods and choosing between them (the recorder, the memory pipe, the server session) — then the
twin must not import it back — or the twin builds on it and is chosen by a caller above both (the
codec's twin, chosen by the memory pipe's). This test reads every import — at the top, inside
functions and under ``TYPE_CHECKING`` alike — with :mod:`ast`.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import mcp_sim

PACKAGE = Path(mcp_sim.__file__).parent
TWINS = sorted(PACKAGE.rglob("*_accelerated.py"))


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(("mcp_sim", *(parts[:-1] if parts[-1] == "__init__" else parts)))


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, written as absolute names (``from a import b`` counts a and a.b)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def test_there_are_twins() -> None:
    assert {_module(t) for t in TWINS} >= {
        "mcp_sim.trace.recorder_accelerated", "mcp_sim.transports.memory_accelerated",
        "mcp_sim.roles.server_session_accelerated", "mcp_sim.wire.jsonrpc_accelerated"}


def _plain(twin: Path) -> Path:
    """``x_accelerated.py`` → ``x.py``; the twin of a package's face (``client/client_accelerated.py``)
    → the package itself (``client/__init__.py``)."""
    plain = twin.with_name(twin.name.replace("_accelerated", ""))
    if not plain.exists() and twin.parent.name == plain.stem:
        return twin.parent / "__init__.py"
    return plain


@pytest.mark.parametrize("twin", TWINS, ids=lambda p: p.stem)
def test_a_twin_and_its_plain_module_never_import_each_other_both_ways(twin: Path) -> None:
    plain = _plain(twin)
    assert plain.exists()
    assert not (_module(plain) in _imports(twin) and _module(twin) in _imports(plain))


@pytest.mark.parametrize("twin", TWINS, ids=lambda p: p.stem)
def test_each_twin_is_chosen_by_the_one_switch(twin: Path) -> None:
    choosers = [p for p in PACKAGE.rglob("*.py") if _module(twin) in _imports(p)]
    assert choosers
    for chooser in choosers:
        assert "mcp_sim.accelerated" in _imports(chooser) or chooser.stem.endswith("_accelerated")
