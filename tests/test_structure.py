"""The package's shape: layers import downward only, and every module stays small enough to read.

The import graph is built from the source with ``ast`` and counts every import — at the top, under
``TYPE_CHECKING`` and inside functions — because a circle a reader has to untangle is a circle
whether or not Python happens to break it at run time. ``from pkg import name`` counts as importing
``pkg`` (its ``__init__`` runs) and, when ``name`` is a submodule, that submodule too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "mcp_sim"
MAX_LINES = 600


def _modules(package: Path = PACKAGE) -> dict[str, Path]:
    out = {}
    for path in package.rglob("*.py"):
        parts = path.relative_to(package.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _known(name: str, modules: dict[str, Path]) -> str | None:
    """The deepest module of ours that ``name`` names (``a.b.C`` → ``a.b``), or ``None``."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


Graph = dict[str, set[str]]


def import_graph(package: Path = PACKAGE) -> Graph:
    """``{module: the modules of ours it imports}``."""
    modules = _modules(package)
    graph: Graph = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    source = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    source = node.module or ""
                targets = [source, *(f"{source}.{alias.name}" for alias in node.names)]
            for target in targets:
                found = _known(target, modules)
                if found is not None and found != name:
                    graph[name].add(found)
    return graph


def _reachable(graph: Graph, start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for nxt in graph[todo.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def circles(graph: Graph) -> list[list[str]]:
    """The strongly connected components of more than one module: modules that import each other,
    directly or around a longer loop (``a`` reaches ``b`` and ``b`` reaches ``a``)."""
    reach = {name: _reachable(graph, name) for name in graph}
    found = {frozenset(w for w in reach[v] if v in reach[w]) | {v} for v in graph if v in reach[v]}
    return sorted(sorted(c) for c in found if len(c) > 1)


def test_the_graph_sees_every_kind_of_import(tmp_path: Path) -> None:
    """At the top, inside a function, under TYPE_CHECKING, relative, and a package's ``__init__``."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    files = {
        "__init__.py": "",
        "top.py": "import pkg.sub.leaf\n",
        "lazy.py": "def f():\n    from pkg import top\n",
        "typed.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.sub.leaf import X\n",
        "sub/__init__.py": "from .leaf import X\n",
        "base.py": "",
        "sub/leaf.py": "from .. import base\nX = 1\n",
    }
    for name, text in files.items():
        (pkg / name).write_text(text)
    graph = import_graph(pkg)
    assert graph["pkg.top"] == {"pkg.sub.leaf"}
    assert graph["pkg.lazy"] == {"pkg", "pkg.top"}
    assert graph["pkg.typed"] == {"pkg.sub.leaf"}
    assert graph["pkg.sub"] == {"pkg.sub.leaf"}
    assert graph["pkg.sub.leaf"] == {"pkg", "pkg.base"}
    assert circles(graph) == []
    (pkg / "sub" / "leaf.py").write_text("from pkg.top import *\n")  # leaf → top → leaf
    assert circles(import_graph(pkg)) == [["pkg.sub.leaf", "pkg.top"]]


def test_circles_finds_a_loop_and_only_the_loop() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert circles(graph) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circles() -> None:
    """No strongly connected component of more than one module: every layer imports downward only."""
    found = circles(import_graph())
    assert found == [], "import circles:\n" + "\n".join(" ↔ ".join(c) for c in found)


@pytest.mark.parametrize("path", sorted(_modules().values()), ids=lambda p: str(p.relative_to(PACKAGE.parent)))
def test_no_module_over_600_lines(path: Path) -> None:
    """A module a learner opens fits in one sitting: at most 600 lines."""
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{path.name} has {lines} lines (at most {MAX_LINES}); split it by idea"


def _private_stdlib_names() -> set[str]:
    """Private (single-underscore) attribute names of the standard-library objects the simulator
    builds on: the event loop, its handles, futures and tasks, the selectors, ``json`` and ``sys``."""
    import asyncio
    import json.decoder
    import json.encoder
    import selectors
    import sys

    owners: list[object] = [asyncio.BaseEventLoop, asyncio.SelectorEventLoop, asyncio.Handle, asyncio.TimerHandle,
                            asyncio.Future, asyncio.Task, selectors.DefaultSelector, json.encoder, json.decoder,
                            json.JSONEncoder, json.JSONDecoder, sys]
    loop = asyncio.SelectorEventLoop()  # instance attributes too: _ready, _clock_resolution …
    try:
        owners += [loop, loop.call_soon(print), loop.call_at(0.0, print)]
        names = {n for owner in owners for n in dir(owner) if n.startswith("_") and not n.startswith("__")}
    finally:
        loop.close()
    # Public-looking names that are the private ``_json`` C module under another name.
    return names | {"c_make_encoder", "c_scanstring", "c_encode_basestring", "c_encode_basestring_ascii",
                    "scan_once", "make_scanner", "c_make_scanner"}


def _own_private_names() -> set[str]:
    """Private names the package defines itself (``def _x``, ``self._x = …``, ``_x = …``)."""
    own: set[str] = set()
    for path in _modules().values():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                own.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                own.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                own.add(node.id)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                own.add(node.target.id)
    return own


def test_no_private_python_apis() -> None:
    """The package uses Python's public APIs only: no private module (``_json``, ``_asyncio``) and no
    private attribute of the event loop, its handles, ``json`` or ``sys`` (``loop._ready``,
    ``sys._getframe``), unless the package defines that name itself."""
    forbidden = _private_stdlib_names() - _own_private_names()
    found = []
    for name, path in _modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in forbidden:
                found.append(f"{name}:{node.lineno} .{node.attr}")
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id in ("getattr", "hasattr") and len(node.args) >= 2 \
                    and isinstance(node.args[1], ast.Constant) and node.args[1].value in forbidden:
                found.append(f"{name}:{node.lineno} {node.func.id}(…, {node.args[1].value!r})")
            elif isinstance(node, ast.Import):
                found += [f"{name}:{node.lineno} import {a.name}" for a in node.names
                          if any(p.startswith("_") for p in a.name.split("."))]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0 \
                    and node.module != "__future__" and any(p.startswith("_") for p in node.module.split(".")):
                found.append(f"{name}:{node.lineno} from {node.module}")
    assert not found, found
    assert {"_ready", "_scheduled", "_run_once", "_clock_resolution", "_getframe", "c_make_encoder",
            "scan_once"} <= forbidden
